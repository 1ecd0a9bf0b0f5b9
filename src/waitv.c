/* waitv.c - futex_waitv(2) under emulation.
 *
 * Linux queues one futex_q per entry, each woken (and counted) on its own,
 * and the thread sleeps until any is; it returns the highest index woken.
 * Here the same, over the engine's queues:
 *
 *   members   one node per entry, of records lent by the pool (8 nodes a
 *             record), tagged PF_PI_VX; each is queued on its word as a
 *             plain waiter is (count (A), push (H), then the word is read:
 *             wait.c's argument, entry by entry).  Wakes, wake_ops and
 *             requeues treat a member as any waiter (a requeue moves it,
 *             to another table too: (M) below); each one woken is
 *             counted.
 *   parker    the thread's own wait node (its nesting level) is the
 *             group's parker, on no queue: QUEUED while armed.  A waker
 *             that marks a member WAKING moves the parker from QUEUED to
 *             WAKING with one compare-and-swap under the member's bucket
 *             lock and unparks it after unlocking (the token: wait.c (D));
 *             a later member's waker finds it WAKING and only counts.
 *   the end   woken, timed out or interrupted, the waiter takes every
 *             member off its queue under its bucket's lock (GONE, or found
 *             WAKING: woken), then moves the parker from QUEUED to GONE;
 *             if a waker moved it first, its token is due and collected.
 *             Every waker touches the parker under a member's lock, and
 *             every member was taken off under its lock before: no waker
 *             can ring a later wait's parker.  The result: the highest
 *             index found WAKING (woken wins over a timeout or a signal),
 *             else the timeout or the interruption.
 *   mismatch  a word that differs when its member is queued ends the wait
 *             at once: EAGAIN, unless a member was woken meanwhile (then
 *             its index, as Linux's).
 *   handlers  a handler of the thread that calls pfutex detaches the wait
 *             (thread.c pf_self_enter): the parker QUEUED -> DETACHED and
 *             its token given; the members stay queued until the waiter
 *             ends them, so a wake that lands meanwhile is counted and
 *             returned (Linux has the waiter off its queues while a
 *             handler runs: there, that wake would go to another waiter).
 *             Restart as futex_waitv(2): after a handler with SA_RESTART
 *             the wait starts over (the words read again).
 *   abandon   a cancellation, a siglongjmp past the wait or the thread's
 *             exit end it (thread.c pf_waiter_abandon): the same end.
 *
 * The words: private ones (this process's table), shared ones of regions
 * and of other shared mappings (the user's shared table, a region's too:
 * src/region/shared.c; a shared word of a private mapping is keyed in
 * this process's table).  With
 * a region's words the parker is this wait's slot of that region (on no
 * queue, `pi` PF_VX_PARKER: a rebuild leaves it alone), and each of those
 * words' members is a slot naming it (PF_VX_MEMBER: entry index and the
 * parker's reference), so a waker in another process of the region finds
 * and rings it under the member's bucket lock (src/table.c); the private
 * members' wakers, threads of this process, ring it at once with a
 * shared unpark.  Such a wait parks in one-second slices: a member found
 * WAKING with the parker still armed was counted by a waker that died
 * before ringing it: woken (wait.c (R)).
 *
 * The words of several shared tables (regions, the user's shared table of
 * other shared mappings): a waker attached to one of them only must find
 * a parker there, so each further table gets a parker slot of its own
 * (a record lent per table holds its local half, w->vx_sec) and its
 * members name it; its wakers ring it as above.  The thread sleeps on
 * the first table's parker only (a port parks on one object), and after
 * each slice (PF_VX_POLL_NS, doubling up to PF_VX_POLL_MAX_NS) looks at
 * the others' and walks their dead processes' robust lists: a wake
 * there is counted at once and seen that late at most.  The end takes
 * each table's members off and disarms or collects each parker, the
 * further ones as the first. */
#include "emu.h"
#include "os.h"

#include <pthread.h>
#include <string.h>

#define PF_WAITV_MAX 128
#define PF_FUTEX2_MPOL 0x08u      /* Linux 6.16 <linux/futex.h> FUTEX2_MPOL */

/* Members found woken at the ends of waits, in all (white-box tests: every
 * wake's count must be one of these, tests/waitv_storm). */
volatile AO_t pf_vx_woken_total;
volatile AO_t pf_vx_unrung_total;         /* emu.h */
volatile AO_t pf_vx_followed_total;       /* emu.h */
volatile AO_t pf_vx_intr_total;           /* emu.h */

struct pf_vx_entry {
  uint32_t *uaddr;
  uint32_t val;
  struct pf_key key;
  struct pf_table *tab;            /* the private table, or the call's region's */
};

/* Private member k of w (the k-th entry in the private table): its node
 * and reference. */
static struct pf_node *
pf_vx_member(const struct pf_waiter *w, uint32_t k, pf_ref *ref)
{
  struct pf_thread *rec = w->vx;
  uint32_t j;
  for (j = 0; rec && j < k / PF_NEST_MAX; j++)
    rec = rec->vx_next;
  if (!rec)
    return NULL;                            /* (never: a record per 8 members) */
  *ref = rec->index * PF_NEST_MAX + k % PF_NEST_MAX + 1;
  return &rec->nodes[k % PF_NEST_MAX].n;
}

/* A shared table's members of the wait whose parker there is lead: each
 * off its queue under its bucket's lock (found WAKING: woken, *woken the
 * highest index), its slot given back. */
