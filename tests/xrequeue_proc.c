/* xrequeue_proc: a requeue between words the emulation keeps in different
 * shared tables moves waiters of other processes, as Linux's does
 * (src/requeue.c, wait.c (M): the destination published in the node the
 * waiter leaves).  The words: two anonymous regions' (R1, R2) and a
 * MAP_SHARED | MAP_ANONYMOUS mapping's (S: the user's shared table), all
 * inherited by the waiters, fork children of the test.  For each ordered
 * pair of kinds:
 *   1. three children wait; FUTEX_REQUEUE 1 + INT_MAX returns 3; the two
 *      moved still sleep 50 ms later; the source has nobody left, the
 *      target two; every child returns 0;
 *   2. two timed children moved (CMP_REQUEUE 0 + 2), then timing out:
 *      both ETIMEDOUT, neither word has a waiter left (a node left queued
 *      would be counted by these wakes);
 *   3. one child moved there and straight back (the second move most often
 *      before the child took the first node: a node it had not adopted,
 *      moved again): it still sleeps 50 ms later; the source's wake finds
 *      it, the target's nobody;
 *   4. a WAIT_BITSET child (bit 2) moved: bit 1 on the target wakes
 *      nobody, bit 2 wakes it.
 * Then, once per pair of its rotations:
 *   5. a child moved through all three kinds (two moves, the second
 *      before it adopted the first, most often): the last word's wake
 *      finds it;
 *   6. a child and a thread of the test on one word, both moved by one
 *      requeue (one named in its record, one published): both found.
 * All of it again with the children in futex_waitv (no bitset: 4 left
 * out): the moved word entry 1, entry 0 a word nobody wakes (the
 * mapping's for 1-4, the child's private memory for 5 and 6), so that a
 * member moves to a table where its waitv has a parker (the mapping's),
 * or none yet (src/waitv.c (M)); every child must return 1.
 * And the limit: a region the children never opened (R3, opened after
 * they were forked).  Linux moves a child's waiter there (the kernel keys
 * the word by its object); the emulation answers EINVAL with nothing done
 * (the child has no entry in that region's table to queue in).
 * Every child's wait must end without a destination out of reach (wait.c
 * (M): a spurious wakeup, allowed only when a requeuer dies; the engine
 * counts them).  The native backend is the reference and runs the same
 * checks. */
#ifdef _WIN32
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork() and MAP_SHARED mappings' shared ops (README)");
  return 0;
}
#else
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <pfutex/linux.h>
#include "pft.h"
#include "region_util.h"
#ifdef PF_HAVE_EMU
# include "emu.h"
/* A moved wait of a child that found its new node out of reach ended as a
 * spurious wakeup (wait.c (M)): never here, where nobody dies. */
# define UNREACHABLE() ((long)AO_load(&pf_xmove_unreachable_total))
#else
# define UNREACHABLE() 0L
#endif

#define NR2(n) ((const struct timespec *)(uintptr_t)(n))
#define WOKE (kid_vx ? 1L : 0L)         /* a woken child's return: its entry in a waitv */
#define NKIDS 4

enum { K_R1, K_R2, K_S, K_N };
static const char *const kname[K_N] = { "region 1", "region 2", "MAP_SHARED" };
static uint32_t *base[K_N];

struct kid {
  uint32_t *uaddr;
  uint32_t bitset;
  int vx;                         /* in futex_waitv: 1 (entry 0 the mapping's quiet
                                     word) or 2 (entry 0 a word of its private memory) */
  pid_t pid;
  volatile int started, done;
  long ret, unreach;
  int err;
};
static struct kid *K;             /* shared with the children */
static int native;
static int kid_vx;                /* the children wait in futex_waitv (struct kid's vx) */
static uint32_t *quiet;           /* the mapping's word nobody wakes */
static uint32_t kid_private;      /* a word of each child's private memory */

/* Child k's futex_waitv: entry 0 a word nobody wakes, entry 1 *u (both
 * 0), shared; with timeout_ms, that long (absolute, monotonic). */
