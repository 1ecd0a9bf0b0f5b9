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
 *             requeues treat a member as any waiter (a requeue moves it);
 *             each one woken is counted.
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
 * The words: private ones and shared ones outside shared regions (both
 * keyed in this process's table), or shared words of one region: there
 * the parker and the members are region slots (pf_vx_once_region), so a
 * waker in another process reaches them.  Words of two tables (a
 * region's with private ones, or two regions'): EINVAL, not yet. */
#include "emu.h"
#include "os.h"

#include <pthread.h>
#include <string.h>

#define PF_WAITV_MAX 128

/* Members found woken at the ends of waits, in all (white-box tests: every
 * wake's count must be one of these, tests/waitv_storm). */
volatile AO_t pf_vx_woken_total;

struct pf_vx_entry {
  uint32_t *uaddr;
  uint32_t val;
  struct pf_key key;
};

/* Member i of w: its node and reference. */
static struct pf_node *
pf_vx_member(const struct pf_waiter *w, uint32_t i, pf_ref *ref)
{
  struct pf_thread *rec = w->vx;
  uint32_t k;
  for (k = 0; k < i / PF_NEST_MAX; k++)
    rec = rec->vx_next;
  *ref = rec->index * PF_NEST_MAX + i % PF_NEST_MAX + 1;
  return &rec->nodes[i % PF_NEST_MAX].n;
}

/* No member can be woken any more: disarm the parker p (QUEUED -> GONE),
 * or collect its token, due (D: a waker rang it) or given (G: detached). */
static void
pf_vx_disarm(struct pf_waiter *w, struct pf_node *p, int shared)
{
  uint32_t st = AO_int_load(&p->state);
  if (st == PF_W_QUEUED && AO_int_compare_and_swap_full(&p->state, PF_W_QUEUED, PF_W_GONE))
    st = PF_W_GONE;
  else
    st = AO_int_load(&p->state);
  if (st == PF_W_WAKING || st == PF_W_DETACHED)
    pf_emu_port->collect(&w->parker, &p->park, shared);
  AO_int_store(&p->state, PF_W_IDLE);
}

/* The end (critical section held): every queued member off, the parker
 * disarmed and its token collected if due, the records returned.  The
 * highest index found woken, or -1. */
static int
pf_vx_end(struct pf_waiter *w)
{
  struct pf_waiter tmp;
  struct pf_thread *rec, *next;
  uint32_t i;
  int woken = -1;

  memset(&tmp, 0, sizeof tmp);
  tmp.tab = &pf_table;
  for (i = 0; i < w->vx_pushed; i++) {
    pf_ref ref;
    struct pf_node *m = pf_vx_member(w, i, &ref);
    tmp.node = m;
    if (!pf_waiter_dequeue(&tmp, PF_W_GONE, 0) && AO_int_load(&m->state) == PF_W_WAKING) {
      woken = (int)i;
      AO_fetch_and_add1(&pf_vx_woken_total);
    }
    AO_int_store(&m->state, PF_W_IDLE);
  }
  pf_vx_disarm(w, &w->n, 0);
  for (rec = w->vx; rec; rec = next) {
    next = rec->vx_next;
    pf_record_return(rec);
  }
  w->vx = NULL;
  w->vx_n = 0;
  w->vx_pushed = 0;
  return woken;
}

static int pf_vx_end_region(struct pf_waiter *w);

/* A wait's result: its end (in a critical section), then woken wins over
 * the park's answer; nothing woken after a detach: -EINTR, as a handler. */
static int
pf_vx_result(struct pf_waiter *w, int ret, int region)
{
  struct pf_crit c;
  int woken;
  pf_crit_enter(&c);
  woken = region ? pf_vx_end_region(w) : pf_vx_end(w);
  pf_crit_exit(&c);
  if (woken >= 0)
    return woken;
  return ret == 0 ? -EINTR : ret;
}

/* ---- In a region ----------------------------------------------------------------------- */
/* The end of a region waitv (critical section held): every member slot of
 * the wait (its `pi` names the parker, w's slot) off its queue under its
 * bucket's lock and given back, then the parker disarmed and its token
 * collected if due: as pf_vx_end.  The highest index found woken, or -1. */
static int
pf_vx_end_region(struct pf_waiter *w)
{
  struct pf_table *tab = w->tab;
  struct pf_node *p = w->node;
  struct pf_waiter tmp;
  uint32_t s, left = w->vx_n;
  int woken = -1;

  memset(&tmp, 0, sizeof tmp);
  tmp.tab = tab;
  for (s = 0; s < tab->nslots && left > 0; s++) {
    struct pf_node *m = &tab->slots[s];
    uint32_t pi = m->pi;
    if ((pi & PF_PI_KIND) != PF_PI_VX || pi == PF_VX_PARKER || PF_VX_LEAD(pi) != (uint32_t)w->ref
        || !tab->ops->slot_mine(tab, m))
      continue;
    left--;
    if (AO_int_load(&m->state) != PF_W_IDLE) {        /* queued (IDLE: claimed only) */
      tmp.node = m;
      if (!pf_waiter_dequeue(&tmp, PF_W_GONE, 0) && AO_int_load(&m->state) == PF_W_WAKING) {
        if ((int)PF_VX_INDEX(pi) > woken)
          woken = (int)PF_VX_INDEX(pi);
        AO_fetch_and_add1(&pf_vx_woken_total);
      }
    }
    AO_int_store(&m->state, PF_W_IDLE);
    tab->ops->slot_release(tab, m);
  }
  p->pi = 0;
  pf_vx_disarm(w, p, 1);
  w->vx_n = 0;
  w->vx_pushed = 0;
  return woken;
}

/* One waitv on words of one region: the parker is this wait's slot (on
 * no queue, PF_VX_PARKER: a rebuild leaves it alone), each member a slot
 * of its own naming it; a waker rings it as in the private table
 * (src/table.c).  A member found WAKING after a slice with the parker
 * still armed: its waker died before ringing it, and it counted the
 * member: woken (wait.c (R)). */
static PF_NOINLINE int
pf_vx_once_region(const struct pf_vx_entry *e, uint32_t nr, struct pf_table *tab,
                  const struct pf_deadline *dl, int async)
{
  volatile char here = 0;
  pf_ref mref[PF_WAITV_MAX];
  struct pf_req r;
  struct pf_thread *t;
  struct pf_waiter *w;
  struct pf_node *p;
  struct pf_crit c;
  uint32_t i;
  int ret = 0;

  memset(&r, 0, sizeof r);
  r.uaddr = e[0].uaddr;
  r.flags = PF_F_SHARED;
  if ((ret = pf_waiter_claim(&r, tab, (uintptr_t)&here, &t, &w)) < 0)
    return ret;
  p = w->node;
  pthread_cleanup_push(pf_wait_cancelled, w);
  p->bucket = 0;
  p->linked = 0;
  p->counted = 0;
  p->pushed = 0;
  p->pi = PF_VX_PARKER;
  w->vx = NULL;
  w->vx_pushed = 0;
  /* the members' slots (a claim may reclaim dead processes' slots, which
   * takes bucket locks: inside a critical section) */
  pf_crit_enter(&c);
  AO_int_store(&p->state, PF_W_QUEUED);     /* armed, before any member queues */
  w->vx_n = nr;
  for (i = 0; i < nr; i++) {
    if ((ret = tab->ops->slot_claim(tab, &mref[i], 1)) < 0)
      break;
    tab->slots[mref[i] - 1].pi = PF_VX_MEMBER(i, w->ref);
  }
  pf_crit_exit(&c);

  /* queue the members, each as a plain waiter queues (wait.c (A), (H)) */
  for (i = 0; ret == 0 && i < nr; i++) {
    struct pf_node *m = &tab->slots[mref[i] - 1];
    uint32_t idx = pf_key_bucket(tab, &e[i].key);
    pf_node_prepare(m, &e[i].key, idx, PFUTEX_BITSET_MATCH_ANY, PF_VX_MEMBER(i, w->ref));
    m->seq = tab->ops->next_seq(tab);
    AO_int_store(&m->state, PF_W_QUEUED);
    AO_int_fetch_and_add_full(&tab->buckets[idx].waiters, 1);      /* (A) */
    m->counted = 1;
    pf_bucket_push(tab, idx, m, mref[i]);                           /* (H) */
    w->vx_pushed = i + 1;
    if (pf_word_load(e[i].uaddr) != e[i].val)
      ret = -EAGAIN;
  }
  if (ret == 0) {
    for (;;) {
      struct pf_deadline slice;
      int last;
      pf_slice_ns(dl, PF_REGION_SLICE_NS, &slice, &last);
      ret = pf_waiter_park(w, &slice, async);
      if (ret == -ETIMEDOUT && !last) {
        for (i = 0; i < w->vx_pushed; i++)
          if (AO_int_load(&tab->slots[mref[i] - 1].state) == PF_W_WAKING)
            break;
        if (i < w->vx_pushed) {
          ret = 0;                          /* counted, its waker gone: woken */
          break;
        }
        continue;
      }
      if (ret != 0 || AO_int_load(&p->state) != PF_W_QUEUED)
        break;
      {                                     /* a surplus token: back, as wait.c does */
        unsigned int tok = AO_int_load(&p->park.word);
        if (tok != 0)
          (void)AO_int_compare_and_swap_full(&p->park.word, tok, 0);
      }
    }
  }
  ret = pf_vx_result(w, ret, 1);
  pthread_cleanup_pop(0);
  pf_self_pop(t, w);
  return ret;
}

void
pf_vx_detach(struct pf_waiter *w)
{
  if (AO_int_compare_and_swap_full(&w->node->state, PF_W_QUEUED, PF_W_DETACHED))
    pf_emu_port->unpark(&w->node->park, w->tab && w->tab->slots != NULL);
}

void
pf_vx_abandon(struct pf_waiter *w)
{
  struct pf_table *tab = w->tab;
  if (tab && tab->slots) {
    (void)pf_vx_end_region(w);
    tab->ops->slot_release(tab, w->node);
    tab->ops->wait_end(tab);
  } else {
    (void)pf_vx_end(w);
  }
  w->tab = NULL;
  w->node = &w->n;
}

/* One waitv: claim the level (the parker), lend records, queue the
 * members, sleep, end.  Out of line, as pf_emu_wait_once (wait.c (X)). */
static PF_NOINLINE int
pf_vx_once(const struct pf_vx_entry *e, uint32_t nr, const struct pf_deadline *dl, int async)
{
  volatile char here = 0;
  struct pf_req r;
  struct pf_thread *t, *rec, **tail;
  struct pf_waiter *w;
  struct pf_crit c;
  uint32_t i, k;
  int ret;

  memset(&r, 0, sizeof r);
  r.uaddr = e[0].uaddr;                     /* private: the claim needs no shared check */
  if ((ret = pf_waiter_claim(&r, &pf_table, (uintptr_t)&here, &t, &w)) < 0)
    return ret;
  pthread_cleanup_push(pf_wait_cancelled, w);
  w->n.bucket = 0;
  w->n.linked = 0;
  w->n.counted = 0;
  w->n.pi = 0;
  /* the records for the members (the pool's lock: inside a critical
   * section); vx_n set last, once the chain is whole */
  pf_crit_enter(&c);
  w->vx = NULL;
  w->vx_pushed = 0;
  tail = &w->vx;
  ret = 0;
  for (k = 0; k < (nr + PF_NEST_MAX - 1) / PF_NEST_MAX; k++) {
    if (!(rec = pf_record_lend())) {
      ret = -ENOMEM;
      break;
    }
    rec->vx_lead = &w->n;
    rec->vx_lead_ref = w->ref;
    *tail = rec;
    tail = &rec->vx_next;
  }
  if (ret == 0) {
    AO_int_store(&w->n.state, PF_W_QUEUED);   /* armed, before any member queues */
    w->vx_n = nr;
  } else {
    for (rec = w->vx; rec; rec = w->vx) {
      w->vx = rec->vx_next;
      pf_record_return(rec);
    }
  }
  pf_crit_exit(&c);
  if (ret < 0)
    goto out;

  /* queue the members, each as a plain waiter queues (wait.c (A), (H)) */
  for (i = 0; i < nr; i++) {
    pf_ref ref;
    struct pf_node *m = pf_vx_member(w, i, &ref);
    uint32_t idx = pf_key_bucket(&pf_table, &e[i].key);
    pf_node_prepare(m, &e[i].key, idx, PFUTEX_BITSET_MATCH_ANY, PF_PI_VX);
    AO_int_store(&m->state, PF_W_QUEUED);
    AO_int_fetch_and_add_full(&pf_table.buckets[idx].waiters, 1);   /* (A) */
    m->counted = 1;
    pf_bucket_push(&pf_table, idx, m, ref);                         /* (H) */
    w->vx_pushed = i + 1;
    if (pf_word_load(e[i].uaddr) != e[i].val) {
      ret = -EAGAIN;
      break;
    }
  }
  if (ret == 0) {
    /* sleep until the parker is rung, the deadline, or a handler */
    for (;;) {
      ret = pf_waiter_park(w, dl, async);
      if (ret != 0 || AO_int_load(&w->n.state) != PF_W_QUEUED)
        break;
      {                                     /* a surplus token: back, as wait.c does */
        unsigned int tok = AO_int_load(&w->n.park.word);
        if (tok != 0)
          (void)AO_int_compare_and_swap_full(&w->n.park.word, tok, 0);
      }
    }
  }
  ret = pf_vx_result(w, ret, 0);
out:
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
  struct pf_table *vtab = NULL;
  uint32_t i;
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
    if ((v[i].flags & ~(PFUTEX2_SIZE_U32 | PFUTEX2_PRIVATE | 0x03u)) || (v[i].flags & 0x03u) != PFUTEX2_SIZE_U32)
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
    if ((ret = pf_word_check(ua)) < 0)
      return ret;
    if (i == 0)
      vtab = tab;
    else if (tab != vtab)
      return -EINVAL;                       /* words of two tables: not yet (above) */
    if ((v[i].flags & PFUTEX2_PRIVATE) == 0 && (ret = pf_os_shared_key_check(ua)) < 0)
      return ret;
    e[i].uaddr = ua;
    e[i].val = (uint32_t)v[i].val;
  }
  /* a mismatch before anything is queued (the fast path) */
  for (i = 0; i < nr; i++)
    if (pf_word_load(e[i].uaddr) != e[i].val)
      return -EAGAIN;
  pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &type);       /* wait.c (X) */
  async = type == PTHREAD_CANCEL_ASYNCHRONOUS;
  for (;;) {
    ret = vtab == &pf_table ? pf_vx_once(e, nr, dlp, async)
                            : pf_vx_once_region(e, nr, vtab, dlp, async);
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
