/* tid.c - src/os.h's thread ids for PI and robust futex words
 * (pfutex_tid) and their liveness.  Windows has its own in ports/win32/os.c.
 *
 * - Linux: gettid(), as the kernel writes it; alive unless kill(tid, 0)
 *   answers ESRCH (kill takes any thread's id) or /proc says zombie;
 * - elsewhere: the pid's low 17 bits beside a per-process count of the
 *   threads that asked (13 bits, wrapping, never 0; a fork child's thread
 *   gets one of its own pid); liveness cannot be told (1). */
#include "os.h"

#ifndef _WIN32
#include <signal.h>
#include <unistd.h>
#ifdef __linux__
# include <fcntl.h>
# include <stdio.h>
# include <string.h>
# include <sys/syscall.h>

pid_t
pf_os_tid(void)
{
  return (pid_t)syscall(SYS_gettid);
}

/* kill(tid, 0) finds a zombie too (a process killed, not yet reaped; a
 * main thread that called pthread_exit): the kernel counts those as gone
 * for PI, so /proc/<tid>/stat's state is read as well (Z, X: gone). */
int
pf_os_tid_alive(uint32_t tid)
{
  char path[48], buf[256], *p;
  int saved = errno, fd, r;
  ssize_t n;
  if (kill((pid_t)tid, 0) != 0 && errno == ESRCH) {
    errno = saved;
    return 0;
  }
  r = 1;
  snprintf(path, sizeof path, "/proc/%u/stat", (unsigned)tid);
  if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
    if ((n = read(fd, buf, sizeof buf - 1)) > 0) {
      buf[n] = 0;
      if ((p = strrchr(buf, ')')) != NULL && (p[1] == ' ') && (p[2] == 'Z' || p[2] == 'X'))
        r = 0;
    }
    close(fd);
  } else if (errno == ENOENT) {
    r = 0;                                  /* gone meanwhile */
  }
  errno = saved;
  return r;
}
#else
static AO_t pf_os_tid_next;
static __thread pid_t pf_os_tid_mine, pf_os_tid_pid;

pid_t
pf_os_tid(void)
{
  pid_t pid = getpid();
  if (pf_os_tid_pid != pid) {
    unsigned long n = (unsigned long)AO_fetch_and_add1(&pf_os_tid_next);
    pf_os_tid_mine = (pid_t)((((unsigned long)pid & 0x1ffffu) << 13) | (n % 0x1fffu + 1));
    pf_os_tid_pid = pid;
  }
  return pf_os_tid_mine;
}

int
pf_os_tid_alive(uint32_t tid)
{
  (void)tid;
  return 1;
}
#endif
#endif