static long
kid_waitv(const struct kid *k, uint32_t *u, long timeout_ms)
{
  struct pfutex_waitv v[2];
  struct timespec dl;
  memset(v, 0, sizeof v);
  v[0].uaddr = (uintptr_t)(k->vx == 1 ? quiet : &kid_private);
  v[1].uaddr = (uintptr_t)u;
  v[0].flags = v[1].flags = PFUTEX2_SIZE_U32;
  if (timeout_ms > 0) {
    clock_gettime(CLOCK_MONOTONIC, &dl);
    dl.tv_sec += timeout_ms / 1000;
    dl.tv_nsec += (timeout_ms % 1000) * 1000000L;
    if (dl.tv_nsec >= 1000000000L) {
      dl.tv_sec++;
      dl.tv_nsec -= 1000000000L;
    }
  }
  return pfutex_waitv(v, 2, 0, timeout_ms > 0 ? &dl : NULL, PFUTEX_CLOCK_MONOTONIC);
}

static uint32_t *
word(int k, int i)
{
  return base[k] + 16 * i;
}

/* Fork child i waiting on *u (value 0), shared: untimed WAIT_BITSET of
 * `bitset` (0: every bit), or with timeout_ms FUTEX_WAIT with that
 * relative timeout; return once it sleeps. */
static void
kid_start_timed(int i, uint32_t *u, uint32_t bitset, long timeout_ms)
{
  struct kid *k = &K[i];
  pid_t pid;
  memset(k, 0, sizeof *k);
  k->uaddr = u;
  k->bitset = bitset ? bitset : PFUTEX_BITSET_MATCH_ANY;
  k->vx = kid_vx;
  k->ret = -2;
  fflush(stdout);
  if ((pid = fork()) < 0)
    sysbail("fork");
  if (pid == 0) {
    struct timespec ts;
    ru_child_alarm(30);
    ts.tv_sec = timeout_ms / 1000;
    ts.tv_nsec = (timeout_ms % 1000) * 1000000L;
    __atomic_store_n(&k->started, 1, __ATOMIC_SEQ_CST);
    errno = 0;
    k->unreach = UNREACHABLE();
    if (k->vx)
      k->ret = kid_waitv(k, u, timeout_ms);
    else if (timeout_ms > 0)
      k->ret = pfutex(u, FUTEX_WAIT, 0, &ts, NULL, 0);
    else
      k->ret = pfutex(u, FUTEX_WAIT_BITSET, 0, NULL, NULL, k->bitset);
    k->err = errno;
    k->unreach = UNREACHABLE() - k->unreach;
    __atomic_store_n(&k->done, 1, __ATOMIC_SEQ_CST);
    _exit(0);
  }
  k->pid = pid;
  if (ru_wait_asleep(pid, pid, &k->started, &k->done) != 0)
    diag("child %d did not go to sleep (ret %ld, errno %s)", i, k->ret, pft_errname(k->err));
}

static void
kid_start(int i, uint32_t *u, uint32_t bitset)
{
  kid_start_timed(i, u, bitset, 0);
}

static int
kids_done(int n)
{
  int i, c = 0;
  for (i = 0; i < n; i++)
    c += __atomic_load_n(&K[i].done, __ATOMIC_SEQ_CST) != 0;
  return c;
}

/* Reap children [0, n): how many returned `ret` (and errno err when ret is
 * -1).  If some still sleep after a while (a failed check), wake every
 * word first. */
