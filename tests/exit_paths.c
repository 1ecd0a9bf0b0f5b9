/* exit_paths: pfutex keeps working while the process exits.
 *
 * Linux futexes are kernel objects: an atexit handler, a late destructor or
 * another thread still running during exit() can wait and wake as always
 * (a timed wait times out with ETIMEDOUT, a woken one returns 0), and a
 * thread asleep in a wait simply dies with the process.  An emulation that
 * tears its parking resources down at exit (the sysv port removing its
 * semaphore sets from an atexit handler) must not turn those into
 * EIDRM/EINVAL.
 *
 * Each case runs in a forked child (the parent has not used the library, so
 * "before the library's first use" holds in the child); the child reports
 * every result through a pipe and the parent prints TAP:
 *   A  an atexit handler registered BEFORE the library's first use (so it
 *      runs after any atexit handler the library registers): timed waits
 *      (FUTEX_WAIT, pfutex_wait) time out, an idle wake returns 0, and a
 *      real wait is woken by another thread (1 woken, the wait returns 0);
 *   B  the same from an atexit handler registered AFTER the first use;
 *   E  the same from a late destructor (priority 101: it runs after every
 *      atexit handler and every default-priority destructor, the library's
 *      included);
 *   C  a thread asleep in an untimed wait while main calls exit(): it never
 *      returns (nobody wakes it) - at the very end of exit it is still asleep;
 *   D  a thread looping 5 ms timed waits across exit(): every one of them
 *      ends in ETIMEDOUT, including those after the library's exit handlers.
 * And every child exits with status 0. */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork() (each exit path runs in a child)");
  return 0;
}
#else
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1
#endif
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pft.h"
#include "pfutex/linux.h"

/* ---- Child -> parent reports --------------------------------------------- */
struct ep_rec {
  int id;
  int ret;
  int err;
};

/* Report ids: case base + step. */
enum {
  EP_FIRST_USE = 0,      /* first use failed: ret = step, err = errno */
  EP_TIMED_MUX = 1,      /* FUTEX_WAIT_PRIVATE 20 ms: -1/ETIMEDOUT */
  EP_TIMED_CLEAN = 2,    /* pfutex_wait, deadline now+20 ms: -1/ETIMEDOUT */
  EP_WAKE_IDLE = 3,      /* wake with nobody waiting: 0 */
  EP_REAL_WAIT = 4,      /* untimed wait woken by another thread: 0 */
  EP_REAL_WAKE = 5,      /* that thread's wake: 1 */
  EP_C_RETURNED = 6,     /* case C: the sleeper returned (it must not) */
  EP_C_END = 7,          /* case C: 0 if still asleep at the end of exit */
  EP_D_ERROR = 8,        /* case D: a timed wait ended other than ETIMEDOUT */
  EP_D_ITERS = 9,        /* case D: waits completed during the late destructor */
  EP_NSTEPS = 10
};
enum { EP_CASE_A = 1, EP_CASE_B, EP_CASE_E, EP_CASE_C, EP_CASE_D, EP_NCASES };

static int ep_fd = -1;          /* the child's write end */
static int ep_case;             /* the child's case, 0 in the parent */

static void
ep_report(int id, long ret, int err)
{
  struct ep_rec r;
  r.id = ep_case * EP_NSTEPS + id;
  r.ret = (int)ret;
  r.err = err;
  if (write(ep_fd, &r, sizeof r) != (ssize_t)sizeof r)
    _exit(99);
}

/* ---- The waits exercised by A, B and E ----------------------------------- */
static uint32_t ep_timed_word;
static uint32_t ep_real_word;
static pid_t ep_waiter_tid;
static volatile int ep_waiting;

