/* lock.c - regions: the robust bucket lock, and the rebuild of a bucket from
 * its slots.  The engine's pf_bucket_lock / pf_bucket_unlock come here for
 * a region's table (its ops: lock, unlocked, rebuild).
 *
 *   - A bucket lock names its holder (lock id: process entry and its
 *     generation, proc.c), so a locker that finds the holder's process
 *     dead takes the lock over.
 *   - The queue is a cache: the truth is in the slots (key, state, owner,
 *     arrival number).  A locker that took a lock over from a dead holder,
 *     or found a queue corrupt, rebuilds the bucket from the slots
 *     (pf_bucket_rebuild_locked): whatever instruction the holder died at,
 *     the rebuilt queue holds exactly the live waiters that hash there, in
 *     arrival order, and the dead processes' slots are freed.  The waiter
 *     count is recomputed conservatively: never below the live slots' need
 *     nor the pending raises of operations in flight, so a waiter between
 *     (A) and its push may be counted twice.  An excess stays for good and
 *     costs that bucket its wake fast path (its wakes take the lock),
 *     never a wakeup.
 */
#include "internal.h"

/* Region locks this thread holds or is taking (at most two at a time:
 * requeue and wake_op, whose buckets may be in one region or two), with
 * the place of each in its process entry's list. */
struct pf_held {
  const struct pf_table *tab;
  uint32_t i;
  volatile unsigned int *intent;   /* its place in the entry's held[], or NULL */
  int used;
};
#define PF_HELD_MAX 4
#if defined(__GNUC__)
static __thread __attribute__((tls_model("initial-exec"))) struct pf_held pf_held[PF_HELD_MAX];
#else
static __thread struct pf_held pf_held[PF_HELD_MAX];
#endif

static struct pf_held *
pf_held_find(const struct pf_table *tab, uint32_t i)
{
  unsigned int k;
  for (k = 0; k < PF_HELD_MAX; k++)
    if (pf_held[k].used && pf_held[k].tab == tab && pf_held[k].i == i)
      return &pf_held[k];
  return NULL;
}

/* This thread's intent on bucket i, in its process's entry: a free place of
 * held[] set to i + 1 (NULL when every place is taken: the count then says
 * more than the list, and lockers wait as for a live holder). */
static volatile unsigned int *
pf_region_intent_take(const struct pf_table *tab, uint32_t i)
{
  const struct pf_rgn_att *a = pf_tab_att(tab);
  uint32_t e = a->me & 0xffffu, k;
  struct pf_rgn_proc *p;
  if (e == 0 || e > a->nprocs)
    return NULL;
  p = &a->procs[e - 1];
  for (k = 0; k < PF_RGN_HELD; k++)
    if (AO_int_load(&p->held[k]) == 0 && AO_int_compare_and_swap_full(&p->held[k], 0, i + 1))
      return &p->held[k];
  return NULL;
}

/* May the live process behind lock id `id` hold bucket i, or be about to?
 * 1 when its entry lists i (in a place other than `mine`, this thread's
 * own), or counts more locks in flight than it lists (it may be between
 * the two); 0 when it lists neither: the lock word is a scribble.  The
 * list is read before the count, which its owner raises before it writes
 * the list and lowers after it clears it. */
static int
pf_region_may_hold(const struct pf_table *tab, uint32_t id, uint32_t i,
                   const volatile unsigned int *mine)
{
  const struct pf_rgn_att *a = pf_tab_att(tab);
  uint32_t e = id & 0xffffu, k, inuse = 0;
  const struct pf_rgn_proc *p;
  if (e == 0 || e > a->nprocs)
    return 0;
  p = &a->procs[e - 1];
  for (k = 0; k < PF_RGN_HELD; k++) {
    uint32_t v = AO_int_load(&p->held[k]);
    if (v == 0)
      continue;
    inuse++;
    if (v == i + 1 && &p->held[k] != mine)
      return 1;
  }
  AO_nop_full();
  return AO_int_load(&p->locking) > inuse ? 2 : 0;
}

