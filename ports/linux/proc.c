/* proc.c - a process's start time on Linux (src/os.h, the "start"
 * liveness of regions; on Linux the FreeBSD and macOS shims use it, as
 * those systems use theirs): field 22 of /proc/<pid>/stat, starttime, in
 * clock ticks since boot.  A zombie (state Z or X) has ended: gone, as the
 * kernel dropped its record locks at exit. */
#include "os.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int
pf_os_proc_start(uint32_t pid, uint64_t *t)
{
  char path[48], buf[1024], *p;
  int fd, saved = errno, field;
  ssize_t n;
  unsigned long long v = 0;

  snprintf(path, sizeof path, "/proc/%u/stat", (unsigned int)pid);
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    int gone = errno == ENOENT || errno == ESRCH;
    errno = saved;
    return gone ? 0 : -1;
  }
  n = read(fd, buf, sizeof buf - 1);
  close(fd);
  errno = saved;
  if (n <= 0)
    return 0;                              /* it ended while we read */
  buf[n] = 0;
  if (!(p = strrchr(buf, ')')) || p[1] != ' ')
    return -1;
  p += 2;                                  /* field 3, the state */
  if (*p == 'Z' || *p == 'X' || *p == 'x')
    return 0;
  for (field = 3; field < 22 && *p; p++)
    if (*p == ' ')
      field++;
  if (field != 22)
    return -1;
  while (*p >= '0' && *p <= '9')
    v = v * 10 + (unsigned long long)(*p++ - '0');
  *t = v;
  return 1;
}
