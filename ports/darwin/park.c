/* park.c - the macOS park port: "sleep while the park word is 0" on the
 * kernel's compare-and-wait (ulock), like ports/linux/park.c on a futex.
 *
 * Three ways to reach it, chosen once at run time (pf_darwin_init, cached
 * in pf_darwin_api):
 *   os_sync  os_sync_wait_on_address[_with_timeout] / os_sync_wake_by_address_any
 *            (public, macOS 14.4+, <os/os_sync_wait_on_address.h>): always
 *            compiled, from the SDK's header where configure found it
 *            (PF_DARWIN_HAVE_OS_SYNC), else from the port's own
 *            declarations; used where the running system has the symbols
 *            (weak imports).
 *   ulock2   __ulock_wait2 (macOS 11+; 64-bit nanosecond timeout) with
 *            __ulock_wake: private API, declared here; weak import.
 *   ulock    __ulock_wait (32-bit microsecond timeout) with __ulock_wake.
 * Private parks use UL_COMPARE_AND_WAIT / OS_SYNC_*_NONE (keyed by task and
 * address); a region's (shared) parks UL_COMPARE_AND_WAIT_SHARED /
 * OS_SYNC_*_SHARED (keyed by VM object and offset: another process that
 * maps the region wakes it).
 *
 * What the kernel does (XNU bsd/kern/sys_ulock.c, sys_ulock_wait2 and
 * ulock_wake, apple-oss-distributions/xnu; values from bsd/sys/ulock.h),
 * and how each quirk is normalised here:
 *  - a wake and a value mismatch both return >= 0 (the waiters left): the
 *    port re-reads its word after every return, a stale wake (an unparker
 *    of an earlier use of the same word) is a spurious return;
 *  - a signal ends the sleep with EINTR (THREAD_INTERRUPTED), timed or
 *    not, and the kernel never restarts it (EINTR, not ERESTART): park
 *    passes -EINTR up and the engine decides, so untimed parks may sleep
 *    untimed (unlike Linux, no far deadline is needed);
 *  - EFAULT when the word's page is not resident (copyin under a spinlock
 *    may not fault: "let the user level code fault it in"): the port's
 *    re-read faults it in, then it sleeps again;
 *  - timeouts are relative only: recomputed from dl->clock before every
 *    sleep; a timeout of 0 means forever, so a remaining time is never
 *    rounded down to 0 (__ulock_wait's microseconds round up), and
 *    __ulock_wait's 32-bit microseconds (71 minutes) are capped: longer
 *    parks loop with the deadline re-checked; ETIMEDOUT from the kernel
 *    only means "look at the clock" (the kernel's clock, mach absolute
 *    time, stops while the machine sleeps; CLOCK_MONOTONIC does not);
 *  - __ulock_wake answers ENOENT when nobody waits (no ulock for the
 *    key): the token is stored first, so a waiter not asleep yet sees it;
 *  - EOWNERDEAD and EDOM concern UL_UNFAIR_LOCK and mixed opcodes on one
 *    address: neither happens here (one opcode per word).
 * ULF_NO_ERRNO has the ulock calls return -errno; the os_sync calls
 * return -1 and set errno (Apple's documentation), saved and restored.
 *
 * Built twice: for macOS, and over tests/shims/darwin/ (-DPF_SHIM), a model
 * of the three APIs on Linux futexes, as the backend emu:darwin-shim.
 *
 * -DPF_PORT_WRONG: a deliberately wrong variant for the test suite to
 * catch: a region's parks and unparks use the private operations (keyed
 * per process), so a waker in another process never reaches the waiter. */
#include "port.h"

#ifdef PF_SHIM
# include "shim.h"             /* the APIs below, redirected to the shim's model */
# define PF_PORT_VAR  pf_port_darwin_shim
# define PF_PORT_NAME "darwin-shim"
#else
# include <errno.h>
# include <stddef.h>
# include <stdint.h>
# include <os/clock.h>          /* os_clockid_t, OS_CLOCK_MACH_ABSOLUTE_TIME (macOS 10.12+) */
# ifndef PF_DARWIN_NO_OS_SYNC    /* (configure: where the weak imports do not link) */
#  ifdef PF_DARWIN_HAVE_OS_SYNC
#   include <os/os_sync_wait_on_address.h>
#  else
/* An SDK before macOS 14.4 (Zig's, for one) lacks the header: the port
 * declares what it uses, as Apple's header has it (values and
 * signatures), and the run-time choice below is the same.  The symbols
 * are in the SDK's libSystem stubs from 14.4 on; with older stubs the
 * weak references stay undefined at link time (-U, configure). */
