/* storm: the exact-count storm.  Waiter threads loop over timed waits
 * (FUTEX_WAIT with relative timeouts, FUTEX_WAIT_BITSET and pfutex_wait
 * with absolute deadlines on CLOCK_MONOTONIC and CLOCK_REALTIME, 0 ns to
 * 2 ms, random bitsets) on words that stay 0, so every wait blocks; waker
 * threads hammer them with one set of ops.  Every wake reports how many it
 * woke, and a requeue wakes before it moves, so min(return, nr_wake) is
 * exactly its woken count.  Invariant (DESIGN.md 4.1, 4.2, 4.4): the sum of
 * the woken counts equals the number of waits that returned 0.  A wake
 * counted for a waiter that then returns ETIMEDOUT or EINTR is a lost
 * wakeup; a 0 nobody counted is a spurious one.  So is a requeue that
 * wakes fewer than nr_wake yet moves waiters (it counts as nr_wake here):
 * on the kernel a waiter queues under the bucket lock, so a requeue that
 * runs out of waiters to wake has none left to move; one that arrived
 * meanwhile is either woken (it came first) or left alone.
 *
 * One check per scenario (what it shows in its diag line: waits, wakes,
 * counted, returned 0, ETIMEDOUT, EINTR, EAGAIN, lost = counted - returned 0):
 *   requeue-cmp    3 wakers doing only CMP_REQUEUE (pfutex() and
 *                  pfutex_cmp_requeue) between the two words of a pair,
 *                  nr_wake 0..2, nr_requeue 0..7, 1 in 16 with a wrong
 *                  val3 (EAGAIN, nothing done)
 *   requeue        the same with REQUEUE / pfutex_requeue
 *   wakes          WAKE, WAKE_BITSET (random masks) and WAKE_OP (ops that
 *                  leave 0 at 0, on both words), legacy and clean: no requeue
 *   mixed          those and CMP_REQUEUE and REQUEUE
 *   signals-restart, signals-intr   mixed, plus a thread sending SIGUSR1 to
 *                  random waiters; its handler (SA_RESTART, or not) wakes a
 *                  word nobody waits on, waits with a wrong value (EAGAIN)
 *                  or wakes one storm waiter (counted).  EINTR is not
 *                  counted: a waiter a wake counted returns 0 (woken wins).
 *   same-bucket    CMP_REQUEUE and REQUEUE between two words that share a
 *                  bucket of the private table (one lock), two such pairs
 *   two-buckets    between words in different buckets (two locks, taken
 *                  in order): an adjacent pair and a far-apart one
 *   shared         mixed, on words without FUTEX_PRIVATE_FLAG
 *   region         mixed, on two words of an anonymous region shared by 3
 *                  forked processes, each with waiters and wakers;
 *                  per-process counts summed by the parent
 *   tables         mixed, shared ops, one process, on pairs of words the
 *                  emulation keeps in different tables (a requeue moves a
 *                  waiter by giving it a node of the other table, wait.c
 *                  (M)): a region's word and a word of private memory, a
 *                  region's and a MAP_SHARED mapping's, two regions'
 *   tables-procs   mixed, on pairs of words of different shared tables
 *                  (two regions', a region's and a MAP_SHARED mapping's,
 *                  both ways), waiters and wakers in 3 forked processes as
 *                  in region: a requeue moves other processes' waiters
 *                  (their new node published in the node they leave)
 *   tables-signals  tables, plus signals-intr's signaller: a handler's
 *                  call ends a waitv a move rang (src/waitv.c vx_intr)
 *   In the last three, 1 in 4 waits is a futex_waitv where it works (a
 *   probe): entry 0 a word of the process's private memory nobody wakes,
 *   entry 1 the storm's word; woken, it returns 1 (counted once: only
 *   entry 1 is ever woken); a requeue moves its member to another table
 *   (src/waitv.c (M)).
 * Then: no call returned anything unexpected (scenario and call in a diag),
 * and under SA_RESTART no untimed wait returned EINTR (1 in 32 waits is
 * untimed, so the restart rule is seen).  The buckets are picked with the
 * engine's own hash (emu.h pf_key_hash) when the emulation is built and
 * active; else the pairs are only likely to be in one / two buckets.
 *
 * PFUTEX_STORM_SECONDS: seconds per scenario (a decimal; default 0.5).
 * PFUTEX_STORM_SEED: the base seed (default: from the clock); each
 * scenario's seed and each thread's are derived from it (diag).
 * PFUTEX_STORM_ONLY: run only the scenarios whose names contain it (the
 * others are skipped), e.g. "requeue" for the first two.
 * PFUTEX_STORM_OPS: the wakers' ops in every scenario instead of its own,
 * from cmp_requeue, requeue, wake, wake_bitset, wake_op (comma-separated):
 * to tell which op loses, e.g. the signal scenarios with wakes only.
 * Speed is never checked: the counts are.  The stop: a flag, then wakes of
 * every word (counted) until every waiter is out; only then the counts. */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <atomic_ops.h>

#include "pft.h"
#include "pfutex/linux.h"
#ifndef _WIN32
# include <sys/mman.h>
# include "region_util.h"
#endif
#ifdef PF_HAVE_EMU
# include "emu.h"
#endif

#define NR2(n) ((const struct timespec *)(uintptr_t)(n))

#define SW_WAITERS 32           /* waiter threads (one process) */
#define SW_WAKERS 3
#define SW_PAIRS_MAX 4
#define SW_RPROCS 3             /* region: processes */
#define SW_RWAITERS 10          /* region: waiters per process */
#define SW_RWAKERS 1            /* region: wakers per process */
#define SW_TMO_MAX_NS 2000000LL /* 2 ms */
#define SW_WORDS 8192           /* candidate words for the pairs */

