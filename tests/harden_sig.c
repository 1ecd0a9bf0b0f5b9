/* harden_sig: pfutex calls from signal handlers that interrupt their own
 * thread, as the kernel allows (futex(2) is async-signal-safe):
 *   1. a handler that wakes and requeues on the very words its thread is
 *      requeueing (so it needs the bucket locks its thread holds): no hang,
 *      exact counts;
 *   2. a wait inside a handler that interrupted a wait: each gets its own
 *      wakeups, the interrupted one is off its queue while the handler
 *      runs, then restarts (SA_RESTART) or fails with EINTR;
 *   3. an SA_RESTART handler that changes the word of an untimed wait: the
 *      restarted wait re-reads it and fails with EAGAIN (both front ends,
 *      private and shared);
 *   4. siglongjmp out of a wait: the next call of that thread finds nothing
 *      queued, and the thread can wait again.
 * Linux is the reference: the same file runs under every backend. */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs POSIX signals (handlers, sigsetjmp/siglongjmp, SA_RESTART)");
  return 0;
}
#else
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>
#include "pft.h"

#define WAIT 0
#define WAKE 1
#define PRIV 128

/* ---- 1: handler ops on the locks its own thread holds ------------------- */
static uint32_t qa, qb;
static volatile sig_atomic_t storm_hits;
static volatile int storm_stop;

static void
on_storm(int sig)
{
  int e = errno;
  (void)sig;
  /* The same two buckets as the worker: requeue needs both locks. */
  pfutex_requeue(&qa, &qb, 0, INT_MAX, PFUTEX_PRIVATE);
  pfutex_requeue(&qb, &qa, 0, INT_MAX, PFUTEX_PRIVATE);
  pfutex_wake(&qa, PFUTEX_BITSET_MATCH_ANY, 0, PFUTEX_PRIVATE);
  pfutex_wake_op(&qa, &qb, 0, 0, PFUTEX_OP(PFUTEX_OP_ADD, 0, PFUTEX_OP_CMP_EQ, 0), PFUTEX_PRIVATE);
  pfutex_wait(&qa, 12345, PFUTEX_BITSET_MATCH_ANY, PFUTEX_PRIVATE, NULL, 0);   /* EAGAIN */
  storm_hits++;
  errno = e;
}

static void *
storm_worker(void *arg)
{
  (void)arg;
  while (!__atomic_load_n(&storm_stop, __ATOMIC_SEQ_CST)) {
    pfutex_requeue(&qa, &qb, 0, INT_MAX, PFUTEX_PRIVATE);
    pfutex_requeue(&qb, &qa, 0, INT_MAX, PFUTEX_PRIVATE);
    pfutex_cmp_requeue(&qa, 0, &qb, 0, INT_MAX, PFUTEX_PRIVATE);
    pfutex_wake_op(&qb, &qa, 0, 0, PFUTEX_OP(PFUTEX_OP_ADD, 0, PFUTEX_OP_CMP_EQ, 0),
                   PFUTEX_PRIVATE);
  }
  return NULL;
}

static void
case_storm(void)
{
  struct pft_waiter ws[2];
  pthread_t worker;
  int i, woken, sent;

  pft_install(SIGUSR1, on_storm, SA_RESTART);
  for (i = 0; i < 2; i++) {
    memset(&ws[i], 0, sizeof ws[i]);
    ws[i].uaddr = &qa;
    ws[i].op_flags = PRIV;
    pft_waiter_start(&ws[i]);
  }
  if (pthread_create(&worker, NULL, storm_worker, NULL) != 0)
    sysbail("pthread_create");
  /* Standard signals coalesce: keep sending until 300 handlers ran (or
   * 20000 signals went out). */
  for (sent = 0; storm_hits < 300 && sent < 20000; sent++) {
    pthread_kill(worker, SIGUSR1);
    sched_yield();
  }
  __atomic_store_n(&storm_stop, 1, __ATOMIC_SEQ_CST);
  pthread_join(worker, NULL);
  ok(1, "handlers that requeue/wake/wake_op/wait on the locks their thread holds: no hang (%d ran)",
     (int)storm_hits);
  /* The two waiters are on qa or qb now; each is woken exactly once. */
  qa = qb = 1;
  woken = pfutex(&qa, WAKE | PRIV, INT_MAX, NULL, NULL, 0);
  woken += pfutex(&qb, WAKE | PRIV, INT_MAX, NULL, NULL, 0);
  is_int(2, woken, "both waiters still queued, woken exactly once");
  for (i = 0; i < 2; i++)
    is_int(0, pft_waiter_join(&ws[i]), "waiter %d returned 0", i);
  is_int(0, pfutex(&qa, WAKE | PRIV, INT_MAX, NULL, NULL, 0)
              + pfutex(&qb, WAKE | PRIV, INT_MAX, NULL, NULL, 0),
         "nothing left queued");
  signal(SIGUSR1, SIG_DFL);
}

