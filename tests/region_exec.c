/* region_exec: futex ops on a named region between unrelated processes:
 * the test forks and execs tests/region_peer (Windows: _spawnv, i.e.
 * CreateProcess, of tests/region_peer.exe; see tests/region_util.h), which opens the region by
 * name itself (its own mapping, its own pfutex state, the backend from the
 * inherited PFUTEX_BACKEND) and reports through the region's memory and its
 * exit status (protocol: region_peer.h).
 *   1. the peer waits (FUTEX_WAIT), the test wakes;
 *   2. the test waits (FUTEX_WAIT), the peer wakes (pfutex_wake);
 *   3. the peer does a FUTEX_CMP_REQUEUE of the test's waiter threads;
 *   4. the peer does a pfutex_wake_op on the test's waiters (the
 *      comparison holding, then failing);
 *   5. the peer waits and the test requeues it (pfutex_cmp_requeue);
 *   6. one peer waits, another peer wakes it.
 * The peer is $PFUTEX_TOP_BUILDDIR/tests/region_peer (make check sets
 * it), else ../tests/region_peer next to this program. */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <pfutex/linux.h>
#include "pft.h"
#include "region_util.h"
#include "region_peer.h"

#define NWAITERS 3
#ifdef _WIN32
# define PEER_NAME "region_peer.exe"
#else
# define PEER_NAME "region_peer"
#endif

static char peer_path[PATH_MAX];
static char rname[64];
static char *base;
static struct rp_slot *slots;
static const char *backend;

static uint32_t *
word(int k)
{
  return (uint32_t *)(void *)(base + RP_WORD(k));
}

static void
cleanup(void)
{
  pfutex_region_unlink(rname);
}

static void
find_peer(const char *argv0)
{
  const char *top = getenv("PFUTEX_TOP_BUILDDIR");
  if (top && *top) {
    snprintf(peer_path, sizeof peer_path, "%s/tests/" PEER_NAME, top);
  } else {
    const char *slash = strrchr(argv0, '/');
    int dirlen = slash ? (int)(slash - argv0) : 1;
    snprintf(peer_path, sizeof peer_path, "%.*s/../tests/" PEER_NAME, dirlen, slash ? argv0 : ".");
  }
  if (access(peer_path, X_OK) != 0)
    bail("helper program %s: %s", peer_path, strerror(errno));
}

/* fork + exec region_peer NAME SLOT ARGS... (the slot is cleared first). */
static pid_t
peer_start(int slot, const char *a0, const char *a1, const char *a2, const char *a3,
           const char *a4, const char *a5)
{
  char slotbuf[16];
  char *argv[] = { peer_path, rname, slotbuf, (char *)a0, (char *)a1, (char *)a2, (char *)a3,
                   (char *)a4, (char *)a5, NULL };
  pid_t pid;
  memset(&slots[slot], 0, sizeof slots[slot]);
  slots[slot].ret = -2;
  snprintf(slotbuf, sizeof slotbuf, "%d", slot);
  if ((pid = ru_spawn(peer_path, argv)) < 0)
    sysbail("fork");
  return pid;
}

/* Reap a peer: 1 when it exited 0. */
static int
peer_finish(pid_t pid, const char *what)
{
  int st = ru_reap(pid);
  if (st != 0) {
    diag("peer (%s) ended with %s %d", what, st >= 256 ? "signal" : "status", st >= 256 ? st - 256 : st);
    return 0;
  }
  return 1;
}

/* Return once the peer sleeps in its wait. */
static void
peer_asleep(pid_t pid, int slot)
{
  if (ru_wait_asleep(pid, pid, &slots[slot].started, &slots[slot].done) != 0)
    diag("peer %d did not go to sleep (done %d, ret %lld, errno %s)", (int)pid, slots[slot].done,
         (long long)slots[slot].ret, pft_errname(slots[slot].err));
}

static int
peer_ret_is(int slot, long want)
{
  if (slots[slot].ret == want)
    return 1;
  diag("    peer in slot %d: ret %lld, errno %s", slot, (long long)slots[slot].ret,
       pft_errname(slots[slot].err));
  return 0;
}

