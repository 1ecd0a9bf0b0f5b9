/* api.c - the clean single-purpose calls: validate, decode, dispatch.
 * Modelled on Linux 6.7's futex_wait(2), futex_wake(2) and futex_requeue(2):
 * one flag word (PFUTEX_PRIVATE, nothing else: unknown bits are EINVAL),
 * absolute deadlines on a named clock, a wake count of 0 that wakes none.
 * Unlike the multiplexer, a negative count is EINVAL. */
#include "pf.h"
#include "os.h"
#ifdef PF_HAVE_EMU
# include "emu.h"
#endif

/* The error exit, out of line: the fast paths stay frameless. */
static PF_NOINLINE int
pf_fail(int err)
{
  errno = err;
  return -1;
}

static inline int
pf_errno(int r)
{
  return PF_LIKELY(r >= 0) ? r : pf_fail(-r);
}

static inline unsigned int
pf_req_flags(unsigned int flags)
{
  return (flags & PFUTEX_PRIVATE) ? 0 : PF_F_SHARED;
}

/* Each call is a fast path and a request path.  The fast path runs only
 * when the backend is the emulation engine and the arguments pass every
 * check; everything else (the first call, no backend, bad arguments, a
 * wait that must queue) takes the request path, which checks in Linux's
 * order.  The request paths are out of line, so the fast paths need no
 * frame and reach them by a tail call. */
static PF_NOINLINE int
pf_wait_req(uint32_t *uaddr, uint32_t val, uint32_t mask, unsigned int flags,
            const struct timespec *deadline, int clockid)
{
  const struct pf_backend *be = pf_backend_get();
  struct pf_req r = { 0 };
  struct pf_deadline dl;
  int ret;

  if (PF_UNLIKELY(!be))
    return pf_fail(ENOSYS);
  if (PF_UNLIKELY(flags & ~PFUTEX_PRIVATE))
    return pf_fail(EINVAL);
  r.uaddr = uaddr;
  r.val = val;
  r.mask = mask;
  r.flags = pf_req_flags(flags);
  r.uts = deadline;
  r.uts_kind = deadline ? PF_TS_ABS : PF_TS_NONE;
  r.clock = clockid;
  if (!(be->caps & PF_BE_KERNEL)) {
    /* Linux validates the timeout (clock, pointer, values) before anything
     * about the word; the kernel backend leaves all of it to the kernel. */
    if ((ret = pf_req_deadline(&r, &dl)) < 0)
      return pf_fail(-ret);
    if (ret > 0)
      r.dl = &dl;
    if (PF_UNLIKELY(!mask))
      return pf_fail(EINVAL);
  }
  return pf_errno(be->wait(&r));
}

int
pfutex_wait(uint32_t *uaddr, uint32_t val, uint32_t mask, unsigned int flags,
            const struct timespec *deadline, int clockid)
{
#ifdef PF_HAVE_EMU
  if ((pf_backend_state() & PF_BE_EMU) && !(flags & ~PFUTEX_PRIVATE) && mask && !deadline
      && pf_wait_mismatch(uaddr, val)
      && ((flags & PFUTEX_PRIVATE) || pf_emu_mismatch_keyed(uaddr))) {
    errno = EAGAIN;
    return -1;
  }
#endif
  return pf_wait_req(uaddr, val, mask, flags, deadline, clockid);
}

static PF_NOINLINE int
pf_wake_req(uint32_t *uaddr, uint32_t mask, int nr, unsigned int flags)
{
  const struct pf_backend *be = pf_backend_get();
  struct pf_req r = { 0 };

  if (PF_UNLIKELY(!be))
    return pf_fail(ENOSYS);
  if (PF_UNLIKELY((flags & ~PFUTEX_PRIVATE) || !mask || nr < 0))
    return pf_fail(EINVAL);
  r.uaddr = uaddr;
  r.mask = mask;
  r.nr = nr;
  r.flags = pf_req_flags(flags);
  return pf_errno(be->wake(&r));
}

