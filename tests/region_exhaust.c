/* region_exhaust: a region's slot pool and process table run out with a
 * clear errno (ENOMEM, never EAGAIN, never a hang, never an overwrite), and
 * what was taken is usable again once given back.
 *
 * (a) Slots (emulation only: under the native backend the kernel queues
 *     the waiters and a region has no slot pool; skipped there).  An
 *     anonymous region with 4 slots:
 *       - 4 threads wait on word A (each asleep); a 5th wait fails at once
 *         with -1/ENOMEM: FUTEX_WAIT on A, pfutex_wait on word B of the same
 *         region, FUTEX_WAIT_BITSET on A (2 s timeouts: a wait that parks
 *         instead fails the check, it does not hang); meanwhile a private
 *         wait times out as usual (the pool is the region's alone), and the
 *         failed waits left nothing queued (a wake of B counts 0);
 *       - a wake of A counts 4 and every waiter returns 0; then 4 new
 *         waiters park again (the slots were given back), a 5th fails
 *         again, and a wake counts 4;
 *       - across processes: a child's 2 waiters and 2 of ours fill the
 *         pool, a 5th wait fails with ENOMEM; the child is SIGKILLed while
 *         it waits: the next wait reclaims its slots (it times out instead
 *         of failing) and a wake of A counts our 2 waiters only.
 * (b) Process entries, on every backend.  A named region with room for 2
 *     processes: this process holds one, fork child P1 the other (a fork
 *     child claims an entry of its own in every region it inherited).
 *       - P1's 20 ms wait times out (it has an entry);
 *       - child P2 (both entries held by live processes): a new
 *         pfutex_region_open of the region fails with ENOMEM; a wait on its
 *         inherited handle fails with ENOMEM under emulation (no entry: see
 *         src/region/proc.c) and times out under the native backend (the kernel
 *         needs none); its wake of a word we wait on counts 1 or fails with
 *         ENOMEM; and (white-box, emulation) a bucket lock it takes must be
 *         seen as held by the others (a lock word that stays 0 excludes
 *         nobody), or be refused;
 *       - once P1 exited, child P3 gets its entry: P3's wait is woken by our
 *         wake (counting 1) and a timed wait of P3's times out. */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork() (slot and process-table exhaustion across children)");
  return 0;
}
#else
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
# include <sys/prctl.h>
#endif

#include "region/internal.h"
#include "pft.h"
#include "pfutex/linux.h"

#define RE_SLOTS 4
#define RE_SLOT_TESTS 14
#define RE_PROC_TESTS 7

static const struct timespec re_two_s = { 2, 0 };
static const struct timespec re_ten_s = { 10, 0 };
static const struct timespec re_20ms = { 0, 20 * 1000 * 1000 };

static void
re_abs_in(struct timespec *ts, long long ns)
{
  clock_gettime(CLOCK_MONOTONIC, ts);
  pft_timespec_add_ns(ts, ns);
}

/* A 5th-wait check: -1/ENOMEM at once. */
static void
re_is_enomem(long ret, int err, const char *what)
{
  if (!ok(ret == -1 && err == ENOMEM, "%s fails with ENOMEM", what))
    diag("    got %ld, errno %s", ret, pft_errname(err));
}

static void
re_start(struct pft_waiter *w, uint32_t *word, const struct timespec *timeout)
{
  memset(w, 0, sizeof *w);
  w->uaddr = word;
  w->val = 0;
  w->op_flags = 0;                        /* shared: the region's table */
  w->timeout = timeout;
  pft_waiter_start(w);
}

static int
re_join_all0(struct pft_waiter *ws, int n)
{
  int i, good = 1;
  for (i = 0; i < n; i++)
    if (pft_waiter_join(&ws[i]) != 0) {
      diag("    waiter %d returned %ld, errno %s", i, ws[i].ret, pft_errname(ws[i].err));
      good = 0;
    }
  return good;
}

/* ---- (a) slots ----------------------------------------------------------------- */

