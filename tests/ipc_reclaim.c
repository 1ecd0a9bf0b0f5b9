/* ipc_reclaim: emu:sysv leaves no SysV semaphore sets behind, whatever way
 * its processes end.
 *
 * In a private IPC namespace (unshare(CLONE_NEWIPC): root only, else the
 * test skips), about 200 children each park once (a 1 ms timed wait on a
 * matching word: the sysv port needs a semaphore for it) and then end by one
 * of eight routes: exit(), _exit(), exec of a program that does not use
 * pfutex, exec of one that parks once and _exits, fork + a grandchild that
 * parks and _exits, fork + exec of that parking program, abort(), and
 * SIGKILL from the parent while the child sleeps in an untimed wait.  Sets
 * left by a dead process must be removed by the next process that starts the
 * port, so the namespace's count of sets (/proc/sysvipc/sem) stays bounded:
 * at most 4 at every sample after the first 8 children (a sample is taken
 * after each child is reaped and while each SIGKILL child sleeps), and at
 * most 2 once one more child ran to completion.  Under linux and emu:futex
 * nothing uses SysV IPC: the count is 0 throughout.  The parent itself makes
 * no pfutex call until every child is done.
 *
 * Modes used by the exec routes: PROG --noop (_exit at once) and
 * PROG --one-wait (park once, then _exit). */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork(), exec, /proc and SysV IPC");
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
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
# include <sys/prctl.h>
#endif

#include "pft.h"
#include "pfutex/linux.h"

#define RC_CHILDREN 200
#define RC_WARMUP 8             /* samples before this many children are not bounded */
#define RC_MAX_DURING 4
#define RC_MAX_END 2
#define RC_BUDGET_NS (3000LL * 1000 * 1000)

enum {
  RC_EXIT, RC_UEXIT, RC_EXEC_NOOP, RC_EXEC_WAIT, RC_FORK_UEXIT, RC_FORK_EXEC, RC_ABORT,
  RC_KILL, RC_NROUTES
};
static const char *const rc_route_names[RC_NROUTES] = {
  "exit", "_exit", "exec (no pfutex)", "exec (parks once)", "fork child _exit",
  "fork + exec", "abort", "SIGKILL"
};

/* Child exit codes. */
enum { RC_ST_BADWAIT = 3, RC_ST_EXEC = 4, RC_ST_GRANDCHILD = 5, RC_ST_WOKE = 6 };

static char rc_self[PATH_MAX];
static uint32_t rc_word;

/* Park once: a 1 ms timed wait on a matching word. */
static int
rc_park(void)
{
  struct timespec ms = { 0, 1000 * 1000 };
  long r;
  errno = 0;
  r = pfutex(&rc_word, FUTEX_WAIT_PRIVATE, 0, &ms, NULL, 0);
  return r == -1 && errno == ETIMEDOUT ? 0 : -1;
}

static int
rc_count_sets(void)
{
  FILE *f = fopen("/proc/sysvipc/sem", "r");
  int c, lines = 0, last = '\n';
  if (!f)
    return -1;
  while ((c = getc(f)) != EOF) {
    if (c == '\n')
      lines++;
    last = c;
  }
  if (last != '\n')
    lines++;
  fclose(f);
  return lines > 0 ? lines - 1 : 0;       /* minus the header */
}

static void
rc_exec_self(const char *mode)
{
  execl(rc_self, rc_self, mode, (char *)NULL);
  _exit(RC_ST_EXEC);
}

static void
rc_reap_or(pid_t pid, int fail_status)
{
  int st;
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR)
      _exit(fail_status);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    _exit(fail_status);
}

