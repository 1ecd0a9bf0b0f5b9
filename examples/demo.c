/* demo.c - pfutex in one screen: two threads play ping-pong on one futex
 * word, under every compiled backend in turn (each in a fresh process, since
 * the backend is chosen once per process), and print round trips per second
 * beside the native backend's.  Built against the installed library:
 *   cc demo.c $(pkg-config --cflags --libs pfutex) */
#define _GNU_SOURCE
#include <pfutex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 20000

static uint32_t ball;   /* 0: ping's turn, 1: pong's turn */

static void
pass_to(uint32_t turn)
{
  __atomic_store_n(&ball, turn, __ATOMIC_SEQ_CST);
  pfutex_wake(&ball, PFUTEX_BITSET_MATCH_ANY, 1, PFUTEX_PRIVATE);
}

static void
await(uint32_t turn)
{
  uint32_t v;
  while ((v = __atomic_load_n(&ball, __ATOMIC_SEQ_CST)) != turn)
    pfutex_wait(&ball, v, PFUTEX_BITSET_MATCH_ANY, PFUTEX_PRIVATE, NULL, 0);
}

static void *
pong(void *arg)
{
  int i;
  (void)arg;
  for (i = 0; i < ROUNDS; i++) {
    await(1);
    pass_to(0);
  }
  return NULL;
}

static double
run(void)
{
  pthread_t t;
  struct timespec a, b;
  int i;
  clock_gettime(CLOCK_MONOTONIC, &a);
  pthread_create(&t, NULL, pong, NULL);
  for (i = 0; i < ROUNDS; i++) {
    pass_to(1);
    await(0);
  }
  pthread_join(t, NULL);
  clock_gettime(CLOCK_MONOTONIC, &b);
  return ROUNDS / ((b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9);
}

int
main(int argc, char **argv)
{
  const char *const *names = pfutex_backends();
  double native = 0;
  int i;

  if (argc > 1) {   /* child: one backend */
    double r = run();
    printf("%.0f %s\n", r, pfutex_backend() ? pfutex_backend() : "?");
    return 0;
  }
  printf("pfutex demo: ping-pong, %d round trips per backend\n", ROUNDS);
  printf("%-22s %14s %10s\n", "backend", "round trips/s", "vs native");
  for (i = 0; names[i]; i++) {
    char cmd[512];
    FILE *p;
    double r = 0;
    char shown[64] = "?";
    snprintf(cmd, sizeof cmd, "PFUTEX_BACKEND=%s '%s' child", names[i], argv[0]);
    if (!(p = popen(cmd, "r")) || fscanf(p, "%lf %63s", &r, shown) != 2) {
      printf("%-22s failed\n", names[i]);
      if (p)
        pclose(p);
      continue;
    }
    pclose(p);
    if (strncmp(names[i], "linux", 5) == 0)
      native = r;
    if (native > 0)
      printf("%-22s %14.0f %9.2fx\n", shown, r, r / native);
    else
      printf("%-22s %14.0f %10s\n", shown, r, "-");
  }
  return 0;
}