int
pfutex_wake(uint32_t *uaddr, uint32_t mask, int nr, unsigned int flags)
{
#ifdef PF_HAVE_EMU
  if ((pf_backend_state() & PF_BE_EMU) && !(flags & ~PFUTEX_PRIVATE) && mask && nr > 0
      && pf_emu_wake_idle(uaddr, pf_req_flags(flags)))
    return 0;
#endif
  return pf_wake_req(uaddr, mask, nr, flags);
}

static int
pf_requeue_common(uint32_t *uaddr, uint32_t *uaddr2, int nr_wake, int nr_requeue,
                  unsigned int flags, int cmp, uint32_t val)
{
  const struct pf_backend *be = pf_backend_get();
  struct pf_req r = { 0 };

  if (PF_UNLIKELY(!be))
    return pf_fail(ENOSYS);
  if (flags & ~PFUTEX_PRIVATE)
    return pf_fail(EINVAL);
  r.flags = pf_req_flags(flags);
  if (nr_wake < 0 || nr_requeue < 0)
    return pf_fail(EINVAL);
  r.uaddr = uaddr;
  r.uaddr2 = uaddr2;
  r.nr = nr_wake;
  r.nr2 = nr_requeue;
  if (cmp) {
    r.flags |= PF_F_CMP;
    r.val = val;
  }
  return pf_errno(be->requeue(&r));
}

int
pfutex_requeue(uint32_t *uaddr, uint32_t *uaddr2, int nr_wake, int nr_requeue,
               unsigned int flags)
{
  return pf_requeue_common(uaddr, uaddr2, nr_wake, nr_requeue, flags, 0, 0);
}

int
pfutex_cmp_requeue(uint32_t *uaddr, uint32_t val, uint32_t *uaddr2, int nr_wake,
                   int nr_requeue, unsigned int flags)
{
  return pf_requeue_common(uaddr, uaddr2, nr_wake, nr_requeue, flags, 1, val);
}

int
pfutex_wake_op(uint32_t *uaddr, uint32_t *uaddr2, int nr_wake, int nr_wake2,
               uint32_t op, unsigned int flags)
{
  const struct pf_backend *be = pf_backend_get();
  struct pf_req r = { 0 };

  if (PF_UNLIKELY(!be))
    return pf_fail(ENOSYS);
  if (flags & ~PFUTEX_PRIVATE)
    return pf_fail(EINVAL);
  r.flags = pf_req_flags(flags);
  if (nr_wake < 0 || nr_wake2 < 0)
    return pf_fail(EINVAL);
  r.uaddr = uaddr;
  r.uaddr2 = uaddr2;
  r.nr = nr_wake;
  r.nr2 = nr_wake2;
  r.wakeop = op;
  return pf_errno(be->wake_op(&r));
}

/* ---- futex_waitv, PI ids, robust lists ---------------------------------- */
/* Each goes to the backend's hook (the native one: the kernel as it is);
 * a backend without one answers ENOSYS. */
long
pfutex_waitv(struct pfutex_waitv *waiters, unsigned int nr_futexes, unsigned int flags,
             const struct timespec *timeout, int clockid)
{
  const struct pf_backend *be = pf_backend_get();
  if (!be || !be->waitv)
    return pf_fail(ENOSYS);
  return pf_errno((int)be->waitv(waiters, nr_futexes, flags, timeout, clockid));
}

int
pfutex_set_robust_list(struct robust_list_head *head, size_t len)
{
  const struct pf_backend *be = pf_backend_get();
  if (!be || !be->robust_set)
    return pf_fail(ENOSYS);
  return pf_errno((int)be->robust_set(head, len));
}

int
pfutex_get_robust_list(int pid, struct robust_list_head **head, size_t *len)
{
  const struct pf_backend *be = pf_backend_get();
  if (!be || !be->robust_get)
    return pf_fail(ENOSYS);
  return pf_errno((int)be->robust_get(pid, head, len));
}

pid_t
pfutex_tid(void)
{
  return pf_os_tid();
}