static void *
ep_waker(void *arg)
{
  long r;
  (void)arg;
  while (!__atomic_load_n(&ep_waiting, __ATOMIC_SEQ_CST))
    sched_yield();
  /* The waiter is asleep in its wait (or, if the wait failed at once, in
   * pthread_join: then this wake finds nobody, which the parent reports). */
  pft_wait_asleep(ep_waiter_tid);
  __atomic_store_n(&ep_real_word, 1, __ATOMIC_SEQ_CST);
  errno = 0;
  r = pfutex(&ep_real_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  ep_report(EP_REAL_WAKE, r, errno);
  return NULL;
}

static void
ep_exercise(void)
{
  struct timespec rel = { 0, 20 * 1000 * 1000 }, dl;
  pthread_t t;
  long r;

  errno = 0;
  r = pfutex(&ep_timed_word, FUTEX_WAIT_PRIVATE, 0, &rel, NULL, 0);
  ep_report(EP_TIMED_MUX, r, errno);

  clock_gettime(CLOCK_MONOTONIC, &dl);
  pft_timespec_add_ns(&dl, 20 * 1000 * 1000);
  errno = 0;
  r = pfutex_wait(&ep_timed_word, 0, PFUTEX_BITSET_MATCH_ANY, PFUTEX_PRIVATE, &dl,
                  PFUTEX_CLOCK_MONOTONIC);
  ep_report(EP_TIMED_CLEAN, r, errno);

  errno = 0;
  r = pfutex(&ep_timed_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  ep_report(EP_WAKE_IDLE, r, errno);

  ep_real_word = 0;
  ep_waiter_tid = pft_gettid();
  if (pthread_create(&t, NULL, ep_waker, NULL) != 0) {
    ep_report(EP_REAL_WAIT, -2, errno);
    return;
  }
  __atomic_store_n(&ep_waiting, 1, __ATOMIC_SEQ_CST);
  errno = 0;
  r = pfutex(&ep_real_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
  ep_report(EP_REAL_WAIT, r, errno);
  pthread_join(t, NULL);
}

static void
ep_atexit_exercise(void)
{
  ep_exercise();
}

/* ---- The first use: a parked timed wait and a real wait/wake ------------- */
static uint32_t ep_first_word;

static void
ep_first_use(void)
{
  struct timespec ms = { 0, 1000 * 1000 };
  struct pft_waiter w;
  long r;

  errno = 0;
  r = pfutex(&ep_first_word, FUTEX_WAIT_PRIVATE, 0, &ms, NULL, 0);
  if (r != -1 || errno != ETIMEDOUT)
    ep_report(EP_FIRST_USE, 1, r == -1 ? errno : 0);
  memset(&w, 0, sizeof w);
  w.uaddr = &ep_first_word;
  w.val = 0;
  w.op_flags = FUTEX_PRIVATE_FLAG;
  pft_waiter_start(&w);
  __atomic_store_n(&ep_first_word, 1, __ATOMIC_SEQ_CST);
  errno = 0;
  r = pfutex(&ep_first_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  if (r != 1)
    ep_report(EP_FIRST_USE, 2, r == -1 ? errno : (int)r);
  pft_waiter_join(&w);
  if (w.ret != 0)
    ep_report(EP_FIRST_USE, 3, w.err);
}

/* ---- Case C: a thread asleep in an untimed wait during exit -------------- */
static uint32_t ep_c_word;
static pid_t ep_c_tid;
static volatile int ep_c_started;

static void *
ep_c_sleeper(void *arg)
{
  long r;
  (void)arg;
  ep_c_tid = pft_gettid();
  __atomic_store_n(&ep_c_started, 1, __ATOMIC_SEQ_CST);
  errno = 0;
  r = pfutex(&ep_c_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
  /* Nobody wakes this word: any return is wrong (-1/EIDRM, EINVAL, ...). */
  ep_report(EP_C_RETURNED, r, errno);
  return NULL;
}

/* ---- Case D: a thread looping timed waits during exit -------------------- */
static uint32_t ep_d_word;
static volatile unsigned long ep_d_iters;

static void *
ep_d_looper(void *arg)
{
  struct timespec five = { 0, 5 * 1000 * 1000 };
  int reported = 0;
  (void)arg;
  for (;;) {
    long r;
    errno = 0;
    r = pfutex(&ep_d_word, FUTEX_WAIT_PRIVATE, 0, &five, NULL, 0);
    if (!(r == -1 && errno == ETIMEDOUT) && !reported) {
      ep_report(EP_D_ERROR, r, errno);
      reported = 1;
    }
    __atomic_add_fetch(&ep_d_iters, 1, __ATOMIC_SEQ_CST);
  }
  return NULL;
}

/* ---- The very last code of the process ----------------------------------- */
static void
ep_late(void)
{
  if (ep_case == EP_CASE_E) {
    ep_exercise();
  } else if (ep_case == EP_CASE_C) {
    /* Every atexit handler and the library's destructors have run. */
    ep_report(EP_C_END, pft_wait_asleep(ep_c_tid), 0);
  } else if (ep_case == EP_CASE_D) {
    unsigned long n0 = __atomic_load_n(&ep_d_iters, __ATOMIC_SEQ_CST);
    while (__atomic_load_n(&ep_d_iters, __ATOMIC_SEQ_CST) < n0 + 3)
      sched_yield();
    ep_report(EP_D_ITERS, (long)(__atomic_load_n(&ep_d_iters, __ATOMIC_SEQ_CST) - n0), 0);
  }
}

#if defined(__GNUC__)
# define EP_HAVE_LATE_DESTRUCTOR 1
/* Priority 101, the first user priority: destructors run in the reverse
 * order, so this one runs after the default-priority ones. */
static void ep_late_destructor(void) __attribute__((destructor(101)));
static void
ep_late_destructor(void)
{
  ep_late();
}
#endif

static void
ep_atexit_late(void)
{
#ifndef EP_HAVE_LATE_DESTRUCTOR
  ep_late();
#endif
}

/* LeakSanitizer's check at exit stops every thread with ptrace: it would
 * interfere with the threads whose behaviour during exit is examined here
 * (a SysV semtimedop returns EINTR after such a stop), so the children turn
 * it off.  The hook is LSan's documented one; elsewhere nobody calls it. */
int __lsan_is_turned_off(void);
int
__lsan_is_turned_off(void)
{
  return ep_case != 0;
}

/* ---- The child ------------------------------------------------------------ */
static void
ep_child(int c)
{
  pthread_t t;
  alarm(10);                  /* a hang kills the child: the parent reports SIGALRM */
  ep_case = c;
  /* Registered first: runs last among the atexit handlers (only used when
   * there is no late destructor). */
  atexit(ep_atexit_late);
  switch (c) {
  case EP_CASE_A:
    atexit(ep_atexit_exercise);        /* before the library's first use */
    ep_first_use();
    break;
  case EP_CASE_B:
    ep_first_use();
    atexit(ep_atexit_exercise);        /* after it */
    break;
  case EP_CASE_E:
    ep_first_use();
    break;
  case EP_CASE_C:
    ep_first_use();
    if (pthread_create(&t, NULL, ep_c_sleeper, NULL) != 0)
      _exit(98);
    while (!__atomic_load_n(&ep_c_started, __ATOMIC_SEQ_CST))
      sched_yield();
    pft_wait_asleep(ep_c_tid);
    break;
  case EP_CASE_D:
    ep_first_use();
    if (pthread_create(&t, NULL, ep_d_looper, NULL) != 0)
      _exit(98);
    while (__atomic_load_n(&ep_d_iters, __ATOMIC_SEQ_CST) < 2)
      sched_yield();
    break;
  }
  exit(0);
}

/* ---- The parent ------------------------------------------------------------ */
struct ep_result {
  struct ep_rec recs[64];
  int nrecs;
  int status;
};

static void
ep_run(int c, struct ep_result *res)
{
  int fds[2];
  pid_t pid;
  ssize_t n;

  memset(res, 0, sizeof *res);
  if (pipe(fds) != 0)
    sysbail("pipe");
  fflush(stdout);
  pid = fork();
  if (pid < 0)
    sysbail("fork");
  if (pid == 0) {
    close(fds[0]);
    ep_fd = fds[1];
    ep_child(c);
  }
  close(fds[1]);
  for (;;) {
    struct ep_rec r;
    n = read(fds[0], &r, sizeof r);
    if (n < 0 && errno == EINTR)
      continue;
    if (n != (ssize_t)sizeof r)
      break;
    if (res->nrecs < (int)(sizeof res->recs / sizeof res->recs[0]))
      res->recs[res->nrecs++] = r;
  }
  close(fds[0]);
  while (waitpid(pid, &res->status, 0) < 0)
    if (errno != EINTR)
      sysbail("waitpid");
}

/* The last report of step id in case c, or NULL. */
static const struct ep_rec *
ep_find(const struct ep_result *res, int c, int id)
{
  const struct ep_rec *found = NULL;
  int i;
  for (i = 0; i < res->nrecs; i++)
    if (res->recs[i].id == c * EP_NSTEPS + id)
      found = &res->recs[i];
  return found;
}

static const char *const ep_names[EP_NCASES] = {
  NULL, "atexit before first use", "atexit after first use", "late destructor",
  "sleeper during exit", "timed-wait loop during exit"
};

static void
ep_check_ret(const struct ep_result *res, int c, int id, long want_ret, int want_err,
             const char *what)
{
  const struct ep_rec *r = ep_find(res, c, id);
  if (!r) {
    ok(0, "%s: %s", ep_names[c], what);
    diag("    not reported (the child died first?)");
    return;
  }
  pft_is_ret(r->ret, r->err, want_ret, want_err, what);
}

static void
ep_check_first_use(const struct ep_result *res, int c)
{
  const struct ep_rec *r = ep_find(res, c, EP_FIRST_USE);
  if (!ok(r == NULL, "%s: the waits before exit worked", ep_names[c]))
    diag("    step %d failed: %d (%s)", r->ret, r->err, strerror(r->err));
}

static void
ep_check_status(const struct ep_result *res, int c)
{
  int st = res->status;
  if (!ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: the child exited with status 0",
          ep_names[c])) {
    if (WIFSIGNALED(st))
      diag("    killed by signal %d%s", WTERMSIG(st),
           WTERMSIG(st) == SIGALRM ? " (a hang: its 10 s alarm)" : "");
    else
      diag("    exit status %d", WEXITSTATUS(st));
  }
}

static void
ep_check_exercise(int c)
{
  struct ep_result res;
  char what[128];
  ep_run(c, &res);
  ep_check_first_use(&res, c);
  snprintf(what, sizeof what, "%s: FUTEX_WAIT 20 ms times out", ep_names[c]);
  ep_check_ret(&res, c, EP_TIMED_MUX, -1, ETIMEDOUT, what);
  snprintf(what, sizeof what, "%s: pfutex_wait with a 20 ms deadline times out", ep_names[c]);
  ep_check_ret(&res, c, EP_TIMED_CLEAN, -1, ETIMEDOUT, what);
  snprintf(what, sizeof what, "%s: a wake with nobody waiting", ep_names[c]);
  ep_check_ret(&res, c, EP_WAKE_IDLE, 0, 0, what);
  snprintf(what, sizeof what, "%s: the other thread's wake woke the waiter", ep_names[c]);
  ep_check_ret(&res, c, EP_REAL_WAKE, 1, 0, what);
  snprintf(what, sizeof what, "%s: the woken wait returned", ep_names[c]);
  ep_check_ret(&res, c, EP_REAL_WAIT, 0, 0, what);
  ep_check_status(&res, c);
}


int
main(void)
{
  struct ep_result res;
  const struct ep_rec *r;
  const char *b;

  PFT_SKIP_UNDER_TSAN();      /* the children create threads after a fork from
                                 a threaded process (the watchdog) */
  plan(3 * 7 + 4 + 4);
  pft_watchdog(60);

  /* The parent never touches the library before the forks. */
  pft_settle_threads();
  ep_check_exercise(EP_CASE_A);
  ep_check_exercise(EP_CASE_B);
#ifdef EP_HAVE_LATE_DESTRUCTOR
  ep_check_exercise(EP_CASE_E);
#else
  {
    int i;
    for (i = 0; i < 7; i++)
      skip("no destructor attribute");
  }
#endif

  ep_run(EP_CASE_C, &res);
  ep_check_first_use(&res, EP_CASE_C);
  r = ep_find(&res, EP_CASE_C, EP_C_RETURNED);
  if (!ok(r == NULL, "sleeper during exit: the untimed wait never returned"))
    diag("    it returned %d, errno %d (%s)", r->ret, r->err, strerror(r->err));
  r = ep_find(&res, EP_CASE_C, EP_C_END);
  if (!ok(r && r->ret == 0, "sleeper during exit: still asleep after every exit handler"))
    diag("    %s", r ? "it was gone" : "not reported");
  ep_check_status(&res, EP_CASE_C);

  ep_run(EP_CASE_D, &res);
  ep_check_first_use(&res, EP_CASE_D);
  r = ep_find(&res, EP_CASE_D, EP_D_ERROR);
  if (!ok(r == NULL, "timed-wait loop during exit: every wait timed out"))
    diag("    a wait returned %d, errno %d (%s)", r->ret, r->err, strerror(r->err));
  r = ep_find(&res, EP_CASE_D, EP_D_ITERS);
  if (!ok(r && r->ret >= 3, "timed-wait loop during exit: it kept waiting after the exit handlers"))
    diag("    %s", r ? "too few waits" : "not reported");
  ep_check_status(&res, EP_CASE_D);

  b = pfutex_backend();
  diag("backend %s", b ? b : "(none)");
  return 0;
}
#endif /* !_WIN32 */
