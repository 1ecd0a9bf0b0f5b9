/* native.c - the native Linux backend: the kernel is the futex engine.
 *
 * At first use (once, under the backend selection's pthread_once) it probes
 * the single-purpose syscalls futex_wake/futex_wait/futex_requeue (Linux
 * 6.7+) and falls back to the multiplexed futex(2) when any answers ENOSYS;
 * on 32-bit the old call is futex_time64 when the kernel has it.  Each
 * decoded request is then mapped onto the family in use; what the futex2
 * family lacks goes through the old call:
 *   - FUTEX_REQUEUE (no compare) and FUTEX_WAKE_OP;
 *   - timed waits that came through pfutex(): futex(2) answers EINTR after
 *     any signal handler, while futex_wait(2) restarts under SA_RESTART.
 */
#include "sys.h"
#include "os.h"

#include <string.h>

static int pf_native_f2;           /* futex2 family in use; set once at init */
static uint32_t pf_native_dummy;   /* a word nobody waits on (wake_op with nr_wake 0) */

static int
pf_native_futex2_works(void)
{
  uint32_t w = 0;
  if (pf_linux_futex_wake2(&w, ~0u, 0, PF_FUTEX2_PRIVATE) == -ENOSYS)
    return 0;
  if (pf_linux_futex_wait2(&w, 1, ~0u, PF_FUTEX2_PRIVATE, NULL, 1) == -ENOSYS)
    return 0;
  /* futex_requeue with a mismatching value: EAGAIN, no side effect. */
  if (pf_linux_futex_requeue2(&w, 1, &w, PF_FUTEX2_PRIVATE, 0, 0) == -ENOSYS)
    return 0;
  return 1;
}

static int
pf_native_init(const struct pf_backend *self, const char *want, const char **reported)
{
  enum pf_linux_old old = pf_linux_sys_init();
  const char *oldname = old == PF_LINUX_OLD_TIME64 ? "linux:futex_time64" : "linux:futex";

  if (strcmp(want, "linux") == 0 || strcmp(want, "linux:futex2") == 0) {
    pf_native_f2 = pf_native_futex2_works();
    if (!pf_native_f2 && strcmp(want, "linux:futex2") == 0)
      return -ENOSYS;
    *reported = pf_native_f2 ? "linux:futex2" : oldname;
    return 0;
  }
  if (strcmp(want, "linux:futex") == 0) {
    pf_linux_sys_force_time32();
    pf_native_f2 = 0;
    *reported = "linux:futex";
    return 0;
  }
  if (strcmp(want, oldname) == 0) {
    pf_native_f2 = 0;
    *reported = oldname;
    return 0;
  }
  return -ENOSYS;   /* e.g. linux:futex_time64 on 64-bit, or a typo */
}

static unsigned int
pf_f2flags(const struct pf_req *r)
{
  return (r->flags & PF_F_SHARED) ? 0 : PF_FUTEX2_PRIVATE;
}

static int
pf_oldflags(const struct pf_req *r)
{
  return (r->flags & PF_F_SHARED) ? 0 : PF_OP_PRIVATE_FLAG;
}

/* The clean call: futex_wait(2) reads the caller's deadline itself (on
 * 64-bit it has struct __kernel_timespec's layout); elsewhere, and on the
 * old call, the deadline is copied in safely first (EFAULT, never a signal),
 * in futex_wait(2)'s order: clock, pointer, values, then the mask. */
static int
pf_native_wait(const struct pf_req *r)
{
  struct pf_deadline dl;
  int op, ret;
#if SIZEOF_VOID_P == 8 && !defined(__ILP32__)
  if (pf_native_f2)
    return (int)pf_linux_futex_wait2(r->uaddr, r->val, r->mask, pf_f2flags(r), r->uts,
                                     r->clock);   /* PFUTEX_CLOCK_* are Linux's numbers */
#endif
  if ((ret = pf_req_deadline(r, &dl)) < 0)
    return ret;
  if (pf_native_f2) {
    struct { int64_t tv_sec, tv_nsec; } k;
    if (ret > 0) {
      k.tv_sec = dl.abs.tv_sec;
      k.tv_nsec = dl.abs.tv_nsec;
    }
    return (int)pf_linux_futex_wait2(r->uaddr, r->val, r->mask, pf_f2flags(r),
                                     ret > 0 ? &k : NULL, ret > 0 ? dl.clock : PFUTEX_CLOCK_MONOTONIC);
  }
  op = PF_OP_WAIT_BITSET | pf_oldflags(r);
  if (ret > 0 && dl.clock == PFUTEX_CLOCK_REALTIME)
    op |= PF_OP_CLOCK_REALTIME;
  return (int)pf_linux_futex(r->uaddr, op, r->val, ret > 0 ? &dl.abs : NULL, 0, NULL, r->mask);
}

