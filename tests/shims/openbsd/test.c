/* shim_openbsd: the OpenBSD futex(2) behaviour tests/shims/openbsd/shim.c
 * claims, call by call, each check naming the statement of futex.2
 * (openbsd/src lib/libc/sys/futex.2) or sys_futex.c it models.  Tests the
 * shim directly, not through pfutex; runs once (backend emu:openbsd-shim). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pft.h"
#include "shim.h"

struct waiter {
  volatile uint32_t *word;
  int op;
  const struct timespec *ts;
  pthread_t th;
  volatile pid_t tid;
  int ret, err;
};

static void *
waiter_main(void *arg)
{
  struct waiter *w = arg;
  w->tid = pft_gettid();
  errno = 0;
  w->ret = futex(w->word, w->op, 0, w->ts, NULL);
  w->err = errno;
  return NULL;
}

static void
waiter_start(struct waiter *w)
{
  w->tid = 0;
  if (pthread_create(&w->th, NULL, waiter_main, w) != 0)
    bail("pthread_create");
  while (!w->tid)
    sched_yield();
  pft_wait_asleep(w->tid);
}

static volatile sig_atomic_t hits;
static void on_sig(int sig) { (void)sig; hits++; }

int
main(void)
{
  static volatile uint32_t word;
  const char *be = getenv("PFUTEX_BACKEND");
  struct timespec ts, t0, t1;
  struct waiter w;
  volatile uint32_t *shared;
  int r, e, st;
  pid_t pid;

  if (!be || strcmp(be, "emu:openbsd-shim") != 0)
    skip_all("the shim's own test runs once, under emu:openbsd-shim");
  PFT_SKIP_UNDER_TSAN();
  plan(24);
  pft_watchdog(60);
  pf_shim_openbsd_set_spurious(0);

  /* <sys/futex.h> */
  ok(FUTEX_WAIT == 1 && FUTEX_WAKE == 2 && FUTEX_REQUEUE == 3 && FUTEX_PRIVATE_FLAG == 128,
     "sys/futex.h: FUTEX_WAIT 1, FUTEX_WAKE 2, FUTEX_REQUEUE 3, FUTEX_PRIVATE_FLAG 128");

  /* futex.2 ERRORS: [EAGAIN] the value pointed to by uaddr is not val */
  word = 5;
  errno = 0;
  r = futex(&word, FUTEX_WAIT_PRIVATE, 4, NULL, NULL);
  ok(r == -1 && errno == EAGAIN, "EAGAIN: *uaddr != val (got %d, %s)", r, pft_errname(errno));

  /* futex.2: blocked "until timeout expires"; the timeout is relative */
  word = 0;
  ts.tv_sec = 0;
  ts.tv_nsec = 30000000;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  errno = 0;
  r = futex(&word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL);
  e = errno;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  ok(r == -1 && e == ETIMEDOUT, "ETIMEDOUT: the timeout expired (got %d, %s)", r, pft_errname(e));
  ok(pft_elapsed_ns(&t0, &t1) >= 30000000, "the timeout is relative: slept %lld ns of 30 ms",
     pft_elapsed_ns(&t0, &t1));

  /* futex.2 ERRORS: [EINVAL] a second value less than zero, or a
   * nanosecond value less than zero or >= 1000 million */
  ts.tv_sec = -1;
  ts.tv_nsec = 0;
  errno = 0;
  r = futex(&word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL);
  ok(r == -1 && errno == EINVAL, "EINVAL: tv_sec < 0");
  ts.tv_sec = 0;
  ts.tv_nsec = 1000000000L;
  errno = 0;
  r = futex(&word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL);
  ok(r == -1 && errno == EINVAL, "EINVAL: tv_nsec >= 1000 million");

  /* futex.2 ERRORS: [ENOSYS] the op argument is invalid */
  errno = 0;
  r = futex(&word, 9, 0, NULL, NULL);
  ok(r == -1 && errno == ENOSYS, "ENOSYS: an op OpenBSD does not have (9, Linux's WAIT_BITSET)");

  /* futex.2 RETURN VALUES: FUTEX_WAKE returns the number of woken threads;
   * FUTEX_WAIT returns zero if woken by a matching FUTEX_WAKE */
  is_int(0, futex(&word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL), "FUTEX_WAKE with nobody waiting: 0");
  memset(&w, 0, sizeof w);
  w.word = &word;
  w.op = FUTEX_WAIT_PRIVATE;
  waiter_start(&w);
  is_int(1, futex(&word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL), "FUTEX_WAKE: 1 woken");
  pthread_join(w.th, NULL);
  ok(w.ret == 0, "FUTEX_WAIT woken by FUTEX_WAKE: 0 (got %d, %s)", w.ret, pft_errname(w.err));

  /* futex.2 ERRORS: [EINTR] a signal arrived; [ECANCELED] a signal arrived
   * and SA_RESTART was set -- untimed and timed alike (sys_futex.c maps the
   * sleep's ERESTART to ECANCELED: never restarted) */
  pft_install(SIGUSR1, on_sig, 0);
  memset(&w, 0, sizeof w);
  w.word = &word;
  w.op = FUTEX_WAIT_PRIVATE;
  waiter_start(&w);
  pthread_kill(w.th, SIGUSR1);
  pthread_join(w.th, NULL);
  ok(w.ret == -1 && w.err == EINTR, "EINTR: untimed, handler without SA_RESTART (got %d, %s)",
     w.ret, pft_errname(w.err));
  pft_install(SIGUSR1, on_sig, SA_RESTART);
  memset(&w, 0, sizeof w);
  w.word = &word;
  w.op = FUTEX_WAIT_PRIVATE;
  waiter_start(&w);
  pthread_kill(w.th, SIGUSR1);
  pthread_join(w.th, NULL);
  ok(w.ret == -1 && w.err == ECANCELED, "ECANCELED: untimed, handler with SA_RESTART (got %d, %s)",
     w.ret, pft_errname(w.err));
  ts.tv_sec = 30;
  ts.tv_nsec = 0;
  memset(&w, 0, sizeof w);
  w.word = &word;
  w.op = FUTEX_WAIT;
  w.ts = &ts;
  waiter_start(&w);
  pthread_kill(w.th, SIGUSR1);
  pthread_join(w.th, NULL);
  ok(w.ret == -1 && w.err == ECANCELED, "ECANCELED: timed, handler with SA_RESTART (got %d, %s)",
     w.ret, pft_errname(w.err));
  is_int(3, hits, "the handlers ran");
  signal(SIGUSR1, SIG_DFL);

  /* futex.2 up to 2019 (and sys_futex.c rev 1.1-1.9): "an error number is
   * returned"; today -1 and errno */
  pf_shim_openbsd_set_oldret(1);
  word = 5;
  errno = 0;
  r = futex(&word, FUTEX_WAIT_PRIVATE, 4, NULL, NULL);
  ok(r == EAGAIN && errno == 0, "old convention: EAGAIN as the return value (got %d)", r);
  ts.tv_sec = 0;
  ts.tv_nsec = 1000000;
  word = 0;
  r = futex(&word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL);
  ok(r == ETIMEDOUT, "old convention: ETIMEDOUT as the return value (got %d)", r);
  pf_shim_openbsd_set_oldret(0);

  /* Spurious wakeups (futex.2 promises none; the port must survive them,
   * as pthread code on OpenBSD does): the shim's knob */
  pf_shim_openbsd_set_spurious(1);
  ts.tv_sec = 5;
  ts.tv_nsec = 0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  r = futex(&word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  ok(r == 0 && pft_elapsed_ns(&t0, &t1) < 1000000000LL, "spurious wakeup injected: 0 at once");
  pf_shim_openbsd_set_spurious(0);

  /* Process-shared futexes (sys_futex.c futex_get, since 2018-06-03): a
   * futex without FUTEX_PRIVATE_FLAG on shared memory is keyed by (object,
   * offset): another process's FUTEX_WAKE finds the waiter.  With the flag,
   * it is keyed in the waiter's own process: the other's wake finds none. */
  shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED)
    sysbail("mmap");
  for (st = 0; st < 2; st++) {
    int op = st ? FUTEX_PRIVATE_FLAG : 0, woken = 0, status;
    shared[0] = 0;
    shared[1] = 0;
    fflush(stdout);
    pft_settle_threads();
    if ((pid = fork()) < 0)
      sysbail("fork");
    if (pid == 0) {
      struct timespec to = { 3, 0 };
      pf_shim_openbsd_set_spurious(0);
      shared[1] = 1;
      r = futex(&shared[0], FUTEX_WAIT | op, 0, &to, NULL);
      _exit(r == 0 ? 0 : errno == ETIMEDOUT ? 2 : 3);
    }
    while (!shared[1])
      sched_yield();
    while (pft_task_state(pid, 0) != 'S' && pft_task_state(pid, 0) != -1)
      usleep(1000);
    for (r = 0; r < 50 && !woken; r++) {
      woken = futex(&shared[0], FUTEX_WAKE | op, 1, NULL, NULL);
      if (!woken && !st)
        usleep(10000);
      if (st)
        break;
    }
    waitpid(pid, &status, 0);
    if (!st) {
      is_int(1, woken, "shared: another process's FUTEX_WAKE wakes the waiter");
      is_int(0, WEXITSTATUS(status), "shared: the waiter returned 0");
    } else {
      is_int(0, woken, "private: another process's FUTEX_WAKE finds no waiter");
      is_int(2, WEXITSTATUS(status), "private: the waiter timed out");
    }
  }
  /* a shared waiter is not woken by a private wake of the same word */
  memset(&w, 0, sizeof w);
  w.word = &word;
  w.op = FUTEX_WAIT;
  waiter_start(&w);
  is_int(0, futex(&word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL), "a private wake misses a shared waiter");
  is_int(1, futex(&word, FUTEX_WAKE, 1, NULL, NULL), "a shared wake finds it");
  pthread_join(w.th, NULL);
  ok(w.ret == 0, "and it returned 0");
  return 0;
}
