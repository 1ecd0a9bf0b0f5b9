/* harden_proc: process-level resources of the emulation.
 *   1. exit: atexit handlers registered before the library's first use (so
 *      they run after anything it registered) still wait and wake, and a
 *      thread sleeping in a wait during exit() gets no error;
 *   2. SysV sets of processes that ended by any route (exit, _exit, exec,
 *      abort, SIGKILL) are reclaimed: in a private IPC namespace the count
 *      stays bounded over 150 such children;
 *   3. exhaustion is ENOMEM, never EAGAIN: the system's limit (lowered in a
 *      private IPC namespace) and the library's own (white-box).
 * Linux is the reference: there, and under emu:futex, nothing is
 * allocated and every wait works. */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork(), exec and /proc");
  return 0;
}
#else
#ifdef HAVE_CONFIG_H
# include "config.h"   /* _GNU_SOURCE: unshare, CLONE_NEWIPC */
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pft.h"
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

#define WAIT 0
#define WAKE 1
#define PRIV 128

/* emu:sysv's own limit on sets (white-box; absent without the port). */
extern int pf_sysv_max_sets __attribute__((weak));

static int
is_sysv(void)
{
  const char *b = pfutex_backend();
  return b && strcmp(b, "emu:sysv") == 0;
}

/* ---- 1: exit ------------------------------------------------------------ */
static int report_fd = -1;
static uint32_t ew;

static void
report(const char *s)
{
  if (write(report_fd, s, strlen(s)) < 0)
    _exit(3);
}

static void
late_atexit(void)
{
  struct timespec rel = { 0, 20000000 };
  long r = pfutex(&ew, WAIT | PRIV, 0, &rel, NULL, 0);
  report(r == -1 && errno == ETIMEDOUT ? "T" : "t");
  r = pfutex(&ew, WAKE | PRIV, 1, NULL, NULL, 0);
  report(r >= 0 ? "W" : "w");
}

static void *
sleeper(void *arg)
{
  long r;
  (void)arg;
  r = pfutex(&ew, WAIT | PRIV, 0, NULL, NULL, 0);
  if (r == -1 && errno != EINTR)
    report("E");   /* EIDRM, EINVAL: the old teardown */
  return NULL;
}

