/* region_crash: a process killed at any crash point of the emulation's
 * region code (configure --enable-crash-points) never deadlocks the region,
 * never leaves its queues inconsistent, never has a wake counted on a dead
 * waiter, and never leaks a slot or a process entry.
 *
 * For every crash point, every op kind below and k = 1, 2, a fork child (the
 * victim) arms the point (pf_crash_name/pf_crash_left: it SIGKILLs itself
 * the k-th time it reaches the point) and does the op on an anonymous region
 * it shares with the parent and with live helper processes waiting on the
 * same words.  A victim that never reaches the point ends normally, with the
 * op's normal result (checked): "not reached".  After the victim ended, the
 * parent (white-box, src/region/internal.h):
 *   - pf_region_check must return 0 (it takes over locks of dead holders and
 *     rebuilds their buckets from the slots);
 *   - the helpers the victim had woken before it died (off every queue)
 *     must end by themselves, with 0 (woken wins, even when the waker died
 *     between marking them and unparking them: the 1-second park slices);
 *   - on each word, wake(1) is repeated: it returns 1 exactly as many times
 *     as live waiters are still queued there, and each time exactly one of
 *     them ends, with 0 (a wake never lands on, nor counts, a dead waiter),
 *     then wake(1) returns 0;
 *   - after pf_region_scavenge: check again, and no slot is live or dead
 *     (slots_free == nslots) and nothing is queued;
 *   - a fresh process waits on the word and a wake(1) wakes it (returns 1).
 * One region serves every case, with small pools (16 slots, 16 process
 * entries), so a leaked slot or entry would fail the cases that follow.
 * Finally every crash point must have been reached by at least one op.
 *
 * Op kinds: wait (untimed; the victim queues first, two helpers behind it),
 * timed_wait (a 20 ms wait that times out behind two helpers), wake (wake(1)
 * of two helpers), wake_all, wake_dead (wake(1) when a waiter killed in its
 * sleep heads the queue), takeover (as wake_dead, and a process killed at
 * wake_locked holds the bucket lock: the victim takes the lock over and
 * rebuilds the bucket), requeue (all of A's two waiters to B), cmp_requeue
 * (wake one, move one), takeover_requeue (requeue of A's waiter to B,
 * which has a waiter of its own, when a process killed at wake_locked holds
 * B's bucket lock: the requeue takes it over), wake_op (one waiter on each word), open (the victim
 * opens a named region twice: process entries), create (the victim
 * creates two named regions: a region whose creator died half way fails to
 * open with ENOTRECOVERABLE; unlinked, the name can be created again) and
 * xrequeue (a requeue of A's two waiters to a word X of a second anonymous
 * region: the helpers' nodes there are taken for them and handed over,
 * src/requeue.c; a helper whose move the victim's death left half done
 * ends by itself with 0, a spurious wakeup futex(2) allows, and X, A and
 * B are accounted as above, each in its own region; both regions are
 * checked and must leak nothing) and xrequeue_vx (the same with helpers
 * in futex_waitv on A and a word of the first region nobody wakes: their
 * members moved to X, where their waitvs have no parker until they
 * follow the move, src/waitv.c (M)).
 *
 * Under the native backend the kernel owns the futexes and the regions'
 * tables are unused: the test skips (tests/region_kill runs its workload
 * there as the reference).  PROG --only OP POINT K runs one case;
 * PROG --reclaim only starts the backend (emu:sysv: removes the SysV sets of
 * the dead children; run every few cases; as root the test also runs in an
 * IPC namespace of its own). */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork() and SIGKILL at crash points in a child");
  return 0;
}
#else
#ifdef HAVE_CONFIG_H
# include "config.h"   /* _GNU_SOURCE: unshare, CLONE_NEWIPC */
#endif
#include <errno.h>
#include <sched.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
# include <sys/prctl.h>
#endif

#include "region/internal.h"
#include "pft.h"

#if !defined(PF_CRASH_POINTS) || !defined(PF_HAVE_EMU)
int
main(int argc, char **argv)
{
  (void)argc;
  (void)argv;
# ifndef PF_HAVE_EMU
  skip_all("no emulation engine in this build");
# else
  skip_all("crash points not built (configure --enable-crash-points)");
# endif
}
#else

#define ANY PFUTEX_BITSET_MATCH_ANY
#define RC_SLOTS 16u
#define RC_BUCKETS 16u
#define RC_PROCS 16u
#define RC_USER 4096u
#define RC_NWORDS (RC_USER / 4)
#define RC_MAXCH 8
#define RC_BOUND_NS (8000LL * 1000 * 1000)     /* "ends by itself": generous */
#define OP_WAKE_B NOPS             /* the lock holder of takeover_requeue */
#define RC_BUDGET_NS (100LL * 1000 * 1000 * 1000) /* the whole run (then skip) */
#define RC_SPURIOUS 3              /* a waiter's exit: 0 from a move out of reach */
#define RC_VX_QUIET 4              /* a waitv helper's exit: its quiet entry woken */

