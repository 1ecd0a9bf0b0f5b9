/* region_kill: random SIGKILLs of processes working on a shared region.
 *
 * NW worker processes share an anonymous region (a small pool: 32 slots, 8
 * process entries, so leaked slots or entries would exhaust it within the
 * run) and loop over random ops:
 *   - timed waits (1-5 ms) on four op words, wakes, requeues, cmp_requeues
 *     and wake_ops among them;
 *   - a token ring: NT tokens in one word (4 bits per worker); a worker with
 *     a token moves one to the next worker with one compare-and-swap and
 *     wakes it by its bitset (wake(ring, 1 << next, 1)); a worker without
 *     one waits for one (untimed, bitset 1 << self);
 *   - a counter under a futex mutex whose word names its owner's pid (a
 *     waiter takes over the lock of a dead owner) and whose critical section
 *     writes a journal first, so the next owner completes or drops a dead
 *     owner's increment: the counter equals the sum of the per-worker
 *     committed counts at all times outside the lock.
 * The parent SIGKILLs a random worker after a random 0-2 ms, reaps it and
 * starts a new one in its place, up to RK_MAX_KILLS times or RK_BUDGET
 * seconds (PFT_KILL_SECONDS overrides it).  Every RK_ROUND kills, an audit:
 * every worker must reach a barrier (an untimed wait) within a bound (no
 * deadlock: the ring is flagged and woken so nobody waits there); one of
 * them is killed in its sleep there and replaced, so a dead waiter is queued
 * on the barrier word; then wake(barrier, 1) must return 1 exactly NW times,
 * each releasing exactly one live worker, and then 0.  At each audit and at
 * the end: the mutex's counter is exact, the ring still holds NT tokens,
 * and the op words' accounting holds within what the killed processes had
 * in flight (each worker records the op it is in before it starts it):
 * waits that returned 0 <= waiters counted by wakes + in-flight wakes of
 * killed wakers, and waiters counted <= waits that returned 0 + killed
 * waiters (a wake never counts a waiter that does not return 0, and no wait
 * returns 0 uncounted).  No worker may see an error (ENOMEM would be a
 * leaked slot or entry) or die otherwise than by the parent's SIGKILL.
 *
 * Emulation (white-box, src/region/internal.h): at each audit pf_region_check
 * returns 0; after pf_region_scavenge exactly NW slots are taken (the
 * barrier waiters') and none is dead, so the pool has not shrunk; after
 * the kill at the barrier the check returns 0 again, NW slots are live and
 * a dead waiter is queued on the barrier; at the end, with every worker killed and
 * after pf_region_scavenge, the check returns 0 with no slot live or dead,
 * all free, nothing queued and one live process entry (this one).  Under
 * the native backend (the reference) the kernel owns the futexes: the same
 * workload and accounting, without the white-box checks.
 *
 * emu:sysv: the workers' SysV semaphore sets (one per process that parked)
 * are removed by the next process that starts the port (PROG --reclaim,
 * run after each audit and at the end); run as root, the test has an IPC
 * namespace of its own and checks that none is left at the end.
 *
 * PROG --reclaim only starts the backend.  PFT_SEED=n fixes the parent's
 * random choices (the timing still varies). */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork(), SysV semaphores and SIGKILL of children");
  return 0;
}
#else
#ifdef HAVE_CONFIG_H
# include "config.h"   /* _GNU_SOURCE: unshare, CLONE_NEWIPC */
#endif
#include <errno.h>
#include <sched.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sem.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "../ports/sysv/semun.h"
#ifdef __linux__
# include <sys/prctl.h>
#endif

#ifdef PF_HAVE_EMU
# include "region/internal.h"
#endif
#include "pft.h"

#define ANY PFUTEX_BITSET_MATCH_ANY
#define NW 4                      /* workers */
#define NT 2                      /* ring tokens */
#define NOPW 4                    /* op words */
#define RK_SLOTS 32u
#define RK_PROCS 8u
#define RK_MAX_KILLS 3000
#define RK_ROUND 200              /* kills between audits */
#define RK_BUDGET 40              /* seconds of killing, at most */
#define RK_BOUND_NS (20000LL * 1000 * 1000)   /* "reaches the barrier": a deadlock bound */
#define RK_MIN_KILLS 300

#define M_WAITERS 0x80000000u
#define RING_AUDIT (1u << 16)
#define RING_TOKENS(v) ((v) & 0xffffu)

/* What a worker is doing (its in-flight record: kind | nr << 8). */
enum { K_NONE, K_WAIT, K_WAKE, K_REQUEUE, K_CMPRQ, K_WAKEOP, K_RING_PASS, K_RING_WAIT, K_MUTEX,
       K_BAR, K_N };
static const char *const k_names[K_N] = {
  "none", "timed wait", "wake", "requeue", "cmp_requeue", "wake_op", "ring pass", "ring wait",
  "mutex", "barrier wait"
};

/* Per worker index, in shared memory; written by its current incarnation
 * (mutex_done also by whoever recovers a dead owner's increment, under the
 * mutex). */
