/* requeue.c - FUTEX_REQUEUE / CMP_REQUEUE under emulation.
 * Both bucket locks, in a fixed order; nodes move between queues and take
 * the new key.  Returns woken + requeued, like the kernel; a mismatch with
 * CMP_REQUEUE is EAGAIN with nothing done.
 *
 * Two tables.  A node is a slot of its table's memory, so it cannot move
 * to another table: a waiter moved from a word of one table to a word of
 * another (a region's and this process's, a shared mapping's and a word
 * of private memory, two regions) gets a node of the target table in its
 * place, which it adopts (wait.c (M)).  This process's waiter finds it
 * named in its record; another process's waiter (between two shared
 * tables: two regions, a region and the shared mappings' table), or a
 * node its waiter had not adopted yet, finds it published in the node it
 * leaves; so does a futex_waitv member, whose waitv is rung instead of
 * given a token (src/waitv.c (M)).  A requeue that would move another
 * process's waiter to a table that process has no entry in (this
 * process's private table, a region it has not opened) answers EINVAL
 * before anything is done, and ENOMEM when the target table has no node
 * left for them. */
#include "emu.h"

volatile AO_t pf_xmove_named_total, pf_xmove_pub_total, pf_xmove_unreachable_total; /* emu.h */

/* The nodes claimed in the target table for a cross-table move, chained
 * through their wake_next (a slot's reference) or their records' vx_next
 * (the private table: a lent record each).  slots: for waiters named in
 * their records (a wait begun for each); xslots: for waiters that find
 * their node published (in the order the walk takes them; each holds the
 * lock id of the process it goes to in `waker` until queued, and no wait
 * is begun: its waiter begins one when it finds it, wait.c (M)). */
struct pf_xdest {
  struct pf_table *tab;
  pf_ref slots;
  struct pf_thread *recs;
  pf_ref xhead, xtail;
};

static void
pf_xdest_free(struct pf_xdest *d)
{
  while (d->slots) {
    struct pf_node *n = pf_node_get(d->tab, d->slots);
    d->slots = n->wake_next;
    n->wake_next = 0;
    d->tab->ops->slot_release(d->tab, n);
    d->tab->ops->wait_end(d->tab);
  }
  while (d->xhead) {
    struct pf_node *n = pf_node_get(d->tab, d->xhead);
    d->xhead = n->wake_next;
    n->wake_next = 0;
    d->tab->ops->slot_release(d->tab, n);
  }
  while (d->recs) {
    struct pf_thread *t = d->recs;
    d->recs = t->vx_next;
    pf_record_return(t);
  }
}

/* A record lent from the pool for a node of this process's table: 0, or
 * -ENOMEM. */
static int
pf_xdest_lend(struct pf_xdest *d)
{
  struct pf_thread *t = pf_record_lend();
  if (!t)
    return -ENOMEM;
  t->vx_next = d->recs;
  d->recs = t;
  return 0;
}

/* n nodes of d->tab for this process, under the buckets' locks (so no
 * scavenge of dead processes' slots: it takes bucket locks): 0, -ENOMEM. */
static int
pf_xdest_claim(struct pf_xdest *d, int n)
{
  for (; n > 0; n--) {
    if (d->tab->slots) {
      pf_ref ref;
      if (d->tab->ops->slot_claim(d->tab, &ref, 0) < 0)
        return -ENOMEM;
      d->tab->ops->wait_begin(d->tab);     /* the wait it is for: a close is EBUSY */
      pf_node_get(d->tab, ref)->wake_next = d->slots;
      d->slots = ref;
    } else if (pf_xdest_lend(d) < 0) {
      return -ENOMEM;
    }
  }
  return 0;
}

/* The next record lent in d: its first node, and that node's reference
 * (NULL: none left). */
static struct pf_node *
pf_xdest_next_rec(struct pf_xdest *d, struct pf_thread **recp, pf_ref *refp)
{
  struct pf_thread *rec = d->recs;
  if (!rec)
    return NULL;
  d->recs = rec->vx_next;
  rec->vx_next = NULL;
  *recp = rec;
  *refp = rec->index * PF_NEST_MAX + 1;
  return &rec->nodes[0].n;
}

/* The futex_waitv whose member (or member's node not adopted yet) w
 * (ref) of t1 is, when it is this process's (src/waitv.c (M)): named by
 * its lent record in the private table, by `waker` (its waiter's own
 * reference) in a shared one; else NULL. */
