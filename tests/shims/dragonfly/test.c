/* shim_dragonfly: the DragonFly umtx shim (tests/shims/dragonfly/shim.c)
 * does what DragonFly documents, call by call, so the emu:dragonfly-shim
 * suite run tests the port against DragonFly's behaviour.  Each check
 * names its source in DragonFlyBSD/DragonFlyBSD: umtx.2 (lib/libc/sys;
 * "2005" or "2015" edition) or kern_umtx.c (sys/kern; 2007 or 2017).
 * Calls the shim directly, not through pfutex; runs once, under
 * emu:dragonfly-shim. */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pft.h"
#include "shim.h"

struct sleeper {
  pthread_t thread;
  volatile pid_t tid;
  volatile const int *word;
  int value, timeout;
  volatile int done;
  int ret, err;
};

static void *
sleeper_main(void *arg)
{
  struct sleeper *s = arg;
  int r;
  s->tid = pft_gettid();
  r = umtx_sleep(s->word, s->value, s->timeout);
  s->err = r < 0 ? errno : 0;
  s->ret = r;
  __atomic_store_n(&s->done, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

/* Start s and return once it sleeps in the kernel. */
static void
sleeper_start(struct sleeper *s)
{
  s->done = 0;
  s->tid = 0;
  if (pthread_create(&s->thread, NULL, sleeper_main, s) != 0)
    bail("pthread_create");
  while (!s->tid)
    sched_yield();
  if (pft_wait_asleep(s->tid) != 0 && !s->done)
    bail("sleeper never slept");
}

static void
sleeper_join(struct sleeper *s)
{
  pthread_join(s->thread, NULL);
}

/* How many of n sleepers still sleep (a wakeup makes its sleepers
 * runnable before the call returns). */
static int
count_asleep(struct sleeper *s, int n)
{
  int i, c = 0;
  for (i = 0; i < n; i++) {
    int st = s[i].done ? -1 : pft_task_state(0, s[i].tid);
    c += st == 'S' || st == 'D';
  }
  return c;
}

static void
on_usr1(int sig)
{
  (void)sig;
}

int
main(void)
{
  static int words[2];
  volatile const int *word = &words[0];
  const char *be = getenv("PFUTEX_BACKEND");
  struct sleeper s[3];
  long long t0, dt;
  int *shm, i, status, seen = 0;
  pid_t pid;

  if (!be || strcmp(be, "emu:dragonfly-shim") != 0)
    skip_all("tests the DragonFly shim itself: runs under emu:dragonfly-shim only");
  plan_lazy();
  pft_watchdog(60);
  pf_shim_dragonfly_spurious(0);
  memset(s, 0, sizeof s);

  /* -- arguments ---------------------------------------------------------- */
  words[0] = 1;
  PFT_IS(umtx_sleep(word, 0, 0), -1, EBUSY, "umtx.2 ERRORS: a mismatch is EBUSY");
  words[0] = 0;
  PFT_IS(umtx_sleep(word, 0, -1), -1, EINVAL, "umtx.2 (2015): a negative timeout is EINVAL");
  PFT_IS(umtx_sleep(word, 0, 1000001), -1, EINVAL,
         "umtx.2 (2005), kern_umtx.c (2007): the timeout is limited to 0-1000000 microseconds: above is EINVAL");
  PFT_IS(umtx_sleep((volatile const int *)(void *)((char *)words + 1), 0, 1000), -1, EFAULT,
         "kern_umtx.c: a misaligned pointer is EFAULT (umtx_sleep)");
  PFT_IS(umtx_wakeup((volatile const int *)(void *)((char *)words + 1), 1), -1, EFAULT,
         "kern_umtx.c: a misaligned pointer is EFAULT (umtx_wakeup)");
  PFT_IS(umtx_wakeup(word, 1), 0, 0, "umtx.2: umtx_wakeup with nobody asleep returns 0");

  /* -- timeouts ------------------------------------------------------------ */
  t0 = pft_now_ns();
  PFT_IS(umtx_sleep(word, 0, 50000), -1, EWOULDBLOCK,
         "umtx.2 (2015) ERRORS: a timeout is EWOULDBLOCK");
  dt = pft_now_ns() - t0;
  ok(dt >= 40000000LL, "kern_umtx.c: counted in 10 ms ticks, \"accurate to within ~2 ticks\": 50 ms took %lld us", dt / 1000);
  pf_shim_dragonfly_timeout_max(200000);
  t0 = pft_now_ns();
  PFT_IS(umtx_sleep(word, 0, 0), -1, EWOULDBLOCK,
         "kern_umtx.c (2017): timeout 0 is cut at kern.umtx_timeout_max with EWOULDBLOCK");
  dt = pft_now_ns() - t0;
  ok(dt >= 190000000LL, "... after the cap (200 ms here): %lld us", dt / 1000);
  PFT_IS(umtx_sleep(word, 0, 1000000), -1, EWOULDBLOCK,
         "umtx.2 (2005): 1000000 is within the limit; the 2017 cap cuts it too");

  /* -- wakeups --------------------------------------------------------------- */
  pf_shim_dragonfly_timeout_max(30000000);
  s[0].word = word;
  sleeper_start(&s[0]);
  ok(!s[0].done, "umtx.2: a matching word sleeps");
  PFT_IS(umtx_wakeup(word, 1), 0, 0, "umtx.2: umtx_wakeup returns 0, no count");
  sleeper_join(&s[0]);
  ok(s[0].ret == 0 && words[0] == 0, "umtx.2 RETURN VALUES: the woken sleeper returns 0 (got %d %s)",
     s[0].ret, pft_errname(s[0].err));
  for (i = 0; i < 3; i++) {
    s[i].word = word;
    sleeper_start(&s[i]);
  }
  umtx_wakeup(word, 1);
  ok(count_asleep(s, 3) <= 2, "umtx.2: count 1 wakes at least one");
  umtx_wakeup(word, 2);
  is_int(0, count_asleep(s, 3),
         "umtx.2: \"may wake up more processes then the specified count\": any count but 1 wakes all");
  for (i = 0; i < 3; i++)
    sleeper_join(&s[i]);
  for (i = 0; i < 3; i++)
    sleeper_start(&s[i]);
  umtx_wakeup(word, 0);
  is_int(0, count_asleep(s, 3), "umtx.2: \"A count of 0 will wake up all sleeping processes\"");
  for (i = 0; i < 3; i++)
    sleeper_join(&s[i]);
  ok(s[0].ret == 0 && s[1].ret == 0 && s[2].ret == 0, "... each returns 0");

  /* -- signals: never restarted --------------------------------------------- */
  pft_install(SIGUSR1, on_usr1, SA_RESTART);
  sleeper_start(&s[0]);
  pthread_kill(s[0].thread, SIGUSR1);
  sleeper_join(&s[0]);
  ok(s[0].ret == -1 && s[0].err == EINTR,
     "umtx.2 (2015): \"does not restart in case of a signal, even if the signal specifies that system calls should restart\" (got %d %s)",
     s[0].ret, pft_errname(s[0].err));

  /* -- early returns ---------------------------------------------------------- */
  pf_shim_dragonfly_spurious(1);
  PFT_IS(umtx_sleep(word, 0, 1000000), 0, 0,
         "umtx.2 (2015): umtx_sleep may \"return prematurely\" (shim: injected)");
  is_int(0, words[0], "... \"with the contents of the mutex unchanged\"");
  pf_shim_dragonfly_spurious(0);

  /* -- processes sharing memory ------------------------------------------------ */
  shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shm == MAP_FAILED)
    sysbail("mmap");
  *shm = 0;
  pft_settle_threads();
  fflush(stdout);
  pid = fork();
  if (pid < 0)
    sysbail("fork");
  if (pid == 0) {
    alarm(20);
    _exit(umtx_sleep(shm, 0, 0) == 0 ? 0 : 100 + errno);
  }
  while (seen < 2) {          /* asleep in two samples in a row */
    int st = pft_task_state(pid, 0);
    seen = st == 'S' ? seen + 1 : 0;
    if (st < 0 || st == 'Z')
      break;
    usleep(200);
  }
  umtx_wakeup(shm, 1);
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      sysbail("waitpid");
  is_int(0, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
         "umtx.2: keyed by \"the physical memory backing the user address\": a wakeup from another process ends the sleep");
  munmap(shm, 4096);
  return 0;
}
