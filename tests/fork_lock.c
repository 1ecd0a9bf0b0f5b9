/* fork_lock: a fork child starts with a fresh private table even if another
 * thread held a bucket lock at the fork (table.c's atfork handler).  Thread A
 * holds the lock of W's bucket (and counts itself as a waiter past barrier
 * (A), so even a wake leaves the fast path); the main thread forks; the
 * child must wake, wait and time out on W without spinning on that lock. */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork()");
  return 0;
}
#else
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "emu.h"
#include "pft.h"
#include "pfutex/linux.h"

static uint32_t W;
static struct pf_bucket *fl_bucket;
static uint32_t fl_idx;
static volatile int fl_locked, fl_may_unlock;

static void *
fl_holder(void *arg)
{
  struct pf_key k;
  struct pf_table *tab;
  (void)arg;
  if (pf_key_make(&W, 0 /* private */, &k, &tab) != 0)
    bail("pf_key_make");
  fl_idx = pf_key_bucket(tab, &k);
  fl_bucket = &tab->buckets[fl_idx];
  AO_int_fetch_and_add_full(&fl_bucket->waiters, 1);
  pf_bucket_lock(tab, fl_idx);
  __atomic_store_n(&fl_locked, 1, __ATOMIC_SEQ_CST);
  while (!__atomic_load_n(&fl_may_unlock, __ATOMIC_SEQ_CST))
    sched_yield();
  AO_int_fetch_and_add_full(&fl_bucket->waiters, (unsigned int)-1);
  pf_bucket_unlock(&pf_table, fl_idx);
  return NULL;
}

/* The child: exit 0 on success, 10+step on the first failure. */
static void
fl_child(void)
{
  struct timespec ten_ms = { 0, 10 * 1000 * 1000 };
  struct pft_waiter w = { .uaddr = &W, .val = 0, .op_flags = FUTEX_PRIVATE_FLAG };

  alarm(10);
  W = 0;
  if (pfutex(&W, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0) != 0)
    _exit(11);
  if (pfutex(&W, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0) != -1 || errno != EAGAIN)
    _exit(12);
  if (pfutex(&W, FUTEX_WAIT_PRIVATE, 0, &ten_ms, NULL, 0) != -1 || errno != ETIMEDOUT)
    _exit(13);
  if (pfutex_wake(&W, PFUTEX_BITSET_MATCH_ANY, 1, PFUTEX_PRIVATE) != 0)
    _exit(14);
  /* A real wait and wake between two threads of the child (pft_waiter_start
   * returns once the waiter is asleep). */
  pft_waiter_start(&w);
  W = 1;
  if (pfutex(&W, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0) != 1)
    _exit(17);
  pft_waiter_join(&w);
  if (w.ret != 0)
    _exit(18);
  _exit(0);
}

int
main(void)
{
  pthread_t a;
  pid_t pid;
  int st;

  if (!pft_backend_is_emu())
    skip_all("emulation only (backend %s)", pfutex_backend() ? pfutex_backend() : "none");
  PFT_SKIP_UNDER_TSAN();
  plan(4);
  pft_watchdog(30);

  if (pthread_create(&a, NULL, fl_holder, NULL) != 0)
    sysbail("pthread_create");
  while (!__atomic_load_n(&fl_locked, __ATOMIC_SEQ_CST))
    sched_yield();

  fflush(stdout);
  pid = fork();
  if (pid < 0)
    sysbail("fork");
  if (pid == 0)
    fl_child();

  __atomic_store_n(&fl_may_unlock, 1, __ATOMIC_SEQ_CST);
  pthread_join(a, NULL);
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR)
      sysbail("waitpid");

  if (WIFSIGNALED(st))
    diag("child killed by signal %d", WTERMSIG(st));
  else if (WIFEXITED(st) && WEXITSTATUS(st) != 0)
    diag("child failed at step %d", WEXITSTATUS(st));
  ok(!(WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM),
     "child did not hang on the bucket lock held at fork");
  ok(WIFEXITED(st), "child exited normally");
  is_int(0, WIFEXITED(st) ? WEXITSTATUS(st) : -1,
         "child: wake, mismatched wait, timed wait and a real wait/wake all worked");
  is_int(0, pfutex(&W, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0),
         "parent: the bucket works again once the holder unlocked");
  return 0;
}
#endif /* !_WIN32 */