enum {
  OP_CMP_REQUEUE = 1, OP_REQUEUE = 2, OP_WAKE = 4, OP_WAKE_BITSET = 8, OP_WAKE_OP = 16,
  OP_ALL = 31
};
enum { SIGS_NONE, SIGS_RESTART, SIGS_INTR };
enum { PAIRS_DEFAULT, PAIRS_SAME, PAIRS_TWO, PAIRS_REGION, PAIRS_TABLES, PAIRS_XPROC };

struct scen {
  const char *name;
  unsigned int ops;
  int priv;                     /* 1: FUTEX_PRIVATE_FLAG / PFUTEX_PRIVATE */
  int sigs;
  int pairs;
  int vx;                       /* 1 in 4 waits a futex_waitv (entry 1 the word), where
                                   it works (have_waitv) */
};

static const struct scen scens[] = {
  { "requeue-cmp", OP_CMP_REQUEUE, 1, SIGS_NONE, PAIRS_DEFAULT, 0 },
  { "requeue", OP_REQUEUE, 1, SIGS_NONE, PAIRS_DEFAULT, 0 },
  { "wakes", OP_WAKE | OP_WAKE_BITSET | OP_WAKE_OP, 1, SIGS_NONE, PAIRS_DEFAULT, 0 },
  { "mixed", OP_ALL, 1, SIGS_NONE, PAIRS_DEFAULT, 0 },
  { "signals-restart", OP_ALL, 1, SIGS_RESTART, PAIRS_DEFAULT, 0 },
  { "signals-intr", OP_ALL, 1, SIGS_INTR, PAIRS_DEFAULT, 0 },
  { "same-bucket", OP_CMP_REQUEUE | OP_REQUEUE, 1, SIGS_NONE, PAIRS_SAME, 0 },
  { "two-buckets", OP_CMP_REQUEUE | OP_REQUEUE, 1, SIGS_NONE, PAIRS_TWO, 0 },
  { "shared", OP_ALL, 0, SIGS_NONE, PAIRS_DEFAULT, 0 },
  { "region", OP_ALL, 0, SIGS_NONE, PAIRS_REGION, 0 },
  { "tables", OP_ALL, 0, SIGS_NONE, PAIRS_TABLES, 1 },
  { "tables-procs", OP_ALL, 0, SIGS_NONE, PAIRS_XPROC, 1 },
  { "tables-signals", OP_ALL, 0, SIGS_INTR, PAIRS_TABLES, 1 },
};
#define NSCENS ((int)(sizeof scens / sizeof scens[0]))

/* Totals of one process (in shared memory for the region scenario). */
struct tot {
  unsigned long long waits, ret0, etimedout, eintr, eintr_untimed, eagain;
  unsigned long long wakes, counted, stop_counted, handler_calls, handler_counted, bad;
  unsigned long long xnamed, xpub;  /* moved across tables (emu.h): named, published */
  unsigned long long xunreach;      /* ... ended as spurious wakeups (none: nobody dies) */
  unsigned long long xvx;           /* futex_waitv members followed to their new node */
  unsigned long long xvi;           /* ... waitvs rung by a move ended by a handler */
  int bad_errno;
  char bad_what[96];
};

/* One thread.  Fields are written by the thread only, except h_*: by its
 * signal handler only (which does not nest: SIGUSR1 is blocked while it
 * runs), read after the join. */
struct st {
  pthread_t th;
  volatile pid_t tid;
  uint64_t rng, hrng;
  struct tot t;
  volatile unsigned long h_calls, h_counted, h_bad;
  volatile int h_errno, h_what;
};

/* The scenario being run, as this process has it. */
static struct {
  const struct scen *sc;
  uint32_t *pair[SW_PAIRS_MAX][2];
  int npairs;
  uint32_t *idle;               /* a word nobody waits on (handlers) */
  int nwaiters, nwakers;
  volatile AO_t *stop;          /* set: every loop ends (shared in the region case) */
  volatile AO_t out;            /* waiters of this process that left their loop */
  volatile AO_t *gout;          /* waiters of every process that left (region: shared) */
  AO_t gtotal;                  /* and how many there are in all */
  struct st w[SW_WAITERS];
  struct st k[SW_WAKERS];
} S;

static uint32_t sw_mem[SW_WORDS] __attribute__((aligned(64)));
static uint32_t sw_idle_word;
static uint32_t sw_vx_quiet;    /* a waitv's entry 0: nobody wakes it */
static int have_waitv;
static double sw_seconds = 0.5;

static uint32_t
rnd(uint64_t *s)
{
  /* xorshift64* */
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return (uint32_t)((*s * 0x2545f4914f6cdd1dull) >> 32);
}

static uint64_t
seed_of(uint64_t base, int i)
{
  return (base + (uint64_t)(i + 1) * 0x9e3779b97f4a7c15ull) | 1;
}

static int
fl_private(void)
{
  return S.sc->priv ? FUTEX_PRIVATE_FLAG : 0;
}

static unsigned int
clean_flags(void)
{
  return S.sc->priv ? PFUTEX_PRIVATE : PFUTEX_SHARED;
}

static void
bad(struct tot *t, const char *what, long ret, int err)
{
  t->bad++;
  t->bad_errno = err;
  snprintf(t->bad_what, sizeof t->bad_what, "%.60s = %ld", what, ret);
}

