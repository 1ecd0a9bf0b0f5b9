/* robust.c - regions: robust lists of processes that die without a word.
 *
 * Linux walks a thread's robust list when it exits, however it exits: a
 * SIGKILL included.  Under emulation a thread's own walk runs in its key
 * destructor (src/robust.c), which a killed process never runs.  So a
 * robust list head that lies in a region is also recorded in one of the
 * region's slots (region.h: PF_W_ROBUST, the fields it uses), and a
 * surviving process walks the list from the region's bytes once the OS
 * says the registering process is dead (proc.c, pf_region_id_dead):
 *
 *   when      a region waiter, after each slice of its park (wait.c (R)):
 *             slices are PF_RGN_ROBUST_SLICE_NS while the header counts
 *             registrations (a waiter on a dead owner's robust lock is
 *             woken within that); a process that reclaims dead slots
 *             (the scavenge, the generation sweep: slot.c) walks first.
 *   who       one survivor: it makes the slot its own with one
 *             compare-and-swap of the owner word before the walk, and
 *             frees it after.  Killed meanwhile, it leaves a slot owned by
 *             a dead process: walked again (each word names the dead
 *             thread no longer: nothing happens twice but a pending
 *             unlock's wake).
 *   the walk  the kernel's (src/robust.c does the words): the entries,
 *             then list_op_pending, at most 2048.  Every pointer is the
 *             dead process's: translated by its key base into an address
 *             here, in the dead process's pointer size (a 32-bit process
 *             and a 64-bit one share regions), and checked to lie in the
 *             region's words before it is read; a word also 4-aligned.
 *             Anything else ends the walk, as a fault ends the kernel's.
 *
 * Untrusted bytes: a scribbled registration walks a list the scribbler
 * chose, within the region; a scribbled count makes waiters look more or
 * less often.  Neither reads outside the region or loops for ever.
 *
 * Limits: the list must be in the region (its head and entries; as
 * glibc's robust mutexes in shared memory are); a head outside regions
 * is walked only by its own thread's exit.  A dead thread's id could be a
 * new thread's by the time a survivor walks (within a slice): the kernel
 * walks at the exit itself and has no such window.
 */
#include "internal.h"
#include "os.h"

#include <string.h>

/* A view of a's words through one of this process's open handles: 0, or
 * -1 (none: nothing to walk through; or the registry is busy, perhaps
 * with the very thread whose signal handler waits here: later). */
static int
pf_rb_view_of(struct pf_rgn_att *a, struct pf_robust_view *v)
{
  AO_t i, n;
  int ret = -1;
  if (pthread_mutex_trylock(&pf_regions_lock) != 0)
    return -1;
  n = AO_load(&pf_regions_n);
  for (i = 0; i < n; i++) {
    const struct pf_region *rg = (const struct pf_region *)AO_load(&pf_regions[i]);
    if (rg && rg->att == a && rg->ks.span >= 4) {
      v->lo = rg->ks.lo;
      v->span = rg->ks.span;
      v->key_base = rg->ks.key_base;
      ret = 0;
      break;
    }
  }
  pthread_mutex_unlock(&pf_regions_lock);
  return ret;
}

/* Slot s holds a registration of `o`, a dead process's (or an earlier
 * owner's of our entry): make it ours, walk the list, free it. */
void
pf_rgn_robust_reap(struct pf_rgn_att *a, uint32_t s, uint32_t o)
{
  struct pf_table *tab = &a->tab;
  struct pf_node *n = &tab->slots[s];
  struct pf_robust_view v;
  uint64_t head;
  uint32_t tid;
  memset(&v, 0, sizeof v);
  if (a->me == 0 || o == a->me || pf_rb_view_of(a, &v) < 0)
    return;                                   /* no view now: a later look walks it */
  if (!AO_int_compare_and_swap_full(&n->owner, o, a->me))
    return;
  if (AO_int_load(&n->state) == PF_W_ROBUST) {
    v.dead_base = (uint64_t)n->key_lo | (uint64_t)n->key_hi << 32;
    v.psize = n->bitset;
    head = (uint64_t)n->seq | (uint64_t)n->waker << 32;
    tid = n->pi & PF_PI_TID;
    if (v.psize == 4 || v.psize == 8)
      pf_robust_walk_view(&v, v.dead_base + head, tid);
    (void)AO_int_fetch_and_add_full(&a->hdr->robust, (unsigned int)-1);
  }
  pf_slot_free(tab, n, a->me);
}

