/* region_keys: Linux's futex key rules hold on region memory, on every
 * backend (linux is the reference).
 *   1. A PRIVATE waiter (FUTEX_PRIVATE_FLAG, PFUTEX_PRIVATE) on a region
 *      word in process A is woken neither by a private nor by a shared wake
 *      from process B, nor by a shared wake from A itself; a private wake in
 *      A wakes it.
 *   2. A shared waiter is not woken by a private wake of the same word (from
 *      its own process or another); a shared wake from another process
 *      wakes it.
 *   3. Two words of one region (adjacent, or a page apart) are different
 *      futexes.
 *   4. The same offset in two regions: different futexes.  A requeue from
 *      one region to the other moves waiters of another process (that has
 *      both open), on every backend (tests/xrequeue: more pairs).
 *   5. A requeue from a region word to a word of the caller's private
 *      memory with nr_requeue > 0, the waiters another process's: Linux
 *      moves them (keyed by the caller's memory); the emulation fails with
 *      EINVAL, nothing done (the other process cannot queue in this
 *      process's memory); with nr_requeue 0 it is a plain wake on every
 *      backend.
 *   6. WAKE_OP across two regions, and from a region word to a word
 *      outside (a thread of the waker's process waits there): both woken,
 *      on every backend.
 * Waiters are fork children (or their threads) of the test; the regions
 * are anonymous, inherited at the same address. */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork() and MAP_SHARED file mappings (Linux's key rules for region memory)");
  return 0;
}
#else
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pfutex/linux.h>
#include "pft.h"
#include "region_util.h"

#define NR2(n) ((const struct timespec *)(uintptr_t)(n))
#define RSIZE 16384u
#define NKIDS 4

/* A child that waits on one word. */
struct kid {
  uint32_t *uaddr;
  int priv;                    /* a private wait */
  int clean;                   /* pfutex_wait, else FUTEX_WAIT */
  pid_t pid;
  volatile int started, done;
  long ret;
  int err;
};

/* Scenario 1 and 2: a child with a waiter thread, stepping with the parent. */
struct step {
  volatile int a_ready;        /* A: its thread sleeps */
  volatile int b_done;         /* parent: its wakes are done */
  long a_wake_shared, a_wake_private, t_ret;
  int t_err;
  int t_done_before;           /* the thread had returned before A's own wake */
};

struct ctl {
  struct kid k[NKIDS];
  struct step s;
};

static struct ctl *C;
static pfutex_region_t *R1, *R2;
static char *B1, *B2;
static uint32_t outside;        /* no region's: this process's memory */
static int native;

static uint32_t *
w1(unsigned off)
{
  return (uint32_t *)(void *)(B1 + off);
}

static uint32_t *
w2(unsigned off)
{
  return (uint32_t *)(void *)(B2 + off);
}

static void is_ret(long got, int got_errno, long want, int want_errno, const char *fmt, ...)
  TAP_PRINTF(5, 6);
static void
is_ret(long got, int got_errno, long want, int want_errno, const char *fmt, ...)
{
  char buf[256];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  pft_is_ret(got, got_errno, want, want_errno, buf);
}

/* ---- Waiter children --------------------------------------------------- */

static long
do_wait(uint32_t *u, int priv, int clean)
{
  if (clean)
    return pfutex_wait(u, 0, PFUTEX_BITSET_MATCH_ANY, priv ? PFUTEX_PRIVATE : 0, NULL, 0);
  return pfutex(u, FUTEX_WAIT | (priv ? FUTEX_PRIVATE_FLAG : 0), 0, NULL, NULL, 0);
}

static long
do_wake(uint32_t *u, int nr, int priv, int clean)
{
  if (clean)
    return pfutex_wake(u, PFUTEX_BITSET_MATCH_ANY, nr, priv ? PFUTEX_PRIVATE : 0);
  return pfutex(u, FUTEX_WAKE | (priv ? FUTEX_PRIVATE_FLAG : 0), (uint32_t)nr, NULL, NULL, 0);
}

/* Fork child i waiting on *u (shared, multiplexer unless told); return once
 * it sleeps. */