/* One wake-type call's result: its count (a requeue's: at most nr_wake of
 * it, cap), or a bad result. */
static void
account(struct tot *t, const char *what, long ret, int err, long max, long cap)
{
  t->wakes++;
  if (ret < 0 || ret > max)
    bad(t, what, ret, err);
  else
    t->counted += (unsigned long long)(ret < cap ? ret : cap);
}

/* ---- Waiters ------------------------------------------------------------- */

/* 0 ns .. 2 ms, spread over the powers of two (many short ones, where the
 * timeout meets a wake most often); -1: untimed (1 in 32). */
static long long
tmo_ns(struct st *me)
{
  uint32_t r = rnd(&me->rng);
  long long ns;
  if ((r & 31) == 0)
    return -1;
  ns = (long long)(rnd(&me->rng) & ((1u << ((r >> 5) % 22)) - 1));
  return ns > SW_TMO_MAX_NS ? SW_TMO_MAX_NS : ns;
}

static void
deadline(struct timespec *ts, int realtime, long long ns)
{
  clock_gettime(realtime ? CLOCK_REALTIME : CLOCK_MONOTONIC, ts);
  pft_timespec_add_ns(ts, ns);
}

static void *
waiter_main(void *arg)
{
  struct st *me = arg;
  struct tot *t = &me->t;

  me->tid = pft_gettid();
  while (!AO_load_acquire(S.stop)) {
    uint32_t r = rnd(&me->rng);
    uint32_t *w = S.pair[r % (uint32_t)S.npairs][(r >> 8) & 1];
    uint32_t val = ((r >> 9) & 31) == 0 ? 1u : 0u;   /* 1 in 32: mismatch */
    uint32_t bits = rnd(&me->rng);
    int realtime = (r >> 14) & 1, kind = (int)((r >> 15) % (S.sc->vx && have_waitv ? 4 : 3)), err;
    long long ns = tmo_ns(me);
    struct timespec ts, *tp = ns < 0 ? NULL : &ts;
    const char *what;
    long ret;

    if (bits == 0)
      bits = 1u << (r & 31);
    errno = 0;
    switch (kind) {
    case 0:                     /* FUTEX_WAIT, relative */
      what = "FUTEX_WAIT";
      if (tp) {
        ts.tv_sec = (time_t)(ns / 1000000000);
        ts.tv_nsec = (long)(ns % 1000000000);
      }
      ret = pfutex(w, FUTEX_WAIT | fl_private(), val, tp, NULL, 0);
      break;
    case 1:                     /* FUTEX_WAIT_BITSET, absolute */
      what = realtime ? "FUTEX_WAIT_BITSET|CLOCK_REALTIME" : "FUTEX_WAIT_BITSET";
      if (tp)
        deadline(&ts, realtime, ns);
      ret = pfutex(w, FUTEX_WAIT_BITSET | fl_private() | (realtime ? FUTEX_CLOCK_REALTIME : 0),
                   val, tp, NULL, bits);
      break;
    case 2:                     /* pfutex_wait, absolute */
      what = realtime ? "pfutex_wait(REALTIME)" : "pfutex_wait(MONOTONIC)";
      if (tp)
        deadline(&ts, realtime, ns);
      ret = pfutex_wait(w, val, bits, clean_flags(), tp,
                        realtime ? PFUTEX_CLOCK_REALTIME : PFUTEX_CLOCK_MONOTONIC);
      break;
    default: {                  /* futex_waitv {idle, w}, absolute: 1 when woken */
      struct pfutex_waitv v[2];
      what = realtime ? "pfutex_waitv(REALTIME)" : "pfutex_waitv(MONOTONIC)";
      memset(v, 0, sizeof v);
      v[0].uaddr = (uintptr_t)&sw_vx_quiet;
      v[1].uaddr = (uintptr_t)w;
      v[1].val = val;
      v[0].flags = v[1].flags = PFUTEX2_SIZE_U32 | (S.sc->priv ? PFUTEX2_PRIVATE : 0);
      if (tp)
        deadline(&ts, realtime, ns);
      ret = pfutex_waitv(v, 2, 0, tp, realtime ? PFUTEX_CLOCK_REALTIME : PFUTEX_CLOCK_MONOTONIC);
      if (ret == 1)
        ret = 0;                /* woken (entry 1): as a wait's 0 */
      else if (ret == 0)
        ret = 2;                /* entry 0 is never woken: bad */
      break;
    }
    }
    err = errno;
    t->waits++;
    if (val != 0) {
      if (ret == -1 && err == EAGAIN)
        t->eagain++;
      else
        bad(t, what, ret, err);
    } else if (ret == 0) {
      t->ret0++;
    } else if (ret == -1 && err == ETIMEDOUT && tp) {
      t->etimedout++;
    } else if (ret == -1 && err == EINTR && S.sc->sigs != SIGS_NONE) {
      t->eintr++;
      if (!tp)
        t->eintr_untimed++;
    } else {
      bad(t, what, ret, err);
    }
  }
  AO_fetch_and_add1_full(&S.out);
  if (S.gout != &S.out)
    AO_fetch_and_add1_full(S.gout);
  return NULL;
}

/* ---- Wakers -------------------------------------------------------------- */

/* WAKE_OP ops that leave a word at 0 (the words must keep the waited
 * value, so every wait blocks); the comparisons vary. */
