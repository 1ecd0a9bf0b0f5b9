/* slot.c - regions: the slot pool.
 *
 * A wait on a region word claims a slot with one compare-and-swap of its
 * owner word (so a process killed at any instruction either owns it, and
 * it is reclaimable, or does not), and frees it when the wait is over.
 * The slots of dead processes are reclaimed when the pool runs out
 * (pf_region_scavenge), by the wakers that meet them on a queue, and by a
 * rebuild of a bucket.  Exhaustion, after that, is ENOMEM.  When an
 * entry's generation wraps, its new owner sweeps what earlier owners left
 * (pf_att_sweep_entry).
 */
#include "internal.h"

uint32_t
pf_region_next_seq(struct pf_table *tab)
{
  return AO_int_fetch_and_add_full(&pf_tab_att(tab)->hdr->seq, 1);
}

/* Free n if its owner is still `owner`: this process's lock id for its own
 * slot, or a dead process's.  A dead process's slot is made ours first,
 * with one compare-and-swap, so of two processes freeing it only one
 * writes it, and a slot freed and claimed meanwhile stays its new owner's;
 * then its fields, then the owner word (a process killed in between leaves
 * a slot owned by a dead process: freed again later). */
void
pf_slot_free(struct pf_table *tab, struct pf_node *n, uint32_t owner)
{
  uint32_t me = pf_tab_att(tab)->me;
  if (owner == 0 || me == 0)
    return;
  if (owner != me) {
    if (!AO_int_compare_and_swap_full(&n->owner, owner, me))
      return;
  } else if (AO_int_load(&n->owner) != me) {
    return;
  }
  n->linked = 0;
  n->pushed = 0;
  n->counted = 0;
  AO_int_store(&n->pi, 0);
  AO_int_store(&n->state, PF_W_IDLE);
  PF_CRASH("slot_freeing");
  (void)AO_int_compare_and_swap_full(&n->owner, me, 0);
}

/* The table's slot_release op: give back this process's own slot n. */
void
pf_slot_release(struct pf_table *tab, struct pf_node *n)
{
  pf_slot_free(tab, n, pf_tab_att(tab)->me);
}

/* Does this process still own slot n (a corrupt region may have freed it
 * under us)? */
int
pf_slot_mine(const struct pf_table *tab, const struct pf_node *n)
{
  return AO_int_load(&n->owner) == pf_tab_att(tab)->me;
}

/* Is node ref on bucket b's incoming stack (its lock held)?  Only pushes
 * change the stack while we hold the lock, and they add at the top, so a
 * walk from the top sees every node that was there when it started. */
int
pf_node_on_stack_locked(struct pf_table *tab, struct pf_bucket *b, pf_ref ref)
{
  pf_ref s = AO_int_load(&b->incoming);
  unsigned int budget = tab->nslots + 1;
  while (s && budget--) {
    struct pf_node *n;
    if (s == ref)
      return 1;
    if (!(n = pf_node_get(tab, s)))
      return 1;                           /* corrupt: do not free what may be there */
    s = n->in_next;
  }
  return 0;
}

/* A dead process's slot n (ref), met under bucket b's lock: unlink it and
 * free it, unless its push landed after this operation's drain (a rebuild
 * links a pushed slot before its push lands): it is then still on the
 * incoming stack, and a freed slot there would be linked by the next
 * drain, free or claimed again (model/README, the KILLS=2 finding).  Left
 * as it is, the next drain takes it off the stack (it is linked: skipped)
 * and the next walk frees it.  1 if freed. */
static int
pf_slot_free_dead_locked(struct pf_table *tab, struct pf_bucket *b, struct pf_node *n, pf_ref ref,
                         uint32_t owner)
{
  if (n->pushed && pf_node_on_stack_locked(tab, b, ref))
    return 0;
  if (n->linked)
    pf_node_unlink_locked(tab, b, n);
  else
    pf_node_uncount_locked(b, n);         /* never pushed */
  pf_slot_free(tab, n, owner);
  return 1;
}

/* The table's reap op (src/emu.h): a waker's or requeue's walk met n. */
int
pf_slot_reap_locked(struct pf_table *tab, struct pf_bucket *b, struct pf_node *n, pf_ref ref)
{
  if (pf_node_owner_alive(tab, n))
    return 0;
  (void)pf_slot_free_dead_locked(tab, b, n, ref, AO_int_load(&n->owner));
  return 1;
}

/* Free slot s, owned by `o`, a dead process's (or an earlier owner's of
 * our entry): at once when it is on no queue, else under its bucket's lock
 * (pf_slot_free_dead_locked: not while its push may be on the stack). */
