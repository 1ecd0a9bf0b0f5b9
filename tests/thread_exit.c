/* thread_exit: futex waits and wakes in pthread key destructors, while the
 * thread exits.
 *
 * The exiting thread A first waits once (so whatever per-thread state the
 * library keeps is set up), then exits with a value in key K; K's destructor
 * does a timed wait (20 ms: ETIMEDOUT) and an untimed wait on word wx that
 * the main thread wakes (0; the wake counts exactly 1).  While A sleeps
 * there, a thread B created just then waits on word wy and is woken by the
 * main thread (count 1, returns 0).  The two wakes are issued in both orders:
 * a wake of one word must end exactly its own waiter, so A and B never share
 * a parker (the old emu:sysv port handed A's semaphore to B as soon as its
 * own key destructor had run, and a later destructor then waited on it).
 *  (a) K created by A, after the library's first use; many rounds;
 *  (b) K's destructor re-arms itself with pthread_setspecific and waits in
 *      each of the (POSIX-minimum) 4 destructor iterations;
 *  (c) K created by main before the process's first pfutex call.
 * Synchronisation is on thread state (asleep in the kernel), never on
 * sleeps; every wait for a flag is bounded so a lost wake is a failure. */
#ifdef _WIN32
/* _WIN32: skipped (see the reason). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: winpthreads runs key destructors at DLL_THREAD_DETACH, under the loader lock: no new thread starts while one waits in a destructor (under wine 8.0 a thread created then started only after the destructor returned), and this test needs one to");
  return 0;
}
#else
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "pft.h"
#include <pfutex/linux.h>

#define MAXCALLS 4              /* _POSIX_THREAD_DESTRUCTOR_ITERATIONS */
/* ThreadSanitizer ends a thread's own state from a key destructor that
 * re-arms itself until the last (4th) iteration: a destructor of ours that
 * still runs in that iteration meets a thread TSan has already finalised
 * (SEGV).  Under it, (b) waits in 3 iterations. */
#ifdef PFT_TSAN
# define BCALLS 3
#else
# define BCALLS MAXCALLS
#endif

static long scale = 1;

/* Poll until *v >= want, at most ms milliseconds (times the timeout scale):
 * 1 if it got there.  A bound on waiting for a state, not a synchroniser. */
static int
wait_at_least(volatile int *v, int want, long ms)
{
  long long end = pft_now_ns() + (long long)ms * scale * 1000000LL;
  while (__atomic_load_n(v, __ATOMIC_SEQ_CST) < want) {
    if (pft_now_ns() > end)
      return 0;
    usleep(100);
  }
  return 1;
}

/* ---- The exiting thread A ------------------------------------------------- */
struct xa {
  pthread_key_t key;
  int own_key;              /* A creates the key (after its first wait) */
  int calls;                /* destructor calls wanted (re-arms calls-1 times) */
  pthread_t thread;
  volatile pid_t tid;
  uint32_t w0, wt, wx[MAXCALLS];
  long r0;                  /* the first wait */
  int e0;
  volatile int key_ok;
  volatile int ncalls;      /* destructor calls started */
  volatile int waiting;     /* destructor call i is about to wait on wx[i]: i + 1 */
  volatile int done;        /* untimed waits returned */
  long tret[MAXCALLS], uret[MAXCALLS];
  int terr[MAXCALLS], uerr[MAXCALLS];
};

static void
xa_destructor(void *v)
{
  struct xa *a = v;
  struct timespec rel = { 0, 20 * 1000000L };
  int i = a->ncalls;

  if (i >= MAXCALLS)
    return;
  __atomic_store_n(&a->ncalls, i + 1, __ATOMIC_SEQ_CST);
  errno = 0;
  a->tret[i] = pfutex(&a->wt, FUTEX_WAIT_PRIVATE, 0, &rel, NULL, 0);
  a->terr[i] = errno;
  __atomic_store_n(&a->waiting, i + 1, __ATOMIC_SEQ_CST);
  errno = 0;
  a->uret[i] = pfutex_wait(&a->wx[i], 0, PFUTEX_BITSET_MATCH_ANY, PFUTEX_PRIVATE, NULL,
                           PFUTEX_CLOCK_MONOTONIC);
  a->uerr[i] = errno;
  __atomic_store_n(&a->done, i + 1, __ATOMIC_SEQ_CST);
  if (i + 1 < a->calls)
    pthread_setspecific(a->key, a);
}