static uint32_t
wake_op_code(uint32_t r)
{
  static const int ops[] = { FUTEX_OP_SET, FUTEX_OP_ADD, FUTEX_OP_OR, FUTEX_OP_ANDN, FUTEX_OP_XOR };
  int op = ops[r % 5], oparg = 0;
  if (op == FUTEX_OP_ANDN)
    oparg = (int)((r >> 3) & 0xfff);                  /* 0 & ~x == 0 */
  return (uint32_t)FUTEX_OP(op, oparg, (int)((r >> 16) % 6), ((int)((r >> 20) & 3) - 1));
}

static unsigned int sw_ops_override;     /* PFUTEX_STORM_OPS, 0: none */

static int
pick_op(struct st *me)
{
  int bitsv[5], n = 0, i;
  unsigned int ops = sw_ops_override ? sw_ops_override : S.sc->ops;
  for (i = 0; i < 5; i++)
    if (ops & (1u << i))
      bitsv[n++] = 1 << i;
  return bitsv[rnd(&me->rng) % (uint32_t)n];
}

static void *
waker_main(void *arg)
{
  struct st *me = arg;
  struct tot *t = &me->t;

  while (!AO_load_acquire(S.stop)) {
    uint32_t r = rnd(&me->rng), r2 = rnd(&me->rng);
    int p = (int)(r % (uint32_t)S.npairs), d = (int)((r >> 4) & 1);
    uint32_t *a = S.pair[p][d], *b = S.pair[p][!d];
    int nw = (int)((r >> 5) % 3), nq = (int)((r >> 7) & 7), clean = (int)((r >> 10) & 1);
    int op = pick_op(me), err;
    uint32_t cv = ((r >> 11) & 15) == 0 ? 1u : 0u;  /* 1 in 16: a wrong val3 */
    long ret, max;
    const char *what;

    errno = 0;
    switch (op) {
    case OP_CMP_REQUEUE:
      what = clean ? "pfutex_cmp_requeue" : "FUTEX_CMP_REQUEUE";
      ret = clean ? pfutex_cmp_requeue(a, cv, b, nw, nq, clean_flags())
                  : pfutex(a, FUTEX_CMP_REQUEUE | fl_private(), (uint32_t)nw, NR2(nq), b, cv);
      err = errno;
      if (cv) {
        t->wakes++;
        if (ret == -1 && err == EAGAIN)
          t->eagain++;
        else
          bad(t, what, ret, err);
      } else {
        account(t, what, ret, err, nw + nq, nw);
      }
      break;
    case OP_REQUEUE:
      what = clean ? "pfutex_requeue" : "FUTEX_REQUEUE";
      ret = clean ? pfutex_requeue(a, b, nw, nq, clean_flags())
                  : pfutex(a, FUTEX_REQUEUE | fl_private(), (uint32_t)nw, NR2(nq), b, 0);
      account(t, what, ret, errno, nw + nq, nw);
      break;
    case OP_WAKE:
    case OP_WAKE_BITSET: {
      uint32_t mask = op == OP_WAKE ? FUTEX_BITSET_MATCH_ANY : r2;
      int nr = (int)((r >> 16) & 3);
      if (mask == 0)
        mask = 1u << (r & 31);
      /* legacy WAKE with 0 wakes one, as the kernel's; the clean call none */
      max = clean ? nr : (nr ? nr : 1);
      if (clean) {
        what = "pfutex_wake";
        ret = pfutex_wake(a, mask, nr, clean_flags());
      } else if (op == OP_WAKE) {
        what = "FUTEX_WAKE";
        ret = pfutex(a, FUTEX_WAKE | fl_private(), (uint32_t)nr, NULL, NULL, 0);
      } else {
        what = "FUTEX_WAKE_BITSET";
        ret = pfutex(a, FUTEX_WAKE_BITSET | fl_private(), (uint32_t)nr, NULL, NULL, mask);
      }
      account(t, what, ret, errno, max, max);
      break;
    }
    default: {                  /* OP_WAKE_OP */
      uint32_t code = wake_op_code(r2);
      int nw2 = (int)((r >> 16) % 3);
      max = clean ? nw + nw2 : (nw ? nw : 1) + (nw2 ? nw2 : 1);
      what = clean ? "pfutex_wake_op" : "FUTEX_WAKE_OP";
      ret = clean ? pfutex_wake_op(a, b, nw, nw2, code, clean_flags())
                  : pfutex(a, FUTEX_WAKE_OP | fl_private(), (uint32_t)nw, NR2(nw2), b, code);
      account(t, what, ret, errno, max, max);
      break;
    }
    }
  }
  return NULL;
}

/* ---- Signals ------------------------------------------------------------- */
#ifndef _WIN32
static volatile AO_t sw_sig_stop;

/* On the interrupted waiter: wake a word nobody waits on (0), wait with a
 * wrong value (EAGAIN), wake one storm waiter (counted), or nothing. */
static void
sw_handler(int sig)
{
  int e = errno, i;
  pid_t tid = pft_gettid();
  struct st *me = NULL;
  long ret;
  uint32_t r;

  (void)sig;
  for (i = 0; i < S.nwaiters; i++)
    if (S.w[i].tid == tid)
      me = &S.w[i];
  if (!me)
    goto out;
  me->h_calls++;
  r = rnd(&me->hrng);
  switch (r & 3) {
  case 0:
    ret = pfutex(S.idle, FUTEX_WAKE | fl_private(), 1, NULL, NULL, 0);
    if (ret != 0)
      me->h_bad++, me->h_errno = errno, me->h_what = 0;
    break;
  case 1:
    errno = 0;
    ret = pfutex(S.pair[0][(r >> 2) & 1], FUTEX_WAIT | fl_private(), 7, NULL, NULL, 0);
    if (!(ret == -1 && errno == EAGAIN))
      me->h_bad++, me->h_errno = errno, me->h_what = 1;
    break;
  case 2:
    ret = pfutex_wake(S.pair[0][(r >> 2) & 1], PFUTEX_BITSET_MATCH_ANY, 1, clean_flags());
    if (ret < 0 || ret > 1)
      me->h_bad++, me->h_errno = errno, me->h_what = 2;
    else
      me->h_counted += (unsigned long)ret;
    break;
  default:
    break;
  }
out:
  errno = e;
}

