/* sig_handler_ops: every op called from a signal handler that interrupts
 * its own thread inside another pfutex call.
 *
 * A worker thread loops over slow-path ops on two words A and B that have
 * parked helper waiters (six on A, two on B): requeue A->B and back,
 * wake(A, 1) (the helper re-parks), wake_op(A, B), cmp_requeue with a
 * matching value A->B and back, and a timed wait on A with a 20 us
 * deadline (every other iteration).  A storm thread sends it SIGUSR1s (about
 * a thousand a variant, three in four aimed at the requeue burst); the handler
 * calls wake, requeue both ways, wake_op, cmp_requeue, a mismatched wait
 * and a 0-timeout timed wait, on the SAME words, so it needs the bucket
 * locks that the interrupted call may hold.  Half the iterations use the
 * clean calls, half pfutex().  Variants: handler with and without
 * SA_RESTART, private and shared words.
 *
 * Pass: no hang (a stalled worker is reported, then the test bails; the
 * watchdog backs that up), every op's result is one Linux can give (the
 * worker's timed wait: ETIMEDOUT or EINTR, never 0: nobody else wakes A;
 * the handler's waits: EAGAIN, ETIMEDOUT), and exact accounting: the wakes
 * counted by every op (worker, handler, the final wakes) equal the helper
 * waits that returned 0, and afterwards a wake(INT_MAX) of A and of B
 * counts nobody.  Linux is the reference.
 *
 * Optional argument: a variant number (1..4), to run only that one. */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs POSIX signals (pfutex calls from signal handlers)");
  return 0;
}
#else
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pft.h"
#include <pfutex/linux.h>

#define NHELP 8                 /* helpers 0..5 wait on A, 6 and 7 on B */
#define NHELP_A 6
#define MIN_NS 250000000LL      /* each variant runs at least 0.25 s ... */
#define MAX_NS 1000000000LL     /* ... and at most 1 s */
#define MIN_INSIDE 300          /* ... until this many signals hit a call */
#define MAX_KILLS 200000
#define STALL_S 5               /* no progress this long: deadlocked */

static const uint32_t wop = PFUTEX_OP(PFUTEX_OP_SET, 0, PFUTEX_OP_CMP_EQ, 0);

struct variant {
  int restart, shared;
};
static const struct variant variants[] = { { 1, 0 }, { 0, 0 }, { 1, 1 }, { 0, 1 } };
#define NVARIANTS ((int)(sizeof variants / sizeof variants[0]))

static uint32_t words[NVARIANTS][2];
static uint32_t *A, *B;
static int shared_words;

struct helper {
  pthread_t thread;
  uint32_t *word;
  int legacy;
  pid_t tid;
  int started, done;            /* __atomic */
  long woken, bad;
  long bad_ret;
  int bad_err;
};
static struct helper helpers[NHELP];
static int stop;                /* __atomic */

/* The worker's state; the handler runs on the worker thread only. */
static pthread_t worker;
static int worker_done;         /* __atomic */
static volatile long iters;
static volatile sig_atomic_t in_call;
static int in_burst;            /* __atomic: the worker is in its requeue burst */
static long worker_wakes, worker_bad, worker_timedout, worker_eintr;
static int worker_bad_op, worker_bad_err;
static long worker_bad_ret;

/* Written only by the handler (it does not nest: SIGUSR1 is blocked in it). */
static volatile long h_hits, h_inside, h_wakes, h_bad;
static volatile int h_bad_op, h_bad_err;
static volatile long h_bad_ret;

