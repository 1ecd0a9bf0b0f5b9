/* pfbench.c - micro-benchmarks of pfutex, one backend per process.
 *
 *   pfbench --backends            list the compiled backends (default first)
 *   pfbench WORKLOAD [options]    run WORKLOAD under PFUTEX_BACKEND's backend
 *
 * Workloads (after perf bench futex and the 2003 FUTEX_REQUEUE measurement):
 *   hash       -t T threads, each FUTEX_WAIT_PRIVATE with a mismatched value
 *              on its own -f F words in turn (EAGAIN path); total ops/s
 *   wake-none  -t T threads waking a word nobody waits on; total ops/s
 *   wake       -n N waiters on one word, woken by wake(1) until all are;
 *              median time per wake-all, microseconds
 *   requeue    -n N waiters on word A, moved to B by ONE cmp_requeue, then
 *              woken (untimed); median time of the requeue call, microseconds
 *   pp         ping-pong between 2 threads on one word; round trips/s
 *   cond-perf  -n N threads wait on a mutex+condvar (examples/nptl_sync.h),
 *              broadcast rounds; -v wakeall (FUTEX_WAKE all) or -v requeue
 *              (wake one, CMP_REQUEUE the rest onto the mutex); rounds/s
 * Common: -d MS time budget (default 200).
 *
 * Output: one line of key=value pairs, e.g.
 *   workload=pp backend=linux:futex2 threads=2 value=123456 unit=ops_per_s
 * Starts are synchronised with barriers and atomics; measured sections never
 * sleep.  Waiters are known to be blocked before a timed wake because a
 * probe (REQUEUE everything from the word to a scratch word and back)
 * counts them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <pfutex.h>
#include "../examples/nptl_sync.h"

#define ANY PFUTEX_BITSET_MATCH_ANY
#define PRIV PFUTEX_PRIVATE
#define CACHELINE 64

static int opt_threads = -1, opt_n = -1, opt_futexes = 1024, opt_ms = 200;
static const char *opt_variant = "requeue";
static const char *backend_name;

static double
now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void
die(const char *what)
{
  fprintf(stderr, "pfbench: %s: %s\n", what, strerror(errno));
  exit(2);
}

static void
spawn(pthread_t *t, void *(*fn)(void *), void *arg)
{
  int e = pthread_create(t, NULL, fn, arg);
  if (e) {
    errno = e;
    die("pthread_create");
  }
}

static int
cmp_double(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- hash and wake-none: T spinning threads, clock-bounded ------------- */
struct worker {
  pthread_t tid;
  uint32_t *words;
  unsigned long ops;
  char pad[CACHELINE];
};

static pthread_barrier_t start_barrier;
static double deadline;
static int is_hash;

static void *
spin_worker(void *arg)
{
  struct worker *w = arg;
  unsigned long ops = 0;
  int i, nf = is_hash ? opt_futexes : 1;
  pthread_barrier_wait(&start_barrier);
  for (;;) {
    for (i = 0; i < nf; i++) {
      if (is_hash) {
        if (pfutex_wait(&w->words[i * 4], 1234, ANY, PRIV, NULL, 0) == 0
            || errno != EAGAIN)
          die("hash: wait did not fail with EAGAIN");
      } else if (pfutex_wake(&w->words[0], ANY, 1, PRIV) != 0) {
        die("wake-none: woke someone");
      }
    }
    ops += nf;
    if (is_hash || (ops & 1023) == 0)
      if (now() >= deadline)
        break;
  }
  w->ops = ops;
  return NULL;
}

static void
run_spin(const char *workload)
{
  int t, T = opt_threads > 0 ? opt_threads : (is_hash ? 2 : 1);
  struct worker *w = calloc(T, sizeof *w);
  unsigned long total = 0;
  double t0, t1;
  pthread_barrier_init(&start_barrier, NULL, T + 1);
  for (t = 0; t < T; t++) {
    /* words spaced 4 apart: distinct, several per cache line, per thread */
    w[t].words = aligned_alloc(CACHELINE, ((size_t)opt_futexes * 4 + 16) * 4);
    memset(w[t].words, 0, ((size_t)opt_futexes * 4 + 16) * 4);
    spawn(&w[t].tid, spin_worker, &w[t]);
  }
  t0 = now();
  deadline = t0 + opt_ms / 1000.0;
  pthread_barrier_wait(&start_barrier);
  for (t = 0; t < T; t++) {
    pthread_join(w[t].tid, NULL);
    total += w[t].ops;
  }
  t1 = now();
  printf("workload=%s backend=%s threads=%d value=%.0f unit=ops_per_s\n",
         workload, backend_name, T, total / (t1 - t0));
}