static void *
signaller_main(void *arg)
{
  uint64_t rng = *(uint64_t *)arg;
  while (!AO_load_acquire(&sw_sig_stop)) {
    struct timespec pace = { 0, 20000 + (long)(rnd(&rng) % 60000) };  /* pacing only */
    pthread_kill(S.w[rnd(&rng) % (uint32_t)S.nwaiters].th, SIGUSR1);
    nanosleep(&pace, NULL);
  }
  return NULL;
}
#endif

/* ---- One storm in this process ------------------------------------------- */

static unsigned long long
wake_all_counted(void)
{
  unsigned long long n = 0;
  int p, j;
  for (p = 0; p < S.npairs; p++)
    for (j = 0; j < 2; j++) {
      long r = pfutex(S.pair[p][j], FUTEX_WAKE | fl_private(), INT_MAX, NULL, NULL, 0);
      if (r > 0)
        n += (unsigned long)r;
    }
  return n;
}

static void
add_tot(struct tot *sum, const struct tot *t)
{
  sum->waits += t->waits;
  sum->ret0 += t->ret0;
  sum->etimedout += t->etimedout;
  sum->eintr += t->eintr;
  sum->eintr_untimed += t->eintr_untimed;
  sum->eagain += t->eagain;
  sum->wakes += t->wakes;
  sum->counted += t->counted;
  sum->stop_counted += t->stop_counted;
  sum->handler_calls += t->handler_calls;
  sum->handler_counted += t->handler_counted;
  sum->xnamed += t->xnamed;
  sum->xpub += t->xpub;
  sum->xunreach += t->xunreach;
  sum->xvx += t->xvx;
  sum->xvi += t->xvi;
  if (t->bad) {
    sum->bad += t->bad;
    sum->bad_errno = t->bad_errno;
    memcpy(sum->bad_what, t->bad_what, sizeof sum->bad_what);
  }
}

/* Run the storm's threads in this process for sw_seconds (or, when
 * `until_stop`, until *S.stop is set by someone else), stop them, and sum
 * this process's counts into *sum. */
static void
storm_run(uint64_t seed, int until_stop, struct tot *sum)
{
  int i;
  unsigned long long final;
#ifndef _WIN32
  pthread_t sig_th;
  uint64_t sig_seed = seed_of(seed, 99);
#endif

#ifdef PF_HAVE_EMU
  AO_t xn0 = AO_load(&pf_xmove_named_total), xp0 = AO_load(&pf_xmove_pub_total);
  AO_t xu0 = AO_load(&pf_xmove_unreachable_total), xv0 = AO_load(&pf_vx_followed_total);
  AO_t xi0 = AO_load(&pf_vx_intr_total);
#endif

  memset(sum, 0, sizeof *sum);
  AO_store(&S.out, 0);
  for (i = 0; i < S.nwaiters; i++) {
    memset(&S.w[i], 0, sizeof S.w[i]);
    S.w[i].rng = seed_of(seed, i);
    S.w[i].hrng = seed_of(seed, 1000 + i);
  }
  for (i = 0; i < S.nwakers; i++) {
    memset(&S.k[i], 0, sizeof S.k[i]);
    S.k[i].rng = seed_of(seed, 100 + i);
  }
  for (i = 0; i < S.nwaiters; i++)
    if (pthread_create(&S.w[i].th, NULL, waiter_main, &S.w[i]) != 0)
      sysbail("pthread_create");
  for (i = 0; i < S.nwakers; i++)
    if (pthread_create(&S.k[i].th, NULL, waker_main, &S.k[i]) != 0)
      sysbail("pthread_create");
#ifndef _WIN32
  if (S.sc->sigs != SIGS_NONE) {
    AO_store(&sw_sig_stop, 0);
    if (pthread_create(&sig_th, NULL, signaller_main, &sig_seed) != 0)
      sysbail("pthread_create");
  }
#endif

  if (until_stop) {
    while (!AO_load_acquire(S.stop)) {
      struct timespec tick = { 0, 5 * 1000 * 1000 };  /* polling the parent's flag */
      nanosleep(&tick, NULL);
    }
  } else {
    long long end = pft_now_ns() + (long long)(sw_seconds * 1e9);
    while (pft_now_ns() < end) {
      struct timespec tick = { 0, 5 * 1000 * 1000 };  /* the run's length only */
      nanosleep(&tick, NULL);
    }
    AO_store_release(S.stop, 1);
  }

  /* Stop: the signals first, then the wakers; then wake every word
   * (counted) until every waiter is out of its loop. */
#ifndef _WIN32
  if (S.sc->sigs != SIGS_NONE) {
    AO_store_release(&sw_sig_stop, 1);
    pthread_join(sig_th, NULL);
  }
#endif
  for (i = 0; i < S.nwakers; i++)
    pthread_join(S.k[i].th, NULL);
  while (AO_load_acquire(S.gout) < S.gtotal) {
    sum->stop_counted += wake_all_counted();
    sched_yield();
  }
  for (i = 0; i < S.nwaiters; i++)
    pthread_join(S.w[i].th, NULL);
  /* Every waiter (of every process) has returned: a wake now finds nobody
   * (a node left queued by a waiter that returned would be "woken" here). */
  final = wake_all_counted();
  if (final)
    bad(sum, "a final WAKE after every waiter returned", (long)final, 0);

  for (i = 0; i < S.nwaiters; i++) {
    add_tot(sum, &S.w[i].t);
    sum->handler_counted += S.w[i].h_counted;
    sum->handler_calls += S.w[i].h_calls;
    if (S.w[i].h_bad) {
      char what[48];
      snprintf(what, sizeof what, "signal handler's call %d", S.w[i].h_what);
      bad(sum, what, (long)S.w[i].h_bad, S.w[i].h_errno);
    }
  }
  for (i = 0; i < S.nwakers; i++)
    add_tot(sum, &S.k[i].t);
  sum->counted += sum->stop_counted + sum->handler_counted;
#ifdef PF_HAVE_EMU
  sum->xnamed = AO_load(&pf_xmove_named_total) - xn0;
  sum->xpub = AO_load(&pf_xmove_pub_total) - xp0;
  sum->xunreach = AO_load(&pf_xmove_unreachable_total) - xu0;
  sum->xvx = AO_load(&pf_vx_followed_total) - xv0;
  sum->xvi = AO_load(&pf_vx_intr_total) - xi0;
  if (sum->xunreach)
    bad(sum, "a moved wait's new node out of reach (a spurious wakeup; nobody died)",
        (long)sum->xunreach, 0);
#endif
}