static void
re_slots(void)
{
  pfutex_region_attr_t attr;
  pfutex_region_t *r;
  struct pft_waiter ws[RE_SLOTS];
  struct timespec dl;
  uint32_t *A, *B, priv = 0;
  long ret;
  int e, i, fds[2], st;
  pid_t pid;
  char c;

  memset(&attr, 0, sizeof attr);
  attr.slots = RE_SLOTS;
  attr.buckets = 4;
  attr.procs = 8;
  if (!(r = pfutex_region_anon_attr(4096, &attr)))
    sysbail("pfutex_region_anon_attr");
  A = pfutex_region_addr(r);
  B = A + 16;

  for (i = 0; i < RE_SLOTS; i++)
    re_start(&ws[i], A, &re_ten_s);
  errno = 0;
  ret = pfutex(A, FUTEX_WAIT, 0, &re_two_s, NULL, 0);
  e = errno;
  re_is_enomem(ret, e, "4 slots taken: a 5th FUTEX_WAIT");
  re_abs_in(&dl, 2000000000LL);
  errno = 0;
  ret = pfutex_wait(B, 0, PFUTEX_BITSET_MATCH_ANY, PFUTEX_SHARED, &dl, PFUTEX_CLOCK_MONOTONIC);
  e = errno;
  re_is_enomem(ret, e, "4 slots taken: pfutex_wait on another word of the region");
  errno = 0;
  ret = pfutex(A, FUTEX_WAIT_BITSET, 0, &dl, NULL, 2);
  e = errno;
  re_is_enomem(ret, e, "4 slots taken: FUTEX_WAIT_BITSET");
  errno = 0;
  ret = pfutex(&priv, FUTEX_WAIT_PRIVATE, 0, &re_20ms, NULL, 0);
  e = errno;
  if (!ok(ret == -1 && e == ETIMEDOUT, "meanwhile a private wait times out as usual"))
    diag("    got %ld, errno %s", ret, pft_errname(e));
  is_int(0, pfutex_wake(B, PFUTEX_BITSET_MATCH_ANY, INT_MAX, PFUTEX_SHARED),
         "the failed waits left nothing queued (a wake of B counts 0)");
  is_int(RE_SLOTS, pfutex(A, FUTEX_WAKE, INT_MAX, NULL, NULL, 0), "a wake of A counts 4");
  ok(re_join_all0(ws, RE_SLOTS), "every waiter returned 0");

  /* The slots are back: 4 new waiters park, the 5th fails again. */
  for (i = 0; i < RE_SLOTS; i++)
    re_start(&ws[i], A, &re_ten_s);
  errno = 0;
  ret = pfutex(A, FUTEX_WAIT, 0, &re_two_s, NULL, 0);
  e = errno;
  re_is_enomem(ret, e, "4 new waiters parked on the freed slots; a 5th wait again");
  is_int(RE_SLOTS, pfutex_wake(A, PFUTEX_BITSET_MATCH_ANY, INT_MAX, PFUTEX_SHARED),
         "a wake counts the 4 again");
  ok(re_join_all0(ws, RE_SLOTS), "every waiter returned 0");

  /* Across processes: a child's 2 waiters and 2 of ours. */
  if (pipe(fds) != 0)
    sysbail("pipe");
  pft_settle_threads();
  fflush(stdout);
  if ((pid = fork()) < 0)
    sysbail("fork");
  if (pid == 0) {
    struct pft_waiter cw[2];
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    close(fds[0]);
    alarm(30);
    re_start(&cw[0], A, &re_ten_s);
    re_start(&cw[1], A, &re_ten_s);
    if (write(fds[1], "r", 1) != 1)
      _exit(2);
    pft_waiter_join(&cw[0]);                /* SIGKILLed while they wait */
    _exit(3);
  }
  close(fds[1]);
  if (read(fds[0], &c, 1) != 1)
    bail("the child did not start its waiters");
  close(fds[0]);
  re_start(&ws[0], A, &re_ten_s);
  re_start(&ws[1], A, &re_ten_s);
  errno = 0;
  ret = pfutex(A, FUTEX_WAIT, 0, &re_two_s, NULL, 0);
  e = errno;
  re_is_enomem(ret, e, "a child's 2 waiters and 2 of ours: a 5th wait");
  kill(pid, SIGKILL);
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR)
      sysbail("waitpid");
  errno = 0;
  ret = pfutex(A, FUTEX_WAIT, 0, &re_20ms, NULL, 0);
  e = errno;
  if (!ok(ret == -1 && e == ETIMEDOUT,
          "the child SIGKILLed: a wait reclaims its slots (times out, no ENOMEM)"))
    diag("    got %ld, errno %s", ret, pft_errname(e));
  is_int(2, pfutex(A, FUTEX_WAKE, INT_MAX, NULL, NULL, 0),
         "a wake counts our 2 waiters, not the dead child's");
  ok(re_join_all0(ws, 2), "our 2 waiters returned 0");
  /* Not closed: pfutex_region_close keeps the handle allocated (src/region/handle.c),
   * which LeakSanitizer reports; the mapping goes at exit. */
}

/* ---- (b) process entries --------------------------------------------------------- */

struct re_p2 {
  int open_ret, open_err;
  int wait_ret, wait_err;
  int wake_ret, wake_err;
  int lock_ret;                     /* pf_bucket_lock's, or 1: not tried */
  uint32_t lock_word;
};