typedef uint32_t os_sync_wait_on_address_flags_t;
typedef uint32_t os_sync_wake_by_address_flags_t;
#   include "ulock.h"          /* OS_SYNC_* */
extern int os_sync_wait_on_address(void *addr, uint64_t value, size_t size,
                                   os_sync_wait_on_address_flags_t flags);
extern int os_sync_wait_on_address_with_timeout(void *addr, uint64_t value, size_t size,
                                                os_sync_wait_on_address_flags_t flags,
                                                os_clockid_t clockid, uint64_t timeout_ns);
extern int os_sync_wake_by_address_any(void *addr, size_t size,
                                       os_sync_wake_by_address_flags_t flags);
#  endif
/* Weak imports: absent (NULL) before macOS 14.4.  pf_darwin_init's NULL
 * checks are the availability guard clang cannot see. */
#  ifdef __clang__
#   pragma clang diagnostic ignored "-Wunguarded-availability"
#   pragma clang diagnostic ignored "-Wunguarded-availability-new"
#  endif
extern __typeof__(os_sync_wait_on_address) os_sync_wait_on_address __attribute__((weak_import));
extern __typeof__(os_sync_wait_on_address_with_timeout) os_sync_wait_on_address_with_timeout
  __attribute__((weak_import));
extern __typeof__(os_sync_wake_by_address_any) os_sync_wake_by_address_any __attribute__((weak_import));
# endif
/* Private API (libsystem_kernel), as in XNU's bsd/sys/ulock.h. */
extern int __ulock_wait(uint32_t operation, void *addr, uint64_t value, uint32_t timeout_us);
extern int __ulock_wait2(uint32_t operation, void *addr, uint64_t value, uint64_t timeout_ns,
                         uint64_t value2) __attribute__((weak_import));   /* macOS 11+ */
extern int __ulock_wake(uint32_t operation, void *addr, uint64_t wake_value);
# include "ulock.h"
# define PF_PORT_VAR  pf_port_darwin
# define PF_PORT_NAME "darwin"
#endif

enum { PF_DARWIN_ULOCK = 1, PF_DARWIN_ULOCK2, PF_DARWIN_OS_SYNC };
static int pf_darwin_api;                     /* chosen once by init */

#ifdef PF_PORT_WRONG
# define PF_DARWIN_SHARED(sh) ((void)(sh), 0)  /* the mistake: regions keyed per process */
#else
# define PF_DARWIN_SHARED(sh) (sh)
#endif

static int
pf_darwin_init(void)
{
  if (pf_darwin_api)
    return 0;
#ifndef PF_DARWIN_NO_OS_SYNC
  /* Weak imports: NULL where the running system predates them. */
  if (os_sync_wait_on_address != NULL && os_sync_wait_on_address_with_timeout != NULL
      && os_sync_wake_by_address_any != NULL) {
    pf_darwin_api = PF_DARWIN_OS_SYNC;
    return 0;
  }
#endif
  pf_darwin_api = __ulock_wait2 != NULL ? PF_DARWIN_ULOCK2 : PF_DARWIN_ULOCK;
  return 0;
}

/* One kernel sleep while *word is 0: 0 (woken, a mismatch, or spuriously:
 * the caller re-reads the word), -ETIMEDOUT (`ns` passed: the caller looks
 * at its own clock), -EINTR, or another -errno.  ns: the time left (>= 1),
 * or 0 for none. */
static int
pf_darwin_sleep(uint32_t *word, int shared, uint64_t ns)
{
  int r;
#ifndef PF_DARWIN_NO_OS_SYNC
  if (pf_darwin_api == PF_DARWIN_OS_SYNC) {
    os_sync_wait_on_address_flags_t f = shared ? OS_SYNC_WAIT_ON_ADDRESS_SHARED
                                               : OS_SYNC_WAIT_ON_ADDRESS_NONE;
    int saved = errno;
    /* The timeout is relative nanoseconds, measured on mach absolute time
     * (OS_CLOCK_MACH_ABSOLUTE_TIME, the one clock os_clockid_t has); never
     * 0 here.  _with_deadline would need the deadline in mach absolute
     * units, a clock neither CLOCK_MONOTONIC nor CLOCK_REALTIME follows. */
    r = ns ? os_sync_wait_on_address_with_timeout(word, 0, sizeof *word, f,
                                                  OS_CLOCK_MACH_ABSOLUTE_TIME, ns)
           : os_sync_wait_on_address(word, 0, sizeof *word, f);
    if (r < 0)
      r = -errno;
    errno = saved;
    return r < 0 ? r : 0;
  }
#endif
  {
    uint32_t op = (shared ? UL_COMPARE_AND_WAIT_SHARED : UL_COMPARE_AND_WAIT) | ULF_NO_ERRNO;
    if (pf_darwin_api == PF_DARWIN_ULOCK2) {
      r = __ulock_wait2(op, word, 0, ns, 0);
      if (r != -ENOSYS)
        return r < 0 ? r : 0;
      pf_darwin_api = PF_DARWIN_ULOCK;        /* a kernel without the call: never again */
    }
    /* Microseconds, rounded up (0 would be forever), capped at 32 bits
     * (the caller loops). */
    {
      uint64_t us = ns ? (ns + 999) / 1000 : 0;
      r = __ulock_wait(op, word, 0, us > UINT32_MAX ? UINT32_MAX : (uint32_t)us);
    }
    return r < 0 ? r : 0;
  }
}

