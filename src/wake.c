/* wake.c - FUTEX_WAKE / WAKE_BITSET and FUTEX_WAKE_OP under emulation.
 * Wakes are collected under the bucket lock and issued after unlocking
 * (see the ordering argument at the top of wait.c). */
#include "emu.h"

/* The slow path, out of line so the fast path below needs no frame. */
static PF_NOINLINE int
pf_emu_wake_queued(struct pf_bucket *b, struct pf_key key, uint32_t mask, int nr)
{
  struct pf_waiter *list = NULL, **tail = &list;
  int ret;

  pf_bucket_lock(b);
  ret = pf_queue_wake_locked(b, &key, mask, nr, &tail);
  pf_bucket_unlock(b);
  pf_wake_list(list);
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
  return pf_emu_wake_queued(b, key, r->mask, r->nr);
}

/* The op on *uaddr2 happens under both bucket locks, so a waiter of uaddr2
 * that compared the old value is either queued (and seen by the second
 * wake) or reads the new value. */
int
pf_emu_wake_op(const struct pf_req *r)
{
  struct pf_waiter *list = NULL, **tail = &list;
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
  i1 = pf_key_bucket(&k1);
  i2 = pf_key_bucket(&k2);
  pf_bucket_lock2(i1, i2);
  do
    old = AO_int_load((volatile unsigned int *)r->uaddr2);
  while (!AO_int_compare_and_swap_full((volatile unsigned int *)r->uaddr2, old,
                                       pf_wakeop_apply(r->wakeop, old)));
  cmp = pf_wakeop_compare(r->wakeop, old);
  if (cmp < 0) {
    pf_bucket_unlock2(i1, i2);
    return cmp;                                         /* stored, then ENOSYS */
  }
  if (r->nr > 0)
    n = pf_queue_wake_locked(&pf_table.buckets[i1], &k1, PFUTEX_BITSET_MATCH_ANY, r->nr, &tail);
  if (cmp && r->nr2 > 0)
    n += pf_queue_wake_locked(&pf_table.buckets[i2], &k2, PFUTEX_BITSET_MATCH_ANY, r->nr2, &tail);
  pf_bucket_unlock2(i1, i2);
  pf_wake_list(list);
  return n;
}