static uint32_t *
re_word(pfutex_region_t *r, int i)
{
  return (uint32_t *)pfutex_region_addr(r) + i;
}

static void
re_reap(pid_t pid, int *st)
{
  while (waitpid(pid, st, 0) < 0)
    if (errno != EINTR)
      sysbail("waitpid");
}

static void
re_procs(int emu)
{
  char name[64];
  pfutex_region_attr_t attr;
  pfutex_region_t *r;
  struct pft_waiter w;
  struct re_p2 p2;
  int go[2], res[2], st, tries;
  long woken;
  pid_t p1, p2pid, p3;
  char c;

  snprintf(name, sizeof name, "/pft-exhaust-%d", (int)getpid());
  shm_unlink(name);   /* a killed earlier run with this pid */
  memset(&attr, 0, sizeof attr);
  attr.slots = 16;
  attr.buckets = 4;
  attr.procs = 2;
  if (!(r = pfutex_region_open_attr(name, 4096, O_RDWR | O_CREAT | O_EXCL, 0600, &attr)))
    sysbail("pfutex_region_open_attr %s", name);

  /* P1: an entry of its own; waits for "go" before it exits. */
  if (pipe(go) != 0 || pipe(res) != 0)
    sysbail("pipe");
  pft_settle_threads();
  fflush(stdout);
  if ((p1 = fork()) < 0)
    sysbail("fork");
  if (p1 == 0) {
    long ret;
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    alarm(30);
    close(go[1]);
    close(res[0]);
    errno = 0;
    ret = pfutex(re_word(r, 0), FUTEX_WAIT, 0, &re_20ms, NULL, 0);
    c = ret == -1 && errno == ETIMEDOUT ? 'y' : 'n';
    if (write(res[1], &c, 1) != 1 || read(go[0], &c, 1) < 0)
      _exit(2);
    _exit(0);
  }
  close(go[0]);                             /* (res[1] stays open: P2 and P3 write there) */
  if (read(res[0], &c, 1) != 1)
    bail("P1 did not report");
  ok(c == 'y', "procs 2, a fork child holds the second entry: its 20 ms wait times out");

  /* A waiter of ours on word 4, for P2's wake. */
  memset(&w, 0, sizeof w);
  re_start(&w, re_word(r, 4), &re_ten_s);
  pft_settle_threads();
  fflush(stdout);
  if ((p2pid = fork()) < 0)
    sysbail("fork");
  if (p2pid == 0) {
    pfutex_region_t *r2;
    long ret;
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    alarm(30);
    memset(&p2, 0, sizeof p2);
    errno = 0;
    r2 = pfutex_region_open(name, 0, O_RDWR, 0);
    p2.open_ret = r2 ? 0 : -1;
    p2.open_err = errno;
    errno = 0;
    ret = pfutex(re_word(r, 0), FUTEX_WAIT, 0, &re_20ms, NULL, 0);
    p2.wait_ret = (int)ret;
    p2.wait_err = errno;
    errno = 0;
    p2.wake_ret = pfutex_wake(re_word(r, 4), PFUTEX_BITSET_MATCH_ANY, INT_MAX, PFUTEX_SHARED);
    p2.wake_err = errno;
    p2.lock_ret = 1;
#ifdef PF_HAVE_EMU
    if (emu) {
      struct pf_crit cs;
      struct pf_key k;
      struct pf_table *tab;
      uint32_t i;
      if (pf_key_make(re_word(r, 8), PF_F_SHARED, &k, &tab) == 0 && tab->rgn) {
        i = pf_key_bucket(tab, &k);
        pf_crit_enter(&cs);
        p2.lock_ret = pf_bucket_lock(tab, i);
        p2.lock_word = __atomic_load_n(&tab->buckets[i].lock, __ATOMIC_SEQ_CST);
        if (p2.lock_ret == 0)
          pf_bucket_unlock(tab, i);
        pf_crit_exit(&cs);
      }
    }
#endif
    if (write(res[1], &p2, sizeof p2) != (ssize_t)sizeof p2)
      _exit(2);
    _exit(0);
  }
  if (read(res[0], &p2, sizeof p2) != (ssize_t)sizeof p2)
    bail("P2 did not report");
  re_reap(p2pid, &st);
  pfutex_region_unlink(name);               /* no more opens by name: P3 inherits */
  diag("P2: open %d/%s, wait %d/%s, wake %d/%s, bucket lock %d (word 0x%08x)", p2.open_ret,
       pft_errname(p2.open_err), p2.wait_ret, pft_errname(p2.wait_err), p2.wake_ret,
       pft_errname(p2.wake_err), p2.lock_ret, p2.lock_word);
  if (!ok(p2.open_ret == -1 && p2.open_err == ENOMEM,
          "a third process: pfutex_region_open fails with ENOMEM (both entries held)"))
    diag("    got %d, errno %s", p2.open_ret, pft_errname(p2.open_err));
  if (emu) {
    if (!ok(p2.wait_ret == -1 && p2.wait_err == ENOMEM,
            "a third process: a wait on its inherited handle fails with ENOMEM"))
      diag("    got %d, errno %s", p2.wait_ret, pft_errname(p2.wait_err));
  } else {
    if (!ok(p2.wait_ret == -1 && p2.wait_err == ETIMEDOUT,
            "a third process: a wait on its inherited handle times out (native: the kernel "
            "needs no entry)"))
      diag("    got %d, errno %s", p2.wait_ret, pft_errname(p2.wait_err));
  }
  if (!ok(p2.wake_ret == 1 || (p2.wake_ret == -1 && p2.wake_err == ENOMEM),
          "a third process: its wake of a word we wait on counts 1 or fails with ENOMEM"))
    diag("    got %d, errno %s", p2.wake_ret, pft_errname(p2.wake_err));
  if (emu) {
    if (!ok(p2.lock_ret < 0 || (p2.lock_ret == 0 && p2.lock_word != 0),
            "a third process: a bucket lock it takes is seen held by the others, or refused"))
      diag("    pf_bucket_lock returned %d with the lock word 0x%08x: it excludes nobody",
           p2.lock_ret, p2.lock_word);
  } else {
    skip("native backend: no bucket locks in the region");
  }
  woken = pfutex_wake(re_word(r, 4), PFUTEX_BITSET_MATCH_ANY, INT_MAX, PFUTEX_SHARED);
  pft_waiter_join(&w);
  if (p2.wake_ret == 1 && woken != 0)
    diag("our own wake of word 4 counted %ld after P2's counted 1", woken);

  /* P1 exits: its entry is free for P3. */
  if (write(go[1], "x", 1) != 1)
    sysbail("write");
  re_reap(p1, &st);
  close(go[1]);
  pft_settle_threads();
  fflush(stdout);
  if ((p3 = fork()) < 0)
    sysbail("fork");
  if (p3 == 0) {
    struct timespec dl;
    long ret;
    int e;
#ifdef __linux__
    prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
    alarm(30);
    re_abs_in(&dl, 5000000000LL);
    if (write(res[1], "w", 1) != 1)
      _exit(2);
    errno = 0;
    ret = pfutex_wait(re_word(r, 12), 0, PFUTEX_BITSET_MATCH_ANY, PFUTEX_SHARED, &dl,
                      PFUTEX_CLOCK_MONOTONIC);
    e = errno;
    if (ret != 0)
      _exit(e == ENOMEM ? 10 : e == ETIMEDOUT ? 11 : 12);
    errno = 0;
    ret = pfutex(re_word(r, 0), FUTEX_WAIT, 0, &re_20ms, NULL, 0);
    _exit(ret == -1 && errno == ETIMEDOUT ? 0 : 13);
  }
  if (read(res[0], &c, 1) != 1)
    bail("P3 did not start");
  /* Wake until P3's wait takes it (the wake's count is the state). */
  woken = 0;
  for (tries = 0; tries < 5000 && woken == 0; tries++) {
    woken = pfutex_wake(re_word(r, 12), PFUTEX_BITSET_MATCH_ANY, INT_MAX, PFUTEX_SHARED);
    if (woken == 0)
      usleep(1000);
  }
  re_reap(p3, &st);
  is_int(1, woken, "P1 exited: P3 took its entry and its wait is woken by our wake");
  if (!ok(WIFEXITED(st) && WEXITSTATUS(st) == 0,
          "P3's wait returned 0 and its 20 ms wait times out"))
    diag("    P3 ended with %s %d (10: ENOMEM, 11: ETIMEDOUT, 12: other, 13: the timed wait)",
         WIFSIGNALED(st) ? "signal" : "status", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
  close(res[0]);
  close(res[1]);
  /* (not closed: see re_slots) */
}

int
main(void)
{
  int emu, i;

  PFT_SKIP_UNDER_TSAN();
  plan(RE_SLOT_TESTS + RE_PROC_TESTS);
  pft_watchdog(60);
  emu = pft_backend_is_emu();
  if (emu) {
    re_slots();
  } else {
    for (i = 0; i < RE_SLOT_TESTS; i++)
      skip("native backend (%s): the kernel queues the waiters, a region has no slot pool",
           pfutex_backend());
  }
  re_procs(emu);
  return 0;
}
#endif /* !_WIN32 */