static void *
xa_main(void *arg)
{
  struct xa *a = arg;
  struct timespec dl;
  a->tid = pft_gettid();
  clock_gettime(CLOCK_MONOTONIC, &dl);
  pft_timespec_add_ns(&dl, 1000000LL);
  errno = 0;
  a->r0 = pfutex_wait(&a->w0, 0, PFUTEX_BITSET_MATCH_ANY, PFUTEX_PRIVATE, &dl, PFUTEX_CLOCK_MONOTONIC);
  a->e0 = errno;
  if (a->own_key && pthread_key_create(&a->key, xa_destructor) != 0)
    return NULL;
  if (pthread_setspecific(a->key, a) != 0)
    return NULL;
  __atomic_store_n(&a->key_ok, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

/* ---- The newcomer B ------------------------------------------------------- */
struct xb {
  pthread_t thread;
  uint32_t wy;
  volatile pid_t tid;
  volatile int started, returned;
  long ret;
  int err;
};

static void *
xb_main(void *arg)
{
  struct xb *b = arg;
  long r;
  b->tid = pft_gettid();
  __atomic_store_n(&b->started, 1, __ATOMIC_SEQ_CST);
  errno = 0;
  r = pfutex(&b->wy, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
  b->err = errno;
  b->ret = r;
  __atomic_store_n(&b->returned, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

/* Is the thread asleep (in its wait), with its flag still clear? */
static int
still_asleep(pid_t tid, volatile int *flag, int want)
{
  return pft_wait_asleep(tid) == 0 && __atomic_load_n(flag, __ATOMIC_SEQ_CST) < want;
}

/* ---- One case: `rounds` exiting threads -------------------------------------- */
struct tally {
  int first, key, timed, asleep, b_asleep, wx_count, wy_count, a_ret, b_ret, order, exited;
};

static void
fail(int *counter, int *reported, const char *fmt, long a, long b)
{
  (*counter)++;
  if ((*reported)++ < 6)
    diag(fmt, a, b);
}

/* Returns 0 when a round went wrong beyond repair (stop the case). */
static int
one_round(struct tally *t, pthread_key_t key, int own_key, int calls, int round, int *reported)
{
  struct xa *a = calloc(1, sizeof *a);
  int i, ok_round = 1;

  if (!a)
    sysbail("calloc");
  a->key = key;
  a->own_key = own_key;
  a->calls = calls;
  if (pthread_create(&a->thread, NULL, xa_main, a) != 0)
    sysbail("pthread_create");

  for (i = 0; i < calls && ok_round; i++) {
    struct xb *b = calloc(1, sizeof *b);
    int wy_first = (round + i) & 1;
    long n;

    if (!wait_at_least(&a->waiting, i + 1, 5000)) {
      fail(&t->asleep, reported, "    round %ld: destructor call %ld never reached its wait", round, i);
      ok_round = 0;
      break;
    }
    if (!still_asleep(a->tid, &a->done, i + 1))
      fail(&t->asleep, reported, "    round %ld, call %ld: the exiting thread is not asleep in its wait", round, i);

    if (!b)
      sysbail("calloc");
    if (pthread_create(&b->thread, NULL, xb_main, b) != 0)
      sysbail("pthread_create");
    while (!__atomic_load_n(&b->started, __ATOMIC_SEQ_CST))
      sched_yield();
    if (!still_asleep(b->tid, &b->returned, 1))
      fail(&t->b_asleep, reported, "    round %ld, call %ld: the new thread is not asleep in its wait", round, i);

    if (wy_first) {
      if ((n = pfutex(&b->wy, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0)) != 1)
        fail(&t->wy_count, reported, "    round %ld: wake(wy) returned %ld", round, n);
      if (!wait_at_least(&b->returned, 1, 2000))
        fail(&t->order, reported, "    round %ld, call %ld: wake(wy) did not end the new thread's wait", round, i);
      else if (!still_asleep(a->tid, &a->done, i + 1))
        fail(&t->order, reported, "    round %ld, call %ld: wake(wy) ended the exiting thread's wait", round, i);
      if ((n = pfutex_wake(&a->wx[i], PFUTEX_BITSET_MATCH_ANY, INT_MAX, PFUTEX_PRIVATE)) != 1)
        fail(&t->wx_count, reported, "    round %ld: wake(wx) returned %ld", round, n);
    } else {
      if ((n = pfutex_wake(&a->wx[i], PFUTEX_BITSET_MATCH_ANY, INT_MAX, PFUTEX_PRIVATE)) != 1)
        fail(&t->wx_count, reported, "    round %ld: wake(wx) returned %ld", round, n);
      if (!wait_at_least(&a->done, i + 1, 2000))
        fail(&t->order, reported, "    round %ld, call %ld: wake(wx) did not end the exiting thread's wait", round, i);
      else if (!still_asleep(b->tid, &b->returned, 1))
        fail(&t->order, reported, "    round %ld, call %ld: wake(wx) ended the new thread's wait", round, i);
      if ((n = pfutex(&b->wy, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0)) != 1)
        fail(&t->wy_count, reported, "    round %ld: wake(wy) returned %ld", round, n);
    }
    if (!wait_at_least(&b->returned, 1, 2000) || !wait_at_least(&a->done, i + 1, 2000)) {
      /* A token went to the wrong thread: free both, stop the case. */
      pfutex(&b->wy, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
      pfutex_wake(&a->wx[i], PFUTEX_BITSET_MATCH_ANY, INT_MAX, PFUTEX_PRIVATE);
      if (!wait_at_least(&b->returned, 1, 2000) || !wait_at_least(&a->done, i + 1, 2000)) {
        fail(&t->exited, reported, "    round %ld, call %ld: a waiter never ended", round, i);
        pthread_detach(b->thread);
        return 0;         /* a and b are left to their threads */
      }
      ok_round = 0;
    }
    pthread_join(b->thread, NULL);
    if (b->ret != 0)
      fail(&t->b_ret, reported, "    round %ld: the new thread's wait returned %ld", round, b->ret);
    free(b);
  }
  if (ok_round) {
    pthread_join(a->thread, NULL);
    if (a->r0 != -1 || a->e0 != ETIMEDOUT)
      fail(&t->first, reported, "    round %ld: the first wait returned %ld", round, a->r0);
    if (!a->key_ok)
      fail(&t->key, reported, "    round %ld: pthread_key_create or setspecific failed (%ld)", round, 0);
    if (a->ncalls != calls)
      fail(&t->key, reported, "    round %ld: %ld destructor calls", round, a->ncalls);
    for (i = 0; i < a->ncalls; i++) {
      if (a->tret[i] != -1 || a->terr[i] != ETIMEDOUT)
        fail(&t->timed, reported, "    round %ld: the destructor's timed wait returned %ld", round,
             a->tret[i] == -1 ? -(long)a->terr[i] : a->tret[i]);
      if (a->uret[i] != 0)
        fail(&t->a_ret, reported, "    round %ld: the destructor's untimed wait returned %ld", round,
             a->uret[i] == -1 ? -(long)a->uerr[i] : a->uret[i]);
    }
    if (own_key)
      pthread_key_delete(a->key);
    free(a);
  } else {
    /* Let the exiting thread finish on its own: its destructor's remaining
     * waits are woken here, bounded. */
    for (i = 0; i < calls; i++) {
      if (wait_at_least(&a->waiting, i + 1, 2000))
        pfutex_wake(&a->wx[i], PFUTEX_BITSET_MATCH_ANY, INT_MAX, PFUTEX_PRIVATE);
    }
    pthread_detach(a->thread);
  }
  return ok_round;
}

static void
run_case(const char *name, pthread_key_t key, int own_key, int calls, int rounds)
{
  struct tally t;
  int r, reported = 0, done = 0;
  memset(&t, 0, sizeof t);
  /* Rounds go on until the first one that fails (a failed round costs
   * seconds of bounded waits). */
  for (r = 0; r < rounds; r++) {
    int before = reported;
    done++;
    if (!one_round(&t, key, own_key, calls, r, &reported) || reported != before)
      break;
  }
  if (done < rounds || reported)
    diag("    %s: stopped after round %d of %d", name, done - 1, rounds);
  ok(done == rounds && reported == 0, "%s: all %d rounds ran to the end", name, rounds);
  ok(t.first == 0 && t.key == 0, "%s: the first wait timed out and the key was set", name);
  ok(t.timed == 0, "%s: each destructor's timed wait returned -1/ETIMEDOUT", name);
  ok(t.asleep == 0 && t.b_asleep == 0, "%s: the exiting thread and the new one were asleep together", name);
  ok(t.wx_count == 0, "%s: wake(wx) counted exactly the exiting thread (1)", name);
  ok(t.wy_count == 0, "%s: wake(wy) counted exactly the new thread (1)", name);
  ok(t.order == 0, "%s: each wake ended exactly its own waiter", name);
  ok(t.a_ret == 0, "%s: the destructor's untimed waits returned 0", name);
  ok(t.b_ret == 0, "%s: the new threads' waits returned 0", name);
}

int
main(void)
{
  pthread_key_t early, late;
  const char *sc = getenv("PFUTEX_TEST_TIMEOUT_SCALE");

  /* (c)'s key: before anything calls pfutex in this process. */
  if (pthread_key_create(&early, xa_destructor) != 0)
    sysbail("pthread_key_create");
  if (sc && atoi(sc) > 0)
    scale = atoi(sc);
  plan(3 * 9);
  pft_watchdog(60);
  diag("backend %s", pfutex_backend() ? pfutex_backend() : "(none)");

  run_case("(a) key created after the first use, by the exiting thread", 0, 1, 1, 50);
  /* (b): one key for every round, made after the first use. */
  if (pthread_key_create(&late, xa_destructor) != 0)
    sysbail("pthread_key_create");
  run_case(BCALLS == 4 ? "(b) destructor re-armed, waiting in 4 iterations"
                       : "(b) destructor re-armed, waiting in 3 iterations", late, 0, BCALLS, 8);
  run_case("(c) key created before the first use", early, 0, 1, 10);
  return 0;
}
#endif /* !_WIN32 */