static int
pf_vx_end_table(struct pf_table *tab, pf_ref lead, int *woken, int *moved)
{
  int found = 0;
  struct pf_waiter tmp;
  uint32_t s;
  memset(&tmp, 0, sizeof tmp);
  tmp.tab = tab;
  for (s = 0; s < tab->nslots; s++) {
    struct pf_node *m = &tab->slots[s];
    uint32_t pi = AO_int_load(&m->pi);
    if ((pi & PF_PI_KIND) != PF_PI_VX || pi == PF_VX_PARKER || PF_VX_LEAD(pi) != (uint32_t)lead
        || !tab->ops->slot_mine(tab, m))
      continue;
    if (AO_int_load(&m->state) != PF_W_IDLE) {          /* queued (IDLE: claimed only) */
      tmp.node = m;
      if (!pf_waiter_dequeue(&tmp, PF_W_GONE, 0)) {
        uint32_t st = AO_int_load_acquire(&m->state);
        if (st == PF_W_MOVED) {
          (*moved)++;
          continue;                                     /* followed by the end (M) */
        }
        if (st == PF_W_WAKING) {
          if ((int)PF_VX_INDEX(pi) > *woken)
            *woken = (int)PF_VX_INDEX(pi);
          AO_fetch_and_add1(&pf_vx_woken_total);
          found++;
        }
      }
    }
    AO_int_store(&m->state, PF_W_IDLE);
    tab->ops->slot_release(tab, m);
  }
  return found;
}

/* ---- (M) Members moved to another table ----------------------------------------
 * A requeue moves a member to a word of another table as it moves a plain
 * waiter whose record is out of its reach (src/requeue.c
 * pf_xmove_pub_locked): it queues a node of the target table for the
 * member's process (PF_PI_VXADOPT: named by no parker yet; a waker counts
 * it and rings nothing), marks the member MOVED, publishes the node in it
 * and rings the member's parker.  The waiter, rung with no member woken,
 * follows each MOVED member to its node (moved on meanwhile: on again),
 * and under that node's lock adopts it: names the parker of its table
 * (the first table's, a further one's, or one made for it now), or in
 * this process's table the group's through its record (vx_mv); or finds
 * it WAKING: woken.  Then the parkers are armed again, and the members
 * looked at once more (a wake that found a parker rung by the move rang
 * nothing).  At the end, a MOVED member's node is taken off instead.  A
 * destination out of reach (its requeuer killed half way, the table
 * closed) ends the wait as a spurious wakeup of that entry, as a plain
 * wait's (wait.c (M)). */

/* A member's node given back, once followed or ended: a slot (and the
 * wait begun on its table when found, `begun`), a lent record (vx_mv), or
 * an entry of the group's own records (IDLE only). */
static void
pf_vx_drop(struct pf_waiter *w, struct pf_table *tab, struct pf_node *m, struct pf_thread *mrec,
           int begun)
{
  if (tab->slots) {
    if (tab->ops->slot_mine(tab, m))
      AO_int_store(&m->state, PF_W_IDLE);
    tab->ops->slot_release(tab, m);
    if (begun)
      tab->ops->wait_end(tab);
    return;
  }
  AO_int_store(&m->state, PF_W_IDLE);
  if (mrec) {
    struct pf_thread **pp;
    for (pp = &w->vx_mv; *pp; pp = &(*pp)->vx_next)
      if (*pp == mrec) {
        *pp = mrec->vx_next;
        break;
      }
    mrec->vx_next = NULL;
    mrec->vx_for = NULL;
    mrec->vx_lead = NULL;
    pf_record_return(mrec);
  }
}

/* A parker slot of tab for w (a further table's, on w->vx_sec), armed,
 * its local half in a lent record; a wait begun on tab, or the caller's
 * (`begun`) taken over.  Its reference, or -errno (the caller's wait
 * then still the caller's). */
static long
pf_vx_sec_add(struct pf_waiter *w, struct pf_table *tab, int begun)
{
  struct pf_thread *rec, **tail;
  struct pf_node *q;
  pf_ref ref;
  int ret;
  if (!(rec = pf_record_lend()))
    return -ENOMEM;
  if ((ret = tab->ops->slot_claim(tab, &ref, 1)) < 0) {
    pf_record_return(rec);
    return ret;
  }
  q = &tab->slots[ref - 1];
  q->bucket = 0;
  q->linked = 0;
  q->counted = 0;
  q->pushed = 0;
  AO_int_store(&q->pi, PF_VX_PARKER);
  if ((ret = pf_emu_port->prepare(&rec->nodes[0].parker, &q->park)) < 0) {
    AO_int_store(&q->pi, 0);
    tab->ops->slot_release(tab, q);
    pf_record_return(rec);
    return ret;
  }
  if (!begun)
    tab->ops->wait_begin(tab);
  AO_int_store(&q->state, PF_W_QUEUED);     /* armed, before any member names it */
  rec->vx_ptab = tab;
  rec->vx_pref = ref;
  for (tail = &w->vx_sec; *tail; tail = &(*tail)->vx_next)
    ;
  *tail = rec;                              /* the end finds it from here on */
  return (long)ref;
}

/* The parker a member of table tab names: the wait's own (w->ref) in the
 * first shared table, a further table's (its lent record's) elsewhere. */
static pf_ref
pf_vx_lead_of(const struct pf_waiter *w, const struct pf_table *tab)
{
  struct pf_thread *rec;
  if (tab == w->tab)
    return w->ref;
  for (rec = w->vx_sec; rec; rec = rec->vx_next)
    if (rec->vx_ptab == tab)
      return rec->vx_pref;
  return 0;
}

/* Follow member m of tab (entry i; mrec its lent record, if of vx_mv;
 * mbegun: a wait begun on tab for it), found MOVED, to the node queued
 * for it, m given back, and under that node's lock: QUEUED, adopt it (or
 * take it off: `ending`, or no parker could be made for it); WAKING: i;
 * MOVED: on.  i also when out of reach (a spurious wakeup).  -1 (not
 * woken), or -errno. */
