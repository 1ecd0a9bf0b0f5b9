/* backend_name: pfutex_backend() names the backend PFUTEX_BACKEND chose,
 * pfutex_backends() lists the compiled ones, and an unknown name leaves no
 * backend: NULL and ENOSYS from every call. */
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
# include <sys/syscall.h>
#endif
#ifdef _WIN32
# include <fcntl.h>
# include <io.h>
# include <process.h>
#else
# include <sys/wait.h>
#endif

#include "pft.h"

static int
kernel_has_futex2(void)
{
#ifdef __linux__
  uint32_t w = 0;
  return syscall(454, &w, 0xfffffffful, 0, 2 | 128) == 0;
#else
  return 0;
#endif
}

static char *self_path;

/* Run this program again (a fresh process: the backend is chosen once per
 * process) with PFUTEX_BACKEND=name, and read what it reports. */
static void
check_unknown(const char *name)
{
  int fds[2], status;
  pid_t pid;
  char buf[256] = "", want[128];
  ssize_t n;

#ifdef _WIN32
  /* Windows: no fork; the child is spawned (CreateProcess) with its
   * standard output on the pipe and PFUTEX_BACKEND set in the environment
   * it inherits, both restored afterwards. */
  {
    char old[128] = "";
    const char *o = getenv("PFUTEX_BACKEND");
    int saved;
    if (o)
      snprintf(old, sizeof old, "%s", o);
    if (_pipe(fds, 4096, _O_BINARY) != 0)
      sysbail("pipe");
    fflush(stdout);
    saved = _dup(1);
    _dup2(fds[1], 1);
    _putenv_s("PFUTEX_BACKEND", name);
    pid = (pid_t)_spawnl(_P_NOWAIT, self_path, self_path, "--child", (char *)NULL);
    _dup2(saved, 1);
    close(saved);
    _putenv_s("PFUTEX_BACKEND", old);
    close(fds[1]);
    /* (the child's stdout is unbuffered: read to the end) */
    {
      size_t got = 0;
      while (pid != (pid_t)-1 && got < sizeof buf - 1
             && (n = read(fds[0], buf + got, (unsigned)(sizeof buf - 1 - got))) > 0)
        got += (size_t)n;
      buf[got] = 0;
    }
    close(fds[0]);
    if (pid != (pid_t)-1)
      _cwait(&status, (intptr_t)pid, 0);
  }
#else
  if (pipe(fds) != 0)
    sysbail("pipe");
  pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    setenv("PFUTEX_BACKEND", name, 1);
    execl(self_path, self_path, "--child", (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  n = read(fds[0], buf, sizeof buf - 1);
  if (n > 0)
    buf[n] = 0;
  close(fds[0]);
  waitpid(pid, &status, 0);
#endif
  snprintf(want, sizeof want, "NULL -1 %d -1 %d -1 %d -1 %d", ENOSYS, ENOSYS, ENOSYS, ENOSYS);
  is_string(want, buf, "PFUTEX_BACKEND=%s: no backend, every call ENOSYS", name);
}

static int
child_report(void)
{
  uint32_t w = 0, w2 = 0;
  long r1, r2, r3, r4;
  int e1, e2, e3, e4;
  const char *b = pfutex_backend();
  errno = 0; r1 = pfutex(&w, 1, 1, NULL, NULL, 0); e1 = errno;
  errno = 0; r2 = pfutex_wait(&w, 1, ~0u, 0, NULL, 0); e2 = errno;
  errno = 0; r3 = pfutex_wake(&w, ~0u, 1, PFUTEX_PRIVATE); e3 = errno;
  errno = 0; r4 = pfutex_cmp_requeue(&w, 0, &w2, 1, 1, 0); e4 = errno;
  printf("%s %ld %d %ld %d %ld %d %ld %d", b ? b : "NULL", r1, e1, r2, e2, r3, e3, r4, e4);
  return 0;
}

int
main(int argc, char **argv)
{
  const char *expect = getenv("PFUTEX_TEST_EXPECT_BACKEND");
  const char *want = getenv("PFUTEX_BACKEND");
  const char *got;
  const char *const *list;
  int i, found = 0;

  if (argc > 1 && strcmp(argv[1], "--child") == 0)
    return child_report();
  self_path = argv[0];
  plan(9);
  pft_watchdog(30);
  got = pfutex_backend();
  ok(got != NULL, "a backend is active (%s)", got ? got : "none");
  if (expect) {
    is_string(expect, got, "backend name is the expected one");
  } else if (want && strcmp(want, "linux") == 0) {
    const char *native = kernel_has_futex2() ? "linux:futex2"
                         : sizeof(void *) == 4 ? "linux:futex_time64" : "linux:futex";
    is_string(native, got, "native backend uses the kernel's newest family");
  } else {
    ok(got != NULL, "default backend chosen without PFUTEX_BACKEND");
  }
  ok(pfutex_backend() == got, "the name is stable");

  list = pfutex_backends();
  ok(list != NULL && list[0] != NULL, "pfutex_backends lists at least one");
  for (i = 0; list && list[i]; i++)
    if (got && strncmp(got, list[i], strlen(list[i])) == 0)
      found = 1;
  ok(found, "the active backend is in the list");
  is_string(PF_DEFAULT_BACKEND, list[0], "the default comes first");

  check_unknown("no-such-backend");
  check_unknown("emu:nonesuch");
  check_unknown("linux:futex_time99");
  return 0;
}
