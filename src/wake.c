/* wake.c - FUTEX_WAKE / WAKE_BITSET and FUTEX_WAKE_OP under emulation.
 * Wakes are collected under the bucket lock and issued after unlocking
 * (see the ordering argument at the top of wait.c). */
#include "emu.h"
#include "os.h"

/* The slow path, out of line so the fast path below needs no frame. */
static PF_NOINLINE int
pf_emu_wake_queued(struct pf_bucket *b, struct pf_key key, uint32_t mask, int nr,
                   const uint32_t *uaddr)
{
  volatile char here = 0;
  struct pf_waiter *list = NULL, **tail = &list;
  struct pf_crit c;
  int ret;

  pf_crit_enter(&c);                                    /* (G) in wait.c */
  pf_self_enter_fast((uintptr_t)&here);
  if (key.space != PF_KEY_PRIVATE && (ret = pf_os_shared_key_check(uaddr)) < 0)
    goto out;
  pf_bucket_lock(b);
  ret = pf_queue_wake_locked(b, &key, mask, nr, &tail);
  pf_bucket_unlock(b);
  pf_wake_list(list);
out:
  pf_crit_exit(&c);
  return ret;
}

int
pf_emu_wake(const struct pf_req *r)
{
  struct pf_key key;
  struct pf_bucket *b;
  int ret;

  if ((ret = pf_key_make(r->uaddr, r->flags, &key)) < 0)
    return ret;
  if (r->nr == 0)
    return 0;
  if (PF_LIKELY(pf_emu_nobody_waits(&key, &b)))          /* (B) */
    return 0;                                           /* fast path: no syscall */
  return pf_emu_wake_queued(b, key, r->mask, r->nr, r->uaddr);
}

/* The op on *uaddr2 happens under both bucket locks, so a waiter of uaddr2
 * that compared the old value is either queued (and seen by the second
 * wake) or reads the new value. */
int
pf_emu_wake_op(const struct pf_req *r)
{
  volatile char here = 0;
  struct pf_waiter *list = NULL, **tail = &list;
  struct pf_crit c;
  struct pf_key k1, k2;
  uintptr_t i1, i2;
  unsigned int old;
  int ret, cmp, n = 0;

  if ((ret = pf_key_make(r->uaddr, r->flags, &k1)) < 0)
    return ret;
  if ((ret = pf_key_make(r->uaddr2, r->flags, &k2)) < 0)
    return ret;
  if (!pf_wakeop_valid_op(r->wakeop))
    return -ENOSYS;                                     /* nothing stored */
  if ((ret = pf_word_check(r->uaddr2)) < 0)
    return ret;
  /* The op stores under both bucket locks: make sure first that the store
   * cannot fault (Linux: EFAULT from a probe; elsewhere a no-op atomic
   * write faults here, with no lock held). */
  if ((ret = pf_os_probe_write(r->uaddr2)) < 0)
    return ret;
  (void)AO_int_fetch_and_add_full((volatile unsigned int *)r->uaddr2, 0);
  i1 = pf_key_bucket(&k1);
  i2 = pf_key_bucket(&k2);
  pf_crit_enter(&c);                                    /* (G) in wait.c */
  pf_self_enter_fast((uintptr_t)&here);
  pf_bucket_lock2(i1, i2);
  do
    old = AO_int_load((volatile unsigned int *)r->uaddr2);
  while (!AO_int_compare_and_swap_full((volatile unsigned int *)r->uaddr2, old,
                                       pf_wakeop_apply(r->wakeop, old)));
  cmp = pf_wakeop_compare(r->wakeop, old);
  if (cmp < 0) {
    pf_bucket_unlock2(i1, i2);
    pf_crit_exit(&c);
    return cmp;                                         /* stored, then ENOSYS */
  }
  if (r->nr > 0)
    n = pf_queue_wake_locked(&pf_table.buckets[i1], &k1, PFUTEX_BITSET_MATCH_ANY, r->nr, &tail);
  if (cmp && r->nr2 > 0)
    n += pf_queue_wake_locked(&pf_table.buckets[i2], &k2, PFUTEX_BITSET_MATCH_ANY, r->nr2, &tail);
  pf_bucket_unlock2(i1, i2);
  pf_wake_list(list);
  pf_crit_exit(&c);
  return n;
}
