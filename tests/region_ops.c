/* region_ops: every futex op on the words of a shared region, with the
 * waiters in one process and the waker in another (fork children), on
 * three kinds of region:
 *   anon    pfutex_region_anon: the children use the handle they inherit
 *           (same address in every process);
 *   named   pfutex_region_open: each child closes the handle it inherited,
 *           blocks that address and opens the region by name again, so it
 *           maps it at a DIFFERENT address from the parent's;
 *   attach  a shm_open object the test maps itself (MAP_SHARED) and makes
 *           shareable with pfutex_region_attach: each child unmaps what it
 *           inherited, maps the object again elsewhere and attaches.
 * Per kind: WAIT/WAKE (multiplexer, no private flag) and pfutex_wait/
 * pfutex_wake in both directions; EAGAIN on a mismatch; WAIT_BITSET/
 * WAKE_BITSET and masked pfutex_wake (a wake whose mask does not match
 * leaves the waiter asleep); REQUEUE and pfutex_requeue (woken + moved
 * exact, moved waiters then woken by the second word only); CMP_REQUEUE and
 * pfutex_cmp_requeue (a mismatch is EAGAIN with nothing moved); WAKE_OP and
 * pfutex_wake_op (the op lands in *uaddr2, the second word's waiters woken
 * per the comparison); relative and absolute (MONOTONIC, REALTIME) timeouts
 * expire with ETIMEDOUT and leave nothing queued; wake counts over four
 * waiter processes; waits across the emulation's 1 s park slices (1.3 s
 * timeouts, and an untimed waiter woken after them).  Finally pfutex_region_attach_unlink. */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork() (each op between parent and child on an anonymous region); the cross-process ops run under Windows in tests/region_exec (CreateProcess of tests/region_peer)");
  return 0;
}
#else
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <pfutex/linux.h>
#include "pft.h"
#include "region_util.h"

#define NR2(n) ((const struct timespec *)(uintptr_t)(n))
#define RSIZE 8192u
#define W(k) ((uint32_t)(k) * 64u)          /* word k: its own cache line */
#define NJOBS 8
#define TMO_NS (300LL * 1000 * 1000)

enum { K_ANON, K_NAMED, K_ATTACH };
static const char *const kind_names[] = { "anon", "named", "attach" };

enum { J_WAIT, J_WAIT_BITSET, J_PWAIT, J_WAKE, J_PWAKE };

struct job {
  /* in */
  int kind;
  uint32_t off;
  uint32_t val, mask;
  int opflags;                 /* or-ed into the op (FUTEX_CLOCK_REALTIME) */
  int clockid;                 /* J_PWAIT with a deadline */
  int tmo;                     /* 0 none, 1 relative, 2 absolute */
  long long tmo_ns;
  int nr;                      /* wakes */
  /* out */
  pid_t pid;
  volatile int started, done;
  long ret;
  int err;
  long long elapsed_ns;
  uint64_t base;               /* the child's address of the user area */
};

struct ctl {
  pid_t parent;
  volatile int pstarted;       /* the parent is about to wait */
  struct job j[NJOBS];
};

static struct ctl *C;

/* The region of the current suite, as the parent has it. */
static struct {
  int kind;
  char name[64];
  pfutex_region_t *rg;
  char *base;
  int fd;                      /* attach: the object */
} R;

static uint32_t *
pw(uint32_t off)
{
  return (uint32_t *)(void *)(R.base + off);
}

/* ---- The child side ------------------------------------------------------ */

/* Where the child reaches the region: for named and attach, a mapping of
 * its own at another address than the parent's. */