/* ---- The word pairs ------------------------------------------------------ */

#ifdef PF_HAVE_EMU
/* The private table's bucket of a word, when the emulation is active. */
static long
bucket_of(uint32_t *w, int priv)
{
  struct pf_key k;
  if (!pft_backend_is_emu() || pf_table.nbuckets == 0)
    return -1;
  k.word = (uintptr_t)w;
  k.space = priv ? PF_KEY_PRIVATE : PF_KEY_SHARED_LOCAL;
  return (long)pf_key_hash(&k, pf_table.nbuckets);
}
#else
static long
bucket_of(uint32_t *w, int priv)
{
  (void)w, (void)priv;
  return -1;
}
#endif

/* Two pairs of words, each in one bucket: the first two word pairs found
 * (far from each other) whose words hash alike.  Without the hash, adjacent
 * words (which a table of one bucket, at least, puts together). */
static void
pairs_same(void)
{
  int i, j, n = 0;
  if (bucket_of(&sw_mem[0], 1) >= 0)
    for (n = 0; n < 2; n++) {
      uint32_t *half = &sw_mem[n * (SW_WORDS / 2)];
      int found = 0;
      for (i = 0; i < SW_WORDS / 2 && !found; i += 16)
        for (j = i + 1; j < SW_WORDS / 2 && !found; j++)
          if (bucket_of(&half[i], 1) == bucket_of(&half[j], 1)) {
            S.pair[n][0] = &half[i];
            S.pair[n][1] = &half[j];
            found = 1;
          }
      if (!found)
        break;
    }
  if (n < 2) {
    S.pair[0][0] = &sw_mem[0], S.pair[0][1] = &sw_mem[1];
    S.pair[1][0] = &sw_mem[SW_WORDS / 2], S.pair[1][1] = &sw_mem[SW_WORDS / 2 + 1];
  }
  S.npairs = 2;
}

static void
pairs_two(void)
{
  int i;
  S.pair[0][0] = &sw_mem[64], S.pair[0][1] = &sw_mem[65];
  S.pair[1][0] = &sw_mem[128], S.pair[1][1] = &sw_mem[SW_WORDS - 64];
  if (bucket_of(&sw_mem[0], 1) >= 0)
    for (i = 64; i < SW_WORDS / 2; i++)
      if (bucket_of(&sw_mem[i], 1) != bucket_of(&sw_mem[i + 1], 1)) {
        S.pair[0][0] = &sw_mem[i], S.pair[0][1] = &sw_mem[i + 1];
        break;
      }
  if (bucket_of(&sw_mem[0], 1) >= 0)
    for (i = SW_WORDS - 64; i > SW_WORDS / 2; i--)
      if (bucket_of(S.pair[1][0], 1) != bucket_of(&sw_mem[i], 1)) {
        S.pair[1][1] = &sw_mem[i];
        break;
      }
  S.npairs = 2;
}

static const char *
pairs_describe(char *buf, size_t len)
{
  size_t o = 0;
  int p;
  if (S.sc->pairs == PAIRS_TABLES)
    return "region 1 and private memory, region 1 and MAP_SHARED, region 1 and region 2";
  for (p = 0; p < S.npairs && o < len; p++) {
    long b0 = bucket_of(S.pair[p][0], S.sc->priv), b1 = bucket_of(S.pair[p][1], S.sc->priv);
    long dist = (long)(S.pair[p][1] - S.pair[p][0]);
    if (b0 >= 0)
      o += (size_t)snprintf(buf + o, len - o, "%s[+%ld words: buckets %ld, %ld]", p ? " " : "",
                            dist, b0, b1);
    else
      o += (size_t)snprintf(buf + o, len - o, "%s[+%ld words]", p ? " " : "", dist);
  }
  return buf;
}

/* ---- Scenarios ------------------------------------------------------------ */

static struct tot all_bad;
static unsigned long long restart_eintr_untimed;

