/* pi_mutex: examples/pi_mutex.h's priority-inheritance mutex, by threads
 * and by processes, with exact counts.
 *
 *   1. threads: PM_THREADS threads each add 1 to a plain counter
 *      PM_ITERS times under one private PI mutex; the total must be exact,
 *      and inside the critical section the word must name the thread
 *      (its id, maybe FUTEX_WAITERS) and nobody else may be inside;
 *   2. timed: the same with a lock that times out after 0 to 200 us
 *      (CLOCK_REALTIME, absolute), retried: every success counted once,
 *      timeouts leave nothing behind (the word ends 0);
 *   3. processes: PM_PROCS fork()ed processes do 1. on a shared PI mutex
 *      in an anonymous region (the word keyed by the region under
 *      emulation, by the kernel natively);
 *   4. trylock: EBUSY while another thread holds it, EDEADLK on one's own
 *      lock, EPERM for an unlock by a thread that does not own it;
 *   5. killed owners: PM_PROCS processes share the region's PI mutex,
 *      each with a robust list in the region that holds the mutex while it
 *      does (a PI entry, as glibc's robust PI mutexes), and now and then
 *      one kills itself (SIGKILL) while it holds the lock with
 *      FUTEX_WAITERS set, PM_DEATHS in all: the lock must reach the next
 *      locker each time with FUTEX_OWNER_DIED set (or, after the last
 *      locker's last lock, be left free with it set) (Linux: the list's walk
 *      at the exit, then the exit's hand-off to a queued locker; under
 *      emulation a survivor's walk, or a blocked locker that asks the OS
 *      whether the owner lives), exactly once per death, never ESRCH (the
 *      walk leaves no dead id in the word), and the others finish.
 *      Without the robust list the kernel gives a locker that races the
 *      exit's hand-off EINVAL (its PI state has no owner yet, the word a
 *      dead one's id): the list is what makes the death clean.
 * A lost hand-off is a hang: the watchdog, and alarm() in the children,
 * catch it.  Sizes are small enough for every backend. */
#ifdef _WIN32
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork() (phase 3)");
  return 0;
}
#else
#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1
#endif
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic.h"
#include "pft.h"
#include "pi_mutex.h"

#define PM_THREADS 4
#define PM_ITERS 20000
#define PM_PROCS 4
#define PM_PITERS 5000

struct pm_shared {
  pi_mutex_t m;
  volatile long counter;
  volatile int inside;
  volatile int bad, errs, timeouts;
  volatile int deaths, od_seen, finished, esrch;   /* 5 */
  struct pm_rob {                                  /* 5: each process's robust list */
    struct robust_list_head head;
    struct robust_list e;                          /* the mutex's entry, while held */
  } rob[PM_PROCS];
};

#define PM_DEATHS 3
#define PM_KITERS 3000

static struct pm_shared *sh;
static int pm_pshared;
static int pm_timed;

static void
pm_critical(void)
{
  uint32_t me = (uint32_t)pfutex_tid(), w = __atomic_load_n(&sh->m.word, __ATOMIC_RELAXED);
  if ((w & FUTEX_TID_MASK) != me)
    __atomic_fetch_add(&sh->bad, 1, __ATOMIC_RELAXED);
  if (__atomic_fetch_add(&sh->inside, 1, __ATOMIC_RELAXED) != 0)
    __atomic_fetch_add(&sh->bad, 1, __ATOMIC_RELAXED);
  sh->counter = sh->counter + 1;             /* plain: the mutex must make it exact */
  __atomic_fetch_sub(&sh->inside, 1, __ATOMIC_RELAXED);
}

