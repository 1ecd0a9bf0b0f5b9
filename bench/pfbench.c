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
 *              woken (untimed); median time of the requeue call, microseconds;
 *              -x, -X: A and B in a region, a MAP_SHARED mapping (shared
 *              ops); -2: A in one region, B in another (under emulation a
 *              move across two tables: a node of B's table per waiter, which
 *              the waiter, woken for it, takes over); -p (with -x, -X or
 *              -2): the waiters are threads of a second process (forked),
 *              so a move across tables is another process's waiters';
 *              -V: each waiter in pfutex_waitv {a private word nobody
 *              wakes, A} (a move of waitv members, src/waitv.c (M)); also
 *              all_woken_us: the median from the requeue until every
 *              waiter returned (B then A woken in a loop)
 *   wake-parallel  -n N waiters on one word, -w W waker threads each
 *              waking N/W of them with one call, started together; median
 *              over rounds of the wakers' mean latency, microseconds
 *   pp         ping-pong between -t P pairs of threads (default 1), each
 *              pair on its own word; total round trips/s.  -a same: both
 *              threads of pair i on CPU i (the futex paths and a context
 *              switch); -a split: on two CPUs (adds the cross-CPU wakeup,
 *              on a VM the hypervisor's); default: the scheduler's choice.
 *              -s: the waiter first spins as libstdc++'s atomic wait does
 *   cond-perf  -n N threads wait on a mutex+condvar (examples/nptl_sync.h),
 *              broadcast rounds; -v wakeall (FUTEX_WAKE all) or -v requeue
 *              (wake one, CMP_REQUEUE the rest onto the mutex); rounds/s
 *   pi-uncontended  one thread, FUTEX_LOCK_PI_PRIVATE then
 *              FUTEX_UNLOCK_PI_PRIVATE on a free word, straight to the ops
 *              (no user-space fast path: an op is the two calls); the word
 *              is checked (our id, then 0) each time; lock+unlock pairs/s
 *   pi-handoff two threads hand a PI word back and forth through the ops:
 *              the holder waits until the other has announced its
 *              FUTEX_LOCK_PI, so the other is normally asleep in it and
 *              each FUTEX_UNLOCK_PI hands the lock over (handoffs= counts
 *              the unlocks that did); a plain counter under the lock must
 *              equal the locks taken (cs=); -a same|split as pp;
 *              csw_per_cs: context switches per critical section;
 *              critical sections (hand-offs)/s
 *   waitv-mismatch  one thread, pfutex_waitv on -n N private words
 *              (default 8) whose last value differs: EAGAIN at once, the
 *              cost of the call's checks; each call's EAGAIN is checked;
 *              calls/s
 *   waitv-pp   ping-pong: thread A waits with pfutex_waitv on -n N private
 *              words (default 4; at most PFUTEX_WAITV_MAX), their values
 *              read before it passes the turn; B waits until A has
 *              announced its waitv (spinning, then yielding, as pi-handoff:
 *              on one CPU A then sleeps in it), changes word r % N of round
 *              r and wakes it with pfutex_wake(1); A, woken, wakes B through
 *              a plain word (pfutex_wait/pfutex_wake, as pp).  The index
 *              returned must be the word B woke (exit 2 otherwise); a round
 *              whose waitv found B's word changed already is an EAGAIN
 *              (eagain=), and B's wakes that found A (woken=) must equal
 *              the indices returned (exit 2 otherwise).  A starts a round
 *              only after B's wake has returned (a late wake would hit A's
 *              next waitv).  -a same: both on CPU 0, -a split: A on 0, B on
 *              1; csw_per_rt: context switches per round trip; round trips/s
 *   -x         (hash, wake-none, pp) the words are in a shared region
 *              (pfutex_region_anon) and the ops are shared (no private
 *              flag): under the native backend the kernel's shared futexes,
 *              under emulation the region's table.  pp -x: each pair's
 *              pong runs in a fork()ed process.
 *   -X         as -x, the words in a plain mmap(MAP_SHARED | MAP_ANONYMOUS)
 *              mapping, no region: the kernel's shared futexes natively,
 *              under emulation the user's shared table, keyed by object
 *              (issue 20: each op asks which object, one ioctl)
 *   -2         (waitv-pp) as -x, with the odd words in a second region:
 *              under emulation a waitv over two shared tables, which
 *              sleeps on the first one's parker and looks at the second's
 *              after each slice (1 ms doubling to 4 ms: src/waitv.c), so
 *              the rounds woken through the second wait for a slice's end
 * Common: -d MS time budget (default 200).
 * -P: perf's method for hash (workers pinned round-robin, the multiplexer
 *     with -m), wake, requeue and wake-parallel, to check pfbench
 *     against `perf bench futex` (bench/perf-check.sh): per run, fresh
 *     waiters pinned round-robin to the CPUs, a 100 ms settle, the
 *     multiplexer pfutex() as perf calls futex(2), -w W per call (wake:
 *     nr_wake, requeue: nr_requeue, default 1), woken waiters exit; -r R
 *     runs (default 10), the mean, as perf reports it.
 *
 * Output: one line of key=value pairs, e.g.
 *   workload=pp backend=linux:futex2 threads=2 value=123456 unit=ops_per_s
 * Starts are synchronised with barriers and atomics; measured sections never
 * sleep.  Waiters are known to be blocked before a timed wake because a
 * probe (REQUEUE everything from the word to a scratch word and back)
 * counts them.
 */
#define _GNU_SOURCE
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include <errno.h>
#include <signal.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sys/mman.h>
#ifdef HAVE_PTHREAD_NP_H
# include <pthread_np.h>
#endif
#include <pfutex.h>
#include <pfutex/linux.h>
#include "../examples/nptl_sync.h"

#define ANY PFUTEX_BITSET_MATCH_ANY
#define PRIV PFUTEX_PRIVATE
#define CACHELINE 64

static int opt_threads = -1, opt_n = -1, opt_futexes = 1024, opt_ms = 200;
static int opt_w = -1, opt_runs = 10, opt_perf, opt_mux, opt_spin, opt_region;
static int opt_two;            /* -2 (waitv-pp): the odd words in a second region */
static int opt_procs;          /* -p (requeue, wake): the waiters in a forked process */
static int opt_waitv;          /* -V (requeue, wake): the waiters in futex_waitv */
/* -x: shared ops on region words; else private ops on private memory. */
static unsigned int op_flags = PFUTEX_PRIVATE;
static int op_wait = FUTEX_WAIT_PRIVATE, op_wake = FUTEX_WAKE_PRIVATE;
static const char *opt_variant = "requeue", *opt_affinity;
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