/* The checks the kernel makes on a futex address before it has a key, for
 * the cases where pfutex answers without asking it. */
static int
pf_native_addr_check(const struct pf_req *r, const uint32_t *a)
{
  if (!PF_ALIGNED(a))
    return -EINVAL;
  if ((r->flags & PF_F_SHARED) ? pf_addr_unreadable(a) : pf_addr_out_of_range(a))
    return -EFAULT;
  return 0;
}

static int
pf_native_wake(const struct pf_req *r)
{
  if (pf_native_f2)
    return (int)pf_linux_futex_wake2(r->uaddr, r->mask, r->nr, pf_f2flags(r));
  if (r->nr == 0)   /* only the clean call asks for none; the old call would wake one */
    return pf_native_addr_check(r, r->uaddr);
  return (int)pf_linux_futex(r->uaddr, PF_OP_WAKE_BITSET | pf_oldflags(r), (uint32_t)r->nr,
                             NULL, 0, NULL, r->mask);
}

static int
pf_native_requeue(const struct pf_req *r)
{
  int op = ((r->flags & PF_F_CMP) ? PF_OP_CMP_REQUEUE : PF_OP_REQUEUE) | pf_oldflags(r);
  if (pf_native_f2 && (r->flags & PF_F_CMP))
    return (int)pf_linux_futex_requeue2(r->uaddr, r->val, r->uaddr2, pf_f2flags(r), r->nr, r->nr2);
  return (int)pf_linux_futex(r->uaddr, op, (uint32_t)r->nr, NULL, (uintptr_t)(unsigned)r->nr2,
                             r->uaddr2, r->val);
}

/* WAKE_OP.  The kernel wakes at least one on each side, so the clean call's
 * counts of 0 need help: nr_wake 0 points the first wake at a word nobody
 * waits on; nr_wake2 0 means the comparison can wake nobody, so the
 * operation is applied in user space (atomically, with libatomic_ops) and
 * only uaddr is woken: no waiter can tell the difference, since the kernel's
 * bucket locks only order the second wake. */
static int
pf_native_wake_op(const struct pf_req *r)
{
  uint32_t *u1 = r->uaddr;
  int ret, cmp;
  unsigned int old;

  if (r->nr == 0 || r->nr2 == 0) {
    if ((ret = pf_native_addr_check(r, r->uaddr)) < 0)
      return ret;
    u1 = &pf_native_dummy;
  }
  if (r->nr2 != 0)
    return (int)pf_linux_futex(u1, PF_OP_WAKE_OP | pf_oldflags(r), (uint32_t)(r->nr ? r->nr : 1),
                               NULL, (uintptr_t)(unsigned)r->nr2, r->uaddr2, r->wakeop);
  if (!PF_ALIGNED(r->uaddr2))
    return -EINVAL;
  if (pf_addr_out_of_range(r->uaddr2))
    return -EFAULT;
  if (!pf_wakeop_valid_op(r->wakeop))
    return -ENOSYS;
  /* The kernel's atomic op answers EFAULT for memory it cannot write; in
   * user space a store would raise SIGSEGV: ask first (src/os.h). */
  if ((ret = pf_os_probe_write(r->uaddr2)) < 0)
    return ret;
  do
    old = AO_int_load((volatile unsigned int *)r->uaddr2);
  while (!AO_int_compare_and_swap_full((volatile unsigned int *)r->uaddr2, old,
                                       pf_wakeop_apply(r->wakeop, old)));
  if ((cmp = pf_wakeop_compare(r->wakeop, old)) < 0)
    return cmp;
  if (r->nr == 0)
    return 0;
  return pf_native_wake(&(struct pf_req){ .uaddr = r->uaddr, .mask = PFUTEX_BITSET_MATCH_ANY,
                                          .nr = r->nr, .flags = r->flags });
}

const struct pf_backend pf_backend_linux = {
  .name = "linux",
  .init = pf_native_init,
  .wait = pf_native_wait,
  .wake = pf_native_wake,
  .requeue = pf_native_requeue,
  .wake_op = pf_native_wake_op,
  .raw = pf_linux_futex_raw,
  .caps = PF_BE_KERNEL,
  .pi = pf_linux_futex_raw,
  .waitv = pf_linux_futex_waitv,
  .robust_set = pf_linux_set_robust_list,
  .robust_get = pf_linux_get_robust_list,
};
