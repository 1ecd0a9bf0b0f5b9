/* proc.c - a process's start time on FreeBSD (src/os.h, the "start"
 * liveness of regions: record locks on a shm object fail with EBADF, see
 * doc/ports.md): sysctl kern.proc.pid.<pid>, struct kinfo_proc's ki_start.
 * A zombie (SZOMB) has ended: gone. */
#include "os.h"

#include <sys/types.h>
#include <sys/sysctl.h>
#include <sys/user.h>

int
pf_os_proc_start(uint32_t pid, uint64_t *t)
{
  int mib[4] = { CTL_KERN, KERN_PROC, KERN_PROC_PID, (int)pid };
  struct kinfo_proc kp;
  size_t len = sizeof kp;
  int saved = errno;
  if (sysctl(mib, 4, &kp, &len, NULL, 0) != 0) {
    int gone = errno == ESRCH;
    errno = saved;
    return gone ? 0 : -1;
  }
  if (len < sizeof kp)
    return 0;                              /* no such process */
  if (kp.ki_stat == SZOMB)
    return 0;
  *t = (uint64_t)kp.ki_start.tv_sec * 1000000u + (uint64_t)kp.ki_start.tv_usec;
  return 1;
}