/* -x: 1, a region's words; -X: 2, a plain shared mapping's. */
static void *
shared_words(size_t n)
{
  if (opt_region == 2) {
    void *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
      die("mmap");
    return p;
  } else {
    pfutex_region_t *rg = pfutex_region_anon(n);
    if (!rg)
      die("pfutex_region_anon");
    return pfutex_region_addr(rg);
  }
}
static const char *
words_kind(void)
{
  return opt_region == 2 ? "mapped" : opt_two ? "two-regions" : opt_region ? "region" : "private";
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

/* Where threads cannot be pinned (macOS, NetBSD, OpenBSD: configure's
 * PF_HAVE_PIN), -a same|split runs unpinned and the result line says so
 * (affinity=...-unpinned). */
static void
pin_self(int cpu)
{
#ifdef PF_HAVE_PIN
  cpu_set_t set;
  if (cpu < 0)
    return;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if ((errno = pthread_setaffinity_np(pthread_self(), sizeof set, &set)) != 0)
    die("pthread_setaffinity_np");
#else
  (void)cpu;
#endif
}

static const char *
affinity_name(void)
{
#ifdef PF_HAVE_PIN
  return opt_affinity ? opt_affinity : "any";
#else
  return opt_affinity ? (strcmp(opt_affinity, "same") == 0 ? "same-unpinned" : "split-unpinned") : "any";
#endif
}

/* pthread_join with a deadline on CLOCK_REALTIME: 0, or ETIMEDOUT.  Without
 * pthread_timedjoin_np (macOS, OpenBSD, NetBSD), an alarm ends the process
 * at the deadline instead: the run fails rather than hangs either way. */
#ifndef HAVE_PTHREAD_TIMEDJOIN_NP
static void
join_alarm(int sig)
{
  static const char msg[] = "pfbench: a thread still running 10 s past its time: a lost wake?\n";
  (void)sig;
  (void)!write(2, msg, sizeof msg - 1);
  _exit(2);
}
#endif

static int
join_by(pthread_t t, const struct timespec *limit)
{
#ifdef HAVE_PTHREAD_TIMEDJOIN_NP
  return pthread_timedjoin_np(t, NULL, limit);
#else
  struct timespec now_rt;
  int e;
  clock_gettime(CLOCK_REALTIME, &now_rt);
  signal(SIGALRM, join_alarm);
  alarm(limit->tv_sec > now_rt.tv_sec ? (unsigned)(limit->tv_sec - now_rt.tv_sec) + 1 : 1);
  e = pthread_join(t, NULL);
  alarm(0);
  return e;
#endif
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
  int cpu;                  /* -P: pinned round-robin, as perf does; else -1 */
  uint32_t *words;
  unsigned long ops;
  char pad[CACHELINE];
};

/* Barriers start rounds (never inside a measured section).  POSIX's where
 * the system has them, process-shared included (configure:
 * PF_HAVE_PSHARED_BARRIER); else (macOS has no pthread_barrier_t, NetBSD no
 * process-shared one) a generation barrier that spins with sched_yield:
 * no futex of its own to disturb the table being measured. */
#ifdef PF_HAVE_PSHARED_BARRIER
typedef pthread_barrier_t pfb_barrier_t;
static void
pfb_barrier_init(pfb_barrier_t *b, int pshared, unsigned n)
{
  pthread_barrierattr_t ba;
  pthread_barrierattr_init(&ba);
  if (pshared)
    pthread_barrierattr_setpshared(&ba, PTHREAD_PROCESS_SHARED);
  if ((errno = pthread_barrier_init(b, &ba, n)) != 0)
    die("pthread_barrier_init");
  pthread_barrierattr_destroy(&ba);
}
# define pfb_barrier_wait(b) ((void)pthread_barrier_wait(b))
# define pfb_barrier_destroy(b) ((void)pthread_barrier_destroy(b))
#else
typedef struct { unsigned n, count, gen; } pfb_barrier_t;
static void
pfb_barrier_init(pfb_barrier_t *b, int pshared, unsigned n)
{
  (void)pshared;                /* plain atomics: shared memory is enough */
  b->n = n;
  b->count = 0;
  __atomic_store_n(&b->gen, 0, __ATOMIC_RELEASE);
}
static void
pfb_barrier_wait(pfb_barrier_t *b)
{
  unsigned g = __atomic_load_n(&b->gen, __ATOMIC_ACQUIRE);
  if (__atomic_add_fetch(&b->count, 1, __ATOMIC_ACQ_REL) == b->n) {
    __atomic_store_n(&b->count, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&b->gen, g + 1, __ATOMIC_RELEASE);   /* publishes the reset */
    return;
  }
  while (__atomic_load_n(&b->gen, __ATOMIC_ACQUIRE) == g)
    sched_yield();
}
# define pfb_barrier_destroy(b) ((void)(b))
#endif

static pfb_barrier_t start_barrier;
static double deadline;
static int is_hash;

/* One loop per mode, so the loop itself costs a few instructions a call:
 * under emulation the call costs little more than that. */
static void *
spin_worker(void *arg)
{
  struct worker *w = arg;
  uint32_t *const words = w->words;
  const int nf = is_hash ? opt_futexes : 1024, mux = opt_mux, hash = is_hash;
  const unsigned int fl = op_flags;
  const int opw = op_wait, opk = op_wake;
  unsigned long ops = 0;
  int i;
  pin_self(w->cpu);
  pfb_barrier_wait(&start_barrier);
  do {
    if (hash && !mux) {
      for (i = 0; i < nf; i++)
        if (pfutex_wait(&words[i * 4], 1234, ANY, fl, NULL, 0) != -1 || errno != EAGAIN)
          die("hash: wait did not fail with EAGAIN");
    } else if (hash) {
      for (i = 0; i < nf; i++)
        if (pfutex(&words[i * 4], opw, 1234, NULL, NULL, 0) != -1
            || errno != EAGAIN)
          die("hash: wait did not fail with EAGAIN");
    } else if (!mux) {
      for (i = 0; i < nf; i++)
        if (pfutex_wake(&words[0], ANY, 1, fl) != 0)
          die("wake-none: woke someone");
    } else {
      for (i = 0; i < nf; i++)
        if (pfutex(&words[0], opk, 1, NULL, NULL, 0) != 0)
          die("wake-none: woke someone");
    }
    ops += nf;
  } while (now() < deadline);
  w->ops = ops;
  return NULL;
}

static void
run_spin(const char *workload)
{
  int t, T = opt_threads > 0 ? opt_threads : (is_hash ? 2 : 1);
  int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN) > 0 ? (int)sysconf(_SC_NPROCESSORS_ONLN) : 1;
  struct worker *w = calloc(T, sizeof *w);
  unsigned long total = 0;
  double t0, t1;
  size_t per = ((size_t)opt_futexes * 4 + 16) * 4;
  char *shared = NULL;
  if (opt_region)
    shared = shared_words(per * T);
  pfb_barrier_init(&start_barrier, 0, T + 1);
  for (t = 0; t < T; t++) {
    /* words spaced 4 apart: distinct, several per cache line, per thread */
    w[t].words = shared ? (uint32_t *)(void *)(shared + per * t) : aligned_alloc(CACHELINE, per);
    memset(w[t].words, 0, ((size_t)opt_futexes * 4 + 16) * 4);
    w[t].cpu = opt_perf ? t % ncpu : -1;
    spawn(&w[t].tid, spin_worker, &w[t]);
  }
  t0 = now();
  deadline = t0 + opt_ms / 1000.0;
  pfb_barrier_wait(&start_barrier);
  for (t = 0; t < T; t++) {
    pthread_join(w[t].tid, NULL);
    total += w[t].ops;
  }
  t1 = now();
  printf("workload=%s backend=%s threads=%d api=%s words=%s value=%.0f unit=ops_per_s\n",
         workload, backend_name, T, opt_mux ? "pfutex" : "clean",
         words_kind(), total / (t1 - t0));
}

/* ---- wake and requeue: N persistent waiters, one round at a time ------- */
/* The words: private memory and private ops; with -x, -X or -2 (requeue,
 * wake) shared ops on words of a region, of a MAP_SHARED mapping, or A of
 * one region and B (and the probe) of a second (a requeue across two
 * shared tables: src/requeue.c, wait.c (M)). */