enum {
  OP_WAIT, OP_TIMED, OP_WAKE, OP_WAKE_ALL, OP_WAKE_DEAD, OP_TAKEOVER, OP_REQUEUE,
  OP_CMP_REQUEUE, OP_TAKEOVER_RQ, OP_WAKE_OP, OP_OPEN, OP_CREATE, OP_XREQUEUE, OP_XREQUEUE_VX,
  NOPS
};
static const char *const op_names[NOPS] = {
  "wait", "timed_wait", "wake", "wake_all", "wake_dead", "takeover", "requeue",
  "cmp_requeue", "takeover_requeue", "wake_op", "open", "create", "xrequeue", "xrequeue_vx"
};
/* A victim that ends normally exits with this (a count, or 100 + errno). */
static const int op_normal[NOPS] = { 0, 100 + ETIMEDOUT, 1, 2, 1, 1, 2, 2, 1, 2, 0, 0, 2, 2 };
/* Op xrequeue_vx: the helpers wait in futex_waitv, entry 0 the case's
 * word, entry 1 this word of the first region, which nobody wakes. */
static uint32_t *rc_vx_quiet;
static int rc_spawn_vx;                 /* spawn_waiter: a waitv helper */

static pfutex_region_t *rg;             /* the anonymous region of every case */
static uint32_t *U;                     /* its user area */
static pfutex_region_t *rg2;            /* the second one (op xrequeue's target) */
static uint32_t *U2;
static pfutex_region_t *ro;             /* a named region (op "open") */
static char name_o[64], name_c[2][64];
static int is_sysv;
static char self_exe[PATH_MAX];

static void
cleanup_names(void)
{
  if (name_o[0])
    (void)pfutex_region_unlink(name_o);
  (void)pfutex_region_unlink(name_c[0]);
  (void)pfutex_region_unlink(name_c[1]);
}

/* ---- Children ----------------------------------------------------------------- */

struct child {
  pid_t pid;
  const char *role;
  int done;          /* reaped */
  int status;
};

struct kase {
  int op, k;
  const char *point;
  uint32_t *A, *B;
  uint32_t *X;       /* in rg2 */
  struct child ch[RC_MAXCH];
  int nch;
  char why[512];     /* the first failure */
  int reached;
};

#define FAILF(c, ...) do { if (!(c)->why[0]) snprintf((c)->why, sizeof (c)->why, __VA_ARGS__); } while (0)

static void
child_setup(void)
{
#ifdef PR_SET_PDEATHSIG
  prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
#endif
  alarm(90);                             /* never outlive a stuck parent */
}

static struct child *
add_child(struct kase *c, pid_t pid, const char *role)
{
  struct child *x = &c->ch[c->nch++];
  x->pid = pid;
  x->role = role;
  x->done = 0;
  x->status = 0;
  return x;
}

static void
deadline_in(struct timespec *ts, long long ns)
{
  clock_gettime(CLOCK_MONOTONIC, ts);
  pft_timespec_add_ns(ts, ns);
}

static int
exit_code(int r)
{
  return r >= 0 ? (r > 99 ? 99 : r) : 100 + (errno > 150 ? 150 : errno);
}

/* A waiter: wait(w, 0) (timeout_ms < 0: untimed), exit 0 when woken, else
 * 100 + errno; RC_SPURIOUS when its 0 was a spurious wakeup, a moved wait
 * whose destination was out of reach (wait.c (M), counted by the engine).
 * arm: the crash point the child arms (NULL: none). */
static struct child *
spawn_waiter(struct kase *c, uint32_t *w, long timeout_ms, const char *arm, long k,
             const char *role)
{
  pid_t pid;
  fflush(stdout);
  if ((pid = fork()) < 0)
    sysbail("fork");
  if (pid == 0) {
    struct timespec dl;
    int r;
    child_setup();
    if (timeout_ms >= 0)
      deadline_in(&dl, timeout_ms * 1000000LL);
    if (arm) {
      pf_crash_name = arm;
      pf_crash_left = k;
    }
    if (rc_spawn_vx) {
      struct pfutex_waitv v[2];
      memset(v, 0, sizeof v);
      v[0].uaddr = (uintptr_t)w;
      v[1].uaddr = (uintptr_t)rc_vx_quiet;
      v[0].flags = v[1].flags = PFUTEX2_SIZE_U32;
      r = (int)pfutex_waitv(v, 2, 0, timeout_ms >= 0 ? &dl : NULL, PFUTEX_CLOCK_MONOTONIC);
      if (r == 1)
        _exit(RC_VX_QUIET);
    } else {
      r = pfutex_wait(w, 0, ANY, 0, timeout_ms >= 0 ? &dl : NULL, PFUTEX_CLOCK_MONOTONIC);
    }
    if (r == 0 && AO_load(&pf_xmove_unreachable_total) != 0)
      _exit(RC_SPURIOUS);
    _exit(exit_code(r));
  }
  return add_child(c, pid, role);
}