static int
pf_vx_follow(struct pf_waiter *w, struct pf_table *tab, struct pf_node *m, struct pf_thread *mrec,
             int mbegun, uint32_t i, int ending)
{
  for (;;) {
    struct pf_waiter tmp;
    struct pf_table *t2;
    struct pf_node *n2;
    struct pf_thread *rec2 = NULL;
    pf_ref ref2, lead = 0;
    uint32_t idx, st;
    int ret, begun, mine, res;
    uint32_t ob = AO_int_load(&m->bucket);
    if (ob < tab->nbuckets) {
      /* its requeuer holds that lock until the move is done (or died, and
       * the lock is taken over): a node published and not queued yet is
       * not one a dead requeuer left (seen MOVED at a slice's end, before
       * the ring) */
      if ((ret = pf_bucket_lock(tab, ob)) < 0)
        return ret;
      pf_bucket_unlock(tab, ob);
    }
    memset(&tmp, 0, sizeof tmp);
    tmp.tab = tab;
    tmp.node = m;
    if ((ret = pf_waiter_dest_published(&tmp, &t2, &n2, &ref2, &rec2)) < 0)
      return ret;
    if (ret > 0)
      goto unreachable;
    begun = t2->slots != NULL;              /* (found by its order: a wait begun) */
    if (!ending && t2->slots && !(lead = pf_vx_lead_of(w, t2))) {
      long r = pf_vx_sec_add(w, t2, 1);     /* outside the lock: a claim may take
                                               bucket locks (dead processes' slots) */
      if (r > 0) {
        lead = (pf_ref)r;
        begun = 0;                          /* the parker's wait now */
      }
    }
    idx = AO_int_load_acquire(&n2->bucket);
    if (idx >= t2->nbuckets) {
      if (begun)
        t2->ops->wait_end(t2);
      goto unreachable;                     /* a scribble */
    }
    if ((ret = pf_bucket_lock(t2, idx)) < 0) {
      if (begun)
        t2->ops->wait_end(t2);
      return ret;
    }
    if (AO_int_load(&n2->bucket) != idx) {
      pf_bucket_unlock(t2, idx);            /* requeued in its table meanwhile: again */
      if (begun)
        t2->ops->wait_end(t2);
      continue;
    }
    st = AO_int_load_acquire(&n2->state);
    mine = t2->slots ? t2->ops->slot_mine(t2, n2) : rec2->vx_for == w;
    if (mine && st == PF_W_QUEUED)
      mine = AO_int_load(&n2->pi) == PF_PI_VXADOPT && (!t2->slots || n2->waker == w->lref);
    else if (mine)
      mine = st == PF_W_WAKING || st == PF_W_MOVED || st == PF_W_IDLE;
    if (!mine) {
      /* not ours (any more): its requeuer died before it gave it, the
       * table was closed and opened again; a scribble */
      pf_bucket_unlock(t2, idx);
      if (begun)
        t2->ops->wait_end(t2);
      goto unreachable;
    }
    res = -1;
    if (st == PF_W_QUEUED && (ending || (t2->slots && !lead))) {
      struct pf_bucket *b = &t2->buckets[idx];
      (void)pf_bucket_ready_locked(t2, idx);
      if (n2->linked)
        pf_node_unlink_locked(t2, b, n2);   /* off, uncounted: no wake finds it now */
      AO_int_store(&n2->state, PF_W_GONE);
      if (!ending) {
        res = (int)i;                       /* no parker for it (ENOMEM): a spurious
                                               wakeup of this entry, counted as one */
        AO_fetch_and_add1(&pf_xmove_unreachable_total);
      }
    } else if (st == PF_W_QUEUED) {
      if (t2->slots) {
        n2->waker = w->lref;
        AO_int_store(&n2->pi, PF_VX_MEMBER(i, lead));
      } else {
        rec2->vx_lead = w->node;            /* rung as the group's private members */
        rec2->vx_lead_ref = w->ref;
        rec2->vx_lead_shared = w->tab->slots != NULL;
        AO_int_store(&n2->pi, PF_VX_MEMBER(i, 0));   /* its entry (no parker slot) */
        rec2->vx_next = w->vx_mv;
        w->vx_mv = rec2;
      }
      w->vx_moves++;
    } else if (st == PF_W_WAKING) {
      res = (int)i;                         /* counted by a waker before we came */
      AO_fetch_and_add1(&pf_vx_woken_total);
    } else if (st == PF_W_IDLE) {
      res = (int)i;                         /* never queued: its requeuer died first */
      AO_fetch_and_add1(&pf_xmove_unreachable_total);
    }
    pf_bucket_unlock(t2, idx);
    pf_vx_drop(w, tab, m, mrec, mbegun);
    AO_fetch_and_add1(&pf_vx_followed_total);
    if (st == PF_W_MOVED) {
      tab = t2;                             /* moved on before we came: follow it */
      m = n2;
      mrec = rec2;
      mbegun = begun;
      continue;
    }
    if (st != PF_W_QUEUED || ending || (t2->slots && !lead))
      pf_vx_drop(w, t2, n2, rec2, begun);   /* woken, taken off, never queued */
    else if (begun)
      t2->ops->wait_end(t2);                /* adopted: its parker holds the table */
    return res;
  unreachable:
    pf_vx_drop(w, tab, m, mrec, mbegun);
    AO_fetch_and_add1(&pf_xmove_unreachable_total);
    return (int)i;
  }
}

/* One MOVED member followed (pf_vx_follow), counted in *n, the entry it
 * found woken noted in w->vx_found: 0, or -errno. */
static int
pf_vx_follow_one(struct pf_waiter *w, struct pf_table *tab, struct pf_node *m,
                 struct pf_thread *mrec, uint32_t i, int ending, int *n)
{
  int r = pf_vx_follow(w, tab, m, mrec, 0, i, ending);
  if (r < -1)
    return r;
  if (r > w->vx_found)
    w->vx_found = r;
  (*n)++;
  return 0;
}

/* Every member of w that a requeue moved (MOVED, wherever it is: the
 * group's records, vx_mv, the shared tables' slots naming w's parkers),
 * followed (pf_vx_follow; `mref` forgets a first table's member slot
 * followed).  w->vx_found: the highest entry found woken.  The members
 * followed, or -errno. */
