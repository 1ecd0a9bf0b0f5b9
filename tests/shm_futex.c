/* shm_futex: shared (non-PRIVATE) futex ops on words in memory the program
 * maps itself, with no pfutex region: the five kinds of tests/shm_obj.h,
 * across fork()ed processes and exec'd ones, at different addresses, and
 * twice in one process (issue 20).  The native backend (the kernel) is the
 * reference; every emulated backend must give the same answers:
 *   1. wait/wake: 3 fork()ed children wait, each through a mapping of its
 *      own at another address; wake(1) until 3 are counted: the sum of the
 *      wakes' counts is 3, each child's wait returned 0, and one more wake
 *      counts nobody;
 *   2. the same with 2 exec'd processes that map the object afresh (not
 *      anon: nothing but a fork child can reach it);
 *   3. twice in one process: a thread waits through one mapping, the
 *      wake comes through the other;
 *   4. a mismatch answers EAGAIN; a 50 ms timeout ETIMEDOUT and leaves
 *      nobody queued;
 *   5. cmp_requeue within the mapping: 2 children on A, moved to B (the
 *      moves counted exactly), then woken on B (2), none left on A;
 *   6. wake_op: a child on A and one on B, both woken by wake_ops of A
 *      whose op leaves B as it is (counts summed: 2);
 *   7. wake_bitset: children with bitsets 1 and 2; a wake of bitset 2
 *      counts only that one;
 *   8. a 3-state mutex and a condition variable whose broadcast is
 *      CMP_REQUEUE (glibc's old scheme), used by 4 processes passing a
 *      turn around: the counter they increment is exact.
 * And, outside the kinds: a MAP_PRIVATE mapping written (copy-on-write)
 * before a fork is not shared (the child's wait times out, the parent's
 * wake counts nobody), and a PRIVATE wait is not woken by a shared wake
 * (the kernel keys them apart), on a MAP_SHARED word; and SysV segments in
 * an IPC namespace of their own (check_sysv_ns: shmid 0 across processes,
 * a memfd's wake against the segment numbered as its inode).
 * Under a BSD shim backend (emu:freebsd-shim, emu:netbsd-shim,
 * emu:openbsd-shim) the program switches the port to its OS's own answer
 * (the model of the OS's map query through ports/<os>/objid.c, as the real
 * port is built: $PF_SHIM_<OS>_IDENTITY=1, set before the first op), so
 * these scenarios run that code: FreeBSD keys every kind itself, NetBSD
 * files and POSIX shm, and hands the waits and wakes of anonymous, SysV
 * and memfd words to its own __futex (the model: Linux's); OpenBSD hands
 * every kind's to its futex(2): there the scenarios of waits and wakes
 * run, and cmp_requeue and wake_op must answer ENOSYS (check_os_limits).
 * POSIX hosts with fork(); the exec'd processes run this program again
 * ("--waiter"). */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include "basic.h"

#ifdef _WIN32
int
main(void)
{
  skip_all("Windows: needs fork(); shared ops outside regions are not keyed by object there");
  return 0;
}
#else
#include "shm_obj.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "pft.h"
#include <pfutex.h>
#include <pfutex/linux.h>

/* word offsets in the object (several pages in, so an offset that ignored
 * the mapping's start or file offset would show) */
#define W_A      (3 * 4096 + 40)
#define W_B      (5 * 4096 + 8)
#define W_MUTEX  (6 * 4096)
#define W_COND   (6 * 4096 + 64)
#define W_CTR    (7 * 4096)
#define W_TURN   (7 * 4096 + 64)

#define MC_PROCS 4
#define MC_ROUNDS 300                    /* turns per process */

static const char *self;
static int anon_twice;                   /* so_anon_twice(): else an anon child keeps
                                            the inherited address */

/* A child's own mapping of the object: at another address (anon: the
 * inherited one where it cannot be mapped again). */
static char *
child_map(const struct so_obj *o, char *p)
{
  char *q;
  if (o->kind == 0 && !anon_twice)
    return p;
  q = so_map2(o, p);
  return q == p ? NULL : q;
}

static uint32_t *
word(char *base, size_t off)
{
  return (uint32_t *)(void *)(base + off);
}