static struct pf_waiter *
pf_vx_waiter_own(struct pf_table *t1, struct pf_node *w, pf_ref ref)
{
  if (!t1->slots)
    return pf_thread_rec(ref)->vx_for;
  return pf_waiter_own(t1, w, ref);
}

/* Queue n2 (ref2), a node not adopted yet for a waiter with `bitset`, in
 * bucket i2 of t2 under key k2, counted (its lock held); `pi`
 * PF_PI_ADOPT, or PF_PI_VXADOPT for a futex_waitv member. */
static void
pf_xnode_queue_locked(struct pf_table *t2, uint32_t i2, const struct pf_key *k2,
                      struct pf_node *n2, pf_ref ref2, uint32_t bitset, uint32_t lref, uint32_t pi)
{
  struct pf_bucket *b2 = &t2->buckets[i2];
  pf_node_prepare(n2, k2, i2, bitset, pi);
  n2->waker = lref;                       /* its waiter's own reference (pf_waiter_of) */
  if (t2->slots) {
    n2->seq = t2->ops->next_seq(t2);
    n2->pushed = 1;                       /* on the queue: a rebuild links it */
  }
  AO_int_store(&n2->state, PF_W_QUEUED);
  AO_int_fetch_and_add_full(&b2->waiters, 1);
  n2->counted = 1;
  pf_queue_append_locked(t2, b2, n2, ref2);
  n2->linked = 1;
}

/* A node of d->tab for a waiter (node w, ref, of t1) that will find it
 * published (pf_xmove_pub_locked): a slot of this process's claimed for
 * it, with the lock id of the waiter's process there, or for this
 * process's waiter, a lent record.  0, -EINVAL (its process has no entry
 * in d->tab; another process's waiter and the private table), -ENOMEM. */
static int
pf_xdest_claim_pub(struct pf_table *t1, struct pf_node *w, pf_ref ref, struct pf_xdest *d)
{
  struct pf_table *t2 = d->tab;
  int own = pf_node_is_vx(w) ? pf_vx_waiter_own(t1, w, ref) != NULL
                             : pf_waiter_own(t1, w, ref) != NULL;
  if (t2->slots) {
    uint32_t o2;
    pf_ref r2;
    struct pf_node *n2;
    if (own)
      o2 = t2->ops->lock_id(t2);
    else
      o2 = t1->slots ? t1->ops->peer_id(t1, AO_int_load(&w->owner), t2) : 0;
    if (o2 == 0)
      return -EINVAL;                     /* it has not opened the target's region */
    if (t2->ops->slot_claim(t2, &r2, 0) < 0)
      return -ENOMEM;
    n2 = pf_node_get(t2, r2);
    n2->waker = o2;
    n2->seq = ref;                        /* whose it is (a waiter reaped meanwhile
                                             is skipped by the move: so is its slot) */
    n2->wake_next = 0;
    if (d->xtail)
      pf_node_get(t2, d->xtail)->wake_next = r2;
    else
      d->xhead = r2;
    d->xtail = r2;
    return 0;
  }
  if (!own)
    return -EINVAL;                       /* it cannot queue in this process's memory */
  return pf_xdest_lend(d);
}

/* Under both locks, after the drain: which waiters the requeue would move
 * (those the wake before it leaves, in queue order: as the walks below
 * take them) can move to another table?  Those to be named in their
 * records are counted (*count: pf_xdest_claim claims them), those to
 * find their node published get it claimed here.  0, or -EINVAL,
 * -ENOMEM. */
static int
pf_xmove_check_locked(struct pf_table *t1, uint32_t i1, const struct pf_key *k1, int nr, int nr2,
                      struct pf_xdest *d, int *count)
{
  struct pf_bucket *b1 = &t1->buckets[i1];
  struct pf_walk it;
  struct pf_node *w;
  pf_ref ref;
  int wake = nr, stopped = 0, moves = 0, taken = 0, ret;
  pf_walk_start(&it, t1, b1);
  while (taken < nr2 && (w = pf_walk_next(&it, &ref)) != NULL) {
    if (AO_int_load(&w->state) != PF_W_QUEUED || !pf_node_keyeq(w, k1))
      continue;
    if (wake > 0 && !stopped && pf_node_is_pi(w)) {
      stopped = 1;                        /* pf_queue_wake_locked stops there */
      continue;
    }
    if (pf_node_is_pi(w) || (t1->slots && t1->ops->reap(t1, b1, w, ref)))
      continue;
    if (wake > 0 && !stopped) {
      wake--;                             /* woken first */
      continue;
    }
    if (!pf_node_is_vx(w) && pf_waiter_of(t1, w, ref))
      moves++;
    else if ((ret = pf_xdest_claim_pub(t1, w, ref, d)) < 0)
      return ret;
    taken++;
  }
  *count = moves;
  return 0;
}