static uint32_t pword_a, pword_b, pword_probe;
static uint32_t *word_a = &pword_a, *word_b = &pword_b, *word_probe = &pword_probe;
static unsigned int blk_flags = PRIV;
/* The rounds' shared state: here, or (-p) in memory shared with the
 * waiters' process (the barrier process-shared). */
struct blk_sync {
  unsigned done_count;
  int stop_flag;
  pfb_barrier_t round_barrier;
};
static struct blk_sync blk_local, *blk = &blk_local;
#define done_count (blk->done_count)
#define stop_flag (blk->stop_flag)
#define round_barrier (blk->round_barrier)

static void *
block_waiter(void *arg)
{
  uint32_t quiet = 0;             /* -V: entry 0, a private word nobody wakes */
  (void)arg;
  for (;;) {
    pfb_barrier_wait(&round_barrier);
    if (__atomic_load_n(&stop_flag, __ATOMIC_ACQUIRE))
      return NULL;
    if (opt_waitv) {
      struct pfutex_waitv v[2];
      memset(v, 0, sizeof v);
      v[0].uaddr = (uintptr_t)&quiet;
      v[0].flags = PFUTEX2_SIZE_U32 | PFUTEX2_PRIVATE;
      v[1].uaddr = (uintptr_t)word_a;
      v[1].flags = PFUTEX2_SIZE_U32 | (blk_flags == PRIV ? PFUTEX2_PRIVATE : 0);
      if (pfutex_waitv(v, 2, 0, NULL, PFUTEX_CLOCK_MONOTONIC) < 0 && errno != EAGAIN
          && errno != EINTR)
        die("pfutex_waitv");
    } else {
      pfutex_wait(word_a, 0, ANY, blk_flags, NULL, 0);
    }
    __atomic_add_fetch(&done_count, 1, __ATOMIC_SEQ_CST);
  }
}

/* Wait (untimed) until n waiters are blocked on word_a.  A kernel futex
 * waiter can wake spuriously (a late wakeup from an earlier round's wake,
 * for one): it then re-checks its own word and queues on word_a again by
 * itself, so the move back may find fewer on word_probe than went there,
 * and a count can be momentarily short.  The rounds tolerate both. */
static void
await_blocked(int n)
{
  /* -V: counted by a requeue of A onto itself (no move across tables: a
   * waitv member moved there and back before its thread followed holds a
   * node of each table it passed through, src/waitv.c (M)) */
  uint32_t *probe = opt_waitv ? word_a : word_probe;
  for (;;) {
    int moved = pfutex_requeue(word_a, probe, 0, INT_MAX, blk_flags), back = 0, r;
    if (moved < 0)
      die("probe requeue");
    while (probe != word_a && back < moved) {
      if ((r = pfutex_requeue(word_probe, word_a, 0, INT_MAX, blk_flags)) < 0)
        die("probe requeue back");
      if (r == 0)
        break;              /* the rest went back to word_a by themselves */
      back += r;
    }
    if (moved >= n)
      return;
    sched_yield();
  }
}

