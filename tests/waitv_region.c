/* waitv_region: futex_waitv (pfutex_waitv) on the words of a shared region,
 * woken from another process.  Under the native backend the kernel keys
 * the shared words (the reference); under emulation the waiter's parker
 * and members are region slots (src/waitv.c).  Each scenario requires
 * Linux's answer of both:
 *   1  a child waits on three words; the parent wakes the middle one: the
 *      wake counts 1, the child returns index 1, and nothing stays queued
 *   2  a wake of the last word, then of the first, before the child ends:
 *      the child returns one of them; the wakes count 1 each
 *   3  a CMP_REQUEUE of the child's member from word 0 onto a fourth word,
 *      then a wake of the fourth: the child returns 0
 *   4  WAKE_OP: the second word's waiter woken through the op's second
 *      wake: index 1
 *   5  a word that differs: EAGAIN at once; an absolute timeout:
 *      ETIMEDOUT, also with a private word beside the region's
 *   8  a region's word and a private word in one call: woken through the
 *      region's word from another process (index 0), or through the
 *      private word by a thread of the waiter's process (index 1)
 *   6  a child killed in its waitv: a wake of its words counts 0
 *   7  eight children in waitv on overlapping word sets, woken word by
 *      word: every child returns, and the wakes' counts sum to the
 *      members woken (each child's wake count is known: one member per
 *      word it waits on that was woken while it slept)
 *   9  words of several shared tables in one call (Linux takes any
 *      words): two regions, a word of a plain MAP_SHARED mapping (the
 *      user's shared table under emulation) and a private word.  A child
 *      waits on {region A, region B, mapping}; the parent wakes each one
 *      in turn (a run each): the wake counts 1 and the child returns that
 *      index.  Wakes of B then A back to back: 1 each (both members
 *      queued until the child ends them), the child returns 1 or, if it
 *      ended between them, 0 with the second wake counting 0.  A word of
 *      B that differs: EAGAIN; nobody waking: ETIMEDOUT; region A, region
 *      B and a private word woken by a thread of the waiter: index 2.  A
 *      child killed in such a waitv: wakes of its words count 0; one left
 *      by a siglongjmp from a handler: then too, and its next waitv times
 *      out.  Under emulation the first table's parker sleeps and the others'
 *      are looked at after each slice (src/waitv.c).
 */
#ifdef _WIN32
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork()");
  return 0;
}
#else
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include "region_util.h"
#include <pfutex/linux.h>

struct shared {
  uint32_t w[8];
  volatile int ready[16], done[16];
  volatile long ret[16];
  volatile pid_t tid[16];
};

static struct shared *sh;
static uint32_t privword;
static uint32_t *rb, *mw;            /* 9: a word of region B, of a plain shared mapping */
static void *mixed_waker(void *arg);
static long mixed_waitv(long ms);

/* 9: waitv on {region A's w[0], region B's word, the mapping's word}
 * (n of them; with priv, the private word as the third), values 0. */
static long
multi_waitv(int n, int priv, long ms)
{
  struct pfutex_waitv v[3];
  struct timespec dl;
  long r;
  memset(v, 0, sizeof v);
  v[0].uaddr = (uint64_t)(uintptr_t)&sh->w[0];
  v[1].uaddr = (uint64_t)(uintptr_t)rb;
  v[2].uaddr = (uint64_t)(uintptr_t)(priv ? &privword : mw);
  v[0].flags = v[1].flags = PFUTEX2_SIZE_U32;
  v[2].flags = PFUTEX2_SIZE_U32 | (priv ? PFUTEX2_PRIVATE : 0);
  clock_gettime(CLOCK_MONOTONIC, &dl);
  pft_timespec_add_ns(&dl, ms * 1000000LL);
  r = pfutex_waitv(v, (unsigned int)n, 0, &dl, PFUTEX_CLOCK_MONOTONIC);
  return r < 0 ? -errno : r;
}

/* A child in a waitv: mixed_waitv (n 0) or multi_waitv(n, priv); with
 * priv, a thread of its own wakes the private word (mixed_waker). */
