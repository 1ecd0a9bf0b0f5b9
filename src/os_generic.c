/* os_generic.c - src/os.h where the OS offers no dedicated call (the BSDs,
 * macOS, other POSIX systems; Linux has ports/linux/mem.c).
 *
 * - copy in: through a pipe, as ports/linux/mem.c does where it cannot use
 *   process_vm_readv: write(2) reads the source as the kernel reads any
 *   argument (EFAULT for an unreadable source, never a signal: POSIX
 *   allows EFAULT there and every Unix kernel does it), read(2) brings the
 *   bytes back.  Cancellation is off meanwhile (read and write are
 *   cancellation points), so no descriptor leaks.  Where no descriptor is
 *   left, or on a system without pipes (PF_OS_NO_PIPE), a plain copy:
 *   a bad pointer then faults here, in the caller's thread, with no lock
 *   held;
 * - write probe and shared-key check: none (0), as no portable call tells
 *   without a signal. */
#include "os.h"

#include <string.h>

#ifndef PF_OS_NO_PIPE
# include <fcntl.h>
# include <pthread.h>
# include <unistd.h>

/* 0, -EFAULT, or 1 when it cannot be told (no descriptors, or too big
 * for one atomic pipe write). */
static int
pf_os_copy_pipe(void *dst, const void *src, size_t n)
{
  int fds[2], state, ret = 1, saved = errno;
  ssize_t w;
  if (n > 512)                        /* within PIPE_BUF (512 at least): one write, one read */
    return 1;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
  if (pipe(fds) == 0) {
    /* (another thread's fork+exec may inherit them for this instant: harmless, closed at once) */
    do
      w = write(fds[1], src, n);
    while (w < 0 && errno == EINTR);
    if (w == (ssize_t)n) {
      ssize_t r;
      do
        r = read(fds[0], dst, n);
      while (r < 0 && errno == EINTR);
      ret = r == (ssize_t)n ? 0 : 1;
    } else if (w >= 0 || errno == EFAULT) {
      ret = -EFAULT;                  /* short: the object straddles into an unreadable page */
    }
    close(fds[0]);
    close(fds[1]);
  }
  pthread_setcancelstate(state, NULL);
  errno = saved;
  return ret;
}
#endif

int
pf_os_copy_in(void *dst, const void *src, size_t n)
{
  if (pf_addr_unreadable(src))
    return -EFAULT;
#ifndef PF_OS_NO_PIPE
  {
    int ret = pf_os_copy_pipe(dst, src, n);
    if (ret <= 0)
      return ret;
  }
#endif
  memcpy(dst, src, n);
  return 0;
}

int
pf_os_probe_write(const void *p)
{
  (void)p;
  return 0;
}

int
pf_os_shared_key_check(const void *p)
{
  (void)p;
  return 0;
}

int
pf_os_object_id(const void *p, struct pf_os_objid *id)
{
  (void)p;
  memset(id, 0, sizeof *id);
  return -ENOSYS;
}