static int
pf_vx_follow_all(struct pf_waiter *w, const struct pf_vx_entry *e, pf_ref *mref, uint32_t nr,
                 int ending)
{
  struct pf_thread *rec, *next;
  uint32_t k, s;
  int n = 0, r;
  for (k = 0; k < w->vx_pushed; k++) {
    pf_ref ref;
    struct pf_node *m = pf_vx_member(w, k, &ref);
    if (!m || AO_int_load_acquire(&m->state) != PF_W_MOVED)
      continue;
    if ((r = pf_vx_follow_one(w, &pf_table, m, NULL, PF_VX_INDEX(m->pi), ending, &n)) < 0)
      return r;
  }
  for (rec = w->vx_mv; rec; rec = next) {
    struct pf_node *m = &rec->nodes[0].n;
    next = rec->vx_next;                    /* (a follow takes rec off the list) */
    if (AO_int_load_acquire(&m->state) != PF_W_MOVED)
      continue;
    if ((r = pf_vx_follow_one(w, &pf_table, m, rec, PF_VX_INDEX(m->pi), ending, &n)) < 0)
      return r;
    next = w->vx_mv;                        /* the list changed: from its head again */
  }
  for (rec = NULL;; rec = rec ? rec->vx_next : w->vx_sec) {
    struct pf_table *tab = rec ? rec->vx_ptab : w->tab;
    pf_ref lead = rec ? rec->vx_pref : w->ref;
    if (rec == NULL && (!tab || !tab->slots)) {
      if (!w->vx_sec)
        break;
      continue;
    }
    for (s = 0; s < tab->nslots; s++) {
      struct pf_node *m = &tab->slots[s];
      uint32_t pi = AO_int_load(&m->pi), i;
      if ((pi & PF_PI_KIND) != PF_PI_VX || pi == PF_VX_PARKER || PF_VX_LEAD(pi) != (uint32_t)lead
          || AO_int_load_acquire(&m->state) != PF_W_MOVED || !tab->ops->slot_mine(tab, m))
        continue;
      i = PF_VX_INDEX(pi);
      if (mref && i < nr && mref[i] == s + 1 && e[i].tab == tab)
        mref[i] = 0;                        /* not its member any more */
      if ((r = pf_vx_follow_one(w, tab, m, NULL, i, ending, &n)) < 0)
        return r;
    }
    if (rec ? !rec->vx_next : !w->vx_sec)
      break;
  }
  return n;
}

/* Is any member of w, wherever it is, WAKING (or with `moved`, MOVED)? */
static int
pf_vx_scan_any(const struct pf_waiter *w, int moved)
{
  const struct pf_thread *rec;
  uint32_t k, s;
  for (k = 0; k < w->vx_pushed; k++) {
    pf_ref ref;
    struct pf_node *m = pf_vx_member(w, k, &ref);
    uint32_t st = m ? AO_int_load_acquire(&m->state) : PF_W_IDLE;
    if (st == PF_W_WAKING || (moved && st == PF_W_MOVED))
      return 1;
  }
  for (rec = w->vx_mv; rec; rec = rec->vx_next) {
    uint32_t st = AO_int_load_acquire(&rec->nodes[0].n.state);
    if (st == PF_W_WAKING || (moved && st == PF_W_MOVED))
      return 1;
  }
  for (rec = NULL;; rec = rec ? rec->vx_next : w->vx_sec) {
    struct pf_table *tab = rec ? rec->vx_ptab : w->tab;
    pf_ref lead = rec ? rec->vx_pref : w->ref;
    if (rec || (tab && tab->slots))
      for (s = 0; s < tab->nslots; s++) {
        struct pf_node *m = &tab->slots[s];
        uint32_t pi = AO_int_load(&m->pi), st;
        if ((pi & PF_PI_KIND) != PF_PI_VX || pi == PF_VX_PARKER || PF_VX_LEAD(pi) != (uint32_t)lead)
          continue;
        st = AO_int_load_acquire(&m->state);
        if ((st == PF_W_WAKING || (moved && st == PF_W_MOVED)) && tab->ops->slot_mine(tab, m))
          return 1;
      }
    if (rec ? !rec->vx_next : !w->vx_sec)
      break;
  }
  return 0;
}

/* A parker rung (QUEUED -> WAKING) with no member woken: armed again, its
 * token collected first. */
static void
pf_vx_rearm(struct pf_node *p, struct pf_parker *pk, int shared)
{
  if (AO_int_load_acquire(&p->state) != PF_W_WAKING)
    return;
  pf_emu_port->collect(pk, &p->park, shared);
  (void)AO_int_compare_and_swap_full(&p->state, PF_W_WAKING, PF_W_QUEUED);
}

/* w's parker (or a further table's) was rung, or a slice's end found
 * something: a wake, or a requeue's move (M)?  The moved members
 * followed; then 1 when the wait ends (a member woken, or the parker not
 * rung by a move: detached), else the parkers armed again and 0 (the
 * members looked at after: a wake that found a parker rung rang none),
 * or -errno. */
static int
pf_vx_moved_cheap(const struct pf_waiter *w, const struct pf_vx_entry *e, const pf_ref *mref,
                  uint32_t nr)
{
  uint32_t i, k;
  if (w->vx_moves)
    return 1;                               /* adopted somewhere: look everywhere */
  for (k = 0; k < w->vx_pushed; k++) {
    pf_ref ref;
    struct pf_node *m = pf_vx_member(w, k, &ref);
    if (m && AO_int_load(&m->state) == PF_W_MOVED)
      return 1;
  }
  for (i = 0; i < nr; i++)
    if (mref[i] && AO_int_load(&e[i].tab->slots[mref[i] - 1].state) == PF_W_MOVED)
      return 1;
  return 0;
}