struct wstat {
  uint32_t inflight;
  uint32_t arrived;               /* the audit this incarnation is at the barrier for */
  uint32_t passed;                /* the last audit passed */
  uint32_t errors;
  uint32_t err_kind, err_errno;
  int32_t err_ret;
  uint32_t ops;
  uint32_t woken, timedout, eagain;
  uint32_t wake_ret;              /* waiters counted by this index's wakes (op words) */
  uint32_t moved;
  uint32_t ring_passes, ring_woken, ring_wake_ret;
  uint32_t mutex_done;            /* increments committed (journal) */
  uint32_t recoveries;
};

struct ctl {
  uint32_t audit;                 /* the audit requested */
  uint32_t journal;               /* (index + 1) << 28 | seq: an increment in progress */
  uint32_t counter;
  uint32_t pad;
  struct wstat w[NW];
};

/* The futex words, in the region. */
struct words {
  uint32_t ring;
  uint32_t pad0[15];
  uint32_t mutex;
  uint32_t pad1[15];
  uint32_t bar;
  uint32_t pad2[15];
  uint32_t op[NOPW][16];
};

static pfutex_region_t *rg;
static struct words *WD;
static struct ctl *ctl;
static int is_emu, is_sysv;
static char self_exe[PATH_MAX];

static uint32_t
ld(const uint32_t *p)
{
  return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static void
st(uint32_t *p, uint32_t v)
{
  __atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

static int
cas(uint32_t *p, uint32_t old, uint32_t nv)
{
  return __atomic_compare_exchange_n(p, &old, nv, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

static uint64_t rng_state;
static uint32_t
rnd(void)
{
  uint64_t x = rng_state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  rng_state = x;
  return (uint32_t)(x >> 16);
}

static void
deadline_in(struct timespec *ts, long long ns)
{
  clock_gettime(CLOCK_MONOTONIC, ts);
  pft_timespec_add_ns(ts, ns);
}

/* ---- Workers ------------------------------------------------------------------------------ */

static void
record_error(struct wstat *ws, uint32_t kind, int ret, int err)
{
  if (ws->errors++ == 0) {
    ws->err_kind = kind;
    ws->err_errno = (uint32_t)err;
    ws->err_ret = ret;
  }
}

static void
inflight(struct wstat *ws, uint32_t kind, uint32_t nr)
{
  st(&ws->inflight, kind | nr << 8);
}

static int
pid_dead(uint32_t pid)
{
  return pid != 0 && kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

/* Lock the mutex; a dead owner's lock is taken over.  ws: where to record
 * errors (the parent passes its own). */
static void
mutex_lock(struct wstat *ws, uint32_t me)
{
  uint32_t *m = &WD->mutex;
  int waited = 0;
  for (;;) {
    uint32_t v = ld(m), owner;
    struct timespec dl;
    int r;
    if (v == 0) {
      if (cas(m, 0, me | (waited ? M_WAITERS : 0)))
        return;
      continue;
    }
    owner = v & ~M_WAITERS;
    if (owner == me) {
      record_error(ws, K_MUTEX, -1, EDEADLK);
      return;
    }
    if (pid_dead(owner)) {
      if (cas(m, v, me | M_WAITERS))
        return;
      continue;
    }
    if (!(v & M_WAITERS)) {
      if (!cas(m, v, v | M_WAITERS))
        continue;
      v |= M_WAITERS;
    }
    deadline_in(&dl, 20 * 1000000LL);
    r = pfutex_wait(m, v, ANY, 0, &dl, PFUTEX_CLOCK_MONOTONIC);
    if (r != 0 && errno != EAGAIN && errno != ETIMEDOUT)
      record_error(ws, K_MUTEX, r, errno);
    waited = 1;
  }
}

static void
mutex_unlock(struct wstat *ws)
{
  uint32_t v = __atomic_exchange_n(&WD->mutex, 0, __ATOMIC_SEQ_CST);
  if (v & M_WAITERS) {
    int r = pfutex_wake(&WD->mutex, ANY, 1, 0);
    if (r < 0 || r > 1)
      record_error(ws, K_MUTEX, r, errno);
  }
}

/* Under the mutex: complete or drop the increment a dead owner left in the
 * journal; then the counter must equal the committed sum.  0, or -1 when
 * the counts disagree (mutual exclusion broken). */
static int
mutex_recover(struct wstat *ws)
{
  uint32_t j = ld(&ctl->journal), sum = 0, c, wi, seq;
  int i;
  for (i = 0; i < NW; i++)
    sum += ld(&ctl->w[i].mutex_done);
  c = ld(&ctl->counter);
  if (j) {
    wi = (j >> 28) - 1;
    seq = j & 0x0fffffffu;
    if (wi >= NW)
      return -1;
    if (ld(&ctl->w[wi].mutex_done) != seq) {
      if (c == sum + 1) {
        st(&ctl->w[wi].mutex_done, seq);          /* the counter was raised: commit */
        sum++;
      }
    }
    st(&ctl->journal, 0);
    if (ws)
      ws->recoveries++;
  }
  return c == sum ? 0 : -1;
}

static void
mutex_step(int i, struct wstat *ws, uint32_t me)
{
  uint32_t s, c;
  inflight(ws, K_MUTEX, 0);
  mutex_lock(ws, me);
  if (mutex_recover(ws) != 0)
    record_error(ws, K_MUTEX, -2, 0);
  s = ld(&ws->mutex_done) + 1;
  st(&ctl->journal, (uint32_t)(i + 1) << 28 | (s & 0x0fffffffu));
  c = ld(&ctl->counter);
  st(&ctl->counter, c + 1);
  st(&ws->mutex_done, s);
  st(&ctl->journal, 0);
  mutex_unlock(ws);
}

static void
ring_step(int i, struct wstat *ws)
{
  uint32_t v = ld(&WD->ring), f, nv;
  int j = (i + 1) % NW, r;
  if (v & RING_AUDIT)
    return;
  f = (v >> (4 * i)) & 15u;
  if (f > 0) {
    nv = v - (1u << (4 * i)) + (1u << (4 * j));
    nv = (nv & 0x1ffffu) | ((((v >> 17) + 1) & 0x7fffu) << 17);
    inflight(ws, K_RING_PASS, 1);
    if (!cas(&WD->ring, v, nv))
      return;
    ws->ring_passes++;
    r = pfutex_wake(&WD->ring, 1u << j, 1, 0);
    if (r < 0 || r > 1)
      record_error(ws, K_RING_PASS, r, errno);
    else
      ws->ring_wake_ret += (uint32_t)r;
  } else {
    inflight(ws, K_RING_WAIT, 1);
    r = pfutex_wait(&WD->ring, v, 1u << i, 0, NULL, PFUTEX_CLOCK_MONOTONIC);
    if (r == 0)
      ws->ring_woken++;
    else if (errno != EAGAIN)
      record_error(ws, K_RING_WAIT, r, errno);
  }
}

static void
op_step(struct wstat *ws, unsigned int pick)
{
  int a = (int)(rnd() % NOPW), b = (a + 1 + (int)(rnd() % (NOPW - 1))) % NOPW, r, nr, nr2;
  uint32_t *wa = &WD->op[a][0], *wb = &WD->op[b][0], v;
  struct timespec dl;

  switch (pick) {
  case 0:                                              /* timed wait */
    v = ld(wa);
    deadline_in(&dl, (1 + rnd() % 5) * 1000000LL);
    inflight(ws, K_WAIT, 1);
    r = pfutex_wait(wa, v, ANY, 0, &dl, PFUTEX_CLOCK_MONOTONIC);
    if (r == 0)
      ws->woken++;
    else if (errno == ETIMEDOUT)
      ws->timedout++;
    else if (errno == EAGAIN)
      ws->eagain++;
    else
      record_error(ws, K_WAIT, r, errno);
    break;
  case 1:                                              /* wake */
    nr = 1 + (int)(rnd() % 3);
    if (rnd() & 1)
      __atomic_fetch_add(wa, 1, __ATOMIC_SEQ_CST);
    inflight(ws, K_WAKE, (uint32_t)nr);
    r = pfutex_wake(wa, ANY, nr, 0);
    if (r < 0 || r > nr)
      record_error(ws, K_WAKE, r, errno);
    else
      ws->wake_ret += (uint32_t)r;
    break;
  case 2:                                              /* requeue: move only */
    nr2 = 1 + (int)(rnd() % 3);
    inflight(ws, K_REQUEUE, 0);
    r = pfutex_requeue(wa, wb, 0, nr2, 0);
    if (r < 0 || r > nr2)
      record_error(ws, K_REQUEUE, r, errno);
    else
      ws->moved += (uint32_t)r;
    break;
  case 3:                                              /* cmp_requeue: wake one, move */
    nr2 = (int)(rnd() % 3);
    v = ld(wa);
    inflight(ws, K_CMPRQ, 1);
    r = pfutex_cmp_requeue(wa, v, wb, 1, nr2, 0);
    if (r < 0 && errno == EAGAIN)
      ws->eagain++;
    else if (r < 0 || r > 1 + nr2)
      record_error(ws, K_CMPRQ, r, errno);
    else {
      ws->wake_ret += r > 0 ? 1u : 0u;
      ws->moved += r > 0 ? (uint32_t)r - 1 : 0u;
    }
    break;
  default:                                             /* wake_op */
    nr = 1 + (int)(rnd() % 2);
    nr2 = (int)(rnd() % 3);
    inflight(ws, K_WAKEOP, (uint32_t)(nr + nr2));
    r = pfutex_wake_op(wa, wb, nr, nr2, PFUTEX_OP(PFUTEX_OP_ADD, 1, PFUTEX_OP_CMP_GE, 0), 0);
    if (r < 0 || r > nr + nr2)
      record_error(ws, K_WAKEOP, r, errno);
    else
      ws->wake_ret += (uint32_t)r;
    break;
  }
}

static void
barrier(struct wstat *ws, uint32_t a)
{
  int r;
  st(&ws->arrived, a);
  inflight(ws, K_BAR, 0);
  r = pfutex_wait(&WD->bar, a - 1, ANY, 0, NULL, PFUTEX_CLOCK_MONOTONIC);
  if (r == 0)
    st(&ws->passed, a);
  else {
    record_error(ws, K_BAR, r, errno);
    st(&ws->passed, a);                     /* (counted: the audit sees it) */
  }
}

static void
worker(int i)
{
  struct wstat *ws = &ctl->w[i];
  uint32_t me = (uint32_t)getpid();
  rng_state = ((uint64_t)me << 32) ^ (uint64_t)pft_now_ns() ^ 0x9e3779b97f4a7c15ull;
  for (;;) {
    uint32_t a = ld(&ctl->audit), pick;
    if (a != ld(&ws->passed)) {
      barrier(ws, a);
      st(&ws->inflight, 0);
      continue;
    }
    pick = rnd() % 100;
    if (pick < 20)
      ring_step(i, ws);
    else if (pick < 40)
      mutex_step(i, ws, me);
    else if (pick < 65)
      op_step(ws, 0);
    else if (pick < 77)
      op_step(ws, 1);
    else if (pick < 83)
      op_step(ws, 2);
    else if (pick < 91)
      op_step(ws, 3);
    else
      op_step(ws, 4);
    st(&ws->inflight, 0);
    st(&ws->ops, ws->ops + 1);
  }
}

/* ---- The parent ----------------------------------------------------------------------------- */

static pid_t wpid[NW];
static struct wstat pst;                    /* the parent's own errors */
static uint32_t slack_wake, slack_wait, ring_slack_wake, ring_slack_wait, parent_ring_wake;
static int kills, unexpected, kill_other_status;
static char unexpected_why[256];

static void
spawn(int i)
{
  pid_t pid;
  struct wstat *ws = &ctl->w[i];
  st(&ws->passed, ld(&WD->bar));            /* at the barrier of the audit in progress, if any */
  st(&ws->arrived, 0);
  st(&ws->inflight, 0);
  fflush(stdout);
  if ((pid = fork()) < 0)
    sysbail("fork");
  if (pid == 0) {
#ifdef PR_SET_PDEATHSIG
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
#endif
    alarm(300);
    worker(i);
    _exit(0);
  }
  wpid[i] = pid;
}

/* After worker i died: account for what it had in flight. */
static void
account_dead(int i)
{
  uint32_t f = ld(&ctl->w[i].inflight), kind = f & 0xffu, nr = f >> 8;
  switch (kind) {
  case K_WAKE:
  case K_CMPRQ:
  case K_WAKEOP:
    slack_wake += nr;
    break;
  case K_WAIT:
    slack_wait++;
    break;
  case K_RING_PASS:
    {
      /* it may have moved a token and died before its wake: wake in its place */
      int r = pfutex_wake(&WD->ring, 1u << ((i + 1) % NW), 1, 0);
      ring_slack_wake++;
      if (r < 0)
        record_error(&pst, K_RING_PASS, r, errno);
      else
        parent_ring_wake += (uint32_t)r;
    }
    break;
  case K_RING_WAIT:
    ring_slack_wait++;
    break;
  }
}

static void
kill_worker(int i)
{
  int status;
  kill(wpid[i], SIGKILL);
  while (waitpid(wpid[i], &status, 0) < 0)
    if (errno != EINTR)
      sysbail("waitpid");
  if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL) {
    if (!kill_other_status++)
      snprintf(unexpected_why, sizeof unexpected_why, "worker %d ended by itself: status %#x", i,
               status);
  }
  account_dead(i);
  kills++;
}

/* A worker that died without being killed. */
static void
check_unexpected(void)
{
  int status, i;
  pid_t pid;
  while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
    for (i = 0; i < NW; i++)
      if (wpid[i] == pid)
        break;
    if (i == NW)
      continue;
    if (!unexpected++)
      snprintf(unexpected_why, sizeof unexpected_why, "worker %d died: %s %d", i,
               WIFSIGNALED(status) ? "signal" : "exit",
               WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
    account_dead(i);
    spawn(i);
  }
}

static int
proc_asleep(pid_t pid)
{
  int st = pft_task_state(pid, 0);
  return st == 'S' || st == 'D';
}

#ifdef PF_HAVE_EMU
/* White-box: is pid's node queued and pushed on w (owner alive)?  With pid
 * 0 and dead set: how many QUEUED nodes of dead owners are keyed on w. */
static int
queued_on(uint32_t *w, pid_t pid, int dead)
{
  struct pf_key k;
  struct pf_table *tab;
  uint32_t s;
  int n = 0;
  pf_region_key(rg, w, &k, &tab);
  for (s = 0; s < tab->nslots; s++) {
    struct pf_node *nd = &tab->slots[s];
    uint32_t o = AO_int_load(&nd->owner), e;
    if (o == 0 || AO_int_load(&nd->state) != PF_W_QUEUED || !pf_node_keyeq(nd, &k))
      continue;
    if (dead) {
      n += !pf_node_owner_alive(tab, nd);
      continue;
    }
    if (!AO_int_load(&nd->pushed) || !pf_node_owner_alive(tab, nd))
      continue;
    e = o & 0xffffu;
    if (e >= 1 && e <= rg->att->nprocs && (pid_t)AO_int_load(&rg->att->procs[e - 1].pid) == pid)
      return 1;
  }
  return n;
}

/* On a failed check: each bucket whose waiter count is below its queue
 * length (or wrapped), with the words that hash there. */
static void
dump_buckets(void)
{
  struct pf_table *tab = &rg->att->tab;
  uint32_t i;
  for (i = 0; i < tab->nbuckets; i++) {
    struct pf_bucket *b = &tab->buckets[i];
    uint32_t w = AO_int_load(&b->waiters), q = 0, s;
    char names[128];
    int n = 0, j;
    for (s = 0; s < tab->nslots; s++) {
      struct pf_node *nd = &tab->slots[s];
      if (AO_int_load(&nd->owner) && nd->linked && nd->bucket == i)
        q++;
    }
    if (w >= q && w < 0x80000000u)
      continue;
    names[0] = 0;
    {
      uint32_t *ws[3 + NOPW];
      static const char *const nm[3 + NOPW] = { "ring", "mutex", "barrier", "op0", "op1", "op2",
                                                "op3" };
      ws[0] = &WD->ring;
      ws[1] = &WD->mutex;
      ws[2] = &WD->bar;
      for (j = 0; j < NOPW; j++)
        ws[3 + j] = &WD->op[j][0];
      for (j = 0; j < 3 + NOPW; j++) {
        struct pf_key k;
        struct pf_table *t;
        pf_region_key(rg, ws[j], &k, &t);
        if (pf_key_bucket(t, &k) == i)
          n += snprintf(names + n, sizeof names - (size_t)n, " %s", nm[j]);
      }
    }
    diag("  bucket %u: waiters %d, %u linked nodes; words:%s", i, (int)w, q, names);
  }
}

/* Buckets whose waiter count went below zero (a later waiter there would
 * be queued with a count of 0: wakes take the fast path and miss it). */
static int
wrapped_buckets(void)
{
  uint32_t i;
  int n = 0;
  for (i = 0; i < rg->att->tab.nbuckets; i++)
    n += AO_int_load(&rg->att->tab.buckets[i].waiters) >= 0x80000000u;
  return n;
}
#endif

/* Is worker i asleep at the barrier of audit a? */
static int
at_barrier(int i, uint32_t a)
{
  if (ld(&ctl->w[i].arrived) != a)
    return 0;
#ifdef PF_HAVE_EMU
  if (is_emu && !queued_on(&WD->bar, wpid[i], 0))
    return 0;
#endif
  return proc_asleep(wpid[i]);
}

/* Wait until every worker sleeps at the barrier (two samples); 0 or -1. */
static int
all_at_barrier(uint32_t a, char *why, size_t len)
{
  long long end = pft_now_ns() + RK_BOUND_NS;
  int seen = 0, i, n;
  for (;;) {
    check_unexpected();
    for (n = 0, i = 0; i < NW; i++)
      n += at_barrier(i, a);
    if (n == NW) {
      if (++seen >= 2)
        return 0;
    } else {
      seen = 0;
    }
    if (pft_now_ns() > end)
      break;
    usleep(500);
  }
  n = 0;
  for (i = 0; i < NW; i++) {
    uint32_t f = ld(&ctl->w[i].inflight);
    if (!at_barrier(i, a))
      n += snprintf(why + n, len - (size_t)n, "worker %d (pid %d) stuck in %s; ", i, (int)wpid[i],
                    k_names[(f & 0xffu) < K_N ? (f & 0xffu) : 0]);
    if ((size_t)n >= len)
      break;
  }
  return -1;
}

static void
ring_flag(int on)
{
  uint32_t v;
  do
    v = ld(&WD->ring);
  while (!cas(&WD->ring, v, on ? v | RING_AUDIT : v & ~RING_AUDIT));
}

static int
ring_tokens(void)
{
  uint32_t v = RING_TOKENS(ld(&WD->ring));
  int i, n = 0;
  for (i = 0; i < NW; i++)
    n += (int)((v >> (4 * i)) & 15u);
  return n;
}

/* The SysV semaphore sets of this IPC namespace not tagged with this
 * process's pid (emu:sysv tags each set with its creator: values 0x5046,
 * pid low 15 bits, pid high bits in its last three semaphores).  -1: no
 * list. */
static int
foreign_sysv_sets(int *untagged)
{
#ifdef PF_SYSV_HAVE_SEM_SCAN
  struct seminfo si;
  int maxidx, i, n = 0;
  *untagged = 0;
  if ((maxidx = semctl(0, 0, SEM_INFO, (struct seminfo *)&si)) < 0)
    return -1;
  for (i = 0; i <= maxidx; i++) {
    struct semid_ds ds;
    int id = semctl(i, 0, SEM_STAT, &ds), t, lo, hi;
    if (id < 0 || ds.sem_nsems < 3)
      continue;
    t = semctl(id, (int)ds.sem_nsems - 3, GETVAL);
    lo = semctl(id, (int)ds.sem_nsems - 2, GETVAL);
    hi = semctl(id, (int)ds.sem_nsems - 1, GETVAL);
    if (t == 0x5046 && (lo | hi << 15) == (int)getpid())
      continue;
    n++;
    *untagged += t == 0;
  }
  return n;
#else
  *untagged = 0;
  return -1;
#endif
}

static void
reclaim(void)
{
  pid_t pid;
  int status;
  if (!is_sysv)
    return;
  fflush(stdout);
  if ((pid = fork()) < 0)
    sysbail("fork");
  if (pid == 0) {
    execl(self_exe, self_exe, "--reclaim", (char *)NULL);
    _exit(127);
  }
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
    ;
}

/* The verdicts, each over every audit (first failure kept). */
enum { V_BARRIER, V_RELEASE, V_COUNTER, V_TOKENS, V_ACCT, V_RING_ACCT, V_PROGRESS, V_WB_AUDIT,
       V_N };
static int v_fail[V_N];
static char v_why[V_N][512];
#define VFAIL(v, ...) do { if (!v_fail[v]++) snprintf(v_why[v], sizeof v_why[v], __VA_ARGS__); } while (0)

static void
sums(uint32_t *woken, uint32_t *wake_ret, uint32_t *rwoken, uint32_t *rwake, uint32_t *ops)
{
  int i;
  *woken = *wake_ret = *rwoken = *rwake = *ops = 0;
  for (i = 0; i < NW; i++) {
    *woken += ld(&ctl->w[i].woken);
    *wake_ret += ld(&ctl->w[i].wake_ret);
    *rwoken += ld(&ctl->w[i].ring_woken);
    *rwake += ld(&ctl->w[i].ring_wake_ret);
    *ops += ld(&ctl->w[i].ops);
  }
}

/* The checks that hold whenever no worker runs (an audit, the end). */
static void
quiet_checks(const char *when)
{
  uint32_t woken, wake_ret, rwoken, rwake, ops;
  int t;
  mutex_lock(&pst, (uint32_t)getpid());
  if (mutex_recover(&pst) != 0)
    VFAIL(V_COUNTER, "%s: counter %u, committed increments %u..", when, ld(&ctl->counter),
          ld(&ctl->w[0].mutex_done) + ld(&ctl->w[1].mutex_done) + ld(&ctl->w[2].mutex_done)
          + ld(&ctl->w[3].mutex_done));
  mutex_unlock(&pst);
  if ((t = ring_tokens()) != NT)
    VFAIL(V_TOKENS, "%s: the ring holds %d tokens, not %d", when, t, NT);
  sums(&woken, &wake_ret, &rwoken, &rwake, &ops);
  if (woken > wake_ret + slack_wake || wake_ret > woken + slack_wait)
    VFAIL(V_ACCT, "%s: op words: %u waits woken, %u counted by wakes; in flight when killed: "
          "%u wake counts, %u waits", when, woken, wake_ret, slack_wake, slack_wait);
  if (rwoken > rwake + parent_ring_wake + ring_slack_wake
      || rwake + parent_ring_wake > rwoken + ring_slack_wait)
    VFAIL(V_RING_ACCT, "%s: ring: %u waits woken, %u + %u counted by wakes; in flight when "
          "killed: %u wakes, %u waits", when, rwoken, rwake, parent_ring_wake, ring_slack_wake,
          ring_slack_wait);
}

static void
audit(uint32_t a)
{
  char why[256], when[32];
  int i, r, victim;
  long long end;

  snprintf(when, sizeof when, "audit %u", a);
  st(&ctl->audit, a);
  ring_flag(1);
  if ((r = pfutex_wake(&WD->ring, ANY, INT_MAX, 0)) < 0)
    record_error(&pst, K_RING_WAIT, r, errno);
  else
    parent_ring_wake += (uint32_t)r;
  if (all_at_barrier(a, why, sizeof why) != 0) {
    VFAIL(V_BARRIER, "%s: not every worker reached the barrier within %lld s: %s", when,
          RK_BOUND_NS / 1000000000LL, why);
    return;
  }
#ifdef PF_HAVE_EMU
  if (is_emu) {
    /* the pool has not shrunk: once the dead processes' slots are
     * reclaimed, all but the sleepers' are free */
    struct pf_region_stats s;
    const char *w = "";
    pf_region_scavenge(rg);
    if ((r = pf_region_check(rg, &s, &w)) != 0) {
      VFAIL(V_WB_AUDIT, "%s: pf_region_check %d (%s)", when, r, w);
      dump_buckets();
    } else if (wrapped_buckets()) {
      VFAIL(V_WB_AUDIT, "%s: %d buckets' waiter counts below zero", when, wrapped_buckets());
      dump_buckets();
    } else if (s.slots_live != NW || s.slots_dead != 0 || s.slots_free != RK_SLOTS - NW) {
      VFAIL(V_WB_AUDIT, "%s: after pf_region_scavenge, slots free %u live %u dead %u, expected "
            "%u %d 0", when, s.slots_free, s.slots_live, s.slots_dead, RK_SLOTS - NW, NW);
    }
  }
#endif
  /* a dead waiter on the barrier's queue, then its replacement */
  victim = (int)(rnd() % NW);
  kill_worker(victim);
  spawn(victim);
  if (all_at_barrier(a, why, sizeof why) != 0) {
    VFAIL(V_BARRIER, "%s: the replacement did not reach the barrier: %s", when, why);
    return;
  }
#ifdef PF_HAVE_EMU
  if (is_emu) {
    struct pf_region_stats s;
    const char *w = "";
    int dead = queued_on(&WD->bar, 0, 1);
    if ((r = pf_region_check(rg, &s, &w)) != 0) {
      VFAIL(V_WB_AUDIT, "%s: pf_region_check %d (%s)", when, r, w);
      dump_buckets();
    }
    else if (s.slots_live != NW)
      VFAIL(V_WB_AUDIT, "%s: %u live slots with %d workers asleep at the barrier", when,
            s.slots_live, NW);
    else if (dead < 1)
      VFAIL(V_WB_AUDIT, "%s: no dead waiter queued on the barrier word", when);
  }
#endif
  quiet_checks(when);
  /* release them one at a time */
  for (i = 1; i <= NW; i++) {
    int passed = 0, j;
    if ((r = pfutex_wake(&WD->bar, ANY, 1, 0)) != 1) {
      VFAIL(V_RELEASE, "%s: wake(barrier, 1) number %d returned %d %s", when, i, r,
            r < 0 ? pft_errname(errno) : "");
      break;
    }
    end = pft_now_ns() + RK_BOUND_NS;
    for (;;) {
      for (passed = 0, j = 0; j < NW; j++)
        passed += ld(&ctl->w[j].passed) == a;
      if (passed >= i || pft_now_ns() > end)
        break;
      usleep(50);
    }
    if (passed != i) {
      VFAIL(V_RELEASE, "%s: after %d wake(barrier, 1) returning 1, %d workers passed", when, i,
            passed);
      break;
    }
  }
  if (i > NW && (r = pfutex_wake(&WD->bar, ANY, 1, 0)) != 0)
    VFAIL(V_RELEASE, "%s: wake(barrier, 1) after every worker passed returned %d", when, r);
  st(&WD->bar, a);
  ring_flag(0);
  reclaim();
}

static pfutex_region_t *
new_region(void)
{
  pfutex_region_attr_t at;
  memset(&at, 0, sizeof at);
  at.slots = RK_SLOTS;
  at.procs = RK_PROCS;
  return pfutex_region_anon_attr(sizeof(struct words), &at);
}

int
main(int argc, char **argv)
{
  long long t0, budget_ns, round_t;
  const char *e;
  uint64_t seed;
  uint32_t a = 0, ops_before = 0, woken, wake_ret, rwoken, rwake, ops;
  int i, errors = 0, rounds = 0, budget_s = RK_BUDGET, private_ipc = 0;
  ssize_t n;

  if (argc == 2 && strcmp(argv[1], "--reclaim") == 0) {
    (void)pfutex_backend();
    return 0;
  }
  PFT_SKIP_UNDER_TSAN();
  if (!pfutex_backend())
    skip_all("no backend");
  is_emu = pft_backend_is_emu();
#ifndef PF_HAVE_EMU
  is_emu = 0;
#endif
  is_sysv = strcmp(pfutex_backend(), "emu:sysv") == 0;
  if ((n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1)) <= 0)
    is_sysv = 0;
  else
    self_exe[n] = 0;
#ifdef CLONE_NEWIPC
  /* emu:sysv: a private IPC namespace (root only), so the sets of the
   * killed workers can be counted, and whatever is left goes with it */
  if (is_sysv && unshare(CLONE_NEWIPC) == 0)
    private_ipc = 1;
#endif
  if ((e = getenv("PFT_KILL_SECONDS")) && atoi(e) > 0)
    budget_s = atoi(e);
  plan(V_N - 1 + (is_emu ? 2 : 0) + 3 + (is_sysv ? 1 : 0));
  pft_watchdog((unsigned int)budget_s + 200);

  seed = (e = getenv("PFT_SEED")) ? strtoull(e, NULL, 0) : (uint64_t)pft_now_ns();
  rng_state = seed | 1;
  diag("backend %s, seed %llu (PFT_SEED), budget %d s, at most %d kills", pfutex_backend(),
       (unsigned long long)seed, budget_s, RK_MAX_KILLS);

  ctl = mmap(NULL, sizeof *ctl, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (ctl == MAP_FAILED)
    sysbail("mmap");
  memset(ctl, 0, sizeof *ctl);
  if (!(rg = new_region()))
    sysbail("pfutex_region_anon_attr");
  WD = pfutex_region_addr(rg);
  WD->ring = NT;                             /* every token at worker 0 */

  for (i = 0; i < NW; i++)
    spawn(i);
  t0 = pft_now_ns();
  budget_ns = (long long)budget_s * 1000000000LL;
  round_t = t0;
  while (kills < RK_MAX_KILLS && pft_now_ns() - t0 < budget_ns && !v_fail[V_BARRIER]) {
    struct timespec d = { 0, (long)(rnd() % 2001) * 1000L };
    nanosleep(&d, NULL);
    check_unexpected();
    i = (int)(rnd() % NW);
    kill_worker(i);
    spawn(i);
    if (kills % RK_ROUND == 0) {
      sums(&woken, &wake_ret, &rwoken, &rwake, &ops);
      if (ops == ops_before)
        VFAIL(V_PROGRESS, "round %d: no op completed in %d kills (%.1f s)", rounds, RK_ROUND,
              (double)(pft_now_ns() - round_t) / 1e9);
      ops_before = ops;
      rounds++;
      audit(++a);
      round_t = pft_now_ns();
    }
  }
  if (!v_fail[V_BARRIER])
    audit(++a);
  /* the end: every worker killed at a random moment */
  for (i = 0; i < NW; i++) {
    struct timespec d = { 0, (long)(rnd() % 2001) * 1000L };
    nanosleep(&d, NULL);
    kill_worker(i);
  }
  check_unexpected();
  quiet_checks("the end");
  reclaim();
  sums(&woken, &wake_ret, &rwoken, &rwake, &ops);
  diag("%d kills in %.1f s, %u audits; %u ops: %u waits woken, %u counted by wakes, ring %u "
       "passes; counter %u; slack: %u wake counts, %u waits", kills,
       (double)(pft_now_ns() - t0) / 1e9, a, ops, woken, wake_ret,
       ctl->w[0].ring_passes + ctl->w[1].ring_passes + ctl->w[2].ring_passes + ctl->w[3].ring_passes,
       ld(&ctl->counter), slack_wake, slack_wait);

  ok(kills >= RK_MIN_KILLS || kills >= RK_MAX_KILLS, "the workload ran: %d kills (at least %d)",
     kills, RK_MIN_KILLS);
  if (!ok(!unexpected && !kill_other_status, "no worker died otherwise than by SIGKILL"))
    diag("  %s", unexpected_why);
  for (i = 0; i < NW; i++) {
    struct wstat *ws = &ctl->w[i];
    if (ws->errors) {
      diag("  worker %d: %u errors, first: %s returned %d errno %s", i, ws->errors,
           k_names[ws->err_kind < K_N ? ws->err_kind : 0], (int)ws->err_ret,
           pft_errname((int)ws->err_errno));
      errors += (int)ws->errors;
    }
  }
  if (pst.errors)
    diag("  parent: %u errors, first: %s returned %d errno %s", pst.errors,
         k_names[pst.err_kind < K_N ? pst.err_kind : 0], (int)pst.err_ret,
         pft_errname((int)pst.err_errno));
  ok(errors == 0 && pst.errors == 0, "no op failed (no ENOMEM: the pool never ran out)");
  {
    static const char *const what[V_N] = {
      "every audit: every worker reached the barrier (no deadlock)",
      "every audit: wake(barrier, 1) released exactly one live worker each time, NW in all, "
      "then 0 (a dead waiter queued)",
      "the counter under the mutex is exact (dead holders' increments completed or dropped)",
      "the ring's tokens are conserved",
      "op words: waits woken and waiters counted by wakes agree within what killed processes "
      "had in flight",
      "ring: waits woken and waiters counted by wakes agree within what killed processes had "
      "in flight",
      "every round made progress",
      "every audit: pf_region_check 0; after pf_region_scavenge the pool is whole (only the NW "
      "sleepers' slots taken); then a dead waiter queued on the barrier",
    };
    for (i = 0; i < V_N; i++) {
      if (i == V_WB_AUDIT && !is_emu)
        continue;
      if (!ok(!v_fail[i], "%s", what[i]))
        diag("  %s (%d failures)", v_why[i], v_fail[i]);
    }
  }
#ifdef PF_HAVE_EMU
  if (is_emu) {
    struct pf_region_stats s;
    const char *w = "";
    int r;
    pf_region_scavenge(rg);
    r = pf_region_check(rg, &s, &w);
    if (!ok(r == 0 && s.slots_live == 0 && s.slots_dead == 0 && s.slots_free == RK_SLOTS
            && s.queued == 0 && s.procs_live == 1 && wrapped_buckets() == 0,
            "the end: region consistent, no slot leaked (%u free of %u), nothing queued, no "
            "waiter count below zero", s.slots_free, RK_SLOTS)) {
      diag("  check %d (%s): slots free %u live %u dead %u, queued %u, procs live %u dead %u, "
           "%d counts below zero", r, w, s.slots_free, s.slots_live, s.slots_dead, s.queued,
           s.procs_live, s.procs_dead, wrapped_buckets());
      dump_buckets();
    }
    diag("waiter counts minus queued nodes at the end: %d (an excess only costs the wake fast "
         "path)", (int)s.waiters_excess);
  }
#endif
  if (is_sysv) {
    int untagged = 0, left = private_ipc ? foreign_sysv_sets(&untagged) : -1;
    if (left < 0)
      skip("SysV sets of the killed workers: no private IPC namespace to count them in (root "
           "only)");
    else if (!ok(left == 0, "no SysV set of a killed worker is left once the port reclaimed "
                 "them (%d left, %d untagged)", left, untagged))
      diag("  an untagged set: its creator was killed between semget and the tag "
           "(ports/sysv/park.c pf_sysv_set_new); nobody reclaims it");
  }
  return 0;
}
#endif /* !_WIN32 */
