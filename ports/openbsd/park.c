/* park.c - the OpenBSD park port: one futex(2) per waiter node (its park
 * word), "sleep while the word is 0", like ports/linux/park.c, with
 * OpenBSD's own call (sources: openbsd/src lib/libc/sys/futex.2,
 * sys/sys/futex.h, sys/kern/sys_futex.c):
 *
 *   int futex(volatile uint32_t *uaddr, int op, int val,
 *             const struct timespec *timeout, volatile uint32_t *uaddr2);
 *
 * Quirks normalised here:
 *   - Op numbers of its own (FUTEX_WAIT 1, FUTEX_WAKE 2; FUTEX_PRIVATE_FLAG
 *     128), taken from <sys/futex.h>.
 *   - FUTEX_WAIT's timeout is relative only (futex.2; the kernel turns it
 *     into ticks, rounded up): each loop recomputes what is left of the
 *     engine's absolute deadline on the deadline's own clock.  A
 *     CLOCK_REALTIME deadline sleeps at most a second at a time, so a
 *     change of the clock is noticed within a second.
 *   - A signal handler ends the wait with EINTR, or with ECANCELED when
 *     the signal's handler has SA_RESTART (futex.2; sys_futex.c
 *     futex_wait maps the sleep's ERESTART to ECANCELED since 2018-04-24,
 *     OpenBSD 6.4, so the wait is never restarted by the kernel; 6.2-6.3
 *     mapped it to EINTR).  Both are -EINTR here: the engine decides about restarts
 *     (src/wait.c (F)).  So an untimed park may pass no timeout at all.
 *   - Errors: the kernel up to at least sys_futex.c rev 1.9 (2018-08-30:
 *     sys_futex sets *retval = error and returns 0) and futex.2 up to rev
 *     1.5 (2019-01-18) give the error number itself as the return value of
 *     FUTEX_WAIT (0 when woken), and so does the libc stub; the current
 *     manual (man.openbsd.org) says -1 with errno.  A FUTEX_WAIT result
 *     is 0 or an error either way, so both are read: -1 means errno,
 *     anything else nonzero is the error number.  (Which release changed
 *     the convention: not confirmed.)
 *   - EAGAIN (the word is no longer 0) and spurious returns: loop and
 *     re-check the word.
 *
 * Process-shared futexes: since sys_futex.c's commit of 2018-06-03
 * ("Implement process-shared futexes", OpenBSD 6.4) a futex without
 * FUTEX_PRIVATE_FLAG on a mapping that is a UVM object shared across fork
 * (MAP_SHARED: files, shm_open, anonymous shared memory) is keyed by
 * (object, offset) (futex_get: the map entry must be an object with
 * MAP_INHERIT_SHARE, which MAP_SHARED mappings have unless minherit(2)
 * changed it: not confirmed in uvm_mmap.c), so a waker in another process
 * finds the waiter.  Regions therefore park here without FUTEX_PRIVATE_FLAG; the header that defines
 * FUTEX_PRIVATE_FLAG (sys/sys/futex.h rev 1.2, same commit) is required.
 * Before 6.4 every futex was keyed by (address, pid): use the sysv port.
 */
#include "port.h"

#include <errno.h>
#include <stdint.h>
#include <time.h>

#ifdef PF_SHIM
# include "shim.h"             /* tests/shims/openbsd: the call, modelled on Linux */
# define PF_PORT_VAR  pf_port_openbsd_shim
# define PF_PORT_NAME "openbsd-shim"
#else
# include <sys/time.h>
# include <sys/futex.h>
# define PF_PORT_VAR  pf_port_openbsd
# define PF_PORT_NAME "openbsd"
#endif

#ifndef FUTEX_PRIVATE_FLAG
# error "OpenBSD before 6.4: futex(2) has no process-shared futexes; configure --with-ports=sysv"
#endif

/* FUTEX_WAIT's outcome as an error number (0: woken or spurious), from
 * either return convention (header comment). */
static int
pf_obsd_wait(uint32_t *word, int op, const struct timespec *rel)
{
  int r = futex(word, op | FUTEX_WAIT, 0, rel, NULL);
  if (r == -1)
    return errno;
  return r;
}

static int
pf_obsd_park(struct pf_parker *p, struct pf_park *k, int shared, const struct pf_deadline *dl)
{
  int op = shared ? 0 : FUTEX_PRIVATE_FLAG;
  int saved = errno, ret;
  (void)p;
  for (;;) {
    struct timespec left;
    const struct timespec *rel = NULL;
    int e;
    if (AO_int_load_acquire(&k->word)) {
      ret = 0;
      break;
    }
    if (dl) {
      /* Relative timeouts only: what is left of the deadline, now. */
      if ((ret = pf_deadline_left(dl, &left)) < 0)
        break;
      if (dl->clock == PFUTEX_CLOCK_REALTIME && left.tv_sec >= 1) {
        left.tv_sec = 1;                 /* follow changes of the clock */
        left.tv_nsec = 0;
      }
      rel = &left;
    }
    e = pf_obsd_wait(&k->word, op, rel);
    if (AO_int_load_acquire(&k->word)) {
      ret = 0;
      break;
    }
#ifdef PF_PORT_WRONG
    /* The deliberate mistake: ECANCELED (a handler with SA_RESTART ran)
     * taken for a hard error. */
    if (e == ECANCELED) {
      ret = -ECANCELED;
      break;
    }
#endif
    if (e == EINTR || e == ECANCELED) {
      /* ECANCELED: a handler with SA_RESTART ran; the kernel does not
       * restart the wait, and neither does the port (wait.c (F)). */
      ret = -EINTR;
      break;
    }
    if (e != 0 && e != EAGAIN && e != ETIMEDOUT) {
      ret = -e;                          /* EFAULT, EINVAL: not ours to hide */
      break;
    }
    /* 0 (spurious), EAGAIN (the word changed: seen above), ETIMEDOUT (the
     * deadline is checked at the top, on its own clock): go round. */
  }
  errno = saved;
  return ret;
}

