/* cancel: pthread cancellation of futex waiters.
 *
 * No pfutex call is a cancellation point (Linux's futex(2) is none), and a
 * waiter cancelled asynchronously leaves nothing behind:
 *  (a) deferred cancellation of a thread asleep in a wait - FUTEX_WAIT and
 *      pfutex_wait, untimed and timed: the thread stays asleep until woken
 *      (the wake counts it, the wait returns 0) or until its timeout
 *      (ETIMEDOUT, not earlier); its next cancellation point
 *      (pthread_testcancel) then cancels it: pthread_join gives
 *      PTHREAD_CANCELED, and nothing is left queued on the word;
 *  (b) asynchronous cancellation enabled just around the wait (the NPTL
 *      condvar pattern): pthread_cancel of the sleeping waiter cancels it
 *      (PTHREAD_CANCELED); then wake(INT_MAX) of the word returns 0 and a
 *      fresh waiter on it is woken with a count of exactly 1 - untimed and
 *      timed, private and shared;
 *  (c) a bounded stress: waiters loop wait (asynchronous cancellation
 *      around the call) / wake on a few words while the main thread wakes,
 *      cancels and re-creates them at random moments; at the end every
 *      survivor is stopped and wake(INT_MAX) of each word returns exactly
 *      the number of threads still asleep there.
 * Under the old emulation the node of a cancelled waiter stayed queued in
 * its dead stack frame: the wake after the cancellation counted it (1) and
 * wrote into freed stack. */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "pft.h"
#include <pfutex/linux.h>

/* How a waiter waits. */
enum { K_FUTEX, K_FUTEX_TIMED, K_CLEAN, K_CLEAN_TIMED, K_NKINDS };
static const char *const kind_name[K_NKINDS] = {
  "FUTEX_WAIT", "FUTEX_WAIT (timed, relative)", "pfutex_wait", "pfutex_wait (timed, absolute)"
};

static long scale = 1;

#ifdef PFT_TSAN
static const int under_tsan = 1;
#else
static const int under_tsan = 0;
#endif

/* Poll *flag until it is set, at most ms milliseconds (times the timeout
 * scale): 1 if it was set.  A bound, not a synchronisation: the flag is the
 * state waited for. */
static int
wait_flag(volatile int *flag, long ms)
{
  long long end = pft_now_ns() + (long long)ms * scale * 1000000LL;
  while (!__atomic_load_n(flag, __ATOMIC_SEQ_CST)) {
    if (pft_now_ns() > end)
      return 0;
    usleep(100);
  }
  return 1;
}

/* ---- One waiter thread ---------------------------------------------------- */
struct cw {
  pthread_t thread;
  uint32_t *uaddr;
  int kind;
  int shared;
  int async;                /* asynchronous cancellation around the wait */
  long timeout_ms;          /* timed kinds */
  volatile pid_t tid;
  volatile int started;     /* about to wait */
  volatile int returned;    /* the wait returned (ret, err, t1 valid) */
  volatile int exited;      /* the thread is over (exit_key's destructor) */
  long ret;
  int err;
  long long t0, t1;         /* monotonic ns around the wait */
};

/* "The thread is over", by whatever route it ended, is a key destructor
 * setting a flag, not a cleanup handler.  AddressSanitizer does not see
 * glibc's cancellation unwinding (a forced unwind and an internal
 * longjmp): the unwound frames' redzones stay poisoned in the shadow, and
 * the next instrumented code on that part of the stack reports a false
 * stack-buffer-overflow (a C cleanup handler's return path does, through
 * __asan_handle_no_return's own sigaltstack call; so does a later key
 * destructor's local).  exit_key is made before the library's first use,
 * so its destructor runs before the library's; under ASan it clears the
 * stale shadow below itself, as ASan does itself after longjmp and C++
 * throw. */
#if defined(__SANITIZE_ADDRESS__)
# define CANCEL_ASAN 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define CANCEL_ASAN 1
# endif
#endif
#ifdef CANCEL_ASAN
# include <sanitizer/asan_interface.h>
#endif

static pthread_key_t exit_key;