static void *
pm_worker(void *arg)
{
  long i, n = (long)(intptr_t)arg;
  unsigned int seed = (unsigned int)pfutex_tid();
  for (i = 0; i < n; i++) {
    int r;
    if (pm_timed) {
      for (;;) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        pft_timespec_add_ns(&t, (long long)(rand_r(&seed) % 200) * 1000);
        if ((r = pi_mutex_timedlock(&sh->m, pm_pshared, &t)) != ETIMEDOUT)
          break;
        __atomic_fetch_add(&sh->timeouts, 1, __ATOMIC_RELAXED);
      }
    } else {
      r = pi_mutex_lock(&sh->m, pm_pshared);
    }
    if (r != 0) {
      __atomic_fetch_add(&sh->errs, 1, __ATOMIC_RELAXED);
      continue;
    }
    pm_critical();
    if (pi_mutex_unlock(&sh->m, pm_pshared) != 0)
      __atomic_fetch_add(&sh->errs, 1, __ATOMIC_RELAXED);
  }
  return NULL;
}

static void
pm_threads(const char *what)
{
  pthread_t t[PM_THREADS];
  int i;
  memset((void *)sh, 0, sizeof *sh);
  for (i = 0; i < PM_THREADS; i++)
    if (pthread_create(&t[i], NULL, pm_worker, (void *)(intptr_t)PM_ITERS) != 0)
      sysbail("pthread_create");
  for (i = 0; i < PM_THREADS; i++)
    pthread_join(t[i], NULL);
  ok(sh->counter == (long)PM_THREADS * PM_ITERS && sh->bad == 0 && sh->errs == 0
         && sh->m.word == 0,
     "%s: %d threads x %d: counter %ld, exclusion broken %d times, errors %d, word %#x at the end",
     what, PM_THREADS, PM_ITERS, sh->counter, sh->bad, sh->errs, (unsigned)sh->m.word);
  if (pm_timed)
    diag("  %d timeouts", sh->timeouts);
}

struct pm_hold {
  int held, release;
};

static void *
pm_holder(void *arg)
{
  struct pm_hold *h = arg;
  if (pi_mutex_lock(&sh->m, 0) != 0)
    return NULL;
  __atomic_store_n(&h->held, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n(&h->release, __ATOMIC_ACQUIRE))
    usleep(200);
  pi_mutex_unlock(&sh->m, 0);
  return NULL;
}

/* 5, 6: this process's robust list, holding the mutex while it is held
 * (list_op_pending around the lock and the unlock, as glibc's). */
static struct robust_list *
pm_rob_pi(struct pm_rob *rb)
{
  return (struct robust_list *)((uintptr_t)&rb->e | 1);     /* a PI entry */
}

static int
pm_rob_init(struct pm_rob *rb)
{
  rb->head.list.next = &rb->head.list;
  rb->head.futex_offset = (long)((char *)&sh->m.word - (char *)&rb->e);
  rb->head.list_op_pending = NULL;
  return pfutex_set_robust_list(&rb->head, sizeof rb->head);
}

static int
pm_rob_lock(struct pm_rob *rb)
{
  int e;
  __atomic_store_n(&rb->head.list_op_pending, pm_rob_pi(rb), __ATOMIC_SEQ_CST);
  e = pi_mutex_lock(&sh->m, 1);
  if (e == 0) {
    __atomic_store_n(&rb->e.next, &rb->head.list, __ATOMIC_SEQ_CST);
    __atomic_store_n(&rb->head.list.next, pm_rob_pi(rb), __ATOMIC_SEQ_CST);
  }
  __atomic_store_n(&rb->head.list_op_pending, NULL, __ATOMIC_SEQ_CST);
  return e;
}

static int
pm_rob_unlock(struct pm_rob *rb)
{
  int e;
  __atomic_store_n(&rb->head.list_op_pending, pm_rob_pi(rb), __ATOMIC_SEQ_CST);
  __atomic_store_n(&rb->head.list.next, &rb->head.list, __ATOMIC_SEQ_CST);
  e = pi_mutex_unlock(&sh->m, 1);
  __atomic_store_n(&rb->head.list_op_pending, NULL, __ATOMIC_SEQ_CST);
  return e;
}

