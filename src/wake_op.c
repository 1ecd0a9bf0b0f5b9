/* wake_op.c - FUTEX_WAKE_OP under emulation: the op on *uaddr2 and the
 * two wakes, under both bucket locks (the encoding: src/futex_op.c).
 * Wakes are collected under the locks and issued after unlocking (see the
 * ordering argument at the top of wait.c). */
#include "emu.h"
#include "os.h"

/* The op on *uaddr2 happens under both bucket locks, so a waiter of uaddr2
 * that compared the old value is either queued (and seen by the second
 * wake) or reads the new value.  The two words may be in two tables (a
 * region and this process's, or two regions): both locks, in the tables'
 * order; each wake list unparks its own table's nodes. */
int
pf_emu_wake_op(const struct pf_req *r)
{
  volatile char here = 0;
  struct pf_wake_list l1 = { 0 }, l2 = { 0 };
  struct pf_crit c;
  struct pf_key k1, k2;
  struct pf_table *t1, *t2;
  uint32_t i1, i2;
  unsigned int old;
  int ret, cmp, n = 0, err = 0;

  if ((ret = pf_key_make2_os(r, &k1, &t1, &k2, &t2)) < 0)   /* nothing stored yet */
    return ret == -PF_EOSFUTEX ? pf_emu_os_futex(PF_OSF_WAKE_OP, r) : ret;
  if (!pf_wakeop_valid_op(r->wakeop))
    return -ENOSYS;                                     /* nothing stored */
  if ((ret = pf_word_check(r->uaddr2)) < 0)
    return ret;
  /* The op stores under both bucket locks: make sure first that the store
   * cannot fault (a guarded no-op atomic write, with no lock held; the
   * OS's probe where no guard is in place). */
  if ((ret = pf_os_word_touch(r->uaddr2)) < 0)
    return ret;
  i1 = pf_key_bucket(t1, &k1);
  i2 = pf_key_bucket(t2, &k2);
  pf_crit_enter(&c);                                    /* (G) in wait.c */
  pf_self_enter_fast((uintptr_t)&here);
  if ((ret = pf_bucket_lock2(t1, i1, t2, i2)) < 0) {
    pf_crit_exit(&c);
    return ret;
  }
  PF_CRASH("wake_op_locked");
  do
    old = AO_int_load((volatile unsigned int *)r->uaddr2);
  while (!AO_int_compare_and_swap_full((volatile unsigned int *)r->uaddr2, old,
                                       pf_wakeop_apply(r->wakeop, old)));
  PF_CRASH("wake_op_stored");
  cmp = pf_wakeop_compare(r->wakeop, old);
  if (cmp < 0) {
    pf_bucket_unlock2(t1, i1, t2, i2);
    pf_crit_exit(&c);
    return cmp;                                         /* stored, then ENOSYS */
  }
  /* (I) in wait.c: each bucket drained once, after the store (H). */
  if ((ret = pf_bucket_ready2_locked(t1, i1, t2, i2)) < 0) {
    err = ret;
  } else {
    if (r->nr > 0)
      (void)pf_queue_wake_locked(t1, i1, &k1, PFUTEX_BITSET_MATCH_ANY, r->nr, &l1);
    if (cmp && r->nr2 > 0)
      (void)pf_queue_wake_locked(t2, i2, &k2, PFUTEX_BITSET_MATCH_ANY, r->nr2, &l2);
  }
  pf_bucket_unlock2(t1, i1, t2, i2);
  pf_wake_list(&l1);
  pf_wake_list(&l2);
  pf_crit_exit(&c);
  n = l1.n + l2.n;
  return err && n == 0 ? err : n;
}