/* The table's robust_check op: walk the lists of dead processes. */
void
pf_region_robust_check(struct pf_table *tab)
{
  struct pf_rgn_att *a = pf_tab_att(tab);
  uint32_t s, o, last_alive = 0;
  if (AO_int_load(&a->hdr->robust) == 0 || a->me == 0 || a->pid != pf_rgn_pid())
    return;
  for (s = 0; s < tab->nslots; s++) {
    if (AO_int_load(&tab->slots[s].state) != PF_W_ROBUST)
      continue;
    o = AO_int_load(&tab->slots[s].owner);
    if (o == 0 || o == a->me || o == last_alive)
      continue;
    if (!pf_region_id_dead(a, o)) {
      last_alive = o;                 /* a process's registrations are often together */
      continue;
    }
    pf_rgn_robust_reap(a, s, o);
  }
}

/* The table's robust_pending op: a registration of tid's list is still
 * in a slot (its walk not over: by a survivor now, or to come). */
int
pf_region_robust_pending(const struct pf_table *tab, uint32_t tid)
{
  uint32_t s;
  for (s = 0; s < tab->nslots; s++)
    if (AO_int_load(&tab->slots[s].state) == PF_W_ROBUST
        && (AO_int_load(&tab->slots[s].pi) & PF_PI_TID) == (tid & PF_PI_TID))
      return 1;
  return 0;
}

/* The table's slice_ns op (0: the engine's usual slice). */
long
pf_region_slice_ns(const struct pf_table *tab)
{
  return AO_int_load(&pf_tab_att(tab)->hdr->robust) ? PF_RGN_ROBUST_SLICE_NS : 0;
}

/* The table's robust_reg op. */
int
pf_region_robust_reg(struct pf_table *tab, uint64_t key_base, uint64_t head_key, uint32_t tid,
                     pf_ref *ref)
{
  struct pf_rgn_att *a = pf_tab_att(tab);
  struct pf_node *n;
  int ret;
  if ((ret = pf_slot_claim(tab, ref, 1)) < 0)
    return ret;
  n = &tab->slots[*ref - 1];
  n->key_lo = (uint32_t)key_base;
  n->key_hi = (uint32_t)(key_base >> 32);
  n->seq = (uint32_t)head_key;
  n->waker = (uint32_t)(head_key >> 32);
  n->bitset = (uint32_t)sizeof(void *);
  AO_int_store(&n->pi, tid & PF_PI_TID);
  (void)AO_int_fetch_and_add_full(&a->hdr->robust, 1);   /* first: killed before the
                                                             state, a count too many costs
                                                             looks, never a walk */
  AO_int_store_release(&n->state, PF_W_ROBUST);
  return 0;
}

/* Is slot n this process's registration of head_key for tid? */
static int
pf_rb_mine(const struct pf_rgn_att *a, const struct pf_node *n, uint64_t head_key, uint32_t tid)
{
  return AO_int_load(&n->owner) == a->me && AO_int_load(&n->state) == PF_W_ROBUST
         && ((uint64_t)n->seq | (uint64_t)n->waker << 32) == head_key
         && (n->pi & PF_PI_TID) == (tid & PF_PI_TID);
}

/* The table's robust_unreg op. */
void
pf_region_robust_unreg(struct pf_table *tab, pf_ref ref, uint64_t head_key, uint32_t tid)
{
  struct pf_rgn_att *a = pf_tab_att(tab);
  struct pf_node *n;
  if (ref == 0 || ref > tab->nslots || a->me == 0 || a->pid != pf_rgn_pid())
    return;
  n = &tab->slots[ref - 1];
  if (!pf_rb_mine(a, n, head_key, tid))
    return;
  AO_int_store(&n->state, PF_W_IDLE);
  (void)AO_int_fetch_and_add_full(&a->hdr->robust, (unsigned int)-1);
  pf_slot_free(tab, n, a->me);
}

/* This process leaves the region (its last handle closes): its threads'
 * registrations go (their lists are no longer this process's to have
 * walked by others). */
void
pf_rgn_robust_drop_all(struct pf_rgn_att *a)
{
  uint32_t s;
  if (a->me == 0 || a->pid != pf_rgn_pid() || !a->tab.slots)
    return;
  for (s = 0; s < a->tab.nslots; s++) {
    struct pf_node *n = &a->tab.slots[s];
    if (AO_int_load(&n->owner) == a->me && AO_int_load(&n->state) == PF_W_ROBUST) {
      AO_int_store(&n->state, PF_W_IDLE);
      (void)AO_int_fetch_and_add_full(&a->hdr->robust, (unsigned int)-1);
      pf_slot_free(&a->tab, n, a->me);
    }
  }
}