static long
ld_long(volatile long *p)
{
  return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static int
ld(int *p)
{
  return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static int
priv_op(void)
{
  return shared_words ? 0 : FUTEX_PRIVATE_FLAG;
}

static unsigned
pflags(void)
{
  return shared_words ? PFUTEX_SHARED : PFUTEX_PRIVATE;
}

/* The ops, in both front ends.  Each returns the call's result, errno in *e. */
static long
op_requeue(int legacy, uint32_t *from, uint32_t *to, int *e)
{
  long r;
  errno = 0;
  if (legacy)
    r = pfutex(from, FUTEX_REQUEUE | priv_op(), 0, (const struct timespec *)(uintptr_t)INT_MAX, to,
               0);
  else
    r = pfutex_requeue(from, to, 0, INT_MAX, pflags());
  *e = errno;
  return r;
}

static long
op_cmp_requeue(int legacy, uint32_t *from, uint32_t *to, int *e)
{
  long r;
  errno = 0;
  if (legacy)
    r = pfutex(from, FUTEX_CMP_REQUEUE | priv_op(), 0, (const struct timespec *)(uintptr_t)INT_MAX,
               to, 0);
  else
    r = pfutex_cmp_requeue(from, 0, to, 0, INT_MAX, pflags());
  *e = errno;
  return r;
}

static long
op_wake(int legacy, uint32_t *u, int nr, int *e)
{
  long r;
  errno = 0;
  if (legacy)
    r = pfutex(u, FUTEX_WAKE | priv_op(), (uint32_t)nr, NULL, NULL, 0);
  else
    r = pfutex_wake(u, PFUTEX_BITSET_MATCH_ANY, nr, pflags());
  *e = errno;
  return r;
}

static long
op_wake_op(int legacy, uint32_t *u, uint32_t *u2, int nr, int nr2, int *e)
{
  long r;
  errno = 0;
  if (legacy)
    r = pfutex(u, FUTEX_WAKE_OP | priv_op(), (uint32_t)nr, (const struct timespec *)(uintptr_t)nr2,
               u2, wop);
  else
    r = pfutex_wake_op(u, u2, nr, nr2, wop, pflags());
  *e = errno;
  return r;
}

/* A wait on A for val with a timeout of ns nanoseconds (relative for
 * pfutex(), a MONOTONIC deadline for pfutex_wait; ns 0: already passed). */
static long
op_timed_wait(int legacy, uint32_t val, long ns, int *e)
{
  struct timespec ts;
  long r;
  errno = 0;
  if (legacy) {
    ts.tv_sec = 0;
    ts.tv_nsec = ns;
    r = pfutex(A, FUTEX_WAIT | priv_op(), val, &ts, NULL, 0);
  } else {
    if (ns == 0) {
      ts.tv_sec = 0;             /* long passed */
      ts.tv_nsec = 0;
    } else {
      clock_gettime(CLOCK_MONOTONIC, &ts);
      pft_timespec_add_ns(&ts, ns);
    }
    r = pfutex_wait(A, val, PFUTEX_BITSET_MATCH_ANY, pflags(), &ts, PFUTEX_CLOCK_MONOTONIC);
  }
  *e = errno;
  return r;
}

static long
op_wait_mismatch(int legacy, int *e)
{
  long r;
  errno = 0;
  if (legacy)
    r = pfutex(A, FUTEX_WAIT | priv_op(), 12345, NULL, NULL, 0);
  else
    r = pfutex_wait(A, 12345, PFUTEX_BITSET_MATCH_ANY, pflags(), NULL, PFUTEX_CLOCK_MONOTONIC);
  *e = errno;
  return r;
}

/* ---- The handler ----------------------------------------------------------- */

static void
h_fail(int op, long r, int e)
{
  if (h_bad++ == 0) {
    h_bad_op = op;
    h_bad_ret = r;
    h_bad_err = e;
  }
}

static void
on_storm(int sig)
{
  int saved = errno, e, legacy;
  long r;
  (void)sig;
  legacy = (int)(h_hits & 1);
  h_hits++;
  if (in_call)
    h_inside++;

  r = op_wake(legacy, A, 1, &e);
  if (r < 0 || r > 1)
    h_fail(1, r, e);
  else
    h_wakes += r;
  if ((r = op_requeue(legacy, A, B, &e)) < 0)
    h_fail(2, r, e);
  if ((r = op_requeue(legacy, B, A, &e)) < 0)
    h_fail(3, r, e);
  r = op_wake_op(legacy, B, A, 1, 0, &e);
  if (r < 0 || r > 2)
    h_fail(4, r, e);
  else
    h_wakes += r;
  if ((r = op_cmp_requeue(legacy, A, B, &e)) < 0)
    h_fail(5, r, e);
  if ((r = op_cmp_requeue(legacy, B, A, &e)) < 0)
    h_fail(6, r, e);
  r = op_wait_mismatch(legacy, &e);
  if (r != -1 || e != EAGAIN)
    h_fail(7, r, e);
  r = op_timed_wait(legacy, 0, 0, &e);
  if (r != -1 || e != ETIMEDOUT)
    h_fail(8, r, e);
  errno = saved;
}

static const char *const h_op_name[] = {
  "?", "wake(A, 1)", "requeue(A->B)", "requeue(B->A)", "wake_op(B, A)", "cmp_requeue(A->B)",
  "cmp_requeue(B->A)", "mismatched wait(A)", "0-timeout wait(A)"
};

/* ---- Threads ------------------------------------------------------------------ */

static void
block_storm(void)
{
  sigset_t s;
  sigemptyset(&s);
  sigaddset(&s, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &s, NULL);
}

static void *
helper_main(void *arg)
{
  struct helper *h = arg;
  block_storm();
  h->tid = pft_gettid();
  __atomic_store_n(&h->started, 1, __ATOMIC_SEQ_CST);
  while (!ld(&stop)) {
    long r;
    int e;
    errno = 0;
    if (h->legacy)
      r = pfutex(h->word, FUTEX_WAIT | priv_op(), 0, NULL, NULL, 0);
    else
      r = pfutex_wait(h->word, 0, PFUTEX_BITSET_MATCH_ANY, pflags(), NULL, PFUTEX_CLOCK_MONOTONIC);
    e = errno;
    if (r == 0) {
      h->woken++;
    } else if (r == -1 && e == EAGAIN && ld(&stop)) {
      break;                    /* the words changed at the end */
    } else if (h->bad++ == 0) {
      h->bad_ret = r;
      h->bad_err = e;
    }
  }
  __atomic_store_n(&h->done, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

static void
w_fail(int op, long r, int e)
{
  if (worker_bad++ == 0) {
    worker_bad_op = op;
    worker_bad_ret = r;
    worker_bad_err = e;
  }
}

static const char *const w_op_name[] = {
  "?", "requeue(A->B)", "requeue(B->A)", "wake(A, 1)", "wake_op(A, B)", "cmp_requeue(A->B)",
  "cmp_requeue(B->A)", "timed wait(A, 20 us)"
};

static void *
worker_main(void *arg)
{
  struct timespec t0, now;
  long long el = 0;
  (void)arg;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (;;) {
    int legacy = (int)(iters & 1), e, k;
    long r;

    /* Requeues hold two bucket locks for a walk of every queued helper:
     * most of the worker's time in user space is spent holding a lock. */
    __atomic_store_n(&in_burst, 1, __ATOMIC_RELAXED);
    for (k = 0; k < 16; k++) {
      in_call = 1;
      r = op_requeue(legacy, A, B, &e);
      in_call = 0;
      if (r < 0)
        w_fail(1, r, e);
      in_call = 1;
      r = op_requeue(legacy, B, A, &e);
      in_call = 0;
      if (r < 0)
        w_fail(2, r, e);
    }
    __atomic_store_n(&in_burst, 0, __ATOMIC_RELAXED);
    in_call = 1;
    r = op_wake(legacy, A, 1, &e);
    in_call = 0;
    if (r < 0 || r > 1)
      w_fail(3, r, e);
    else
      worker_wakes += r;
    in_call = 1;
    r = op_wake_op(legacy, A, B, 1, 1, &e);
    in_call = 0;
    if (r < 0 || r > 2)
      w_fail(4, r, e);
    else
      worker_wakes += r;
    in_call = 1;
    r = op_cmp_requeue(legacy, A, B, &e);
    in_call = 0;
    if (r < 0)
      w_fail(5, r, e);
    in_call = 1;
    r = op_cmp_requeue(legacy, B, A, &e);
    in_call = 0;
    if (r < 0)
      w_fail(6, r, e);
    if ((iters & 3) == 0 || (iters & 3) == 1) {
      in_call = 1;
      r = op_timed_wait(legacy, 0, 20000, &e);
      in_call = 0;
      if (r == -1 && e == ETIMEDOUT)
        worker_timedout++;
      else if (r == -1 && e == EINTR)
        worker_eintr++;
      else
        w_fail(7, r, e);      /* 0: a wake nobody sent counted it */
    }

    __atomic_store_n(&iters, iters + 1, __ATOMIC_SEQ_CST);
    clock_gettime(CLOCK_MONOTONIC, &now);
    el = pft_elapsed_ns(&t0, &now);
    if (el >= MAX_NS || (el >= MIN_NS && h_inside >= MIN_INSIDE))
      break;
  }
  __atomic_store_n(&worker_done, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

static void *
storm_main(void *arg)
{
  long k;
  unsigned x = 12345;
  (void)arg;
  for (k = 0; k < MAX_KILLS && !ld(&worker_done); k++) {
    struct timespec nap, sent, handled;
    long before = ld_long(&h_hits);
    /* Three signals in four aim at the requeue burst (user-space code that
     * holds bucket locks), waiting for it a bounded while. */
    if (k & 3) {
      int spins;
      for (spins = 0; spins < 20000 && !__atomic_load_n(&in_burst, __ATOMIC_RELAXED); spins++)
        ;
    }
    clock_gettime(CLOCK_MONOTONIC, &sent);
    if (pthread_kill(worker, SIGUSR1) != 0)
      break;
    while (ld_long(&h_hits) == before && !ld(&worker_done))
      sched_yield();
    clock_gettime(CLOCK_MONOTONIC, &handled);
    /* Pacing, not synchronisation: a short nap lets the worker get back
     * into its calls, and the storm's wakeup interrupts it at a random
     * point of its user-space code (its own CPU's or, sharing the worker's
     * CPU, a preemption the signal is delivered at), bucket-lock holding
     * code included: a signal reaches code that makes no system call only
     * as such an interrupt, never at a system call's exit. */
    x = x * 1103515245u + 12345u;
    nap.tv_sec = 0;
    nap.tv_nsec = (long)((x >> 16) % 30000);
    /* ... and at least as long as the signal took to be handled: where
     * the handler's ops are slow (under qemu-user a shared op reads the
     * emulated /proc/self/maps, milliseconds), back-to-back signals would
     * leave the worker no time between handlers and it would never finish
     * an iteration (a livelock of the test, not of the library). */
    {
      long long took = pft_elapsed_ns(&sent, &handled);
      if (took > nap.tv_nsec)
        nap.tv_nsec = took > 999999999LL ? 999999999L : (long)took;
    }
    nanosleep(&nap, NULL);
  }
  return NULL;
}

static void
run_variant(int v)
{
  const struct variant *c = &variants[v];
  char tag[120];
  pthread_t storm;
  long last_iters = -1, last_hits = -1, helper_woken = 0, helper_bad = 0, final_wakes = 0;
  int i, stalled_ms = 0, e, scale = 1;
  const char *sc = getenv("PFUTEX_TEST_TIMEOUT_SCALE");

  if (sc && atoi(sc) > 0)
    scale = atoi(sc);
  snprintf(tag, sizeof tag, "variant %d (%s words, handler %s)", v + 1,
           c->shared ? "shared" : "private", c->restart ? "with SA_RESTART" : "without SA_RESTART");
  diag("%s", tag);
  A = &words[v][0];
  B = &words[v][1];
  *A = *B = 0;
  shared_words = c->shared;
  __atomic_store_n(&stop, 0, __ATOMIC_SEQ_CST);
  __atomic_store_n(&worker_done, 0, __ATOMIC_SEQ_CST);
  iters = 0;
  in_call = 0;
  worker_wakes = worker_bad = worker_timedout = worker_eintr = 0;
  h_hits = h_inside = h_wakes = h_bad = 0;
  pft_install(SIGUSR1, on_storm, c->restart ? SA_RESTART : 0);

  memset(helpers, 0, sizeof helpers);
  for (i = 0; i < NHELP; i++) {
    struct helper *h = &helpers[i];
    h->word = i < NHELP_A ? A : B;
    h->legacy = i & 1;
    if (pthread_create(&h->thread, NULL, helper_main, h) != 0)
      sysbail("pthread_create");
    while (!ld(&h->started))
      sched_yield();
    pft_wait_asleep(h->tid);
  }

  if (pthread_create(&worker, NULL, worker_main, NULL) != 0)
    sysbail("pthread_create");
  if (pthread_create(&storm, NULL, storm_main, NULL) != 0)
    sysbail("pthread_create");

  /* Watch for a stall: a handler spinning on a lock its own thread holds
   * makes no progress at all. */
  while (!ld(&worker_done)) {
    long it = ld_long(&iters), hh = ld_long(&h_hits);
    if (it != last_iters || hh != last_hits) {
      last_iters = it;
      last_hits = hh;
      stalled_ms = 0;
    } else if ((stalled_ms += 10) >= STALL_S * 1000 * scale) {
      ok(0, "%s: the worker makes progress (stalled %d s after %ld iterations, %ld signals: a "
            "handler waits for a lock its own thread holds?)",
         tag, STALL_S * scale, it, hh);
      bail("%s: worker deadlocked", tag);
    }
    usleep(10000);
  }
  pthread_join(worker, NULL);
  pthread_join(storm, NULL);
  ok(1, "%s: no deadlock (%ld iterations, %ld signals, %ld inside a call)", tag, iters, h_hits,
     h_inside);
  ok(h_inside > 0, "%s: signals interrupted the worker inside pfutex calls (%ld)", tag, h_inside);

  /* The end: change the words, then wake everyone still queued. */
  __atomic_store_n(&stop, 1, __ATOMIC_SEQ_CST);
  __atomic_store_n(A, 1u, __ATOMIC_SEQ_CST);
  __atomic_store_n(B, 1u, __ATOMIC_SEQ_CST);
  final_wakes += op_wake(0, A, INT_MAX, &e);
  final_wakes += op_wake(0, B, INT_MAX, &e);
  for (i = 0; i < NHELP; i++) {
    int k;
    for (k = 0; k < 3000 && !ld(&helpers[i].done); k++)
      usleep(1000);
    if (!ld(&helpers[i].done)) {
      long r;
      ok(0, "%s: helper %d returned after the final wakes (still asleep)", tag, i);
      for (k = 0; k < 3000 && !ld(&helpers[i].done); k++) {
        r = op_wake(0, A, INT_MAX, &e) + op_wake(0, B, INT_MAX, &e);
        if (r)
          diag("    rescue wakes counted %ld", r);
        usleep(1000);
      }
      if (!ld(&helpers[i].done))
        bail("%s: helper %d stays asleep", tag, i);
    }
    pthread_join(helpers[i].thread, NULL);
    helper_woken += helpers[i].woken;
    helper_bad += helpers[i].bad;
    if (helpers[i].bad)
      diag("    helper %d: %ld bad returns, first %ld (%s)", i, helpers[i].bad, helpers[i].bad_ret,
           strerror(helpers[i].bad_err));
  }
  diag("    wakes counted: worker %ld, handler %ld, final %ld; helper waits returning 0: %ld; "
       "worker timed waits: %ld ETIMEDOUT, %ld EINTR",
       worker_wakes, (long)h_wakes, final_wakes, helper_woken, worker_timedout, worker_eintr);
  if (!is_int(0, worker_bad, "%s: every worker op returned a result Linux gives", tag))
    diag("    first: %s returned %ld (%s)", w_op_name[worker_bad_op], worker_bad_ret,
         strerror(worker_bad_err));
  if (!is_int(0, h_bad, "%s: every handler op returned a result Linux gives", tag))
    diag("    first: %s returned %ld (%s)", h_op_name[h_bad_op], (long)h_bad_ret,
         strerror(h_bad_err));
  is_int(0, helper_bad, "%s: every helper wait returned 0 (woken) or, at the end, EAGAIN", tag);
  is_int(worker_wakes + h_wakes + final_wakes, helper_woken,
         "%s: helper waits woken == wakes counted by the ops", tag);
  is_int(0, op_wake(0, A, INT_MAX, &e), "%s: afterwards wake(A, INT_MAX) counts nobody", tag);
  is_int(0, op_wake(0, B, INT_MAX, &e), "%s: afterwards wake(B, INT_MAX) counts nobody", tag);
  signal(SIGUSR1, SIG_DFL);
}

int
main(int argc, char **argv)
{
  int only = argc > 1 ? atoi(argv[1]) : 0, v;

  PFT_SKIP_UNDER_TSAN();
  plan_lazy();
  pft_watchdog(120);   /* four variants; under qemu-user a shared op reads /proc/self/maps */
  for (v = 0; v < NVARIANTS; v++)
    if (!only || only == v + 1)
      run_variant(v);
  return 0;
}
#endif /* !_WIN32 */