static pid_t
multi_child(int n, int priv)
{
  pid_t p = fork();
  if (p < 0)
    sysbail("fork");
  if (p == 0) {
    pthread_t th;
    ru_child_alarm(60);
    privword = 0;
    sh->tid[0] = pft_gettid();
    if (priv && pthread_create(&th, NULL, mixed_waker, NULL) != 0)
      _exit(3);
    __atomic_store_n(&sh->ready[0], 1, __ATOMIC_SEQ_CST);
    sh->ret[0] = n ? multi_waitv(n, priv, 10000) : mixed_waitv(10000);
    __atomic_store_n(&sh->done[0], 1, __ATOMIC_SEQ_CST);
    if (priv)
      pthread_join(th, NULL);
    _exit(0);
  }
  return p;
}

static int
wake_at(uint32_t *u)
{
  return pfutex_wake(u, PFUTEX_BITSET_MATCH_ANY, 1, PFUTEX_SHARED);
}

/* 9: a handler that leaves the multi-table waitv by siglongjmp. */
static sigjmp_buf jump_out;
static void
jump_handler(int sig)
{
  (void)sig;
  siglongjmp(jump_out, 1);
}

/* 9: a child in a waitv on the three shared tables, left by a
 * siglongjmp from a handler; then the wakes of its words count 0 (every
 * member and parker was ended) and another such waitv times out.
 * sh->ret[0]: the sum of those wakes' counts, sh->ret[1]: the second
 * waitv's result. */
static pid_t
jump_child(void)
{
  pid_t p = fork();
  if (p < 0)
    sysbail("fork");
  if (p == 0) {
    struct sigaction sa;
    ru_child_alarm(60);
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = jump_handler;
    sigaction(SIGUSR1, &sa, NULL);
    sh->tid[0] = pft_gettid();
    sh->ret[0] = sh->ret[1] = -1000;
    if (sigsetjmp(jump_out, 1) == 0) {
      __atomic_store_n(&sh->ready[0], 1, __ATOMIC_SEQ_CST);
      (void)multi_waitv(3, 0, 10000);
      _exit(4);                            /* (never: the handler jumps out) */
    }
    sh->ret[0] = wake_at(&sh->w[0]) + wake_at(rb) + wake_at(mw);
    sh->ret[1] = multi_waitv(3, 0, 50);
    __atomic_store_n(&sh->done[0], 1, __ATOMIC_SEQ_CST);
    _exit(0);
  }
  return p;
}

/* One waitv in child slot k on words idx[0..n-1] (values 0), timeout ms:
 * its result in sh->ret[k] (index, or -errno). */
static long
do_waitv(const int *idx, int n, long ms)
{
  struct pfutex_waitv v[8];
  struct timespec dl;
  long r;
  int i;
  memset(v, 0, sizeof v);
  for (i = 0; i < n; i++) {
    v[i].uaddr = (uint64_t)(uintptr_t)&sh->w[idx[i]];
    v[i].flags = PFUTEX2_SIZE_U32;
  }
  clock_gettime(CLOCK_MONOTONIC, &dl);
  pft_timespec_add_ns(&dl, ms * 1000000LL);
  r = pfutex_waitv(v, (unsigned int)n, 0, &dl, PFUTEX_CLOCK_MONOTONIC);
  return r < 0 ? -errno : r;
}

/* Phase 8: waitv on the region's w[0] and this process's privword. */
static long
mixed_waitv(long ms)
{
  struct pfutex_waitv v[2];
  struct timespec dl;
  long r;
  memset(v, 0, sizeof v);
  v[0].uaddr = (uint64_t)(uintptr_t)&sh->w[0];
  v[0].flags = PFUTEX2_SIZE_U32;
  v[1].uaddr = (uint64_t)(uintptr_t)&privword;
  v[1].flags = PFUTEX2_SIZE_U32 | PFUTEX2_PRIVATE;
  clock_gettime(CLOCK_MONOTONIC, &dl);
  pft_timespec_add_ns(&dl, ms * 1000000LL);
  r = pfutex_waitv(v, 2, 0, &dl, PFUTEX_CLOCK_MONOTONIC);
  return r < 0 ? -errno : r;
}