/* ---- 2: nested waits ----------------------------------------------------- */
static uint32_t n1, n2, n3;
static volatile long inner_ret = 99, inner2_ret = 99;
static volatile int inner_stage, inner2_stage;
static int nest_flags;

static void
on_nest2(int sig)
{
  (void)sig;
  inner2_stage = 1;
  inner2_ret = pfutex(&n3, WAIT | nest_flags, 0, NULL, NULL, 0);
  inner2_stage = 2;
}

static void
on_nest(int sig)
{
  (void)sig;
  inner_stage = 1;
  inner_ret = pfutex(&n2, WAIT | nest_flags, 0, NULL, NULL, 0);
  inner_stage = 2;
}

static void
spin_until(volatile int *p, int v)
{
  while (__atomic_load_n(p, __ATOMIC_SEQ_CST) != v)
    sched_yield();
}

static void
case_nested(int flags, int restart, const char *what)
{
  struct pft_waiter w;
  memset(&w, 0, sizeof w);
  n1 = n2 = n3 = 0;
  nest_flags = flags;
  inner_stage = inner2_stage = 0;
  inner_ret = inner2_ret = 99;
  pft_install(SIGUSR1, on_nest, restart ? SA_RESTART : 0);
  pft_install(SIGUSR2, on_nest2, restart ? SA_RESTART : 0);
  w.uaddr = &n1;
  w.op_flags = flags;
  pft_waiter_start(&w);
  pthread_kill(w.thread, SIGUSR1);
  spin_until(&inner_stage, 1);
  pft_wait_asleep(w.tid);
  /* depth 3: a second handler inside the first handler's wait */
  pthread_kill(w.thread, SIGUSR2);
  spin_until(&inner2_stage, 1);
  pft_wait_asleep(w.tid);
  is_int(0, pfutex(&n1, WAKE | flags, 1, NULL, NULL, 0), "%s: outer off its queue in the handler", what);
  is_int(0, pfutex(&n2, WAKE | flags, 1, NULL, NULL, 0), "%s: middle off its queue in the handler", what);
  is_int(1, pfutex(&n3, WAKE | flags, 1, NULL, NULL, 0), "%s: innermost woken", what);
  spin_until(&inner2_stage, 2);
  is_int(0, inner2_ret, "%s: innermost wait returned 0", what);
  if (restart) {
    pft_wait_asleep(w.tid);   /* the middle wait restarted */
    is_int(1, pfutex(&n2, WAKE | flags, 1, NULL, NULL, 0), "%s: restarted middle wait woken", what);
    spin_until(&inner_stage, 2);
    is_int(0, inner_ret, "%s: middle wait returned 0", what);
    pft_wait_asleep(w.tid);
    ok(!__atomic_load_n(&w.done, __ATOMIC_SEQ_CST), "%s: outer wait restarted", what);
    is_int(1, pfutex(&n1, WAKE | flags, 1, NULL, NULL, 0), "%s: restarted outer wait woken", what);
    pft_waiter_join(&w);
    is_int(0, w.ret, "%s: outer returned 0", what);
  } else {
    spin_until(&inner_stage, 2);
    ok(inner_ret == -1, "%s: middle wait -1/EINTR after a handler without SA_RESTART", what);
    pft_waiter_join(&w);
    ok(w.ret == -1 && w.err == EINTR, "%s: outer -1/EINTR (got %ld/%d)", what, w.ret, w.err);
    skip("%s: no restart without SA_RESTART", what);
    skip("%s: no restart without SA_RESTART", what);
    skip("%s: no restart without SA_RESTART", what);
  }
  is_int(0, pfutex(&n1, WAKE | flags, INT_MAX, NULL, NULL, 0)
              + pfutex(&n2, WAKE | flags, INT_MAX, NULL, NULL, 0)
              + pfutex(&n3, WAKE | flags, INT_MAX, NULL, NULL, 0),
         "%s: nothing left queued", what);
  signal(SIGUSR1, SIG_DFL);
  signal(SIGUSR2, SIG_DFL);
}

/* ---- 3: an SA_RESTART handler changes the word --------------------------- */
static uint32_t rw;
static void on_change(int sig) { (void)sig; __atomic_store_n(&rw, 1, __ATOMIC_SEQ_CST); }

static volatile int clean_flags = -1, clean_clock;
static long clean_ret;
static int clean_err;
static volatile int clean_done;
static pid_t clean_tid;