static int
victim_op(struct kase *c, int op)
{
  int i, r = 0;
  switch (op) {
  case OP_WAKE:
  case OP_WAKE_DEAD:
  case OP_TAKEOVER:
    return pfutex_wake(c->A, ANY, 1, 0);
  case OP_WAKE_ALL:
    return pfutex_wake(c->A, ANY, INT_MAX, 0);
  case OP_REQUEUE:
  case OP_TAKEOVER_RQ:
    return pfutex_requeue(c->A, c->B, 0, INT_MAX, 0);
  case OP_WAKE_B:
    return pfutex_wake(c->B, ANY, 1, 0);
  case OP_XREQUEUE:
  case OP_XREQUEUE_VX:
    return pfutex_requeue(c->A, c->X, 0, INT_MAX, 0);
  case OP_CMP_REQUEUE:
    return pfutex_cmp_requeue(c->A, 0, c->B, 1, INT_MAX, 0);
  case OP_WAKE_OP:
    return pfutex_wake_op(c->A, c->B, 1, 1,
                          PFUTEX_OP(PFUTEX_OP_ADD, 1, PFUTEX_OP_CMP_EQ, 0), 0);
  case OP_OPEN:
    for (i = 0; i < 2; i++) {
      pfutex_region_t *h = pfutex_region_open(name_o, 0, O_RDWR, 0);
      if (!h)
        return -1;
      r = pfutex_region_close(h);
      if (r < 0)
        return -1;
    }
    return 0;
  case OP_CREATE:
    for (i = 0; i < 2; i++) {
      pfutex_region_t *h = pfutex_region_open(name_c[i], RC_USER, O_RDWR | O_CREAT | O_EXCL, 0600);
      if (!h)
        return -1;
      if (pfutex_region_close(h) < 0)
        return -1;
    }
    return 0;
  }
  errno = EINVAL;
  return -1;
}

/* A process doing op (a wake kind) with point armed. */
static struct child *
spawn_op(struct kase *c, int op, const char *arm, long k, const char *role)
{
  pid_t pid;
  fflush(stdout);
  if ((pid = fork()) < 0)
    sysbail("fork");
  if (pid == 0) {
    child_setup();
    if (arm) {
      pf_crash_name = arm;
      pf_crash_left = k;
    }
    _exit(exit_code(victim_op(c, op)));
  }
  return add_child(c, pid, role);
}

static int
try_reap(struct child *x)
{
  int st;
  pid_t r;
  if (x->done)
    return 1;
  r = waitpid(x->pid, &st, WNOHANG);
  if (r == x->pid) {
    x->done = 1;
    x->status = st;
    return 1;
  }
  if (r < 0 && errno != EINTR && errno != ECHILD)
    sysbail("waitpid");
  return 0;
}

static int
reap_bounded(struct child *x, long long ns)
{
  long long end = pft_now_ns() + ns;
  while (!try_reap(x)) {
    if (pft_now_ns() > end)
      return 0;
    usleep(100);
  }
  return 1;
}

static void
kill_all(struct kase *c)
{
  int i;
  for (i = 0; i < c->nch; i++)
    if (!c->ch[i].done) {
      kill(c->ch[i].pid, SIGKILL);
      while (waitpid(c->ch[i].pid, &c->ch[i].status, 0) < 0 && errno == EINTR)
        ;
      c->ch[i].done = 1;
    }
}

