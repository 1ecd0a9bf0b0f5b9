/* requeue.c - FUTEX_REQUEUE / CMP_REQUEUE under emulation.
 * Both bucket locks, in a fixed order; nodes move between queues and take
 * the new key.  Returns woken + requeued, like the kernel; a mismatch with
 * CMP_REQUEUE is EAGAIN with nothing done.
 *
 * Two tables.  A node is a slot of its table's memory, so it cannot move
 * to another table: a requeue from a region's word to a word outside that
 * region (this process's table or another region's) that would move a
 * waiter fails with EINVAL before anything is done (Linux moves it; NPTL
 * -style callers fall back to waking everyone on EINVAL, which is correct
 * there).  With nr_requeue 0 it is a plain wake and works. */
#include "emu.h"

int
pf_emu_requeue(const struct pf_req *r)
{
  volatile char here = 0;
  struct pf_wake_list list = { 0 };
  struct pf_crit c;
  struct pf_key k1, k2;
  struct pf_table *t1, *t2;
  struct pf_bucket *b1, *b2;
  uint32_t i1, i2;
  pf_ref ref;
  int ret, woken = 0, moved = 0;

  if ((ret = pf_key_make2_os(r, &k1, &t1, &k2, &t2)) < 0)   /* before the compare */
    return ret == -PF_EOSFUTEX ? pf_emu_os_futex(PF_OSF_REQUEUE, r) : ret;
  if ((r->flags & PF_F_CMP) && (ret = pf_word_check(r->uaddr)) < 0)
    return ret;
  if (t1 != t2 && r->nr2 > 0)
    return -EINVAL;                                     /* see above */
  i1 = pf_key_bucket(t1, &k1);
  i2 = pf_key_bucket(t2, &k2);
  b1 = &t1->buckets[i1];
  b2 = &t2->buckets[i2];

  pf_crit_enter(&c);                                    /* (G) in wait.c */
  pf_self_enter_fast((uintptr_t)&here);
  AO_int_fetch_and_add_full(&b2->waiters, 1);           /* (C) in wait.c */
  if ((ret = pf_bucket_lock2(t1, i1, t2, i2)) < 0)
    goto out_nolock;
  PF_CRASH("requeue_locked");
  if ((r->flags & PF_F_CMP) && pf_word_load(r->uaddr) != r->val) {
    ret = -EAGAIN;
    goto out_unlock;
  }
  /* (I) in wait.c: both buckets drained once, here, and the wake and the
   * requeue below act on that one snapshot: a waiter that arrives later is
   * neither woken nor moved, so nothing is moved while fewer than nr were
   * woken (a second drain between the two walks let a late waiter be moved
   * in place of a wake: counted by the caller as woken, it slept on). */
  if ((ret = pf_bucket_ready2_locked(t1, i1, t2, i2)) < 0)
    goto out_unlock;
  if (r->nr > 0)
    (void)pf_queue_wake_locked(t1, i1, &k1, PFUTEX_BITSET_MATCH_ANY, r->nr, &list);
  woken = list.n;
  if (r->nr2 > 0 && t1 == t2) {
    struct pf_walk it;
    struct pf_node *w;
    pf_walk_start(&it, t1, b1);
    while (moved < r->nr2 && (w = pf_walk_next(&it, &ref)) != NULL) {
      if (AO_int_load(&w->state) != PF_W_QUEUED || !pf_node_keyeq(w, &k1) || pf_node_is_pi(w))
        continue;                                       /* (a PI waiter: src/pi.c) */
      if (t1->slots && t1->ops->reap(t1, b1, w, ref))
        continue;                                       /* its process died */
      if (b1 != b2) {
        /* The count first, then the node's key and bucket (a rebuild after
         * a crash here files the node by its key), then the queues. */
        AO_int_fetch_and_add_full(&b2->waiters, 1);
        pf_node_setkey(w, &k2);
        AO_int_store_release(&w->bucket, i2);           /* (E): under both locks */
        PF_CRASH("requeue_rekeyed");
        pf_queue_unlink_locked(t1, b1, w);
        AO_int_fetch_and_add_full(&b1->waiters, (unsigned int)-1);
        pf_queue_append_locked(t2, b2, w, ref);
        PF_CRASH("requeue_moved");
      } else {
        pf_node_setkey(w, &k2);
      }
      moved++;
    }
  }
  ret = woken + moved;
out_unlock:
  pf_bucket_unlock2(t1, i1, t2, i2);
out_nolock:
  AO_int_fetch_and_add_full(&b2->waiters, (unsigned int)-1);
  pf_wake_list(&list);
  pf_crit_exit(&c);
  return ret;
}
