/* robust_mutex.c - examples/robust_mutex.h's robust process-shared mutex,
 * run as a test (tests/robust_mutex) on every backend: fork()ed processes
 * on an anonymous region, killed by SIGKILL while they hold mutexes.
 * Under the native backend the kernel walks a dead thread's robust list
 * (the reference); under emulation a surviving process that waits in the
 * region does (src/region/robust.c).  The same outcomes are required of
 * both:
 *   1  a process killed holding a mutex another process sleeps on: the
 *      sleeper gets it with EOWNERDEAD
 *   2  killed while taking one (list_op_pending, not yet on its list):
 *      the next locker gets EOWNERDEAD
 *   3  killed holding two, nobody waiting then: each next locker gets
 *      EOWNERDEAD
 *   4  killed holding one whose list entry loops on itself: EOWNERDEAD
 *   5  killed with a list whose second entry's pointer leads nowhere: the
 *      walk stops there, as the kernel's: the first mutex EOWNERDEAD, the
 *      one after the bad pointer stays the dead owner's (ETIMEDOUT)
 *   6  a stopped owner keeps its mutex (ETIMEDOUT), and loses it only once
 *      killed (EOWNERDEAD)
 *   8  a process that ends by exit() while two of its threads hold
 *      mutexes, their heads outside the region: both EOWNERDEAD (Linux
 *      walks every thread's list at the exit; emulation, at exit())
 *   7  worker processes killed at random while they lock, count and
 *      unlock: a journal lets whoever gets EOWNERDEAD undo a half-done
 *      update, and at the end the counter equals the sum of the workers'
 *      counts, nobody having waited past the watchdog.
 * RM_SECONDS sets phase 7's length (default 2). */
#ifdef _WIN32
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork() and SIGKILL");
  return 0;
}
#else
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "pft.h"
#include "robust_mutex.h"

#define NTH 128                  /* heads: one per process or thread ever started */
#define NW 3                     /* phase 7's workers */

struct shared {
  rm_thread_t th[NTH];
  rm_mutex_t m[12];
  volatile uint32_t go;
  rm_mutex_t work;
  volatile uint32_t ready[NTH];
  volatile int32_t child_tid[NTH];
  /* phase 7 */
  volatile uint64_t counter;
  volatile uint64_t count[NTH];
  struct {
    volatile uint32_t active, who;
    volatile uint64_t counter, count;
  } journal;
  volatile uint32_t errors;
};

static struct shared *sh;
static int next_th;

static struct timespec
in_ms(long ms)
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  pft_timespec_add_ns(&t, ms * 1000000LL);
  return t;
}

static void
wait_ready(int th)
{
  long long end = pft_now_ns() + 20000000000LL;
  while (!__atomic_load_n(&sh->ready[th], __ATOMIC_SEQ_CST) && pft_now_ns() < end)
    usleep(200);
  if (!sh->ready[th])
    bail("child %d never got ready", th);
}

static void
child_done(int th)
{
  __atomic_store_n(&sh->ready[th], 1, __ATOMIC_SEQ_CST);
  for (;;)
    pause();
}

/* Phase 8's child: its main thread and a second thread each hold a mutex
 * (m[8], m[9]) with heads outside the region (the heap's), then the
 * process exits by exit(): Linux walks every thread's list at the exit;
 * under emulation the library's exit handler does. */
static void *
exit_holder(void *arg)
{
  rm_thread_t *t = malloc(sizeof *t);
  (void)arg;
  if (!t || rm_thread_init(t) != 0 || rm_mutex_lock(t, &sh->m[9]) != 0)
    _exit(4);
  __atomic_store_n(&sh->ready[NTH - 1], 1, __ATOMIC_SEQ_CST);
  for (;;)
    pause();
  return NULL;
}

static void
exit_holding(int th)
{
  rm_thread_t *t = malloc(sizeof *t);
  pthread_t x;
  if (!t || rm_thread_init(t) != 0 || rm_mutex_lock(t, &sh->m[8]) != 0)
    _exit(4);
  if (pthread_create(&x, NULL, exit_holder, NULL) != 0)
    _exit(4);
  while (!__atomic_load_n(&sh->ready[NTH - 1], __ATOMIC_SEQ_CST))
    usleep(200);
  __atomic_store_n(&sh->ready[th], 1, __ATOMIC_SEQ_CST);
  while (!__atomic_load_n(&sh->go, __ATOMIC_SEQ_CST))
    usleep(200);
  exit(0);
}

/* A child: a head of its own (th), then what `what` says; then it sleeps
 * until killed. */
