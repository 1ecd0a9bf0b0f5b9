/* harden_thr: cancellation and thread exit around a wait, as on Linux:
 *   1. deferred cancellation never acts inside a wait (futex(2) is no
 *      cancellation point): the waiter returns when woken or timed out;
 *   2. asynchronous cancellation around the wait (NPTL condvar style)
 *      cancels a sleeping waiter and leaves nothing queued;
 *   3. key destructors that run after the library's own (keys created
 *      later) still wait and wake, and a new thread never shares a parker
 *      with an exiting one (exact counts over many rounds). */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include "pft.h"

#define WAIT 0
#define WAKE 1
#define PRIV 128

static void
spin_until_tid(volatile pid_t *p)
{
  while (!__atomic_load_n(p, __ATOMIC_SEQ_CST))
    sched_yield();
}

/* ---- 1 and 2 ------------------------------------------------------------ */
struct cw {
  uint32_t *w;
  int flags;        /* PRIV or 0 */
  int async;
  int timed;
  volatile pid_t tid;
  long ret;
  int err;
};

static void *
cancel_waiter(void *arg)
{
  struct cw *c = arg;
  int old;
  struct timespec rel = { 0, 300000000 };
  c->tid = pft_gettid();
  if (c->async)
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
  c->ret = pfutex(c->w, WAIT | c->flags, 0, c->timed ? &rel : NULL, NULL, 0);
  c->err = errno;
  if (c->async)
    pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old);
  pthread_testcancel();
  return (void *)1;
}

static void
case_cancel(int async, int timed, int flags)
{
  static uint32_t word;
  struct cw c;
  pthread_t t;
  void *res = NULL;
  const char *what = async ? "async" : "deferred";
  memset(&c, 0, sizeof c);
  word = 0;
  c.w = &word;
  c.flags = flags;
  c.async = async;
  c.timed = timed;
  if (pthread_create(&t, NULL, cancel_waiter, &c) != 0)
    sysbail("pthread_create");
  spin_until_tid(&c.tid);
  pft_wait_asleep(c.tid);
  pthread_cancel(t);
  if (async) {
    pthread_join(t, &res);
    ok(res == PTHREAD_CANCELED, "%s %s %s: cancelled while asleep", what, timed ? "timed" : "untimed",
       flags ? "private" : "shared");
    is_int(0, pfutex(&word, WAKE | flags, INT_MAX, NULL, NULL, 0),
           "%s: the cancelled waiter left nothing queued", what);
  } else {
    /* still asleep: the wait is no cancellation point */
    pft_wait_asleep(c.tid);
    if (!timed)
      is_int(1, pfutex(&word, WAKE | flags, 1, NULL, NULL, 0), "%s untimed %s: still queued after pthread_cancel, woken",
             what, flags ? "private" : "shared");
    pthread_join(t, &res);
    if (timed)
      ok(c.ret == -1 && c.err == ETIMEDOUT, "%s timed %s: the wait ran to its timeout (got %ld/%d)", what,
         flags ? "private" : "shared", c.ret, c.err);
    ok(res == PTHREAD_CANCELED && (timed || c.ret == 0),
       "%s: the wait returned normally, then the thread was cancelled at testcancel", what);
  }
  /* A new waiter on the word is woken normally: exact count. */
  {
    struct pft_waiter w;
    memset(&w, 0, sizeof w);
    w.uaddr = &word;
    w.op_flags = flags;
    pft_waiter_start(&w);
    is_int(1, pfutex(&word, WAKE | flags, INT_MAX, NULL, NULL, 0), "%s: a new waiter is woken, count 1", what);
    is_int(0, pft_waiter_join(&w), "%s: the new waiter returned 0", what);
  }
}

/* A bounded storm: waiters with asynchronous cancellation around their
 * waits are cancelled at random moments; afterwards nothing stale is left. */
static uint32_t storm_words[3];

static void *
storm_waiter(void *arg)
{
  unsigned int i = (unsigned int)(uintptr_t)arg;
  int old;
  for (;;) {
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);
    pfutex(&storm_words[i % 3], WAIT | PRIV, 0, NULL, NULL, 0);
    pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old);
    pthread_testcancel();
  }
  return NULL;
}

static void
case_cancel_storm(void)
{
  pthread_t t[6];
  unsigned int seed = 12345, i, round, extra = 0;
#if defined(__SANITIZE_ADDRESS__)
  /* AddressSanitizer cannot follow an unwind that starts in a signal
   * handler (asynchronous cancellation): the unwound frames' redzones stay
   * poisoned, and the thread's later frames (its key destructors, in libc
   * and here) trip false stack-buffer reports.  The single async cases
   * above run under it; the storm does not. */
  skip("asynchronous cancellation storm: AddressSanitizer cannot follow the unwind");
  return;
#endif
  for (i = 0; i < 6; i++)
    if (pthread_create(&t[i], NULL, storm_waiter, (void *)(uintptr_t)i) != 0)
      sysbail("pthread_create");
  for (round = 0; round < 400; round++) {
    seed = seed * 1103515245u + 12345u;
    i = (seed >> 16) % 6;
    if ((seed >> 8) & 1)
      pfutex(&storm_words[i % 3], WAKE | PRIV, 1, NULL, NULL, 0);
    if ((seed >> 9) & 1)
      sched_yield();
    pthread_cancel(t[i]);
    pthread_join(t[i], NULL);
    if (pthread_create(&t[i], NULL, storm_waiter, (void *)(uintptr_t)i) != 0)
      sysbail("pthread_create");
  }
  for (i = 0; i < 6; i++) {
    pthread_cancel(t[i]);
    pthread_join(t[i], NULL);
  }
  for (i = 0; i < 3; i++)
    extra += (unsigned)pfutex(&storm_words[i], WAKE | PRIV, INT_MAX, NULL, NULL, 0);
  is_int(0, extra, "400 cancellations at random moments: nothing left queued");
}