static const char *
status_str(int st)
{
  static char b[64];
  if (WIFSIGNALED(st))
    snprintf(b, sizeof b, "killed by signal %d", WTERMSIG(st));
  else if (WIFEXITED(st) && WEXITSTATUS(st) >= 100)
    snprintf(b, sizeof b, "exit %d (%s)", WEXITSTATUS(st), pft_errname(WEXITSTATUS(st) - 100));
  else
    snprintf(b, sizeof b, "exit %d", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
  return b;
}

/* ---- White-box looks at the region ------------------------------------------------ */

/* The process behind lock id o. */
static pid_t
owner_pid(pfutex_region_t *r, uint32_t o)
{
  uint32_t e = o & 0xffffu;
  if (e == 0 || e > r->att->nprocs)
    return 0;
  return (pid_t)(AO_int_load(&r->att->procs[e - 1].pid) & ~PF_RGN_CLAIMING);
}

/* Is pid's node queued (QUEUED, pushed when `pushed`) on word w, its owner
 * alive?  With pid 0: how many such nodes. */
/* Is slot ref linked on its key's bucket, or on that bucket's incoming
 * stack?  (A read of a live region: bounded, and polled by the caller.) */
static int
on_bucket(struct pf_table *tab, const struct pf_key *k, uint32_t ref)
{
  struct pf_bucket *b = &tab->buckets[pf_key_bucket(tab, k)];
  uint32_t r, n = 0;
  if (AO_int_load(&tab->slots[ref - 1].linked))
    return 1;
  for (r = AO_int_load(&b->incoming); r && r <= tab->nslots && n++ <= tab->nslots;
       r = AO_int_load(&tab->slots[r - 1].in_next))
    if (r == ref)
      return 1;
  return 0;
}

static int
queued_on(pfutex_region_t *r, uint32_t *w, pid_t pid, int pushed)
{
  struct pf_key k;
  struct pf_table *tab;
  uint32_t s;
  int n = 0;
  pf_region_key(r, w, &k, &tab);
  for (s = 0; s < tab->nslots; s++) {
    struct pf_node *nd = &tab->slots[s];
    uint32_t o = AO_int_load(&nd->owner);
    if (o == 0 || AO_int_load(&nd->state) != PF_W_QUEUED || !pf_node_keyeq(nd, &k))
      continue;
    /* pushed: its push has landed (a wake that starts now finds it): on
     * the queue, or on the bucket's incoming stack.  (Its pushed flag is
     * set before the push's compare-and-swap, for the rebuild: not
     * enough.) */
    if (pushed && !(AO_int_load(&nd->pushed) && on_bucket(tab, &k, s + 1)))
      continue;
    if (!pf_node_owner_alive(tab, nd))
      continue;
    if (pid == 0)
      n++;
    else if (owner_pid(r, o) == pid)
      return 1;
  }
  return n;
}

static int
proc_asleep(pid_t pid)
{
  int st = pft_task_state(pid, 0);
  return st == 'S' || st == 'D';
}

/* Wait until x is queued and pushed on w (and, with `asleep`, asleep: two
 * samples): 1; or 0 when it ended first (reaped), -1 after the bound. */
static int
wait_queued(pfutex_region_t *r, struct child *x, uint32_t *w, int asleep)
{
  long long end = pft_now_ns() + RC_BOUND_NS;
  int seen = 0;
  for (;;) {
    if (try_reap(x))
      return 0;
    if (queued_on(r, w, x->pid, 1) && (!asleep || proc_asleep(x->pid))) {
      if (!asleep || ++seen >= 2)
        return 1;
    } else {
      seen = 0;
    }
    if (pft_now_ns() > end)
      return -1;
    usleep(asleep ? 200 : 50);
  }
}

static int
queued_ok_in(struct kase *c, pfutex_region_t *reg, struct child *x, uint32_t *w, int asleep)
{
  int r = wait_queued(reg, x, w, asleep);
  if (r == 1)
    return 1;
  if (r == 0)
    FAILF(c, "%s ended before it was queued: %s", x->role, status_str(x->status));
  else
    FAILF(c, "%s not queued after %lld s", x->role, RC_BOUND_NS / 1000000000LL);
  return 0;
}

static int
queued_ok(struct kase *c, struct child *x, uint32_t *w, int asleep)
{
  return queued_ok_in(c, rg, x, w, asleep);
}

/* A waiter killed in its sleep: its node stays on w's queue. */
static int
dead_waiter(struct kase *c, uint32_t *w, long timeout_ms)
{
  struct child *d = spawn_waiter(c, w, timeout_ms, NULL, 0, "the waiter killed asleep");
  if (!queued_ok(c, d, w, 1))
    return 0;
  kill(d->pid, SIGKILL);
  while (waitpid(d->pid, &d->status, 0) < 0 && errno == EINTR)
    ;
  d->done = 1;
  return 1;
}

static int
check_region(struct kase *c, pfutex_region_t *r, struct pf_region_stats *st, const char *when)
{
  const char *why = "";
  int ret = pf_region_check(r, st, &why);
  if (ret != 0) {
    FAILF(c, "pf_region_check %s: %d (%s)", when, ret, why);
    return 0;
  }
  return 1;
}

/* For a failure's diagnosis: where child pid is (its state, wait channel
 * and system call, from /proc) and the states of the slots it owns in
 * regs[0..n). */
static void
describe_child(pfutex_region_t *const *regs, int n, pid_t pid)
{
  char path[64], st[512], wchan[64], sc[128], slots[256];
  size_t used = 0;
  const char *p;
  int ri;
  ssize_t len;
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  len = pft_read_file(path, st, sizeof st);
  p = len > 0 ? strrchr(st, ')') : NULL;
  snprintf(path, sizeof path, "/proc/%d/wchan", (int)pid);
  if (pft_read_file(path, wchan, sizeof wchan) <= 0)
    strcpy(wchan, "?");
  snprintf(path, sizeof path, "/proc/%d/syscall", (int)pid);
  if ((len = pft_read_file(path, sc, sizeof sc)) <= 0)
    strcpy(sc, "?");
  else if (strchr(sc, ' '))
    *strchr(sc, ' ') = 0;                 /* the call's number only */
  slots[0] = 0;
  for (ri = 0; ri < n; ri++) {
    struct pf_key k;
    struct pf_table *tab;
    uint32_t s;
    pf_region_key(regs[ri], pfutex_region_addr(regs[ri]), &k, &tab);
    for (s = 0; s < tab->nslots && used + 32 < sizeof slots; s++) {
      uint32_t o = AO_int_load(&tab->slots[s].owner);
      if (o && owner_pid(regs[ri], o) == pid)
        used += (size_t)snprintf(slots + used, sizeof slots - used, " r%d:%u state %u", ri, s + 1,
                                 AO_int_load(&tab->slots[s].state));
    }
  }
  diag("  %d: process state %c, wchan %s, syscall %s; its slots:%s", (int)pid,
       p && p[1] && p[2] ? p[2] : '?', wchan, sc, slots[0] ? slots : " none");
}

/* ---- The accounting after the victim ------------------------------------------------- */

/* Words (words[i] in regs[i]) and the live helpers queued on each;
 * helpers on no queue must end by themselves; then wake(1) each word until
 * it returns 0. */
static void
drain_words(struct kase *c, uint32_t *const *words, pfutex_region_t *const *regs, int nwords)
{
  int queued[RC_MAXCH] = { 0 }, wi, i, left;
  uint32_t *onw[RC_MAXCH] = { 0 };
  long long end;

  for (i = 0; i < c->nch; i++) {
    struct child *x = &c->ch[i];
    if (try_reap(x))
      continue;
    for (wi = 0; wi < nwords; wi++)
      if (queued_on(regs[wi], words[wi], x->pid, 0)) {
        queued[i] = 1;
        onw[i] = words[wi];
      }
  }
  /* off every queue and alive: woken by the victim before it died */
  end = pft_now_ns() + RC_BOUND_NS;
  for (i = 0; i < c->nch; i++) {
    struct child *x = &c->ch[i];
    if (queued[i])
      continue;
    if (!reap_bounded(x, end - pft_now_ns())) {
      FAILF(c, "%s, on no queue, did not end by itself (a wake lost)", x->role);
      describe_child(regs, nwords, x->pid);
      return;
    }
  }
  for (wi = 0; wi < nwords; wi++) {
    int expect = 0, woken = 0;
    for (i = 0; i < c->nch; i++)
      expect += queued[i] && onw[i] == words[wi];
    for (;;) {
      int r = pfutex_wake(words[wi], ANY, 1, 0), ended = 0;
      if (r < 0) {
        FAILF(c, "wake(1) of word %d: -1 %s", wi, pft_errname(errno));
        return;
      }
      if (r == 0)
        break;
      if (r != 1 || ++woken > expect) {
        FAILF(c, "wake(1) of word %d returned %d (wake %d; %d live waiters were queued)", wi, r,
              woken, expect);
        return;
      }
      /* exactly one of the word's queued waiters ends */
      end = pft_now_ns() + RC_BOUND_NS;
      for (;;) {
        for (i = 0; i < c->nch; i++)
          if (queued[i] == 1 && onw[i] == words[wi] && try_reap(&c->ch[i])) {
            queued[i] = 2;
            ended++;
          }
        if (ended || pft_now_ns() > end)
          break;
        usleep(50);
      }
      if (ended != 1) {
        FAILF(c, "wake(1) of word %d returned 1 but %d of its waiters ended", wi, ended);
        return;
      }
    }
    if (woken != expect)
      FAILF(c, "word %d: wake(1) returned 1 %d times, %d live waiters were queued", wi, woken,
            expect);
  }
  left = 0;
  for (i = 0; i < c->nch; i++)
    left += !try_reap(&c->ch[i]);
  if (left)
    FAILF(c, "%d processes still running after every wake", left);
}

static void
fresh_wait_wake(struct kase *c)
{
  struct child *f;
  int r;
  *c->A = 0;
  f = spawn_waiter(c, c->A, 60000, NULL, 0, "the fresh waiter");
  if (!queued_ok(c, f, c->A, 0))
    return;
  if ((r = pfutex_wake(c->A, ANY, 1, 0)) != 1)
    FAILF(c, "a fresh wait and wake(1) afterwards: wake returned %d", r);
  else if (!reap_bounded(f, RC_BOUND_NS))
    FAILF(c, "the fresh waiter did not end after its wake");
  else if (!WIFEXITED(f->status) || WEXITSTATUS(f->status) != 0)
    FAILF(c, "the fresh waiter: %s", status_str(f->status));
}

static void
check_leaks(struct kase *c)
{
  struct pf_region_stats st;
  pfutex_region_t *const regs[2] = { rg, rg2 };
  int i;
  for (i = 0; i < 2; i++) {
    const char *which = i ? " (the second region)" : "";
    char when[96];
    snprintf(when, sizeof when, "after the accounting%s", which);
    if (!check_region(c, regs[i], &st, when))
      return;
    pf_region_scavenge(regs[i]);
    snprintf(when, sizeof when, "after pf_region_scavenge%s", which);
    if (!check_region(c, regs[i], &st, when))
      return;
    if (st.slots_live || st.slots_dead || st.slots_free != RC_SLOTS || st.queued)
      FAILF(c, "leak%s: slots free %u live %u dead %u (of %u), queued %u", which, st.slots_free,
            st.slots_live, st.slots_dead, RC_SLOTS, st.queued);
  }
}

/* op "open": the named region's process table recovers: check, and a new
 * process opens it (a fresh entry), waits there, and the parent wakes it. */
static void
check_open(struct kase *c)
{
  struct pf_region_stats st;
  uint32_t *w = pfutex_region_addr(ro);
  pid_t pid;
  struct child *g;
  int r;
  if (!check_region(c, ro, &st, "of the named region"))
    return;
  if (st.procs_live != 1)
    FAILF(c, "named region: %u live process entries, expected 1 (this one)", st.procs_live);
  *w = 0;
  fflush(stdout);
  if ((pid = fork()) < 0)
    sysbail("fork");
  if (pid == 0) {
    pfutex_region_t *h;
    child_setup();
    if (!(h = pfutex_region_open(name_o, 0, O_RDWR, 0)))
      _exit(exit_code(-1));
    r = pfutex_wait(pfutex_region_addr(h), 0, ANY, 0, NULL, PFUTEX_CLOCK_MONOTONIC);
    _exit(exit_code(r));
  }
  g = add_child(c, pid, "a new process of the named region");
  if (!queued_ok_in(c, ro, g, w, 0))
    return;
  if ((r = pfutex_wake(w, ANY, 1, 0)) != 1)
    FAILF(c, "named region: wake(1) of a new process's wait returned %d", r);
  else if (!reap_bounded(g, RC_BOUND_NS) || !WIFEXITED(g->status) || WEXITSTATUS(g->status))
    FAILF(c, "named region: the new process: %s", g->done ? status_str(g->status) : "hung");
}

/* op "create": a name whose creator died half way fails with
 * ENOTRECOVERABLE; complete ones open; every name can then be created
 * afresh once unlinked. */
static void
check_create(struct kase *c)
{
  int i;
  for (i = 0; i < 2; i++) {
    pfutex_region_t *h = pfutex_region_open(name_c[i], 0, O_RDWR, 0);
    int e = errno;
    if (h) {
      pfutex_region_close(h);
    } else if (e == ENOTRECOVERABLE) {
      if (!c->reached || strcmp(c->point, "region_creating") != 0)
        FAILF(c, "%s: ENOTRECOVERABLE, but its creator did not die creating it", name_c[i]);
    } else if (e != ENOENT) {
      FAILF(c, "open %s: %s", name_c[i], pft_errname(e));
    }
    (void)pfutex_region_unlink(name_c[i]);
    if (!(h = pfutex_region_open(name_c[i], RC_USER, O_RDWR | O_CREAT | O_EXCL, 0600)))
      FAILF(c, "create %s again after unlink: %s", name_c[i], pft_errname(errno));
    else
      pfutex_region_close(h);
    (void)pfutex_region_unlink(name_c[i]);
  }
}

/* ---- One case -------------------------------------------------------------------------------- */

static int
word_bucket(uint32_t *w)
{
  struct pf_key k;
  struct pf_table *tab;
  pf_region_key(rg, w, &k, &tab);
  return (int)pf_key_bucket(tab, &k);
}

static void
run_case(struct kase *c, int index)
{
  struct child *v = NULL, *p;
  uint32_t *words[3];
  pfutex_region_t *regs[3];
  struct pf_region_stats st;
  int op = c->op, j;

  /* words: a pair in two buckets, moving with the case */
  c->A = &U[(index * 7) % (RC_NWORDS - 64)];
  for (j = 1; j < 64 && word_bucket(&c->A[j]) == word_bucket(c->A); j++)
    ;
  c->B = &c->A[j];
  c->X = &U2[(index * 11) % RC_NWORDS];
  *c->A = *c->B = *c->X = 0;
  rc_vx_quiet = &U[RC_NWORDS - 1];        /* past A's range, and B < A + 64 */
  *rc_vx_quiet = 0;
  words[0] = c->A;
  words[1] = c->B;
  words[2] = c->X;
  regs[0] = regs[1] = rg;
  regs[2] = rg2;

  switch (op) {
  case OP_WAIT:
    v = spawn_waiter(c, c->A, -1, c->point, c->k, "the victim");
    if (wait_queued(rg, v, c->A, 1) < 0) {
      FAILF(c, "the victim neither died nor slept in its wait");
      goto out;
    }
    if (!queued_ok(c, spawn_waiter(c, c->A, 60000, NULL, 0, "helper 1"), c->A, 0)
        || !queued_ok(c, spawn_waiter(c, c->A, 60000, NULL, 0, "helper 2"), c->A, 0))
      goto out;
    break;
  case OP_TIMED:
  case OP_WAKE:
  case OP_WAKE_ALL:
  case OP_WAKE_DEAD:
  case OP_TAKEOVER:
  case OP_REQUEUE:
  case OP_CMP_REQUEUE:
  case OP_TAKEOVER_RQ:
  case OP_WAKE_OP:
  case OP_XREQUEUE:
  case OP_XREQUEUE_VX:
    rc_spawn_vx = op == OP_XREQUEUE_VX;
    if (op == OP_WAKE_DEAD && !dead_waiter(c, c->A, -1))
      goto out;
    if (op == OP_TAKEOVER && !dead_waiter(c, c->A, 60000))
      goto out;
    if (!queued_ok(c, spawn_waiter(c, c->A, 60000, NULL, 0, "helper 1"), c->A, 0))
      goto out;
    if (!queued_ok(c, spawn_waiter(c, op == OP_WAKE_OP || op == OP_TAKEOVER_RQ ? c->B : c->A,
                                   60000, NULL, 0, "helper 2"),
                   op == OP_WAKE_OP || op == OP_TAKEOVER_RQ ? c->B : c->A, 0))
      goto out;
    rc_spawn_vx = 0;
    if (op == OP_TAKEOVER || op == OP_TAKEOVER_RQ) {
      p = spawn_op(c, op == OP_TAKEOVER ? OP_WAKE : OP_WAKE_B, "wake_locked", 1,
                   "the process killed holding the lock");
      if (!reap_bounded(p, RC_BOUND_NS) || !WIFSIGNALED(p->status)
          || WTERMSIG(p->status) != SIGKILL) {
        FAILF(c, "the lock holder did not die at wake_locked: %s",
              p->done ? status_str(p->status) : "hung");
        goto out;
      }
    }
    if (op == OP_TIMED)
      v = spawn_waiter(c, c->A, 20, c->point, c->k, "the victim");
    else
      v = spawn_op(c, op, c->point, c->k, "the victim");
    break;
  case OP_OPEN:
  case OP_CREATE:
    v = spawn_op(c, op, c->point, c->k, "the victim");
    break;
  }

  /* The victim's end (op "wait": it sleeps until the accounting wakes it). */
  if (op != OP_WAIT || v->done) {
    if (!reap_bounded(v, RC_BOUND_NS)) {
      FAILF(c, "the victim hung in its op");
      goto out;
    }
    if (WIFSIGNALED(v->status) && WTERMSIG(v->status) == SIGKILL)
      c->reached = 1;
    else if (!WIFEXITED(v->status) || WEXITSTATUS(v->status) != op_normal[op])
      FAILF(c, "the victim ended normally but its op gave %s (expected %d)", status_str(v->status),
            op_normal[op]);
  }
  if (op == OP_WAKE_OP) {
    uint32_t want = c->reached && strcmp(c->point, "wake_op_locked") == 0 ? 0 : 1;
    if (*c->B != want)
      FAILF(c, "wake_op's word is %u, expected %u (the op stored %s)", *c->B, want,
            want ? "once" : "never");
  }
  if (!check_region(c, rg, &st, "after the victim")
      || !check_region(c, rg2, &st, "of the second region after the victim"))
    goto out;
  if (op == OP_OPEN)
    check_open(c);
  if (op == OP_CREATE)
    check_create(c);
  if (c->why[0])
    goto out;
  drain_words(c, words, regs, 3);
  if (op == OP_WAIT) {
    if (!v->done)
      FAILF(c, "the victim still runs after the wakes");
    else if (WIFSIGNALED(v->status) && WTERMSIG(v->status) == SIGKILL)
      c->reached = 1;
    else if (!WIFEXITED(v->status) || WEXITSTATUS(v->status) != 0)
      FAILF(c, "the victim's wait: %s", status_str(v->status));
  }
  for (j = 0; j < c->nch; j++) {
    struct child *x = &c->ch[j];
    char mine[16];
    if (x == v || !x->done || strncmp(x->role, "helper", 6) != 0)
      continue;
    /* a spurious end only for the helper whose move the victim died in
     * (the k-th: the moves follow the queue), before its new node was
     * queued and handed over */
    snprintf(mine, sizeof mine, "helper %d", c->k);
    if (WIFEXITED(x->status) && WEXITSTATUS(x->status) == RC_SPURIOUS
        && (op == OP_XREQUEUE || op == OP_XREQUEUE_VX)
        && c->reached && strcmp(x->role, mine) == 0
        && (strcmp(c->point, "xmove_moved") == 0 || strcmp(c->point, "xmove_published") == 0))
      continue;
    if (!WIFEXITED(x->status) || WEXITSTATUS(x->status) != 0)
      FAILF(c, "%s: %s (expected woken: 0)%s", x->role, status_str(x->status),
            WIFEXITED(x->status) && WEXITSTATUS(x->status) == RC_SPURIOUS
            ? ": its moved wait ended spurious, its destination out of reach" : "");
  }
  if (c->why[0])
    goto out;
  check_leaks(c);
  if (c->why[0])
    goto out;
  fresh_wait_wake(c);
  if (!c->why[0])
    check_leaks(c);
out:
  rc_spawn_vx = 0;
  kill_all(c);
  *c->A = *c->B = *c->X = 0;
}

/* ---- Driver ------------------------------------------------------------------------------------- */

static void
reclaim(void)
{
  pid_t pid;
  int st;
  if (!is_sysv)
    return;
  fflush(stdout);
  if ((pid = fork()) < 0)
    sysbail("fork");
  if (pid == 0) {
    execl(self_exe, self_exe, "--reclaim", (char *)NULL);
    _exit(127);
  }
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
}

static pfutex_region_t *
new_anon(void)
{
  pfutex_region_attr_t a;
  pfutex_region_t *r;
  memset(&a, 0, sizeof a);
  a.slots = RC_SLOTS;
  a.buckets = RC_BUCKETS;
  a.procs = RC_PROCS;
  if (!(r = pfutex_region_anon_attr(RC_USER, &a)))
    sysbail("pfutex_region_anon_attr");
  return r;
}

static int
point_index(const char *name)
{
  int i;
  for (i = 0; pf_crash_points[i]; i++)
    if (strcmp(pf_crash_points[i], name) == 0)
      return i;
  return -1;
}

int
main(int argc, char **argv)
{
  int npoints, p, op, k, index = 0, only_op = -1, only_pt = -1, only_k = 0, failures = 0;
  static int reached[64][NOPS];
  static int unrun[64];        /* a case of this point skipped: the budget was spent */
  long long op_ns[NOPS] = { 0 }, tc;
  long long t0;
  ssize_t n;
  pfutex_region_attr_t ao;

  if (argc == 2 && strcmp(argv[1], "--reclaim") == 0) {
    (void)pfutex_backend();
    return 0;
  }
  if (argc == 5 && strcmp(argv[1], "--only") == 0) {
    for (op = 0; op < NOPS; op++)
      if (strcmp(argv[2], op_names[op]) == 0)
        only_op = op;
    only_pt = point_index(argv[3]);
    only_k = atoi(argv[4]);
    if (only_op < 0 || only_pt < 0 || only_k < 1)
      bail("usage: %s [--only OP POINT K]", argv[0]);
  }
  if (!pft_backend_is_emu())
    skip_all("white-box: under the native backend (%s) the kernel owns the futexes; "
             "tests/region_kill runs the kill workload there",
             pfutex_backend() ? pfutex_backend() : "none");
  PFT_SKIP_UNDER_TSAN();
  is_sysv = strcmp(pfutex_backend(), "emu:sysv") == 0;
  if ((n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1)) <= 0)
    is_sysv = 0;                          /* no reclaim runs, then */
  else
    self_exe[n] = 0;
#ifdef CLONE_NEWIPC
  /* emu:sysv: an IPC namespace of our own where we may (root), so the
   * children's SysV sets go with it */
  if (is_sysv)
    (void)unshare(CLONE_NEWIPC);
#endif
  for (npoints = 0; pf_crash_points[npoints]; npoints++)
    ;
  if (npoints > 64)
    bail("more than 64 crash points");
  if (only_op >= 0)
    plan(1);
  else
    plan((unsigned long)(npoints * NOPS * 2 + npoints + 1));
  pft_watchdog(240);

  snprintf(name_o, sizeof name_o, "/pft-rcrash-%d-o", (int)getpid());
  snprintf(name_c[0], sizeof name_c[0], "/pft-rcrash-%d-c0", (int)getpid());
  snprintf(name_c[1], sizeof name_c[1], "/pft-rcrash-%d-c1", (int)getpid());
  shm_unlink(name_o);   /* leftovers of a killed earlier run with this pid */
  shm_unlink(name_c[0]);
  shm_unlink(name_c[1]);
  atexit(cleanup_names);
  cleanup_names();
  memset(&ao, 0, sizeof ao);
  ao.procs = 8;
  if (!(ro = pfutex_region_open_attr(name_o, 4096, O_RDWR | O_CREAT | O_EXCL, 0600, &ao)))
    sysbail("pfutex_region_open_attr %s", name_o);
  rg = new_anon();
  U = pfutex_region_addr(rg);
  rg2 = new_anon();
  U2 = pfutex_region_addr(rg2);

  t0 = pft_now_ns();
  for (p = 0; p < npoints; p++) {
    for (op = 0; op < NOPS; op++) {
      for (k = 1; k <= 2; k++) {
        struct kase c;
        if (only_op >= 0 && (op != only_op || p != only_pt || k != only_k))
          continue;
        if (pft_now_ns() - t0 > RC_BUDGET_NS) {
          skip("time budget spent (%s/%s:%d)", op_names[op], pf_crash_points[p], k);
          unrun[p] = 1;
          continue;
        }
        memset(&c, 0, sizeof c);
        c.op = op;
        c.point = pf_crash_points[p];
        c.k = k;
        tc = pft_now_ns();
        run_case(&c, index++);
        op_ns[op] += pft_now_ns() - tc;
        reached[p][op] |= c.reached;
        if (!ok(!c.why[0], "%s, %s:%d %s: region consistent, counts exact, nothing leaked",
                op_names[op], c.point, k, c.reached ? "killed" : "not reached")) {
          diag("  %s", c.why);
          diag("  repro: PFUTEX_BACKEND=%s %s --only %s %s %d", pfutex_backend(), argv[0],
               op_names[op], c.point, k);
          if (++failures > 60)
            bail("too many failures");
          /* a fresh region for the cases that follow */
          if (pfutex_region_close(rg) != 0)
            diag("  close of the region: %s", pft_errname(errno));
          if (pfutex_region_close(rg2) != 0)
            diag("  close of the second region: %s", pft_errname(errno));
          rg = new_anon();
          U = pfutex_region_addr(rg);
          rg2 = new_anon();
          U2 = pfutex_region_addr(rg2);
        }
        if (index % 40 == 0)
          reclaim();
      }
    }
  }
  reclaim();
  if (only_op >= 0)
    return 0;

  {
    int all = 1, skipped = 0;
    for (p = 0; p < npoints; p++) {
      char line[512];
      size_t len = 0;
      int any = 0;
      line[0] = 0;
      for (op = 0; op < NOPS; op++)
        if (reached[p][op]) {
          len += (size_t)snprintf(line + len, sizeof line - len, " %s", op_names[op]);
          any = 1;
        }
      if (!any && unrun[p]) {
        /* a loaded machine spent the budget before this point's cases: no
         * case ran that could have reached it (not a failure to reach it) */
        skip("crash point %s: its cases did not run (time budget spent)", pf_crash_points[p]);
        skipped++;
        continue;
      }
      all &= any;
      ok(any, "crash point %s reached by:%s", pf_crash_points[p], any ? line : " none");
    }
    ok(all, "every crash point whose cases ran was reached by at least one op (%d points, %d "
       "not run)", npoints, skipped);
  }
  diag("%d cases in %.1f s", index, (double)(pft_now_ns() - t0) / 1e9);
  for (op = 0; op < NOPS; op++)
    diag("  %-12s %5.1f s", op_names[op], (double)op_ns[op] / 1e9);
  pfutex_region_close(ro);
  return 0;
}
#endif
#endif /* !_WIN32 */