/* ---- wake and requeue: N persistent waiters, one round at a time ------- */
static uint32_t word_a, word_b, word_probe;
static unsigned done_count;
static int stop_flag;
static pthread_barrier_t round_barrier;

static void *
block_waiter(void *arg)
{
  (void)arg;
  for (;;) {
    pthread_barrier_wait(&round_barrier);
    if (__atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE))
      return NULL;
    pfutex_wait(&word_a, 0, ANY, PRIV, NULL, 0);
    __atomic_add_fetch(&done_count, 1, __ATOMIC_SEQ_CST);
  }
}

/* Wait (untimed) until n waiters are blocked on word_a. */
static void
await_blocked(int n)
{
  for (;;) {
    int moved = pfutex_requeue(&word_a, &word_probe, 0, INT_MAX, PRIV);
    if (moved < 0)
      die("probe requeue");
    if (moved > 0 && pfutex_requeue(&word_probe, &word_a, 0, INT_MAX, PRIV) != moved)
      die("probe requeue back");
    if (moved >= n)
      return;
    sched_yield();
  }
}

static void
run_block(int requeue)
{
  int N = opt_n > 0 ? opt_n : 64, i, rounds = 0, cap = 1 << 16;
  pthread_t *tids = calloc(N, sizeof *tids);
  double *times = malloc(cap * sizeof *times), end;
  pthread_barrier_init(&round_barrier, NULL, N + 1);
  for (i = 0; i < N; i++)
    spawn(&tids[i], block_waiter, NULL);
  end = now() + opt_ms / 1000.0;
  do {
    double t0, t1;
    int woken = 0, r;
    __atomic_store_n(&word_a, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&done_count, 0, __ATOMIC_SEQ_CST);
    pthread_barrier_wait(&round_barrier);
    await_blocked(N);
    if (!requeue) {
      t0 = now();
      while (woken < N && __atomic_load_n(&done_count, __ATOMIC_SEQ_CST) < (unsigned)N) {
        if ((r = pfutex_wake(&word_a, ANY, 1, PRIV)) < 0)
          die("wake");
        woken += r;
      }
      t1 = now();
    } else {
      t0 = now();
      r = pfutex_cmp_requeue(&word_a, 0, &word_b, 0, INT_MAX, PRIV);
      t1 = now();
      if (r != N) {
        fprintf(stderr, "pfbench: requeue moved %d of %d\n", r, N);
        exit(2);
      }
      while (__atomic_load_n(&done_count, __ATOMIC_SEQ_CST) < (unsigned)N)
        if (pfutex_wake(&word_b, ANY, INT_MAX, PRIV) < 0)
          die("wake");
    }
    while (__atomic_load_n(&done_count, __ATOMIC_SEQ_CST) < (unsigned)N)
      sched_yield();   /* untimed: let stragglers return */
    times[rounds++] = (t1 - t0) * 1e6;
  } while (rounds < cap && (rounds < 3 || now() < end));
  __atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
  pthread_barrier_wait(&round_barrier);
  for (i = 0; i < N; i++)
    pthread_join(tids[i], NULL);
  printf("workload=%s backend=%s n=%d rounds=%d value=%.2f unit=us\n",
         requeue ? "requeue" : "wake", backend_name, N, rounds, median(times, rounds));
}

/* ---- pp ----------------------------------------------------------------- */
static uint32_t ball;   /* 0: ping's turn, 1: pong's turn */

static void
pass_to(uint32_t turn)
{
  __atomic_store_n(&ball, turn, __ATOMIC_SEQ_CST);
  pfutex_wake(&ball, ANY, 1, PRIV);
}

static void
await_turn(uint32_t turn)
{
  uint32_t v;
  while ((v = __atomic_load_n(&ball, __ATOMIC_SEQ_CST)) != turn)
    pfutex_wait(&ball, v, ANY, PRIV, NULL, 0);
}

static void *
pong(void *arg)
{
  (void)arg;
  pthread_barrier_wait(&start_barrier);
  for (;;) {
    await_turn(1);
    if (__atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE))
      return NULL;
    pass_to(0);
  }
}

static void
run_pp(void)
{
  pthread_t t;
  unsigned long n = 0;
  double t0, t1, end;
  pthread_barrier_init(&start_barrier, NULL, 2);
  spawn(&t, pong, NULL);
  pthread_barrier_wait(&start_barrier);
  t0 = now();
  end = t0 + opt_ms / 1000.0;
  do {
    int i;
    for (i = 0; i < 256; i++) {
      pass_to(1);
      await_turn(0);
    }
    n += 256;
  } while ((t1 = now()) < end);
  __atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
  pass_to(1);
  pthread_join(t, NULL);
  printf("workload=pp backend=%s threads=2 value=%.0f unit=ops_per_s\n",
         backend_name, n / (t1 - t0));
}