static void
rc_child(int route, int wfd)
{
  pid_t pid;
  alarm(10);
  if (rc_park() != 0)
    _exit(RC_ST_BADWAIT);
  switch (route) {
  case RC_EXIT:
    exit(0);
  case RC_UEXIT:
    _exit(0);
  case RC_EXEC_NOOP:
    rc_exec_self("--noop");
    break;
  case RC_EXEC_WAIT:
    rc_exec_self("--one-wait");
    break;
  case RC_FORK_UEXIT:
  case RC_FORK_EXEC:
    pid = fork();
    if (pid < 0)
      _exit(RC_ST_GRANDCHILD);
    if (pid == 0) {
      if (route == RC_FORK_EXEC)
        rc_exec_self("--one-wait");
      _exit(rc_park() == 0 ? 0 : RC_ST_BADWAIT);
    }
    rc_reap_or(pid, RC_ST_GRANDCHILD);
    exit(0);
  case RC_ABORT:
    {
      struct rlimit rl = { 0, 0 };
      setrlimit(RLIMIT_CORE, &rl);
#ifdef PR_SET_DUMPABLE
      prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);   /* no core even through a pipe */
#endif
      signal(SIGABRT, SIG_DFL);
      abort();
    }
  case RC_KILL:
    if (write(wfd, "w", 1) != 1)
      _exit(RC_ST_EXEC);
    pfutex(&rc_word, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    _exit(RC_ST_WOKE);
  }
  _exit(99);
}

/* Is process pid asleep (state S or D)? */
static int
rc_proc_asleep(pid_t pid)
{
  int st = pft_task_state(pid, 0);
  return st == 'S' || st == 'D';
}

struct rc_stats {
  int children;
  int bad_wait;          /* a child's park did not time out */
  int bad_end;           /* a child did not end the way its route ends */
  int first_bad_route, first_bad_status;
  int max_after_warmup;  /* the largest sample after RC_WARMUP children */
  int max_any;           /* over every sample */
  int max_during;        /* over the samples taken while a SIGKILL child slept */
  int sum;
  int samples;
  int sample_fail;
};

static void
rc_sample(struct rc_stats *s, int n, int during)
{
  int c = rc_count_sets();
  if (c < 0) {
    s->sample_fail++;
    return;
  }
  s->samples++;
  s->sum += c;
  if (c > s->max_any)
    s->max_any = c;
  if (during && c > s->max_during)
    s->max_during = c;
  if (n >= RC_WARMUP && c > s->max_after_warmup)
    s->max_after_warmup = c;
}

static void
rc_run(int route, struct rc_stats *s)
{
  int fds[2] = { -1, -1 }, st, ok_end;
  pid_t pid;

  if (route == RC_KILL && pipe(fds) != 0)
    sysbail("pipe");
  fflush(stdout);
  pid = fork();
  if (pid < 0)
    sysbail("fork");
  if (pid == 0) {
    if (fds[0] >= 0)
      close(fds[0]);
    rc_child(route, fds[1]);
  }
  if (route == RC_KILL) {
    char c;
    ssize_t n;
    int seen = 0, polls = 0;
    close(fds[1]);
    while ((n = read(fds[0], &c, 1)) < 0 && errno == EINTR)
      ;
    close(fds[0]);
    if (n == 1) {
      /* It is about to wait: two samples asleep in a row (bounded). */
      while (seen < 2 && polls++ < 20000) {
        seen = rc_proc_asleep(pid) ? seen + 1 : 0;
        if (seen < 2)
          usleep(100);
      }
      rc_sample(s, s->children, 1);
    }
    kill(pid, SIGKILL);
  }
  while (waitpid(pid, &st, 0) < 0)
    if (errno != EINTR)
      sysbail("waitpid");
  s->children++;

  if (route == RC_ABORT)
    ok_end = WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT;
  else if (route == RC_KILL)
    ok_end = WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
  else
    ok_end = WIFEXITED(st) && WEXITSTATUS(st) == 0;
  if (WIFEXITED(st) && WEXITSTATUS(st) == RC_ST_BADWAIT)
    s->bad_wait++;
  else if (!ok_end) {
    if (s->bad_end++ == 0) {
      s->first_bad_route = route;
      s->first_bad_status = st;
    }
  }
  rc_sample(s, s->children, 0);
}


