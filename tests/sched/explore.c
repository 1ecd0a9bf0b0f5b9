/* explore.c - the schedule explorer: the real engine (src/) under a
 * controlled scheduler (ctl.c), over small scenarios of 2-4 threads on
 * private words, one fresh process per schedule; and over shared region
 * words ("r:" scenarios), one thread per process, in a fresh set of
 * processes per schedule, where the scheduler may kill one process at any
 * one of its points (owner death).
 *
 * Strategies, per scenario:
 *   dfs  every schedule with at most 0, then 1, then 2 preemptions
 *        (iterative context bounding), depth first, up to a budget (a
 *        kill is a choice of its own, not counted as a preemption);
 *   kill (scenarios with a killable thread) the preemption-free schedule
 *        with the kill at its k-th point, for every k;
 *   pct  random schedules with priority change points (PCT, depth d),
 *        one per seed, with the kill (if any) at a random point.
 * Checks per schedule: the wake counts are exact (the wakes' and wake_ops'
 * returns, plus min(ret, nr_wake) of each requeue, equal the waits that
 * returned 0 plus the futex_waitv members found woken, src/waitv.c's
 * pf_vx_woken_total around the call; a waitv returns an index exactly
 * when it found one); every wait returns 0, EAGAIN, ETIMEDOUT (a timed one) or
 * EINTR (a signal came); a futex_waitv a handler's pfutex call detached
 * does not time out unless a timeout fired on it before (it must not sleep
 * again: src/waitv.c vx_intr); no thread is left asleep (all blocked with no
 * timeout left to fire is a deadlock); after a wake of every waiter of a
 * word whose value changed, no waiter parked on it with that key is still
 * queued (the lost wakeup); at the end, a wake of INT_MAX on every word
 * returns 0 and the buckets' waiter counts are back to 0.  With a death
 * (check_end_region): a wake never counts a waiter that was dead and
 * still queued (the counts may differ only by what the dead thread's own
 * op did: a wait woken before it died, a wake that never returned); a
 * live waiter behind a dead one is woken, and a lock held by the dead
 * process is taken over (else: deadlock); at the end the region checks
 * consistent (pf_region_check) and, after scavenging, holds no slot.
 *
 * Time and death.  Controlled threads see a frozen virtual clock
 * (ctl.c): a region's 1 s lock lease (src/region/lock.c) never expires,
 * and its 1 s park slices (wait.c (R)) and bounded collects are fired by the
 * scheduler, only once the waiter was counted (its slot no longer
 * QUEUED; before that a slice only parks again).  A region's timed wait
 * takes a deadline half a slice from the virtual now, so it is one park
 * the scheduler may fire.  At a stall (no thread can run) with a thread
 * asleep in a slice, 1 s of virtual time passes and that slice ends
 * (twice at most in a schedule): a timed futex_waitv moved into a table
 * it had no word in polls in slices until its deadline.  A killed
 * process is reaped by the schedule's root before anyone runs again: kill(pid, 0), the region code's test,
 * then says it is dead (a zombie would pass for alive).
 *
 * Usage: explore [-s SCENARIO] [-m dfs|pct|kill] [-n RUNS] [-d DEPTH] [-S SEED]
 *                [-r REPLAY] [-l]
 * With no -s, every scenario.  RUNS (default $SCHED_RUNS, else make
 * check's budget: 150 dfs schedules and 100 pct seeds, 60 and 40 for a
 * region scenario, and the whole kill sweep) bounds the
 * schedules of each strategy; DEPTH is pct's d (default 3: two change
 * points; the late waiter of most scenarios needs two preemptions).  A failing
 * schedule prints the check that failed and the -r string that replays it:
 * "dfs:POS=CHOICE,...", "kill:K" or "pct:D:K:SEED".  -l
 * lists the scenarios.  Prints TAP: one test per scenario and strategy. */
#include "emu.h"
#include "ctl.h"
#include "basic.h"
#include "pft.h"
#include "region/internal.h"
#include <pfutex/linux.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- Scenarios ---------------------------------------------------------------- */
enum { W_A, W_B, W_C, W_D, W_N };       /* D: another word in A's bucket */
enum {
  OP_END, OP_SET, OP_WAIT, OP_WAKE, OP_REQUEUE, OP_CMP_REQUEUE, OP_WAKE_OP, OP_WAITV,
  OP_LOCK_PI, OP_UNLOCK_PI
};
struct op {
  int kind, w, w2;
  uint32_t val;                         /* SET: the value; WAIT: expected; CMP_REQUEUE: val3 */
  int nr, nr2;
  uint32_t mask;                        /* WAIT / WAKE: bitset (0: match any) */
  int timed;                            /* WAIT */
  int all;                              /* WAKE: nr covers every waiter: the lost-wakeup check */
};
#define SET(w, v) { OP_SET, w, 0, v, 0, 0, 0, 0, 0 }
#define WAIT(w) { OP_WAIT, w, 0, 0, 0, 0, 0, 0, 0 }
#define TWAIT(w) { OP_WAIT, w, 0, 0, 0, 0, 0, 1, 0 }
#define BWAIT(w, m, t) { OP_WAIT, w, 0, 0, 0, 0, m, t, 0 }
#define WAKE(w, n) { OP_WAKE, w, 0, 0, n, 0, 0, 0, 0 }
#define WAKEALL(w) { OP_WAKE, w, 0, 0, INT_MAX, 0, 0, 0, 1 }
#define BWAKEALL(w, m) { OP_WAKE, w, 0, 0, INT_MAX, 0, m, 0, 1 }
#define REQUEUE(w, w2, n, n2) { OP_REQUEUE, w, w2, 0, n, n2, 0, 0, 0 }
#define CMPREQ(w, v, w2, n, n2) { OP_CMP_REQUEUE, w, w2, v, n, n2, 0, 0, 0 }
#define WAKEOP(w, w2, n, n2) { OP_WAKE_OP, w, w2, 0, n, n2, 0, 0, 0 }
/* futex_waitv on w (entry 0) and w2 (entry 1), both expecting 0: one
 * waitv thread per process (its members found woken are counted from
 * the engine's pf_vx_woken_total around the call) */
#define WAITV(w, w2) { OP_WAITV, w, w2, 0, 0, 0, 0, 0, 0 }
#define TWAITV(w, w2) { OP_WAITV, w, w2, 0, 0, 0, 0, 1, 0 }
/* The PI lock ops (src/pi.c) on w: LOCK_PI (untimed, or timed: its
 * timeout the scheduler's to fire), TRYLOCK_PI (nr 1), and UNLOCK_PI of a
 * lock this thread holds (nothing when its lock did not take it).  The
 * critical section between a lock and its unlock is checked exclusive,
 * the word naming its holder; at the end the word is 0. */
#define LOCKPI(w) { OP_LOCK_PI, w, 0, 0, 0, 0, 0, 0, 0 }
#define TLOCKPI(w) { OP_LOCK_PI, w, 0, 0, 0, 0, 0, 1, 0 }
#define TRYLOCKPI(w) { OP_LOCK_PI, w, 0, 0, 1, 0, 0, 0, 0 }
#define UNLOCKPI(w) { OP_UNLOCK_PI, w, 0, 0, 0, 0, 0, 0, 0 }
#define END { OP_END, 0, 0, 0, 0, 0, 0, 0, 0 }

struct scenario {
  const char *name;
  int nth;
  int sig[SCHED_MAXT];                  /* may be signalled (once per schedule) */
  int dfs;                              /* small enough for the exhaustive search */
  struct op ops[SCHED_MAXT][8];
  /* Region scenarios: the words are in an anonymous region, the ops shared
   * (no PFUTEX_PRIVATE), thread t runs in process proc[t] (one process per
   * thread here), and the scheduler may kill the process of a thread with
   * kill[t] at any one of its points (once per schedule). */
  int region;
  int proc[SCHED_MAXT];
  int kill[SCHED_MAXT];
};

/* Every waiter is woken for sure by the end (a word changes, then a wake
 * covers it), or is timed, so a thread left asleep is a bug. */