/* Move waiter node w (ref) of t1, whose waiter will not find it named in
 * its record (another process's; or this process's, in a node it had not
 * adopted), to the next node d claimed for it, of t2 keyed k2 (bucket
 * i2), under both locks: the destination is published in w (wait.c (M)).
 * The order is the crash order: a requeuer killed at any point leaves w
 * queued (nothing done: the claimed slot is a dead process's), or w MOVED
 * naming no node or a node that its waiter finds queued and its own, or
 * not (then its wait ends as a spurious wakeup, which futex(2) allows:
 * never a node counted by a wake that no waiter adopts).  The waiter that
 * finds w MOVED and nothing published yet waits for w's bucket lock, held
 * until the requeue is done (or taken over from its dead holder).  1, or 0 when d has no
 * node left (never: the check claimed them). */
static int
pf_xmove_pub_locked(struct pf_table *t1, struct pf_bucket *b1, struct pf_node *w, pf_ref ref,
                    struct pf_table *t2, uint32_t i2, const struct pf_key *k2, struct pf_xdest *d,
                    struct pf_wake_list *tokens)
{
  int vx = pf_node_is_vx(w);
  struct pf_waiter *own = vx ? pf_vx_waiter_own(t1, w, ref) : pf_waiter_own(t1, w, ref);
  struct pf_thread *rec = NULL;
  struct pf_node *n2;
  pf_ref ref2;
  uint32_t o2 = 0;
  int fresh = w->pi != PF_PI_ADOPT && w->pi != PF_PI_VXADOPT;
  if (t2->slots) {
    for (;;) {
      ref2 = d->xhead;
      if (!(n2 = pf_node_get(t2, ref2)))
        return 0;
      d->xhead = n2->wake_next;
      if (!d->xhead)
        d->xtail = 0;
      n2->wake_next = 0;
      if (n2->seq == ref)
        break;
      t2->ops->slot_release(t2, n2);      /* claimed for a waiter since reaped */
    }
    o2 = n2->waker;
  } else {
    if (!own || !(n2 = pf_xdest_next_rec(d, &rec, &ref2)))
      return 0;
    if (vx)
      rec->vx_for = own;                  /* its waitv (src/waitv.c (M)) */
    else
      rec->nodes[0].px_for = own;         /* its waiter (pf_waiter_own, wait.c (M)) */
  }
  /* The old node off first: the new one is queued once the old is MOVED
   * and names it (the crash order above).  The waiter's own reference: a
   * queued slot's `waker`, else its record's. */
  pf_queue_unlink_locked(t1, b1, w);
  w->linked = 0;
  AO_int_store_release(&w->state, PF_W_MOVED);
  PF_CRASH("xmove_moved");
  pf_node_uncount_locked(b1, w);          /* after MOVED: a requeuer killed before it
                                             leaves w counted, so the next waker of
                                             w's word takes the lock over and the
                                             rebuild links w again */
  pf_node_publish_dest(w, t2->order, ref2); /* after MOVED: while QUEUED, its key
                                             is how a rebuild files it */
  PF_CRASH("xmove_published");
  pf_xnode_queue_locked(t2, i2, k2, n2, ref2, w->bitset,
                        t1->slots ? w->waker : own ? own->lref : 0,
                        vx ? PF_PI_VXADOPT : PF_PI_ADOPT);
  if (t2->slots)
    t2->ops->slot_give(t2, n2, o2);       /* its waiter's process's from here */
  PF_CRASH("xmove_given");
  AO_fetch_and_add1(&pf_xmove_pub_total);
  if (fresh && vx)
    (void)pf_vx_ring_locked(t1, w, ref, tokens);   /* its group's parker: the waitv
                                                      follows its moved members */
  else if (fresh)
    pf_wake_list_add(tokens, t1, w, ref); /* an armed node: its token (an unadopted one
                                             has no park armed, and its waiter is on its
                                             way already) */
  return 1;
}

