/* proc.c - a process's start time on macOS (src/os.h, the "start"
 * liveness of regions: record locks on a POSIX shm object fail with EBADF,
 * see doc/ports.md): proc_pidinfo(PROC_PIDTBSDINFO), pbi_start_tvsec and
 * pbi_start_tvusec (libproc.h).  A zombie (SZOMB) has ended: gone. */
#include "os.h"

#include <libproc.h>
#include <sys/proc.h>
#include <sys/proc_info.h>

int
pf_os_proc_start(uint32_t pid, uint64_t *t)
{
  struct proc_bsdinfo bi;
  int saved = errno, r;
  r = proc_pidinfo((int)pid, PROC_PIDTBSDINFO, 0, &bi, (int)sizeof bi);
  if (r != (int)sizeof bi) {
    int gone = errno == ESRCH;
    errno = saved;
    return gone ? 0 : -1;
  }
  if (bi.pbi_status == SZOMB)
    return 0;
  *t = bi.pbi_start_tvsec * 1000000u + bi.pbi_start_tvusec;
  return 1;
}