static void
run_block(int requeue)
{
  int N = opt_n > 0 ? opt_n : 64, i, rounds = 0, discarded = 0, cap = 1 << 16;
  if (opt_region) {
    uint32_t *w = shared_words(4096), *w2 = opt_two ? shared_words(4096) : w + 32;
    word_a = w;
    word_b = w2;
    word_probe = w2 + 16;
    blk_flags = 0;
  }
  pthread_t *tids = calloc(N, sizeof *tids);
  double *times = malloc(cap * sizeof *times), *dones = malloc(cap * sizeof *dones), end;
  pid_t kid = -1;
  if (opt_procs) {
    if (!opt_region) {
      fprintf(stderr, "pfbench: -p needs shared words (-x, -X or -2)\n");
      exit(2);
    }
    blk = mmap(NULL, sizeof *blk, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (blk == MAP_FAILED)
      die("mmap");
    memset(blk, 0, sizeof *blk);
    pfb_barrier_init(&round_barrier, 1, N + 1);
    fflush(stdout);
    if ((kid = fork()) < 0)
      die("fork");
    if (kid == 0) {                     /* the waiters' process */
      for (i = 0; i < N; i++)
        spawn(&tids[i], block_waiter, NULL);
      for (i = 0; i < N; i++)
        pthread_join(tids[i], NULL);
      _exit(0);
    }
  } else {
    pfb_barrier_init(&round_barrier, 0, N + 1);
    for (i = 0; i < N; i++)
      spawn(&tids[i], block_waiter, NULL);
  }
  end = now() + opt_ms / 1000.0;
  do {
    double t0, t1;
    int woken = 0, r, valid = 1;
    __atomic_store_n(word_a, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&done_count, 0, __ATOMIC_SEQ_CST);
    pfb_barrier_wait(&round_barrier);
    await_blocked(N);
    if (!requeue) {
      t0 = now();
      while (woken < N && __atomic_load_n(&done_count, __ATOMIC_SEQ_CST) < (unsigned)N) {
        if ((r = pfutex_wake(word_a, ANY, 1, blk_flags)) < 0)
          die("wake");
        woken += r;
      }
      t1 = now();
    } else {
      t0 = now();
      r = pfutex_cmp_requeue(word_a, 0, word_b, 0, INT_MAX, blk_flags);
      t1 = now();
      if (r < 0)
        die("cmp_requeue");
      if (r != N)
        valid = 0;          /* a waiter was in flight (see await_blocked) */
      while (__atomic_load_n(&done_count, __ATOMIC_SEQ_CST) < (unsigned)N) {
        if (pfutex_wake(word_b, ANY, INT_MAX, blk_flags) < 0
            || pfutex_wake(word_a, ANY, INT_MAX, blk_flags) < 0)
          die("wake");
        sched_yield();
      }
    }
    while (__atomic_load_n(&done_count, __ATOMIC_SEQ_CST) < (unsigned)N)
      sched_yield();   /* untimed: let stragglers return */
    if (valid) {
      dones[rounds] = (now() - t0) * 1e6;
      times[rounds++] = (t1 - t0) * 1e6;
    } else {
      discarded++;
    }
  } while (rounds < cap && (rounds < 3 || now() < end) && discarded < 1000);
  __atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
  pfb_barrier_wait(&round_barrier);
  if (kid > 0) {
    int st;
    while (waitpid(kid, &st, 0) < 0 && errno == EINTR)
      ;
  } else {
    for (i = 0; i < N; i++)
      pthread_join(tids[i], NULL);
  }
  if (rounds == 0) {
    fprintf(stderr, "pfbench: every round was discarded\n");
    exit(2);
  }
  printf("workload=%s backend=%s n=%d words=%s%s%s rounds=%d discarded=%d value=%.2f unit=us"
         " all_woken_us=%.2f\n",
         requeue ? "requeue" : "wake", backend_name, N, words_kind(),
         opt_procs ? "-other-process" : "", opt_waitv ? "-waitv" : "", rounds, discarded,
         median(times, rounds), median(dones, rounds));
}

/* ---- wake-parallel: W wakers, each one call for N/W waiters ----------- */
struct waker {
  pthread_t tid;
  int share;
  int woken;
  double us;
};

static pfb_barrier_t waker_go, waker_done;
static int waker_stop;

static void *
parallel_waker(void *arg)
{
  struct waker *k = arg;
  for (;;) {
    double t0;
    int r;
    pfb_barrier_wait(&waker_go);
    if (__atomic_load_n(&waker_stop, __ATOMIC_ACQUIRE))
      return NULL;
    t0 = now();
    r = pfutex_wake(word_a, ANY, k->share, PRIV);
    k->us = (now() - t0) * 1e6;
    if (r < 0)
      die("wake");
    k->woken = r;         /* short when a waiter was in flight: see await_blocked */
    pfb_barrier_wait(&waker_done);
  }
}

static void
run_wake_parallel(void)
{
  int N = opt_n > 0 ? opt_n : 64, W = opt_w > 0 ? opt_w : 2, i, rounds = 0, discarded = 0;
  int cap = 1 << 16;
  pthread_t *tids;
  struct waker *wk;
  double *times = malloc(cap * sizeof *times), end;
  if (N % W) {
    fprintf(stderr, "pfbench: -n must be a multiple of -w\n");
    exit(2);
  }
  tids = calloc(N, sizeof *tids);
  wk = calloc(W, sizeof *wk);
  pfb_barrier_init(&round_barrier, 0, N + 1);
  pfb_barrier_init(&waker_go, 0, W + 1);
  pfb_barrier_init(&waker_done, 0, W + 1);
  for (i = 0; i < N; i++)
    spawn(&tids[i], block_waiter, NULL);
  for (i = 0; i < W; i++) {
    wk[i].share = N / W;
    spawn(&wk[i].tid, parallel_waker, &wk[i]);
  }
  end = now() + opt_ms / 1000.0;
  do {
    double sum = 0;
    int woken = 0;
    __atomic_store_n(word_a, 0, __ATOMIC_SEQ_CST);
    __atomic_store_n(&done_count, 0, __ATOMIC_SEQ_CST);
    pfb_barrier_wait(&round_barrier);
    await_blocked(N);
    pfb_barrier_wait(&waker_go);
    pfb_barrier_wait(&waker_done);
    for (i = 0; i < W; i++) {
      sum += wk[i].us;
      woken += wk[i].woken;
    }
    while (__atomic_load_n(&done_count, __ATOMIC_SEQ_CST) < (unsigned)N) {
      if (woken < N && pfutex_wake(word_a, ANY, INT_MAX, PRIV) < 0)
        die("wake");
      sched_yield();
    }
    if (woken == N)
      times[rounds++] = sum / W;
    else
      discarded++;
  } while (rounds < cap && (rounds < 3 || now() < end) && discarded < 1000);
  __atomic_store_n(&waker_stop, 1, __ATOMIC_RELEASE);
  pfb_barrier_wait(&waker_go);
  __atomic_store_n(&stop_flag, 1, __ATOMIC_RELEASE);
  pfb_barrier_wait(&round_barrier);
  for (i = 0; i < W; i++)
    pthread_join(wk[i].tid, NULL);
  for (i = 0; i < N; i++)
    pthread_join(tids[i], NULL);
  if (rounds == 0) {
    fprintf(stderr, "pfbench: every round was discarded\n");
    exit(2);
  }
  printf("workload=wake-parallel backend=%s n=%d wakers=%d rounds=%d discarded=%d value=%.2f"
         " unit=us\n", backend_name, N, W, rounds, discarded, median(times, rounds));
}

/* ---- -P: perf bench futex's method (wake, requeue, wake-parallel) ------ */
static pthread_mutex_t perf_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t perf_parent = PTHREAD_COND_INITIALIZER, perf_worker = PTHREAD_COND_INITIALIZER;
static int perf_starting;
static unsigned perf_exited;
static uint32_t perf_f1, perf_f2;

static void *
perf_blocked(void *arg)
{
  (void)arg;
  pthread_mutex_lock(&perf_lock);
  if (--perf_starting == 0)
    pthread_cond_signal(&perf_parent);
  pthread_cond_wait(&perf_worker, &perf_lock);
  pthread_mutex_unlock(&perf_lock);
  while (pfutex(&perf_f1, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0) != 0 && errno == EINTR)
    ;
  __atomic_add_fetch(&perf_exited, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

static pfb_barrier_t perf_wakers;

static void *
perf_waker(void *arg)
{
  struct waker *k = arg;
  double t0;
  pfb_barrier_wait(&perf_wakers);      /* all wakers start together */
  t0 = now();
  long r = pfutex(&perf_f1, FUTEX_WAKE_PRIVATE, k->share, NULL, NULL, 0);
  k->us = (now() - t0) * 1e6;
  if (r != k->share)
    fprintf(stderr, "pfbench: a waker woke %ld of %d\n", r, k->share);
  return NULL;
}

static void
run_perf(const char *workload)
{
  int N = opt_n > 0 ? opt_n : 64, R = opt_runs, run, i;
  int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
  int W = opt_w > 0 ? opt_w : (strcmp(workload, "wake-parallel") == 0 ? ncpu : 1);
  pthread_t *tids = calloc(N, sizeof *tids);
  struct waker *wk = calloc(W, sizeof *wk);
  pthread_attr_t attr;
  double sum = 0;
  if (ncpu < 1)
    ncpu = 1;
  if (strcmp(workload, "wake-parallel") == 0 && N % W) {
    fprintf(stderr, "pfbench: -n must be a multiple of -w\n");
    exit(2);
  }
  for (run = 0; run < R; run++) {
    long done = 0;
    double t0 = 0, t1 = 0;
    pthread_mutex_lock(&perf_lock);
    perf_starting = N;
    pthread_mutex_unlock(&perf_lock);
    __atomic_store_n(&perf_exited, 0, __ATOMIC_SEQ_CST);
    for (i = 0; i < N; i++) {
      pthread_attr_init(&attr);
#ifdef PF_HAVE_PIN
      {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(i % ncpu, &set);
        pthread_attr_setaffinity_np(&attr, sizeof set, &set);
      }
#endif
      if ((errno = pthread_create(&tids[i], &attr, perf_blocked, NULL)) != 0)
        die("pthread_create");
      pthread_attr_destroy(&attr);
    }
    pthread_mutex_lock(&perf_lock);
    while (perf_starting)
      pthread_cond_wait(&perf_parent, &perf_lock);
    pthread_cond_broadcast(&perf_worker);
    pthread_mutex_unlock(&perf_lock);
    usleep(100000);
    if (strcmp(workload, "wake") == 0) {
      t0 = now();
      while (done != N)
        done += pfutex(&perf_f1, FUTEX_WAKE_PRIVATE, W, NULL, NULL, 0);
      t1 = now();
      sum += (t1 - t0) * 1e6;
    } else if (strcmp(workload, "requeue") == 0) {
      t0 = now();
      while (done < N)
        done += pfutex(&perf_f1, FUTEX_CMP_REQUEUE_PRIVATE, 0,
                       (const struct timespec *)(uintptr_t)W, &perf_f2, 0);
      t1 = now();
      sum += (t1 - t0) * 1e6;
      if (pfutex(&perf_f2, FUTEX_WAKE_PRIVATE, N, NULL, NULL, 0) != N)
        fprintf(stderr, "pfbench: woke fewer than %d requeued waiters\n", N);
    } else {
      double per = 0;
      pfb_barrier_init(&perf_wakers, 0, W + 1);
      for (i = 0; i < W; i++) {
        wk[i].share = N / W;
        spawn(&wk[i].tid, perf_waker, &wk[i]);
      }
      pfb_barrier_wait(&perf_wakers);
      for (i = 0; i < W; i++) {
        pthread_join(wk[i].tid, NULL);
        per += wk[i].us;
      }
      pfb_barrier_destroy(&perf_wakers);
      sum += per / W;
    }
    /* untimed: a waiter that woke spuriously went back to perf_f1 by
     * itself (see await_blocked); wake whoever is left before joining */
    while (__atomic_load_n(&perf_exited, __ATOMIC_SEQ_CST) < (unsigned)N) {
      pfutex(&perf_f1, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
      pfutex(&perf_f2, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
      sched_yield();
    }
    for (i = 0; i < N; i++)
      pthread_join(tids[i], NULL);
  }
  printf("workload=%s backend=%s n=%d w=%d method=perf runs=%d value=%.2f unit=us\n",
         workload, backend_name, N, W, R, sum / R);
}

/* ---- pp: P pairs, each on its own word (own cache line) ------------- */
struct pp_pair {
  uint32_t ball;            /* 0: ping's turn, 1: pong's turn */
  int cpu_ping, cpu_pong;   /* -1: not pinned */
  pthread_t ping, pong;
  pid_t pong_pid;           /* -x */
  int *stop;
  unsigned long n;
  double t;
} __attribute__((aligned(CACHELINE)));   /* one pair per cache line */

static void
pass_to(uint32_t *ball, uint32_t turn)
{
  __atomic_store_n(ball, turn, __ATOMIC_SEQ_CST);
  pfutex_wake(ball, ANY, 1, op_flags);
}

/* -s: the waiter's policy of libstdc++'s atomic wait (GCC 12): re-check
 * 16 times, pausing the first 12, yielding the last 4, then sleep.  A
 * caller's policy, the same for every backend; pfutex_wait never spins. */
static int
spin_until(uint32_t *ball, uint32_t turn)
{
  int i;
  for (i = 0; i < 16; i++) {
    if (__atomic_load_n(ball, __ATOMIC_SEQ_CST) == turn)
      return 1;
    if (i < 12) {
#if defined(__x86_64__) || defined(__i386__)
      __asm__ __volatile__("pause");
#endif
    } else {
      sched_yield();
    }
  }
  return 0;
}

static void
await_turn(uint32_t *ball, uint32_t turn)
{
  uint32_t v;
  if (opt_spin && spin_until(ball, turn))
    return;
  while ((v = __atomic_load_n(ball, __ATOMIC_SEQ_CST)) != turn)
    pfutex_wait(ball, v, ANY, op_flags, NULL, 0);
}

static uint32_t *pp_go;      /* -x: the children wait for 1 here before they start */

static void *
pong(void *arg)
{
  struct pp_pair *p = arg;
  pin_self(p->cpu_pong);
  if (opt_region) {
    while (__atomic_load_n(pp_go, __ATOMIC_ACQUIRE) == 0)
      pfutex_wait(pp_go, 0, ANY, 0, NULL, 0);
  } else {
    pfb_barrier_wait(&start_barrier);
  }
  for (;;) {
    await_turn(&p->ball, 1);
    if (__atomic_load_n(p->stop, __ATOMIC_ACQUIRE))
      return NULL;
    pass_to(&p->ball, 0);
  }
}

static void *
ping(void *arg)
{
  struct pp_pair *p = arg;
  unsigned long n = 0;
  double t0, t1;
  pin_self(p->cpu_ping);
  pfb_barrier_wait(&start_barrier);
  t0 = now();
  do {
    int i;
    for (i = 0; i < 256; i++) {
      pass_to(&p->ball, 1);
      await_turn(&p->ball, 0);
    }
    n += 256;
  } while ((t1 = now()) < deadline);
  p->n = n;
  p->t = t1 - t0;
  return NULL;
}

static void
run_pp(void)
{
  int P = opt_threads > 0 ? opt_threads : 1, i;
  struct pp_pair *pairs = aligned_alloc(CACHELINE, P * sizeof *pairs);
  double rate = 0;
  int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), same = 0, split = 0;
  if (ncpu < 1)
    ncpu = 1;
  if (opt_affinity && !(same = strcmp(opt_affinity, "same") == 0)
      && !(split = strcmp(opt_affinity, "split") == 0)) {
    fprintf(stderr, "pfbench: -a same|split\n");
    exit(2);
  }
  if (opt_region) {
    /* pairs and the start word in a region; pongs in child processes */
    pp_go = shared_words(P * sizeof *pairs + 2 * CACHELINE);
    pairs = (struct pp_pair *)(void *)((char *)pp_go + CACHELINE);
    stop_flag = 0;
  }
  memset(pairs, 0, P * sizeof *pairs);
  pfb_barrier_init(&start_barrier, 0, (opt_region ? 1 : 2) * P + 1);
  for (i = 0; i < P; i++) {
    pairs[i].cpu_ping = same ? i % ncpu : split ? (2 * i) % ncpu : -1;
    pairs[i].cpu_pong = same ? i % ncpu : split ? (2 * i + 1) % ncpu : -1;
    pairs[i].stop = opt_region ? (int *)(void *)((char *)pp_go + 4) : &stop_flag;
    if (opt_region) {
      fflush(stdout);
      if ((pairs[i].pong_pid = fork()) < 0)
        die("fork");
      if (pairs[i].pong_pid == 0) {
        pong(&pairs[i]);
        _exit(0);
      }
    } else {
      spawn(&pairs[i].pong, pong, &pairs[i]);
    }
  }
  for (i = 0; i < P; i++)
    spawn(&pairs[i].ping, ping, &pairs[i]);
  deadline = now() + opt_ms / 1000.0;
  if (opt_region) {
    __atomic_store_n(pp_go, 1, __ATOMIC_RELEASE);
    pfutex_wake(pp_go, ANY, INT_MAX, 0);
  }
  pfb_barrier_wait(&start_barrier);
  for (i = 0; i < P; i++) {
    pthread_join(pairs[i].ping, NULL);
    rate += pairs[i].n / pairs[i].t;
  }
  for (i = 0; i < P; i++)
    __atomic_store_n(pairs[i].stop, 1, __ATOMIC_RELEASE);
  for (i = 0; i < P; i++) {
    pass_to(&pairs[i].ball, 1);
    if (opt_region)
      waitpid(pairs[i].pong_pid, NULL, 0);
    else
      pthread_join(pairs[i].pong, NULL);
  }
  printf("workload=pp backend=%s pairs=%d affinity=%s spin=%s words=%s value=%.0f unit=ops_per_s\n",
         backend_name, P, affinity_name(), opt_spin ? "libstdc++" : "none",
         words_kind(), rate);
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

/* The glibc peer: the same rounds on pthread_mutex_t / pthread_cond_t. */
static pthread_mutex_t gmx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gcv = PTHREAD_COND_INITIALIZER, gcv_main = PTHREAD_COND_INITIALIZER;

static void *
cond_waiter_glibc(void *arg)
{
  int N = *(int *)arg;
  pthread_mutex_lock(&gmx);
  while (!cstop) {
    int seen = cround;
    if (++cwaiting == N)
      pthread_cond_signal(&gcv_main);
    while (cround == seen && !cstop)
      pthread_cond_wait(&gcv, &gmx);
  }
  pthread_mutex_unlock(&gmx);
  return NULL;
}

static void
run_cond(void)
{
  int N = opt_n > 0 ? opt_n : 16, i, glibc = 0;
  unsigned long rounds = 0;
  struct rusage ru0, ru1;     /* context switches per round: the why of the ratio */
  pthread_t *tids = calloc(N, sizeof *tids);
  double t0, t1, end;
  if (strcmp(opt_variant, "wakeall") == 0)
    c_requeue = 0;
  else if (strcmp(opt_variant, "requeue") == 0)
    c_requeue = 1;
  else if (strcmp(opt_variant, "glibc") == 0)
    glibc = 1;
  else {
    fprintf(stderr, "pfbench: -v wakeall|requeue|glibc\n");
    exit(2);
  }
  if (glibc) {
    pthread_mutex_lock(&gmx);
    for (i = 0; i < N; i++)
      spawn(&tids[i], cond_waiter_glibc, &N);
    while (cwaiting < N)
      pthread_cond_wait(&gcv_main, &gmx);
  } else {
    nptl_mutex_lock(&cmx);
    for (i = 0; i < N; i++)
      spawn(&tids[i], cond_waiter, &N);
    while (cwaiting < N)          /* first gathering: untimed */
      nptl_cond_wait(&cv_main, &cmx);
  }
  getrusage(RUSAGE_SELF, &ru0);
  t0 = now();
  end = t0 + opt_ms / 1000.0;
  for (;;) {
    cwaiting = 0;
    cround++;
    if (glibc) {
      pthread_cond_broadcast(&gcv);
      while (cwaiting < N)
        pthread_cond_wait(&gcv_main, &gmx);
    } else {
      broadcast(&cv);
      while (cwaiting < N)
        nptl_cond_wait(&cv_main, &cmx);
    }
    rounds++;
    if ((t1 = now()) >= end)
      break;
  }
  getrusage(RUSAGE_SELF, &ru1);
  cstop = 1;
  if (glibc) {
    pthread_cond_broadcast(&gcv);
    pthread_mutex_unlock(&gmx);
  } else {
    broadcast(&cv);
    nptl_mutex_unlock(&cmx);
  }
  for (i = 0; i < N; i++)
    pthread_join(tids[i], NULL);
  printf("workload=cond-perf backend=%s n=%d variant=%s csw_per_round=%.1f value=%.0f"
         " unit=rounds_per_s\n", glibc ? "glibc" : backend_name, N, opt_variant,
         (double)(ru1.ru_nvcsw + ru1.ru_nivcsw - ru0.ru_nvcsw - ru0.ru_nivcsw) / rounds,
         rounds / (t1 - t0));
}

/* ---- pi-uncontended and pi-handoff: the PI lock ops, straight to them --- */
static void
pi_fail(const char *workload, const char *what, uint32_t word)
{
  fprintf(stderr, "pfbench: %s: %s (word 0x%08x)\n", workload, what, (unsigned)word);
  exit(2);
}

/* One thread, FUTEX_LOCK_PI_PRIVATE then FUTEX_UNLOCK_PI_PRIVATE on a free
 * word, no user-space fast path: each op (one lock and one unlock) is two
 * calls.  The word must be our id after the lock and 0 after the unlock. */
static void
run_pi_uncontended(void)
{
  uint32_t *word = aligned_alloc(CACHELINE, CACHELINE), me = (uint32_t)pfutex_tid(), v;
  unsigned long n = 0;
  double t0, t1, end;
  int i;
  __atomic_store_n(word, 0, __ATOMIC_SEQ_CST);
  t0 = now();
  end = t0 + opt_ms / 1000.0;
  do {
    for (i = 0; i < 256; i++) {
      if (pfutex(word, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0) != 0)
        die("pi-uncontended: FUTEX_LOCK_PI_PRIVATE");
      if ((v = __atomic_load_n(word, __ATOMIC_RELAXED)) != me)
        pi_fail("pi-uncontended", "not our id after FUTEX_LOCK_PI", v);
      if (pfutex(word, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0) != 0)
        die("pi-uncontended: FUTEX_UNLOCK_PI_PRIVATE");
      if ((v = __atomic_load_n(word, __ATOMIC_RELAXED)) != 0)
        pi_fail("pi-uncontended", "not 0 after FUTEX_UNLOCK_PI", v);
    }
    n += 256;
  } while ((t1 = now()) < end);
  printf("workload=pi-uncontended backend=%s threads=1 value=%.0f unit=ops_per_s\n",
         backend_name, n / (t1 - t0));
}

/* Two threads hand one PI word back and forth through the ops.  A thread
 * announces itself (want) and calls FUTEX_LOCK_PI_PRIVATE; the holder
 * counts its critical section, waits (spinning, then yielding) until the
 * other has announced itself, and calls FUTEX_UNLOCK_PI_PRIVATE.  The other
 * is then normally asleep in the lock, so the unlock hands it the lock
 * (the word becomes its id | FUTEX_WAITERS, kernel and emulation alike);
 * if it had not queued yet the word went to 0 and it took it: counted as a
 * miss, not a hand-off (on two CPUs a woken owner can race the other's way
 * into the op; with -a same the holder yields until the other has run into
 * its lock and slept).  The last unlocks, after the deadline, need not
 * hand off. */
struct pi_side {
  pthread_t tid;
  int idx, cpu;
  uint32_t id;
  int want;                 /* about to call, or in, FUTEX_LOCK_PI */
  unsigned long cs, handoffs;
} __attribute__((aligned(CACHELINE)));

static struct pi_side pi_sides[2];
static uint32_t pi_word __attribute__((aligned(CACHELINE)));
static unsigned long pi_count;   /* plain: only ever touched under the lock */
static int pi_stop __attribute__((aligned(CACHELINE)));

static void
pi_await_other(const struct pi_side *o)
{
  int i;
  for (i = 0; !__atomic_load_n(&o->want, __ATOMIC_SEQ_CST)
              && !__atomic_load_n(&pi_stop, __ATOMIC_ACQUIRE); i++) {
    if (i < 64) {
#if defined(__x86_64__) || defined(__i386__)
      __asm__ __volatile__("pause");
#endif
    } else {
      sched_yield();
    }
  }
}

static void *
pi_handoff_side(void *arg)
{
  struct pi_side *s = arg, *o = &pi_sides[!s->idx];
  uint32_t v;
  pin_self(s->cpu);
  s->id = (uint32_t)pfutex_tid();
  pfb_barrier_wait(&start_barrier);   /* both ids are set */
  for (;;) {
    __atomic_store_n(&s->want, 1, __ATOMIC_SEQ_CST);
    if (pfutex(&pi_word, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0) != 0)
      die("pi-handoff: FUTEX_LOCK_PI_PRIVATE");
    __atomic_store_n(&s->want, 0, __ATOMIC_SEQ_CST);
    if (((v = __atomic_load_n(&pi_word, __ATOMIC_RELAXED)) & FUTEX_TID_MASK) != s->id)
      pi_fail("pi-handoff", "not our id after FUTEX_LOCK_PI", v);
    pi_count++;
    s->cs++;
    if (now() >= deadline)
      __atomic_store_n(&pi_stop, 1, __ATOMIC_RELEASE);
    pi_await_other(o);
    if (pfutex(&pi_word, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0) != 0)
      die("pi-handoff: FUTEX_UNLOCK_PI_PRIVATE");
    /* the other cannot unlock before we announce ourselves (or stop) */
    if (__atomic_load_n(&pi_word, __ATOMIC_SEQ_CST) == (o->id | FUTEX_WAITERS))
      s->handoffs++;
    if (__atomic_load_n(&pi_stop, __ATOMIC_ACQUIRE))
      return NULL;
  }
}

static void
run_pi_handoff(void)
{
  int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), same = 0, split = 0, i;
  unsigned long cs = 0, handoffs = 0;
  struct rusage ru0, ru1;     /* context switches per critical section */
  double t0, t1;
  uint32_t v;
  if (ncpu < 1)
    ncpu = 1;
  if (opt_affinity && !(same = strcmp(opt_affinity, "same") == 0)
      && !(split = strcmp(opt_affinity, "split") == 0)) {
    fprintf(stderr, "pfbench: -a same|split\n");
    exit(2);
  }
  pfb_barrier_init(&start_barrier, 0, 3);
  for (i = 0; i < 2; i++) {
    pi_sides[i].idx = i;
    pi_sides[i].cpu = same ? 0 : split ? i % ncpu : -1;
    spawn(&pi_sides[i].tid, pi_handoff_side, &pi_sides[i]);
  }
  getrusage(RUSAGE_SELF, &ru0);
  t0 = now();
  deadline = t0 + opt_ms / 1000.0;
  pfb_barrier_wait(&start_barrier);
  for (i = 0; i < 2; i++) {
    pthread_join(pi_sides[i].tid, NULL);
    cs += pi_sides[i].cs;
    handoffs += pi_sides[i].handoffs;
  }
  t1 = now();
  getrusage(RUSAGE_SELF, &ru1);
  if (pi_count != cs) {
    fprintf(stderr, "pfbench: pi-handoff: %lu critical sections counted under the lock,"
            " %lu locks taken\n", pi_count, cs);
    exit(2);
  }
  if ((v = __atomic_load_n(&pi_word, __ATOMIC_SEQ_CST)) != 0)
    pi_fail("pi-handoff", "not 0 at the end", v);
  printf("workload=pi-handoff backend=%s threads=2 affinity=%s cs=%lu handoffs=%lu"
         " csw_per_cs=%.2f value=%.0f unit=ops_per_s\n", backend_name,
         affinity_name(), cs, handoffs,
         (double)(ru1.ru_nvcsw + ru1.ru_nivcsw - ru0.ru_nvcsw - ru0.ru_nivcsw) / cs,
         cs / (t1 - t0));
}

/* ---- waitv-mismatch and waitv-pp: pfutex_waitv, private words -------- */
static int
waitv_nr(const char *workload, int dflt)
{
  int N = opt_n > 0 ? opt_n : dflt;
  if (N > PFUTEX_WAITV_MAX) {
    fprintf(stderr, "pfbench: %s: -n at most %d\n", workload, PFUTEX_WAITV_MAX);
    exit(2);
  }
  return N;
}

/* N words, 0, spaced 4 apart (16 bytes, as hash's), and their entries in
 * wv (val 0). */
static uint32_t *
waitv_words(int N, struct pfutex_waitv *wv, uint32_t **wp)
{
  size_t sz = ((size_t)N * 16 + CACHELINE - 1) / CACHELINE * CACHELINE;
  uint32_t *words = opt_region ? shared_words(sz) : aligned_alloc(CACHELINE, sz);
  uint32_t *odd = opt_two ? shared_words(sz) : words;   /* -2: a second region's */
  int i;
  if (!words)
    die("aligned_alloc");
  for (i = 0; i < N; i++) {
    wp[i] = (i & 1) ? &odd[i * 4] : &words[i * 4];
    *wp[i] = 0;
    memset(&wv[i], 0, sizeof wv[i]);
    wv[i].uaddr = (uintptr_t)wp[i];
    wv[i].flags = PFUTEX2_SIZE_U32 | (opt_region ? 0 : PFUTEX2_PRIVATE);
  }
  return words;
}

/* One thread, every word but the last holding its value: the call checks
 * all N entries and fails with EAGAIN (the kernel queues the first N - 1
 * and takes them off again). */
static void
run_waitv_mismatch(void)
{
  int N = waitv_nr("waitv-mismatch", 8), i;
  struct pfutex_waitv wv[PFUTEX_WAITV_MAX];
  unsigned long n = 0;
  double t0, t1, end;
  uint32_t *wp[PFUTEX_WAITV_MAX];
  (void)waitv_words(N, wv, wp);
  wv[N - 1].val = 1;                        /* the word holds 0 */
  t0 = now();
  end = t0 + opt_ms / 1000.0;
  do {
    for (i = 0; i < 256; i++)
      if (pfutex_waitv(wv, N, 0, NULL, 0) != -1 || errno != EAGAIN)
        die("waitv-mismatch: pfutex_waitv did not fail with EAGAIN");
    n += 256;
  } while ((t1 = now()) < end);
  printf("workload=waitv-mismatch backend=%s threads=1 n=%d value=%.0f unit=ops_per_s\n",
         backend_name, N, n / (t1 - t0));
}

/* waitv-pp: A (the waitv side) and B (the waker). */
static struct {
  uint32_t *words;
  uint32_t *wp[PFUTEX_WAITV_MAX];      /* word i (-2: the odd ones in a second region) */
  struct pfutex_waitv wv[PFUTEX_WAITV_MAX];
  int n, cpu_a, cpu_b;
  pthread_t a, b;
  unsigned long rounds, indexed, eagain, woken;
  double t;
} vp;
static uint32_t vp_ball __attribute__((aligned(CACHELINE)));   /* 1: B's turn */
static unsigned long vp_done __attribute__((aligned(CACHELINE)));  /* B's rounds, wake returned */
static int vp_want __attribute__((aligned(CACHELINE)));   /* A: about to call, or in, the waitv */
static int vp_stop __attribute__((aligned(CACHELINE)));

/* Spin, then yield, until *flag is set (or the run stops): on one CPU the
 * yield lets the other thread run into its call and sleep. */
static void
await_flag(const int *flag, const int *stop)
{
  int i;
  for (i = 0; !__atomic_load_n(flag, __ATOMIC_SEQ_CST)
              && !__atomic_load_n(stop, __ATOMIC_ACQUIRE); i++) {
    if (i < 64) {
#if defined(__x86_64__) || defined(__i386__)
      __asm__ __volatile__("pause");
#endif
    } else {
      sched_yield();
    }
  }
}

static void
vp_fail(unsigned long round, const char *what, long got)
{
  fprintf(stderr, "pfbench: waitv-pp: round %lu: %s (got %ld, B woke word %lu of %d)\n",
          round, what, got, round % vp.n, vp.n);
  exit(2);
}

static void *
vp_waker(void *arg)
{
  const int N = vp.n;
  unsigned long r = 0, woken = 0;
  int w;
  (void)arg;
  pin_self(vp.cpu_b);
  pfb_barrier_wait(&start_barrier);
  for (;;) {
    await_turn(&vp_ball, 1);
    if (__atomic_load_n(&vp_stop, __ATOMIC_ACQUIRE))
      break;
    __atomic_store_n(&vp_ball, 0, __ATOMIC_SEQ_CST);
    await_flag(&vp_want, &vp_stop);
    __atomic_store_n(&vp_want, 0, __ATOMIC_SEQ_CST);
    __atomic_add_fetch(vp.wp[r % N], 1, __ATOMIC_SEQ_CST);
    if ((w = pfutex_wake(vp.wp[r % N], ANY, 1, op_flags)) < 0)
      die("waitv-pp: pfutex_wake");
    woken += w;
    __atomic_store_n(&vp_done, ++r, __ATOMIC_RELEASE);
  }
  vp.woken = woken;
  return NULL;
}

static void *
vp_waiter(void *arg)
{
  const int N = vp.n;
  struct pfutex_waitv wv[PFUTEX_WAITV_MAX];
  unsigned long r = 0, indexed = 0, eagain = 0;
  double t0, t1;
  long ret;
  int i, j, k;
  (void)arg;
  memcpy(wv, vp.wv, N * sizeof wv[0]);
  pin_self(vp.cpu_a);
  pfb_barrier_wait(&start_barrier);
  t0 = now();
  do {
    for (i = 0; i < 256; i++, r++) {
      k = (int)(r % N);
      for (j = 0; j < N; j++)               /* the current values, before B's turn */
        wv[j].val = __atomic_load_n(vp.wp[j], __ATOMIC_SEQ_CST);
      pass_to(&vp_ball, 1);
      __atomic_store_n(&vp_want, 1, __ATOMIC_SEQ_CST);
      ret = pfutex_waitv(wv, N, 0, NULL, 0);
      if (ret >= 0) {
        if (ret != k)
          vp_fail(r, "pfutex_waitv returned another index", ret);
        indexed++;
      } else if (errno == EAGAIN) {
        if (__atomic_load_n(vp.wp[k], __ATOMIC_SEQ_CST) == (uint32_t)wv[k].val)
          vp_fail(r, "EAGAIN, but B's word holds its value", -1);
        eagain++;
      } else {
        die("waitv-pp: pfutex_waitv");
      }
      /* B's wake must have returned before the next waitv queues */
      for (j = 0; __atomic_load_n(&vp_done, __ATOMIC_ACQUIRE) != r + 1; j++) {
        if (j < 64) {
#if defined(__x86_64__) || defined(__i386__)
          __asm__ __volatile__("pause");
#endif
        } else {
          sched_yield();
        }
      }
    }
  } while ((t1 = now()) < deadline);
  vp.rounds = r;
  vp.indexed = indexed;
  vp.eagain = eagain;
  vp.t = t1 - t0;
  return NULL;
}

static void
run_waitv_pp(void)
{
  int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN), same = 0, split = 0, e;
  struct rusage ru0, ru1;     /* context switches per round trip */
  struct timespec limit;
  vp.n = waitv_nr("waitv-pp", 4);
  if (ncpu < 1)
    ncpu = 1;
  if (opt_affinity && !(same = strcmp(opt_affinity, "same") == 0)
      && !(split = strcmp(opt_affinity, "split") == 0)) {
    fprintf(stderr, "pfbench: -a same|split\n");
    exit(2);
  }
  vp.words = waitv_words(vp.n, vp.wv, vp.wp);
  vp.cpu_a = same ? 0 : split ? 0 : -1;
  vp.cpu_b = same ? 0 : split ? 1 % ncpu : -1;
  pfb_barrier_init(&start_barrier, 0, 3);
  spawn(&vp.b, vp_waker, NULL);
  spawn(&vp.a, vp_waiter, NULL);
  getrusage(RUSAGE_SELF, &ru0);
  deadline = now() + opt_ms / 1000.0;
  pfb_barrier_wait(&start_barrier);
  /* a lost wake leaves A asleep for good: fail rather than hang */
  clock_gettime(CLOCK_REALTIME, &limit);
  limit.tv_sec += opt_ms / 1000 + 10;
  if ((e = join_by(vp.a, &limit)) != 0) {
    fprintf(stderr, "pfbench: waitv-pp: the waitv side still running 10 s past its time"
            " (%s): a lost wake? B finished %lu rounds\n", strerror(e),
            __atomic_load_n(&vp_done, __ATOMIC_ACQUIRE));
    exit(2);
  }
  getrusage(RUSAGE_SELF, &ru1);
  __atomic_store_n(&vp_stop, 1, __ATOMIC_RELEASE);
  pass_to(&vp_ball, 1);
  pthread_join(vp.b, NULL);
  if (vp.woken != vp.indexed) {
    fprintf(stderr, "pfbench: waitv-pp: B's wakes found %lu waiters, pfutex_waitv returned"
            " an index %lu times (%lu EAGAIN, %lu rounds)\n", vp.woken, vp.indexed,
            vp.eagain, vp.rounds);
    exit(2);
  }
  printf("workload=waitv-pp backend=%s n=%d words=%s affinity=%s rounds=%lu woken=%lu eagain=%lu"
         " csw_per_rt=%.2f value=%.0f unit=ops_per_s\n", backend_name, vp.n, words_kind(),
         affinity_name(), vp.rounds, vp.indexed, vp.eagain,
         (double)(ru1.ru_nvcsw + ru1.ru_nivcsw - ru0.ru_nvcsw - ru0.ru_nivcsw) / vp.rounds,
         vp.rounds / vp.t);
}

static void
usage(void)
{
  fprintf(stderr, "usage: pfbench --backends\n"
                  "       pfbench hash|wake-none|wake|wake-parallel|requeue|pp|cond-perf|\n"
                  "               pi-uncontended|pi-handoff|waitv-mismatch|waitv-pp\n"
                  "               [-t T] [-n N] [-w W] [-f F] [-v wakeall|requeue|glibc]\n"
                  "               [-a same|split] [-s] [-x|-X|-2] [-p] [-d MS] [-m] [-P [-r R]]\n");
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
  while ((c = getopt(argc, argv, "t:n:w:f:v:d:r:a:smPxX2pV")) != -1) {
    switch (c) {
    case 'p': opt_procs = 1; break;
    case 'V': opt_waitv = 1; break;
    case 'w': opt_w = atoi(optarg); break;
    case 'r': opt_runs = atoi(optarg); break;
    case 'm': opt_mux = 1; break;
    case 'a': opt_affinity = optarg; break;
    case 's': opt_spin = 1; break;
    case 'x': opt_region = 1; op_flags = 0; op_wait = FUTEX_WAIT; op_wake = FUTEX_WAKE; break;
    case 'X': opt_region = 2; op_flags = 0; op_wait = FUTEX_WAIT; op_wake = FUTEX_WAKE; break;
    case '2': opt_two = 1; opt_region = 1; op_flags = 0; op_wait = FUTEX_WAIT; op_wake = FUTEX_WAKE; break;
    case 'P': opt_perf = 1; break;
    case 't': opt_threads = atoi(optarg); break;
    case 'n': opt_n = atoi(optarg); break;
    case 'f': opt_futexes = atoi(optarg); break;
    case 'v': opt_variant = optarg; break;
    case 'd': opt_ms = atoi(optarg); break;
    default: usage();
    }
  }
  if (opt_futexes < 1 || opt_ms < 1 || opt_runs < 1)
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
  } else if (opt_perf && (strcmp(wl, "wake") == 0 || strcmp(wl, "requeue") == 0
                          || strcmp(wl, "wake-parallel") == 0)) {
    run_perf(wl);
  } else if (strcmp(wl, "wake") == 0) {
    run_block(0);
  } else if (strcmp(wl, "wake-parallel") == 0) {
    run_wake_parallel();
  } else if (strcmp(wl, "requeue") == 0) {
    run_block(1);
  } else if (strcmp(wl, "pp") == 0) {
    run_pp();
  } else if (strcmp(wl, "cond-perf") == 0) {
    run_cond();
  } else if (strcmp(wl, "pi-uncontended") == 0) {
    run_pi_uncontended();
  } else if (strcmp(wl, "pi-handoff") == 0) {
    run_pi_handoff();
  } else if (strcmp(wl, "waitv-mismatch") == 0) {
    run_waitv_mismatch();
  } else if (strcmp(wl, "waitv-pp") == 0) {
    run_waitv_pp();
  } else {
    usage();
  }
  return 0;
}