static int
pf_vx_settle(struct pf_waiter *w, const struct pf_vx_entry *e, pf_ref *mref, uint32_t nr)
{
  for (;;) {
    struct pf_thread *rec;
    struct pf_crit c;
    int n = 0;
    if (pf_vx_moved_cheap(w, e, mref, nr)) {
      pf_crit_enter(&c);
      n = pf_vx_follow_all(w, e, mref, nr, 0);
      pf_crit_exit(&c);
      if (n < 0)
        return n;
    }
    if (w->vx_found >= 0)
      return 1;                             /* woken before it was adopted */
    if (n == 0 && !w->vx_moves)
      return 1;                             /* no move: a wake, or detached (as ever) */
    if (pf_vx_scan_any(w, 0) || AO_int_load_acquire(&w->node->state) == PF_W_DETACHED)
      return 1;                             /* woken, or detached: the end tells */
    /* rung by moves only: armed again, then looked at again (a wake that
     * found a parker rung rang none) */
    pf_vx_rearm(w->node, &w->parker, w->tab->slots != NULL);
    for (rec = w->vx_sec; rec; rec = rec->vx_next)
      pf_vx_rearm(&rec->vx_ptab->slots[rec->vx_pref - 1], &rec->nodes[0].parker, 1);
    /* a handler that ran while the parker was rung (before this or
     * during the re-arming) could not detach it (pf_vx_detach: QUEUED
     * only): vx_intr, looked at once the parkers are armed again (a
     * handler after this finds the parker QUEUED); the end tells */
    if (w->vx_intr) {
      AO_fetch_and_add1(&pf_vx_intr_total);
      return 1;
    }
    if (!pf_vx_scan_any(w, 1))
      return 0;
  }
}

/* A parker none of whose members can be woken any more: disarmed
 * (QUEUED -> GONE), or its token collected: due (D: a waker rang it) or
 * given (G: detached); then IDLE. */
static int
pf_vx_disarm(struct pf_node *p, struct pf_parker *pk, int shared)
{
  uint32_t st = AO_int_load(&p->state);
  if (st == PF_W_QUEUED && AO_int_compare_and_swap_full(&p->state, PF_W_QUEUED, PF_W_GONE))
    st = PF_W_GONE;
  else
    st = AO_int_load(&p->state);
  if (st == PF_W_WAKING || st == PF_W_DETACHED)
    pf_emu_port->collect(pk, &p->park, shared);
  AO_int_store(&p->pi, 0);
  AO_int_store(&p->state, PF_W_IDLE);
  return st != PF_W_GONE;                   /* rung (or detached) */
}

/* The end (critical section held): every member off its queue under its
 * bucket's lock (GONE, or found WAKING: woken), the private ones' records
 * returned, the region's slots given back (found by the parker they
 * name), then the parker disarmed, or its token collected: due (D: a
 * waker rang it) or given (G: detached).  The highest index found woken,
 * or -1. */
static int
pf_vx_end(struct pf_waiter *w)
{
  struct pf_table *ptab = w->tab;
  struct pf_node *p = w->node;
  struct pf_waiter tmp;
  struct pf_thread *rec, *next;
  uint32_t k;
  int woken = -1, moved = 0, found = 0, checkable = w->vx_moves == 0 && w->vx_mv == NULL;

  memset(&tmp, 0, sizeof tmp);
  tmp.tab = &pf_table;
  for (k = 0; k < w->vx_pushed; k++) {
    pf_ref ref;
    struct pf_node *m = pf_vx_member(w, k, &ref);
    if (!m)
      break;
    tmp.node = m;
    if (!pf_waiter_dequeue(&tmp, PF_W_GONE, 0)) {
      uint32_t st = AO_int_load_acquire(&m->state);
      if (st == PF_W_MOVED) {
        moved++;                                        /* (M) followed below */
        continue;
      }
      if (st == PF_W_WAKING) {
        if ((int)PF_VX_INDEX(m->pi) > woken)
          woken = (int)PF_VX_INDEX(m->pi);              /* its entry's index */
        AO_fetch_and_add1(&pf_vx_woken_total);
        found++;
      }
    }
    AO_int_store(&m->state, PF_W_IDLE);
  }
  for (rec = w->vx_mv; rec; rec = rec->vx_next) {       /* (M) adopted here */
    struct pf_node *m = &rec->nodes[0].n;
    tmp.node = m;
    if (!pf_waiter_dequeue(&tmp, PF_W_GONE, 0)) {
      uint32_t st = AO_int_load_acquire(&m->state);
      if (st == PF_W_MOVED) {
        moved++;
        continue;
      }
      if (st == PF_W_WAKING) {
        if ((int)PF_VX_INDEX(m->pi) > woken)
          woken = (int)PF_VX_INDEX(m->pi);
        AO_fetch_and_add1(&pf_vx_woken_total);
      }
    }
    AO_int_store(&m->state, PF_W_IDLE);
  }
  if (ptab->slots)
    found += pf_vx_end_table(ptab, w->ref, &woken, &moved);
  for (rec = w->vx_sec; rec; rec = rec->vx_next)            /* (their parkers' counts: vx_found) */
    rec->vx_found_here = pf_vx_end_table(rec->vx_ptab, rec->vx_pref, &woken, &moved);
  /* (M) the members moved and not adopted: their nodes taken off where
   * they are (or found woken) */
  if (moved)
    (void)pf_vx_follow_all(w, NULL, NULL, 0, 1);
  if (w->vx_found > woken)
    woken = w->vx_found;
  /* no member can be woken now: the further tables' parkers (disarmed, or
   * their tokens collected), their slots given back, then the first */
  for (rec = w->vx_sec; rec; rec = next) {
    struct pf_table *st_tab = rec->vx_ptab;
    struct pf_node *q = &st_tab->slots[rec->vx_pref - 1];
    next = rec->vx_next;
    if (!pf_vx_disarm(q, &rec->nodes[0].parker, 1) && rec->vx_found_here && checkable)
      AO_fetch_and_add1(&pf_vx_unrung_total);           /* woken, never rung */
    st_tab->ops->slot_release(st_tab, q);
    st_tab->ops->wait_end(st_tab);
    pf_record_return(rec);
  }
  w->vx_sec = NULL;
  if (!pf_vx_disarm(p, &w->parker, ptab->slots != NULL) && found && checkable)
    AO_fetch_and_add1(&pf_vx_unrung_total);             /* woken, never rung */
  for (rec = w->vx; rec; rec = next) {
    next = rec->vx_next;
    pf_record_return(rec);
  }
  for (rec = w->vx_mv; rec; rec = next) {
    next = rec->vx_next;
    rec->vx_next = NULL;
    rec->vx_for = NULL;
    rec->vx_lead = NULL;
    pf_record_return(rec);
  }
  w->vx = NULL;
  w->vx_mv = NULL;
  w->vx_n = 0;
  w->vx_pushed = 0;
  w->vx_sliced = 0;
  w->vx_moves = 0;
  w->vx_found = -1;
  return woken;
}

