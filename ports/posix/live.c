/* live.c - the "lock" liveness mechanism of regions on POSIX systems
 * (src/os.h, src/region/live.c).
 *
 * Entry e of a region's process table is owned by the process that holds a
 * write lock on byte e of the region's object (an fcntl record lock on the
 * descriptor the attachment keeps, src/region/handle.c).  POSIX says what makes this
 * exact: a record lock belongs to a process; it is released when the
 * process ends, by whatever route, and when the process closes any
 * descriptor of the file (exec closes the region's: it is close-on-exec);
 * a fork child inherits none (fcntl(2), "Advisory record locking").  So an
 * entry is dead exactly when its lock is gone: a stopped owner keeps it, a
 * reused pid never had it.  Locks may lie beyond the end of the file: the
 * object's bytes are untouched.
 *
 * The price of record locks: closing any descriptor of the object drops
 * every lock this process holds on it, so src/region/ never closes one while
 * the process is attached (and a program must not open the object by
 * another route and close it: doc/regions.md, limits).
 *
 * F_GETLK reports no conflict with this process's own locks, so an entry
 * this process owns is never asked here (src/region/proc.c answers it from
 * memory).
 */
#include "os.h"

#include <fcntl.h>
#include <unistd.h>

static int
pf_live_fcntl(int fd, int cmd, short type, uint32_t byte, struct flock *fl)
{
  int ret;
  fl->l_type = type;
  fl->l_whence = SEEK_SET;
  fl->l_start = (off_t)byte;
  fl->l_len = 1;
  fl->l_pid = 0;
  while ((ret = fcntl(fd, cmd, fl)) != 0 && errno == EINTR)
    ;
  return ret;
}

int
pf_os_lock_claim(int fd, uint32_t byte)
{
  struct flock fl;
  int saved = errno, ret = 0;
  if (fd < 0)
    return -EBADF;
  if (pf_live_fcntl(fd, F_SETLK, F_WRLCK, byte, &fl) != 0)
    ret = errno == EACCES || errno == EAGAIN ? -EBUSY : -errno;
  errno = saved;
  return ret;
}

int
pf_os_lock_held(int fd, uint32_t byte)
{
  struct flock fl;
  int saved = errno, held;
  if (fd < 0)
    return 1;
  /* An error (none is expected on a descriptor we keep) says "held": no
   * lock is taken from a process the OS did not say is gone. */
  held = pf_live_fcntl(fd, F_GETLK, F_WRLCK, byte, &fl) != 0 || fl.l_type != F_UNLCK;
  errno = saved;
  return held;
}

int
pf_os_lock_holder(int fd, uint32_t byte)
{
  struct flock fl;
  int saved = errno, ret;
  if (fd < 0 || pf_live_fcntl(fd, F_GETLK, F_RDLCK, byte, &fl) != 0)
    ret = -1;
  else
    ret = fl.l_type == F_UNLCK ? 0 : fl.l_pid > 0 ? (int)fl.l_pid : -1;
  errno = saved;
  return ret;
}

void
pf_os_lock_release(int fd, uint32_t byte)
{
  struct flock fl;
  int saved = errno;
  if (fd >= 0)
    (void)pf_live_fcntl(fd, F_SETLK, F_UNLCK, byte, &fl);
  errno = saved;
}