static void
on_thread_exit(void *flag)
{
#ifdef CANCEL_ASAN
  uintptr_t here = (uintptr_t)__builtin_frame_address(0);
  __asan_unpoison_memory_region((void *)(here - 128 * 1024), 128 * 1024);
#endif
  __atomic_store_n((volatile int *)flag, 1, __ATOMIC_SEQ_CST);
}

static void
cw_body(struct cw *w)
{
  struct timespec ts;
  int op = FUTEX_WAIT | (w->shared ? 0 : FUTEX_PRIVATE_FLAG);
  unsigned flags = w->shared ? PFUTEX_SHARED : PFUTEX_PRIVATE;
  int old;
  long r = -1;
  int e;

  /* Everything but the call itself is done before the asynchronous window.
   * t0 before the absolute deadline is built from the clock: the wait may
   * end 300 ms after that reading, not after a later one. */
  w->t0 = pft_now_ns();
  if (w->kind == K_FUTEX_TIMED) {
    ts.tv_sec = w->timeout_ms / 1000;
    ts.tv_nsec = (w->timeout_ms % 1000) * 1000000L;
  } else if (w->kind == K_CLEAN_TIMED) {
    clock_gettime(CLOCK_MONOTONIC, &ts);
    pft_timespec_add_ns(&ts, (long long)w->timeout_ms * 1000000LL);
  }
  w->tid = pft_gettid();
  __atomic_store_n(&w->started, 1, __ATOMIC_SEQ_CST);
  if (w->async)
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
  errno = 0;
  switch (w->kind) {
  case K_FUTEX:
    r = pfutex(w->uaddr, op, 0, NULL, NULL, 0);
    break;
  case K_FUTEX_TIMED:
    r = pfutex(w->uaddr, op, 0, &ts, NULL, 0);
    break;
  case K_CLEAN:
    r = pfutex_wait(w->uaddr, 0, PFUTEX_BITSET_MATCH_ANY, flags, NULL, PFUTEX_CLOCK_MONOTONIC);
    break;
  case K_CLEAN_TIMED:
    r = pfutex_wait(w->uaddr, 0, PFUTEX_BITSET_MATCH_ANY, flags, &ts, PFUTEX_CLOCK_MONOTONIC);
    break;
  }
  e = errno;
  if (w->async)
    pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old);
  w->t1 = pft_now_ns();
  w->ret = r;
  w->err = e;
  __atomic_store_n(&w->returned, 1, __ATOMIC_SEQ_CST);
  pthread_testcancel();
}

static void *
cw_main(void *arg)
{
  struct cw *w = arg;
  if (pthread_setspecific(exit_key, (void *)&w->exited) != 0)
    bail("pthread_setspecific");
  cw_body(w);
  return NULL;
}

/* Start the waiter and wait until it sleeps in its wait: 1 if it does, 0 if
 * the wait returned (or the thread went away) first. */
static int
cw_start(struct cw *w)
{
  w->started = w->returned = w->exited = 0;
  w->ret = 0;
  w->err = 0;
  if (pthread_create(&w->thread, NULL, cw_main, w) != 0)
    sysbail("pthread_create");
  while (!__atomic_load_n(&w->started, __ATOMIC_SEQ_CST))
    sched_yield();
  if (pft_wait_asleep(w->tid) != 0)
    return 0;
  return !__atomic_load_n(&w->returned, __ATOMIC_SEQ_CST);
}

/* Waiters live on the heap: one that never ends is left running, detached,
 * with its record (it must not write into a dead stack frame). */
static struct cw *
cw_new(void)
{
  struct cw *w = calloc(1, sizeof *w);
  if (!w)
    sysbail("calloc");
  return w;
}

/* Join the waiter if its thread function ends within a bound: 1 and *res
 * its exit value, else 0 (the thread is left running, detached). */
static int
cw_join(struct cw *w, void **res)
{
  if (!wait_flag(&w->exited, 5000)) {
    pthread_detach(w->thread);
    return 0;
  }
  pthread_join(w->thread, res);
  return 1;
}

/* Wake nr waiters of the word with the call family and key kind w waits
 * with. */