static char *
child_base(void)
{
  long page = sysconf(_SC_PAGESIZE);
  void *blk, *m;
  pfutex_region_t *rg;
  if (R.kind == K_ANON)
    return R.base;
  if (pfutex_region_close(R.rg) != 0)
    _exit(20);
  if (R.kind == K_ATTACH && munmap(R.base, RSIZE) != 0)
    _exit(21);
  /* keep the parent's address busy, so ours differs */
  blk = mmap(R.base, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (blk == MAP_FAILED)
    _exit(22);
  if (R.kind == K_NAMED) {
    if (!(rg = pfutex_region_open(R.name, 0, O_RDWR, 0)))
      _exit(23);
    return pfutex_region_addr(rg);
  }
  m = mmap(NULL, RSIZE, PROT_READ | PROT_WRITE, MAP_SHARED, R.fd, 0);
  if (m == MAP_FAILED)
    _exit(24);
  if (!pfutex_region_attach(R.fd, m, RSIZE))
    _exit(25);
  return m;
}

static void
deadline(struct timespec *ts, clockid_t clk, long long ns)
{
  clock_gettime(clk, ts);
  pft_timespec_add_ns(ts, ns);
}

static void
child_main(struct job *j)
{
  struct timespec ts, *tp = NULL;
  char *base;
  uint32_t *w;
  long long t0;

  ru_child_alarm(30);
  base = child_base();
  j->base = (uint64_t)(uintptr_t)base;
  w = (uint32_t *)(void *)(base + j->off);
  t0 = pft_now_ns();
  if (j->tmo == 1) {
    ts.tv_sec = (time_t)(j->tmo_ns / 1000000000LL);
    ts.tv_nsec = (long)(j->tmo_ns % 1000000000LL);
    tp = &ts;
  } else if (j->tmo == 2) {
    if (j->kind == J_PWAIT)
      deadline(&ts, j->clockid == PFUTEX_CLOCK_REALTIME ? CLOCK_REALTIME : CLOCK_MONOTONIC,
               j->tmo_ns);
    else
      deadline(&ts, (j->opflags & FUTEX_CLOCK_REALTIME) ? CLOCK_REALTIME : CLOCK_MONOTONIC,
               j->tmo_ns);
    tp = &ts;
  }
  if (j->kind == J_WAKE || j->kind == J_PWAKE) {
    /* wake the parent once its main thread sleeps */
    if (ru_wait_asleep(C->parent, C->parent, &C->pstarted, NULL) != 0)
      _exit(26);
  }
  __atomic_store_n(&j->started, 1, __ATOMIC_SEQ_CST);
  errno = 0;
  switch (j->kind) {
  case J_WAIT:
    j->ret = pfutex(w, FUTEX_WAIT | j->opflags, j->val, tp, NULL, 0);
    break;
  case J_WAIT_BITSET:
    j->ret = pfutex(w, FUTEX_WAIT_BITSET | j->opflags, j->val, tp, NULL, j->mask);
    break;
  case J_PWAIT:
    j->ret = pfutex_wait(w, j->val, j->mask, 0, tp, j->clockid);
    break;
  case J_WAKE:
    j->ret = pfutex(w, FUTEX_WAKE, (uint32_t)j->nr, NULL, NULL, 0);
    break;
  default:
    j->ret = pfutex_wake(w, j->mask, j->nr, 0);
    break;
  }
  j->err = errno;
  j->elapsed_ns = pft_now_ns() - t0;
  __atomic_store_n(&j->done, 1, __ATOMIC_SEQ_CST);
  _exit(0);
}

/* ---- The parent side ----------------------------------------------------- */

static struct job *
job_start(int i, const struct job *spec)
{
  struct job *j = &C->j[i];
  pid_t pid;
  *j = *spec;
  j->pid = 0;
  j->started = j->done = 0;
  j->ret = -2;
  j->err = 0;
  j->base = 0;
  fflush(stdout);
  pid = fork();
  if (pid < 0)
    sysbail("fork");
  if (pid == 0)
    child_main(j);
  j->pid = pid;
  return j;
}

/* Start a waiter and return once it sleeps. */
static struct job *
waiter(int i, int kind, uint32_t off, uint32_t val, uint32_t mask)
{
  struct job spec;
  struct job *j;
  memset(&spec, 0, sizeof spec);
  spec.kind = kind;
  spec.off = off;
  spec.val = val;
  spec.mask = mask;
  j = job_start(i, &spec);
  if (ru_wait_asleep(j->pid, j->pid, &j->started, &j->done) != 0)
    diag("waiter %d (pid %d) did not go to sleep (done %d, ret %ld, errno %s)", i, (int)j->pid,
         j->done, j->ret, pft_errname(j->err));
  return j;
}

/* Reap job i; 1 when the child ran to its end. */
static int
job_finish(int i)
{
  struct job *j = &C->j[i];
  int st;
  if (!j->pid)
    return 0;
  st = ru_reap(j->pid);
  j->pid = 0;
  if (st != 0) {
    diag("child %d ended with %s %d", i, st >= 256 ? "signal" : "status", st >= 256 ? st - 256 : st);
    return 0;
  }
  return j->done;
}

static int
done_count(int from, int n)
{
  int i, c = 0;
  for (i = from; i < from + n; i++)
    c += __atomic_load_n(&C->j[i].done, __ATOMIC_SEQ_CST) != 0;
  return c;
}

static void
wait_done(int from, int n, int want)
{
  long tries;
  for (tries = 0; tries < 100000 && done_count(from, n) < want; tries++)
    usleep(100);
}

/* Reap jobs [from, from+n): 1 when each returned 0.  If some are still
 * not done after a while (a failed check), wake the words first so the
 * test does not hang. */
static int
finish_all_ret0(int from, int n, const uint32_t *offs, int noffs)
{
  int i, good = 1;
  long tries;
  for (tries = 0; tries < 50000 && done_count(from, n) < n; tries++)
    usleep(100);
  if (done_count(from, n) < n) {
    diag("    %d of %d waiters not woken: waking them", n - done_count(from, n), n);
    good = 0;
    for (i = 0; i < noffs; i++)
      pfutex(pw(offs[i]), FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  }
  for (i = from; i < from + n; i++) {
    if (!job_finish(i) || C->j[i].ret != 0) {
      diag("    waiter %d: ret %ld, errno %s", i, C->j[i].ret, pft_errname(C->j[i].err));
      good = 0;
    }
  }
  return good;
}

/* pft_is_ret with a formatted message. */
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

static long
wake(uint32_t off, int nr)
{
  return pfutex(pw(off), FUTEX_WAKE, (uint32_t)nr, NULL, NULL, 0);
}

static void
zero_words(void)
{
  memset(R.base, 0, 4096);
}

/* ---- The cases ------------------------------------------------------------ */

/* 8 tests (+1 for a region mapped by each child itself). */
static void
case_wait_wake(const char *k)
{
  struct job spec, *j;
  struct timespec ten = { 10, 0 };
  uint32_t offs[1];
  long r;
  int e;

  zero_words();
  /* multiplexer: child waits, parent wakes */
  j = waiter(0, J_WAIT, W(0), 0, 0);
  is_int(1, wake(W(0), 1), "%s: FUTEX_WAKE from the parent wakes the child's FUTEX_WAIT", k);
  offs[0] = W(0);
  ok(finish_all_ret0(0, 1, offs, 1), "%s: and its FUTEX_WAIT returns 0", k);
  if (R.kind != K_ANON) {
    if (!ok(j->base != 0 && j->base != (uint64_t)(uintptr_t)R.base,
            "%s: the child maps the region at another address", k))
      diag("    parent %p, child %#llx", (void *)R.base, (unsigned long long)j->base);
  }

  /* multiplexer: parent waits, child wakes */
  memset(&spec, 0, sizeof spec);
  spec.kind = J_WAKE;
  spec.off = W(1);
  spec.nr = 1;
  C->pstarted = 0;
  j = job_start(1, &spec);
  __atomic_store_n(&C->pstarted, 1, __ATOMIC_SEQ_CST);
  errno = 0;
  r = pfutex(pw(W(1)), FUTEX_WAIT, 0, &ten, NULL, 0);
  e = errno;
  is_ret(r, e, 0, 0, "%s: FUTEX_WAIT in the parent, woken by the child", k);
  job_finish(1);
  is_int(1, j->ret, "%s: the child's FUTEX_WAKE reports 1", k);

  /* clean calls: child waits, parent wakes */
  waiter(2, J_PWAIT, W(2), 0, PFUTEX_BITSET_MATCH_ANY);
  is_int(1, pfutex_wake(pw(W(2)), PFUTEX_BITSET_MATCH_ANY, 1, 0),
         "%s: pfutex_wake from the parent wakes the child's pfutex_wait", k);
  offs[0] = W(2);
  ok(finish_all_ret0(2, 1, offs, 1), "%s: and its pfutex_wait returns 0", k);

  /* clean calls: parent waits, child wakes */
  spec.kind = J_PWAKE;
  spec.off = W(3);
  spec.nr = 1;
  spec.mask = PFUTEX_BITSET_MATCH_ANY;
  C->pstarted = 0;
  j = job_start(3, &spec);
  {
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    pft_timespec_add_ns(&dl, 10LL * 1000000000LL);
    __atomic_store_n(&C->pstarted, 1, __ATOMIC_SEQ_CST);
    errno = 0;
    r = pfutex_wait(pw(W(3)), 0, PFUTEX_BITSET_MATCH_ANY, 0, &dl, PFUTEX_CLOCK_MONOTONIC);
    e = errno;
  }
  is_ret(r, e, 0, 0, "%s: pfutex_wait in the parent, woken by the child", k);
  job_finish(3);
  is_int(1, j->ret, "%s: the child's pfutex_wake reports 1", k);
}

/* 2 tests. */
static void
case_eagain(const char *k)
{
  struct job spec;
  zero_words();
  *pw(W(4)) = 5;                      /* the child sees the parent's store */
  memset(&spec, 0, sizeof spec);
  spec.kind = J_WAIT;
  spec.off = W(4);
  spec.val = 0;
  job_start(0, &spec);
  spec.kind = J_PWAIT;
  spec.mask = PFUTEX_BITSET_MATCH_ANY;
  job_start(1, &spec);
  job_finish(0);
  job_finish(1);
  is_ret(C->j[0].ret, C->j[0].err, -1, EAGAIN, "%s: FUTEX_WAIT on a word another process changed", k);
  is_ret(C->j[1].ret, C->j[1].err, -1, EAGAIN, "%s: pfutex_wait on a word another process changed", k);
}

/* 12 tests. */
static void
case_bitset(const char *k)
{
  uint32_t offs[1];
  zero_words();
  waiter(0, J_WAIT_BITSET, W(5), 0, 0x1);
  waiter(1, J_WAIT_BITSET, W(5), 0, 0x2);
  is_int(0, pfutex(pw(W(5)), FUTEX_WAKE_BITSET, INT_MAX, NULL, NULL, 0x4),
         "%s: FUTEX_WAKE_BITSET 0x4 wakes neither waiter (0x1, 0x2)", k);
  ok(done_count(0, 2) == 0, "%s: both still asleep", k);
  is_int(1, pfutex(pw(W(5)), FUTEX_WAKE_BITSET, INT_MAX, NULL, NULL, 0x2),
         "%s: FUTEX_WAKE_BITSET 0x2 wakes one", k);
  offs[0] = W(5);
  ok(finish_all_ret0(1, 1, offs, 1), "%s: the 0x2 waiter, which returns 0", k);
  ok(done_count(0, 1) == 0, "%s: the 0x1 waiter still sleeps", k);
  is_int(1, pfutex(pw(W(5)), FUTEX_WAKE_BITSET, INT_MAX, NULL, NULL, 0x3),
         "%s: FUTEX_WAKE_BITSET 0x3 wakes the 0x1 waiter", k);
  ok(finish_all_ret0(0, 1, offs, 1), "%s: which returns 0", k);

  /* clean: a masked pfutex_wait and a plain FUTEX_WAIT (mask: all) */
  waiter(2, J_PWAIT, W(6), 0, 0x10);
  waiter(3, J_WAIT, W(6), 0, 0);
  is_int(1, pfutex_wake(pw(W(6)), 0x20, INT_MAX, 0),
         "%s: pfutex_wake mask 0x20 wakes the FUTEX_WAIT waiter only", k);
  offs[0] = W(6);
  ok(finish_all_ret0(3, 1, offs, 1), "%s: which returns 0", k);
  ok(done_count(2, 1) == 0, "%s: the pfutex_wait 0x10 waiter still sleeps", k);
  is_int(1, pfutex_wake(pw(W(6)), 0x30, INT_MAX, 0), "%s: pfutex_wake mask 0x30 wakes it", k);
  ok(finish_all_ret0(2, 1, offs, 1), "%s: and it returns 0", k);
}

/* 9 tests. */
static void
case_requeue(const char *k)
{
  uint32_t offs[2] = { W(7), W(8) };
  int i;
  zero_words();
  for (i = 0; i < 4; i++)
    waiter(i, J_WAIT, W(7), 0, 0);
  is_int(3, pfutex(pw(W(7)), FUTEX_REQUEUE, 1, NR2(2), pw(W(8)), 0),
         "%s: FUTEX_REQUEUE 1+2 of 4 waiter processes reports 3", k);
  wait_done(0, 4, 1);
  is_int(1, wake(W(7), INT_MAX), "%s: a wake of the first word wakes the one left there, not the moved", k);
  wait_done(0, 4, 2);
  is_int(2, wake(W(8), INT_MAX), "%s: a wake of the second word wakes the two moved", k);
  ok(finish_all_ret0(0, 4, offs, 2), "%s: every waiter returned 0", k);
  ok(wake(W(7), INT_MAX) == 0 && wake(W(8), INT_MAX) == 0, "%s: both words are empty", k);

  zero_words();
  for (i = 0; i < 3; i++)
    waiter(i, J_PWAIT, W(7), 0, PFUTEX_BITSET_MATCH_ANY);
  is_int(2, pfutex_requeue(pw(W(7)), pw(W(8)), 1, 1, 0), "%s: pfutex_requeue 1+1 of 3 reports 2", k);
  wait_done(0, 3, 1);
  is_int(1, pfutex_wake(pw(W(7)), PFUTEX_BITSET_MATCH_ANY, INT_MAX, 0),
         "%s: the first word has the one left", k);
  is_int(1, pfutex_wake(pw(W(8)), PFUTEX_BITSET_MATCH_ANY, INT_MAX, 0),
         "%s: the second word has the moved one", k);
  ok(finish_all_ret0(0, 3, offs, 2), "%s: every waiter returned 0", k);
}

/* 12 tests. */
static void
case_cmp_requeue(const char *k)
{
  uint32_t offs[2] = { W(9), W(10) };
  long r;
  int e;
  zero_words();
  waiter(0, J_WAIT, W(9), 0, 0);
  waiter(1, J_WAIT, W(9), 0, 0);
  errno = 0;
  r = pfutex(pw(W(9)), FUTEX_CMP_REQUEUE, 1, NR2(1), pw(W(10)), 7);
  e = errno;
  is_ret(r, e, -1, EAGAIN, "%s: FUTEX_CMP_REQUEUE with val3 7 != *uaddr 0", k);
  errno = 0;
  r = pfutex_cmp_requeue(pw(W(9)), 7, pw(W(10)), 1, 1, 0);
  e = errno;
  is_ret(r, e, -1, EAGAIN, "%s: pfutex_cmp_requeue with val 7 != *uaddr 0", k);
  is_int(0, wake(W(10), INT_MAX), "%s: nothing was moved to the second word", k);
  ok(done_count(0, 2) == 0, "%s: nothing was woken", k);
  is_int(1, pfutex(pw(W(9)), FUTEX_CMP_REQUEUE, 0, NR2(1), pw(W(10)), 0),
         "%s: FUTEX_CMP_REQUEUE 0+1 with the right val3 reports 1", k);
  is_int(1, wake(W(9), INT_MAX), "%s: one stayed on the first word", k);
  is_int(1, wake(W(10), INT_MAX), "%s: one was moved to the second", k);
  ok(finish_all_ret0(0, 2, offs, 2), "%s: both returned 0", k);

  zero_words();
  waiter(0, J_PWAIT, W(9), 0, PFUTEX_BITSET_MATCH_ANY);
  waiter(1, J_PWAIT, W(9), 0, PFUTEX_BITSET_MATCH_ANY);
  is_int(2, pfutex_cmp_requeue(pw(W(9)), 0, pw(W(10)), 1, 1, 0),
         "%s: pfutex_cmp_requeue 1+1 with the right val reports 2", k);
  is_int(0, wake(W(9), INT_MAX), "%s: none left on the first word", k);
  is_int(1, wake(W(10), INT_MAX), "%s: one on the second", k);
  ok(finish_all_ret0(0, 2, offs, 2), "%s: both returned 0", k);
}

/* 11 tests. */
static void
case_wake_op(const char *k)
{
  uint32_t offs[2] = { W(11), W(12) };
  if (pft_skip_wake_op(11))
    return;
  zero_words();
  *pw(W(12)) = 5;
  waiter(0, J_WAIT, W(11), 0, 0);
  waiter(1, J_WAIT, W(12), 5, 0);
  is_int(2, pfutex(pw(W(11)), FUTEX_WAKE_OP, 1, NR2(1), pw(W(12)),
                   FUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_EQ, 5)),
         "%s: FUTEX_WAKE_OP ADD 1, old == 5 holds: wakes the waiters of both words", k);
  is_int(6, (long)*pw(W(12)), "%s: *uaddr2 5 -> 6", k);
  ok(finish_all_ret0(0, 2, offs, 2), "%s: both returned 0", k);

  waiter(0, J_WAIT, W(11), 0, 0);
  waiter(1, J_WAIT, W(12), 6, 0);
  is_int(1, pfutex(pw(W(11)), FUTEX_WAKE_OP, 1, NR2(1), pw(W(12)),
                   FUTEX_OP(FUTEX_OP_SET, 10, FUTEX_OP_CMP_EQ, 5)),
         "%s: FUTEX_WAKE_OP SET 10, old == 5 fails: wakes the first word's waiter only", k);
  is_int(10, (long)*pw(W(12)), "%s: *uaddr2 6 -> 10", k);
  ok(finish_all_ret0(0, 1, offs, 1), "%s: the first word's waiter returned 0", k);
  ok(done_count(1, 1) == 0, "%s: the second word's waiter still sleeps", k);
  is_int(1, wake(W(12), INT_MAX), "%s: a wake of the second word finds it", k);
  ok(finish_all_ret0(1, 1, offs + 1, 1), "%s: and it returns 0", k);

  waiter(0, J_PWAIT, W(11), 0, PFUTEX_BITSET_MATCH_ANY);
  waiter(1, J_PWAIT, W(12), 10, PFUTEX_BITSET_MATCH_ANY);
  is_int(2, pfutex_wake_op(pw(W(11)), pw(W(12)), 1, 1,
                           PFUTEX_OP(PFUTEX_OP_OR, 0x100, PFUTEX_OP_CMP_GE, 10), 0),
         "%s: pfutex_wake_op OR 0x100, old >= 10 holds: wakes both", k);
  ok(*pw(W(12)) == 0x10a && finish_all_ret0(0, 2, offs, 2),
     "%s: *uaddr2 10 -> 0x10a, both returned 0", k);
}

/* 6 tests. */
static void
case_timeouts(const char *k)
{
  static const char *const what[5] = {
    "FUTEX_WAIT relative", "FUTEX_WAIT_BITSET absolute MONOTONIC",
    "FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME absolute", "pfutex_wait PFUTEX_CLOCK_MONOTONIC",
    "pfutex_wait PFUTEX_CLOCK_REALTIME"
  };
  struct job spec;
  int i, left = 0;
  zero_words();
  for (i = 0; i < 5; i++) {
    memset(&spec, 0, sizeof spec);
    spec.off = W(13 + i);
    spec.mask = PFUTEX_BITSET_MATCH_ANY;
    spec.tmo_ns = TMO_NS;
    spec.tmo = i == 0 ? 1 : 2;
    spec.kind = i == 0 ? J_WAIT : i < 3 ? J_WAIT_BITSET : J_PWAIT;
    spec.opflags = i == 2 ? FUTEX_CLOCK_REALTIME : 0;
    spec.clockid = i == 4 ? PFUTEX_CLOCK_REALTIME : PFUTEX_CLOCK_MONOTONIC;
    job_start(i, &spec);
  }
  for (i = 0; i < 5; i++) {
    struct job *j = &C->j[i];
    int fin = job_finish(i);
    /* a REALTIME deadline is measured on MONOTONIC here: 2 ms of slack */
    if (!ok(fin && j->ret == -1 && j->err == ETIMEDOUT && j->elapsed_ns >= TMO_NS - 2000000LL,
            "%s: %s wait of 300 ms in a child: -1/ETIMEDOUT, not early", k, what[i]))
      diag("    ret %ld, errno %s, after %lld ms", j->ret, pft_errname(j->err),
           j->elapsed_ns / 1000000);
  }
  for (i = 0; i < 5; i++)
    left += (int)wake(W(13 + i), INT_MAX);
  is_int(0, left, "%s: no timed-out waiter is left on the words' queues", k);
}

/* 6 tests. */
static void
case_counts(const char *k)
{
  uint32_t offs[1] = { W(18) };
  int i;
  zero_words();
  for (i = 0; i < 4; i++)
    waiter(i, J_WAIT, W(18), 0, 0);
  is_int(2, wake(W(18), 2), "%s: FUTEX_WAKE 2 of 4 waiter processes reports 2", k);
  wait_done(0, 4, 2);
  is_int(2, wake(W(18), INT_MAX), "%s: FUTEX_WAKE all then reports the other 2", k);
  ok(finish_all_ret0(0, 4, offs, 1), "%s: all four returned 0", k);

  for (i = 0; i < 4; i++)
    waiter(i, J_PWAIT, W(18), 0, PFUTEX_BITSET_MATCH_ANY);
  is_int(2, pfutex_wake(pw(W(18)), PFUTEX_BITSET_MATCH_ANY, 2, 0),
         "%s: pfutex_wake 2 of 4 reports 2", k);
  wait_done(0, 4, 2);
  is_int(2, pfutex_wake(pw(W(18)), PFUTEX_BITSET_MATCH_ANY, INT_MAX, 0),
         "%s: pfutex_wake all then reports 2", k);
  ok(finish_all_ret0(0, 4, offs, 1), "%s: all four returned 0", k);
}

/* Across the emulation's 1 s park slices: two waits with 1.3 s timeouts
 * expire on time, and an untimed waiter that slept through them is still
 * woken by one wake.  5 tests. */
static void
case_slices(const char *k)
{
  struct job spec;
  uint32_t offs[1] = { W(19) };
  int i;
  zero_words();
  waiter(0, J_WAIT, W(19), 0, 0);
  for (i = 1; i <= 2; i++) {
    memset(&spec, 0, sizeof spec);
    spec.off = W(19 + i);
    spec.kind = i == 1 ? J_WAIT : J_PWAIT;
    spec.mask = PFUTEX_BITSET_MATCH_ANY;
    spec.tmo = i;
    spec.tmo_ns = 1300LL * 1000 * 1000;
    spec.clockid = PFUTEX_CLOCK_MONOTONIC;
    job_start(i, &spec);
  }
  for (i = 1; i <= 2; i++) {
    struct job *j = &C->j[i];
    int fin = job_finish(i);
    if (!ok(fin && j->ret == -1 && j->err == ETIMEDOUT && j->elapsed_ns >= 1300LL * 1000 * 1000,
            "%s: a %s 1.3 s wait: -1/ETIMEDOUT, not early", k, i == 1 ? "FUTEX_WAIT relative" : "pfutex_wait absolute"))
      diag("    ret %ld, errno %s, after %lld ms", j->ret, pft_errname(j->err), j->elapsed_ns / 1000000);
  }
  ok(done_count(0, 1) == 0, "%s: the untimed waiter still sleeps after them", k);
  is_int(1, wake(W(19), INT_MAX), "%s: and one wake finds it", k);
  ok(finish_all_ret0(0, 1, offs, 1), "%s: it returned 0", k);
}

#define SUITE_TESTS (8 + 2 + 12 + 9 + 12 + 11 + 6 + 6 + 5)

static void
suite(void)
{
  const char *k = kind_names[R.kind];
  case_wait_wake(k);
  case_eagain(k);
  case_bitset(k);
  case_requeue(k);
  case_cmp_requeue(k);
  case_wake_op(k);
  case_timeouts(k);
  case_counts(k);
  case_slices(k);
}

static void
cleanup(void)
{
  if (R.kind == K_NAMED && R.name[0])
    pfutex_region_unlink(R.name);
  if (R.kind == K_ATTACH && R.fd > 0)
    pfutex_region_attach_unlink(R.fd);
}

int
main(void)
{
  char objname[64];
  void *m;

  PFT_SKIP_UNDER_TSAN();   /* fork from a threaded process */
  plan(3 * SUITE_TESTS + 2 + 2);
  pft_watchdog(60);
  C = ru_shared_alloc(sizeof *C);
  C->parent = getpid();
  atexit(cleanup);
  diag("backend %s", pfutex_backend() ? pfutex_backend() : "(none)");

  /* anonymous */
  R.kind = K_ANON;
  if (!(R.rg = pfutex_region_anon(RSIZE)))
    sysbail("pfutex_region_anon");
  R.base = pfutex_region_addr(R.rg);
  suite();
  if (pfutex_region_close(R.rg) != 0)
    sysbail("pfutex_region_close");

  /* named, mapped at another address by each child */
  R.kind = K_NAMED;
  ru_name(R.name, sizeof R.name, "rops");
  pfutex_region_unlink(R.name);
  if (!(R.rg = pfutex_region_open(R.name, RSIZE, O_RDWR | O_CREAT | O_EXCL, 0600)))
    sysbail("pfutex_region_open");
  R.base = pfutex_region_addr(R.rg);
  suite();
  if (pfutex_region_close(R.rg) != 0)
    sysbail("pfutex_region_close");
  pfutex_region_unlink(R.name);

  /* attach: the test's own mapping of its own shm object */
  R.kind = K_ATTACH;
  ru_name(objname, sizeof objname, "rops-obj");
  shm_unlink(objname);
  if ((R.fd = shm_open(objname, O_RDWR | O_CREAT | O_EXCL, 0600)) < 0)
    sysbail("shm_open");
  shm_unlink(objname);                /* the fd keeps it; nothing left behind */
  if (ftruncate(R.fd, RSIZE) != 0)
    sysbail("ftruncate");
  m = mmap(NULL, RSIZE, PROT_READ | PROT_WRITE, MAP_SHARED, R.fd, 0);
  if (m == MAP_FAILED)
    sysbail("mmap");
  if (!(R.rg = pfutex_region_attach(R.fd, m, RSIZE))) {
    int e = errno;
    pfutex_region_attach_unlink(R.fd);
    errno = e;
    sysbail("pfutex_region_attach");
  }
  R.base = m;
  suite();
  if (pfutex_region_close(R.rg) != 0)
    sysbail("pfutex_region_close");
  PFT_IS(pfutex_region_attach_unlink(R.fd), 0, 0, "pfutex_region_attach_unlink removes the table");
  PFT_IS(pfutex_region_attach_unlink(R.fd), -1, ENOENT, "a second pfutex_region_attach_unlink");
  munmap(m, RSIZE);
  close(R.fd);
  R.fd = -1;
  return 0;
}
#endif /* !_WIN32 */