/* Move waiter node w (ref) of t1 to a node of t2 keyed k2 (bucket i2), one
 * of d's, under both locks: wait.c (M).  The old node goes on `tokens`
 * (MOVED: its waiter needs the token), unless it was itself a node not
 * adopted yet (given back: its waiter is on its way already).  1, or 0
 * when d has no node left (never: the check counted them). */
static int
pf_xmove_locked(struct pf_table *t1, struct pf_bucket *b1, struct pf_node *w, pf_ref ref,
                struct pf_table *t2, uint32_t i2, const struct pf_key *k2, struct pf_xdest *d,
                struct pf_wake_list *tokens)
{
  struct pf_waiter *wt = pf_node_is_vx(w) ? NULL : pf_waiter_of(t1, w, ref);
  struct pf_thread *rec = NULL;
  struct pf_node *n2;
  pf_ref ref2;
  int fresh = w->pi != PF_PI_ADOPT;
  if (!wt)                                /* published, not named (as the check chose;
                                             a waitv member's always) */
    return pf_xmove_pub_locked(t1, b1, w, ref, t2, i2, k2, d, tokens);
  if (t2->slots) {
    ref2 = d->slots;
    if (!(n2 = pf_node_get(t2, ref2)))
      return 0;
    d->slots = n2->wake_next;
  } else if (!(n2 = pf_xdest_next_rec(d, &rec, &ref2))) {
    return 0;
  }
  pf_xnode_queue_locked(t2, i2, k2, n2, ref2, w->bitset, wt->lref, PF_PI_ADOPT);
  PF_CRASH("xmove_queued");
  pf_queue_unlink_locked(t1, b1, w);
  w->linked = 0;
  pf_node_uncount_locked(b1, w);
  (void)pf_waiter_move_locked(wt, t2, n2, ref2, rec);   /* gives back w if not adopted */
  AO_fetch_and_add1(&pf_xmove_named_total);
  PF_CRASH("xmove_named");
  if (fresh) {                            /* after its new node is named: the waiter
                                             may see MOVED before any token (a slice) */
    AO_int_store_release(&w->state, PF_W_MOVED);
    pf_wake_list_add(tokens, t1, w, ref);
  }
  return 1;
}

int
pf_emu_requeue(const struct pf_req *r)
{
  volatile char here = 0;
  struct pf_wake_list list = { 0 }, tokens = { 0 };
  struct pf_xdest dest = { 0 };
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
  if (t1 != t2 && r->nr2 > 0) {
    /* (M) whom it would move can move, and has a node there: before
     * anything is done */
    int count;
    dest.tab = t2;
    if ((ret = pf_xmove_check_locked(t1, i1, &k1, r->nr, r->nr2, &dest, &count)) < 0
        || (ret = pf_xdest_claim(&dest, count)) < 0)
      goto out_unlock;
  }
  if (r->nr > 0)
    (void)pf_queue_wake_locked(t1, i1, &k1, PFUTEX_BITSET_MATCH_ANY, r->nr, &list);
  woken = list.n;
  if (r->nr2 > 0) {
    struct pf_walk it;
    struct pf_node *w;
    pf_walk_start(&it, t1, b1);
    while (moved < r->nr2 && (w = pf_walk_next(&it, &ref)) != NULL) {
      if (AO_int_load(&w->state) != PF_W_QUEUED || !pf_node_keyeq(w, &k1) || pf_node_is_pi(w))
        continue;                                       /* (a PI waiter: src/pi.c) */
      if (t1->slots && t1->ops->reap(t1, b1, w, ref))
        continue;                                       /* its process died */
      if (t1 != t2) {
        if (!pf_xmove_locked(t1, b1, w, ref, t2, i2, &k2, &dest, &tokens))
          break;                                        /* (the check counted them) */
      } else if (b1 != b2) {
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
  pf_xdest_free(&dest);                                 /* claimed but not used (ENOMEM) */
  pf_bucket_unlock2(t1, i1, t2, i2);
out_nolock:
  AO_int_fetch_and_add_full(&b2->waiters, (unsigned int)-1);
  pf_wake_list(&list);
  pf_wake_list(&tokens);                                /* (M) the moved waiters adopt */
  pf_crit_exit(&c);
  return ret;
}