void
pf_vx_detach(struct pf_waiter *w)
{
  w->vx_intr = 1;                           /* (M) rung by a move: no re-arming */
  if (AO_int_compare_and_swap_full(&w->node->state, PF_W_QUEUED, PF_W_DETACHED))
    pf_emu_port->unpark(&w->node->park, w->tab && w->tab->slots != NULL);
}

void
pf_vx_abandon(struct pf_waiter *w)
{
  struct pf_table *tab = w->tab;
  (void)pf_vx_end(w);
  if (tab && tab->slots) {
    tab->ops->slot_release(tab, w->node);
    tab->ops->wait_end(tab);
  }
  w->tab = NULL;
  w->node = &w->n;
}

/* After a slice of a waitv with shared tables' words: is any member
 * WAKING (its parker still armed: a waker that counted it died before
 * ringing it, wait.c (R)) or MOVED (its requeuer died before ringing it:
 * (M) above), or a further table's parker rung?  Those tables' robust
 * lists of dead processes are walked first, as a region park's slice
 * does for its own. */
static int
pf_vx_any_waking(const struct pf_waiter *w, const struct pf_vx_entry *e, const pf_ref *mref,
                 uint32_t nr)
{
  struct pf_thread *rec;
  uint32_t i, k;
  for (rec = w->vx_sec; rec; rec = rec->vx_next) {
    rec->vx_ptab->ops->robust_check(rec->vx_ptab);
    if (AO_int_load(&rec->vx_ptab->slots[rec->vx_pref - 1].state) != PF_W_QUEUED)
      return 1;
  }
  for (k = 0; k < w->vx_pushed; k++) {
    pf_ref ref;
    struct pf_node *m = pf_vx_member(w, k, &ref);
    uint32_t st = m ? AO_int_load(&m->state) : PF_W_IDLE;
    if (st == PF_W_WAKING || st == PF_W_MOVED)
      return 1;
  }
  for (i = 0; i < nr; i++) {
    uint32_t st = mref[i] ? AO_int_load(&e[i].tab->slots[mref[i] - 1].state) : PF_W_IDLE;
    if (st == PF_W_WAKING || st == PF_W_MOVED)
      return 1;
  }
  return w->vx_moves && pf_vx_scan_any(w, 1);
}

#ifdef PF_SCHED_POINTS
/* For the explorer (src/schedpt.h pf_sched_alt): what pf_vx_any_waking
 * looks at after a slice, as slot state words: the further tables'
 * parkers and the shared tables' members. */
static void
pf_vx_sched_alt(const struct pf_waiter *w, const struct pf_vx_entry *e, const pf_ref *mref, uint32_t nr)
{
  struct pf_thread *rec;
  uint32_t i;
  int n = 0;
  for (rec = w->vx_sec; rec && n < PF_SCHED_ALT_MAX; rec = rec->vx_next) {
    pf_sched_alt.state[n] = (const volatile unsigned int *)&rec->vx_ptab->slots[rec->vx_pref - 1].state;
    pf_sched_alt.waking[n++] = 0;
  }
  for (i = 0; i < nr && n < PF_SCHED_ALT_MAX; i++)
    if (mref[i]) {
      pf_sched_alt.state[n] = (const volatile unsigned int *)&e[i].tab->slots[mref[i] - 1].state;
      pf_sched_alt.waking[n++] = 1;
    }
  pf_sched_alt.n = n;
}
#endif

/* A waitv over more than one shared table sleeps on the first one's
 * parker and looks at the others' after each slice: the first slice
 * PF_VX_POLL_NS, each next one twice as long, up to PF_VX_POLL_MAX_NS. */
#define PF_VX_POLL_NS     1000000L
#define PF_VX_POLL_MAX_NS 4000000L

/* One waitv: claim the level (the parker: the thread's node, or with
 * shared tables' words a slot of the first such table, tabs[0]), a slot
 * in each further table as its parker (a lent record holds its local
 * half), lend records for the private members and claim slots for the
 * shared tables' members, queue them in entry order, sleep, end.  Out of
 * line, as pf_emu_wait_once (wait.c (X)). */