static void
case_exit(void)
{
  int fds[2], status;
  char buf[16] = "";
  ssize_t n;
  pid_t pid;
  if (pipe(fds) != 0)
    sysbail("pipe");
  pid = fork();
  if (pid == 0) {
    pthread_t t;
    struct timespec rel = { 0, 1000000 };
    close(fds[0]);
    report_fd = fds[1];
    atexit(late_atexit);                      /* before the library's first use in this child */
    pfutex(&ew, WAIT | PRIV, 0, &rel, NULL, 0);
    pthread_create(&t, NULL, sleeper, NULL);
    exit(0);
  }
  close(fds[1]);
  {
    size_t len = 0;
    while (len < sizeof buf - 1 && (n = read(fds[0], buf + len, sizeof buf - 1 - len)) > 0)
      len += (size_t)n;   /* to EOF: the child's last report comes at its exit */
    buf[len] = '\0';
  }
  close(fds[0]);
  waitpid(pid, &status, 0);
  ok(strchr(buf, 'T') != NULL, "atexit handler after the library's: a timed wait times out (reports '%s')", buf);
  ok(strchr(buf, 'W') != NULL && strchr(buf, 'E') == NULL, "and a wake works; no EIDRM/EINVAL anywhere");
  if (!ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child exited normally"))
    diag("status %#x: %s %d", status, WIFSIGNALED(status) ? "signal" : "exit",
         WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
}

/* ---- 2 and 3: SysV in a private IPC namespace --------------------------- */
static int
count_sets(void)
{
  char line[512];
  int n = -1;
  FILE *f = fopen("/proc/sysvipc/sem", "r");
  if (!f)
    return -1;
  while (fgets(line, sizeof line, f))
    n++;
  fclose(f);
  return n;
}

/* A child that parks once (so the port makes its set), then ends by route k. */
static void
child_route(int k, const char *self)
{
  static uint32_t w;
  struct timespec rel = { 0, 1000000 };
  struct rlimit no_core = { 0, 0 };
  setrlimit(RLIMIT_CORE, &no_core);
  pfutex(&w, WAIT | PRIV, 0, &rel, NULL, 0);
  switch (k) {
  case 0: exit(0);
  case 1: _exit(0);
  case 2: execl(self, self, "--park-and-exit", (char *)NULL); _exit(1);
  case 3: signal(SIGABRT, SIG_DFL); abort();
  default: pfutex(&w, WAIT | PRIV, 0, NULL, NULL, 0); _exit(1);   /* killed asleep */
  }
}

static void
case_reclaim(const char *self)
{
  int i, maxseen = 0, c, bad = 0;
  for (i = 0; i < 150; i++) {
    int k = i % 5, status;
    pid_t pid = fork();
    if (pid < 0)
      sysbail("fork");
    if (pid == 0)
      child_route(k, self);
    if (k == 4) {
      /* SIGKILL once it sleeps: poll its state */
      char path[64], st = 0;
      FILE *f;
      int tries;
      snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
      for (tries = 0; tries < 20000 && st != 'S'; tries++) {
        if ((f = fopen(path, "r")) != NULL) {
          if (fscanf(f, "%*d %*s %c", &st) != 1)
            st = 0;
          fclose(f);
        }
        if (st != 'S')
          sched_yield();
      }
      kill(pid, SIGKILL);
    }
    waitpid(pid, &status, 0);
    c = count_sets();
    if (i >= 10 && c > maxseen)
      maxseen = c;
  }
  /* one more child that runs to completion starts the port: it reclaims */
  {
    int status;
    pid_t pid = fork();
    if (pid == 0)
      child_route(1, self);
    waitpid(pid, &status, 0);
  }
  c = count_sets();
  diag("sets: at most %d while 150 children came and went, %d at the end", maxseen, c);
  bad = maxseen > 4 || c > 2;
  ok(!bad, "SysV sets stay bounded across exit, _exit, exec, abort and SIGKILL");
}

static int
write_sem_limits(const char *v)
{
  int fd = open("/proc/sys/kernel/sem", O_WRONLY);
  int ok_ = fd >= 0 && write(fd, v, strlen(v)) == (ssize_t)strlen(v);
  if (fd >= 0)
    close(fd);
  return ok_;
}

/* In a child (the limits stay there): exit code 77 skip, else a bit per
 * failed check. */
static int
system_limit_child(void)
{
  static uint32_t w;
  struct timespec rel = { 0, 30000000 };
  long r;
  int e, res = 0;
  if (!write_sem_limits("250 32000 32 0"))   /* SEMMNI 0: no set at all */
    return 77;
  errno = 0;
  r = pfutex(&w, WAIT | PRIV, 0, &rel, NULL, 0);
  e = errno;
  if (is_sysv() ? !(r == -1 && e == ENOMEM) : !(r == -1 && e == ETIMEDOUT))
    res |= 1;
  if (pfutex(&w, WAKE | PRIV, 1, NULL, NULL, 0) != 0)
    res |= 2;
  write_sem_limits("32000 1024000000 500 32000");
  errno = 0;
  r = pfutex(&w, WAIT | PRIV, 0, &rel, NULL, 0);
  if (!(r == -1 && errno == ETIMEDOUT))
    res |= 4;
  return res;
}

static void
case_system_limit(void)
{
  int status, res;
  pid_t pid = fork();
  if (pid == 0)
    _exit(system_limit_child());
  waitpid(pid, &status, 0);
  res = WIFEXITED(status) ? WEXITSTATUS(status) : 64;
  if (res == 77) {
    skip("cannot lower /proc/sys/kernel/sem");
    skip("cannot lower /proc/sys/kernel/sem");
    return;
  }
  ok(!(res & (1 | 64)), "system limit (SEMMNI 0): %s, never EAGAIN, and a wake still works",
     is_sysv() ? "-1/ENOMEM" : "no concern of this backend: ETIMEDOUT");
  ok(!(res & (2 | 4 | 64)), "limit raised: the next wait parks and times out (child result %d)", res);
}

struct lw { uint32_t w; volatile pid_t tid; long ret; int err; };

static void *
lib_waiter(void *arg)
{
  struct lw *l = arg;
  l->tid = pft_gettid();
  l->ret = pfutex(&l->w, WAIT | PRIV, 0, NULL, NULL, 0);
  l->err = errno;
  l->tid = -1;
  return NULL;
}

static void
case_library_limit(void)
{
  struct lw l[40];
  pthread_t t[40];
  int i, enomem = 0, asleep = 0, woken = 0, other = 0;
  if (!is_sysv() || &pf_sysv_max_sets == NULL) {
    skip("the library's own limit is emu:sysv's");
    return;
  }
  /* Set before this process's first park in emu:sysv: one set, 32 parkers
   * (the main thread has not parked: its waits above were in children). */
  pf_sysv_max_sets = 1;
  memset(l, 0, sizeof l);
  for (i = 0; i < 40; i++) {
    pthread_create(&t[i], NULL, lib_waiter, &l[i]);
    while (l[i].tid == 0)
      sched_yield();
    if (l[i].tid > 0 && pft_wait_asleep(l[i].tid) == 0 && l[i].tid > 0)
      asleep++;
  }
  for (i = 0; i < 40; i++) {
    if (l[i].tid > 0)
      woken += pfutex(&l[i].w, WAKE | PRIV, 1, NULL, NULL, 0);
    pthread_join(t[i], NULL);
    if (l[i].ret == -1 && l[i].err == ENOMEM)
      enomem++;
    else if (l[i].ret != 0)
      other++;
  }
  diag("asleep %d, woken %d, ENOMEM %d, other %d", asleep, woken, enomem, other);
  ok(enomem == 8 && woken == 32 && other == 0,
     "library limit (1 set of 32): 32 park and are woken, 8 get ENOMEM, none EAGAIN");
  pf_sysv_max_sets = 512;
}

int
main(int argc, char **argv)
{
  static uint32_t w;
  if (argc > 1 && strcmp(argv[1], "--park-and-exit") == 0) {
    struct timespec rel = { 0, 1000000 };
    pfutex(&w, WAIT | PRIV, 0, &rel, NULL, 0);
    _exit(0);
  }
  PFT_SKIP_UNDER_TSAN();
  plan(3 + 1 + 2 + 1);
  pft_watchdog(60);
  case_exit();
  if (unshare(CLONE_NEWIPC) != 0) {
    skip("no private IPC namespace (%s): reclamation", strerror(errno));
    skip("no private IPC namespace: system limit");
    skip("no private IPC namespace: system limit");
  } else {
    case_reclaim(argv[0]);
    case_system_limit();
  }
  case_library_limit();
  return 0;
}
#endif /* !_WIN32 */