static long
cw_wake(const struct cw *w, int nr)
{
  if (w->kind == K_FUTEX || w->kind == K_FUTEX_TIMED)
    return pfutex(w->uaddr, FUTEX_WAKE | (w->shared ? 0 : FUTEX_PRIVATE_FLAG), (uint32_t)nr, NULL,
                  NULL, 0);
  return pfutex_wake(w->uaddr, PFUTEX_BITSET_MATCH_ANY, nr, w->shared ? PFUTEX_SHARED : PFUTEX_PRIVATE);
}

/* ---- (a) deferred cancellation ------------------------------------------- */
static void
deferred_case(uint32_t *word, int kind, int shared)
{
  struct cw *w = cw_new();
  const char *ks = shared ? "shared" : "private";
  int timed = kind == K_FUTEX_TIMED || kind == K_CLEAN_TIMED;
  int asleep, joined;
  void *res = NULL;

  w->uaddr = word;
  w->kind = kind;
  w->shared = shared;
  w->timeout_ms = 300;
  if (!cw_start(w))
    diag("    %s: the waiter did not go to sleep (returned %ld, errno %d)", kind_name[kind], w->ret, w->err);
  pthread_cancel(w->thread);
  asleep = pft_wait_asleep(w->tid) == 0 && !__atomic_load_n(&w->returned, __ATOMIC_SEQ_CST);
  if (!timed || pft_now_ns() - w->t0 < (w->timeout_ms - 100) * 1000000LL) {
    if (!ok(asleep, "deferred, %s %s: still asleep after pthread_cancel", kind_name[kind], ks))
      diag("    returned %ld, errno %d", w->ret, w->err);
  } else {
    skip("deferred, %s %s: too slow to look before the timeout", kind_name[kind], ks);
  }

  if (!timed) {
    is_int(1, cw_wake(w, 1), "deferred, %s %s: the wake counts the waiter", kind_name[kind], ks);
    wait_flag(&w->returned, 5000);
    if (!ok(w->returned && w->ret == 0, "deferred, %s %s: the wait returned 0", kind_name[kind], ks))
      diag("    returned %d, ret %ld, errno %d (%s)", w->returned, w->ret, w->err, strerror(w->err));
  } else {
    wait_flag(&w->returned, 5000);
    if (!ok(w->returned && w->ret == -1 && w->err == ETIMEDOUT,
            "deferred, %s %s: the wait returned -1/ETIMEDOUT", kind_name[kind], ks))
      diag("    returned %d, ret %ld, errno %d (%s)", w->returned, w->ret, w->err, strerror(w->err));
    if (!ok(w->returned && w->t1 - w->t0 >= w->timeout_ms * 1000000LL,
            "deferred, %s %s: not before its %ld ms", kind_name[kind], ks, w->timeout_ms))
      diag("    after %lld ms", (w->t1 - w->t0) / 1000000LL);
  }
  joined = cw_join(w, &res);
  if (!ok(joined && res == PTHREAD_CANCELED, "deferred, %s %s: cancelled at pthread_testcancel", kind_name[kind], ks))
    diag("    joined %d, result %p", joined, res);
  is_int(0, cw_wake(w, INT_MAX), "deferred, %s %s: nothing left queued", kind_name[kind], ks);
  if (joined)
    free(w);
}