static struct kid *
kid_start(int i, uint32_t *u, int priv, int clean)
{
  struct kid *k = &C->k[i];
  pid_t pid;
  memset(k, 0, sizeof *k);
  k->uaddr = u;
  k->priv = priv;
  k->clean = clean;
  k->ret = -2;
  fflush(stdout);
  if ((pid = fork()) < 0)
    sysbail("fork");
  if (pid == 0) {
    ru_child_alarm(30);
    __atomic_store_n(&k->started, 1, __ATOMIC_SEQ_CST);
    errno = 0;
    k->ret = do_wait(u, priv, clean);
    k->err = errno;
    __atomic_store_n(&k->done, 1, __ATOMIC_SEQ_CST);
    _exit(0);
  }
  k->pid = pid;
  if (ru_wait_asleep(pid, pid, &k->started, &k->done) != 0)
    diag("child %d did not go to sleep (ret %ld, errno %s)", i, k->ret, pft_errname(k->err));
  return k;
}

static int
kids_done(int n)
{
  int i, c = 0;
  for (i = 0; i < n; i++)
    c += __atomic_load_n(&C->k[i].done, __ATOMIC_SEQ_CST) != 0;
  return c;
}

/* Reap children [0, n): 1 when each returned 0.  If some still sleep after
 * a while (a failed check), wake every word they may be on first. */
