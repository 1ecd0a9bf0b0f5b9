/* check.c - regions, white-box: a region's internal consistency, for the
 * tests (internal.h, pf_region_check).
 */
#include "internal.h"

#include <string.h>

int
pf_region_check(struct pf_region *rg, struct pf_region_stats *st, const char **why)
{
  struct pf_rgn_att *a = rg->att;
  struct pf_table *tab = &a->tab;
  uint32_t i, s;
  *why = "";
  memset(st, 0, sizeof *st);
  for (i = 0; i < tab->nbuckets; i++) {
    struct pf_bucket *b = &tab->buckets[i];
    uint32_t q = 0, w;
    pf_ref r;
    if (pf_bucket_lock(tab, i) < 0) {
      *why = "bucket lock";
      return -ENOTRECOVERABLE;
    }
    if (pf_bucket_ready_locked(tab, i) < 0) {
      pf_bucket_unlock(tab, i);
      *why = "queue unrecoverable";
      return -ENOTRECOVERABLE;
    }
    struct pf_node *n;
    struct pf_walk it;
    pf_walk_start(&it, tab, b);
    while ((n = pf_walk_next(&it, &r)) != NULL) {
      struct pf_key k;
      uint32_t sst;                        /* (checked by pf_bucket_ready_locked) */
      sst = AO_int_load(&n->state);
      k.word = pf_node_keyword(n);
      k.space = n->key_space;
      if (pf_key_bucket(tab, &k) != i || n->bucket != i) {
        pf_bucket_unlock(tab, i);
        *why = "a node in the wrong bucket";
        return -ENOTRECOVERABLE;
      }
      if (sst != PF_W_QUEUED && sst != PF_W_DETACHED) {
        pf_bucket_unlock(tab, i);
        *why = "a node on a queue in a state off the queue";
        return -ENOTRECOVERABLE;
      }
      q++;
    }
    w = AO_int_load(&b->waiters);
    if (w < q) {
      pf_bucket_unlock(tab, i);
      *why = "waiter count below the queue length (a wakeup could be lost)";
      return -ENOTRECOVERABLE;
    }
    st->waiters_excess += w - q;
    st->queued += q;
    pf_bucket_unlock(tab, i);
  }
  for (s = 0; s < tab->nslots; s++) {
    uint32_t o = AO_int_load(&tab->slots[s].owner);
    if (o == 0)
      st->slots_free++;
    else if (pf_region_id_dead(a, o))
      st->slots_dead++;
    else
      st->slots_live++;
  }
  for (s = 0; s < a->nprocs; s++) {
    uint32_t pid = AO_int_load(&a->procs[s].pid);
    if (pid == 0)
      continue;
    if (s + 1 != (a->me & 0xffffu) && !pf_live_held(a->live, a->live_fd, s, &a->procs[s]))
      st->procs_dead++;
    else
      st->procs_live++;
  }
  return 0;
}
