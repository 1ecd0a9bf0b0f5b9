/* requeue.c - FUTEX_REQUEUE / CMP_REQUEUE under emulation.
 * Both bucket locks, in index order; nodes move between queues and take the
 * new key.  Returns woken + requeued, like the kernel; a mismatch with
 * CMP_REQUEUE is EAGAIN with nothing done. */
#include "emu.h"

int
pf_emu_requeue(const struct pf_req *r)
{
  volatile char here = 0;
  struct pf_waiter *list = NULL, **tail = &list, *w, *next;
  struct pf_crit c;
  struct pf_key k1, k2;
  struct pf_bucket *b1, *b2;
  uintptr_t i1, i2;
  int ret, woken = 0, moved = 0;

  if ((ret = pf_key_make(r->uaddr, r->flags, &k1)) < 0)
    return ret;
  if ((ret = pf_key_make(r->uaddr2, r->flags, &k2)) < 0)
    return ret;
  if ((r->flags & PF_F_CMP) && (ret = pf_word_check(r->uaddr)) < 0)
    return ret;
  i1 = pf_key_bucket(&k1);
  i2 = pf_key_bucket(&k2);
  b1 = &pf_table.buckets[i1];
  b2 = &pf_table.buckets[i2];

  if ((r->flags & PF_F_CMP))
    (void)pf_word_load(r->uaddr);   /* a fault here, not under the locks */
  pf_crit_enter(&c);                                    /* (G) in wait.c */
  pf_self_enter_fast((uintptr_t)&here);
  AO_fetch_and_add1_full(&b2->waiters);                 /* (C) in wait.c */
  pf_bucket_lock2(i1, i2);
  if ((r->flags & PF_F_CMP) && pf_word_load(r->uaddr) != r->val) {
    ret = -EAGAIN;
    goto out_unlock;
  }
  pf_bucket_drain_locked(b1);                           /* (H) in wait.c */
  pf_bucket_drain_locked(b2);
  for (w = b1->head; w && (woken < r->nr || moved < r->nr2); w = next) {
    next = w->next;
    if (AO_load(&w->state) != PF_W_QUEUED || !pf_key_eq(&w->key, &k1))
      continue;
    if (woken < r->nr) {
      pf_waiter_unlink_locked(b1, w);
      AO_store(&w->state, PF_W_WAKING);
      w->wake_next = NULL;
      *tail = w;
      tail = &w->wake_next;
      woken++;
      continue;
    }
    w->key = k2;
    if (b1 != b2) {
      pf_queue_unlink_locked(b1, w);
      AO_fetch_and_sub1(&b1->waiters);
      AO_fetch_and_add1(&b2->waiters);
      pf_queue_append_locked(b2, w);
      AO_store_release(&w->bucket, i2);                 /* (E): under both locks */
    }
    moved++;
  }
  ret = woken + moved;
out_unlock:
  pf_bucket_unlock2(i1, i2);
  AO_fetch_and_sub1(&b2->waiters);
  pf_wake_list(list);
  pf_crit_exit(&c);
  return ret;
}