static pid_t
spawn(int th, int what)
{
  pid_t p = fork();
  if (p < 0)
    sysbail("fork");
  if (p == 0) {
    rm_thread_t *t = &sh->th[th];
    if (rm_thread_init(t) != 0)
      _exit(3);
    sh->child_tid[th] = pfutex_tid();
    switch (what) {
    case 1:                                            /* holds m[0] */
      if (rm_mutex_lock(t, &sh->m[0]) != 0)
        _exit(4);
      break;
    case 2:                                            /* taking m[1]: pending only */
      rm_pending(t, &sh->m[1]);
      __atomic_store_n(&sh->m[1].word, (uint32_t)pfutex_tid(), __ATOMIC_SEQ_CST);
      break;
    case 3:                                            /* holds m[2] and m[3] */
      if (rm_mutex_lock(t, &sh->m[2]) != 0 || rm_mutex_lock(t, &sh->m[3]) != 0)
        _exit(4);
      break;
    case 4:                                            /* holds m[4], its entry a loop */
      if (rm_mutex_lock(t, &sh->m[4]) != 0)
        _exit(4);
      sh->m[4].link.next = &sh->m[4].link;
      break;
    case 5:                                            /* holds m[5] then m[6]; m[6] -> nowhere */
      if (rm_mutex_lock(t, &sh->m[5]) != 0 || rm_mutex_lock(t, &sh->m[6]) != 0)
        _exit(4);
      sh->m[6].link.next = (struct robust_list *)(uintptr_t)8;
      break;
    case 6:                                            /* holds m[7] */
      if (rm_mutex_lock(t, &sh->m[7]) != 0)
        _exit(4);
      break;
    case 8:                                            /* exit() holding m[8] and m[9] */
      exit_holding(th);
      break;
    }
    child_done(th);
  }
  return p;
}

static void
kill_reap(pid_t p)
{
  int st;
  kill(p, SIGKILL);
  if (waitpid(p, &st, 0) != p)
    sysbail("waitpid");
  if (!WIFSIGNALED(st) || WTERMSIG(st) != SIGKILL)
    diag("child %d: status %#x (expected SIGKILL)", (int)p, st);
}

struct locker {
  int th, mi;
  long ms;
  int started;
  pid_t tid;
  volatile int ret;
  long long took_ns;
};

static void *
locker_thread(void *arg)
{
  struct locker *l = arg;
  struct timespec dl = in_ms(l->ms);
  long long t0;
  __atomic_store_n(&l->tid, pft_gettid(), __ATOMIC_RELEASE);
  if (rm_thread_init(&sh->th[l->th]) != 0) {
    l->ret = -1;
    __atomic_store_n(&l->started, 1, __ATOMIC_RELEASE);
    return NULL;
  }
  __atomic_store_n(&l->started, 1, __ATOMIC_RELEASE);
  t0 = pft_now_ns();
  l->ret = rm_mutex_timedlock(&sh->th[l->th], &sh->m[l->mi], &dl);
  l->took_ns = pft_now_ns() - t0;
  if (l->ret == 0 || l->ret == EOWNERDEAD)
    rm_mutex_unlock(&sh->th[l->th], &sh->m[l->mi]);
  return NULL;
}

/* Lock m[mi] from a fresh thread (its own head), timeout ms: the result;
 * unlocked again when taken. */
static int
lock_once(int mi, long ms, long long *took)
{
  struct locker l;
  pthread_t t;
  memset(&l, 0, sizeof l);
  l.th = next_th++;
  l.mi = mi;
  l.ms = ms;
  if (pthread_create(&t, NULL, locker_thread, &l) != 0)
    sysbail("pthread_create");
  pthread_join(t, NULL);
  if (took)
    *took = l.took_ns;
  return l.ret;
}

static const char *
rname(int r)
{
  return r == 0 ? "0" : r == EOWNERDEAD ? "EOWNERDEAD" : r == ETIMEDOUT ? "ETIMEDOUT" : pft_errname(r);
}