/* ---- cond-perf ---------------------------------------------------------- */
static struct nptl_mutex cmx = NPTL_MUTEX_INIT;
static struct nptl_cond cv = NPTL_COND_INIT, cv_main = NPTL_COND_INIT;
static int cwaiting, cround, cstop, c_requeue;

static void
broadcast(struct nptl_cond *c)
{
  if (c_requeue) {
    nptl_cond_broadcast(c, &cmx);
  } else {
    __atomic_fetch_add(&c->seq, 1, __ATOMIC_SEQ_CST);
    pfutex(&c->seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
  }
}

static void *
cond_waiter(void *arg)
{
  int N = *(int *)arg;
  nptl_mutex_lock(&cmx);
  while (!cstop) {
    int seen = cround;
    if (++cwaiting == N)
      nptl_cond_signal(&cv_main);
    while (cround == seen && !cstop)
      nptl_cond_wait(&cv, &cmx);
  }
  nptl_mutex_unlock(&cmx);
  return NULL;
}

static void
run_cond(void)
{
  int N = opt_n > 0 ? opt_n : 16, i;
  unsigned long rounds = 0;
  pthread_t *tids = calloc(N, sizeof *tids);
  double t0, t1, end;
  if (strcmp(opt_variant, "wakeall") == 0)
    c_requeue = 0;
  else if (strcmp(opt_variant, "requeue") == 0)
    c_requeue = 1;
  else {
    fprintf(stderr, "pfbench: -v wakeall|requeue\n");
    exit(2);
  }
  nptl_mutex_lock(&cmx);
  for (i = 0; i < N; i++)
    spawn(&tids[i], cond_waiter, &N);
  while (cwaiting < N)          /* first gathering: untimed */
    nptl_cond_wait(&cv_main, &cmx);
  t0 = now();
  end = t0 + opt_ms / 1000.0;
  for (;;) {
    cwaiting = 0;
    cround++;
    broadcast(&cv);
    while (cwaiting < N)
      nptl_cond_wait(&cv_main, &cmx);
    rounds++;
    if ((t1 = now()) >= end)
      break;
  }
  cstop = 1;
  broadcast(&cv);
  nptl_mutex_unlock(&cmx);
  for (i = 0; i < N; i++)
    pthread_join(tids[i], NULL);
  printf("workload=cond-perf backend=%s n=%d variant=%s value=%.0f unit=rounds_per_s\n",
         backend_name, N, opt_variant, rounds / (t1 - t0));
}

static void
usage(void)
{
  fprintf(stderr, "usage: pfbench --backends\n"
                  "       pfbench hash|wake-none|wake|requeue|pp|cond-perf"
                  " [-t T] [-n N] [-f F] [-v wakeall|requeue] [-d MS]\n");
  exit(2);
}

int
main(int argc, char **argv)
{
  const char *wl;
  int c;
  if (argc < 2)
    usage();
  if (strcmp(argv[1], "--backends") == 0) {
    const char *const *b;
    for (b = pfutex_backends(); *b; b++)
      puts(*b);
    return 0;
  }
  wl = argv[1];
  optind = 2;
  while ((c = getopt(argc, argv, "t:n:f:v:d:")) != -1) {
    switch (c) {
    case 't': opt_threads = atoi(optarg); break;
    case 'n': opt_n = atoi(optarg); break;
    case 'f': opt_futexes = atoi(optarg); break;
    case 'v': opt_variant = optarg; break;
    case 'd': opt_ms = atoi(optarg); break;
    default: usage();
    }
  }
  if (opt_futexes < 1 || opt_ms < 1)
    usage();
  backend_name = pfutex_backend();
  if (!backend_name) {
    fprintf(stderr, "pfbench: no backend (PFUTEX_BACKEND=%s)\n",
            getenv("PFUTEX_BACKEND") ? getenv("PFUTEX_BACKEND") : "");
    return 3;
  }
  if (strcmp(wl, "hash") == 0) {
    is_hash = 1;
    run_spin(wl);
  } else if (strcmp(wl, "wake-none") == 0) {
    run_spin(wl);
  } else if (strcmp(wl, "wake") == 0) {
    run_block(0);
  } else if (strcmp(wl, "requeue") == 0) {
    run_block(1);
  } else if (strcmp(wl, "pp") == 0) {
    run_pp();
  } else if (strcmp(wl, "cond-perf") == 0) {
    run_cond();
  } else {
    usage();
  }
  return 0;
}