#define PRIV 0, { 0 }, { 0 }
static const struct scenario scenarios[] = {
  { "wait/wake", 2, { 0 }, 1,
    { { WAIT(W_A), END }, { SET(W_A, 1), WAKEALL(W_A), END } }, PRIV },
  { "timedwait/wake", 2, { 0 }, 1,
    { { TWAIT(W_A), END }, { SET(W_A, 1), WAKE(W_A, 1), END } }, PRIV },
  { "sigwait/wake", 2, { 1, 0 }, 1,
    { { WAIT(W_A), END }, { SET(W_A, 1), WAKEALL(W_A), END } }, PRIV },
  { "wait,wait/wake1,wake1", 3, { 0 }, 1,
    { { WAIT(W_A), END }, { WAIT(W_A), END }, { SET(W_A, 1), WAKE(W_A, 1), WAKE(W_A, 1), END } }, PRIV },
  { "bitset/wake_bitset", 3, { 0 }, 1,
    { { BWAIT(W_A, 1, 0), END }, { BWAIT(W_A, 2, 1), END },
      { SET(W_A, 1), BWAKEALL(W_A, 1), WAKE(W_A, 1), END } }, PRIV },
  { "timedwait/cmp_requeue", 2, { 0 }, 1,
    { { TWAIT(W_A), END }, { CMPREQ(W_A, 0, W_B, 1, 1), SET(W_B, 1), WAKEALL(W_B), END } }, PRIV },
  { "wait,wait/requeue", 3, { 0 }, 1,
    { { WAIT(W_A), END }, { WAIT(W_B), END },
      { SET(W_A, 1), REQUEUE(W_A, W_B, 1, 1), SET(W_B, 1), WAKEALL(W_B), END } }, PRIV },
  { "timedwait,timedwait/cmp_requeue", 3, { 0 }, 1,
    { { TWAIT(W_A), END }, { TWAIT(W_B), END },
      { SET(W_A, 1), CMPREQ(W_A, 1, W_B, 1, 1), SET(W_B, 1), WAKEALL(W_B), END } }, PRIV },
  { "timedwait;timedwait/cmp_requeue", 2, { 0 }, 1,
    { { TWAIT(W_A), TWAIT(W_B), END },
      { SET(W_A, 1), CMPREQ(W_A, 1, W_B, 1, 1), SET(W_B, 1), WAKEALL(W_B), END } }, PRIV },
  { "wait,wait/wake_op", 3, { 0 }, 1,
    { { WAIT(W_A), END }, { TWAIT(W_B), END },
      { SET(W_A, 1), WAKEOP(W_A, W_B, 1, 1), END } }, PRIV },
  { "sigwait,wait/cmp_requeue", 3, { 1, 0, 0 }, 0,
    { { WAIT(W_A), END }, { WAIT(W_A), END },
      { SET(W_A, 1), CMPREQ(W_A, 1, W_B, 1, 1), SET(W_B, 1), WAKEALL(W_B), END } }, PRIV },
  { "timedwait,wait/cmp_requeue one bucket", 3, { 0 }, 0,
    { { TWAIT(W_A), END }, { WAIT(W_D), END },
      { SET(W_A, 1), CMPREQ(W_A, 1, W_D, 1, 1), SET(W_D, 1), WAKEALL(W_D), END } }, PRIV },
  /* futex_waitv (src/waitv.c): members counted one by one, the parker
   * rung once; the wakes' counts must equal the members the waitv's end
   * found woken */
  { "waitv/wake", 2, { 0 }, 1,
    { { WAITV(W_A, W_B), END }, { SET(W_B, 1), WAKEALL(W_B), END } }, PRIV },
  { "timedwaitv/wake,wake", 2, { 0 }, 1,
    { { TWAITV(W_A, W_B), END }, { SET(W_A, 1), WAKE(W_A, 1), SET(W_B, 1), WAKE(W_B, 1), END } },
    PRIV },
  { "waitv,wait/wake1,wake1", 3, { 0 }, 1,
    { { WAITV(W_A, W_B), END }, { WAIT(W_A), END },
      { SET(W_A, 1), WAKE(W_A, 1), WAKE(W_A, 1), SET(W_B, 1), WAKEALL(W_B), END } }, PRIV },
  { "timedwaitv/cmp_requeue", 2, { 0 }, 1,
    { { TWAITV(W_A, W_B), END },
      { SET(W_A, 1), CMPREQ(W_A, 1, W_C, 0, 1), SET(W_C, 1), WAKEALL(W_C), END } }, PRIV },
  { "waitv/wake_op", 2, { 0 }, 1,
    { { WAITV(W_A, W_B), END }, { SET(W_A, 1), WAKEOP(W_A, W_B, 1, 1), END } }, PRIV },
  { "sigwaitv/wake", 2, { 1, 0 }, 1,
    { { TWAITV(W_A, W_B), END }, { SET(W_A, 1), WAKE(W_A, 1), END } }, PRIV },
  { "2 timedwait,wait/cmp_requeue", 4, { 0 }, 0,
    { { TWAIT(W_A), END }, { TWAIT(W_A), END }, { WAIT(W_B), END },
      { SET(W_A, 1), CMPREQ(W_A, 1, W_B, 1, 1), SET(W_B, 1), WAKEALL(W_B), END } }, PRIV },

  /* The PI lock ops: the uncontended fast path (F), the hand-off to a
   * queued locker, a trylock's EAGAIN, a timed locker's timeout racing
   * the hand-off (woken wins: it then holds the lock) */
  { "pi:lock/lock", 2, { 0 }, 1,
    { { LOCKPI(W_A), UNLOCKPI(W_A), END }, { LOCKPI(W_A), UNLOCKPI(W_A), END } }, PRIV },
  { "pi:lock/trylock", 2, { 0 }, 1,
    { { LOCKPI(W_A), UNLOCKPI(W_A), END }, { TRYLOCKPI(W_A), UNLOCKPI(W_A), END } }, PRIV },
  { "pi:lock/timedlock", 2, { 0 }, 1,
    { { LOCKPI(W_A), UNLOCKPI(W_A), END }, { TLOCKPI(W_A), UNLOCKPI(W_A), END } }, PRIV },
  { "pi:lock;lock/lock", 2, { 0 }, 1,
    { { LOCKPI(W_A), UNLOCKPI(W_A), LOCKPI(W_A), UNLOCKPI(W_A), END },
      { LOCKPI(W_A), UNLOCKPI(W_A), END } }, PRIV },
  { "pi:lock,timedlock/lock", 3, { 0 }, 0,
    { { LOCKPI(W_A), UNLOCKPI(W_A), END }, { TLOCKPI(W_A), UNLOCKPI(W_A), END },
      { LOCKPI(W_A), UNLOCKPI(W_A), END } }, PRIV },

  /* ---- Shared regions, waiter and waker in different processes ---- */
#define RGN(...) 1, { 0, 1, 2, 3 }, { __VA_ARGS__ }
  { "r:wait/wake", 2, { 0 }, 1,
    { { WAIT(W_A), END }, { SET(W_A, 1), WAKEALL(W_A), END } }, RGN(0) },
  { "r:timedwait/wake", 2, { 0 }, 1,
    { { TWAIT(W_A), END }, { SET(W_A, 1), WAKE(W_A, 1), END } }, RGN(0) },
  { "r:wait,wait/requeue", 3, { 0 }, 1,
    { { WAIT(W_A), END }, { WAIT(W_B), END },
      { SET(W_A, 1), REQUEUE(W_A, W_B, 1, 1), SET(W_B, 1), WAKEALL(W_B), END } }, RGN(0) },
  { "r:timedwait,timedwait/cmp_requeue", 3, { 0 }, 1,
    { { TWAIT(W_A), END }, { TWAIT(W_B), END },
      { SET(W_A, 1), CMPREQ(W_A, 1, W_B, 1, 1), SET(W_B, 1), WAKEALL(W_B), END } }, RGN(0) },
  { "r:wait,timedwait/wake_op", 3, { 0 }, 1,
    { { WAIT(W_A), END }, { TWAIT(W_B), END },
      { SET(W_A, 1), WAKEOP(W_A, W_B, 1, 1), END } }, RGN(0) },
  /* ---- Owner death: the flagged thread's process dies at one of its points ---- */
  { "r:wait+dies/wake", 2, { 0 }, 1,
    { { WAIT(W_A), END }, { SET(W_A, 1), WAKEALL(W_A), END } }, RGN(1, 0) },
  { "r:timedwait/wake+dies", 2, { 0 }, 1,
    { { TWAIT(W_A), END }, { SET(W_A, 1), WAKE(W_A, 1), END } }, RGN(0, 1) },
  { "r:wait+dies,wait/wake1,wake1", 3, { 0 }, 1,
    { { WAIT(W_A), END }, { WAIT(W_A), END },
      { SET(W_A, 1), WAKE(W_A, 1), WAKE(W_A, 1), END } }, RGN(1, 0, 0) },
  { "r:wait/wake+dies,wake", 3, { 0 }, 1,
    { { WAIT(W_A), END }, { SET(W_A, 1), WAKEALL(W_A), END },
      { SET(W_A, 1), WAKEALL(W_A), END } }, RGN(0, 1, 0) },
  { "r:wait+dies,wait/cmp_requeue", 3, { 0 }, 1,
    { { WAIT(W_A), END }, { WAIT(W_A), END },
      { SET(W_A, 1), CMPREQ(W_A, 1, W_B, 1, 1), SET(W_B, 1), WAKEALL(W_B), END } }, RGN(1, 0, 0) },
  { "r:wait/cmp_requeue+dies,wake", 3, { 0 }, 1,
    { { WAIT(W_A), END }, { SET(W_A, 1), CMPREQ(W_A, 1, W_B, 0, 1), END },
      { SET(W_A, 1), WAKEALL(W_A), SET(W_B, 1), WAKEALL(W_B), END } }, RGN(0, 1, 0) },
  { "r:timedwait+dies,wait/wake_op", 3, { 0 }, 1,
    { { TWAIT(W_B), END }, { WAIT(W_A), END },
      { SET(W_A, 1), WAKEOP(W_A, W_B, 1, 1), END } }, RGN(1, 0, 0) },
  { "r:wait/wake_op+dies,wake", 3, { 0 }, 1,
    { { WAIT(W_A), END }, { WAKEOP(W_A, W_B, 1, 1), END },
      { SET(W_A, 1), WAKEALL(W_A), END } }, RGN(0, 1, 0) },
  { "r:wait,timedwait+dies/requeue", 3, { 0 }, 1,
    { { WAIT(W_A), END }, { TWAIT(W_A), END },
      { SET(W_A, 1), REQUEUE(W_A, W_B, 1, 1), SET(W_B, 1), WAKEALL(W_B), END } }, RGN(0, 1, 0) },
  /* PI lock ops on a region's word, lockers in different processes */
  { "r:pi:lock/lock", 2, { 0 }, 1,
    { { LOCKPI(W_A), UNLOCKPI(W_A), END }, { LOCKPI(W_A), UNLOCKPI(W_A), END } }, RGN(0) },
  { "r:pi:lock/timedlock", 2, { 0 }, 1,
    { { LOCKPI(W_A), UNLOCKPI(W_A), END }, { TLOCKPI(W_A), UNLOCKPI(W_A), END } }, RGN(0) },
  /* futex_waitv on a region's words: its parker and members are slots */
  { "r:waitv/wake", 2, { 0 }, 1,
    { { WAITV(W_A, W_B), END }, { SET(W_B, 1), WAKEALL(W_B), END } }, RGN(0) },
  { "r:timedwaitv/wake_op", 2, { 0 }, 1,
    { { TWAITV(W_A, W_B), END }, { SET(W_A, 1), WAKEOP(W_A, W_B, 1, 1), END } }, RGN(0) },
  { "r:waitv/wake B+dies,wake B", 3, { 0 }, 1,
    { { WAITV(W_A, W_B), END }, { SET(W_B, 1), WAKEALL(W_B), END },
      { SET(W_B, 1), WAKEALL(W_B), END } }, RGN(0, 1, 0) },
  { "r:waitv+dies/wake A,wake B", 2, { 0 }, 1,
    { { WAITV(W_A, W_B), END }, { SET(W_A, 1), WAKE(W_A, 1), SET(W_B, 1), WAKEALL(W_B), END } },
    RGN(1, 0) },
  /* futex_waitv over two regions (A in the first, B and C in the second):
   * a wake through the second rings its own parker, which the waitv looks
   * at after each slice (src/waitv.c); the scheduler fires a slice once
   * that end would find something (src/schedpt.h pf_sched_alt) */
#define RGN2(...) 2, { 0, 1, 2, 3 }, { __VA_ARGS__ }
  { "r2:waitv/wake B", 2, { 0 }, 1,
    { { WAITV(W_A, W_B), END }, { SET(W_B, 1), WAKEALL(W_B), END } }, RGN2(0) },
  { "r2:timedwaitv/wake A,wake B", 2, { 0 }, 1,
    { { TWAITV(W_A, W_B), END }, { SET(W_A, 1), WAKE(W_A, 1), SET(W_B, 1), WAKE(W_B, 1), END } },
    RGN2(0) },
  { "r2:waitv,wait B/wake1 B,wake1 B", 3, { 0 }, 1,
    { { WAITV(W_A, W_B), END }, { WAIT(W_B), END },
      { SET(W_B, 1), WAKE(W_B, 1), WAKE(W_B, 1), END } }, RGN2(0, 0, 0) },
  { "r2:waitv/cmp_requeue B->C", 2, { 0 }, 1,
    { { WAITV(W_A, W_B), END },
      { SET(W_B, 1), CMPREQ(W_B, 1, W_C, 0, 1), SET(W_C, 1), WAKEALL(W_C), END } }, RGN2(0) },
  { "r2:timedwaitv/wake_op A,B", 2, { 0 }, 1,
    { { TWAITV(W_A, W_B), END }, { SET(W_A, 1), WAKEOP(W_A, W_B, 1, 1), END } }, RGN2(0) },
  /* the waker dies at any of its points: a member it counted (WAKING)
   * before it could ring the second region's parker is found by the
   * waitv's slice end; the second waker's wake covers the rest */
  /* the waitv's process dies at any of its points: wakes then count
   * only the members they found WAKING before it died, and both regions
   * give its slots back */
  { "r2:waitv+dies/wake A,wake B", 2, { 0 }, 1,
    { { WAITV(W_A, W_B), END }, { SET(W_A, 1), WAKE(W_A, 1), SET(W_B, 1), WAKEALL(W_B), END } },
    RGN2(1, 0) },
  { "r2:waitv/wake B+dies,wake B", 3, { 0 }, 1,
    { { WAITV(W_A, W_B), END }, { SET(W_B, 1), WAKEALL(W_B), END },
      { SET(W_B, 1), WAKEALL(W_B), END } }, RGN2(0, 1, 0) },
  /* A requeue between tables (src/requeue.c, wait.c (M)): the moved
   * waiter adopts a node of the target table.  Waiter and requeuer are
   * threads of one process (only this process's waiters move across
   * tables); "x2:" A in the first region, B in the second; "xp:" C a word
   * of the process's private memory (shared ops: its own table, the node
   * a lent record's; its threads all in one process: the controller
   * reads a parked thread's token, which is in that process's memory).
   * A timeout, a second move, or a wake (from another process: x2) may
   * come before the waiter adopted its new node. */
#define XRG(r, ...) r, { __VA_ARGS__ }, { 0 }
  { "x2:timedwait/cmp_requeue A->B,wake B", 2, { 0 }, 1,
    { { TWAIT(W_A), END }, { SET(W_A, 1), CMPREQ(W_A, 1, W_B, 0, 1), SET(W_B, 1), WAKEALL(W_B), END } },
    XRG(2, 0, 0) },
  { "x2:wait/requeue A->B->A,wake A", 2, { 0 }, 1,
    { { WAIT(W_A), END },
      { SET(W_A, 1), REQUEUE(W_A, W_B, 0, 1), REQUEUE(W_B, W_A, 0, 1), WAKEALL(W_A), END } },
    XRG(2, 0, 0) },
  { "x2:timedwait/cmp_requeue A->B/wake1 B", 3, { 0 }, 1,
    { { TWAIT(W_A), END }, { SET(W_A, 1), CMPREQ(W_A, 1, W_B, 0, 1), END }, { WAKE(W_B, 1), END } },
    XRG(2, 0, 0, 1) },
  { "x2:timedwait/requeue A->B/requeue B->A/wake1 A,wake1 B", 4, { 0 }, 0,
    { { TWAIT(W_A), END }, { REQUEUE(W_A, W_B, 0, 1), END }, { REQUEUE(W_B, W_A, 0, 1), END },
      { WAKE(W_A, 1), WAKE(W_B, 1), END } }, XRG(2, 0, 0, 0, 0) },
  { "x2:timedwait,timedwait/requeue A->B/requeue1+1 B->A", 4, { 0 }, 0,
    { { TWAIT(W_A), END }, { TWAIT(W_B), END }, { REQUEUE(W_A, W_B, 0, 2), END },
      { REQUEUE(W_B, W_A, 1, 1), WAKE(W_A, 1), END } }, XRG(2, 0, 0, 0, 0) },
  { "xp:timedwait/cmp_requeue A->C,wake C", 2, { 0 }, 1,
    { { TWAIT(W_A), END }, { SET(W_A, 1), CMPREQ(W_A, 1, W_C, 0, 1), SET(W_C, 1), WAKEALL(W_C), END } },
    XRG(3, 0, 0) },
  { "xp:wait/requeue C->A->C,wake C", 2, { 0 }, 1,
    { { WAIT(W_C), END },
      { SET(W_C, 1), REQUEUE(W_C, W_A, 0, 1), REQUEUE(W_A, W_C, 0, 1), WAKEALL(W_C), END } },
    XRG(3, 0, 0) },
  { "xp:timedwait/cmp_requeue C->A/wake1 A", 3, { 0 }, 1,
    { { TWAIT(W_C), END }, { SET(W_C, 1), CMPREQ(W_C, 1, W_A, 0, 1), END }, { WAKE(W_A, 1), END } },
    XRG(3, 0, 0, 0) },
  /* "x2o:": the waiter another process's, so its new node is published
   * in the node it leaves (src/requeue.c): found among its own tables,
   * a slot queued as the requeuer's and given to it.  Moved again before
   * it adopted (by the same requeuer or a third process), moved in one
   * requeue with a waiter of the requeuer's own (named in its record),
   * and the requeuer killed at any of its points (the waiter stays, is
   * moved, or ends with a spurious wakeup: never a node counted that
   * nobody adopts). */
  { "x2o:timedwait/cmp_requeue A->B,wake B", 2, { 0 }, 1,
    { { TWAIT(W_A), END }, { SET(W_A, 1), CMPREQ(W_A, 1, W_B, 0, 1), SET(W_B, 1), WAKEALL(W_B), END } },
    XRG(2, 1, 0) },
  { "x2o:wait/requeue A->B->A,wake A", 2, { 0 }, 1,
    { { WAIT(W_A), END },
      { SET(W_A, 1), REQUEUE(W_A, W_B, 0, 1), REQUEUE(W_B, W_A, 0, 1), WAKEALL(W_A), END } },
    XRG(2, 1, 0) },
  { "x2o:timedwait/cmp_requeue A->B/wake1 B", 3, { 0 }, 1,
    { { TWAIT(W_A), END }, { SET(W_A, 1), CMPREQ(W_A, 1, W_B, 0, 1), END }, { WAKE(W_B, 1), END } },
    XRG(2, 1, 0, 2) },
  { "x2o:timedwait/requeue A->B/requeue B->A/wake1 A,wake1 B", 4, { 0 }, 0,
    { { TWAIT(W_A), END }, { REQUEUE(W_A, W_B, 0, 1), END }, { REQUEUE(W_B, W_A, 0, 1), END },
      { WAKE(W_A, 1), WAKE(W_B, 1), END } }, XRG(2, 1, 0, 2, 0) },
  { "x2o:timedwait,timedwait/requeue A->B/requeue1+1 B->A", 4, { 0 }, 0,
    { { TWAIT(W_A), END }, { TWAIT(W_A), END }, { REQUEUE(W_A, W_B, 0, 2), END },
      { REQUEUE(W_B, W_A, 1, 1), WAKE(W_A, 1), END } }, XRG(2, 1, 0, 0, 0) },
  { "x2o:wait/requeue A->B+dies,wake A,wake B", 3, { 0 }, 1,
    { { WAIT(W_A), END }, { REQUEUE(W_A, W_B, 0, 1), END },
      { SET(W_A, 1), WAKEALL(W_A), SET(W_B, 1), WAKEALL(W_B), END } },
    2, { 1, 0, 2 }, { 0, 1, 0 } },
  /* (compare-requeues: a move onto a word after its last wake would
   * leave the waiter asleep there, as on Linux) */
  { "x2o:wait/cmp_requeue A->B->D+dies,wake A,wake B,wake D", 3, { 0 }, 1,
    { { WAIT(W_A), END }, { CMPREQ(W_A, 0, W_B, 0, 1), CMPREQ(W_B, 0, W_D, 0, 1), END },
      { SET(W_A, 1), WAKEALL(W_A), SET(W_B, 1), WAKEALL(W_B), SET(W_D, 1), WAKEALL(W_D), END } },
    2, { 1, 0, 2 }, { 0, 1, 0 } },
  /* futex_waitv members moved between tables (src/waitv.c (M)): to a
   * table where the waitv has no parker yet (A,D -> B: one made for it
   * when it follows) or has one (A,C -> B), there and back, a wake
   * before it followed; the waitv a thread of the requeuer's process
   * ("x2v:", "xpv:": C and D private memory, so C,D is a waitv that
   * parks in no region until it follows its member there) or of another
   * ("x2ov:"), and the requeuer killed at any of its points */
  { "x2v:waitv A,D/cmp_requeue A->B,wake B", 2, { 0 }, 1,
    { { WAITV(W_A, W_D), END }, { SET(W_A, 1), CMPREQ(W_A, 1, W_B, 0, 1), SET(W_B, 1), WAKEALL(W_B), END } },
    XRG(2, 0, 0) },
  { "x2ov:waitv A,D/cmp_requeue A->B,wake B", 2, { 0 }, 1,
    { { WAITV(W_A, W_D), END }, { SET(W_A, 1), CMPREQ(W_A, 1, W_B, 0, 1), SET(W_B, 1), WAKEALL(W_B), END } },
    XRG(2, 1, 0) },
  { "x2ov:waitv A,C/cmp_requeue A->B/wake A,wake B", 3, { 0 }, 1,
    { { WAITV(W_A, W_C), END }, { CMPREQ(W_A, 0, W_B, 0, 1), END },
      { SET(W_A, 1), WAKEALL(W_A), SET(W_B, 1), WAKEALL(W_B), END } },
    XRG(2, 1, 0, 2) },
  { "x2ov:waitv A,D/requeue A->B->A,wake A", 2, { 0 }, 1,
    { { WAITV(W_A, W_D), END },
      { SET(W_A, 1), REQUEUE(W_A, W_B, 0, 1), REQUEUE(W_B, W_A, 0, 1), WAKEALL(W_A), END } },
    XRG(2, 1, 0) },
  { "x2ov:waitv A,D/cmp_requeue A->B+dies,wake A,wake B", 3, { 0 }, 1,
    { { WAITV(W_A, W_D), END }, { CMPREQ(W_A, 0, W_B, 0, 1), END },
      { SET(W_A, 1), WAKEALL(W_A), SET(W_B, 1), WAKEALL(W_B), END } },
    2, { 1, 0, 2 }, { 0, 1, 0 } },
  { "xpv:waitv C,A/cmp_requeue C->A,wake A", 2, { 0 }, 1,
    { { WAITV(W_C, W_A), END }, { SET(W_C, 1), CMPREQ(W_C, 1, W_A, 0, 1), SET(W_A, 1), WAKEALL(W_A), END } },
    XRG(3, 0, 0) },
  { "xpv:waitv C,D/cmp_requeue C->A,wake A", 2, { 0 }, 1,
    { { WAITV(W_C, W_D), END }, { SET(W_C, 1), CMPREQ(W_C, 1, W_A, 0, 1), SET(W_A, 1), WAKEALL(W_A), END } },
    XRG(3, 0, 0) },
  /* ... both members moved, one after the other: the second move rings
   * the parker the first one's re-arming left a token in, between the
   * park loop's looks at the parker's state */
  { "x2v:timedwaitv A,D/requeue A->B,D->B", 2, { 0 }, 1,
    { { TWAITV(W_A, W_D), END }, { REQUEUE(W_A, W_B, 0, 1), REQUEUE(W_D, W_B, 0, 1), END } },
    XRG(2, 0, 0) },
  { "x2ov:timedwaitv A,D/requeue A->B,D->B", 2, { 0 }, 1,
    { { TWAITV(W_A, W_D), END }, { REQUEUE(W_A, W_B, 0, 1), REQUEUE(W_D, W_B, 0, 1), END } },
    XRG(2, 1, 0) },
  { "x2v:waitv A,D/requeue A->B,D->B,wake B,A,D", 2, { 0 }, 1,
    { { WAITV(W_A, W_D), END },
      { REQUEUE(W_A, W_B, 0, 1), REQUEUE(W_D, W_B, 0, 1), SET(W_A, 1), SET(W_D, 1), WAKEALL(W_B),
        WAKEALL(W_A), WAKEALL(W_D), END } },
    XRG(2, 0, 0) },
  { "x2ov:waitv A,D/requeue A->B,D->B,wake B,A,D", 2, { 0 }, 1,
    { { WAITV(W_A, W_D), END },
      { REQUEUE(W_A, W_B, 0, 1), REQUEUE(W_D, W_B, 0, 1), SET(W_A, 1), SET(W_D, 1), WAKEALL(W_B),
        WAKEALL(W_A), WAKEALL(W_D), END } },
    XRG(2, 1, 0) },
  /* ... and its thread signalled, the handler calling pfutex (which ends
   * the waitv, even one a move had rung: vx_intr); timed, with nobody
   * waking (only a timeout or the handler ends it) or untimed and woken */
  { "x2v:sigwaitv A,D/cmp_requeue A->B,wake B", 2, { 1, 0 }, 1,
    { { WAITV(W_A, W_D), END }, { SET(W_A, 1), CMPREQ(W_A, 1, W_B, 0, 1), SET(W_B, 1), WAKEALL(W_B), END } },
    XRG(2, 0, 0) },
  { "x2ov:sigwaitv A,C/cmp_requeue A->B,wake B", 2, { 1, 0 }, 1,
    { { WAITV(W_A, W_C), END }, { SET(W_A, 1), CMPREQ(W_A, 1, W_B, 0, 1), SET(W_B, 1), WAKEALL(W_B), END } },
    XRG(2, 1, 0) },
  { "xpv:sigwaitv C,D/cmp_requeue C->A,wake A", 2, { 1, 0 }, 1,
    { { WAITV(W_C, W_D), END }, { SET(W_C, 1), CMPREQ(W_C, 1, W_A, 0, 1), SET(W_A, 1), WAKEALL(W_A), END } },
    XRG(3, 0, 0) },
  { "x2v:sigtimedwaitv A,D/cmp_requeue A->B", 2, { 1, 0 }, 1,
    { { TWAITV(W_A, W_D), END }, { CMPREQ(W_A, 0, W_B, 0, 1), END } }, XRG(2, 0, 0) },
  { "x2ov:sigtimedwaitv A,C/cmp_requeue A->B", 2, { 1, 0 }, 1,
    { { TWAITV(W_A, W_C), END }, { CMPREQ(W_A, 0, W_B, 0, 1), END } }, XRG(2, 1, 0) },
  { "xpv:sigtimedwaitv C,D/cmp_requeue C->A", 2, { 1, 0 }, 1,
    { { TWAITV(W_C, W_D), END }, { CMPREQ(W_C, 0, W_A, 0, 1), END } }, XRG(3, 0, 0) },
  { "xpv:timedwaitv A,B/cmp_requeue A->C/wake1 C", 3, { 0 }, 1,
    { { TWAITV(W_A, W_B), END }, { SET(W_A, 1), CMPREQ(W_A, 1, W_C, 0, 1), END }, { WAKE(W_C, 1), END } },
    XRG(3, 0, 0, 0) },
};
#define NFIXED (int)(sizeof scenarios / sizeof scenarios[0])

