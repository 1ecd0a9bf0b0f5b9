/* shim.h - DragonFly's umtx_sleep(2) / umtx_wakeup(2), as
 * ports/dragonfly/park.c sees them, for the port's second build on Linux
 * (configure --enable-test-shims=dragonfly): the OS's names and
 * signatures, each call redirected to the model in shim.c.
 *
 * Sources (checked with the search tool, DragonFlyBSD/DragonFlyBSD):
 *   include/unistd.h   int umtx_sleep(volatile const int *, int, int);
 *                      int umtx_wakeup(volatile const int *, int);
 *                      (under __BSD_VISIBLE)
 *   lib/libc/sys/umtx.2, sys/kern/kern_umtx.c  the behaviour (shim.c).
 * The errno names (EBUSY, EWOULDBLOCK, ETIMEDOUT, EINTR, EINVAL, EFAULT)
 * come from each build's <errno.h>: DragonFly's EWOULDBLOCK is EAGAIN (35),
 * Linux's is EAGAIN (11); the port uses the names only. */
#ifndef PF_SHIM_DRAGONFLY_H
#define PF_SHIM_DRAGONFLY_H

#define umtx_sleep  pf_shim_dragonfly_umtx_sleep
#define umtx_wakeup pf_shim_dragonfly_umtx_wakeup
int umtx_sleep(volatile const int *ptr, int value, int timeout);
int umtx_wakeup(volatile const int *ptr, int count);

/* The shim's own knobs (not DragonFly's), for tests/shims/dragonfly/test.c:
 *   pf_shim_dragonfly_spurious(n): every n-th sleep of this process returns
 *     0 at once, the word unchanged (0: never).  Default from
 *     $PF_SHIM_DRAGONFLY_SPURIOUS, else 5.
 *   pf_shim_dragonfly_timeout_max(us): kern.umtx_timeout_max, the cap on
 *     every sleep (timeout 0 included).  Default from
 *     $PF_SHIM_DRAGONFLY_TIMEOUT_MAX, else 1000000. */
void pf_shim_dragonfly_spurious(unsigned int every);
void pf_shim_dragonfly_timeout_max(int us);

#endif