/* ---- 3: thread exit -------------------------------------------------------- */
static pthread_key_t late_key, early_key;
static uint32_t wx, wy;
static volatile pid_t exiting_tid;
static volatile long dtor_timed = 99, dtor_woken = 99;
static volatile int dtor_rounds;

static void
late_dtor(void *v)
{
  struct timespec rel = { 0, 20000000 };
  (void)v;
  dtor_timed = pfutex(&wx, WAIT | PRIV, 0, &rel, NULL, 0) == -1 && errno == ETIMEDOUT;
  exiting_tid = pft_gettid();
  dtor_woken = pfutex(&wx, WAIT | PRIV, 0, NULL, NULL, 0);
  if (++dtor_rounds < 3)
    pthread_setspecific(late_key, (void *)1);   /* another destructor round */
}

static void *
exiting_thread(void *arg)
{
  struct timespec rel = { 0, 1000000 };
  (void)arg;
  pfutex(&wx, WAIT | PRIV, 0, &rel, NULL, 0);   /* the library's record first */
  pthread_setspecific(late_key, (void *)1);
  pthread_setspecific(early_key, (void *)1);
  return NULL;
}

static void
case_thread_exit(void)
{
  int round, bad = 0;
  if (pthread_key_create(&late_key, late_dtor) != 0)
    sysbail("pthread_key_create");
  for (round = 0; round < 20; round++) {
    pthread_t a;
    struct pft_waiter b;
    int k;
    exiting_tid = 0;
    dtor_rounds = 0;
    wx = wy = 0;
    if (pthread_create(&a, NULL, exiting_thread, NULL) != 0)
      sysbail("pthread_create");
    for (k = 0; k < 3; k++) {
      spin_until_tid(&exiting_tid);
      pft_wait_asleep(exiting_tid);
      if (k == 0) {
        /* a new thread waits meanwhile: it must not share a parker */
        memset(&b, 0, sizeof b);
        b.uaddr = &wy;
        b.op_flags = PRIV;
        pft_waiter_start(&b);
      }
      exiting_tid = 0;
      bad |= pfutex(&wx, WAKE | PRIV, 1, NULL, NULL, 0) != 1;
      bad |= dtor_timed != 1;
    }
    bad |= pfutex(&wy, WAKE | PRIV, 1, NULL, NULL, 0) != 1;
    pthread_join(a, NULL);
    bad |= pft_waiter_join(&b) != 0 || dtor_woken != 0;
    bad |= pfutex(&wx, WAKE | PRIV, INT_MAX, NULL, NULL, 0) != 0;
    if (bad) {
      diag("round %d: dtor_timed %ld dtor_woken %ld", round, dtor_timed, dtor_woken);
      break;
    }
  }
  ok(!bad, "key destructors after the library's wait and wake (3 rounds each, 20 threads), exact counts");
}

int
main(void)
{
  int async, timed, flags;
  PFT_SKIP_UNDER_TSAN();
  if (pthread_key_create(&early_key, NULL) != 0)   /* a key made before first use */
    sysbail("pthread_key_create");
  plan(2 * 2 * 2 * 4 + 1 + 1);
  pft_watchdog(60);
#ifdef _WIN32
  /* Windows (winpthreads): asynchronous cancellation takes effect only when
   * a thread asleep in the OS returns to user mode: it never ends a
   * sleeping waiter (see tests/cancel.c). */
  for (async = 0; async < 1; async++)
    for (timed = 0; timed < 2; timed++)
      for (flags = 0; flags <= PRIV; flags += PRIV)
        case_cancel(async, timed, flags);
  (void)case_cancel_storm;
  {
    int i;
    for (i = 0; i < 2 * 2 * 4 + 1; i++)
      skip("Windows: asynchronous cancellation cannot end a thread asleep in the OS (winpthreads)");
  }
#else
  for (async = 0; async < 2; async++)
    for (timed = 0; timed < 2; timed++)
      for (flags = 0; flags <= PRIV; flags += PRIV)
        case_cancel(async, timed, flags);
  case_cancel_storm();
#endif
#ifdef _WIN32
  /* winpthreads runs key destructors at DLL_THREAD_DETACH, under the loader
   * lock: no new thread starts while one waits in a destructor (see
   * tests/thread_exit.c), and this case needs one to. */
  (void)case_thread_exit;
  skip("Windows: no thread can start while another runs its key destructors (loader lock)");
#else
  case_thread_exit();
#endif
  return 0;
}