static int
kids_finish(int n, long ret, int err)
{
  int i, good = 0, k;
  long tries;
  for (tries = 0; tries < 50000 && kids_done(n) < n; tries++)
    usleep(100);
  if (kids_done(n) < n) {
    diag("    %d of %d waiters not woken: waking them", n - kids_done(n), n);
    for (k = 0; k < K_N; k++)
      for (i = 0; i < 64; i++)
        pfutex(word(k, i), FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  }
  for (i = 0; i < n; i++) {
    int st = ru_reap(K[i].pid);
    if (st == 0 && K[i].ret == ret && (ret != -1 || K[i].err == err) && K[i].unreach == 0)
      good++;
    else
      diag("    child %d: status %d, ret %ld, errno %s, spurious ends of a move %ld", i, st,
           K[i].ret, pft_errname(K[i].err), K[i].unreach);
  }
  return good;
}

/* 14 checks per pair. */
static void
pair(int ks, int kd, int slot)
{
  uint32_t *a = word(ks, slot), *b = word(kd, slot + 1);
  char what[96];
  long r;
  int e;

  snprintf(what, sizeof what, "%s -> %s, other processes' waiters", kname[ks], kname[kd]);
  *a = 0;
  *b = 0;

  /* 1 */
  kid_start(0, a, 0);
  kid_start(1, a, 0);
  kid_start(2, a, 0);
  pft_await_queued(a, 3);
  errno = 0;
  r = pfutex(a, FUTEX_REQUEUE, 1, NR2(INT_MAX), b, 0);
  e = errno;
  pft_is_ret(r, e, 3, 0, what);
  usleep(50 * 1000);
  ok(kids_done(3) <= 1, "%s: the two moved still sleep (%d of 3 returned)", what, kids_done(3));
  is_int(0, pfutex(a, FUTEX_WAKE, INT_MAX, NULL, NULL, 0), "%s: nobody left on the source", what);
  is_int(2, pfutex(b, FUTEX_WAKE, INT_MAX, NULL, NULL, 0), "%s: two moved to the target", what);
  is_int(3, kids_finish(3, WOKE, 0), "%s: all three returned %ld", what, WOKE);

  /* 2 */
  kid_start_timed(0, a, 0, 800);
  kid_start_timed(1, a, 0, 800);
  pft_await_queued(a, 2);
  errno = 0;
  r = pfutex_cmp_requeue(a, 0, b, 0, 2, 0);
  e = errno;
  pft_is_ret(r, e, 2, 0, what);
  is_int(2, kids_finish(2, -1, ETIMEDOUT), "%s: both moved timed waiters timed out", what);
  r = pfutex(a, FUTEX_WAKE, INT_MAX, NULL, NULL, 0) + pfutex(b, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  is_int(0, r, "%s: and left no node on either word", what);

  /* 3 */
  kid_start(0, a, 0);
  pft_await_queued(a, 1);
  r = pfutex(a, FUTEX_REQUEUE, 0, NR2(1), b, 0);
  r = r * 10 + pfutex(b, FUTEX_REQUEUE, 0, NR2(1), a, 0);
  is_int(11, r, "%s: moved there and back (1, 1)", what);
  usleep(50 * 1000);
  is_int(0, kids_done(1), "%s: and it still sleeps", what);
  r = pfutex(b, FUTEX_WAKE, INT_MAX, NULL, NULL, 0) * 10;
  r += pfutex(a, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  is_int(1, r, "%s: the source's wake finds it, the target's nobody", what);
  is_int(1, kids_finish(1, WOKE, 0), "%s: it returned %ld", what, WOKE);

  if (kid_vx)
    return;                       /* (4: a waitv has no bitset) */
  /* 4 */
  kid_start(0, a, 2);
  pft_await_queued(a, 1);
  r = pfutex_requeue(a, b, 0, 1, 0);
  r = r * 10 + pfutex_wake(b, 1, INT_MAX, 0);
  r = r * 10 + pfutex_wake(b, 2, INT_MAX, 0);
  is_int(101, r, "%s: bitset kept (moved 1, bit 1 wakes 0, bit 2 wakes 1)", what);
  is_int(1, kids_finish(1, 0, 0), "%s: the bitset waiter returned 0", what);
}

struct tw {
  uint32_t *u;
  volatile int started, done;
  pid_t tid;
  long ret;
  int err;
};

static void *
tw_main(void *arg)
{
  struct tw *t = arg;
  t->tid = pft_gettid();
  __atomic_store_n(&t->started, 1, __ATOMIC_SEQ_CST);
  errno = 0;
  t->ret = pfutex(t->u, FUTEX_WAIT, 0, NULL, NULL, 0);
  t->err = errno;
  __atomic_store_n(&t->done, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

/* 5 and 6: 4 checks per rotation. */
static void
chain(int k0, int k1, int k2, int slot)
{
  uint32_t *a = word(k0, slot), *b = word(k1, slot + 1), *c = word(k2, slot + 2);
  struct tw t;
  pthread_t th;
  char what[128];
  long r;

  snprintf(what, sizeof what, "%s -> %s -> %s", kname[k0], kname[k1], kname[k2]);
  *a = *b = *c = 0;
  kid_start(0, a, 0);
  pft_await_queued(a, 1);
  r = pfutex(a, FUTEX_REQUEUE, 0, NR2(1), b, 0);
  r = r * 10 + pfutex(b, FUTEX_REQUEUE, 0, NR2(1), c, 0);
  r = r * 10 + pfutex(a, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  r = r * 10 + pfutex(b, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  r = r * 10 + pfutex(c, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  is_int(11001, r, "%s: a child moved twice; only the last word's wake finds it", what);
  is_int(1, kids_finish(1, WOKE, 0), "%s: it returned %ld", what, WOKE);

  memset(&t, 0, sizeof t);
  t.u = a;
  if (pthread_create(&th, NULL, tw_main, &t) != 0)
    sysbail("pthread_create");
  (void)ru_wait_flag(&t.started, 1);
  if (ru_wait_asleep(getpid(), t.tid, &t.started, &t.done) != 0)
    diag("the thread did not go to sleep");
  kid_start(0, a, 0);
  pft_await_queued(a, 2);
  r = pfutex_cmp_requeue(a, 0, b, 0, 2, 0);
  r = r * 10 + pfutex(b, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  pthread_join(th, NULL);
  r = r * 10 + (t.ret == 0);
  is_int(221, r, "%s: a thread of ours and a child, moved by one requeue: both found", what);
  is_int(1, kids_finish(1, WOKE, 0), "%s: the child returned %ld", what, WOKE);
}

int
main(void)
{
  pfutex_region_t *r1, *r2, *r3;
  uint32_t *x;
  int ks, kd, slot = 0;
  long r;
  int e;

  plan(2 * (4 * K_N + 4) + (14 + 12) * K_N * (K_N - 1));
  pft_watchdog(480);
  diag("backend %s", pfutex_backend() ? pfutex_backend() : "(none)");
  native = ru_backend_is_linux();
  K = ru_shared_alloc(NKIDS * sizeof *K);
  if (!(r1 = pfutex_region_anon(1 << 16)) || !(r2 = pfutex_region_anon(1 << 16)))
    sysbail("pfutex_region_anon");
  base[K_R1] = pfutex_region_addr(r1);
  base[K_R2] = pfutex_region_addr(r2);
  base[K_S] = ru_shared_alloc(1 << 16);
  quiet = word(K_S, 1000);
  *quiet = 0;
  for (kid_vx = 0; kid_vx <= 1; kid_vx++) {
    if (kid_vx && !pft_have_waitv()) {
      int i;
      for (i = 0; i < 12 * K_N * (K_N - 1) + 4 * K_N + 4; i++)
        skip("futex_waitv answers ENOSYS here (%s)", pfutex_backend());
      break;
    }
    if (kid_vx)
      diag("the same with the children in futex_waitv");
    slot = 0;
    for (ks = 0; ks < K_N; ks++)
      for (kd = 0; kd < K_N; kd++)
        if (ks != kd) {
          pair(ks, kd, slot);
          slot += 2;
        }
    if (kid_vx)
      kid_vx = 2;                   /* entry 0 in the child's private memory */
    for (ks = 0; ks < K_N; ks++) {
      chain(ks, (ks + 1) % K_N, (ks + 2) % K_N, slot);
      slot += 3;
    }

    /* the limit: a region opened after the children were forked */
    x = word(K_R1, slot);
    *x = 0;
    kid_start(0, x, 0);
    kid_start(1, x, 0);
    pft_await_queued(x, 2);
    if (!(r3 = pfutex_region_anon(1 << 16)))
      sysbail("pfutex_region_anon");
    errno = 0;
    r = pfutex(x, FUTEX_REQUEUE, 0, NR2(1), pfutex_region_addr(r3), 0);
    e = errno;
    if (native) {
      pft_is_ret(r, e, 1, 0, "a requeue to a region the waiters never opened (linux: moves one)");
      is_int(1, pfutex(x, FUTEX_WAKE, INT_MAX, NULL, NULL, 0), "one left on the source");
      is_int(1, pfutex(pfutex_region_addr(r3), FUTEX_WAKE, INT_MAX, NULL, NULL, 0),
             "one on the region they never opened");
    } else {
      pft_is_ret(r, e, -1, EINVAL, "a requeue to a region the waiters never opened (emulation: EINVAL)");
      is_int(0, pfutex(pfutex_region_addr(r3), FUTEX_WAKE, INT_MAX, NULL, NULL, 0),
             "nothing moved there");
      is_int(2, pfutex(x, FUTEX_WAKE, INT_MAX, NULL, NULL, 0), "both still on the source");
    }
    is_int(2, kids_finish(2, WOKE, 0), "both returned %ld", WOKE);
    pfutex_region_close(r3);
  }
  kid_vx = 0;
  pfutex_region_close(r1);
  pfutex_region_close(r2);
  return 0;
}
#endif /* !_WIN32 */