/* A thread of the waiter's process: once the waiter sleeps, a private
 * wake of privword. */
static void *
mixed_waker(void *arg)
{
  (void)arg;
  while (!__atomic_load_n(&sh->ready[0], __ATOMIC_SEQ_CST))
    usleep(200);
  pft_wait_asleep(sh->tid[0]);
  usleep(20000);
  if (pfutex_wake(&privword, PFUTEX_BITSET_MATCH_ANY, 1, PFUTEX_PRIVATE) != 1)
    sh->ret[1] = -1;
  return NULL;
}

static pid_t
child(int k, const int *idx, int n, long ms)
{
  pid_t p = fork();
  if (p < 0)
    sysbail("fork");
  if (p == 0) {
    ru_child_alarm(60);
    sh->tid[k] = pft_gettid();
    __atomic_store_n(&sh->ready[k], 1, __ATOMIC_SEQ_CST);
    sh->ret[k] = do_waitv(idx, n, ms);
    __atomic_store_n(&sh->done[k], 1, __ATOMIC_SEQ_CST);
    _exit(0);
  }
  return p;
}

static void
asleep(pid_t p, int k)
{
  if (ru_wait_asleep(p, 0, &sh->ready[k], &sh->done[k]) != 0)
    diag("child %d not seen asleep", k);
  usleep(20000);
}

static int
wake(int i, int n)
{
  return pfutex_wake(&sh->w[i], PFUTEX_BITSET_MATCH_ANY, n, PFUTEX_SHARED);
}

static void
reset(void)
{
  memset(sh, 0, sizeof *sh);
}

static const char *
rs(long r)
{
  static char b[4][32];
  static int k;
  char *s = b[k++ & 3];
  if (r < 0)
    snprintf(s, 32, "%s", pft_errname((int)-r));
  else
    snprintf(s, 32, "%ld", r);
  return s;
}

