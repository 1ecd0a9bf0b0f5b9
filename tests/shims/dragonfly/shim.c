/* shim.c - a model of DragonFly's umtx_sleep(2) / umtx_wakeup(2) on Linux
 * futexes, for the DragonFly port's test build (shim.h).
 *
 * DragonFly's umtx changed over time; the shim models the strictest
 * combination of what its manual pages and kernels documented, so that a
 * port that passes here runs on each of them (DragonFlyBSD/DragonFlyBSD):
 *   [A] umtx.2 of 2005 and sys_umtx_sleep() of 2007: "The timeout is
 *       limited to the range 0-1000000 microseconds"; the kernel answers
 *       EINVAL above 1000000.  The 2015 manual lifts it ("no specific
 *       limitation other than what fits in the signed integer").  Modelled:
 *       EINVAL above 1000000, and for a negative timeout (every version).
 *   [B] kern_umtx.c of 2017 and later: every sleep, timeout 0 ("indefinite")
 *       included, is capped at kern.umtx_timeout_max and ends with
 *       EWOULDBLOCK, "the caller is expected to retry".  Its comment says
 *       the default is 1 second; its initialiser says 2000000 us.  Modelled:
 *       a cap of 1 s (pf_shim_dragonfly_timeout_max).
 *   - Timeout expiry: EWOULDBLOCK (umtx.2 of 2015, kern_umtx.c: tsleep's
 *     answer); the 2005 manual said ETIMEDOUT, but the kernel of the time
 *     returned tsleep's EWOULDBLOCK too.  Modelled: EWOULDBLOCK.
 *   - The timeout is converted to ticks, rounded up, and the sleep ends on
 *     a clock tick: "accurate to within ~2 ticks" (kern_umtx.c).  Modelled:
 *     hz 100, the sleep ends at the n-th tick boundary of CLOCK_MONOTONIC,
 *     so it can end up to a tick before the time asked for (inferred from
 *     tsleep's tick timeouts; not stated in the manual).
 *   - Mismatch: EBUSY (umtx.2 ERRORS).  Misaligned pointer: EFAULT
 *     (kern_umtx.c).  Errors: -1 and errno (umtx.2 RETURN VALUES).
 *   - "umtx_sleep does not restart in case of a signal, even if the signal
 *     specifies that system calls should restart" (umtx.2 of 2015;
 *     kern_umtx.c turns ERESTART into EINTR).  Every sleep here is timed
 *     (the cap), and a timed Linux futex wait ends with EINTR after any
 *     handler.
 *   - "Various operating system events can cause umtx_sleep to return
 *     prematurely, with the contents of the mutex unchanged" (umtx.2 of
 *     2015; the 2017 kernel wakes every sleeper when the process forks).
 *     Modelled: every Nth sleep of the process returns 0 at once.
 *   - umtx_wakeup: "A count of 0 will wake up all sleeping processes.  This
 *     function may wake up more processes then the specified count"; the
 *     kernel wakes one for count 1 and all otherwise.  Returns 0 "unless
 *     the address is bad" (umtx.2).  Modelled exactly so.
 *   - Keys: "based on the physical memory backing the user address", so
 *     processes sharing memory meet (umtx.2).  There is no private
 *     variant: every call is a shared Linux futex.
 * Not modelled: the 2017 kernel's EINVAL when an address cannot be
 * translated; the spin before sleeping. */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include "shim.h"
#include "sys.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#define PF_SHIM_DFLY_HZ 100
#define PF_SHIM_DFLY_LIMIT 1000000          /* [A] */

static volatile AO_t pf_shim_dfly_every = (AO_t)-1;   /* -1: not read yet */
static volatile AO_t pf_shim_dfly_sleeps;
static volatile AO_t pf_shim_dfly_max = (AO_t)-1;     /* [B]; -1: not read yet */

void
pf_shim_dragonfly_spurious(unsigned int every)
{
  AO_store(&pf_shim_dfly_every, (AO_t)every);
}

void
pf_shim_dragonfly_timeout_max(int us)
{
  AO_store(&pf_shim_dfly_max, (AO_t)us);
}

static AO_t
pf_shim_dfly_knob(volatile AO_t *knob, const char *env, AO_t dflt)
{
  AO_t v = AO_load(knob);
  if (v == (AO_t)-1) {
    const char *s = getenv(env);
    v = s && *s ? (AO_t)strtoul(s, NULL, 10) : dflt;
    AO_store(knob, v);
  }
  return v;
}

static int
pf_shim_dfly_fail(int err)
{
  errno = err;
  return -1;
}

int
umtx_sleep(volatile const int *ptr, int value, int timeout)
{
  uint32_t *word = (uint32_t *)(uintptr_t)ptr;
  AO_t every = pf_shim_dfly_knob(&pf_shim_dfly_every, "PF_SHIM_DRAGONFLY_SPURIOUS", 5);
  int max = (int)pf_shim_dfly_knob(&pf_shim_dfly_max, "PF_SHIM_DRAGONFLY_TIMEOUT_MAX", 1000000);
  long long ticks, tick_ns = 1000000000LL / PF_SHIM_DFLY_HZ, end;
  struct timespec now, abs;
  long r;
  int us;

  if (timeout < 0 || timeout > PF_SHIM_DFLY_LIMIT)
    return pf_shim_dfly_fail(EINVAL);
  if ((uintptr_t)ptr & (sizeof(int) - 1))
    return pf_shim_dfly_fail(EFAULT);
  if (*ptr != value)
    return pf_shim_dfly_fail(EBUSY);
  if (every != 0 && (AO_fetch_and_add1(&pf_shim_dfly_sleeps) + 1) % every == 0)
    return 0;                 /* premature, the contents unchanged */
  us = timeout == 0 || timeout > max ? max : timeout;
  ticks = (long long)(us / 1000000) * PF_SHIM_DFLY_HZ
          + ((long long)(us % 1000000) * PF_SHIM_DFLY_HZ + 999999) / 1000000;
  if (ticks < 1)
    ticks = 1;
  clock_gettime(CLOCK_MONOTONIC, &now);
  end = ((long long)now.tv_sec * 1000000000LL + now.tv_nsec) / tick_ns + ticks;
  end *= tick_ns;
  abs.tv_sec = (time_t)(end / 1000000000LL);
  abs.tv_nsec = (long)(end % 1000000000LL);
  r = pf_linux_futex(word, PF_OP_WAIT_BITSET, (uint32_t)value, &abs, 0, NULL,
                     PFUTEX_BITSET_MATCH_ANY);
  if (r == 0)
    return 0;
  if (r == -EAGAIN)
    return pf_shim_dfly_fail(EBUSY);
  if (r == -ETIMEDOUT)
    return pf_shim_dfly_fail(EWOULDBLOCK);
  return pf_shim_dfly_fail((int)-r);   /* EINTR, EFAULT */
}

int
umtx_wakeup(volatile const int *ptr, int count)
{
  uint32_t *word = (uint32_t *)(uintptr_t)ptr;
  long r;
  if ((uintptr_t)ptr & (sizeof(int) - 1))
    return pf_shim_dfly_fail(EFAULT);
  r = pf_linux_futex(word, PF_OP_WAKE, count == 1 ? 1 : INT_MAX, NULL, 0, NULL, 0);
  if (r < 0)
    return pf_shim_dfly_fail((int)-r);
  return 0;
}