static void *
clean_waiter(void *arg)
{
  (void)arg;
  clean_tid = pft_gettid();
  errno = 0;
  clean_ret = pfutex_wait(&rw, 0, PFUTEX_BITSET_MATCH_ANY, (unsigned)clean_flags, NULL, clean_clock);
  clean_err = errno;
  __atomic_store_n(&clean_done, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

static void
case_restart(void)
{
  static const int ops[] = { WAIT, 9, 9 | 256 };
  static const char *const names[] = { "FUTEX_WAIT", "WAIT_BITSET", "WAIT_BITSET|CLOCK_REALTIME" };
  int i, f;
  pft_install(SIGURG, on_change, SA_RESTART);
  for (f = 0; f < 2; f++) {
    for (i = 0; i < 3; i++) {
      struct pft_waiter w;
      memset(&w, 0, sizeof w);
      rw = 0;
      w.uaddr = &rw;
      w.op_flags = f ? PRIV : 0;
      w.bitset = ops[i] == WAIT ? 0 : PFUTEX_BITSET_MATCH_ANY;
      /* pft_waiter_main uses WAIT_BITSET when bitset != 0; CLOCK_REALTIME
       * with a NULL timeout is the same wait for the kernel. */
      if (ops[i] & 256)
        w.op_flags |= 256;
      pft_waiter_start(&w);
      pthread_kill(w.thread, SIGURG);
      pft_waiter_join(&w);
      ok(w.ret == -1 && w.err == EAGAIN, "%s %s: handler changed the word -> -1/EAGAIN (got %ld/%d)",
         names[i], f ? "private" : "shared", w.ret, w.err);
    }
    {
      pthread_t t;
      int c;
      for (c = 0; c < 2; c++) {
        rw = 0;
        clean_flags = f ? PFUTEX_PRIVATE : 0;
        clean_clock = c ? PFUTEX_CLOCK_REALTIME : PFUTEX_CLOCK_MONOTONIC;
        clean_done = 0;
        clean_tid = 0;
        if (pthread_create(&t, NULL, clean_waiter, NULL) != 0)
          sysbail("pthread_create");
        while (!__atomic_load_n(&clean_tid, __ATOMIC_SEQ_CST))
          sched_yield();
        pft_wait_asleep(clean_tid);
        pthread_kill(t, SIGURG);
        pthread_join(t, NULL);
        ok(clean_ret == -1 && clean_err == EAGAIN,
           "pfutex_wait %s clock %d: handler changed the word -> -1/EAGAIN (got %ld/%d)",
           f ? "private" : "shared", clean_clock, clean_ret, clean_err);
      }
    }
  }
  signal(SIGURG, SIG_DFL);
}

/* ---- 4: siglongjmp out of a wait ------------------------------------------ */
static sigjmp_buf jb;
static uint32_t lw;
static pid_t jumper_tid;
static void on_jump(int sig) { (void)sig; siglongjmp(jb, 1); }

static void
scribble(int depth)
{
  volatile unsigned char buf[2048];
  memset((void *)buf, 0xa5, sizeof buf);
  if (depth > 0)
    scribble(depth - 1);
}

static void *
jumper(void *arg)
{
  long *res = arg;
  lw = 0;
  if (sigsetjmp(jb, 1) == 0) {
    __atomic_store_n(&jumper_tid, pft_gettid(), __ATOMIC_SEQ_CST);
    pfutex(&lw, WAIT | PRIV, 0, NULL, NULL, 0);
    res[0] = -100;   /* not reached: nobody wakes lw */
    return NULL;
  }
  scribble(16);      /* reuse the stack the wait ran on */
  res[0] = pfutex(&lw, WAKE | PRIV, INT_MAX, NULL, NULL, 0);
  res[1] = pfutex(&lw, WAIT | PRIV, 1, NULL, NULL, 0);   /* mismatch: EAGAIN */
  return NULL;
}

static void
case_longjmp(void)
{
  long res[2] = { 99, 99 };
  pthread_t t;
  pft_install(SIGUSR1, on_jump, 0);
  if (pthread_create(&t, NULL, jumper, res) != 0)
    sysbail("pthread_create");
  /* Wait until the jumper sleeps in its wait, then jump it out. */
  while (!__atomic_load_n(&jumper_tid, __ATOMIC_SEQ_CST))
    sched_yield();
  pft_wait_asleep(jumper_tid);
  pthread_kill(t, SIGUSR1);
  pthread_join(t, NULL);
  is_int(0, res[0], "after siglongjmp out of a wait, the thread's own wake finds nothing queued");
  is_int(-1, res[1], "and the thread can call pfutex again (mismatched wait: -1)");
  is_int(0, pfutex(&lw, WAKE | PRIV, INT_MAX, NULL, NULL, 0), "nothing queued afterwards");
  signal(SIGUSR1, SIG_DFL);
}

int
main(void)
{
  PFT_SKIP_UNDER_TSAN();
  plan(5 + 4 * 10 + 10 + 3);
  pft_watchdog(60);
  case_storm();
  case_nested(PRIV, 1, "private, SA_RESTART");
  case_nested(0, 1, "shared, SA_RESTART");
  case_nested(PRIV, 0, "private, no SA_RESTART");
  case_nested(0, 0, "shared, no SA_RESTART");
  case_restart();
  case_longjmp();
  return 0;
}
#endif /* !_WIN32 */