static int
kids_finish(int n)
{
  int i, good = 1;
  long tries;
  for (tries = 0; tries < 50000 && kids_done(n) < n; tries++)
    usleep(100);
  if (kids_done(n) < n) {
    diag("    %d of %d waiters not woken: waking them", n - kids_done(n), n);
    for (i = 0; i < n; i++) {
      pfutex(C->k[i].uaddr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
      pfutex(C->k[i].uaddr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    }
    pfutex(&outside, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  }
  for (i = 0; i < n; i++) {
    int st = ru_reap(C->k[i].pid);
    if (st != 0 || C->k[i].ret != 0) {
      diag("    child %d: status %d, ret %ld, errno %s", i, st, C->k[i].ret,
           pft_errname(C->k[i].err));
      good = 0;
    }
  }
  return good;
}

/* ---- 1: a private waiter ------------------------------------------------ */

struct tw {
  uint32_t *u;
  int priv, clean;
  volatile pid_t tid;
  volatile int done;
  long ret;
  int err;
};

static void *
tw_main(void *arg)
{
  struct tw *t = arg;
  __atomic_store_n(&t->tid, pft_gettid(), __ATOMIC_SEQ_CST);
  errno = 0;
  t->ret = do_wait(t->u, t->priv, t->clean);
  t->err = errno;
  __atomic_store_n(&t->done, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

static void
tw_start(struct tw *t, pthread_t *th)
{
  if (pthread_create(th, NULL, tw_main, t) != 0)
    sysbail("pthread_create");
  while (!__atomic_load_n(&t->tid, __ATOMIC_SEQ_CST))
    sched_yield();
  if (ru_wait_asleep(getpid(), t->tid, NULL, &t->done) != 0)
    diag("waiter thread did not go to sleep (ret %ld, errno %s)", t->ret, pft_errname(t->err));
}

/* Child A: a thread waits privately on u; after the parent's wakes, A
 * wakes u shared, then privately. */
static void
private_child(uint32_t *u, int clean)
{
  struct step *s = &C->s;
  struct tw t;
  pthread_t th;
  ru_child_alarm(30);
  memset(&t, 0, sizeof t);
  t.u = u;
  t.priv = 1;
  t.clean = clean;
  tw_start(&t, &th);
  __atomic_store_n(&s->a_ready, 1, __ATOMIC_SEQ_CST);
  if (ru_wait_flag(&s->b_done, 1) != 0)
    _exit(3);
  s->a_wake_shared = do_wake(u, INT_MAX, 0, clean);
  /* the thread, if (wrongly) woken, needs a moment to say so */
  if (s->a_wake_shared > 0)
    ru_wait_flag(&t.done, 1);
  s->t_done_before = __atomic_load_n(&t.done, __ATOMIC_SEQ_CST);
  s->a_wake_private = do_wake(u, INT_MAX, 1, clean);
  if (s->a_wake_private < 1 && !t.done)
    do_wake(u, INT_MAX, 1, clean);       /* do not hang on a failed check */
  pthread_join(th, NULL);
  s->t_ret = t.ret;
  s->t_err = t.err;
  _exit(0);
}

/* 6 tests. */
static void
case_private_waiter(int clean)
{
  const char *api = clean ? "PFUTEX_PRIVATE" : "FUTEX_PRIVATE_FLAG";
  struct step *s = &C->s;
  uint32_t *u = w1(clean ? 64 : 0);
  long rp, rs;
  pid_t pid;
  int st;

  memset(s, 0, sizeof *s);
  s->a_wake_shared = s->a_wake_private = s->t_ret = -2;
  fflush(stdout);
  if ((pid = fork()) < 0)
    sysbail("fork");
  if (pid == 0)
    private_child(u, clean);
  if (ru_wait_flag(&s->a_ready, 1) != 0)
    diag("child A never got its waiter asleep");
  rp = do_wake(u, INT_MAX, 1, clean);
  rs = do_wake(u, INT_MAX, 0, clean);
  __atomic_store_n(&s->b_done, 1, __ATOMIC_SEQ_CST);
  st = ru_reap(pid);
  if (st != 0)
    diag("child A ended with %d", st);
  is_int(0, rp, "%s waiter in A: a private wake from B wakes nobody", api);
  is_int(0, rs, "%s waiter in A: a shared wake from B wakes nobody", api);
  is_int(0, s->a_wake_shared, "%s waiter in A: a shared wake from A itself wakes nobody", api);
  ok(st == 0 && !s->t_done_before, "%s waiter in A: it still slept after those three wakes", api);
  is_int(1, s->a_wake_private, "%s waiter in A: a private wake in A wakes it", api);
  is_ret(s->t_ret, s->t_err, 0, 0, "%s waiter in A: its wait returned", api);
}

/* ---- 2: a shared waiter, private wakes ----------------------------------- */

/* 7 tests. */
static void
case_shared_waiter(void)
{
  struct tw t;
  pthread_t th;
  uint32_t *u = w1(128);
  pid_t pid;
  long r;
  int st;

  /* the waiter in a child; private wakes from the parent, from a sibling
   * process and (below) from the waiter's own process */
  kid_start(0, u, 0, 0);
  is_int(0, pfutex(u, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0),
         "shared FUTEX_WAIT in A: FUTEX_WAKE_PRIVATE from B wakes nobody");
  is_int(0, pfutex_wake(u, PFUTEX_BITSET_MATCH_ANY, INT_MAX, PFUTEX_PRIVATE),
         "shared FUTEX_WAIT in A: pfutex_wake PFUTEX_PRIVATE from B wakes nobody");
  is_int(1, pfutex(u, FUTEX_WAKE, INT_MAX, NULL, NULL, 0),
         "shared FUTEX_WAIT in A: a shared wake from B wakes it");
  ok(kids_finish(1), "and it returned 0");

  /* the waiter a thread of the parent: a private wake from its own process
   * does not wake it, a shared wake from a child does */
  memset(&t, 0, sizeof t);
  t.u = u;
  t.clean = 1;
  tw_start(&t, &th);
  is_int(0, pfutex_wake(u, PFUTEX_BITSET_MATCH_ANY, INT_MAX, PFUTEX_PRIVATE),
         "shared pfutex_wait: pfutex_wake PFUTEX_PRIVATE from its own process wakes nobody");
  fflush(stdout);
  if ((pid = fork()) < 0)
    sysbail("fork");
  if (pid == 0)
    _exit(pfutex_wake(u, PFUTEX_BITSET_MATCH_ANY, INT_MAX, 0) == 1 ? 0 : 1);
  st = ru_reap(pid);
  if (st != 0 && !t.done)
    pfutex_wake(u, PFUTEX_BITSET_MATCH_ANY, INT_MAX, 0);
  pthread_join(th, NULL);
  r = t.ret;
  is_int(0, st, "shared pfutex_wait: a shared pfutex_wake from a child reports 1");
  is_ret(r, t.err, 0, 0, "shared pfutex_wait: woken by it");
}

/* ---- 3: two words of one region ------------------------------------------ */

/* 5 tests. */
static void
case_two_words(void)
{
  uint32_t *u = w1(4096 + 256);
  kid_start(0, u, 0, 0);
  is_int(0, pfutex(u + 1, FUTEX_WAKE, INT_MAX, NULL, NULL, 0),
         "a wake of the next word (offset +4) wakes nobody");
  is_int(0, pfutex_wake(u - 1, PFUTEX_BITSET_MATCH_ANY, INT_MAX, 0),
         "a pfutex_wake of the previous word (offset -4) wakes nobody");
  is_int(0, pfutex(u - 1024, FUTEX_WAKE, INT_MAX, NULL, NULL, 0),
         "a wake of the word a page before wakes nobody");
  is_int(1, pfutex(u, FUTEX_WAKE, INT_MAX, NULL, NULL, 0), "a wake of the word itself wakes it");
  ok(kids_finish(1), "and it returned 0");
}

/* ---- 4: two regions --------------------------------------------------------- */

/* 12 tests. */
static void
case_two_regions(void)
{
  long r;
  int e;

  kid_start(0, w1(512), 0, 0);
  is_int(0, pfutex(w2(512), FUTEX_WAKE, INT_MAX, NULL, NULL, 0),
         "same offset in another region: a wake there wakes nobody");
  is_int(1, pfutex(w1(512), FUTEX_WAKE, INT_MAX, NULL, NULL, 0), "a wake in the waiter's region wakes it");
  ok(kids_finish(1), "and it returned 0");
  kid_start(0, w2(512), 0, 1);
  is_int(0, pfutex_wake(w1(512), PFUTEX_BITSET_MATCH_ANY, INT_MAX, 0),
         "and the other way round (pfutex_wait in the second region): nobody");
  is_int(1, pfutex_wake(w2(512), PFUTEX_BITSET_MATCH_ANY, INT_MAX, 0), "its own region's word wakes it");
  ok(kids_finish(1), "and it returned 0");

  /* requeue from one region to the other, moving one */
  kid_start(0, w1(576), 0, 0);
  kid_start(1, w1(576), 0, 0);
  errno = 0;
  r = pfutex(w1(576), FUTEX_REQUEUE, 1, NR2(1), w2(576), 0);
  e = errno;
  is_ret(r, e, 2, 0, "FUTEX_REQUEUE 1+1 from one region to another: one woken, one moved");
  is_int(0, pfutex(w1(576), FUTEX_WAKE, INT_MAX, NULL, NULL, 0), "none left on the first region's word");
  is_int(1, pfutex(w2(576), FUTEX_WAKE, INT_MAX, NULL, NULL, 0), "one moved to the second region's");
  ok(kids_finish(2), "both waiters returned 0");

  /* nr_requeue 0: a plain wake on every backend */
  kid_start(0, w1(576), 0, 0);
  is_int(1, pfutex_requeue(w1(576), w2(576), 1, 0, 0),
         "pfutex_requeue 1+0 from one region to another: a plain wake of 1");
  ok(kids_finish(1), "it returned 0");
}

/* ---- 5: requeue out of the region ------------------------------------------- */

/* 11 tests. */
static void
case_requeue_out(void)
{
  uint32_t *u = w1(640);
  long r;
  int e;

  outside = 0;
  kid_start(0, u, 0, 0);
  kid_start(1, u, 0, 0);
  errno = 0;
  r = pfutex(u, FUTEX_REQUEUE, 1, NR2(1), &outside, 0);
  e = errno;
  if (native) {
    is_ret(r, e, 2, 0, "FUTEX_REQUEUE 1+1 from a region word to a word outside (linux: moves)");
    is_int(0, pfutex(u, FUTEX_WAKE, INT_MAX, NULL, NULL, 0), "none left on the region word");
    is_int(1, pfutex(&outside, FUTEX_WAKE, INT_MAX, NULL, NULL, 0), "one moved to the outside word");
  } else {
    is_ret(r, e, -1, EINVAL, "FUTEX_REQUEUE 1+1 from a region word to a word outside (emulation)");
    is_int(0, pfutex(&outside, FUTEX_WAKE, INT_MAX, NULL, NULL, 0), "nothing moved to the outside word");
    is_int(2, pfutex(u, FUTEX_WAKE, INT_MAX, NULL, NULL, 0), "nothing woken: both still on the region word");
  }
  ok(kids_finish(2), "both waiters returned 0");

  kid_start(0, u, 0, 1);
  errno = 0;
  r = pfutex_cmp_requeue(u, 0, &outside, 0, 1, 0);
  e = errno;
  if (native) {
    is_ret(r, e, 1, 0, "pfutex_cmp_requeue 0+1 to a word outside (linux: moves)");
    is_int(1, pfutex_wake(&outside, PFUTEX_BITSET_MATCH_ANY, INT_MAX, 0), "the outside word has it");
  } else {
    is_ret(r, e, -1, EINVAL, "pfutex_cmp_requeue 0+1 to a word outside (emulation)");
    is_int(1, pfutex_wake(u, PFUTEX_BITSET_MATCH_ANY, INT_MAX, 0), "the region word still has it");
  }
  ok(kids_finish(1), "it returned 0");

  /* nr_requeue 0: a plain wake everywhere */
  kid_start(0, u, 0, 0);
  kid_start(1, u, 0, 0);
  is_int(1, pfutex(u, FUTEX_REQUEUE, 1, NR2(0), &outside, 0),
         "FUTEX_REQUEUE 1+0 to a word outside: a plain wake of 1");
  is_int(1, pfutex_requeue(u, &outside, 1, 0, 0), "pfutex_requeue 1+0 to a word outside: 1");
  ok(kids_finish(2), "both returned 0");
  is_int(0, pfutex(&outside, FUTEX_WAKE, INT_MAX, NULL, NULL, 0) + pfutex(u, FUTEX_WAKE, INT_MAX, NULL, NULL, 0),
         "nobody left on either word");
}

/* ---- 6: wake_op across tables ---------------------------------------------- */

/* 6 tests. */
static void
case_wake_op_tables(void)
{
  struct tw t;
  pthread_t th;
  long r;
  int e;

  if (pft_skip_wake_op(6))
    return;

  *w2(704) = 0;
  kid_start(0, w1(704), 0, 0);
  kid_start(1, w2(704), 0, 0);
  errno = 0;
  r = pfutex(w1(704), FUTEX_WAKE_OP, 1, NR2(1), w2(704),
             FUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_EQ, 0));
  e = errno;
  is_ret(r, e, 2, 0, "FUTEX_WAKE_OP from one region's word to another's wakes both waiters");
  is_int(1, (long)*w2(704), "and applied ADD 1 to the second region's word");
  ok(kids_finish(2), "both returned 0");

  outside = 0;
  kid_start(0, w1(768), 0, 0);
  memset(&t, 0, sizeof t);
  t.u = &outside;                         /* shared wait, this process's memory */
  tw_start(&t, &th);
  errno = 0;
  r = pfutex_wake_op(w1(768), &outside, 1, 1, PFUTEX_OP(PFUTEX_OP_SET, 9, PFUTEX_OP_CMP_EQ, 0), 0);
  e = errno;
  is_ret(r, e, 2, 0, "pfutex_wake_op from a region word to a word outside wakes both");
  is_int(9, (long)outside, "and set the outside word to 9");
  if (!t.done && r < 2)
    pfutex(&outside, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  pthread_join(th, NULL);
  ok(kids_finish(1) && t.ret == 0, "both returned 0");
}

int
main(void)
{
  PFT_SKIP_UNDER_TSAN();   /* fork from a threaded process */
  plan(6 + 6 + 7 + 5 + 12 + 11 + 6);
  pft_watchdog(60);
  C = ru_shared_alloc(sizeof *C);
  native = ru_backend_is_linux();
  diag("backend %s", pfutex_backend() ? pfutex_backend() : "(none)");
  if (!(R1 = pfutex_region_anon(RSIZE)) || !(R2 = pfutex_region_anon(RSIZE)))
    sysbail("pfutex_region_anon");
  B1 = pfutex_region_addr(R1);
  B2 = pfutex_region_addr(R2);

  case_private_waiter(0);
  case_private_waiter(1);
  case_shared_waiter();
  case_two_words();
  case_two_regions();
  case_requeue_out();
  case_wake_op_tables();

  pfutex_region_close(R1);
  pfutex_region_close(R2);
  return 0;
}
#endif /* !_WIN32 */
