/* wake.c - FUTEX_WAKE / WAKE_BITSET under emulation (FUTEX_WAKE_OP: wake_op.c).
 * Wakes are collected under the bucket lock and issued after unlocking
 * (see the ordering argument at the top of wait.c). */
#include "emu.h"
#include "os.h"

/* The slow path, out of line so the fast path below needs no frame. */
static PF_NOINLINE int
pf_emu_wake_queued(struct pf_table *tab, uint32_t idx, struct pf_key key, uint32_t mask, int nr,
                   const uint32_t *uaddr)
{
  volatile char here = 0;
  struct pf_wake_list list = { 0 };
  struct pf_crit c;
  int ret;

  pf_crit_enter(&c);                                    /* (G) in wait.c */
  pf_self_enter_fast((uintptr_t)&here);
  if (key.space == PF_KEY_SHARED_LOCAL && (ret = pf_os_shared_key_check(uaddr)) < 0)
    goto out;
  if ((ret = pf_bucket_lock(tab, idx)) < 0)
    goto out;
  PF_CRASH("wake_locked");
  if ((ret = pf_bucket_ready_locked(tab, idx)) == 0)             /* (I) in wait.c */
    ret = pf_queue_wake_locked(tab, idx, &key, mask, nr, &list);
  pf_bucket_unlock(tab, idx);
  PF_CRASH("wake_unlocked");
  pf_wake_list(&list);
out:
  pf_crit_exit(&c);
  return ret;
}

int
pf_emu_wake(const struct pf_req *r)
{
  struct pf_key key;
  struct pf_table *tab;
  uint32_t idx;
  int ret;

  if ((ret = pf_key_make(r->uaddr, r->flags, &key, &tab)) < 0)
    return ret;
  if (r->nr == 0)
    return 0;
  if ((ret = pf_key_object_os(r->uaddr, &key, &tab)) < 0)
    return ret == -PF_EOSFUTEX ? pf_emu_os_futex(PF_OSF_WAKE, r) : ret;
  if (PF_LIKELY(pf_emu_nobody_waits(tab, &key, &idx)))  /* (B) */
    return 0;                                           /* fast path: no syscall */
  return pf_emu_wake_queued(tab, idx, key, r->mask, r->nr, r->uaddr);
}