static void
phase1(void)
{
  struct locker l;
  pthread_t t;
  int th = next_th++;
  pid_t p = spawn(th, 1);
  wait_ready(th);
  memset(&l, 0, sizeof l);
  l.th = next_th++;
  l.mi = 0;
  l.ms = 10000;
  if (pthread_create(&t, NULL, locker_thread, &l) != 0)
    sysbail("pthread_create");
  while (!__atomic_load_n(&l.started, __ATOMIC_ACQUIRE))
    usleep(100);
  pft_wait_asleep(__atomic_load_n(&l.tid, __ATOMIC_ACQUIRE));
  ok((sh->m[0].word & FUTEX_TID_MASK) == (uint32_t)sh->child_tid[th] && (sh->m[0].word & FUTEX_WAITERS),
     "1: the child holds m0 and the parent's thread waits (word %#x)", sh->m[0].word);
  kill_reap(p);
  pthread_join(t, NULL);
  ok(l.ret == EOWNERDEAD, "1: the waiter got m0 with EOWNERDEAD after the owner's SIGKILL (%s, %.3f s)",
     rname(l.ret), (double)l.took_ns / 1e9);
  ok(sh->m[0].word == 0, "1: m0 free again (word %#x)", sh->m[0].word);
}

static void
phase_simple(int what, const int *mis, int n, const char *name)
{
  int th = next_th++, i;
  pid_t p = spawn(th, what);
  wait_ready(th);
  kill_reap(p);
  for (i = 0; i < n; i++) {
    long long took = 0;
    int r = lock_once(mis[i], 10000, &took);
    ok(r == EOWNERDEAD, "%d: %s: m%d is the next locker's with EOWNERDEAD (%s, %.3f s)", what, name,
       mis[i], rname(r), (double)took / 1e9);
  }
}

static void
phase5(void)
{
  int th = next_th++, r;
  pid_t p = spawn(th, 5);
  uint32_t dead;
  wait_ready(th);
  dead = (uint32_t)sh->child_tid[th];
  kill_reap(p);
  r = lock_once(6, 10000, NULL);
  ok(r == EOWNERDEAD, "5: m6 (first on the list) is the next locker's with EOWNERDEAD (%s)", rname(r));
  r = lock_once(5, 300, NULL);
  ok(r == ETIMEDOUT, "5: m5 (after the bad pointer) is not recovered, as by the kernel (%s)", rname(r));
  ok((sh->m[5].word & FUTEX_TID_MASK) == dead, "5: m5 still names the dead owner (word %#x)",
     sh->m[5].word);
  sh->m[5].word = 0;                                   /* repaired by hand */
}

static void
phase6(void)
{
  int th = next_th++, r;
  pid_t p = spawn(th, 6);
  wait_ready(th);
  kill(p, SIGSTOP);
  r = lock_once(7, 500, NULL);
  ok(r == ETIMEDOUT, "6: a stopped owner keeps m7 (%s)", rname(r));
  ok((sh->m[7].word & FUTEX_TID_MASK) == (uint32_t)sh->child_tid[th], "6: m7 still names it (word %#x)",
     sh->m[7].word);
  kill_reap(p);
  r = lock_once(7, 10000, NULL);
  ok(r == EOWNERDEAD, "6: killed, it loses m7: EOWNERDEAD (%s)", rname(r));
}

static void
phase8(void)
{
  int th = next_th++, st, r;
#ifdef PFT_TSAN
  (void)th; (void)st; (void)r;
  skip("8: a fork child that starts a thread: ThreadSanitizer does not support it");
  skip("8: (its main thread's mutex)");
  skip("8: (its other thread's mutex)");
  return;
#endif
  pid_t p = spawn(th, 8);
  wait_ready(th);
  __atomic_store_n(&sh->go, 1, __ATOMIC_SEQ_CST);
  if (waitpid(p, &st, 0) != p)
    sysbail("waitpid");
  ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "8: the child exited by exit() (status %#x)", st);
  r = lock_once(8, 3000, NULL);
  ok(r == EOWNERDEAD, "8: its main thread's m8 (head outside the region): EOWNERDEAD (%s)", rname(r));
  r = lock_once(9, 3000, NULL);
  ok(r == EOWNERDEAD, "8: its other thread's m9: EOWNERDEAD (%s)", rname(r));
}

/* Phase 7: a worker's loop.  Inside the mutex: the journal, then the
 * counter and its own count, then the journal closed.  EOWNERDEAD: a
 * dead worker's open journal is undone. */
static void
worker(int th, int slot)
{
  rm_thread_t *t = &sh->th[th];
  if (rm_thread_init(t) != 0)
    _exit(3);
  sh->child_tid[th] = pfutex_tid();
  for (;;) {
    int r = rm_mutex_lock(t, &sh->work);
    if (r == EOWNERDEAD) {
      if (sh->journal.active) {
        sh->counter = sh->journal.counter;
        sh->count[sh->journal.who] = sh->journal.count;
        sh->journal.active = 0;
      }
    } else if (r != 0) {
      __atomic_fetch_add(&sh->errors, 1, __ATOMIC_SEQ_CST);
      _exit(5);
    }
    sh->journal.who = (uint32_t)slot;
    sh->journal.counter = sh->counter;
    sh->journal.count = sh->count[slot];
    __atomic_store_n(&sh->journal.active, 1, __ATOMIC_SEQ_CST);
    sh->counter = sh->counter + 1;
    sh->count[slot] = sh->count[slot] + 1;
    __atomic_store_n(&sh->journal.active, 0, __ATOMIC_SEQ_CST);
    rm_mutex_unlock(t, &sh->work);
  }
}