/* 5: a worker that may die holding the lock. */
static void
pm_killer(int idx)
{
  long i;
  unsigned int seed = (unsigned int)getpid() * 7919u + (unsigned int)idx;
  struct pm_rob *rb = &sh->rob[idx];
  if (pm_rob_init(rb) != 0) {
    __atomic_fetch_add(&sh->errs, 1, __ATOMIC_RELAXED);
    return;
  }
  for (i = 0; i < PM_KITERS; i++) {
    uint32_t w;
    int e = pm_rob_lock(rb);
    if (e == ESRCH)
      __atomic_fetch_add(&sh->esrch, 1, __ATOMIC_RELAXED);
    if (e != 0) {
      __atomic_fetch_add(&sh->errs, 1, __ATOMIC_RELAXED);
      continue;
    }
    w = __atomic_load_n(&sh->m.word, __ATOMIC_RELAXED);
    if (w & FUTEX_OWNER_DIED) {                 /* recovered: consistent again, glibc's way */
      sh->od_seen++;
      __atomic_fetch_and(&sh->m.word, ~(uint32_t)FUTEX_OWNER_DIED, __ATOMIC_RELAXED);
    }
    pm_critical();
    if (sh->deaths < PM_DEATHS && rand_r(&seed) % 200 == 0
        && (__atomic_load_n(&sh->m.word, __ATOMIC_RELAXED) & FUTEX_WAITERS)) {
      sh->deaths++;                             /* under the lock: counted once */
      kill(getpid(), SIGKILL);
    }
    if (pm_rob_unlock(rb) != 0)
      __atomic_fetch_add(&sh->errs, 1, __ATOMIC_RELAXED);
  }
  __atomic_fetch_add(&sh->finished, 1, __ATOMIC_RELAXED);
}