/* ---- (b) asynchronous cancellation around the wait ------------------------ */
static void
async_case(uint32_t *word, int kind, int shared)
{
  struct cw *w = cw_new(), *f = cw_new();
  const char *ks = shared ? "shared" : "private";
  void *res = NULL;
  int joined;

  w->uaddr = word;
  w->kind = kind;
  w->shared = shared;
  w->async = 1;
  w->timeout_ms = 20000;     /* never reached */
  if (!ok(cw_start(w), "async, %s %s: the waiter sleeps", kind_name[kind], ks))
    diag("    returned %ld, errno %d", w->ret, w->err);
  pthread_cancel(w->thread);
  joined = cw_join(w, &res);
  if (!ok(joined && res == PTHREAD_CANCELED && !w->returned, "async, %s %s: pthread_join gives PTHREAD_CANCELED",
          kind_name[kind], ks))
  {
    diag("    joined %d, result %p, wait returned %d (%ld, errno %d)", joined, res, w->returned, w->ret, w->err);
    if (joined && res == NULL && !w->returned)
      diag("    (cancelled - the thread ended without its wait returning - but the exit value is NULL:"
           " glibc 2.36 leaves it so when pthread_setcancelstate(ENABLE) acts on a pending"
           " asynchronous cancellation)");
  }
  is_int(0, cw_wake(w, INT_MAX), "async, %s %s: then wake(INT_MAX) finds nobody", kind_name[kind], ks);

  /* A fresh waiter on the same word: woken, and counted exactly once. */
  *f = *w;
  f->async = 0;
  if (!ok(cw_start(f), "async, %s %s: a fresh waiter sleeps", kind_name[kind], ks))
    diag("    returned %ld, errno %d (%s)", f->ret, f->err, strerror(f->err));
  is_int(1, cw_wake(f, INT_MAX), "async, %s %s: wake(INT_MAX) counts exactly the fresh waiter", kind_name[kind], ks);
  wait_flag(&f->returned, 5000);
  if (!ok(f->returned && f->ret == 0, "async, %s %s: the fresh waiter returned 0", kind_name[kind], ks))
    diag("    returned %d, ret %ld, errno %d (%s)", f->returned, f->ret, f->err, strerror(f->err));
  if (cw_join(f, &res)) {
    free(f);
  } else {
    /* Stuck (its token went elsewhere): wake it for the next cases; it
     * keeps its record. */
    cw_wake(f, INT_MAX);
    diag("    the fresh waiter did not end");
  }
  if (joined)
    free(w);
}

/* ---- (c) stress ------------------------------------------------------------ */
#define SW_THREADS 4
#define SW_WORDS 3
static uint32_t sw_words[SW_WORDS];
static const unsigned sw_flags[SW_WORDS] = { PFUTEX_PRIVATE, PFUTEX_PRIVATE, PFUTEX_SHARED };
static volatile int sw_stop;

struct sw {
  pthread_t thread;
  uint32_t rng;
  volatile pid_t tid;
  volatile int started;
  volatile int where;       /* index of the word it waits on, -1 outside a wait */
  volatile int exited;
  volatile long waits, odd; /* waits that returned; of them, not with 0 */
  volatile int last_err;
};

static uint32_t
xorshift(uint32_t *s)
{
  uint32_t x = *s;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *s = x;
}

static void *
sw_main(void *arg)
{
  struct sw *s = arg;
  int old;
  if (pthread_setspecific(exit_key, (void *)&s->exited) != 0)
    bail("pthread_setspecific");
  s->tid = pft_gettid();
  __atomic_store_n(&s->started, 1, __ATOMIC_SEQ_CST);
  for (;;) {
    int k = (int)(xorshift(&s->rng) % SW_WORDS), r, e;
    __atomic_store_n(&s->where, k, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&sw_stop, __ATOMIC_SEQ_CST))
      break;
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
    r = pfutex_wait(&sw_words[k], 0, PFUTEX_BITSET_MATCH_ANY, sw_flags[k], NULL, PFUTEX_CLOCK_MONOTONIC);
    e = errno;
    pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old);
    __atomic_store_n(&s->where, -1, __ATOMIC_SEQ_CST);
    s->waits++;
    if (r != 0) {
      s->odd++;
      s->last_err = e;
    }
    if (__atomic_load_n(&sw_stop, __ATOMIC_SEQ_CST))
      break;
    k = (int)(xorshift(&s->rng) % SW_WORDS);
    pfutex_wake(&sw_words[k], PFUTEX_BITSET_MATCH_ANY, 1 + (int)(xorshift(&s->rng) % 2), sw_flags[k]);
  }
  return NULL;
}

static void
sw_start(struct sw *s, uint32_t seed)
{
  s->rng = seed ? seed : 1;
  s->started = s->exited = 0;
  s->where = -1;
  if (pthread_create(&s->thread, NULL, sw_main, s) != 0)
    sysbail("pthread_create");
  while (!__atomic_load_n(&s->started, __ATOMIC_SEQ_CST))
    sched_yield();
}