static PF_NOINLINE int
pf_vx_once(const struct pf_vx_entry *e, uint32_t nr, struct pf_table *const *tabs, uint32_t ntabs,
           const struct pf_deadline *dl, int async)
{
  volatile char here = 0;
  pf_ref mref[PF_WAITV_MAX];
  struct pf_table *rtab = ntabs ? tabs[0] : NULL;
  struct pf_table *ptab = rtab ? rtab : &pf_table;
  struct pf_req r;
  struct pf_thread *t, *rec, **tail;
  struct pf_waiter *w;
  struct pf_node *p;
  struct pf_crit c;
  uint32_t i, k, np = 0;
  long poll_ns = PF_VX_POLL_NS;
  int ret = 0, woken;

  memset(&r, 0, sizeof r);
  r.uaddr = e[0].uaddr;
  for (i = 0; i < nr; i++) {
    mref[i] = 0;
    if (e[i].tab == &pf_table)
      np++;
    else if (e[i].tab == rtab)
      r.uaddr = e[i].uaddr;                 /* the parker's table: the first shared one */
  }
  r.flags = rtab ? PF_F_SHARED : 0;
  if ((ret = pf_waiter_claim(&r, ptab, (uintptr_t)&here, &t, &w)) < 0)
    return ret;
  p = w->node;
  pthread_cleanup_push(pf_wait_cancelled, w);
  p->bucket = 0;
  p->linked = 0;
  p->counted = 0;
  p->pushed = 0;
  AO_int_store(&p->pi, rtab ? PF_VX_PARKER : 0);
  /* the private members' records (the pool's lock), the further tables'
   * parkers and the shared tables' members' slots (a claim may reclaim
   * dead processes' slots, which takes bucket locks): inside a critical
   * section; vx_n set last */
  pf_crit_enter(&c);
  w->vx = NULL;
  w->vx_pushed = 0;
  w->vx_sec = NULL;
  w->vx_mv = NULL;
  w->vx_moves = 0;
  w->vx_found = -1;
  w->vx_intr = 0;
  tail = &w->vx;
  for (k = 0; k < (np + PF_NEST_MAX - 1) / PF_NEST_MAX; k++) {
    if (!(rec = pf_record_lend())) {
      ret = -ENOMEM;
      break;
    }
    rec->vx_lead = p;
    rec->vx_lead_ref = w->ref;
    rec->vx_lead_shared = rtab != NULL;
    rec->vx_for = w;                        /* (M) a requeue names its waiter */
    *tail = rec;
    tail = &rec->vx_next;
  }
  AO_int_store(&p->state, PF_W_QUEUED);     /* armed, before any member queues */
  for (k = 1; ret == 0 && k < ntabs; k++) {
    long sr = pf_vx_sec_add(w, tabs[k], 0);
    if (sr < 0)
      ret = (int)sr;
  }
  w->vx_n = nr;
  for (i = 0; ret == 0 && i < nr; i++) {
    struct pf_table *tab = e[i].tab;
    if (!tab || tab == &pf_table)
      continue;                             /* (no table: EINVAL below, never) */
    if ((ret = tab->ops->slot_claim(tab, &mref[i], 1)) < 0)
      mref[i] = 0;
    else
      AO_int_store(&tab->slots[mref[i] - 1].pi, PF_VX_MEMBER(i, pf_vx_lead_of(w, tab)));
  }
  pf_crit_exit(&c);

  /* queue the members in entry order, each as a plain waiter queues
   * (wait.c (A), (H)), each word read after its member is queued */
  for (i = 0, k = 0; ret == 0 && i < nr; i++) {
    struct pf_table *tab = e[i].tab;
    uint32_t idx;
    struct pf_node *m;
    pf_ref ref;
    if (!tab) {
      ret = -EINVAL;                        /* (never: every entry has its table) */
      break;
    }
    idx = pf_key_bucket(tab, &e[i].key);
    if (tab == &pf_table) {
      if (!(m = pf_vx_member(w, k, &ref))) {
        ret = -ENOMEM;
        break;
      }
      /* its entry in `pi` (a move publishes over `seq`) */
      pf_node_prepare(m, &e[i].key, idx, PFUTEX_BITSET_MATCH_ANY, PF_VX_MEMBER(i, 0));
    } else {
      ref = mref[i];
      m = &tab->slots[ref - 1];
      pf_node_prepare(m, &e[i].key, idx, PFUTEX_BITSET_MATCH_ANY,
                      PF_VX_MEMBER(i, pf_vx_lead_of(w, tab)));
      m->seq = tab->ops->next_seq(tab);
      m->waker = w->lref;                   /* its waiter, for a requeue (M) */
    }
    AO_int_store(&m->state, PF_W_QUEUED);
    AO_int_fetch_and_add_full(&tab->buckets[idx].waiters, 1);      /* (A) */
    m->counted = 1;
    pf_bucket_push(tab, idx, m, ref);                               /* (H) */
    if (tab == &pf_table)
      w->vx_pushed = ++k;
    if (pf_word_load(e[i].uaddr) != e[i].val)
      ret = -EAGAIN;
  }
  /* sleep until the parker is rung, the deadline, or a handler; with
   * shared tables' words in slices of PF_REGION_SLICE_NS (the (R) check),
   * with further tables' words in polls of their parkers */
  while (ret == 0) {
    struct pf_deadline slice;
    int last = 1;
    uint32_t st;
    if (w->vx_sec) {
      pf_slice_ns(dl, poll_ns, &slice, &last);
      if (poll_ns < PF_VX_POLL_MAX_NS)
        poll_ns *= 2;
    } else if (rtab) {
      pf_slice_ns(dl, PF_REGION_SLICE_NS, &slice, &last);
    }
    w->vx_sliced = !last;                   /* (the explorer fires a slice only once
                                               the parker was rung: src/schedpt.h) */
#ifdef PF_SCHED_POINTS
    if (!last)
      pf_vx_sched_alt(w, e, mref, nr);
#endif
    ret = pf_waiter_park(w, last ? dl : &slice, async);
    w->vx_sliced = 0;
#ifdef PF_SCHED_POINTS
    pf_sched_alt.n = 0;
#endif
    if (ret == -ETIMEDOUT && !last) {
      ret = 0;
      if (!pf_vx_any_waking(w, e, mref, nr))
        continue;
      /* counted (its waker gone, or another table's parker rung): woken;
       * or moved (M) */
      if ((ret = pf_vx_settle(w, e, mref, nr)) != 0) {
        ret = ret > 0 ? 0 : ret;
        break;
      }
      continue;
    }
    if (ret != 0)
      break;
    /* the parker's state read once: read again for the second test, a
     * move that rang it in between (QUEUED -> WAKING) was taken for a
     * detach, and the end took the moved member off its new queue: an
     * EINTR no signal caused, or a restart on the old words while the
     * requeue had counted the member moved (a lost wakeup) */
    st = AO_int_load_acquire(&p->state);
    if (st == PF_W_WAKING) {
      /* rung: by a wake, or by a move (M) */
      if ((ret = pf_vx_settle(w, e, mref, nr)) != 0) {
        ret = ret > 0 ? 0 : ret;
        break;
      }
      continue;
    }
    if (st != PF_W_QUEUED)
      break;                                /* detached */
    {
      /* a surplus token (one a re-arming left, pf_vx_rearm): back, as
       * wait.c does; then the state again: a ring or a handler's detach
       * (pf_vx_detach) that came meanwhile may have given the token just
       * taken back, and collects and the next park need it: given again
       * (the token is a word set to 1 by every unpark: giving it twice is
       * harmless) */
      unsigned int tok = AO_int_load(&p->park.word);
      if (tok != 0 && AO_int_compare_and_swap_full(&p->park.word, tok, 0)
          && AO_int_load_acquire(&p->state) != PF_W_QUEUED)
        AO_int_store_release(&p->park.word, tok);
    }
  }
  pf_crit_enter(&c);
  woken = pf_vx_end(w);
  pf_crit_exit(&c);
  if (woken >= 0)
    ret = woken;                            /* woken wins */
  else if (ret == 0)
    ret = -EINTR;                           /* detached, nothing woken: as a handler */
  pthread_cleanup_pop(0);
  pf_self_pop(t, w);
  return ret;
}