/* ---- Every pair, generated --------------------------------------------------- */
/* Every pair of {wait, timed wait, signalled wait, wake, wake_bitset,
 * requeue, cmp_requeue, wake_op}, on one word and on two, private words:
 *   two waits: both on A (one word), or on A and B (two), and a third
 *     thread that changes the words and wakes every waiter;
 *   a wait and a waker: the waiter on A; the waker changes A and does its
 *     op (requeue and cmp_requeue A -> B, nr_wake 1, nr_requeue 1; on two
 *     words nr_wake 0: the waiter is moved, not woken; wake_op on two
 *     words targets the waiter's word B as its second word), then changes
 *     B and wakes every waiter of B and of A (the lost-wakeup checks);
 *   two wakers: a timed waiter on A and one on A (one word) or B (two),
 *     each waker changes its home word (A; the second's is B on two
 *     words) and does its op with nr 1 from there.  No wake-all here (a
 *     requeue by the other waker could follow it): the waiters are timed,
 *     and the exact count catches a wake counted for a waiter that then
 *     timed out.
 * The signalled wait is a wait whose thread may get a signal whose handler
 * calls pfutex (handler_body). */
enum { E_WAIT, E_TWAIT, E_SWAIT, E_WAKE, E_WAKEB, E_REQ, E_CMPREQ, E_WAKEOP, E_N };
static const char *const e_name[E_N] = {
  "wait", "timedwait", "sigwait", "wake", "wake_bitset", "requeue", "cmp_requeue", "wake_op"
};
#define NGEN (2 * E_N * (E_N + 1) / 2)
static struct scenario gen[NGEN];
static char gen_name[NGEN][64];
static int ngen;

