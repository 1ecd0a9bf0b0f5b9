/* exhaustion: running out of parking resources is -1/ENOMEM, never EAGAIN
 * (which a futex caller reads as "the word changed") and never a hang.
 *
 * (a) The system's limit.  In a forked child, in a private IPC namespace
 *     (unshare(CLONE_NEWIPC): root only, else skipped), the SysV limits are
 *     lowered BEFORE the library's first use (/proc/sys/kernel/sem: SEMMNI 0,
 *     so no set can be made at all), then:
 *       a 50 ms timed wait on a matching word: emu:sysv -1/ENOMEM,
 *         elsewhere -1/ETIMEDOUT;
 *       a wake with nobody waiting: 0;
 *       an untimed wait with a waker thread ready: emu:sysv -1/ENOMEM at once
 *         (the waker then finds nobody: 0), elsewhere woken (0, wake 1);
 *     then SEMMNI 1 with a foreign set (semget by the test) filling it: the
 *     timed wait fails the same way, and the foreign set is left alone; then
 *     the limits are raised back: a timed wait times out and a real
 *     wait/wake works on every backend.
 * (b) The library's own limit (white-box: pf_sysv_max_sets, the number of
 *     sets the sysv port may make, 32 parkers each, lowered to 1 before the
 *     first use): 40 threads each wait on a word of their own.  Under
 *     emu:sysv at most 32 park, every other one fails at once with
 *     -1/ENOMEM; elsewhere all 40 park.  Each parked thread is woken by a
 *     wake of its word that counts exactly 1; a failed wait left nothing
 *     queued (its word's wake counts 0).  Once half of the parked threads
 *     exited, as many new threads park on the parkers they freed, and under
 *     emu:sysv one more fails with ENOMEM again (the pool is full again).
 *     Skipped in a build whose library has no such variable. */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork(), /proc and SysV semaphore limits");
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
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pft.h"
#include "pfutex/linux.h"
#ifndef __linux__
/* No IPC namespaces (a macOS build): the checks that need one skip. */
# define CLONE_NEWIPC 0
static int
unshare(int flags)
{
  (void)flags;
  errno = ENOSYS;
  return -1;
}
#endif

/* The sysv port's cap on its sets (white-box; absent without the port). */
extern int pf_sysv_max_sets __attribute__((weak));

/* ======== (a) the system's limit, in a child ============================== */
struct ex_rec {
  int id;
  int ret;
  int err;
};

enum {
  EX_SKIP,            /* the case cannot run: err = errno, ret = which step */
  EX_IS_SYSV,         /* ret: 1 when the backend is emu:sysv, 0 otherwise, -1 none */
  EX_TIMED_NONE,      /* SEMMNI 0: 50 ms timed wait */
  EX_WAKE_IDLE,       /* wake, nobody waiting */
  EX_UNTIMED,         /* untimed wait with a waker ready */
  EX_UNTIMED_WAKE,    /* the waker's wake */
  EX_FOREIGN_MADE,    /* semget of the foreign set under SEMMNI 1 */
  EX_TIMED_FULL,      /* SEMMNI 1, filled: 50 ms timed wait */
  EX_FOREIGN_KEPT,    /* semctl IPC_STAT of the foreign set afterwards */
  EX_RAISED,          /* writing the original limits back */
  EX_TIMED_RAISED,    /* 50 ms timed wait after raising */
  EX_REAL_WAKE,       /* a real wait/wake: the wake */
  EX_REAL_WAIT,       /* ... the woken wait */
  EX_NIDS
};

static int ex_fd = -1;

static void
ex_report(int id, long ret, int err)
{
  struct ex_rec r;
  r.id = id;
  r.ret = (int)ret;
  r.err = err;
  if (write(ex_fd, &r, sizeof r) != (ssize_t)sizeof r)
    _exit(99);
}

static int
ex_write_file(const char *path, const char *text)
{
  int fd = open(path, O_WRONLY);
  ssize_t n, len = (ssize_t)strlen(text);
  if (fd < 0)
    return -1;
  n = write(fd, text, (size_t)len);
  if (close(fd) != 0 || n != len)
    return -1;
  return 0;
}