int
main(int argc, char **argv)
{
  struct rc_stats s;
  struct timespec t0, t1;
  const char *b;
  int is_sysv, start, end, i;
  ssize_t n;

  if (argc > 1 && strcmp(argv[1], "--noop") == 0)
    _exit(0);
  if (argc > 1 && strcmp(argv[1], "--one-wait") == 0)
    _exit(rc_park() == 0 ? 0 : RC_ST_BADWAIT);

  /* Forks and execs from a threaded process are far too slow under TSan
   * (about 0.4 s a child), and the children run no concurrent code. */
  PFT_SKIP_UNDER_TSAN();

  /* First of all, before any pfutex call: a private IPC namespace. */
#ifdef CLONE_NEWIPC
  if (unshare(CLONE_NEWIPC) != 0)
    skip_all("unshare(CLONE_NEWIPC) failed: %s (needs root)", strerror(errno));
#else
  skip_all("no IPC namespaces on this system");
#endif
  if (rc_count_sets() < 0)
    skip_all("cannot read /proc/sysvipc/sem: %s", strerror(errno));
  n = readlink("/proc/self/exe", rc_self, sizeof rc_self - 1);
  if (n <= 0)
    skip_all("cannot read /proc/self/exe: %s", strerror(errno));
  rc_self[n] = 0;

  plan(6);
  pft_watchdog(60);

  memset(&s, 0, sizeof s);
  pft_settle_threads();
  start = rc_count_sets();
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (i = 0; i < RC_CHILDREN; i++) {
    rc_run(i % RC_NROUTES, &s);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (pft_elapsed_ns(&t0, &t1) > RC_BUDGET_NS && i >= 4 * RC_NROUTES)
      break;                    /* a slow machine: keep the run bounded */
  }
  diag("%d children in %lld ms", s.children, pft_elapsed_ns(&t0, &t1) / 1000000);
  /* One more child, to completion: it starts the port (reclaiming what the
   * last ones left) and exits normally. */
  rc_run(RC_EXIT, &s);
  end = rc_count_sets();

  b = pfutex_backend();         /* the parent's first pfutex call */
  is_sysv = b && strcmp(b, "emu:sysv") == 0;
  diag("backend %s: sets at start %d; max %d after %d children (%d while a child slept), "
       "mean %.1f over %d samples; at the end %d", b ? b : "(none)", start,
       s.max_after_warmup, RC_WARMUP, s.max_during,
       s.samples ? (double)s.sum / s.samples : 0.0, s.samples, end);

  is_int(0, start, "a new IPC namespace holds no semaphore set");
  if (!ok(s.bad_wait == 0 && s.sample_fail == 0, "every child's 1 ms wait timed out"))
    diag("    %d children's waits failed, %d samples unreadable", s.bad_wait, s.sample_fail);
  if (!ok(s.bad_end == 0, "every child ended by its route")) {
    int st = s.first_bad_status;
    diag("    %d did not; the first: route %s, %s %d", s.bad_end,
         rc_route_names[s.first_bad_route], WIFSIGNALED(st) ? "signal" : "exit status",
         WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
  }
  if (is_sysv)
    ok(s.max_during >= 1, "emu:sysv: a parked child's set is seen in the namespace");
  else
    is_int(0, s.max_any, "%s: no SysV set is ever made", b ? b : "no backend");
  if (!ok(s.max_after_warmup <= RC_MAX_DURING,
          "sets stay bounded across %d exits (at most %d at every sample)", s.children,
          RC_MAX_DURING))
    diag("    up to %d sets", s.max_after_warmup);
  if (!ok(end <= RC_MAX_END, "at most %d sets once one more child ran to completion",
          RC_MAX_END))
    diag("    %d sets left", end);
  return 0;
}
#endif /* !_WIN32 */