/* The release store is the last access to *k; FUTEX_WAKE then only uses the
 * address (a stale one causes at most a spurious wakeup). */
static void
pf_obsd_unpark(struct pf_park *k, int shared)
{
  int saved = errno;
  AO_int_store_release(&k->word, 1);
  (void)futex(&k->word, FUTEX_WAKE | (shared ? 0 : FUTEX_PRIVATE_FLAG), 1, NULL, NULL);
  errno = saved;
}

static void
pf_obsd_collect(struct pf_parker *p, struct pf_park *k, int shared)
{
  pf_park_word_collect(pf_obsd_park, p, k, shared);
}

/* The OS's own futex for the words of shared mappings (src/port.h
 * os_futex; ports/openbsd/objid.c answers PF_OBJID_KERNEL for them):
 * futex(2) without FUTEX_PRIVATE_FLAG keys a word of a MAP_INHERIT_SHARE
 * mapping by its object or amap and offset (sys_futex.c futex_addrs), as
 * Linux keys it, but has only FUTEX_WAIT (a relative timeout),
 * FUTEX_WAKE and FUTEX_REQUEUE (sys_futex.c futex_requeue: wakes n,
 * moves up to m, the timeout argument, and returns woken + moved, as
 * Linux's).  So: a wait or a wake of every bit (FUTEX_BITSET_MATCH_ANY)
 * and a plain requeue go there; the rest (a bitset of some bits,
 * cmp_requeue, wake_op) answers ENOSYS, loudly.  The deadline
 * becomes what is left of it once per call (a change of CLOCK_REALTIME
 * during the wait is not followed: a sliced wait would lose a wake that
 * comes between slices).  A handler with SA_RESTART ends the wait with
 * ECANCELED: it is issued again, as Linux restarts it, except a legacy
 * timed FUTEX_WAIT, which Linux ends with EINTR. */
static long
pf_obsd_os_futex(int op, const struct pf_req *r)
{
  int saved = errno, e;
  long ret;
  switch (op) {
  case PF_OSF_WAIT:
    if (r->mask != 0xffffffffu)
      return -ENOSYS;
    for (;;) {
      struct timespec left;
      if (r->dl && (ret = pf_deadline_left(r->dl, &left)) < 0)
        break;
      e = futex(r->uaddr, FUTEX_WAIT, (int)r->val, r->dl ? &left : NULL, NULL);
      if (e == -1)
        e = errno;                       /* else 0 or the error itself (header comment) */
      if (e == ECANCELED && !(r->dl && (r->flags & PF_F_LEGACY)))
        continue;                        /* Linux restarts it; the kernel re-reads the word */
      ret = e == ECANCELED ? -EINTR : -e;
      break;
    }
    break;
  case PF_OSF_WAKE:
    if (r->mask != 0xffffffffu)
      return -ENOSYS;
    ret = futex(r->uaddr, FUTEX_WAKE, r->nr, NULL, NULL);
    if (ret < 0)
      ret = -errno;
    break;
  case PF_OSF_REQUEUE:
    if (r->flags & PF_F_CMP)
      return -ENOSYS;                      /* no compare: it would race the caller's */
    ret = futex(r->uaddr, FUTEX_REQUEUE, r->nr, (const struct timespec *)(uintptr_t)r->nr2, r->uaddr2);
    if (ret < 0)
      ret = -errno;
    break;
  default:
    return -ENOSYS;
  }
  errno = saved;
  return ret;
}

/* Is a shared op's word in a shared mapping (ports/openbsd/objid.c; the
 * shim build asks through the shim's switch, tests/shims/openbsd/shim.h). */
#ifdef PF_SHIM
# define PF_OPENBSD_OBJID pf_shim_openbsd_object_id
#else
# define PF_OPENBSD_OBJID pf_openbsd_object_id
int pf_openbsd_object_id(const void *p, struct pf_os_objid *id);
#endif

const struct pf_port PF_PORT_VAR = {
  .name = PF_PORT_NAME,
  .gen = &pf_park_word_gen,
  .init = pf_park_word_init,
  .prepare = pf_park_word_prepare,
  .park = pf_obsd_park,
  .unpark = pf_obsd_unpark,
  .collect = pf_obsd_collect,
  .object_id = PF_OPENBSD_OBJID,
  .os_futex = pf_obsd_os_futex,
};