static uint32_t ex_word;

static long
ex_timed_wait(int *err)
{
  struct timespec t50 = { 0, 50 * 1000 * 1000 };
  long r;
  ex_word = 0;
  errno = 0;
  r = pfutex(&ex_word, FUTEX_WAIT_PRIVATE, 0, &t50, NULL, 0);
  *err = errno;
  return r;
}

#ifndef PFT_TSAN
static uint32_t ex_real_word;
static pid_t ex_main_tid;
static volatile int ex_main_waiting;
static volatile long ex_waker_ret;
static volatile int ex_waker_err;

static void *
ex_waker(void *arg)
{
  (void)arg;
  while (!__atomic_load_n(&ex_main_waiting, __ATOMIC_SEQ_CST))
    sched_yield();
  /* Asleep in the wait - or, if it failed at once, in pthread_join. */
  pft_wait_asleep(ex_main_tid);
  __atomic_store_n(&ex_real_word, 1, __ATOMIC_SEQ_CST);
  errno = 0;
  ex_waker_ret = pfutex(&ex_real_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  ex_waker_err = errno;
  return NULL;
}

/* An untimed wait with a waker thread ready; reports wait_id and wake_id. */
static void
ex_untimed_with_waker(int wait_id, int wake_id)
{
  pthread_t t;
  long r;
  ex_real_word = 0;
  ex_main_waiting = 0;
  ex_main_tid = pft_gettid();
  if (pthread_create(&t, NULL, ex_waker, NULL) != 0)
    _exit(98);
  __atomic_store_n(&ex_main_waiting, 1, __ATOMIC_SEQ_CST);
  errno = 0;
  r = pfutex(&ex_real_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
  ex_report(wait_id, r, errno);
  pthread_join(t, NULL);
  ex_report(wake_id, ex_waker_ret, ex_waker_err);
}
#endif

static void
ex_child_system_limit(void)
{
  static const char *sem = "/proc/sys/kernel/sem";
  char orig[256];
  const char *b;
  long r;
  int err, foreign;

  alarm(10);
  if (unshare(CLONE_NEWIPC) != 0) {
    ex_report(EX_SKIP, 1, errno);
    _exit(0);
  }
  if (pft_read_file(sem, orig, sizeof orig) < 0) {
    ex_report(EX_SKIP, 2, errno);
    _exit(0);
  }
  /* SEMMSL SEMMNS SEMOPM SEMMNI: no set can be made at all. */
  if (ex_write_file(sem, "250 32000 32 0") != 0) {
    ex_report(EX_SKIP, 3, errno);
    _exit(0);
  }

  /* The library's first use. */
  b = pfutex_backend();
  if (b)
    ex_report(EX_IS_SYSV, strcmp(b, "emu:sysv") == 0, 0);
  else    /* no backend: did the port refuse to start without sets? */
    ex_report(EX_IS_SYSV, -1, errno);

  r = ex_timed_wait(&err);
  ex_report(EX_TIMED_NONE, r, err);
  errno = 0;
  r = pfutex(&ex_word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  ex_report(EX_WAKE_IDLE, r, errno);
#ifndef PFT_TSAN
  ex_untimed_with_waker(EX_UNTIMED, EX_UNTIMED_WAKE);
#endif

  /* SEMMNI 1, taken by a set that is not the library's. */
  foreign = -1;
  if (ex_write_file(sem, "250 32000 32 1") == 0)
    foreign = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
  ex_report(EX_FOREIGN_MADE, foreign >= 0 ? 0 : -1, errno);
  r = ex_timed_wait(&err);
  ex_report(EX_TIMED_FULL, r, err);
  if (foreign >= 0) {
    struct semid_ds ds;
    errno = 0;
    ex_report(EX_FOREIGN_KEPT, semctl(foreign, 0, IPC_STAT, &ds), errno);
  }

  /* The limits back. */
  errno = 0;
  ex_report(EX_RAISED, ex_write_file(sem, orig), errno);
  r = ex_timed_wait(&err);
  ex_report(EX_TIMED_RAISED, r, err);
#ifndef PFT_TSAN
  ex_untimed_with_waker(EX_REAL_WAIT, EX_REAL_WAKE);
#endif
  if (foreign >= 0)
    semctl(foreign, 0, IPC_RMID);
  exit(0);
}

struct ex_result {
  struct ex_rec by_id[EX_NIDS];
  int seen[EX_NIDS];
  int status;
};

static void
ex_run_child(struct ex_result *res)
{
  int fds[2];
  pid_t pid;

  memset(res, 0, sizeof *res);
  if (pipe(fds) != 0)
    sysbail("pipe");
  fflush(stdout);
  pid = fork();
  if (pid < 0)
    sysbail("fork");
  if (pid == 0) {
    close(fds[0]);
    ex_fd = fds[1];
    ex_child_system_limit();
  }
  close(fds[1]);
  for (;;) {
    struct ex_rec r;
    ssize_t n = read(fds[0], &r, sizeof r);
    if (n < 0 && errno == EINTR)
      continue;
    if (n != (ssize_t)sizeof r)
      break;
    if (r.id >= 0 && r.id < EX_NIDS) {
      res->by_id[r.id] = r;
      res->seen[r.id] = 1;
    }
  }
  close(fds[0]);
  while (waitpid(pid, &res->status, 0) < 0)
    if (errno != EINTR)
      sysbail("waitpid");
}

static void
ex_expect(const struct ex_result *res, int id, long want_ret, int want_err, const char *what)
{
  if (!res->seen[id]) {
    ok(0, "%s", what);
    diag("    not reported (the child died first?)");
    return;
  }
  pft_is_ret(res->by_id[id].ret, res->by_id[id].err, want_ret, want_err, what);
}

#define EX_A_TESTS 12

static void
ex_case_system_limit(void)
{
  struct ex_result res;
  int sysv, i, st;

  ex_run_child(&res);
  if (res.seen[EX_SKIP]) {
    static const char *const why[] = { "", "unshare(CLONE_NEWIPC)", "reading /proc/sys/kernel/sem",
                                       "writing /proc/sys/kernel/sem" };
    int step = res.by_id[EX_SKIP].ret;
    for (i = 0; i < EX_A_TESTS; i++)
      skip("system limit: %s failed: %s (needs root)", why[step >= 1 && step <= 3 ? step : 0],
           strerror(res.by_id[EX_SKIP].err));
    return;
  }
  sysv = res.seen[EX_IS_SYSV] && res.by_id[EX_IS_SYSV].ret == 1;
  if (res.seen[EX_IS_SYSV] && res.by_id[EX_IS_SYSV].ret == -1) {
    /* No backend once the limits were lowered: judge by the one asked for. */
    const char *want = getenv("PFUTEX_BACKEND");
    sysv = want && strcmp(want, "emu:sysv") == 0;
    diag("SEMMNI 0: pfutex_backend() returned NULL (the library did not start)");
  }

  if (sysv)
    ex_expect(&res, EX_TIMED_NONE, -1, ENOMEM, "SEMMNI 0, emu:sysv: a timed wait that must park");
  else
    ex_expect(&res, EX_TIMED_NONE, -1, ETIMEDOUT, "SEMMNI 0: a timed wait times out");
  ex_expect(&res, EX_WAKE_IDLE, 0, 0, "SEMMNI 0: a wake with nobody waiting");
#ifndef PFT_TSAN
  if (sysv) {
    ex_expect(&res, EX_UNTIMED, -1, ENOMEM, "SEMMNI 0, emu:sysv: an untimed wait fails at once");
    ex_expect(&res, EX_UNTIMED_WAKE, 0, 0, "... and the waker finds nobody queued");
  } else {
    ex_expect(&res, EX_UNTIMED, 0, 0, "SEMMNI 0: an untimed wait is woken");
    ex_expect(&res, EX_UNTIMED_WAKE, 1, 0, "... by the waker's wake");
  }
#else
  skip("thread after fork: not under ThreadSanitizer");
  skip("thread after fork: not under ThreadSanitizer");
#endif
  ex_expect(&res, EX_FOREIGN_MADE, 0, 0, "SEMMNI 1: the test's own set fills the namespace");
  if (sysv)
    ex_expect(&res, EX_TIMED_FULL, -1, ENOMEM, "SEMMNI 1 taken, emu:sysv: a timed wait");
  else
    ex_expect(&res, EX_TIMED_FULL, -1, ETIMEDOUT, "SEMMNI 1 taken: a timed wait times out");
  ex_expect(&res, EX_FOREIGN_KEPT, 0, 0, "the foreign set was left alone");
  ex_expect(&res, EX_RAISED, 0, 0, "the limits raised back");
  ex_expect(&res, EX_TIMED_RAISED, -1, ETIMEDOUT, "limits raised: a timed wait times out");
#ifndef PFT_TSAN
  ex_expect(&res, EX_REAL_WAKE, 1, 0, "limits raised: a wake wakes the waiter");
  ex_expect(&res, EX_REAL_WAIT, 0, 0, "limits raised: the woken wait returns 0");
#else
  skip("thread after fork: not under ThreadSanitizer");
  skip("thread after fork: not under ThreadSanitizer");
#endif
  st = res.status;
  if (!ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "system limit: the child exited with status 0")) {
    if (WIFSIGNALED(st))
      diag("    killed by signal %d%s", WTERMSIG(st), WTERMSIG(st) == SIGALRM ? " (a hang)" : "");
    else
      diag("    exit status %d", WEXITSTATUS(st));
  }
}

/* ======== (b) the library's own limit ===================================== */
#define EX_NTHREADS 40
#define EX_SET_SIZE 32
#define EX_B_TESTS 7

static uint32_t ex_words[2 * EX_NTHREADS + 1];
static struct pft_waiter ex_w[2 * EX_NTHREADS + 1];

static void
ex_start(int i)
{
  memset(&ex_w[i], 0, sizeof ex_w[i]);
  ex_words[i] = 0;
  ex_w[i].uaddr = &ex_words[i];
  ex_w[i].val = 0;
  ex_w[i].op_flags = FUTEX_PRIVATE_FLAG;
  pft_waiter_start(&ex_w[i]);         /* returns once it sleeps or returned */
}

static int
ex_parked(int i)
{
  return !__atomic_load_n(&ex_w[i].done, __ATOMIC_SEQ_CST);
}

/* Wake thread i's word (the wake must count exactly 1) and join it (its
 * wait must return 0). */
static void
ex_wake_join(int i, int *bad_count, int *bad_ret)
{
  long r;
  __atomic_store_n(&ex_words[i], 1, __ATOMIC_SEQ_CST);
  r = pfutex(&ex_words[i], FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
  if (r != 1 && (*bad_count)++ == 0)
    diag("    the wake of thread %d's word counted %ld", i, r);
  pft_waiter_join(&ex_w[i]);
  if (ex_w[i].ret != 0 && (*bad_ret)++ == 0)
    diag("    thread %d's wait returned %ld, errno %d", i, ex_w[i].ret, ex_w[i].err);
}

static void
ex_case_library_limit(int sysv)
{
  int live[2 * EX_NTHREADS + 1], failed[EX_NTHREADS], nlive = 0, np, nfail = 0, other = 0;
  int i, k, extra;
  int bad_count = 0, bad_ret = 0, queued = 0, reuse_fail = 0;

  for (i = 0; i < EX_NTHREADS; i++) {
    ex_start(i);
    failed[i] = !ex_parked(i);
    if (!failed[i]) {
      live[nlive++] = i;
    } else {
      pft_waiter_join(&ex_w[i]);
      nfail++;
      if (!(ex_w[i].ret == -1 && ex_w[i].err == ENOMEM) && other++ == 0)
        diag("    thread %d: %ld, errno %d (%s)", i, ex_w[i].ret, ex_w[i].err,
             strerror(ex_w[i].err));
    }
  }
  np = nlive;
  diag("pf_sysv_max_sets = 1: %d of %d threads parked, %d failed", np, EX_NTHREADS, nfail);

  ok(other == 0, "every wait that did not park failed at once with -1/ENOMEM (%d of %d did not)",
     other, nfail);
  if (sysv)
    ok(np >= 1 && np <= EX_SET_SIZE, "emu:sysv: between 1 and %d threads parked on one set (%d)",
       EX_SET_SIZE, np);
  else
    is_int(EX_NTHREADS, np, "every thread parked");

  /* A failed wait leaves nothing queued. */
  for (i = 0; i < EX_NTHREADS; i++)
    if (failed[i] && pfutex(&ex_words[i], FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0) != 0)
      queued++;
  is_int(0, queued, "the failed waits left no waiter behind (their wakes count 0)");

  /* The first half of the parked threads are woken and exit... */
  k = np / 2 > 0 ? np / 2 : np;
  for (i = 0; i < k; i++)
    ex_wake_join(live[i], &bad_count, &bad_ret);
  /* ... and as many new threads park on the parkers they freed. */
  for (i = 0; i < k; i++) {
    int j = EX_NTHREADS + i;
    ex_start(j);
    if (ex_parked(j)) {
      live[i] = j;
    } else {
      live[i] = -1;
      pft_waiter_join(&ex_w[j]);
      if (reuse_fail++ == 0)
        diag("    new thread %d: %ld, errno %d (%s)", i, ex_w[j].ret, ex_w[j].err,
             strerror(ex_w[j].err));
    }
  }
  ok(k > 0 && reuse_fail == 0, "%d of %d new threads parked after %d parked threads exited",
     k - reuse_fail, k, k);

  /* One more: the pool is as full as before under emu:sysv. */
  extra = 2 * EX_NTHREADS;
  ex_start(extra);
  if (ex_parked(extra))
    live[nlive++] = extra;
  else
    pft_waiter_join(&ex_w[extra]);
  if (sysv && np < EX_NTHREADS) {
    if (ex_parked(extra)) {
      ok(0, "emu:sysv: one more thread than the pool holds fails again: -1/ENOMEM");
      diag("    it parked");
    } else {
      pft_is_ret(ex_w[extra].ret, ex_w[extra].err, -1, ENOMEM,
                 "emu:sysv: one more thread than the pool holds fails again");
    }
  } else {
    if (!ok(ex_parked(extra), "one more thread parks"))
      diag("    it returned %ld, errno %d", ex_w[extra].ret, ex_w[extra].err);
  }

  /* Everyone still parked: woken one by one. */
  for (i = 0; i < nlive; i++)
    if (live[i] >= 0)
      ex_wake_join(live[i], &bad_count, &bad_ret);
  is_int(0, bad_count, "each wake of a parked thread's word counted exactly 1");
  is_int(0, bad_ret, "every woken wait returned 0");
}


int
main(void)
{
  const char *b;
  int sysv;

  plan(EX_A_TESTS + EX_B_TESTS);
  pft_watchdog(60);

  /* (a) first: its child must start the library itself, so the parent has
   * not used it yet. */
  pft_settle_threads();
  ex_case_system_limit();

  /* (b): lowered before the parent's first use. */
  if (&pf_sysv_max_sets == NULL) {
    int i;
    for (i = 0; i < EX_B_TESTS; i++)
      skip("library limit: this build has no pf_sysv_max_sets (no sysv port, or an older library)");
    return 0;
  }
  pf_sysv_max_sets = 1;
  b = pfutex_backend();
  sysv = b && strcmp(b, "emu:sysv") == 0;
  diag("backend %s", b ? b : "(none)");
  ex_case_library_limit(sysv);
  return 0;
}
#endif /* !_WIN32 */