static struct op
mk(int kind, int w, int w2, uint32_t val, int nr, int nr2, uint32_t mask, int timed, int all)
{
  struct op o;
  o.kind = kind, o.w = w, o.w2 = w2, o.val = val, o.nr = nr, o.nr2 = nr2;
  o.mask = mask, o.timed = timed, o.all = all;
  return o;
}

/* waker e's op from word h (the other word: o), nr_wake nr */
static struct op
waker_op(int e, int h, int o, int nr, int nr2)
{
  switch (e) {
  case E_WAKE: return mk(OP_WAKE, h, 0, 0, nr, 0, 0, 0, 0);
  case E_WAKEB: return mk(OP_WAKE, h, 0, 0, nr, 0, 1, 0, 0);
  case E_REQ: return mk(OP_REQUEUE, h, o, 0, nr, nr2, 0, 0, 0);
  case E_CMPREQ: return mk(OP_CMP_REQUEUE, h, o, 1, nr, nr2, 0, 0, 0);
  default: return mk(OP_WAKE_OP, h, o, 0, nr, nr2, 0, 0, 0);
  }
}

static void
gen_scenarios(void)
{
  int x, y, two;
  for (two = 0; two <= 1; two++)
    for (x = 0; x < E_N; x++)
      for (y = x; y < E_N; y++) {
        struct scenario *g = &gen[ngen];
        struct op *t0 = g->ops[0], *t1 = g->ops[1], *t2 = g->ops[2], *t3 = g->ops[3];
        int wy = two ? W_B : W_A;
        memset(g, 0, sizeof *g);
        snprintf(gen_name[ngen], sizeof gen_name[ngen], "pair:%s/%s%s", e_name[x], e_name[y],
                 two ? " two words" : "");
        g->name = gen_name[ngen];
        g->dfs = 1;
        if (y <= E_SWAIT) {                          /* two waits */
          g->nth = 3;
          t0[0] = mk(OP_WAIT, W_A, 0, 0, 0, 0, 0, x == E_TWAIT, 0);
          t1[0] = mk(OP_WAIT, wy, 0, 0, 0, 0, 0, y == E_TWAIT, 0);
          g->sig[0] = x == E_SWAIT;
          g->sig[1] = y == E_SWAIT;
          t2[0] = mk(OP_SET, W_A, 0, 1, 0, 0, 0, 0, 0);
          t2[1] = mk(OP_WAKE, W_A, 0, 0, INT_MAX, 0, 0, 0, 1);
          if (two) {
            t2[2] = mk(OP_SET, W_B, 0, 1, 0, 0, 0, 0, 0);
            t2[3] = mk(OP_WAKE, W_B, 0, 0, INT_MAX, 0, 0, 0, 1);
          }
        } else if (x <= E_SWAIT) {                   /* a wait and a waker */
          int ww = two && y == E_WAKEOP ? W_B : W_A;
          g->nth = 2;
          t0[0] = mk(OP_WAIT, ww, 0, 0, 0, 0, 0, x == E_TWAIT, 0);
          g->sig[0] = x == E_SWAIT;
          t1[0] = mk(OP_SET, W_A, 0, 1, 0, 0, 0, 0, 0);
          t1[1] = waker_op(y, W_A, W_B, two && (y == E_REQ || y == E_CMPREQ) ? 0 : 1, 1);
          t1[2] = mk(OP_SET, W_B, 0, 1, 0, 0, 0, 0, 0);
          t1[3] = mk(OP_WAKE, W_B, 0, 0, INT_MAX, 0, 0, 0, 1);
          t1[4] = mk(OP_WAKE, W_A, 0, 0, INT_MAX, 0, 0, 0, 1);
        } else {                                     /* two wakers */
          g->nth = 4;
          t0[0] = mk(OP_WAIT, W_A, 0, 0, 0, 0, 0, 1, 0);
          t1[0] = mk(OP_WAIT, wy, 0, 0, 0, 0, 0, 1, 0);
          t2[0] = mk(OP_SET, W_A, 0, 1, 0, 0, 0, 0, 0);
          t2[1] = waker_op(x, W_A, W_B, 1, 1);
          t3[0] = mk(OP_SET, wy, 0, 1, 0, 0, 0, 0, 0);
          t3[1] = waker_op(y, wy, wy == W_A ? W_B : W_A, 1, 1);
        }
        ngen++;
      }
}