/* Static: a waiter that never ends keeps pointing at its slot. */
static struct sw sw_all[SW_THREADS];

static void
stress(void)
{
  uint32_t rng = (uint32_t)pft_now_ns() | 1u;
  long long end;
  long cancels = 0, cancelled_ok = 0, cancelled_null = 0, wakes = 0, waits = 0, odd = 0;
  int i, k, last_err = 0, stuck = -1, joined_ok = 1;
  int asleep_on[SW_WORDS];

  if (under_tsan) {
    /* An asynchronous cancellation that strikes inside ThreadSanitizer's
     * runtime (it does not intercept glibc's SIGCANCEL handler) unwinds
     * into its interceptors with its slot lock held and hangs there.  A
     * sleeping waiter, as in (b), is cancelled in a system call, outside
     * the runtime. */
    for (k = 0; k < 3 + SW_WORDS; k++)
      skip("stress: ThreadSanitizer cannot take asynchronous cancellation at random moments");
    return;
  }
  diag("stress seed %u", (unsigned)rng);
  memset(sw_all, 0, sizeof sw_all);
  for (i = 0; i < SW_THREADS; i++)
    sw_start(&sw_all[i], xorshift(&rng));

  end = pft_now_ns() + 1500LL * 1000000LL;
  while (pft_now_ns() < end && cancels < 3000) {
    uint32_t x = xorshift(&rng), spin = x % 4096;
    while (spin--)
      xorshift(&rng);       /* a random moment */
    if (x % 8 < 5) {
      k = (int)((x >> 8) % SW_WORDS);
      pfutex_wake(&sw_words[k], PFUTEX_BITSET_MATCH_ANY, (x >> 12) % 2 ? INT_MAX : 1, sw_flags[k]);
      wakes++;
    } else {
      void *res = NULL;
      i = (int)((x >> 8) % SW_THREADS);
      pthread_cancel(sw_all[i].thread);
      cancels++;
      /* It loops until stopped: the cancellation acts in its wait or when
       * it next enables asynchronous cancellation. */
      if (!wait_flag(&sw_all[i].exited, 5000)) {
        diag("    a cancelled waiter did not end (where %d)", __atomic_load_n(&sw_all[i].where, __ATOMIC_SEQ_CST));
        pthread_detach(sw_all[i].thread);
        stuck = i;          /* left alone from here on */
        break;
      }
      pthread_join(sw_all[i].thread, &res);
      cancelled_ok += res == PTHREAD_CANCELED;
      cancelled_null += res == NULL;
      waits += sw_all[i].waits;
      odd += sw_all[i].odd;
      if (sw_all[i].odd)
        last_err = sw_all[i].last_err;
      memset(&sw_all[i], 0, sizeof sw_all[i]);
      sw_start(&sw_all[i], xorshift(&rng));
    }
  }
  diag("stress: %ld wakes, %ld cancellations", wakes, cancels);
  if (!ok(cancels > 0 && cancelled_ok == cancels,
          "stress: every cancelled waiter ended with PTHREAD_CANCELED (%ld of %ld)", cancelled_ok, cancels)
      && cancelled_null)
    diag("    %ld ended with NULL: cancelled (they never return), but acted on by"
         " pthread_setcancelstate(ENABLE), which leaves the exit value NULL in glibc 2.36", cancelled_null);

  /* Stop: no wake is issued once sw_stop is seen; wait until every thread
   * is asleep or gone, twice (a wake issued just before a thread saw the
   * flag may end a sleep the first pass saw). */
  __atomic_store_n(&sw_stop, 1, __ATOMIC_SEQ_CST);
  for (k = 0; k < SW_WORDS; k++)
    asleep_on[k] = 0;
  {
    int pass;
    for (pass = 0; pass < 2; pass++)
      for (i = 0; i < SW_THREADS; i++)
        if (i != stuck && !__atomic_load_n(&sw_all[i].exited, __ATOMIC_SEQ_CST))
          pft_wait_asleep(sw_all[i].tid);
    for (i = 0; i < SW_THREADS; i++) {
      int w = __atomic_load_n(&sw_all[i].where, __ATOMIC_SEQ_CST);
      if (i != stuck && !__atomic_load_n(&sw_all[i].exited, __ATOMIC_SEQ_CST) && w >= 0)
        asleep_on[w]++;
    }
  }
  for (k = 0; k < SW_WORDS; k++)
    is_int(asleep_on[k], pfutex_wake(&sw_words[k], PFUTEX_BITSET_MATCH_ANY, INT_MAX, sw_flags[k]),
           "stress: wake(INT_MAX) of word %d (%s) counts the %d thread(s) asleep there", k,
           sw_flags[k] ? "private" : "shared", asleep_on[k]);
  {
    for (i = 0; i < SW_THREADS; i++) {
      void *res = (void *)1;
      if (i == stuck)
        continue;
      if (!wait_flag(&sw_all[i].exited, 5000)) {
        /* A lost wake: free it so the process can end. */
        for (k = 0; k < SW_WORDS; k++)
          pfutex_wake(&sw_words[k], PFUTEX_BITSET_MATCH_ANY, INT_MAX, sw_flags[k]);
        if (!wait_flag(&sw_all[i].exited, 5000)) {
          pthread_detach(sw_all[i].thread);
          joined_ok = 0;
          continue;
        }
        joined_ok = 0;
      }
      pthread_join(sw_all[i].thread, &res);
      if (res != NULL)
        joined_ok = 0;
      waits += sw_all[i].waits;
      odd += sw_all[i].odd;
      if (sw_all[i].odd)
        last_err = sw_all[i].last_err;
    }
  }
  ok(joined_ok, "stress: every survivor ended normally after the final wakes%s",
     stuck >= 0 ? " (but for the stuck one)" : "");
  diag("stress: %ld waits returned", waits);
  if (!is_int(0, odd, "stress: every wait that returned returned 0"))
    diag("    last errno %d (%s)", last_err, strerror(last_err));
}