int
main(void)
{
  pfutex_region_t *rg;
  pid_t kids[PM_PROCS];
  int i, st, allok = 1;
  struct pm_hold h = { 0, 0 };
  pthread_t th;

  plan_lazy();
  pft_watchdog(240);
  if (!pfutex_backend())
    skip_all("no backend");
  if (pft_emulator() && !pft_backend_is_emu())
    skip_all("the native backend's PI ops are %s's here, not Linux's (it misbehaves with PI "
             "words other threads hold); the emulated backends run this", pft_emulator());

  sh = calloc(1, sizeof *sh);
  pm_threads("private");
  pm_timed = 1;
  pm_threads("private, timed");
  pm_timed = 0;

  /* 4. trylock, EDEADLK, EPERM */
  memset((void *)sh, 0, sizeof *sh);
  if (pthread_create(&th, NULL, pm_holder, &h) != 0)
    sysbail("pthread_create");
  while (!__atomic_load_n(&h.held, __ATOMIC_ACQUIRE))
    usleep(100);
  ok(pi_mutex_trylock(&sh->m, 0) == EBUSY, "trylock of a mutex another thread holds: EBUSY");
  ok(pi_mutex_unlock(&sh->m, 0) == EPERM, "unlock by a thread that does not own it: EPERM");
  __atomic_store_n(&h.release, 1, __ATOMIC_RELEASE);
  pthread_join(th, NULL);
  ok(pi_mutex_trylock(&sh->m, 0) == 0, "trylock of a free mutex: 0");
  ok(pi_mutex_trylock(&sh->m, 0) == EDEADLK && pi_mutex_lock(&sh->m, 0) == EDEADLK,
     "trylock and lock of one's own: EDEADLK");
  ok(pi_mutex_unlock(&sh->m, 0) == 0 && sh->m.word == 0, "unlock: the word is 0");
  free((void *)sh);

  /* 3. processes, a shared PI word in an anonymous region */
  if (!(rg = pfutex_region_anon(sizeof *sh)))
    sysbail("pfutex_region_anon");
  sh = pfutex_region_addr(rg);
  pm_pshared = 1;
  for (i = 0; i < PM_PROCS; i++) {
    fflush(stdout);
    if ((kids[i] = fork()) < 0)
      sysbail("fork");
    if (kids[i] == 0) {
      alarm(200);
      pm_worker((void *)(intptr_t)PM_PITERS);
      _exit(0);
    }
  }
  for (i = 0; i < PM_PROCS; i++) {
    while (waitpid(kids[i], &st, 0) < 0)
      ;
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
      allok = 0;
  }
  ok(allok && sh->counter == (long)PM_PROCS * PM_PITERS && sh->bad == 0 && sh->errs == 0
         && sh->m.word == 0,
     "processes: %d x %d on a shared PI word: counter %ld, exclusion broken %d times, errors %d, "
     "word %#x, children %s",
     PM_PROCS, PM_PITERS, sh->counter, sh->bad, sh->errs, (unsigned)sh->m.word,
     allok ? "all exited 0" : "NOT all exited 0");

  /* 5. owners killed holding the lock */
  memset((void *)sh, 0, sizeof *sh);
  {
    int killed = 0, exited = 0;
    for (i = 0; i < PM_PROCS; i++) {
      fflush(stdout);
      if ((kids[i] = fork()) < 0)
        sysbail("fork");
      if (kids[i] == 0) {
        alarm(200);
        pm_killer(i);
        _exit(0);
      }
    }
    for (i = 0; i < PM_PROCS; i++) {
      while (waitpid(kids[i], &st, 0) < 0)
        ;
      if (WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
        killed++;
      else if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        exited++;
    }
    /* FUTEX_WAITERS may be left set with nobody queued (every hand-off
     * writes it, the kernel's as well), so the last death can come after
     * the others' last lock: then the walk's OWNER_DIED is still in the
     * free word at the end, seen by nobody, and counts as that death's */
    uint32_t last = sh->m.word;
    int od_left = (last & FUTEX_OWNER_DIED) && !(last & FUTEX_TID_MASK);
    ok(killed == sh->deaths && exited == PM_PROCS - killed && sh->finished == exited
           && sh->od_seen + od_left == sh->deaths && sh->bad == 0 && sh->errs == 0,
       "killed owners (robust lists): %d processes, %d killed holding the lock, %d exited; the "
       "lock came back with FUTEX_OWNER_DIED %d times (left in the free word at the end: %d); "
       "ESRCH %d times; exclusion broken %d times, errors %d",
       PM_PROCS, killed, exited, sh->od_seen, od_left, sh->esrch, sh->bad, sh->errs);
    if (sh->deaths == PM_DEATHS || killed > 0)
      ;
    else
      diag("  no worker died this run (random): the check above is the plain one");
  }

  /* 6. a robust owner killed with nobody queued, found dead by the next
   * locker (a lock, then a trylock) once it is reaped: the kernel walked
   * the list at the exit, so the lock comes with FUTEX_OWNER_DIED, never
   * ESRCH */
  for (i = 0; i < 2; i++) {
    pid_t k;
    uint32_t w0, w1;
    int e;
    memset((void *)sh, 0, sizeof *sh);
    fflush(stdout);
    if ((k = fork()) < 0)
      sysbail("fork");
    if (k == 0) {
      alarm(60);
      if (pm_rob_init(&sh->rob[0]) != 0 || pm_rob_lock(&sh->rob[0]) != 0)
        _exit(1);
      kill(getpid(), SIGKILL);
      _exit(2);
    }
    while (waitpid(k, &st, 0) < 0)
      ;
    w0 = __atomic_load_n(&sh->m.word, __ATOMIC_ACQUIRE);
    e = i == 0 ? pi_mutex_lock(&sh->m, 1) : pi_mutex_trylock(&sh->m, 1);
    w1 = __atomic_load_n(&sh->m.word, __ATOMIC_ACQUIRE);
    ok(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL && e == 0
           && w1 == (FUTEX_OWNER_DIED | (uint32_t)pfutex_tid()),
       "robust owner killed, nobody queued: the next %s answers %d (%s), the word %#x -> %#x",
       i == 0 ? "lock" : "trylock", e, e ? strerror(e) : "taken", (unsigned)w0, (unsigned)w1);
    if (e == 0) {
      __atomic_fetch_and(&sh->m.word, ~(uint32_t)FUTEX_OWNER_DIED, __ATOMIC_RELAXED);
      (void)pi_mutex_unlock(&sh->m, 1);
    }
  }
  pfutex_region_close(rg);
  return 0;
}
#endif