#define NSCEN (NFIXED + ngen)
#define SCEN(i) ((i) < NFIXED ? &scenarios[i] : &gen[(i) - NFIXED])

/* ---- One schedule, in a fresh child ------------------------------------------ */
static uint32_t wordpool[4096] __attribute__((aligned(64)));
static uint32_t *words[W_N];
static const struct scenario *sc;
static struct timespec far;             /* a deadline no run reaches: time is virtual */
/* Counts, in shared memory (a region scenario's threads are in several
 * processes): wakes counted by each waker, waits of each that returned 0,
 * and what each is in the middle of (a killed thread's last op). */
struct counts {
  long claims[SCHED_MAXT], zeros[SCHED_MAXT];
  long unreachable[SCHED_MAXT];         /* moved waits ended as spurious wakeups (emu.h
                                           pf_xmove_unreachable_total): only after a death */
  int in_op[SCHED_MAXT];                /* OP_* in progress, or OP_END */
  int in_nr[SCHED_MAXT];                /* a wake in progress: at most this many */
  uint32_t lockid[SCHED_MAXP];          /* each process's region lock id */
  uint32_t lockid2[SCHED_MAXP];         /* ... and its id in the second region */
  int victim;                           /* the killed thread, or -1 */
  int dead_slot;                        /* the killed thread's wait slot at its death: */
                                        /* -1 none, else its state (PF_W_*) */
  int dead_waking;                      /* a killed waitv: its members WAKING at its death
                                           (counted by a wake before it died) */
  int dead_members;                     /* ... and its members still QUEUED or WAKING then */
  int pi_holder;                        /* the thread in a PI critical section, or -1 */
  int pi_held[SCHED_MAXT];              /* each thread's lock taken */
  int vx_detached[SCHED_MAXT];          /* a handler's pfutex detached the thread's
                                           futex_waitv (src/thread.c (G)): 1 + the
                                           timeouts fired on it by then, or 0 */
};
enum { DS_NONE = -1 };
static struct counts *cnt;
static unsigned int flags;              /* PFUTEX_PRIVATE, or shared for a region */
static struct pf_region *rgn;           /* a region scenario's region */
static struct pf_region *rgn2;          /* a two-region scenario's second: B and C */

/* A region scenario: the words in a small anonymous region, one word per
 * bucket for A, B, C and another of A's bucket for D; with two regions
 * (region 2), B and C in a second one (a futex_waitv over both: its
 * further table's parker, src/waitv.c). */
static struct pf_region *
small_region(void)
{
  pfutex_region_attr_t at;
  struct pf_region *r;
  memset(&at, 0, sizeof at);
  at.slots = 8;
  at.buckets = 4;
  at.procs = 8;
  r = (struct pf_region *)pfutex_region_anon_attr(4096, &at);
  if (!r)
    sched_fail("pfutex_region_anon_attr: %s", strerror(errno));
  return r;
}

static void
pick_region_words(void)
{
  struct pf_key k;
  struct pf_table *tab;
  uint32_t used[W_N], b, *base, *base2;
  int n = 0, i, w;
  if (!(rgn = small_region()))
    return;
  if (sc->region == 2 && !(rgn2 = small_region())) {
    rgn = NULL;
    return;
  }
  base = pfutex_region_addr((pfutex_region_t *)rgn);
  base2 = rgn2 ? pfutex_region_addr((pfutex_region_t *)rgn2) : NULL;
  for (i = 0; i < 1024 && n < W_C + 1; i++) {
    if (sc->region == 3 && n == W_C)
      break;                                   /* C: private memory, below */
    pf_region_key(rgn, &base[i], &k, &tab);
    b = pf_key_bucket(tab, &k);
    for (w = 0; w < n && used[w] != b; w++)
      ;
    if (w == n) {
      used[n] = b;
      words[n++] = &base[i];
    }
  }
  for (i = 1; i < 1024; i++) {
    pf_region_key(rgn, &base[i], &k, &tab);
    if (pf_key_bucket(tab, &k) == used[W_A] && &base[i] != words[W_A])
      break;
  }
  words[W_D] = i < 1024 ? &base[i] : NULL;
  if (sc->region == 3) {
    words[W_C] = &wordpool[0];                 /* xp: private memory */
    words[W_D] = &wordpool[64];                /* and D too (a waitv's private pair) */
  }
  if (base2) {                                 /* B and C: two buckets of the second */
    words[W_B] = &base2[0];
    pf_region_key(rgn2, &base2[0], &k, &tab);
    b = pf_key_bucket(tab, &k);
    for (i = 1; i < 1024; i++) {
      pf_region_key(rgn2, &base2[i], &k, &tab);
      if (pf_key_bucket(tab, &k) != b)
        break;
    }
    words[W_C] = &base2[i < 1024 ? i : 1];
  }
}

/* The region holding word w. */
static struct pf_region *
word_region(int w)
{
  const char *a = (const char *)words[w], *b2;
  if (rgn2) {
    b2 = pfutex_region_addr((pfutex_region_t *)rgn2);
    if (a >= b2 && a < b2 + pfutex_region_size((pfutex_region_t *)rgn2))
      return rgn2;
  }
  return rgn;
}

/* The key (table, word, space) of word w. */
static void
word_key(int w, struct pf_key *k, struct pf_table **tab)
{
  if (rgn && !(sc->region == 3 && w == W_C)) {
    pf_region_key(word_region(w), words[w], k, tab);
  } else if (rgn) {
    k->space = PF_KEY_SHARED_LOCAL;            /* xp: a private word, shared ops */
    k->word = (uintptr_t)words[w];
    *tab = &pf_table;
  } else {
    k->space = PF_KEY_PRIVATE;
    k->word = (uintptr_t)words[w];
    *tab = &pf_table;
  }
}

static void
pick_words(void)
{
  struct pf_key k;
  uint32_t used[W_N], b;
  int n = 0, i, w;
  k.space = PF_KEY_PRIVATE;
  for (i = 0; i < 4096 && n < W_C + 1; i++) {
    k.word = (uintptr_t)&wordpool[i];
    b = pf_key_bucket(&pf_table, &k);
    for (w = 0; w < n && used[w] != b; w++)
      ;
    if (w == n) {
      used[n] = b;
      words[n++] = &wordpool[i];
    }
  }
  for (i = 1; i < 4096; i++) {
    k.word = (uintptr_t)&wordpool[i];
    if (pf_key_bucket(&pf_table, &k) == used[W_A] && &wordpool[i] != words[W_A])
      break;
  }
  words[W_D] = i < 4096 ? &wordpool[i] : NULL;
}

static int
is_wait_result(int e, int timed, int interrupted)
{
  return e == 0 || e == EAGAIN || (e == ETIMEDOUT && timed) || (e == EINTR && interrupted);
}

/* The lost-wakeup check after a wake of every waiter of w (its value
 * changed before): a thread parked with its node still QUEUED under w's
 * key was missed.  (The scenarios requeue onto w only before they wake it,
 * from the same thread.) */
static void
check_none_left(int me, int w, uint32_t mask)
{
  int t;
  for (t = 0; t < sc->nth; t++) {
    const volatile unsigned int *tok;
    const struct pf_node *n;
    struct pf_key k;
    struct pf_table *tab;
    if (t == me || !sched_parked_on(t, &tok))
      continue;
    word_key(w, &k, &tab);
    n = (const struct pf_node *)(const void *)((const char *)tok - offsetof(struct pf_node, park.word));
    /* (unlinked by a lock holder that has yet to mark it WAKING: in
     * progress, not missed; were the holder dead, the waiter would be
     * left asleep: the deadlock check sees it) */
    if (!n->linked && n->bucket < tab->nbuckets
        && *(const volatile unsigned int *)&tab->buckets[n->bucket].lock != 0)
      continue;
    if (tab->slots && (n < tab->slots || n >= tab->slots + tab->nslots))
      continue;                         /* another table's node (two regions: the same
                                           offset is the same key word there) */
    if (*(const volatile uint32_t *)&n->state == PF_W_QUEUED
        && pf_node_keyword(n) == k.word && n->key_space == k.space && (n->bitset & mask))
      sched_fail("T%d: lost wakeup: T%d still queued asleep on word %c after a wake of all its waiters",
                 me, t, 'A' + w);
  }
}

static void
handler_body(int t)
{
  /* A wake of nobody (word C; in a region scenario, where C may be waited
   * on, a private word of its own) and a wait on a value that does not
   * match, then a wake of the word the interrupted thread waits on: the
   * slow path, which detaches the interrupted wait first (wait.c (G);
   * a futex_waitv's: src/waitv.c pf_vx_detach, vx_intr). */
  uint32_t *nobody = rgn ? &wordpool[128] : words[W_C];
  struct pf_thread *self;
  int r;
  r = pfutex_wake(nobody, PFUTEX_BITSET_MATCH_ANY, 1, flags);
  if (r != 0)
    sched_fail("T%d handler: wake of nobody returned %d", t, r);
  else if (pfutex_wait(nobody, 7, PFUTEX_BITSET_MATCH_ANY, flags, NULL, 0) != -1
           || errno != EAGAIN)
    sched_fail("T%d handler: a wait on a mismatched value did not fail with EAGAIN", t);
  r = pfutex_wake(words[W_A], PFUTEX_BITSET_MATCH_ANY, 1, flags);
  if (r < 0 || r > 1)
    sched_fail("T%d handler: wake(A, 1) returned %d", t, r);
  else
    cnt->claims[t] += r;
  /* a futex_waitv in progress that a slow path of these calls detached
   * (src/thread.c (G), src/waitv.c pf_vx_detach: vx_intr), whatever state
   * its parker was in, ends without sleeping again: it cannot time out
   * unless a timeout fired on it before (the check in OP_WAITV) */
  self = pf_self_peek();
  if (self && self->depth > 0 && self->nodes[self->depth - 1].vx_n != 0
      && self->nodes[self->depth - 1].vx_intr && !cnt->vx_detached[t])
    cnt->vx_detached[t] = 1 + sched_fired(t);
}