/* A child's wait: exit 0 woken, 1 EAGAIN, 2 ETIMEDOUT, 3 anything else. */
static int
wait_status(long r)
{
  if (r == 0)
    return 0;
  return errno == EAGAIN ? 1 : errno == ETIMEDOUT ? 2 : 3;
}

static int
do_wait(uint32_t *w, uint32_t val, uint32_t bitset, long timeout_ms)
{
  struct timespec ts = { timeout_ms / 1000, (timeout_ms % 1000) * 1000000L };
  long r;
  if (bitset)
    r = pfutex(w, FUTEX_WAIT_BITSET, val, NULL, NULL, bitset);
  else
    r = pfutex(w, FUTEX_WAIT, val, timeout_ms ? &ts : NULL, NULL, 0);
  return wait_status(r);
}

/* fork a child that waits on the word at `off` of its own second mapping
 * of the object (anon: mremap's), val 0. */
static pid_t
fork_waiter(const struct so_obj *o, char *p, size_t off, uint32_t bitset)
{
  pid_t k;
  fflush(stdout);
  if ((k = fork()) < 0)
    sysbail("fork");
  if (k == 0) {
    char *q;
    alarm(60);
    if (!(q = child_map(o, p)))
      _exit(4);
    _exit(do_wait(word(q, off), 0, bitset, 0));
  }
  return k;
}

/* exec this program as a waiter on the object's word at `off`. */
static pid_t
exec_waiter(const struct so_obj *o, size_t off)
{
  char kind[16], offs[32];
  char *argv[] = { (char *)self, (char *)"--waiter", kind, (char *)o->arg, offs, NULL };
  pid_t k;
  snprintf(kind, sizeof kind, "%d", o->kind);
  snprintf(offs, sizeof offs, "%lu", (unsigned long)off);
  fflush(stdout);
  if ((k = fork()) < 0)
    sysbail("fork");
  if (k == 0) {
    execv(self, argv);
    _exit(127);
  }
  return k;
}

static int
exec_waiter_main(char **argv)
{
  struct so_obj o;
  char *p;
  alarm(60);
  if (so_from_arg(&o, atoi(argv[2]), argv[3]) != 0 || !(p = so_map(&o, 0)))
    return 4;
  return do_wait(word(p, (size_t)atol(argv[4])), 0, 0, 0);
}