/* A region's lock word names its holder (lock id).  Each process counts, in
 * its entry, the bucket locks its threads hold or are taking, and lists
 * them there (pf_region_intent_take, below).  A locker that has spun a
 * while looks at the holder:
 *   - a process the OS says is gone (src/os.h; or an id that names none):
 *     the lock is taken over, once (a compare-and-swap of the word), and
 *     the bucket rebuilt from its slots;
 *   - a live process (this one included) whose entry lists neither this
 *     bucket (beside this thread's own intent) nor more locks than it
 *     lists: the word is a scribble (corruption), taken over the same way;
 *   - otherwise a live holder: the locker waits, however long (a holder
 *     stopped by SIGSTOP or a debugger, or starved, keeps its lock, as a
 *     process-shared mutex's holder would).  No lock is ever taken from a
 *     live process.
 * Two scribbled words naming two processes that each wait for the other's
 * bucket are both scribbles by this rule, so they never wait for each
 * other forever.  A scribbled entry can still make a live holder look like
 * a scribble (corruption then costs correctness, as any scribble may,
 * never a crash or a hang), and a process with more than PF_RGN_HELD
 * locks in flight in one region lists only that many: a scribble naming it
 * then waits until its count drops. */
int
pf_region_bucket_lock(struct pf_table *tab, uint32_t i)
{
  volatile unsigned int *l = &tab->buckets[i].lock, *mine;
  struct pf_held *held = NULL;
  uint32_t me, h, unlisted_h = 0;
  unsigned int spins = 0, rounds = 0, k;
  long long unlisted_since = 0;
  int may;

  me = pf_region_lock_id(tab);
  if (me == 0 || (mine = pf_region_locking(tab, me)) == NULL)
    return -ENOMEM;                         /* no process entry: no lock id */
  /* One thread of this process at a time takes or holds bucket i (a
   * process-local lock, inside the critical section): so a word naming
   * this process while we hold it is never another thread's of ours. */
  {
    volatile unsigned int *ll = &pf_tab_att(tab)->local_locks[i];
    while (AO_int_load(ll) != 0 || !AO_int_compare_and_swap_full(ll, 0, 1))
      pf_cpu_relax(&spins);
    spins = 0;
  }
  AO_int_fetch_and_add_full(mine, 1);
  AO_fetch_and_add1_full(&pf_tab_att(tab)->local_locking);
  for (k = 0; k < PF_HELD_MAX; k++)
    if (!pf_held[k].used) {
      held = &pf_held[k];
      break;
    }
  PF_ASSERT(held != NULL);
  if (!held)
    held = &pf_held[PF_HELD_MAX - 1];       /* never: at most two at a time */
  held->tab = tab;
  held->i = i;
  held->used = 1;
  held->intent = pf_region_intent_take(tab, i);
  for (;;) {
    h = AO_int_load(l);
    if (h == 0 && AO_int_compare_and_swap_full(l, 0, me))
      return 0;
    pf_cpu_relax(&spins);
    if (spins < 100 || (++rounds & 31) != 0 || h == 0)
      continue;
    if (h == me)
      may = 0;                              /* no other thread of ours: a scribble */
    else
      may = pf_region_lock_holder_dead(tab, h) ? 0 : pf_region_may_hold(tab, h, i, held->intent);
    if (may == 2) {
      /* Only its count says it may hold the bucket: it lists more than 10
       * locks in flight, or the count is a scribble (repaired when its
       * last lock ends, but a busy process may never get there).  A lock
       * it holds unlisted for over a second is taken as a scribble: only
       * a process with more than PF_RGN_HELD locks in flight in this
       * region, stopped, would lose one (doc/regions.md). */
      struct timespec now;
      long long t;
      if (pf_clock_now(PFUTEX_CLOCK_MONOTONIC, &now) == 0) {
        t = (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
        if (h != unlisted_h) {
          unlisted_h = h;
          unlisted_since = t;
        } else if (t - unlisted_since > 1000000000LL) {
          may = 0;
        }
      }
    } else {
      unlisted_h = 0;
    }
    if (may == 0 && AO_int_compare_and_swap_full(l, h, me)) {
      if (h != me)
        PF_CRASH("lock_takeover");
      return pf_bucket_rebuild_locked(tab, i);
    }
  }
}

/* After pf_bucket_unlock's release store of the word (src/table.c). */
void
pf_region_bucket_unlocked(struct pf_table *tab, uint32_t i)
{
  volatile unsigned int *mine = pf_region_locking(tab, pf_region_lock_id(tab));
  struct pf_held *held = pf_held_find(tab, i);
  if (held) {
    if (held->intent)
      AO_int_store_release(held->intent, 0);
    held->used = 0;
  }
  if (mine)
    AO_int_fetch_and_add_full(mine, (unsigned int)-1);
  /* This process's last lock in flight: its entry's count is 0, whatever a
   * scribble made of it (a scribbled count would make lockers wait on any
   * word naming us for good).  A thread of ours starting a lock meanwhile
   * raised the count: zeroing it loses that only while the thread is
   * between its raise and its listing, where it holds nothing yet. */
  if (AO_fetch_and_sub1_full(&pf_tab_att(tab)->local_locking) == 1 && mine)
    AO_int_store(mine, 0);
  AO_int_store_release(&pf_tab_att(tab)->local_locks[i], 0);
}

/* ---- Rebuilding a region's bucket ------------------------------------------------ */

/* Under bucket i's lock (taken over from a dead holder, or a queue found
 * corrupt): rebuild its queue, incoming stack and count from the slots. */
int
pf_bucket_rebuild_locked(struct pf_table *tab, uint32_t i)
{
  struct pf_bucket *b = &tab->buckets[i];
  uint32_t s, count = 0, dead = 0, cur;

  if (!tab->slots)
    return -ENOTRECOVERABLE;
  (void)AO_int_fetch_and_add_full(&b->incoming, 0);
  AO_int_store(&b->incoming, 0);      /* every pushed slot is found below */
  b->head = b->tail = 0;
  for (s = 0; s < tab->nslots; s++) {
    struct pf_node *n = &tab->slots[s];
    struct pf_key k;
    uint32_t st = AO_int_load(&n->state);
    if (n->owner == 0)
      continue;
    k.word = pf_node_keyword(n);
    k.space = n->key_space;
    if (st != PF_W_QUEUED && st != PF_W_DETACHED)
      continue;
    if (n->pi == PF_VX_PARKER)
      continue;                       /* a futex_waitv's parker: on no queue */
    if (pf_key_bucket(tab, &k) != i)
      continue;
    if (!pf_node_owner_alive(tab, n) && !(n->pushed && AO_int_load(&b->incoming)
                                           && pf_node_on_stack_locked(tab, b, s + 1))) {
      /* (a dead slot whose push landed after the stack was emptied above
       * is queued like a live one: the next walk frees it once a drain
       * took it off the stack, pf_slot_free_dead_locked) */
      uint32_t o = AO_int_load(&n->owner);
      dead += n->counted != 0;
      n->linked = 0;
      n->counted = 0;
      pf_slot_free(tab, n, o);
      continue;
    }
    n->bucket = i;
    n->counted = 1;
    count++;
    n->linked = 0;
    PF_CRASH("rebuild_mid");
    if (n->pushed) {
      /* insert by arrival number (wrapping compare): after the last node
       * that came before it */
      struct pf_walk it;
      struct pf_node *at, *after = NULL, *nx;
      pf_ref r, after_ref = 0, ref = s + 1;
      pf_walk_start(&it, tab, b);
      while ((at = pf_walk_next(&it, &r)) != NULL && (int32_t)(n->seq - at->seq) >= 0) {
        after = at;
        after_ref = r;
      }
      n->in_next = 0;
      n->prev = after_ref;
      n->next = after ? after->next : b->head;
      nx = pf_node_get(tab, n->next);
      if (!nx)
        n->next = 0;
      if (after)
        after->next = ref;
      else
        b->head = ref;
      if (nx)
        nx->prev = ref;
      else
        b->tail = ref;
      n->linked = 1;
    }
  }
  /* The count: never below what the live slots need, and never lowered
   * below the current count less the dead slots' shares, which may hold
   * the pending raises of operations in flight ((A) before a node is
   * QUEUED, (C) of a requeue waiting for this lock). */
  cur = AO_int_load(&b->waiters);
  cur = cur >= dead ? cur - dead : 0;
  if (cur > tab->nslots * 2 + 64)
    cur = 0;                          /* garbage: the slots' count it is */
  AO_int_store(&b->waiters, cur > count ? cur : count);
  AO_nop_full();
  return 0;
}