/* A timed wait's deadline: in a region, half a slice from the (virtual,
 * frozen) clock, so its first park is the last (wait.c (R)) and the
 * scheduler fires it when it likes; private, one no run reaches. */
static void
timed_deadline(struct timespec *dl)
{
  *dl = far;
  if (rgn) {
    sched_vnow(dl);
    dl->tv_nsec += 500000000L;
    if (dl->tv_nsec >= 1000000000L) {
      dl->tv_nsec -= 1000000000L;
      dl->tv_sec++;
    }
  }
}

static void
body(int me)
{
  const struct op *o;
  for (o = sc->ops[me]; o->kind != OP_END; o++) {
    uint32_t *w = words[o->w], *w2 = words[o->w2];
    uint32_t mask = o->mask ? o->mask : PFUTEX_BITSET_MATCH_ANY;
    int r, e, sig0;
    struct timespec dl;
    cnt->in_op[me] = o->kind;
    cnt->in_nr[me] = o->nr + (o->kind == OP_WAKE_OP ? o->nr2 : 0);
    /* a requeue between two regions killed after it published a moved
     * waiter's destination, before it queued or gave it: that waiter's
     * wait ends as a spurious wakeup (wait.c (M); futex(2) allows them),
     * at most nr2 of them */
    if (sc->region == 2 && (o->kind == OP_REQUEUE || o->kind == OP_CMP_REQUEUE))
      cnt->in_nr[me] += o->nr2;
    if (cnt->in_nr[me] > SCHED_MAXT || cnt->in_nr[me] < 0)
      cnt->in_nr[me] = SCHED_MAXT;
    switch (o->kind) {
    case OP_SET:
      AO_int_store(w, o->val);                   /* a scheduling point too */
      break;
    case OP_WAIT:
      sig0 = sched_signaled(me);
      timed_deadline(&dl);
      {
        long u0 = (long)AO_load(&pf_xmove_unreachable_total);
        r = pfutex_wait(w, o->val, mask, flags, o->timed ? &dl : NULL, PFUTEX_CLOCK_MONOTONIC);
        e = r < 0 ? errno : 0;
        cnt->unreachable[me] += (long)AO_load(&pf_xmove_unreachable_total) - u0;
      }
      if (!is_wait_result(e, o->timed, sched_signaled(me) && !sig0))
        sched_fail("T%d: wait on %c returned %s", me, 'A' + o->w, pft_errname(e));
      cnt->zeros[me] += e == 0;
      if (getenv("SCHED_TRACE"))
        fprintf(stderr, "T%d: wait on %c: %s\n", me, 'A' + o->w, pft_errname(e));
      break;
    case OP_WAKE:
      r = pfutex_wake(w, mask, o->nr, flags);
      if (r < 0 || r > o->nr || r >= SCHED_MAXT)
        sched_fail("T%d: wake of %c returned %d", me, 'A' + o->w, r);
      else
        cnt->claims[me] += r;
      if (o->all)
        check_none_left(me, o->w, mask);
      break;
    case OP_REQUEUE:
    case OP_CMP_REQUEUE:
      r = o->kind == OP_REQUEUE ? pfutex_requeue(w, w2, o->nr, o->nr2, flags)
                                : pfutex_cmp_requeue(w, o->val, w2, o->nr, o->nr2, flags);
      e = r < 0 ? errno : 0;
      if (r < 0 && !(e == EAGAIN && o->kind == OP_CMP_REQUEUE && AO_int_load(w) != o->val))
        sched_fail("T%d: requeue %c->%c failed: %s", me, 'A' + o->w, 'A' + o->w2, pft_errname(e));
      else if (r > o->nr + o->nr2)
        sched_fail("T%d: requeue %c->%c returned %d", me, 'A' + o->w, 'A' + o->w2, r);
      else if (r > 0)
        cnt->claims[me] += r < o->nr ? r : o->nr;         /* a requeue moves only after nr_wake wakes */
      break;
    case OP_WAITV: {
      struct pfutex_waitv v[2];
      AO_t before = AO_load(&pf_vx_woken_total);
      long found, u0 = (long)AO_load(&pf_xmove_unreachable_total), spurious;
      int fired0 = sched_fired(me);
      sig0 = sched_signaled(me);
      cnt->vx_detached[me] = 0;
      memset(v, 0, sizeof v);
      v[0].uaddr = (uint64_t)(uintptr_t)w;
      v[1].uaddr = (uint64_t)(uintptr_t)w2;
      v[0].flags = v[1].flags = PFUTEX2_SIZE_U32 | (rgn ? 0 : PFUTEX2_PRIVATE);
      timed_deadline(&dl);                  /* as OP_WAIT's */
      r = (int)pfutex_waitv(v, 2, 0, o->timed ? &dl : NULL, PFUTEX_CLOCK_MONOTONIC);
      e = r < 0 ? errno : 0;
      found = (long)(AO_load(&pf_vx_woken_total) - before);
      spurious = (long)AO_load(&pf_xmove_unreachable_total) - u0;
      cnt->unreachable[me] += spurious;     /* a moved member's end out of reach (M) */
      if (r > 1 || (r < 0 && !is_wait_result(e, o->timed, sched_signaled(me) && !sig0)))
        sched_fail("T%d: waitv on %c, %c returned %d (%s)", me, 'A' + o->w, 'A' + o->w2, r,
                   pft_errname(e));
      else if ((r >= 0) != (found + spurious > 0))
        sched_fail("T%d: waitv returned %d with %ld member(s) found woken", me, r, found);
      else if (r < 0 && e == ETIMEDOUT && cnt->vx_detached[me] == 1 + fired0)
        sched_fail("T%d: a handler's pfutex call ended the waitv before any timeout fired,"
                   " and it timed out (it slept again)", me);
      cnt->zeros[me] += found;              /* each member counted by a wake */
      if (getenv("SCHED_TRACE"))
        fprintf(stderr, "T%d: waitv on %c, %c: %d %s, %ld found\n", me, 'A' + o->w, 'A' + o->w2, r,
                pft_errname(e), found);
      break;
    }
    case OP_LOCK_PI: {
      int op = (o->nr ? FUTEX_TRYLOCK_PI : FUTEX_LOCK_PI)
               | (flags & PFUTEX_PRIVATE ? FUTEX_PRIVATE_FLAG : 0);
      uint32_t me_id = (uint32_t)pfutex_tid() & 0x3fffffffu;
      struct timespec rt;
      /* LOCK_PI's timeout: absolute CLOCK_REALTIME, within a poll's slice
       * of the virtual now (src/pi.c), so its one park is the last and
       * the scheduler fires it when it likes */
      if (o->timed) {
        if (pf_clock_now(PFUTEX_CLOCK_REALTIME, &rt) != 0)
          sched_fail("T%d: no clock", me);
        rt.tv_nsec += 50000000L;
        if (rt.tv_nsec >= 1000000000L) {
          rt.tv_nsec -= 1000000000L;
          rt.tv_sec++;
        }
      }
      r = (int)pfutex(w, op, 0, o->timed ? &rt : NULL, NULL, 0);
      e = r < 0 ? errno : 0;
      if (getenv("SCHED_TRACE"))
        fprintf(stderr, "T%d: %s %c: %s\n", me, o->nr ? "trylock" : "lock", 'A' + o->w,
                pft_errname(e));
      if (r == 0) {
        if ((AO_int_load(w) & 0x3fffffffu) != me_id)
          sched_fail("T%d: lock of %c returned 0, the word is %#x (our id %#x)", me, 'A' + o->w,
                     (unsigned)AO_int_load(w), (unsigned)me_id);
        else if (cnt->pi_holder >= 0)
          sched_fail("T%d: lock of %c returned 0 while T%d holds it", me, 'A' + o->w,
                     cnt->pi_holder);
        cnt->pi_holder = me;
        cnt->pi_held[me] = 1;
      } else if (!((e == EAGAIN && o->nr) || (e == ETIMEDOUT && o->timed))) {
        sched_fail("T%d: %s of %c returned %s", me, o->nr ? "trylock" : "lock", 'A' + o->w,
                   pft_errname(e));
      }
      break;
    }
    case OP_UNLOCK_PI:
      if (!cnt->pi_held[me])
        break;
      if (cnt->pi_holder != me)
        sched_fail("T%d: unlock, but T%d is in the critical section", me, cnt->pi_holder);
      cnt->pi_holder = -1;
      cnt->pi_held[me] = 0;
      r = (int)pfutex(w, FUTEX_UNLOCK_PI | (flags & PFUTEX_PRIVATE ? FUTEX_PRIVATE_FLAG : 0), 0,
                      NULL, NULL, 0);
      if (r != 0)
        sched_fail("T%d: unlock of %c returned %s", me, 'A' + o->w, pft_errname(errno));
      break;
    case OP_WAKE_OP:
      /* *w2 = 1; wake nr of w, and nr2 of w2 if it was 0 */
      r = pfutex_wake_op(w, w2, o->nr, o->nr2, PFUTEX_OP(PFUTEX_OP_SET, 1, PFUTEX_OP_CMP_EQ, 0),
                         flags);
      if (r < 0 || r > o->nr + o->nr2)
        sched_fail("T%d: wake_op returned %d", me, r);
      else
        cnt->claims[me] += r;
      break;
    }
    cnt->in_op[me] = OP_END;
  }
}

/* A PI scenario's end: every lock taken was given back, so the word is
 * 0 (FUTEX_WAITERS included: the last unlock found nobody queued). */
static void
check_end_pi(void)
{
  int t, pi = 0;
  const struct op *o;
  for (t = 0; t < sc->nth; t++)
    for (o = sc->ops[t]; o->kind != OP_END; o++)
      pi |= o->kind == OP_LOCK_PI;
  if (pi && AO_int_load(words[W_A]) != 0)
    sched_fail("at the end, the PI word is %#x, not 0", (unsigned)AO_int_load(words[W_A]));
  if (cnt->pi_holder >= 0)
    sched_fail("at the end, T%d is still in the critical section", cnt->pi_holder);
}

