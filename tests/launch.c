/* launch BACKEND PROGRAM [ARGS...] - run one test program under a backend.
 *
 * BACKEND is a test-run name from configure's PF_TEST_BACKENDS: a compiled
 * backend with ':' spelled '-' ("linux", "emu-futex", "emu-sysv"), or a
 * native run with syscalls refused by a seccomp filter that answers ENOSYS:
 *   linux-nofutex2  futex_wake/futex_wait/futex_requeue (454-456) refused
 *   linux-notime64  the same plus futex_time64 (422), for 32-bit builds
 * Sets PFUTEX_BACKEND and, where the resulting name is certain,
 * PFUTEX_TEST_EXPECT_BACKEND, which tests/backend_name checks. */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef _WIN32
/* Windows: no exec (mingw's execv starts the program and returns at once,
 * exiting the launcher before the test ends): run the test with
 * _spawnv(_P_WAIT) and return its exit status.  Environment: _putenv_s. */
# include <process.h>
# include <windows.h>
static int
setenv(const char *n, const char *v, int overwrite)
{
  (void)overwrite;
  return _putenv_s(n, v) == 0 ? 0 : -1;
}
#endif
#ifdef __linux__
# include "arch.h"
#endif

#if defined(HAVE_LINUX_SECCOMP_H) && defined(HAVE_LINUX_FILTER_H) && defined(HAVE_SYS_PRCTL_H)
# include <linux/audit.h>
# include <linux/filter.h>
# include <linux/seccomp.h>
# include <sys/prctl.h>
# include <sys/syscall.h>
# define PF_HAVE_SECCOMP 1

static int
refuse_syscalls(const int *nrs, int n)
{
  struct sock_filter f[16];
  struct sock_fprog prog;
  int i, k = 0;

  f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
  for (i = 0; i < n; i++) {
    /* if nr == nrs[i]: return ENOSYS, else go on */
    f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nrs[i], 0, 1);
    f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & SECCOMP_RET_DATA));
  }
  f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  prog.len = (unsigned short)k;
  prog.filter = f;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return -1;
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}
#endif

/* Where no seccomp filter can be installed: preload tests/.libs/nosys.so
 * (beside this program), whose syscall() answers ENOSYS for the numbers.
 * Only where the native backend calls through libc's syscall(). */
static int
preload_nosys(const char *self, const int *nrs, int n)
{
#if defined(_WIN32) || PF_ARCH_SYSCALL_INSN
  (void)self; (void)nrs; (void)n;
  return -1;
#else
  char path[4096], list[128], *pre;
  const char *slash = strrchr(self, '/');
  const char *old = getenv("LD_PRELOAD");
  size_t len = 0;
  int i;
  snprintf(path, sizeof path, "%.*s.libs/nosys.so", slash ? (int)(slash - self + 1) : 0, self);
  if (access(path, R_OK) != 0)
    return -1;
  for (i = 0; i < n; i++)
    len += (size_t)snprintf(list + len, sizeof list - len, "%s%d", i ? "," : "", nrs[i]);
  if (!(pre = malloc(strlen(path) + (old ? strlen(old) + 2 : 1))))
    return -1;
  sprintf(pre, old && *old ? "%s:%s" : "%s", path, old);
  setenv("LD_PRELOAD", pre, 1);
  setenv("PFT_NOSYS", list, 1);
  free(pre);
  return 0;
#endif
}

int
main(int argc, char **argv)
{
  const char *b;
  if (argc < 3) {
    fprintf(stderr, "usage: launch BACKEND PROGRAM [ARGS...]\n");
    return 2;
  }
  b = argv[1];
  if (strcmp(b, "linux") == 0) {
    setenv("PFUTEX_BACKEND", "linux", 1);
  } else if (strcmp(b, "linux-nofutex2") == 0 || strcmp(b, "linux-notime64") == 0) {
    static const int nrs[] = { 454, 455, 456, 422 };
    int n = strcmp(b, "linux-notime64") == 0 ? 4 : 3;
    setenv("PFUTEX_BACKEND", "linux", 1);
    if (sizeof(void *) == 4 && n == 3)
      setenv("PFUTEX_TEST_EXPECT_BACKEND", "linux:futex_time64", 1);
    else
      setenv("PFUTEX_TEST_EXPECT_BACKEND", "linux:futex", 1);
#ifdef PF_HAVE_SECCOMP
    if (refuse_syscalls(nrs, n) != 0) {
      int err = errno;
      if (preload_nosys(argv[0], nrs, n) != 0) {
        printf("1..0 # SKIP cannot install a seccomp filter (%s), and the native backend's "
               "calls cannot be refused in libc's syscall() here\n", strerror(err));
        return 0;
      }
      printf("# no seccomp filter (%s): libc's syscall() refuses the calls instead (tests/nosys.c)\n",
             strerror(err));
      fflush(stdout);
    }
#else
    if (preload_nosys(argv[0], nrs, n) != 0) {
      printf("1..0 # SKIP no seccomp on this system, and the native backend's calls cannot be "
             "refused in libc's syscall() here\n");
      return 0;
    }
#endif
  } else {
    char name[64];
    size_t i;
    snprintf(name, sizeof name, "%s", b);
    for (i = 0; name[i]; i++)
      if (name[i] == '-') {
        name[i] = ':';        /* the first only: "emu-freebsd-shim" is "emu:freebsd-shim" */
        break;
      }
    setenv("PFUTEX_BACKEND", name, 1);
    setenv("PFUTEX_TEST_EXPECT_BACKEND", name, 1);
  }
#ifdef _WIN32
  /* The first line out: a log without it is a run wine never started
   * (.ci/win32 runs such a program once more).  A program that exists
   * and could not be started (_spawnv -1: CreateProcess failed, the
   * program never ran; seen under wine 8.0 on a loaded machine, errno
   * EINVAL) is started again, at most 4 more times, each try named in a
   * TAP comment: nothing of the test had run. */
  printf("# launch: %s %s\n", b, argv[2]);
  {
    intptr_t st;
    int tries;
    for (tries = 1;; tries++) {
      DWORD werr;
      fflush(stdout);
      SetLastError(0);
      errno = 0;
      st = _spawnv(_P_WAIT, argv[2], (const char *const *)(argv + 2));
      if (st != -1 || errno == 0) {   /* (a test's own exit(-1): no errno) */
        if (st != 0)            /* (a TAP comment after the test: a status for the log) */
          printf("# launch: %s exited with status %ld\n", argv[2], (long)st);
        return (int)st;
      }
      werr = GetLastError();
      if (tries == 5 || errno == ENOENT || errno == ENOEXEC || errno == E2BIG
          || werr == ERROR_BAD_EXE_FORMAT) {
        printf("# launch: Windows error %lu\n", (unsigned long)werr);
        break;
      }
      printf("# launch: could not start %s (try %d: %s, Windows error %lu); trying again\n",
             argv[2], tries, strerror(errno), (unsigned long)werr);
      Sleep(100 * tries);
    }
  }
#else
  execv(argv[2], argv + 2);
#endif
  if (errno == ENOEXEC && getenv("PFUTEX_TEST_EMULATOR"))
    printf("Bail out! cannot run %s: %s: a cross build's tests exec other test programs; "
           "register %s with binfmt_misc (Debian: qemu-user-static and binfmt-support)\n",
           argv[2], strerror(errno), getenv("PFUTEX_TEST_EMULATOR"));
  else
    printf("Bail out! cannot run %s: %s\n", argv[2], strerror(errno));
  return 1;
}