static void
pf_slot_free_stale(struct pf_rgn_att *a, uint32_t s, uint32_t o)
{
  struct pf_table *tab = &a->tab;
  struct pf_node *n = &tab->slots[s];
  uint32_t st = AO_int_load(&n->state), i;
  if (st == PF_W_ROBUST) {
    pf_rgn_robust_reap(a, s, o);          /* a robust list head: walked first */
    return;
  }
  if (st != PF_W_QUEUED && st != PF_W_DETACHED) {
    pf_slot_free(tab, n, o);
    return;
  }
  i = AO_int_load(&n->bucket);
  if (i >= tab->nbuckets)
    i = 0;
  if (pf_bucket_lock(tab, i) < 0)
    return;
  (void)pf_bucket_ready_locked(tab, i);
  if (AO_int_load(&n->owner) == o && AO_int_load(&n->bucket) == i)
    (void)pf_slot_free_dead_locked(tab, &tab->buckets[i], n, s + 1, o);
  pf_bucket_unlock(tab, i);
}

/* Reclaim dead processes' slots: those on no queue at once, those that may
 * be on one under their bucket's lock.  Inside a critical section (it takes
 * bucket locks). */
static void
pf_att_scavenge(struct pf_rgn_att *a)
{
  uint32_t s;
  for (s = 0; s < a->tab.nslots; s++) {
    uint32_t o = AO_int_load(&a->tab.slots[s].owner);
    if (o != 0 && pf_region_id_dead(a, o))
      pf_slot_free_stale(a, s, o);
  }
}

void
pf_region_scavenge(struct pf_region *rg)
{
  struct pf_crit c;
  pf_crit_enter(&c);
  pf_att_scavenge(rg->att);
  pf_crit_exit(&c);
}

/* Entry e's generation wrapped: after 65,536 owners an old lock id could
 * be the new owner's (ours) again.  Clear every word an earlier owner of e
 * left, by entry alone, not by liveness (an aliased id passes for ours):
 * first the slots (this process owns none yet: every slot of e is an
 * earlier owner's, freed, under its bucket's lock when it may be queued),
 * then the bucket locks naming e (taken over and rebuilt).  Inside a
 * critical section; this process's lock id is already the new one. */
void
pf_att_sweep_entry(struct pf_rgn_att *a, uint32_t e)
{
  struct pf_table *tab = &a->tab;
  uint32_t s, i;
  for (s = 0; s < tab->nslots; s++) {
    uint32_t o = AO_int_load(&tab->slots[s].owner);
    if (o != 0 && (o & 0xffffu) == e + 1)
      pf_slot_free_stale(a, s, o);
  }
  for (i = 0; i < tab->nbuckets; i++) {
    uint32_t h = AO_int_load(&tab->buckets[i].lock);
    if (h != 0 && (h & 0xffffu) == e + 1 && pf_bucket_lock(tab, i) == 0)
      pf_bucket_unlock(tab, i);
  }
}
int
pf_slot_claim(struct pf_table *tab, pf_ref *ref, int crit)
{
  struct pf_rgn_att *a = pf_tab_att(tab);
  uint32_t hint, k, round;
  if (a->me == 0 || a->pid != pf_rgn_pid())
    return -ENOMEM;                         /* no process entry (they ran out) */
  for (round = 0; round < 2; round++) {
    hint = AO_int_load(&a->hdr->hint);
    if (hint >= tab->nslots)
      hint = 0;                             /* region bytes: a scribble */
    for (k = 0; k < tab->nslots; k++) {
      uint32_t s = (hint + k) % tab->nslots;
      struct pf_node *n = &tab->slots[s];
      if (AO_int_load(&n->owner) == 0 && AO_int_compare_and_swap_full(&n->owner, 0, a->me)) {
        PF_CRASH("slot_claimed");
        AO_int_store(&n->state, PF_W_IDLE);
        n->linked = n->pushed = n->counted = 0;
        AO_int_store(&a->hdr->hint, (s + 1) % tab->nslots);
        *ref = s + 1;
        return 0;
      }
    }
    if (round == 0) {
      if (!crit)
        return -EAGAIN;                     /* the scavenge takes locks: see emu.h */
      pf_att_scavenge(a);
    }
  }
  return -ENOMEM;
}

/* The table's slot_give op: this process's slot n, just queued for a
 * waiter of the process behind lock id `owner` (alive, by
 * pf_region_peer_id) under its bucket's lock, becomes that process's
 * (src/requeue.c).  Claimed as ours until now, so a scavenger never took
 * it from under the requeue; a requeuer killed before this store leaves a
 * dead process's slot (freed as any), one killed after it a queued slot
 * of its waiter's.  If that process died meanwhile, the next walk reaps
 * the slot as it reaps any of its. */
void
pf_slot_give(struct pf_table *tab, struct pf_node *n, uint32_t owner)
{
  uint32_t me = pf_tab_att(tab)->me;
  if (owner != me && AO_int_load(&n->owner) == me)
    AO_int_store_release(&n->owner, owner);
}