static void
report(const struct scen *sc, const struct tot *sum, double secs)
{
  long long lost = (long long)sum->counted - (long long)sum->ret0;
  diag("%s: %.1f s: waits %llu, wakes %llu, counted %llu (%llu by the stop, %llu by handlers),"
       " returned 0 %llu, lost %lld; ETIMEDOUT %llu, EINTR %llu (untimed %llu), EAGAIN %llu,"
       " handler runs %llu, unexpected %llu",
       sc->name, secs, sum->waits, sum->wakes, sum->counted, sum->stop_counted,
       sum->handler_counted, sum->ret0, lost, sum->etimedout, sum->eintr,
       sum->eintr_untimed, sum->eagain, sum->handler_calls, sum->bad);
  if (sum->xnamed || sum->xpub)
    diag("%s: waiters moved across tables: %llu named in their records, %llu published in"
         " their nodes (%llu futex_waitv members followed there; %llu waitvs a move had"
         " rung ended by a handler's call)", sc->name, sum->xnamed, sum->xpub, sum->xvx,
         sum->xvi);
  if (sum->bad)
    diag("%s: %llu unexpected results, the last: %s, errno %s", sc->name, sum->bad,
         sum->bad_what, pft_errname(sum->bad_errno));
  is_int((long)sum->counted, (long)sum->ret0,
         "%s: waits that returned 0 == waiters the wakes counted", sc->name);
  if (sum->bad) {
    all_bad.bad += sum->bad;
    snprintf(all_bad.bad_what, sizeof all_bad.bad_what, "%.20s: %.70s", sc->name, sum->bad_what);
  }
}

#ifndef _WIN32
/* Three pairs across tables (made once, kept for the run). */
static void
pairs_tables(void)
{
  static pfutex_region_t *r1, *r2;
  static uint32_t *shm;
  if (!r1) {
    if (!(r1 = pfutex_region_anon(4096)) || !(r2 = pfutex_region_anon(4096)))
      sysbail("pfutex_region_anon");
    shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (shm == MAP_FAILED)
      sysbail("mmap");
  }
  S.pair[0][0] = (uint32_t *)pfutex_region_addr(r1), S.pair[0][1] = &sw_mem[256];
  S.pair[1][0] = (uint32_t *)pfutex_region_addr(r1) + 16, S.pair[1][1] = shm;
  S.pair[2][0] = (uint32_t *)pfutex_region_addr(r1) + 32;
  S.pair[2][1] = (uint32_t *)pfutex_region_addr(r2);
  S.npairs = 3;
}
#endif

static void
scen_local(const struct scen *sc, uint64_t seed)
{
  static AO_t stop;
  struct tot sum;
  char pd[160];
  long long t0;

  S.sc = sc;
  S.stop = &stop;
  AO_store(&stop, 0);
  S.nwaiters = SW_WAITERS;
  S.nwakers = SW_WAKERS;
  S.gout = &S.out;
  S.gtotal = SW_WAITERS;
  S.idle = &sw_idle_word;
  switch (sc->pairs) {
  case PAIRS_SAME:
    pairs_same();
    break;
  case PAIRS_TWO:
    pairs_two();
    break;
#ifndef _WIN32
  case PAIRS_TABLES:
    pairs_tables();
    break;
#endif
  default:
    S.pair[0][0] = &sw_mem[0], S.pair[0][1] = &sw_mem[1];
    S.npairs = 1;
    break;
  }
  diag("%s: seed %llu (thread i's: that + (i + 1) * 0x9e3779b97f4a7c15, odd), pairs %s",
       sc->name, (unsigned long long)seed, pairs_describe(pd, sizeof pd));
#ifndef _WIN32
  if (sc->sigs != SIGS_NONE)
    pft_install(SIGUSR1, sw_handler, sc->sigs == SIGS_RESTART ? SA_RESTART : 0);
#endif
  t0 = pft_now_ns();
  storm_run(seed, 0, &sum);
#ifndef _WIN32
  if (sc->sigs != SIGS_NONE)
    pft_install(SIGUSR1, SIG_IGN, 0);
#endif
  if (sc->sigs == SIGS_RESTART)
    restart_eintr_untimed = sum.eintr_untimed;
  report(sc, &sum, (double)(pft_now_ns() - t0) / 1e9);
}

#ifndef _WIN32
/* Region: the processes' shared part. */
struct rctl {
  AO_t stop;
  AO_t ready;
  AO_t out;                     /* waiters out of their loops, over every process */
  struct tot sum[SW_RPROCS];
};