/* The final checks, by the child's main thread (not controlled). */
static void
check_end(void)
{
  int w, t;
  long claims = 0, zeros = 0;
  for (t = 0; t < sc->nth; t++) {
    claims += cnt->claims[t];
    zeros += cnt->zeros[t];
  }
  if (claims != zeros)
    sched_fail("counts: the wakers counted %ld woken, %ld waits returned 0", claims, zeros);
  check_end_pi();
  for (w = 0; w < W_N; w++) {
    struct pf_key k;
    int r;
    if (!words[w])
      continue;
    r = pfutex_wake(words[w], PFUTEX_BITSET_MATCH_ANY, INT_MAX, PFUTEX_PRIVATE);
    if (r != 0)
      sched_fail("at the end, a wake of %c found %d waiter(s) still queued", 'A' + w, r);
    k.space = PF_KEY_PRIVATE;
    k.word = (uintptr_t)words[w];
    if (pf_table.buckets[pf_key_bucket(&pf_table, &k)].waiters != 0)
      sched_fail("at the end, the waiter count of %c's bucket is %u", 'A' + w,
                 pf_table.buckets[pf_key_bucket(&pf_table, &k)].waiters);
  }
}

/* ---- Region scenarios: the processes' and the reaper's parts ------------------------- */
static void
proc_init(int p)
{
  cnt->lockid[p] = rgn->att->me;               /* its entry, claimed at fork (src/region/proc.c) */
  sched_set_lockid(p, rgn->att->me);
  if (rgn2) {
    cnt->lockid2[p] = rgn2->att->me;
    sched_set_lockid2(p, rgn2->att->me);
  }
}

/* The reaper, right after it reaped the killed process p, before anyone
 * runs: what was the killed thread doing? */
static void
on_death(int p)
{
  int t;
  uint32_t s;
  for (t = 0; t < sc->nth && sc->proc[t] != p; t++)
    ;
  cnt->victim = t;
  cnt->dead_slot = DS_NONE;
  cnt->dead_waking = 0;
  cnt->dead_members = 0;
  if (t < sc->nth && cnt->in_op[t] == OP_WAITV) {
    /* its members in either region (a member's pi: PF_PI_VX, not the parker's) */
    struct pf_region *rs[2];
    uint32_t ids[2];
    int r;
    rs[0] = rgn, rs[1] = rgn2;
    ids[0] = cnt->lockid[p], ids[1] = cnt->lockid2[p];
    for (r = 0; r < 2; r++)
      for (s = 0; rs[r] && s < rs[r]->att->tab.nslots; s++) {
        const struct pf_node *n = &rs[r]->att->tab.slots[s];
        uint32_t pi = *(const volatile uint32_t *)&n->pi;
        if (*(const volatile uint32_t *)&n->owner != ids[r] || (pi & PF_PI_KIND) != PF_PI_VX
            || pi == PF_VX_PARKER)
          continue;
        switch (*(const volatile uint32_t *)&n->state) {
        case PF_W_WAKING:
          cnt->dead_waking++;
          /* FALLTHROUGH */
        case PF_W_QUEUED:
          cnt->dead_members++;
          break;
        }
      }
    return;
  }
  if (t == sc->nth || cnt->in_op[t] != OP_WAIT)
    return;
  for (s = 0; s < rgn->att->tab.nslots; s++)
    if (*(volatile uint32_t *)&rgn->att->tab.slots[s].owner == cnt->lockid[p])
      cnt->dead_slot = (int)*(volatile uint32_t *)&rgn->att->tab.slots[s].state;
}

/* At the end: region r consistent, and after scavenging holding nothing. */
static void
check_region_empty(struct pf_region *r, const char *which)
{
  struct pf_region_stats st;
  const char *why;
  if (pf_region_check(r, &st, &why) < 0) {
    sched_fail("at the end, %s is inconsistent: %s", which, why);
    return;
  }
  pf_region_scavenge(r);
  if (pf_region_check(r, &st, &why) < 0)
    sched_fail("after scavenging, %s is inconsistent: %s", which, why);
  else if (st.queued || st.slots_live || st.slots_dead)
    sched_fail("at the end, %s: %u node(s) queued, %u slot(s) live, %u dead after scavenging", which,
               st.queued, st.slots_live, st.slots_dead);
}

/* The reaper's checks once every process is gone.  The counts: with no
 * death, exact; a thread killed in a wait whose slot was still queued must
 * not have been counted by anyone (a wake never counts a dead waiter), one
 * whose slot was WAKING was (woken before it died); one killed in a wake
 * may have woken up to that wake's count unreported. */
static void
check_end_region(void)
{
  long claims = 0, zeros = 0, d, lo = 0, hi = 0;
  int t, w, v = cnt->victim;
  for (t = 0; t < sc->nth; t++) {
    claims += cnt->claims[t];
    zeros += cnt->zeros[t];
  }
  d = zeros - claims;
  for (t = 0; t < sc->nth; t++)
    if (cnt->unreachable[t] && (v < 0 || v >= sc->nth))
      sched_fail("T%d: a moved wait found its new node out of reach (a spurious wakeup) with"
                 " nobody killed", t);
  if (v >= 0 && v < sc->nth) {
    switch (cnt->in_op[v]) {
    case OP_WAIT:
      if (cnt->dead_slot == PF_W_WAKING)
        lo = hi = -1;
      else if (cnt->dead_slot != PF_W_QUEUED && cnt->dead_slot != PF_W_DETACHED)
        lo = -1;                          /* before its slot was queued, or after it was woken */
      break;
    case OP_WAITV:
      /* its members counted before it died, no others: those WAKING at
       * its death for sure; those its end had taken off already (found
       * woken or not: its count died with it) perhaps; a member still
       * QUEUED then is never counted */
      hi = -cnt->dead_waking;
      lo = hi - (2 - cnt->dead_members);
      break;
    case OP_WAKE:
    case OP_REQUEUE:
    case OP_CMP_REQUEUE:
    case OP_WAKE_OP:
      hi = cnt->in_nr[v];
      break;
    }
  }
  if (d < lo || d > hi)
    sched_fail("counts: the wakers counted %ld woken, %ld waits returned 0 (killed: %s, in op %d, its slot %d)",
               claims, zeros, v >= 0 ? "yes" : "none", v >= 0 ? cnt->in_op[v] : 0, cnt->dead_slot);
  check_end_pi();
  for (w = 0; w < W_N; w++) {
    int r;
    if (!words[w])
      continue;
    r = pfutex_wake(words[w], PFUTEX_BITSET_MATCH_ANY, INT_MAX, PFUTEX_SHARED);
    if (r != 0)
      sched_fail("at the end, a wake of %c found %d waiter(s) still queued", 'A' + w, r);
  }
  check_region_empty(rgn, "the region");
  if (rgn2)
    check_region_empty(rgn2, "the second region");
}

/* ---- Strategies (the child's side) ----------------------------------------------- */
enum { M_DFS, M_PCT, M_KILL };
static int mode;
static int kill_k;                      /* M_KILL: the offered kill taken (from 0) */
/* dfs: the non-default choices, by recorded-decision index */
#define MAXPRE 64
static struct {
  int pos, choice;
} pre[MAXPRE];
static int npre;
/* pct */
static struct sched_trace *tr;          /* shared with the children */
static uint64_t rng;
#define pct_prio (tr->pct_prio)        /* shared: the change points' effects */
static int pct_change[8], pct_depth, pct_sigstep, pct_killk;

