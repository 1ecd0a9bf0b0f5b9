/* futex.c - the compatibility multiplexer: decode, validate, dispatch.
 *
 * pfutex() takes Linux futex(2)'s arguments and applies the kernel's rules in
 * the kernel's order (checked against Linux 6.18, see tests/errno_*.c):
 *   1. a timeout is read and validated first, for the ops that take one
 *      (EINVAL for tv_sec < 0 or tv_nsec outside [0, 1e9));
 *   2. FUTEX_CLOCK_REALTIME with anything but WAIT_BITSET: ENOSYS (the
 *      kernel also allows WAIT_REQUEUE_PI and LOCK_PI2: the PI ops go to
 *      a backend's own hook, the native one's, or are ENOSYS);
 *   3. per op: zero bitset EINVAL, negative requeue counts EINVAL, then the
 *      addresses (alignment EINVAL, faults EFAULT: the backend's job, since
 *      only it knows which memory it touches).
 * The timeout pointer itself is untrusted: it is copied in with
 * pf_req_deadline (EFAULT, never a signal).  A backend with a raw hook (the
 * native one) takes the supported ops undecoded and the kernel makes every
 * check itself.
 * Legacy quirks kept: WAKE/WAKE_OP with a count <= 0 wake one (the kernel's
 * loop counts before it compares), REQUEUE and CMP_REQUEUE return woken +
 * requeued, val2 travels in the timeout slot.
 */
#include "pf.h"
#ifdef PF_HAVE_EMU
# include "emu.h"
#endif

static long
pf_errno(long r)
{
  if (r < 0) {
    errno = (int)-r;
    return -1;
  }
  return r;
}

/* The kernel's futex_wake loop: "if (++ret >= nr_wake) break". */
static int
pf_legacy_count(int nr)
{
  return nr <= 0 ? 1 : nr;
}

/* The request path: everything but the fast paths in pfutex() below. */
static PF_NOINLINE long
pf_futex_req(uint32_t *uaddr, int op, uint32_t val, const struct timespec *timeout,
             uint32_t *uaddr2, uint32_t val3)
{
  const struct pf_backend *be = pf_backend_get();
  const int cmd = op & ~(PF_OP_PRIVATE_FLAG | PF_OP_CLOCK_REALTIME);
  const int realtime = (op & PF_OP_CLOCK_REALTIME) != 0;
  struct pf_deadline dl;
  struct pf_req r = { 0 };
  int ret;

  if (!be)
    return pf_errno(-ENOSYS);
  if (be->pi && (cmd == PF_OP_LOCK_PI || cmd == PF_OP_UNLOCK_PI || cmd == PF_OP_TRYLOCK_PI
                 || (cmd >= PF_OP_WAIT_REQUEUE_PI && cmd <= PF_OP_LOCK_PI2)))
    return pf_errno(be->pi(uaddr, op, val, timeout, uaddr2, val3));
  if (be->raw && cmd <= PF_OP_WAKE_BITSET && cmd != PF_OP_FD)
    return pf_errno(be->raw(uaddr, op, val, timeout, uaddr2, val3));
  r.flags = PF_F_LEGACY | ((op & PF_OP_PRIVATE_FLAG) ? 0 : PF_F_SHARED);
  r.uaddr = uaddr;
  r.uaddr2 = uaddr2;

  if (timeout && (cmd == PF_OP_WAIT || cmd == PF_OP_WAIT_BITSET || cmd == PF_OP_LOCK_PI
                  || cmd == PF_OP_LOCK_PI2 || cmd == PF_OP_WAIT_REQUEUE_PI)) {
    r.uts = timeout;
    r.uts_kind = cmd == PF_OP_WAIT ? PF_TS_REL : PF_TS_ABS;
    r.clock = realtime || cmd == PF_OP_LOCK_PI ? PFUTEX_CLOCK_REALTIME : PFUTEX_CLOCK_MONOTONIC;
    if ((ret = pf_req_deadline(&r, &dl)) < 0)
      return pf_errno(ret);
    r.dl = &dl;
  }
  if (realtime && cmd != PF_OP_WAIT_BITSET && cmd != PF_OP_WAIT_REQUEUE_PI
      && cmd != PF_OP_LOCK_PI2)
    return pf_errno(-ENOSYS);

  switch (cmd) {
  case PF_OP_WAIT:
    val3 = PFUTEX_BITSET_MATCH_ANY;
    /* fall through */
  case PF_OP_WAIT_BITSET:
    if (!val3)
      return pf_errno(-EINVAL);
    r.val = val;
    r.mask = val3;
    return pf_errno(be->wait(&r));
  case PF_OP_WAKE:
    val3 = PFUTEX_BITSET_MATCH_ANY;
    /* fall through */
  case PF_OP_WAKE_BITSET:
    if (!val3)
      return pf_errno(-EINVAL);
    r.mask = val3;
    r.nr = pf_legacy_count((int)val);
    return pf_errno(be->wake(&r));
  case PF_OP_CMP_REQUEUE:
    r.flags |= PF_F_CMP;
    r.val = val3;
    /* fall through */
  case PF_OP_REQUEUE:
    r.nr = (int)val;
    r.nr2 = (int)(uintptr_t)timeout;
    if (r.nr < 0 || r.nr2 < 0)
      return pf_errno(-EINVAL);
    return pf_errno(be->requeue(&r));
  case PF_OP_WAKE_OP:
    r.nr = pf_legacy_count((int)val);
    r.nr2 = pf_legacy_count((int)(uintptr_t)timeout);
    r.wakeop = val3;
    return pf_errno(be->wake_op(&r));
  case PF_OP_WAIT_REQUEUE_PI:
    r.val = val;
    r.mask = PFUTEX_BITSET_MATCH_ANY;
    goto pi;
  case PF_OP_CMP_REQUEUE_PI:
    r.flags |= PF_F_CMP;
    r.val = val3;
    r.nr = (int)val;
    r.nr2 = (int)(uintptr_t)timeout;
    goto pi;
  case PF_OP_LOCK_PI:
  case PF_OP_LOCK_PI2:
  case PF_OP_TRYLOCK_PI:
  case PF_OP_UNLOCK_PI:
  pi:
    if (!be->pi_req)
      return pf_errno(-ENOSYS);
    return pf_errno(be->pi_req(&r, cmd));
  default:
    /* FUTEX_FD (gone since 2.6.26) and every unknown op. */
    return pf_errno(-ENOSYS);
  }
}

/* Under emulation, an untimed FUTEX_WAIT on a mismatched word and a
 * FUTEX_WAKE with nobody waiting are answered here, before any decoding
 * (the same fast paths as the clean calls, src/api.c); every other call,
 * and these when a check fails, take the request path. */
long
pfutex(uint32_t *uaddr, int op, uint32_t val, const struct timespec *timeout,
       uint32_t *uaddr2, uint32_t val3)
{
#ifdef PF_HAVE_EMU
  if (pf_backend_state() & PF_BE_EMU) {
    const int cmd = op & ~PF_OP_PRIVATE_FLAG;
    if (cmd == PF_OP_WAIT && !timeout && pf_wait_mismatch(uaddr, val)
        && ((op & PF_OP_PRIVATE_FLAG) || pf_emu_mismatch_keyed(uaddr))) {
      errno = EAGAIN;
      return -1;
    }
    if (cmd == PF_OP_WAKE
        && pf_emu_wake_idle(uaddr, (op & PF_OP_PRIVATE_FLAG) ? 0 : PF_F_SHARED))
      return 0;
  }
#endif
  return pf_futex_req(uaddr, op, val, timeout, uaddr2, val3);
}