static void
scen_region(const struct scen *sc, uint64_t seed)
{
  struct rctl *C = ru_shared_alloc(sizeof *C);
  pfutex_region_t *rg = pfutex_region_anon(4096), *rg2 = NULL;
  uint32_t *base, *base2 = NULL, *shm = NULL;
  pid_t pid[SW_RPROCS];
  struct tot sum;
  long long t0;
  int i, failed = 0;

  if (!rg)
    sysbail("pfutex_region_anon");
  base = pfutex_region_addr(rg);
  S.sc = sc;
  S.stop = &C->stop;
  S.nwaiters = SW_RWAITERS;
  S.nwakers = SW_RWAKERS;
  S.gout = &C->out;
  S.gtotal = SW_RPROCS * SW_RWAITERS;
  S.idle = &base[512];
  if (sc->pairs == PAIRS_XPROC) {
    if (!(rg2 = pfutex_region_anon(4096)))
      sysbail("pfutex_region_anon");
    base2 = pfutex_region_addr(rg2);
    shm = ru_shared_alloc(4096);
    S.pair[0][0] = &base[0], S.pair[0][1] = &base2[0];
    S.pair[1][0] = &base[16], S.pair[1][1] = &shm[0];
    S.pair[2][0] = &shm[16], S.pair[2][1] = &base2[16];
    S.npairs = 3;
    diag("%s: seed %llu (process k: that + k), %d processes x %d waiters and %d waker(s),"
         " pairs: two regions', a region's and a MAP_SHARED mapping's, that mapping's and"
         " the second region's", sc->name, (unsigned long long)seed, SW_RPROCS, SW_RWAITERS,
         SW_RWAKERS);
  } else {
    S.pair[0][0] = &base[0], S.pair[0][1] = &base[16];
    S.npairs = 1;
    diag("%s: seed %llu (process k: that + k), %d processes x %d waiters and %d waker(s),"
         " words at region offsets 0 and 64", sc->name, (unsigned long long)seed, SW_RPROCS,
         SW_RWAITERS, SW_RWAKERS);
  }
  t0 = pft_now_ns();
  fflush(stdout);
  for (i = 0; i < SW_RPROCS; i++) {
    if ((pid[i] = fork()) == 0) {
      ru_child_alarm(60 + (unsigned int)(sw_seconds * 4));
      AO_fetch_and_add1_full(&C->ready);
      storm_run(seed + (uint64_t)i, 1, &C->sum[i]);
      _exit(0);
    }
    if (pid[i] < 0)
      sysbail("fork");
  }
  /* The run's length, once every process has started. */
  while (AO_load_acquire(&C->ready) < SW_RPROCS) {
    struct timespec tick = { 0, 1000 * 1000 };
    nanosleep(&tick, NULL);
  }
  {
    long long end = pft_now_ns() + (long long)(sw_seconds * 1e9);
    while (pft_now_ns() < end) {
      struct timespec tick = { 0, 5 * 1000 * 1000 };
      nanosleep(&tick, NULL);
    }
  }
  AO_store_release(&C->stop, 1);
  memset(&sum, 0, sizeof sum);
  for (i = 0; i < SW_RPROCS; i++) {
    int st = ru_reap(pid[i]);
    if (st != 0) {
      diag("%s: process %d ended with status %d", sc->name, i, st);
      failed++;
    }
    add_tot(&sum, &C->sum[i]);
  }
  if (failed)
    bad(&sum, "a region process's exit status", failed, 0);
  report(sc, &sum, (double)(pft_now_ns() - t0) / 1e9);
  pfutex_region_close(rg);
  if (rg2)
    pfutex_region_close(rg2);
  if (shm)
    munmap(shm, 4096);
  munmap(C, sizeof *C);
}
#endif

int
main(void)
{
  const char *env = getenv("PFUTEX_STORM_SECONDS"), *only = getenv("PFUTEX_STORM_ONLY");
  const char *senv = getenv("PFUTEX_STORM_SEED");
  uint64_t seed;
  int i;

  if (env && atof(env) > 0)
    sw_seconds = atof(env);
  if ((env = getenv("PFUTEX_STORM_OPS")) != NULL) {
    static const char *const names[] = { "cmp_requeue", "requeue", "wake", "wake_bitset", "wake_op" };
    while (*env) {
      size_t len = strcspn(env, ", ");
      for (i = 0; i < 5 && !(strlen(names[i]) == len && strncmp(env, names[i], len) == 0); i++)
        ;
      if (len && i == 5)
        bail("PFUTEX_STORM_OPS: unknown op %.*s", (int)len, env);
      if (len)
        sw_ops_override |= 1u << i;
      env += len + (env[len] != 0);
    }
  }
  seed = senv ? (uint64_t)strtoull(senv, NULL, 0)
              : (uint64_t)pft_now_ns() * 2654435761u ^ (uint64_t)getpid();
  plan((unsigned long)NSCENS + 2);
  pft_watchdog(120 + (unsigned int)(sw_seconds * NSCENS * 3));
  diag("backend %s, %.2f s per scenario, seed %llu%s", pfutex_backend() ? pfutex_backend() : "none",
       sw_seconds, (unsigned long long)seed, sw_ops_override ? ", ops from PFUTEX_STORM_OPS" : "");
  /* The first call starts the backend (and the table whose buckets
   * pairs_same reads). */
  pfutex(&sw_idle_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  have_waitv = pft_have_waitv();            /* (not under qemu-user) */

  for (i = 0; i < NSCENS; i++) {
    const struct scen *sc = &scens[i];
    uint64_t s = seed_of(seed, 10000 * (i + 1));
    if (only && !strstr(sc->name, only)) {
      skip("%s: not selected by PFUTEX_STORM_ONLY", sc->name);
      continue;
    }
#ifdef _WIN32
    if (sc->sigs != SIGS_NONE || sc->pairs >= PAIRS_REGION) {
      skip("%s: Windows: no signals or fork(), no shared ops on a mapping", sc->name);
      continue;
    }
#else
# ifdef PFT_TSAN
    if (sc->sigs != SIGS_NONE || sc->pairs == PAIRS_REGION || sc->pairs == PAIRS_XPROC) {
      skip("%s: ThreadSanitizer (signal deferral, fork)", sc->name);
      continue;
    }
# endif
    if (sc->pairs == PAIRS_REGION || sc->pairs == PAIRS_XPROC) {
      scen_region(sc, s);
      continue;
    }
#endif
    scen_local(sc, s);
  }
  is_int(0, (long)all_bad.bad, "no call returned an unexpected result%s%s",
         all_bad.bad ? ": the last, " : "", all_bad.bad ? all_bad.bad_what : "");
  is_int(0, (long)restart_eintr_untimed,
         "under SA_RESTART handlers, no untimed wait returned EINTR");
  return 0;
}