static uint64_t
rnd(void)
{
  uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int
sched_choose(const struct sched_action *a, int n, int cur, int cur_en, int step)
{
  int i, best = 0;
  (void)cur_en;
  if (mode == M_KILL || mode == M_PCT) {          /* the one kill of the schedule */
    int k = mode == M_KILL ? kill_k : pct_killk;
    for (i = 0; i < n; i++)
      if (a[i].kind == A_KILL && sched_tr->kills_offered - 1 == k)
        return i;
  }
  if (mode == M_KILL)
    return 0;
  if (mode == M_DFS) {
    int pos = sched_tr->n;
    if (n < 2)
      return 0;
    for (i = 0; i < npre; i++)
      if (pre[i].pos == pos)
        return pre[i].choice;
    return 0;
  }
  /* PCT: the change points lower the running thread's priority below all */
  for (i = 0; i < pct_depth - 1; i++)
    if (step == pct_change[i] && cur >= 0)
      pct_prio[cur] = i;
  if (step >= pct_sigstep)
    for (i = 0; i < n; i++)
      if (a[i].kind == A_SIGNAL)
        return i;
  for (i = 1; i < n; i++)
    if (a[i].kind != A_SIGNAL && pct_prio[a[i].t] > pct_prio[a[best].t])
      best = i;
  return best;
}

static void
pct_setup(uint64_t seed, int depth, int k)
{
  int t, i;
  rng = seed;
  pct_depth = depth;
  for (t = 0; t < SCHED_MAXT; t++)
    pct_prio[t] = depth + t;
  for (t = SCHED_MAXT - 1; t > 0; t--) {        /* random distinct priorities >= depth */
    int j = (int)(rnd() % (uint64_t)(t + 1)), x = pct_prio[t];
    pct_prio[t] = pct_prio[j];
    pct_prio[j] = x;
  }
  for (i = 0; i < depth - 1; i++)
    pct_change[i] = (int)(rnd() % (uint64_t)(k > 0 ? k : 1));
  pct_sigstep = (int)(rnd() % (uint64_t)(2 * (k > 0 ? k : 1)));
  pct_killk = (int)(rnd() % (uint64_t)(k > 0 ? k : 1));
}


/* Run one schedule of scenario s in a child: 0 ok, 1 failed (tr->verdict). */
static int
run_one(const struct scenario *s)
{
  pid_t pid;
  int status;
  memset(tr, 0, offsetof(struct sched_trace, d));
  tr->kills_offered = 0;
  memset(cnt, 0, sizeof *cnt);
  cnt->victim = -1;
  cnt->dead_slot = DS_NONE;
  cnt->pi_holder = -1;
  rgn = NULL;
  rgn2 = NULL;
  tr->failed = 0;
  tr->verdict[0] = 0;
  fflush(stdout);
  pid = fork();
  if (pid < 0)
    sysbail("fork");
  if (pid == 0) {
    struct timespec now;
    alarm(10);                                   /* the child's own watchdog */
    sched_tr = tr;
    sc = s;
    if (!pfutex_backend() || strcmp(pfutex_backend(), "emu:sched") != 0) {
      sched_fail("backend is %s, not emu:sched", pfutex_backend() ? pfutex_backend() : "none");
      _exit(1);
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    far.tv_sec = now.tv_sec + 3600;
    far.tv_nsec = 0;
    sched_handler = handler_body;
    if (s->region) {
      int nproc = 0, t;
      for (t = 0; t < s->nth; t++)
        if (s->proc[t] + 1 > nproc)
          nproc = s->proc[t] + 1;
      pick_region_words();
      /* the shared table, which a region's open opens too (under a mutex
       * the scheduler does not control: never in a controlled thread), is
       * open by now; said here, so that no thread's op ever opens it */
      pf_shared_prepare();
      flags = PFUTEX_SHARED;
      if (!rgn || !sched_run_procs(s->nth, s->proc, nproc, body, s->sig, s->kill, proc_init, NULL,
                                   on_death))
        _exit(1);
      check_end_region();
      _exit(tr->failed ? 1 : 0);
    }
    flags = PFUTEX_PRIVATE;
    pick_words();
    if (!sched_run(s->nth, body, s->sig))
      _exit(1);
    sched_join();
    pf_sched_hooks = NULL;
    check_end();
    _exit(tr->failed ? 1 : 0);
  }
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      sysbail("waitpid");
  if (WIFSIGNALED(status)) {
    snprintf(tr->verdict, sizeof tr->verdict, "the schedule's process died of signal %d%s",
             WTERMSIG(status), WTERMSIG(status) == SIGALRM ? " (hang: watchdog)" : "");
    return 1;
  }
  if (WEXITSTATUS(status) != 0 && !tr->failed)
    snprintf(tr->verdict, sizeof tr->verdict, "the schedule's process exited with %d", WEXITSTATUS(status));
  return WEXITSTATUS(status) != 0 || tr->failed;
}

/* ---- Strategies (the parent's side) ------------------------------------------------ */
static void
pre_format(char *buf, size_t len)
{
  int i;
  snprintf(buf, len, "dfs:");
  for (i = 0; i < npre; i++)
    snprintf(buf + strlen(buf), len - strlen(buf), "%s%d=%d", i ? "," : "", pre[i].pos, pre[i].choice);
}

static int
pre_parse(const char *s)
{
  npre = 0;
  while (*s && npre < MAXPRE) {
    char *end;
    pre[npre].pos = (int)strtol(s, &end, 10);
    if (*end != '=')
      return -1;
    pre[npre].choice = (int)strtol(end + 1, &end, 10);
    npre++;
    if (*end == ',')
      end++;
    else if (*end)
      return -1;
    s = end;
  }
  return 0;
}

static void
report_fail(const struct scenario *s, const char *replay, long count)
{
  diag("%s: FAILED after %ld schedule(s): %s", s->name, count, tr->verdict);
  diag("replay: explore -s '%s' -r '%s'", s->name, replay);
}

/* dfs with at most `bound` preemptions; returns schedules run, *failed. */
static long
dfs(const struct scenario *s, int bound, long budget, int *failed, int *complete)
{
  static uint16_t chosen[SCHED_MAXD];
  long count = 0;
  mode = M_DFS;
  npre = 0;
  *failed = 0;
  *complete = 0;
  for (;;) {
    int j, n, pc[SCHED_MAXD + 1];
    if (count >= budget)
      return count;
    count++;
    if (run_one(s)) {
      char buf[600];
      pre_format(buf, sizeof buf);
      report_fail(s, buf, count);
      *failed = 1;
      return count;
    }
    n = tr->n;
    pc[0] = 0;
    for (j = 0; j < n; j++) {
      chosen[j] = tr->d[j].chosen;
      pc[j + 1] = pc[j] + (tr->d[j].cur_en && chosen[j] != 0
                           && !(tr->d[j].killopt && chosen[j] + 1 == tr->d[j].nopts));
    }
    /* the deepest decision with an alternative left within the bound (a
     * kill, the last choice when offered, is no preemption) */
    for (j = n - 1; j >= 0; j--)
      if (chosen[j] + 1 < tr->d[j].nopts
          && pc[j] + (tr->d[j].cur_en && !(tr->d[j].killopt && chosen[j] + 2 == tr->d[j].nopts)) <= bound)
        break;
    if (j < 0) {
      *complete = 1;
      return count;
    }
    npre = 0;
    {
      int i;
      for (i = 0; i < j; i++)
        if (chosen[i] != 0) {
          if (npre == MAXPRE)
            bail("dfs: more than %d non-default choices", MAXPRE);
          pre[npre].pos = i;
          pre[npre].choice = chosen[i];
          npre++;
        }
      pre[npre].pos = j;
      pre[npre].choice = chosen[j] + 1;
      npre++;
    }
  }
}

/* Kill at every point: the preemption-free schedule, with the kill taken at
 * the k-th point that offers one, for k = 0, 1, ... until no kill was left
 * to take (that run is the schedule with no death). */
static long
killsweep(const struct scenario *s, long budget, int *failed, int *complete)
{
  long k;
  *failed = 0;
  *complete = 0;
  mode = M_KILL;
  for (k = 0; k < budget; k++) {
    kill_k = (int)k;
    if (run_one(s)) {
      char buf[64];
      snprintf(buf, sizeof buf, "kill:%ld", k);
      report_fail(s, buf, k + 1);
      *failed = 1;
      return k + 1;
    }
    if (tr->kills_offered <= k) {
      *complete = 1;
      return k + 1;
    }
  }
  return budget;
}

static int
default_steps(const struct scenario *s)
{
  mode = M_DFS;
  npre = 0;
  run_one(s);
  return tr->steps;
}

static long
pct(const struct scenario *s, int depth, uint64_t seed0, long runs, int *failed)
{
  int k = default_steps(s);
  long i;
  *failed = 0;
  for (i = 0; i < runs; i++) {
    mode = M_PCT;
    pct_setup(seed0 + (uint64_t)i, depth, k);
    if (run_one(s)) {
      char buf[128];
      snprintf(buf, sizeof buf, "pct:%d:%d:%llu", depth, k, (unsigned long long)(seed0 + (uint64_t)i));
      report_fail(s, buf, i + 1);
      *failed = 1;
      return i + 1;
    }
  }
  return runs;
}

static int
replay(const struct scenario *s, const char *r)
{
  if (strncmp(r, "dfs:", 4) == 0) {
    mode = M_DFS;
    if (pre_parse(r + 4) < 0)
      bail("bad replay string %s", r);
  } else if (strncmp(r, "kill:", 5) == 0) {
    mode = M_KILL;
    kill_k = atoi(r + 5);
  } else {
    int d, k;
    unsigned long long seed;
    if (sscanf(r, "pct:%d:%d:%llu", &d, &k, &seed) != 3 || d < 1 || d > 8)
      bail("bad replay string %s", r);
    mode = M_PCT;
    pct_setup(seed, d, k);
  }
  if (run_one(s)) {
    ok(0, "%s: replay %s", s->name, r);
    diag("%s", tr->verdict);
    return 1;
  }
  ok(1, "%s: replay %s passes", s->name, r);
  return 0;
}

int
main(int argc, char **argv)
{
  const char *only = NULL, *method = NULL, *rep = NULL, *env = getenv("SCHED_RUNS");
  long runs = env && atol(env) > 0 ? atol(env) : 0;
  int depth = 3, c, i;
  uint64_t seed = 1;

  while ((c = getopt(argc, argv, "s:m:n:d:S:r:l")) != -1) {
    switch (c) {
    case 's': only = optarg; break;
    case 'm': method = optarg; break;
    case 'n': runs = atol(optarg); break;
    case 'd': depth = atoi(optarg); break;
    case 'S': seed = strtoull(optarg, NULL, 0); break;
    case 'r': rep = optarg; break;
    case 'l':
      gen_scenarios();
      for (i = 0; i < NSCEN; i++)
        printf("%s\n", SCEN(i)->name);
      return 0;
    default:
      fprintf(stderr, "usage: %s [-s SCENARIO] [-m dfs|pct|kill] [-n RUNS] [-d DEPTH] [-S SEED] [-r REPLAY] [-l]\n", argv[0]);
      return 2;
    }
  }
  if (depth < 1 || depth > 8)
    bail("-d: 1 to 8");
  setenv("PFUTEX_BACKEND", "emu:sched", 1);     /* selected in each child, at its first call */
  tr = mmap(NULL, sizeof *tr, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (tr == MAP_FAILED)
    sysbail("mmap");
  cnt = mmap(NULL, sizeof *cnt, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (cnt == MAP_FAILED)
    sysbail("mmap");
  gen_scenarios();
  plan_lazy();
  for (i = 0; i < NSCEN; i++) {
    const struct scenario *s = SCEN(i);
    long t0 = (long)(pft_now_ns() / 1000000);
    if (only && strcmp(only, s->name) != 0)
      continue;
    if (rep) {
      replay(s, rep);
      continue;
    }
    if ((!method || strcmp(method, "dfs") == 0) && s->dfs) {
      long total = 0, n = 0, budget = runs ? runs : s->region || strncmp(s->name, "pair:", 5) == 0 ? 60 : 150;
      int failed = 0, complete = 0, bound;
      char how[160] = "";
      for (bound = 0; bound <= 2 && !failed && total < budget; bound++) {
        n = dfs(s, bound, budget - total, &failed, &complete);
        total += n;
        snprintf(how + strlen(how), sizeof how - strlen(how), "%s%d: %ld%s", bound ? ", " : "", bound, n,
                 complete ? "" : failed ? " (failed)" : " (budget)");
      }
      ok(!failed, "%s: dfs, schedules by preemption bound {%s}, %ld in all, %ld ms", s->name, how, total,
         (long)(pft_now_ns() / 1000000) - t0);
      t0 = (long)(pft_now_ns() / 1000000);
    }
    if ((!method || strcmp(method, "kill") == 0) && (s->kill[0] || s->kill[1] || s->kill[2] || s->kill[3])) {
      int failed, complete;
      long n = killsweep(s, runs ? runs : 400, &failed, &complete);
      ok(!failed, "%s: kill at each point of the preemption-free schedule, %ld schedule(s)%s, %ld ms", s->name, n,
         complete ? " (every point)" : failed ? "" : " (budget)", (long)(pft_now_ns() / 1000000) - t0);
      t0 = (long)(pft_now_ns() / 1000000);
    }
    if (!method || strcmp(method, "pct") == 0) {
      int failed;
      long n = pct(s, depth, seed, runs ? runs : s->region || strncmp(s->name, "pair:", 5) == 0 ? 40 : 100, &failed);
      ok(!failed, "%s: pct d=%d, %ld seed(s) from %llu, %ld ms", s->name, depth, n, (unsigned long long)seed,
         (long)(pft_now_ns() / 1000000) - t0);
    }
  }
  return tap_failed() ? 1 : 0;
}