static void
phase7(void)
{
  pid_t w[NW];
  int slot[NW], i, kills = 0, r, dead_seen = 0;
  double secs = getenv("RM_SECONDS") ? atof(getenv("RM_SECONDS")) : 2.0;
  long long end;
  uint64_t sum = 0;
  unsigned int seed = (unsigned int)getpid();
  for (i = 0; i < NW; i++) {
    slot[i] = next_th++;
    if ((w[i] = fork()) == 0)
      worker(slot[i], slot[i]);
  }
  end = pft_now_ns() + (long long)(secs * 1e9);
  while (pft_now_ns() < end && next_th < NTH - 2) {
    usleep(2000 + (unsigned int)rand_r(&seed) % 20000);
    i = rand_r(&seed) % NW;
    kill_reap(w[i]);
    kills++;
    slot[i] = next_th++;
    if ((w[i] = fork()) == 0)
      worker(slot[i], slot[i]);
  }
  for (i = 0; i < NW; i++)
    kill_reap(w[i]);
  /* the last owner may have died holding it: recover as a worker would */
  {
    int th = next_th++;
    struct timespec dl = in_ms(10000);
    if (rm_thread_init(&sh->th[th]) != 0)
      bail("rm_thread_init");
    r = rm_mutex_timedlock(&sh->th[th], &sh->work, &dl);
    if (r == EOWNERDEAD) {
      dead_seen = 1;
      if (sh->journal.active) {
        sh->counter = sh->journal.counter;
        sh->count[sh->journal.who] = sh->journal.count;
        sh->journal.active = 0;
      }
    }
    ok(r == 0 || r == EOWNERDEAD, "7: the mutex is the parent's after the last kill (%s%s)", rname(r),
       dead_seen ? ": its owner had died" : "");
    for (i = 0; i < NTH; i++)
      sum += sh->count[i];
    ok(sh->counter == sum && sh->counter > 0,
       "7: %d kills in %.1f s: counter %llu == the workers' counts summed %llu", kills, secs,
       (unsigned long long)sh->counter, (unsigned long long)sum);
    ok(sh->errors == 0, "7: no worker saw an error (%u)", sh->errors);
    rm_mutex_unlock(&sh->th[th], &sh->work);
  }
}

int
main(void)
{
  pfutex_region_t *r;
  static const int m1[] = { 1 }, m23[] = { 2, 3 }, m4[] = { 4 };
  struct robust_list_head *mine = NULL;
  size_t mlen = 0;
  PFT_SKIP_UNDER_TSAN();      /* it reads the region's words plainly between processes and threads */
  plan_lazy();
  pft_watchdog(120);
  if (!pfutex_backend())
    skip_all("no backend");
  if (!(r = pfutex_region_anon(sizeof(struct shared))))
    sysbail("pfutex_region_anon");
  sh = pfutex_region_addr(r);
  memset(sh, 0, sizeof *sh);
  (void)pfutex_get_robust_list(0, &mine, &mlen);       /* the C library's, put back below */
  {
    static struct robust_list_head probe;
    probe.list.next = &probe.list;
    if (pfutex_set_robust_list(&probe, sizeof probe) != 0) {
      if (errno == ENOSYS)
        skip_all("set_robust_list answers ENOSYS (%s): no robust lists to test",
                 pft_emulator() ? pft_emulator() : "this kernel");
      sysbail("pfutex_set_robust_list");
    }
    if (mine)
      (void)pfutex_set_robust_list(mine, mlen);
  }
  phase1();
  phase_simple(2, m1, 1, "killed while taking it (list_op_pending)");
  phase_simple(3, m23, 2, "killed holding two, nobody waiting then");
  phase_simple(4, m4, 1, "killed holding one whose list entry loops");
  phase5();
  phase6();
  phase8();
  phase7();
  if (mine)
    (void)pfutex_set_robust_list(mine, mlen);
  ok(pfutex_region_close(r) == 0, "the region closes");
  return 0;
}
#endif