int
main(void)
{
  static uint32_t dwords[8], awords[K_NKINDS * 2];
  const char *sc = getenv("PFUTEX_TEST_TIMEOUT_SCALE");
  int kind, sh;

  if (sc && atoi(sc) > 0)
    scale = atoi(sc);
  /* Before the library's first use (see on_thread_exit). */
  if (pthread_key_create(&exit_key, on_thread_exit) != 0)
    sysbail("pthread_key_create");
  plan(6 * 5 + K_NKINDS * 2 * 6 + 3 + SW_WORDS);
  pft_watchdog(30);
  diag("backend %s", pfutex_backend() ? pfutex_backend() : "(none)");

  /* (a) */
  deferred_case(&dwords[0], K_FUTEX, 0);
  deferred_case(&dwords[1], K_FUTEX, 1);
  deferred_case(&dwords[2], K_CLEAN, 0);
  deferred_case(&dwords[3], K_CLEAN, 1);
  deferred_case(&dwords[4], K_FUTEX_TIMED, 0);
  deferred_case(&dwords[5], K_CLEAN_TIMED, 1);

#ifdef _WIN32
  /* Windows (winpthreads): asynchronous cancellation redirects the thread's
   * context (SuspendThread/SetThreadContext), which takes effect only when
   * a thread asleep in the OS (WaitOnAddress, a semaphore) returns to user
   * mode: it never ends a sleeping waiter. */
  (void)kind; (void)sh; (void)awords; (void)async_case; (void)stress;
  {
    int i;
    for (i = 0; i < K_NKINDS * 2 * 6 + 3 + SW_WORDS; i++)
      skip("Windows: asynchronous cancellation cannot end a thread asleep in the OS (winpthreads)");
  }
#else
  /* (b) */
  for (kind = 0; kind < K_NKINDS; kind++)
    for (sh = 0; sh < 2; sh++)
      async_case(&awords[kind * 2 + sh], kind, sh);

  /* (c) */
  stress();
#endif
  return 0;
}