static int
pf_darwin_park(struct pf_parker *p, struct pf_park *k, int shared, const struct pf_deadline *dl)
{
  uint32_t *word = &k->word;
  (void)p;
  shared = PF_DARWIN_SHARED(shared);
  for (;;) {
    uint64_t ns = 0;
    int r;
    if (AO_int_load_acquire(&k->word))
      return 0;
    if (dl) {
      struct timespec left;
      if (pf_deadline_left(dl, &left) < 0)
        return -ETIMEDOUT;
      /* At most a day per sleep: no overflow in the kernel's deadline
       * arithmetic, whatever the caller's deadline. */
      if (left.tv_sec >= 86400)
        ns = (uint64_t)86400 * 1000000000u;
      else
        ns = (uint64_t)left.tv_sec * 1000000000u + (uint64_t)left.tv_nsec;
      if (ns == 0)
        ns = 1;
    }
    r = pf_darwin_sleep(word, shared, ns);
    if (AO_int_load_acquire(&k->word))
      return 0;
    if (r == -EINTR)
      return r;
    /* 0 (a stale wake, a mismatch), -ETIMEDOUT (the deadline is re-checked
     * on its own clock at the top), -EFAULT (the load above faulted the
     * page in): sleep again.  Anything else would repeat forever: treat it
     * as an interruption, which the engine re-checks and retries. */
    if (r != 0 && r != -ETIMEDOUT && r != -EFAULT)
      return -EINTR;
  }
}

/* The release store is the last access to *k; the wake only names the
 * address (a stale one can cause nothing worse than a spurious wakeup). */
static void
pf_darwin_unpark(struct pf_park *k, int shared)
{
  uint32_t *word = &k->word;
  shared = PF_DARWIN_SHARED(shared);
  AO_int_store_release(&k->word, 1);
#ifndef PF_DARWIN_NO_OS_SYNC
  if (pf_darwin_api == PF_DARWIN_OS_SYNC) {
    int saved = errno;
    /* -1/ENOENT: nobody asleep yet; the waiter will see the token. */
    (void)os_sync_wake_by_address_any(word, sizeof *word,
                                      shared ? OS_SYNC_WAKE_BY_ADDRESS_SHARED
                                             : OS_SYNC_WAKE_BY_ADDRESS_NONE);
    errno = saved;
    return;
  }
#endif
  /* -ENOENT: nobody asleep yet (see above).  The park word has one
   * waiter at most: wake one. */
  (void)__ulock_wake((shared ? UL_COMPARE_AND_WAIT_SHARED : UL_COMPARE_AND_WAIT) | ULF_NO_ERRNO,
                     word, 0);
}

static void
pf_darwin_collect(struct pf_parker *p, struct pf_park *k, int shared)
{
  pf_park_word_collect(pf_darwin_park, p, k, shared);
}

/* ports/darwin/objid.c */
#ifdef PF_SHIM
# define PF_DARWIN_OBJID pf_darwin_shim_object_id
#else
# define PF_DARWIN_OBJID pf_darwin_object_id
#endif
int PF_DARWIN_OBJID(const void *p, struct pf_os_objid *id);

const struct pf_port PF_PORT_VAR = {
  .name = PF_PORT_NAME,
  .gen = &pf_park_word_gen,
  .init = pf_darwin_init,
  .prepare = pf_park_word_prepare,
  .park = pf_darwin_park,
  .unpark = pf_darwin_unpark,
  .collect = pf_darwin_collect,
  .object_id = PF_DARWIN_OBJID,
};