/* Waiter threads of the test on word k (shared FUTEX_WAIT). */
static struct pft_waiter ws[NWAITERS];

static void
waiter_start(int i, int k, uint32_t val)
{
  memset(&ws[i], 0, sizeof ws[i]);
  ws[i].uaddr = word(k);
  ws[i].val = val;
  ws[i].op_flags = 0;                   /* shared */
  pft_waiter_start(&ws[i]);
}

/* Join waiters [0, n): 1 when each returned 0; wakes words ks first if some
 * are still asleep after a while (a failed check). */
static int
waiters_finish(int n, int k1, int k2)
{
  int i, good = 1;
  long tries;
  for (tries = 0; tries < 50000 && pft_count_done(ws, n) < n; tries++)
    usleep(100);
  if (pft_count_done(ws, n) < n) {
    diag("    %d of %d waiters not woken: waking them", n - pft_count_done(ws, n), n);
    pfutex(word(k1), FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
    pfutex(word(k2), FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  }
  for (i = 0; i < n; i++)
    if (pft_waiter_join(&ws[i]) != 0) {
      diag("    waiter %d: ret %ld, errno %s", i, ws[i].ret, pft_errname(ws[i].err));
      good = 0;
    }
  return good;
}

/* 1. 3 tests. */
static void
case_peer_waits(void)
{
  pid_t pid = peer_start(0, "wait", "0", NULL, NULL, NULL, NULL);
  peer_asleep(pid, 0);
  is_int(1, pfutex(word(0), FUTEX_WAKE, INT_MAX, NULL, NULL, 0),
         "the test's FUTEX_WAKE wakes the peer's FUTEX_WAIT");
  ok(peer_finish(pid, "wait") && peer_ret_is(0, 0), "the peer's wait returned 0");
  is_string(backend, slots[0].backend, "the peer runs the test's backend (PFUTEX_BACKEND inherited)");
}

/* 2. 2 tests. */
static void
case_test_waits(void)
{
  struct timespec ten = { 10, 0 };
  long r;
  int e;
  pid_t pid = peer_start(1, "wake", "1", NULL, NULL, NULL, NULL);
  __atomic_store_n(&slots[1].test_started, 1, __ATOMIC_SEQ_CST);
  errno = 0;
  r = pfutex(word(1), FUTEX_WAIT, 0, &ten, NULL, 0);
  e = errno;
  pft_is_ret(r, e, 0, 0, "the test's FUTEX_WAIT, woken by the peer's pfutex_wake");
  ok(peer_finish(pid, "wake") && peer_ret_is(1, 1), "the peer's pfutex_wake reported 1");
}

/* 3. 4 tests. */
static void
case_peer_requeues(void)
{
  pid_t pid;
  int i;
  for (i = 0; i < NWAITERS; i++)
    waiter_start(i, 2, 0);
  pid = peer_start(0, "cmp_requeue", "2", "0", "3", "1", "1");
  ok(peer_finish(pid, "cmp_requeue") && peer_ret_is(0, 2),
     "the peer's FUTEX_CMP_REQUEUE 1+1 of the test's 3 waiters reports 2");
  pft_wait_done(ws, NWAITERS, 1);
  is_int(1, pfutex(word(2), FUTEX_WAKE, INT_MAX, NULL, NULL, 0), "one waiter left on the first word");
  is_int(1, pfutex(word(3), FUTEX_WAKE, INT_MAX, NULL, NULL, 0), "one moved to the second");
  ok(waiters_finish(NWAITERS, 2, 3), "every waiter returned 0");
}

/* 4. 8 tests. */
static void
case_peer_wake_op(void)
{
  char op[32];
  pid_t pid;

  if (pft_skip_wake_op(8))
    return;

  *word(4) = 0;
  *word(5) = 3;
  waiter_start(0, 4, 0);
  waiter_start(1, 5, 3);
  snprintf(op, sizeof op, "%#x", PFUTEX_OP(PFUTEX_OP_ADD, 2, PFUTEX_OP_CMP_EQ, 3));
  pid = peer_start(0, "wake_op", "4", "5", op, NULL, NULL);
  ok(peer_finish(pid, "wake_op") && peer_ret_is(0, 2),
     "the peer's pfutex_wake_op ADD 2, old == 3 holds: wakes both test waiters");
  is_int(5, (long)*word(5), "*uaddr2 3 -> 5, seen by the test");
  ok(waiters_finish(2, 4, 5), "both returned 0");

  waiter_start(0, 4, 0);
  waiter_start(1, 5, 5);
  snprintf(op, sizeof op, "%#x", PFUTEX_OP(PFUTEX_OP_SET, 7, PFUTEX_OP_CMP_NE, 5));
  pid = peer_start(0, "wake_op", "4", "5", op, NULL, NULL);
  ok(peer_finish(pid, "wake_op") && peer_ret_is(0, 1),
     "the peer's pfutex_wake_op SET 7, old != 5 fails: wakes the first word's waiter only");
  is_int(7, (long)*word(5), "*uaddr2 5 -> 7");
  pft_wait_done(ws, 1, 1);
  ok(!__atomic_load_n(&ws[1].done, __ATOMIC_SEQ_CST), "the second word's waiter still sleeps");
  is_int(1, pfutex(word(5), FUTEX_WAKE, INT_MAX, NULL, NULL, 0), "a wake of the second word finds it");
  ok(waiters_finish(2, 4, 5), "both returned 0");
}

/* 5. 4 tests. */
static void
case_test_requeues(void)
{
  pid_t pid = peer_start(0, "wait", "6", NULL, NULL, NULL, NULL);
  peer_asleep(pid, 0);
  is_int(1, pfutex_cmp_requeue(word(6), 0, word(7), 0, 1, 0),
         "the test's pfutex_cmp_requeue 0+1 moves the peer");
  is_int(0, pfutex(word(6), FUTEX_WAKE, INT_MAX, NULL, NULL, 0), "a wake of the first word: nobody");
  is_int(1, pfutex(word(7), FUTEX_WAKE, INT_MAX, NULL, NULL, 0), "a wake of the second word wakes it");
  ok(peer_finish(pid, "wait") && peer_ret_is(0, 0), "the peer's wait returned 0");
}

/* 6. 2 tests. */
static void
case_peer_to_peer(void)
{
  pid_t a = peer_start(0, "wait", "8", NULL, NULL, NULL, NULL), b;
  peer_asleep(a, 0);
  b = peer_start(1, "wake_now", "8", NULL, NULL, NULL, NULL);
  ok(peer_finish(b, "wake_now") && peer_ret_is(1, 1), "a second peer's FUTEX_WAKE reports 1");
  if (!__atomic_load_n(&slots[1].done, __ATOMIC_SEQ_CST) || slots[1].ret != 1)
    pfutex(word(8), FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  ok(peer_finish(a, "wait") && peer_ret_is(0, 0), "the first peer's wait returned 0");
}

int
main(int argc, char **argv)
{
  pfutex_region_t *rg;
  (void)argc;

  PFT_SKIP_UNDER_TSAN();   /* fork from a threaded process */
  plan(3 + 2 + 4 + 8 + 4 + 2);
  pft_watchdog(60);
  find_peer(argv[0]);
  backend = pfutex_backend();
  if (!backend)
    bail("no backend");
  diag("backend %s, peer %s", backend, peer_path);
  ru_name(rname, sizeof rname, "rexec");
  pfutex_region_unlink(rname);
  if (!(rg = pfutex_region_open(rname, RP_SIZE, O_RDWR | O_CREAT | O_EXCL, 0600)))
    sysbail("pfutex_region_open");
  atexit(cleanup);
#ifdef _WIN32
  ru_w32_region = rg;
#endif
  base = pfutex_region_addr(rg);
  slots = (struct rp_slot *)(void *)(base + RP_CTL_OFF);

  case_peer_waits();
  case_test_waits();
  case_peer_requeues();
  case_peer_wake_op();
  case_test_requeues();
  case_peer_to_peer();

  if (pfutex_region_close(rg) != 0)
    diag("pfutex_region_close: %s", strerror(errno));
  return 0;
}