long
pf_emu_waitv(struct pfutex_waitv *uw, unsigned int nr, unsigned int flags,
             const struct timespec *timeout, int clockid)
{
  struct pf_vx_entry e[PF_WAITV_MAX];
  struct pfutex_waitv v[PF_WAITV_MAX];
  struct pf_deadline dl, *dlp = NULL;
  struct pf_req tr;
  struct pf_table *tabs[PF_WAITV_MAX];
  uint32_t i, j, ntabs = 0;
  int ret, type = PTHREAD_CANCEL_DEFERRED, async;

  /* Linux's order: flags, count, the timeout (clock, pointer, values),
   * the array (pointer, then each entry's flags, reserved field and
   * value), then the keys (alignment, address), then the values. */
  if (flags)
    return -EINVAL;
  if (nr == 0 || nr > PF_WAITV_MAX || !uw)
    return -EINVAL;
  if (timeout) {
    if (clockid != PFUTEX_CLOCK_MONOTONIC && clockid != PFUTEX_CLOCK_REALTIME)
      return -EINVAL;
    memset(&tr, 0, sizeof tr);
    tr.uts = timeout;
    tr.uts_kind = PF_TS_ABS;
    tr.clock = clockid;
    if ((ret = pf_req_deadline(&tr, &dl)) < 0)
      return ret;
    dlp = ret > 0 ? &dl : NULL;
  }
  if (pf_addr_unreadable(uw) || pf_os_copy_in(v, uw, nr * sizeof v[0]) < 0)
    return -EFAULT;
  for (i = 0; i < nr; i++) {
    /* FUTEX2_MPOL (a memory-policy hint for the kernel's table) is
     * accepted and has no effect here; FUTEX2_NUMA (a node word after the
     * value) is not implemented: EINVAL (doc/internals.md). */
    if ((v[i].flags & ~(PFUTEX2_SIZE_U32 | PFUTEX2_PRIVATE | PF_FUTEX2_MPOL | 0x03u))
        || (v[i].flags & 0x03u) != PFUTEX2_SIZE_U32)
      return -EINVAL;
    if (v[i].__reserved)
      return -EINVAL;
    if (v[i].val > 0xffffffffull)
      return -EINVAL;
  }
  for (i = 0; i < nr; i++) {
    struct pf_table *tab;
    uint32_t *ua = (uint32_t *)(uintptr_t)v[i].uaddr;
    if ((uintptr_t)v[i].uaddr != v[i].uaddr)
      return -EFAULT;
    if ((ret = pf_key_make(ua, (v[i].flags & PFUTEX2_PRIVATE) ? 0 : PF_F_SHARED, &e[i].key,
                           &tab)) < 0)
      return ret;
    if ((ret = pf_key_object(ua, &e[i].key, &tab)) < 0)
      return ret;
    /* A shared key is the page's: its word must be there now.  A private
     * key needs no read: its word is read with the values, in order. */
    if (!(v[i].flags & PFUTEX2_PRIVATE) && (ret = pf_word_check(ua)) < 0)
      return ret;
    if (tab != &pf_table) {                 /* a shared table: the first, or a further one */
      for (j = 0; j < ntabs && tabs[j] != tab; j++)
        ;
      if (j == ntabs)
        tabs[ntabs++] = tab;
    }
    e[i].tab = tab;
    if ((v[i].flags & PFUTEX2_PRIVATE) == 0 && (ret = pf_os_shared_key_check(ua)) < 0)
      return ret;
    e[i].uaddr = ua;
    e[i].val = (uint32_t)v[i].val;
  }
  /* A mismatch before anything is queued (the fast path); the values in
   * order, as Linux reads them: a private word that mismatches answers
   * EAGAIN even when a later private word is unreadable. */
  for (i = 0; i < nr; i++) {
    if ((v[i].flags & PFUTEX2_PRIVATE) && (ret = pf_word_check(e[i].uaddr)) < 0)
      return ret;
    if (pf_word_load(e[i].uaddr) != e[i].val)
      return -EAGAIN;
  }
  pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &type);       /* wait.c (X) */
  async = type == PTHREAD_CANCEL_ASYNCHRONOUS;
  for (;;) {
    ret = pf_vx_once(e, nr, tabs, ntabs, dlp, async);
    if (ret != -EINTR || !pf_sig_restartable())
      break;
    for (i = 0; i < nr; i++)                /* futex_waitv(2) restarts: the words again */
      if (pf_word_load(e[i].uaddr) != e[i].val)
        break;
    if (i < nr) {
      ret = -EAGAIN;
      break;
    }
  }
  if (async)
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &type);
  return ret;
}
