/* api.c - the clean single-purpose calls: validate, decode, dispatch.
 * Modelled on Linux 6.7's futex_wait(2), futex_wake(2) and futex_requeue(2):
 * one flag word (PFUTEX_PRIVATE, nothing else: unknown bits are EINVAL),
 * absolute deadlines on a named clock, a wake count of 0 that wakes none.
 * Unlike the multiplexer, a negative count is EINVAL. */
#include "pf.h"

static int
pf_errno(int r)
{
  if (r < 0) {
    errno = -r;
    return -1;
  }
  return r;
}

static int
pf_req_init(struct pf_req *r, const struct pf_backend **be, unsigned int flags)
{
  *be = pf_backend_get();
  if (!*be)
    return -ENOSYS;
  if (flags & ~PFUTEX_PRIVATE)
    return -EINVAL;
  r->flags = (flags & PFUTEX_PRIVATE) ? 0 : PF_F_SHARED;
  return 0;
}

int
pfutex_wait(uint32_t *uaddr, uint32_t val, uint32_t mask, unsigned int flags,
            const struct timespec *deadline, int clockid)
{
  const struct pf_backend *be;
  struct pf_req r = { 0 };
  struct pf_deadline dl;
  int ret;

  if ((ret = pf_req_init(&r, &be, flags)) < 0)
    return pf_errno(ret);
  if (deadline) {
    if ((ret = pf_deadline_from_abs(&dl, deadline, clockid)) < 0)
      return pf_errno(ret);
    r.dl = &dl;
  }
  if (!mask)
    return pf_errno(-EINVAL);
  r.uaddr = uaddr;
  r.val = val;
  r.mask = mask;
  return pf_errno(be->wait(&r));
}

int
pfutex_wake(uint32_t *uaddr, uint32_t mask, int nr, unsigned int flags)
{
  const struct pf_backend *be;
  struct pf_req r = { 0 };
  int ret;

  if ((ret = pf_req_init(&r, &be, flags)) < 0)
    return pf_errno(ret);
  if (!mask || nr < 0)
    return pf_errno(-EINVAL);
  r.uaddr = uaddr;
  r.mask = mask;
  r.nr = nr;
  return pf_errno(be->wake(&r));
}

static int
pf_requeue_common(uint32_t *uaddr, uint32_t *uaddr2, int nr_wake, int nr_requeue,
                  unsigned int flags, int cmp, uint32_t val)
{
  const struct pf_backend *be;
  struct pf_req r = { 0 };
  int ret;

  if ((ret = pf_req_init(&r, &be, flags)) < 0)
    return pf_errno(ret);
  if (nr_wake < 0 || nr_requeue < 0)
    return pf_errno(-EINVAL);
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
  const struct pf_backend *be;
  struct pf_req r = { 0 };
  int ret;

  if ((ret = pf_req_init(&r, &be, flags)) < 0)
    return pf_errno(ret);
  if (nr_wake < 0 || nr_wake2 < 0)
    return pf_errno(-EINVAL);
  r.uaddr = uaddr;
  r.uaddr2 = uaddr2;
  r.nr = nr_wake;
  r.nr2 = nr_wake2;
  r.wakeop = op;
  return pf_errno(be->wake_op(&r));
}