/* The child's exit code (its wait's result), or -1. */
static int
reap(pid_t k)
{
  int st;
  while (waitpid(k, &st, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* op(arg) repeatedly (each counting some waiters) until `want` are
 * counted, or 20 s: the sum. */
typedef long (*count_fn)(void *arg);
static long
count_until(count_fn op, void *arg, long want)
{
  long sum = 0, r;
  long long end = pft_now_ns() + 20000000000LL;
  while (sum < want && pft_now_ns() < end) {
    if ((r = op(arg)) < 0)
      return -1000 - errno;
    sum += r;
    if (sum < want)
      usleep(1000);
  }
  return sum;
}

struct wk {
  uint32_t *w, *w2;
  int nr;
  uint32_t mask;
};

static long
op_wake(void *arg)
{
  struct wk *a = arg;
  return a->mask ? pfutex(a->w, FUTEX_WAKE_BITSET, (uint32_t)a->nr, NULL, NULL, a->mask)
                 : pfutex(a->w, FUTEX_WAKE, (uint32_t)a->nr, NULL, NULL, 0);
}

static long
op_requeue(void *arg)
{
  struct wk *a = arg;
  /* nr_wake 0, all moved; the kernel's rule: a requeue that wakes nobody
   * still moves (nr_wake 0 asks for no wake) */
  return pfutex(a->w, FUTEX_CMP_REQUEUE, 0, (const struct timespec *)(uintptr_t)INT_MAX, a->w2, 0);
}

static long
op_wake_op(void *arg)
{
  struct wk *a = arg;
  /* wake 1 on A; *B += 0, and if the old *B == 0 wake 1 on B */
  return pfutex(a->w, FUTEX_WAKE_OP, 1, (const struct timespec *)(uintptr_t)1, a->w2,
                (uint32_t)FUTEX_OP(FUTEX_OP_ADD, 0, FUTEX_OP_CMP_EQ, 0));
}

/* 1 and 2: children wait; wakes count them exactly. */
static void
check_wake(const struct so_obj *o, char *p, int exec)
{
  const char *what = exec ? "exec'd processes" : "fork()ed children";
  int n = exec ? 2 : 3, i, good = 0;
  pid_t k[3];
  struct wk a = { word(p, W_A), NULL, 1, 0 };
  long sum, extra;
  *a.w = 0;
  for (i = 0; i < n; i++)
    k[i] = exec ? exec_waiter(o, W_A) : fork_waiter(o, p, W_A, 0);
  sum = count_until(op_wake, &a, n);
  extra = pfutex(a.w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  for (i = 0; i < n; i++)
    good += reap(k[i]) == 0;
  ok(sum == n && extra == 0 && good == n,
     "%s: %d %s wait, each %s: wakes counted %ld, then %ld; %d woken (0)", so_kinds[o->kind], n,
     what, o->kind == 0 && !anon_twice ? "at the inherited address" : "at an address of its own",
     sum, extra, good);
}

struct tw {
  uint32_t *w;
  volatile int ret;
};

static void *
thread_wait(void *arg)
{
  struct tw *t = arg;
  t->ret = do_wait(t->w, 0, 0, 0);
  return NULL;
}

/* 3. one process, two mappings */
static void
check_twice(const struct so_obj *o, char *p)
{
  char *q;
  struct tw t;
  pthread_t th;
  struct wk a;
  long sum;
  if (o->kind == 0 && !anon_twice) {
    skip("anon: one process, two mappings: this system cannot map an anonymous shared "
         "object twice (mremap with old_size 0)");
    return;
  }
  q = so_map2(o, p);
  if (!q || q == p) {
    ok(0, "%s: a second mapping in one process: %s", so_kinds[o->kind], strerror(errno));
    return;
  }
  t.w = word(p, W_A);
  t.ret = -1;
  *t.w = 0;
  a.w = word(q, W_A);
  a.w2 = NULL;
  a.nr = 1;
  a.mask = 0;
  if (pthread_create(&th, NULL, thread_wait, &t) != 0)
    sysbail("pthread_create");
  sum = count_until(op_wake, &a, 1);
  pthread_join(th, NULL);
  ok(sum == 1 && t.ret == 0,
     "%s: one process, mappings at %p and %p: a thread waits through one, the wake through "
     "the other counts %ld, the wait returns %d (0)",
     so_kinds[o->kind], (void *)p, (void *)q, sum, t.ret);
  so_unmap(o, q, 0);
}

/* 4. EAGAIN and a timeout */
static void
check_eagain_timeout(const struct so_obj *o, char *p)
{
  uint32_t *w = word(p, W_A);
  int e, t;
  long left;
  *w = 5;
  e = do_wait(w, 4, 0, 0);
  *w = 0;
  t = do_wait(w, 0, 0, 50);
  left = pfutex(w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  ok(e == 1 && t == 2 && left == 0,
     "%s: a mismatch answers %s, a 50 ms wait %s, then a wake counts %ld", so_kinds[o->kind],
     e == 1 ? "EAGAIN" : "NOT EAGAIN", t == 2 ? "ETIMEDOUT" : "NOT ETIMEDOUT", left);
}

/* 5. cmp_requeue A -> B */
static void
check_requeue(const struct so_obj *o, char *p)
{
  struct wk a = { word(p, W_A), word(p, W_B), 0, 0 }, b = { word(p, W_B), NULL, INT_MAX, 0 };
  pid_t k[2];
  long moved, woken, onA;
  int i, good = 0;
  *a.w = 0;
  *b.w = 0;
  for (i = 0; i < 2; i++)
    k[i] = fork_waiter(o, p, W_A, 0);
  moved = count_until(op_requeue, &a, 2);
  onA = pfutex(a.w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  woken = count_until(op_wake, &b, 2);
  for (i = 0; i < 2; i++)
    good += reap(k[i]) == 0;
  ok(moved == 2 && onA == 0 && woken == 2 && good == 2,
     "%s: cmp_requeue A -> B: moved %ld, then A wakes %ld, B wakes %ld; %d woken (2)",
     so_kinds[o->kind], moved, onA, woken, good);
}

/* 6. wake_op */
static void
check_wake_op(const struct so_obj *o, char *p)
{
  struct wk a = { word(p, W_A), word(p, W_B), 1, 0 };
  pid_t k[2];
  long sum;
  int good;
  *a.w = 0;
  *a.w2 = 0;
  k[0] = fork_waiter(o, p, W_A, 0);
  k[1] = fork_waiter(o, p, W_B, 0);
  sum = count_until(op_wake_op, &a, 2);
  good = (reap(k[0]) == 0) + (reap(k[1]) == 0);
  ok(sum == 2 && good == 2 && *a.w2 == 0,
     "%s: wake_op (A, B += 0 if B == 0): counted %ld; %d woken (2), B %u", so_kinds[o->kind],
     sum, good, (unsigned)*a.w2);
}

/* 7. wake_bitset */
static void
check_bitset(const struct so_obj *o, char *p)
{
  struct wk two = { word(p, W_A), NULL, INT_MAX, 2 }, one = { word(p, W_A), NULL, INT_MAX, 1 };
  pid_t k1, k2;
  long s2, s1;
  int r1, r2;
  *two.w = 0;
  k1 = fork_waiter(o, p, W_A, 1);
  k2 = fork_waiter(o, p, W_A, 2);
  s2 = count_until(op_wake, &two, 1);
  r2 = reap(k2);
  s1 = count_until(op_wake, &one, 1);
  r1 = reap(k1);
  ok(s2 == 1 && s1 == 1 && r1 == 0 && r2 == 0,
     "%s: wake_bitset 2 counts %ld (only bitset 2's waiter), then bitset 1 counts %ld; "
     "waits %d %d (0 0)",
     so_kinds[o->kind], s2, s1, r2, r1);
}

/* 8. a mutex (0 free, 1 locked, 2 contended) and a condvar (a sequence
 * word; broadcast: CMP_REQUEUE of its waiters onto the mutex). */
static void
mc_lock(uint32_t *m)
{
  uint32_t c = 0;
  if (__atomic_compare_exchange_n(m, &c, 1, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
    return;
  if (c != 2)
    c = __atomic_exchange_n(m, 2, __ATOMIC_ACQUIRE);
  while (c != 0) {
    pfutex(m, FUTEX_WAIT, 2, NULL, NULL, 0);
    c = __atomic_exchange_n(m, 2, __ATOMIC_ACQUIRE);
  }
}

static void
mc_unlock(uint32_t *m)
{
  if (__atomic_fetch_sub(m, 1, __ATOMIC_RELEASE) != 1) {
    __atomic_store_n(m, 0, __ATOMIC_RELEASE);
    pfutex(m, FUTEX_WAKE, 1, NULL, NULL, 0);
  }
}

static void
mc_wait(uint32_t *c, uint32_t *m)
{
  uint32_t seq = __atomic_load_n(c, __ATOMIC_RELAXED);
  mc_unlock(m);
  pfutex(c, FUTEX_WAIT, seq, NULL, NULL, 0);
  /* requeued onto the mutex or woken: take it as contended */
  while (__atomic_exchange_n(m, 2, __ATOMIC_ACQUIRE) != 0)
    pfutex(m, FUTEX_WAIT, 2, NULL, NULL, 0);
}

static void
mc_broadcast(uint32_t *c, uint32_t *m)
{
  uint32_t seq = __atomic_add_fetch(c, 1, __ATOMIC_RELEASE);
  /* wake one, move the rest onto the mutex (held by the caller) */
  pfutex(c, FUTEX_CMP_REQUEUE, 1, (const struct timespec *)(uintptr_t)INT_MAX, m, seq);
}

static void
check_mutex_condvar(const struct so_obj *o, char *p)
{
  pid_t k[MC_PROCS];
  int i, good = 0;
  uint32_t *m = word(p, W_MUTEX), *c = word(p, W_COND), *ctr = word(p, W_CTR),
           *turn = word(p, W_TURN);
  *m = *c = *ctr = *turn = 0;
  for (i = 0; i < MC_PROCS; i++) {
    fflush(stdout);
    if ((k[i] = fork()) < 0)
      sysbail("fork");
    if (k[i] == 0) {
      char *q;
      int r;
      alarm(120);
      if (!(q = child_map(o, p)))
        _exit(4);
      m = word(q, W_MUTEX);
      c = word(q, W_COND);
      ctr = word(q, W_CTR);
      turn = word(q, W_TURN);
      for (r = 0; r < MC_ROUNDS; r++) {
        mc_lock(m);
        while (*turn % MC_PROCS != (uint32_t)i)
          mc_wait(c, m);
        *ctr = *ctr + 1;                /* plain: the mutex makes it exact */
        *turn = *turn + 1;
        mc_broadcast(c, m);
        mc_unlock(m);
      }
      _exit(0);
    }
  }
  for (i = 0; i < MC_PROCS; i++)
    good += reap(k[i]) == 0;
  ok(good == MC_PROCS && *ctr == (uint32_t)(MC_PROCS * MC_ROUNDS),
     "%s: mutex + condvar (CMP_REQUEUE broadcast), %d processes x %d turns: counter %u (%d), "
     "%d exited 0",
     so_kinds[o->kind], MC_PROCS, MC_ROUNDS, (unsigned)*ctr, MC_PROCS * MC_ROUNDS, good);
}

/* MAP_PRIVATE, written before the fork: not shared. */
static void
check_private_cow(void)
{
  struct so_obj o;
  char *p;
  uint32_t *w;
  pid_t k;
  long n;
  int r;
  if (so_make(&o, 2, "shmfx-cow") != 0)
    sysbail("file");
  p = mmap(NULL, SO_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, o.fd, 0);
  if (p == MAP_FAILED)
    sysbail("mmap");
  w = word(p, W_A);
  *w = 0;                                /* copy-on-write: the page is this process's */
  fflush(stdout);
  if ((k = fork()) < 0)
    sysbail("fork");
  if (k == 0) {
    *w = 0;                              /* and the child's its own */
    _exit(do_wait(w, 0, 0, 300));
  }
  usleep(50000);
  n = pfutex(w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  r = reap(k);
  ok(n == 0 && r == 2,
     "MAP_PRIVATE written before fork(): the parent's wake counts %ld (0), the child's wait %s",
     n, r == 2 ? "times out" : "did NOT time out");
  munmap(p, SO_SIZE);
  so_drop(&o);
}

/* A read-only MAP_PRIVATE view of an object's page that was never
 * written maps the object's own page: the kernel keys a shared op on it
 * by the object, so a wake through a MAP_SHARED mapping of the same page
 * reaches a waiter there (a view written before its mprotect holds a
 * copy: keyed by address, reached by nobody else).  Linux's answer,
 * checked on every backend whose keying is Linux's (issue 32, item 3). */
struct rw {
  uint32_t *w;
  long ms;
  volatile int ret;
};

static void *
ro_wait(void *arg)
{
  struct rw *t = arg;
  t->ret = do_wait(t->w, 0, 0, t->ms);
  return NULL;
}

static void
check_private_ro(const struct so_obj *o, char *p)
{
  char *v;
  struct rw t;
  struct wk a = { word(p, W_B), NULL, 1, 0 };
  pthread_t th;
  long sum, extra;
  *a.w = 0;                                        /* through the shared mapping */
  v = mmap(NULL, SO_SIZE, PROT_READ, MAP_PRIVATE, o->fd, 0);
  if (v == MAP_FAILED)
    sysbail("mmap");
  t.w = word(v, W_B);
  t.ms = 30000;                                    /* a backstop: a lost wake fails, not hangs */
  t.ret = -1;
  if (pthread_create(&th, NULL, ro_wait, &t) != 0)
    sysbail("pthread_create");
  sum = count_until(op_wake, &a, 1);               /* (the value stays 0: a wake alone) */
  pthread_join(th, NULL);
  extra = pfutex(a.w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  ok(sum == 1 && extra == 0 && t.ret == 0,
     "%s: a read-only MAP_PRIVATE view never written is the object's page: a wake through a "
     "MAP_SHARED mapping counts %ld (1), then %ld, the view's wait returns %d (0)",
     so_kinds[o->kind], sum, extra, t.ret);
  munmap(v, SO_SIZE);
  /* written, then made read-only: a copy, a read-only anonymous page,
   * which the kernel refuses (EFAULT) */
  v = mmap(NULL, SO_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, o->fd, 0);
  if (v == MAP_FAILED)
    sysbail("mmap");
  *word(v, W_B) = 0;                               /* copy-on-write */
  if (mprotect(v, SO_SIZE, PROT_READ) != 0)
    sysbail("mprotect");
  {
    struct timespec ts = { 0, 300000000L };
    long r = pfutex(word(v, W_B), FUTEX_WAIT, 0, &ts, NULL, 0);
    int e = errno;
    ok(r == -1 && e == EFAULT,
       "%s: a MAP_PRIVATE view written, then made read-only, holds a copy, a read-only "
       "anonymous page: a shared wait answers %ld/%s (-1/EFAULT)", so_kinds[o->kind], r,
       r == -1 ? pft_errname(e) : "-");
  }
  munmap(v, SO_SIZE);
}

/* A PRIVATE wait on a MAP_SHARED word is not woken by a shared wake. */
struct pw {
  uint32_t *w;
  volatile int ret;
};

static void *
private_wait(void *arg)
{
  struct pw *t = arg;
  long r = pfutex(t->w, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
  t->ret = wait_status(r);
  return NULL;
}

static long
op_wake_private(void *arg)
{
  struct wk *a = arg;
  return pfutex(a->w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

static void
check_private_vs_shared(void)
{
  struct so_obj o;
  char *p;
  struct pw t;
  struct wk a;
  pthread_t th;
  long shared_n, priv_n;
  if (so_make(&o, 0, "shmfx-pvs") != 0 || !(p = so_map(&o, 0)))
    sysbail("anon");
  t.w = word(p, W_A);
  t.ret = -1;
  *t.w = 0;
  if (pthread_create(&th, NULL, private_wait, &t) != 0)
    sysbail("pthread_create");
  usleep(100000);
  shared_n = pfutex(t.w, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
  a.w = t.w;
  priv_n = count_until(op_wake_private, &a, 1);
  pthread_join(th, NULL);
  ok(shared_n == 0 && priv_n == 1 && t.ret == 0,
     "a PRIVATE wait on a MAP_SHARED word: a shared wake counts %ld (0), a private one %ld, the "
     "wait returns %d",
     shared_n, priv_n, t.ret);
  so_unmap(&o, p, 0);
}

/* The BSD shim backends' own identity (header comment): the kinds whose
 * ops go to the OS's own futex, which takes waits and wakes only as Linux
 * does (a bit per kind of shm_obj.h), set by os_identity. */
static unsigned int waitwake_kinds;

static void
os_identity(void)
{
  const char *be = getenv("PFUTEX_BACKEND");
  if (!be)
    return;
  if (strcmp(be, "emu:freebsd-shim") == 0) {
    setenv("PF_SHIM_FREEBSD_IDENTITY", "1", 1);
  } else if (strcmp(be, "emu:netbsd-shim") == 0) {
    setenv("PF_SHIM_NETBSD_IDENTITY", "1", 1);   /* anon, sysv, memfd: NetBSD's __futex */
    waitwake_kinds = 1u << 0 | 1u << 3 | 1u << 4;
  } else if (strcmp(be, "emu:openbsd-shim") == 0) {
    setenv("PF_SHIM_OPENBSD_IDENTITY", "1", 1);  /* every kind: OpenBSD's futex(2) */
    waitwake_kinds = (1u << SO_KINDS) - 1;
  } else {
    return;
  }
  /* The words' waits go to the OS's call itself there, whose model makes
   * every 4th wait return at once to exercise the ports' park loops:
   * NetBSD's futex_wait returns 0 only when woken (sys_futex.c: it sleeps
   * while fw_bitset is set), and a user word's exact counts need that. */
  setenv("PF_SHIM_SPURIOUS", "0", 1);
  diag("%s: the OS's own identity (ports/<os>/objid.c over the shim's model)", be);
}

/* The OS's own futex (OpenBSD's futex(2), NetBSD's __futex) takes waits
 * and wakes; cmp_requeue and wake_op (neither has them as Linux does) and,
 * on OpenBSD, a bitset of some bits answer ENOSYS (never a silent key);
 * private ops on the same word still work in the process. */
static void
check_os_limits(const struct so_obj *o, char *p)
{
  struct timespec ts = { 0, 50 * 1000 * 1000 };
  uint32_t *a = word(p, W_A), *b = word(p, W_B);
  long rq, wo, wb, pw;
  int er, eo, eb, ep;
  *a = 0;
  *b = 0;
  errno = 0;
  rq = pfutex(a, FUTEX_CMP_REQUEUE, 1, (const struct timespec *)(uintptr_t)1, b, 0);
  er = errno;
  errno = 0;
  wo = pfutex(a, FUTEX_WAKE_OP, 1, (const struct timespec *)(uintptr_t)1, b,
              (uint32_t)FUTEX_OP(FUTEX_OP_ADD, 0, FUTEX_OP_CMP_EQ, 0));
  eo = errno;
  errno = 0;
  wb = pfutex(a, FUTEX_WAKE_BITSET, 1, NULL, NULL, 2);
  eb = errno;
  if (strcmp(getenv("PFUTEX_BACKEND"), "emu:netbsd-shim") == 0 && wb == 0)
    wb = -1, eb = ENOSYS;                 /* __futex has bitsets: a wake of nobody, 0 */
  errno = 0;
  pw = pfutex(a, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
  ep = errno;
  ok(rq == -1 && er == ENOSYS && wo == -1 && eo == ENOSYS && wb == -1 && eb == ENOSYS && pw == -1
         && ep == ETIMEDOUT,
     "%s: the OS's own futex keys it: cmp_requeue, wake_op (and on OpenBSD a bitset of one bit) answer "
     "ENOSYS (%s, %s, %s); a private wait times out (%s)",
     so_kinds[o->kind], strerror(er), strerror(eo), strerror(eb), strerror(ep));
}

#ifdef __linux__
/* SysV segments against the other shmem files, in an IPC namespace of the
 * test's own (root's unshare; a fork child owns it).  A segment's inode
 * number is its shmid, numbered from 0 in each namespace and shared with
 * the other files of its device (memfds, anonymous shared memory): the
 * kernel keys by the inode itself, and so must the emulation.  Checked:
 *   - shmid 0 (the namespace's first segment): a grandchild waits through
 *     one attachment; the child sees it queued through another (a
 *     CMP_REQUEUE onto the word itself counts the waiters without waking
 *     them) and wakes it there: 1;
 *   - a memfd and the segment whose shmid is the memfd's inode number
 *     (shm_next_id, CONFIG_CHECKPOINT_RESTORE): a grandchild waits on the
 *     segment's word; a wake of the memfd's word at the same offset counts
 *     nobody and leaves it queued; the segment's wake counts it.
 * Child's exit: 0 good, 10 no namespace or no shm_next_id (skip), else the
 * failing step. */
static long
queued_on(uint32_t *w)
{
  return pfutex(w, FUTEX_CMP_REQUEUE, 0, (const struct timespec *)(uintptr_t)INT_MAX, w, 0);
}

static int
sysv_wait_child(uint32_t *w)
{
  pid_t k;
  fflush(stdout);
  if ((k = fork()) == 0) {
    alarm(60);
    _exit(do_wait(w, 0, 0, 0));
  }
  return (int)k;
}

/* until the waiter is queued on w (20 s): 1, else 0 */
static int
sysv_until_queued(uint32_t *w)
{
  long long end = pft_now_ns() + 20000000000LL;
  while (queued_on(w) != 1)
    if (pft_now_ns() > end)
      return 0;
    else
      usleep(1000);
  return 1;
}

static int
sysv_ns_main(void)
{
  struct stat sb;
  char num[32], *m;
  uint32_t *p1, *p2, *c;
  int id, mfd, nfd, n;
  pid_t k;
  if (unshare(CLONE_NEWIPC) != 0)
    return 10;
  if ((id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600)) != 0)
    return 10;
  if ((p1 = shmat(id, NULL, 0)) == (void *)-1 || (p2 = shmat(id, NULL, 0)) == (void *)-1)
    return 20;
  p1[10] = 0;
  if ((k = sysv_wait_child(p1 + 10)) < 0)
    return 21;
  if (!sysv_until_queued(p2 + 10)) {
    kill(k, SIGKILL);
    return 22;                            /* shmid 0's words not met across processes */
  }
  if (pfutex(p2 + 10, FUTEX_WAKE, 1, NULL, NULL, 0) != 1 || reap(k) != 0)
    return 23;
  /* a memfd, and the segment numbered as its inode */
  if ((mfd = (int)syscall(SYS_memfd_create, "pfutex-sysv", 0)) < 0 || ftruncate(mfd, 4096) != 0
      || fstat(mfd, &sb) != 0)
    return 30;
  m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
  if (m == MAP_FAILED || (nfd = open("/proc/sys/kernel/shm_next_id", O_WRONLY)) < 0)
    return 10;
  n = snprintf(num, sizeof num, "%llu", (unsigned long long)sb.st_ino);
  if (write(nfd, num, (size_t)n) != (ssize_t)n)
    return 10;
  close(nfd);
  if ((id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600)) < 0 || (uint64_t)id != (uint64_t)sb.st_ino
      || (c = shmat(id, NULL, 0)) == (void *)-1)
    return 10;
  c[10] = 0;
  ((uint32_t *)(void *)m)[10] = 0;
  if ((k = sysv_wait_child(c + 10)) < 0)
    return 31;
  if (!sysv_until_queued(c + 10)) {
    kill(k, SIGKILL);
    return 32;
  }
  if (pfutex((uint32_t *)(void *)m + 10, FUTEX_WAKE, INT_MAX, NULL, NULL, 0) != 0) {
    kill(k, SIGKILL);
    return 33;                            /* the memfd's wake met the segment's waiter */
  }
  if (queued_on(c + 10) != 1 || pfutex(c + 10, FUTEX_WAKE, 1, NULL, NULL, 0) != 1 || reap(k) != 0)
    return 34;
  return 0;
}

static void
check_sysv_ns(void)
{
  pid_t k;
  int st;
  if (waitwake_kinds & 1u << 3) {
    skip("sysv in a namespace of its own: this OS's own futex keys SysV words");
    return;
  }
  fflush(stdout);
  if ((k = fork()) < 0)
    sysbail("fork");
  if (k == 0)
    _exit(sysv_ns_main());
  st = reap(k);
  if (st == 10)
    skip("sysv in a namespace of its own: no IPC namespace or no shm_next_id here (root only)");
  else
    ok(st == 0,
       "sysv in an IPC namespace of its own: shmid 0 met across processes; a memfd's wake does not "
       "reach the segment numbered as its inode (child: %d)",
       st);
}
#endif

int
main(int argc, char **argv)
{
  int kind;
  if (argc == 5 && strcmp(argv[1], "--waiter") == 0)
    return exec_waiter_main(argv);
  self = argv[0];
  os_identity();                          /* before the first op */
  plan_lazy();
  pft_watchdog(300);
  if (!pfutex_backend())
    skip_all("no backend");
  diag("backend %s", pfutex_backend());
  if (!(anon_twice = so_anon_twice()))
    diag("anon: no second mapping of an anonymous shared object here (%s): its children "
         "use the inherited address",
         strerror(errno));
  for (kind = 0; kind < SO_KINDS; kind++) {
    struct so_obj o;
    char *p;
    if (so_make(&o, kind, "shmfx") != 0) {
      skip("%s: cannot make the object here: %s", so_kinds[kind], strerror(errno));
      continue;
    }
    if (!(p = so_map(&o, 0)))
      sysbail("map %s", so_kinds[kind]);
    so_keep_on_exec(&o);
    check_wake(&o, p, 0);
    if (kind != 0)
      check_wake(&o, p, 1);
    check_twice(&o, p);
    check_eagain_timeout(&o, p);
    if (o.fd >= 0) {
      const char *be = pfutex_backend();
      if (pft_emulator() && pft_backend_is_emu())
        skip("%s: a read-only MAP_PRIVATE view: under %s this process's pages are the "
             "emulator's (its pagemap describes host pages; it may back a private file mapping "
             "with a copy): no reference", so_kinds[kind], pft_emulator());
      else if (strstr(be, "-shim"))
        skip("%s: a read-only MAP_PRIVATE view: %s keys as its OS does (a private mapping "
             "by process and address; Linux's answer is tested on the others)",
             so_kinds[kind], be);
      else
        check_private_ro(&o, p);
    }
    if (waitwake_kinds & 1u << kind) {
      check_os_limits(&o, p);
      so_unmap(&o, p, 0);
      so_drop(&o);
      continue;
    }
    check_requeue(&o, p);
    check_wake_op(&o, p);
    check_bitset(&o, p);
    check_mutex_condvar(&o, p);
    so_unmap(&o, p, 0);
    so_drop(&o);
  }
  check_private_cow();
  check_private_vs_shared();
#ifdef __linux__
  check_sysv_ns();
#endif
  return 0;
}
#endif