int
main(void)
{
  pfutex_region_t *rg;
  static const int three[] = { 0, 1, 2 };
  pid_t p, ps[8];
  int i, r, n;

  plan_lazy();
  pft_watchdog(120);
  if (!pfutex_backend())
    skip_all("no backend");
  {
    struct pfutex_waitv v;
    memset(&v, 0, sizeof v);
    v.uaddr = (uint64_t)(uintptr_t)&privword;
    v.val = 1;
    v.flags = PFUTEX2_SIZE_U32 | PFUTEX2_PRIVATE;
    if (pfutex_waitv(&v, 1, 0, NULL, 0) < 0 && errno == ENOSYS)
      skip_all("futex_waitv answers ENOSYS here (%s)", pft_emulator() ? pft_emulator() : "kernel");
  }
  if (!(rg = pfutex_region_anon(4096)))
    sysbail("pfutex_region_anon");
  sh = pfutex_region_addr(rg);

  /* 1 */
  reset();
  p = child(0, three, 3, 10000);
  asleep(p, 0);
  r = wake(1, 1);
  ru_reap(p);
  ok(r == 1 && sh->ret[0] == 1, "1: a wake of the middle word counts 1 (%d), waitv returns 1 (%s)", r,
     rs(sh->ret[0]));
  ok(wake(0, 1) == 0 && wake(1, 1) == 0 && wake(2, 1) == 0, "1: nothing stays queued");

  /* 2 */
  reset();
  p = child(0, three, 3, 10000);
  asleep(p, 0);
  r = wake(2, 1);
  n = wake(0, 1);
  ru_reap(p);
  ok(r == 1 && (sh->ret[0] == 0 || sh->ret[0] == 2) && (n == 0 || n == 1),
     "2: wakes of the last then the first word count %d, %d; waitv returns %s", r, n, rs(sh->ret[0]));

  /* 3 */
  reset();
  p = child(0, three, 3, 10000);
  asleep(p, 0);
  r = pfutex_cmp_requeue(&sh->w[0], 0, &sh->w[5], 0, 1, PFUTEX_SHARED);
  n = wake(5, 1);
  ru_reap(p);
  ok(r == 1 && n == 1 && sh->ret[0] == 0,
     "3: a member requeued onto another word (%d) and woken there (%d): index 0 (%s)", r, n,
     rs(sh->ret[0]));

  /* 4 */
  reset();
  p = child(0, three, 3, 10000);
  asleep(p, 0);
  r = pfutex_wake_op(&sh->w[6], &sh->w[1], 1, 1,
                     PFUTEX_OP(PFUTEX_OP_SET, 1, PFUTEX_OP_CMP_EQ, 0), PFUTEX_SHARED);
  ru_reap(p);
  ok(r == 1 && sh->ret[0] == 1, "4: WAKE_OP's second wake reaches member 1 (%d): %s", r,
     rs(sh->ret[0]));
  sh->w[1] = 0;

  /* 5 */
  reset();
  sh->w[2] = 7;
  ok(do_waitv(three, 3, 1000) == -EAGAIN, "5: a word that differs: EAGAIN");
  sh->w[2] = 0;
  {
    long long t0 = pft_now_ns();
    long x = do_waitv(three, 3, 100);
    ok(x == -ETIMEDOUT && pft_now_ns() - t0 >= 90000000LL, "5: the timeout passes: %s after %.3f s",
       rs(x), (double)(pft_now_ns() - t0) / 1e9);
  }
  {
    struct pfutex_waitv v[2];
    struct timespec dl;
    long x;
    memset(v, 0, sizeof v);
    v[0].uaddr = (uint64_t)(uintptr_t)&sh->w[0];
    v[0].flags = PFUTEX2_SIZE_U32;
    v[1].uaddr = (uint64_t)(uintptr_t)&privword;
    v[1].flags = PFUTEX2_SIZE_U32 | PFUTEX2_PRIVATE;
    privword = 0;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    pft_timespec_add_ns(&dl, 50000000LL);
    x = pfutex_waitv(v, 2, 0, &dl, PFUTEX_CLOCK_MONOTONIC);
    x = x < 0 ? -errno : x;
    ok(x == -ETIMEDOUT, "5: a region's word with a private one, nobody waking: %s", rs(x));
  }

  /* 8: a region's word and a private word in one call: woken through
   * either (the private one by a thread of the waiter's process, the
   * region's from another process) */
  {
    int which;
    for (which = 0; which < 2; which++) {
#ifdef PFT_TSAN
      if (which == 1) {
        skip("8: the private word woken by a thread of a fork child: ThreadSanitizer does not "
             "support threads started after fork");
        break;
      }
#endif
      reset();
      p = multi_child(0, which);
      asleep(p, 0);
      r = which == 0 ? wake(0, 1) : 1;
      ru_reap(p);
      ok(r == 1 && sh->ret[0] == (which == 0 ? 0 : 1),
         "8: a region's word and a private word, the %s woken: index %s", which == 0 ? "region's word (from another process)" : "private word (by a thread of the waiter)",
         rs(sh->ret[0]));
    }
  }

  /* 6 */
  reset();
  p = child(0, three, 3, 10000);
  asleep(p, 0);
  kill(p, SIGKILL);
  ru_reap(p);
  r = wake(0, 1) + wake(1, 1) + wake(2, 1);
  ok(r == 0, "6: a child killed in its waitv: wakes of its words count %d", r);

  /* 7: children k wait on words {k % 5, (k + 1) % 5, (k + 2) % 5}; the
   * parent wakes words 0..4 one at a time, one waiter each, until every
   * child returned; each wake's count is one member of a sleeping child */
  reset();
  for (i = 0; i < 8; i++) {
    int idx[3] = { i % 5, (i + 1) % 5, (i + 2) % 5 };
    ps[i] = child(i, idx, 3, 20000);
  }
  for (i = 0; i < 8; i++)
    asleep(ps[i], i);
  {
    int total = 0, rounds = 0, left = 8, k;
    while (left > 0 && rounds++ < 200) {
      for (k = 0; k < 5; k++)
        total += wake(k, 1);
      usleep(2000);
      for (left = 0, k = 0; k < 8; k++)
        left += !sh->done[k];
    }
    for (i = 0; i < 8; i++)
      ru_reap(ps[i]);
    for (r = 0, k = 0; k < 8; k++)
      r += sh->ret[k] >= 0 && sh->ret[k] <= 2;
    ok(r == 8, "7: every child returned an index (%d of 8)", r);
    ok(total >= 8 && total <= 24,
       "7: the wakes counted %d members (at least one and at most three per child)", total);
    ok(wake(0, 100) + wake(1, 100) + wake(2, 100) + wake(3, 100) + wake(4, 100) == 0,
       "7: nothing stays queued");
  }

  /* 9: words of several shared tables */
  {
    pfutex_region_t *rg2 = pfutex_region_anon(4096);
    uint32_t *const targets[3] = { &sh->w[0], NULL, NULL };
    int k;
    if (!rg2)
      sysbail("pfutex_region_anon (a second region)");
    rb = (uint32_t *)pfutex_region_addr(rg2) + 3;
    mw = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (mw == MAP_FAILED)
      sysbail("mmap");
    mw += 5;
    for (k = 0; k < 3; k++) {
      uint32_t *u = k == 0 ? targets[0] : k == 1 ? rb : mw;
      reset();
      *rb = *mw = 0;
      p = multi_child(3, 0);
      asleep(p, 0);
      r = wake_at(u);
      ru_reap(p);
      ok(r == 1 && sh->ret[0] == k,
         "9: region A, region B and a shared mapping's word; the %s woken: the wake counts %d, index %s",
         k == 0 ? "region A's" : k == 1 ? "region B's" : "mapping's", r, rs(sh->ret[0]));
    }
    reset();
    *rb = *mw = 0;
    p = multi_child(3, 0);
    asleep(p, 0);
    r = wake_at(rb);
    n = wake_at(&sh->w[0]);
    ru_reap(p);
    ok(r == 1 && ((n == 1 && sh->ret[0] == 1) || (n == 0 && sh->ret[0] == 1) || (n == 1 && sh->ret[0] == 0)),
       "9: wakes of region B's word then region A's count %d, %d; waitv returns %s", r, n,
       rs(sh->ret[0]));
    ok(wake_at(&sh->w[0]) == 0 && wake_at(rb) == 0 && wake_at(mw) == 0, "9: nothing stays queued");
    reset();
    *rb = 4;
    ok(multi_waitv(3, 0, 1000) == -EAGAIN, "9: region B's word differs: EAGAIN");
    *rb = 0;
    {
      long long t0 = pft_now_ns();
      long x = multi_waitv(3, 0, 100);
      ok(x == -ETIMEDOUT && pft_now_ns() - t0 >= 90000000LL,
         "9: three shared tables, nobody waking: %s after %.3f s", rs(x),
         (double)(pft_now_ns() - t0) / 1e9);
    }
#ifdef PFT_TSAN
    skip("9: the private word woken by a thread of a fork child: ThreadSanitizer does not "
         "support threads started after fork");
#else
    reset();
    p = multi_child(3, 1);
    ru_reap(p);
    ok(sh->ret[0] == 2 && sh->ret[1] == 0,
       "9: regions A and B and a private word, the private one woken by a thread of the waiter: "
       "index %s", rs(sh->ret[0]));
#endif
    reset();
    *rb = *mw = 0;
    p = multi_child(3, 0);
    asleep(p, 0);
    kill(p, SIGKILL);
    ru_reap(p);
    r = wake_at(&sh->w[0]) + wake_at(rb) + wake_at(mw);
    ok(r == 0, "9: a child killed in a waitv on three shared tables: wakes of its words count %d", r);
    reset();
    p = jump_child();
    asleep(p, 0);
    kill(p, SIGUSR1);
    ru_reap(p);
    ok(sh->ret[0] == 0 && sh->ret[1] == -ETIMEDOUT,
       "9: a waitv on three shared tables left by siglongjmp from a handler: wakes of its words "
       "then count %ld, another such waitv %s", sh->ret[0], rs(sh->ret[1]));
    ok(pfutex_region_close(rg2) == 0, "9: region B closes");
  }
  ok(pfutex_region_close(rg) == 0, "the region closes");
  return 0;
}
#endif
