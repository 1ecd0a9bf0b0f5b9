/* wait.c - FUTEX_WAIT / WAIT_BITSET under emulation.
 *
 * The ordering argument: why no wakeup is lost.
 *
 * A waiter must never sleep after a waker has changed the futex word and
 * decided there is nobody to wake.  The protocol, for waiter W and waker K
 * on the same key (so the same bucket B):
 *
 *   W:  waiters(B) += 1   (A) AO_fetch_and_add1_full: a full barrier
 *       push node onto B's incoming stack (H): a full-barrier CAS
 *       read *uaddr; if != val: leave the queue (under the lock), EAGAIN
 *       park
 *
 *   K:  *uaddr = new      (the caller's store, before it calls wake)
 *       (B) AO_nop_full(), then read waiters(B): a full barrier, then the read
 *       if waiters(B) == 0: return 0            -- the fast path, no lock
 *       lock(B); dequeue matches; unlock(B); unpark them
 *
 * (A) orders W's increment before W's read of *uaddr; (B) orders K's store
 * to *uaddr before K's read of the count.  With both full barriers, either
 * K's read sees W's increment (then K takes the lock and drains B's
 * incoming stack: K finds the node, or W's push and its read of *uaddr
 * come after K's drain and so after K's store, (H)), or W's increment
 * comes after K's read, so W's read of *uaddr comes after K's store: W
 * sees the new value and does not sleep.  This is the kernel's (A)/(B) pairing in
 * futex_hb_waiters_inc / futex_hb_waiters_pending.
 *
 * (C) Requeue raises waiters(B2) before taking the locks, so a waker of
 * uaddr2 racing with a requeue takes B2's lock rather than the fast path.
 *
 * (D) Woken wins.  A waker unlinks the node and sets WAKING under the lock,
 * so once the waiter holds the lock and sees WAKING it knows it was counted:
 * it returns 0 even if its deadline passed or a signal arrived.  It first
 * collects the port's token: the unpark is on its way, and giving the token
 * is the waker's last touch of the node (the port reads what it needs from
 * the parker before it gives the token, e.g. the futex port's release store
 * of the word, after which only the address goes to FUTEX_WAKE).  So the
 * stack frame that holds the node outlives every access to it.  A FUTEX_WAKE
 * that reaches the address after the frame is reused can only cause a
 * spurious wakeup of a kernel futex there, which every futex waiter
 * (ours re-check their word) tolerates.
 *
 * (E) A timed-out or interrupted waiter removes itself from the bucket it is
 * on now: requeue may have moved it, so it locks the bucket its node names,
 * checks the name did not change meanwhile, and retries if it did
 * (pf_waiter_dequeue, table.c).  It was counted by no one: a requeue moves
 * a node only after it woke nr_wake nodes, all from one snapshot of the
 * queue (I), so a waiter that times out after a move was never woken.
 *
 * (F) Restart.  A port never restarts its sleep after a signal handler: it
 * returns -EINTR and the waiter leaves the queue.  The wait then does what
 * Linux's restart does when the handler had SA_RESTART: it starts over,
 * re-reading the word (EAGAIN if the handler, or anyone, changed it);
 * otherwise EINTR.  futex(2) restarts untimed waits only (a timed one
 * always fails with EINTR after a handler); futex_wait(2), the model of
 * the clean call, restarts timed waits too, with the same absolute
 * deadline.
 * The port cannot say which signal ran: pf_sig_restartable (thread.c)
 * decides from the handlers installed (exact unless they disagree).
 *
 * (H) Waiters queue without the bucket lock.  A waiter pushes its node onto
 * the bucket's incoming stack with one compare-and-swap (after (A)) and
 * only then reads the word; every lock holder first drains the stack onto
 * the queue (pf_bucket_drain_locked).  Why no wakeup is lost: if K's read
 * of the count misses W's (A), W's read of the word comes after K's store,
 * as above.  Otherwise K drains under the lock: W's push is either before
 * K's drain (K finds W) or after it; pushes and drains are atomic
 * operations on one word, so then W's read of the word, after its push,
 * comes after K's store, and W sees the new value and leaves again
 * (pf_waiter_leave).  The point is the signal handler: a push is a single
 * instruction, so a handler never finds a queue half changed by its own
 * thread, and the common wait takes no lock and no signal mask.  A handler
 * that detaches the wait before the push (G) finds the node on no queue;
 * the owner then pushes a DETACHED node, which wakers skip and the owner
 * removes after its park.
 *
 * (I) One drain per bucket per operation.  Because waiters queue without
 * the lock (H), holding a bucket's lock does not keep waiters out of it:
 * pushes go on while the holder works.  So a lock holder drains each
 * bucket it holds exactly once, and acts on that snapshot alone: the drain
 * is the operation's linearisation point for that bucket.  It comes after
 * the operation's last store to a futex word (WAKE_OP's store to uaddr2,
 * made under the locks: a waiter that pushes after the drain reads the word
 * after that store, (H)) and before its first look at the queue.  Two
 * drains under one hold would let a waiter that arrived after the first
 * into the second look: a requeue that woke fewer than nr_wake (nobody was
 * there) could then move the newcomer to uaddr2, and return woken + moved
 * in a way the caller must read as "woken" (the kernel moves only once
 * nr_wake were woken), while the waiter slept on at uaddr2 until its
 * timeout.  That was a lost wakeup (about 1 wake in 200 in a requeue
 * storm of timed waiters).  pf_bucket_ready_locked /
 * pf_bucket_ready2_locked drain; pf_queue_wake_locked and the requeue walk
 * never do.
 *
 * (G) Handlers.  Every region that holds a bucket lock (and a waker's
 * unparks) runs with signals blocked and cancellation disabled
 * (pf_crit_enter), so a handler never meets a lock its own thread holds.
 * Between those regions a handler may run while this thread's node is
 * queued; if it calls pfutex, that call first detaches the interrupted
 * wait (QUEUED -> DETACHED, token given: pf_self_enter), as the kernel has
 * its waiter off the queue while a handler runs; the interrupted wait then
 * restarts or fails with EINTR by (F).  Nested waits use the next node of
 * the thread's record, each with its own parker.
 *
 * (X) Asynchronous cancellation.  The wait's cleanup handler
 * (pthread_cleanup_push, run by the forced unwind with -fexceptions) has
 * a landing pad in the frame of pf_emu_wait_once, and the compiler makes
 * that pad's register state right only at the frame's calls: an
 * asynchronous cancellation taken between two of its other instructions
 * enters the pad with registers holding other values (GCC on aarch64 kept
 * the record t where the pad expects &c in x23, and pf_crit_enter(&c)
 * wrote the signal mask and cancellation state over t->next and
 * t->nodes[0].node).  So, as glibc does around its cancellable system
 * calls (__pthread_enable_asynccancel), a wait runs with cancellation
 * deferred and lets an asynchronous one in only for the length of the
 * port's park, in a function of its own (pf_port_park): the frames that
 * hold landing pads are then interrupted at a call.  A cancellation that
 * came meanwhile acts as the park starts, or as the wait returns.  (A
 * handler that leaves a wait by siglongjmp outside the park leaves the
 * thread's cancellation type deferred: asynchronous cancellation is
 * enabled again by the caller, as after any siglongjmp out of code that
 * changed it.)
 *
 * (R) Regions.  A wait on a region's word queues a slot of the region's
 * table instead of the record's own node: the same protocol, in shared
 * memory, with three additions for peers that die at any instruction.
 * The slot names its owner (process entry and generation): wakers skip and
 * free the slots of dead processes, so a wake never lands on a dead
 * waiter.  The waiter parks in slices of PF_REGION_SLICE_NS, and a waiter
 * that was counted (WAKING) but whose token has not come by the end of a
 * slice takes itself as woken (woken wins): its waker died between the two,
 * or a corrupt slot sent the token elsewhere.  Nothing in a region waits
 * for a token longer than a slice.  A surplus token (one that
 * comes after all, a scribble) is a spurious return of the park, absorbed:
 * a park that returns 0 while the node is still QUEUED takes the token back
 * and parks again.
 *
 * (M) Moving to another table.  A node is memory of its table, so a
 * requeue to a word of another table (a region and this process's table, a
 * shared mapping's word and a word of private memory, two regions) cannot
 * move it: under both bucket locks it queues a node of the other table in
 * its place, for the same waiter (a slot this process owns, or a node of a
 * record lent from the pool), marks it PF_PI_ADOPT (not armed), names it in
 * the waiter's record (mv_node), unlinks the old node, marks it MOVED and,
 * after unlocking, gives its token.  The waiter, once it holds that token,
 * locks the new node's bucket and adopts it: QUEUED, it arms it (clears
 * the mark, prepares its park) and parks on it; WAKING, a waker took it
 * first (it gave no token, the park being unarmed) and the wait returns 0.
 * Why nothing is lost: the new node is queued and counted under uaddr2's
 * bucket lock before the requeue returns, so every later wake of uaddr2
 * finds it (wait.c's argument, unchanged); whether the waker comes before
 * the adoption or after, it marks the node under that lock and the waiter
 * reads the mark under it, so the node is counted once and returns once.
 * A timeout or signal meanwhile finds the old node MOVED (not QUEUED):
 * the waiter takes its token, adopts, and leaves the new node as any node
 * (woken wins).  A second move of a node not adopted yet gives it back and
 * names the newer one: the waiter reads the name (node and table, as one
 * pair: a sequence count) without a lock, locks that node's bucket and
 * reads it again there, where every renaming of that node is done.  The
 * requeuer finds a slot's waiter by the private reference the slot holds
 * in `waker` while it is queued.
 * Another process's waiter (its record out of reach), or a node whose
 * waiter is not named for it (one published, below, not adopted yet),
 * finds its new node published in the node it leaves instead: after
 * MOVED, the target table's order and the node's reference, key space
 * PF_KEY_XDEST (src/requeue.c pf_xmove_pub_locked).  The waiter finds
 * that table among its own by its order (a wait begun on it), locks the
 * node's bucket, checks the node is its own (its process's slot, queued
 * for its wait) and adopts it as above; a published node moved on again
 * is MOVED with a publication of its own, which the waiter follows.
 * Published nothing yet: it waits for the old node's bucket lock (the
 * requeuer holds it until done) and looks again.  A destination out of
 * reach (its requeuer was killed half way, or this process closed that
 * table) ends the wait as a spurious wakeup: nothing queued for it is
 * left for a wake to count.  A futex_waitv member moves as another
 * process's waiter does, and its waitv follows it (src/waitv.c (M)).
 * Another process's waiter to a table that process has no entry in is
 * not moved: EINVAL with nothing done.
 */
#include "emu.h"
#include "os.h"

#include <pthread.h>


/* Under a critical section: make sure w is off its queue, and take it off
 * if still QUEUED (to GONE): 1 if we took it, 0 if a waker or a handler
 * did (the token is then due). */
static int
pf_waiter_leave(struct pf_waiter *w)
{
  struct pf_crit c;
  int took;
  pf_crit_enter(&c);
  took = pf_waiter_dequeue(w, PF_W_GONE, 0);                          /* (E) */
  pf_crit_exit(&c);
  return took;
}


/* The end of a slice of ns (< 1 s) or the deadline, whichever is first
 * (*last set when it is the deadline). */
void
pf_slice_ns(const struct pf_deadline *dl, long ns, struct pf_deadline *out, int *last)
{
  struct timespec now;
  int clock = dl ? dl->clock : PFUTEX_CLOCK_MONOTONIC;
  *last = 0;
  if (pf_clock_now(clock, &now) < 0) {
    now.tv_sec = 0;
    now.tv_nsec = 0;
  }
  out->clock = clock;
  out->abs = now;
  out->abs.tv_nsec += ns % 1000000000L;
  out->abs.tv_sec += ns / 1000000000L;
  if (out->abs.tv_nsec >= 1000000000L) {
    out->abs.tv_nsec -= 1000000000L;
    out->abs.tv_sec++;
  }
  if (dl && (dl->abs.tv_sec < out->abs.tv_sec
             || (dl->abs.tv_sec == out->abs.tv_sec && dl->abs.tv_nsec <= out->abs.tv_nsec))) {
    *out = *dl;
    *last = 1;
  }
}

/* The port's park, with asynchronous cancellation let in for its length
 * only when the caller had it enabled (async): see (X).  Out of line, so
 * the frame that holds the wait's cleanup handler is interrupted at this
 * call, never between two of its own instructions. */
static PF_NOINLINE int
pf_port_park(struct pf_waiter *w, int shared, const struct pf_deadline *dl, int async)
{
  int ret, old;
#ifndef _WIN32
  AO_store(&w->parker.parked, (AO_t)(uintptr_t)pthread_self());  /* src/port.h (Windows:
                                                                    the port's sleeper) */
#endif
  if (async)
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &old);   /* a pending one acts here */
  ret = pf_emu_port->park(&w->parker, &w->node->park, shared, dl);
  if (async)
    pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &old);
#ifndef _WIN32
  AO_store(&w->parker.parked, 0);
#endif
  return ret;
}

/* One park of w: the port's, in slices for a region (R). */
int
pf_waiter_park(struct pf_waiter *w, const struct pf_deadline *dl, int async)
{
  int shared = w->tab->slots != NULL;
  if (!shared) {
    int ret;
    PF_SCHED_SLICE(PF_SCHED_POLLING() || w->vx_sliced);   /* a poll's slice, or a waitv's
                                                             (sched points only) */
    ret = pf_port_park(w, 0, dl, async);
    PF_SCHED_SLICE(0);
    return ret;
  }
  for (;;) {
    struct pf_deadline slice;
    int last, ret;
    long ns = w->tab->ops->slice_ns(w->tab);     /* shorter with robust lists there */
    pf_slice_ns(dl, ns > 0 && ns < PF_REGION_SLICE_NS ? ns : PF_REGION_SLICE_NS, &slice, &last);
    PF_SCHED_SLICE(!last || w->vx_sliced || PF_SCHED_POLLING());   /* src/schedpt.h */
    ret = pf_port_park(w, 1, &slice, async);
    PF_SCHED_SLICE(0);
    if (ret != -ETIMEDOUT || last)
      return ret;
    /* a slice without a token: counted meanwhile (R), or not ours any more */
    if (AO_int_load_acquire(&w->node->state) == PF_W_MOVED) {
      /* (M) its requeuer, a thread of this process, gives it now: a
       * moved waiter holds its token before it adopts */
      pf_emu_port->collect(&w->parker, &w->node->park, 1);
      return 0;
    }
    if (AO_int_load_acquire(&w->node->state) != PF_W_QUEUED || !w->tab->ops->slot_mine(w->tab, w->node))
      return 0;
    /* dead processes' robust lists (src/region/robust.c): their walk may
     * wake this very waiter (its state then says so) */
    w->tab->ops->robust_check(w->tab);
    if (AO_int_load_acquire(&w->node->state) != PF_W_QUEUED)
      return 0;
  }
}

/* Collect w's token; a region's waits for it one slice at most (R). */
static void
pf_waiter_collect(struct pf_waiter *w)
{
  pf_emu_port->collect(&w->parker, &w->node->park, w->tab->slots != NULL);
}

/* Park w until a waker takes it, its deadline passes or a handler runs.
 * 0 woken (woken wins), -ETIMEDOUT, -EINTR (a handler ran, or detached
 * it).  w is IDLE on return: off every queue, its token collected. */
/* w's node is still this wait's: always for the private table; in a
 * region, unless corruption freed the slot under it. */
static int
pf_waiter_intact(const struct pf_waiter *w)
{
  return !w->tab->slots || w->tab->ops->slot_mine(w->tab, w->node);
}

/* Park w until a waker takes it, its deadline passes or a handler runs.
 * 0 woken (woken wins), -ETIMEDOUT, -EINTR (a handler ran, or detached
 * it), -ENOTRECOVERABLE (a corrupt region took the slot from us).  w is
 * IDLE on return: off every queue, its token collected. */
/* One park, or with a poll (src/pi.c: is the lock's owner alive?) a park
 * in slices of poll->ns with poll->fn between them, while w is queued.  A
 * slice's end with w no longer queued is -ETIMEDOUT as any park's: the
 * caller collects the token due (woken wins). */
static int
pf_waiter_park_poll(struct pf_waiter *w, const struct pf_deadline *dl, int async,
                    const struct pf_sleep_poll *poll)
{
  if (!poll)
    return pf_waiter_park(w, dl, async);
  for (;;) {
    struct pf_deadline slice;
    int last, ret;
    pf_slice_ns(dl, poll->ns, &slice, &last);
    PF_SCHED_POLL(!last);
    ret = pf_waiter_park(w, &slice, async);
    PF_SCHED_POLL(0);
    if (ret != -ETIMEDOUT || last || AO_int_load_acquire(&w->node->state) != PF_W_QUEUED)
      return ret;
    poll->fn(poll->arg);
  }
}

int
pf_waiter_sleep(struct pf_waiter *w, const struct pf_deadline *dl, int async)
{
  return pf_waiter_sleep_poll(w, dl, async, NULL);
}

/* (M) The destination the requeuer published in w's node (not named in
 * w's record): its table (a wait begun on it, found by its order among
 * this process's) and node.  0; 1 when it is out of reach (the table
 * closed, a scribble: the wait ends as a spurious wakeup); -errno. */
int
pf_waiter_dest_published(struct pf_waiter *w, struct pf_table **tp, struct pf_node **np,
                         pf_ref *refp, struct pf_thread **recp)
{
  struct pf_node *old = w->node;
  struct pf_table *(*by_order)(uint64_t);
  uint64_t order;
  pf_ref ref;
  if (AO_int_load_acquire(&old->key_space) != PF_KEY_XDEST) {
    /* not yet: its requeuer holds the bucket's lock until it is done (or
     * died, and the lock is taken over): wait for it, then look again */
    uint32_t i = AO_int_load(&old->bucket);
    int ret;
    if (i >= w->tab->nbuckets)
      return 1;                             /* a scribble */
    if ((ret = pf_bucket_lock(w->tab, i)) < 0)
      return ret;
    pf_bucket_unlock(w->tab, i);
    if (AO_int_load_acquire(&old->key_space) != PF_KEY_XDEST)
      return 1;                             /* its requeuer died first: nothing there */
  }
  order = pf_node_keyword(old);
  ref = old->seq;
  *recp = NULL;
  if (order == 0) {                         /* the private table: a lent record's node */
    uint32_t rec = (ref - 1) / PF_NEST_MAX;
    if (ref == 0 || (ref - 1) % PF_NEST_MAX != 0 || (rec >> PF_CHUNK_BITS) >= PF_CHUNKS_MAX
        || !pf_chunks[rec >> PF_CHUNK_BITS])
      return 1;
    *recp = pf_thread_rec(ref);
    *tp = &pf_table;
    *np = &(*recp)->nodes[0].n;
    *refp = ref;
    return 0;
  }
  by_order = pf_table_by_order;
  if (!by_order || !(*tp = by_order(order)))
    return 1;                               /* a table this process does not have (open) */
  if (!(*np = pf_node_get(*tp, ref))) {
    (*tp)->ops->wait_end(*tp);
    return 1;
  }
  *refp = ref;
  return 0;
}

/* Under the lock of n2's bucket: is n2, published for w, w's?  (Region
 * bytes: the slot is this process's, queued for w's wait, or marked by a
 * waker or a requeue since; a lent record lent for w.) */
static int
pf_waiter_dest_mine(const struct pf_waiter *w, const struct pf_table *t2, const struct pf_node *n2,
                    const struct pf_thread *rec2)
{
  uint32_t st = AO_int_load_acquire(&n2->state);
  if (t2->slots ? !t2->ops->slot_mine(t2, n2) : rec2->nodes[0].px_for != w)
    return 0;
  if (st == PF_W_QUEUED)
    return AO_int_load(&n2->pi) == PF_PI_ADOPT && n2->waker == w->lref;
  return st == PF_W_WAKING || st == PF_W_MOVED || st == PF_W_IDLE;
}

/* A published destination's table given up before it was adopted: the
 * wait begun on it when it was found ends (a named one's is the named
 * node's, kept). */
static void
pf_waiter_dest_unfound(struct pf_table *t2, int named)
{
  if (!named && t2->slots)
    t2->ops->wait_end(t2);
}

int
pf_waiter_adopt(struct pf_waiter *w)
{
  struct pf_crit c;
  int ret;
  pf_crit_enter(&c);
  AO_nop_full();                            /* MOVED seen: its node was named before */
  for (;;) {
    struct pf_node *n2, *old = w->node;
    struct pf_table *t2, *ot = w->tab;
    struct pf_thread *orec = w->px_rec, *rec2 = NULL;
    uint32_t idx, st;
    pf_ref ref2 = 0;
    int named;
    AO_t g = AO_load_acquire(&w->mv_gen);
    /* The pair as one (a requeue may be naming the next: then again),
     * so that the lock taken below is the named node's own, under which
     * any later renaming is done and seen (a node of one table with
     * another table's lock passed the check below: a lost wakeup). */
    n2 = pf_mv_node(w);
    t2 = pf_mv_tab(w);
    AO_nop_full();
    if (g & 1) {
      unsigned int spins = 0;
      if (AO_load(&w->mv_gen) == g)         /* (the word the spin waits on) */
        pf_cpu_relax(&spins);               /* a writer is between its stores */
      continue;
    }
    if (AO_load(&w->mv_gen) != g)
      continue;                             /* renamed meanwhile: read again */
    named = n2 != NULL && t2 != NULL;
    if (!named) {
      /* not named in the record: published in the node (another
       * process's requeue, or a move of a node we had not adopted) */
      if ((ret = pf_waiter_dest_published(w, &t2, &n2, &ref2, &rec2)) < 0)
        break;
      if (ret > 0)
        goto unreachable;
    }
    idx = AO_int_load_acquire(&n2->bucket);
    if (idx >= t2->nbuckets && !named) {
      pf_waiter_dest_unfound(t2, named);
      goto unreachable;                     /* a scribble */
    }
    if (idx >= t2->nbuckets) {
      struct pf_key k;                      /* a scribble: where a rebuild files it */
      k.word = pf_node_keyword(n2);
      k.space = n2->key_space;
      idx = pf_key_bucket(t2, &k);
    }
    if ((ret = pf_bucket_lock(t2, idx)) < 0) {
      pf_waiter_dest_unfound(t2, named);
      break;
    }
    if (named) {
      if (pf_mv_node(w) != n2 || pf_mv_tab(w) != t2 || AO_int_load(&n2->bucket) != idx) {
        pf_bucket_unlock(t2, idx);          /* moved on meanwhile: follow it */
        continue;
      }
      ref2 = w->mv_ref;
      rec2 = w->mv_rec;
    } else if (AO_int_load(&n2->bucket) != idx) {
      pf_bucket_unlock(t2, idx);            /* requeued in its table meanwhile: follow it */
      pf_waiter_dest_unfound(t2, named);
      continue;
    } else if (!pf_waiter_dest_mine(w, t2, n2, rec2)) {
      /* not (any more) ours: its requeuer died before it gave it, or the
       * table was closed and opened again; a scribble */
      pf_bucket_unlock(t2, idx);
      pf_waiter_dest_unfound(t2, named);
      goto unreachable;
    }
    st = AO_int_load_acquire(&n2->state);
    if (st == PF_W_QUEUED) {
      AO_int_store(&n2->pi, 0);             /* armed: wakers give it the token */
      ret = pf_emu_port->prepare(&w->parker, &n2->park);
      ret = ret < 0 ? ret : 0;
    } else if (st == PF_W_MOVED) {
      ret = 2;                              /* moved on by a requeue that published it */
    } else if (st == PF_W_IDLE) {
      ret = 3;                              /* never queued: its requeuer died first */
    } else {
      ret = 1;                              /* taken first: no token due */
    }
    w->node = n2;
    w->tab = t2;
    w->ref = ref2;
    w->px_rec = rec2;
    w->mv_rec = NULL;
    if (named)
      pf_waiter_name_dest(w, NULL, NULL);
    pf_bucket_unlock(t2, idx);
    pf_waiter_drop_dest(ot, old, orec);      /* MOVED, its token taken */
    if (ret == 2)
      continue;                             /* there next (an unadopted node: no token) */
    if (ret == 3) {
      AO_int_store(&n2->state, PF_W_WAKING);
      AO_fetch_and_add1(&pf_xmove_unreachable_total);
      ret = 1;
    }
    break;
  unreachable:
    /* The wait ends as woken (a spurious wakeup, which futex(2) allows):
     * nothing is queued for it, so no wake counts it. */
    AO_int_store(&old->state, PF_W_WAKING);
    AO_fetch_and_add1(&pf_xmove_unreachable_total);
    ret = 1;
    break;
  }
  pf_crit_exit(&c);
  return ret;
}

/* Take w off its queue, following (M) moves: 1 when it was still queued
 * (now GONE), 0 when a waker or a handler took it first (its token taken,
 * if one is due), -errno. */
static int
pf_waiter_leave_follow(struct pf_waiter *w)
{
  for (;;) {
    int ret;
    if (pf_waiter_leave(w))
      return 1;
    pf_waiter_collect(w);     /* (D) woken wins, (G) detached, (M) moved: the token is due */
    if (AO_int_load_acquire(&w->node->state) != PF_W_MOVED)
      return 0;
    if ((ret = pf_waiter_adopt(w)) != 0)
      return ret > 0 ? 0 : ret;
  }
}

int
pf_waiter_sleep_poll(struct pf_waiter *w, const struct pf_deadline *dl, int async,
                     const struct pf_sleep_poll *poll)
{
  struct pf_node *n;
  uint32_t st;
  int ret;

  for (;;) {
    n = w->node;
    ret = pf_waiter_park_poll(w, dl, async, poll);
    if (ret == 0 && AO_int_load_acquire(&n->state) == PF_W_QUEUED) {
      /* (R) a surplus token (a dead waker's late post, a scribble): take it
       * back and look again (a real token that came meanwhile is ours). */
      unsigned int tok = AO_int_load(&n->park.word);   /* 1, or a scribble */
      if (tok != 0)
        (void)AO_int_compare_and_swap_full(&n->park.word, tok, 0);
      st = AO_int_load_acquire(&n->state);
      if (st == PF_W_QUEUED && !pf_waiter_intact(w))
        ret = -ENOTRECOVERABLE;
      else if (st == PF_W_QUEUED || (st == PF_W_MOVED && w->tab->slots))
        continue;             /* (M) a region's next slice takes the token */
    }
    if (ret == 0 && AO_int_load_acquire(&n->state) == PF_W_MOVED) {
      /* (M) the token came: take the node queued for us in the other table */
      if ((ret = pf_waiter_adopt(w)) == 0)
        continue;
      if (ret < 0)
        return ret;
      ret = 0;                /* taken there first: its state tells */
    }
    break;
  }
  if (ret != 0) {
    int took = pf_waiter_leave_follow(w);
    n = w->node;
    if (took < 0)
      return took;
    if (took) {
      if (pf_waiter_intact(w))
        AO_int_store(&n->state, PF_W_IDLE);
      return ret;             /* -ETIMEDOUT, -EINTR (or a port error) */
    }
  }
  n = w->node;
  if (!pf_waiter_intact(w))
    return -ENOTRECOVERABLE;  /* not ours to write any more */
  st = AO_int_load_acquire(&n->state);
  if (st == PF_W_DETACHED)
    (void)pf_waiter_leave(w); /* (H) detached before its push: still on the queue */
  AO_int_store(&n->state, PF_W_IDLE);
  return st == PF_W_WAKING ? 0 : -EINTR;
}

/* AddressSanitizer does not see a cancellation that acted in a signal
 * handler (during the park, (X)) unwind: the handler's frames never return,
 * their poisoned shadow stays, and the cleanup handler's frame is made
 * where they were (false stack-buffer-overflow reports).  Under it, a
 * frame with no locals clears the shadow below itself first (as the
 * sanitizer does after longjmp; its own __asan_handle_no_return trips on
 * the same stale shadow), then the handler runs in a frame of its own. */
#if defined(__SANITIZE_ADDRESS__)
# define PF_ASAN 1
#elif defined(__has_feature)
# if __has_feature(address_sanitizer)
#  define PF_ASAN 1
# endif
#endif
#ifdef PF_ASAN
# include <sanitizer/asan_interface.h>
#endif

static PF_NOINLINE void pf_wait_cancelled_run(void *arg);

/* Cancellation or pthread_exit while this wait is in progress: end it. */
void
pf_wait_cancelled(void *arg)
{
#ifdef PF_ASAN
  uintptr_t here = (uintptr_t)__builtin_frame_address(0);
  __asan_unpoison_memory_region((void *)(here - 64 * 1024), 64 * 1024);
#endif
  pf_wait_cancelled_run(arg);
}

static PF_NOINLINE void
pf_wait_cancelled_run(void *arg)
{
  struct pf_waiter *w = arg;
  struct pf_thread *t = pf_self_peek();
  struct pf_crit c;
  pf_crit_enter(&c);
  if (t && w >= t->nodes && w < t->nodes + t->depth) {
    pf_waiter_abandon(w);
    pf_self_pop(t, w);
  }
  pf_crit_exit(&c);
}

/* Claim this thread's next node for a wait on tab whose frame is `frame`:
 * 0 and *tp, *wp set, or -errno.  The common case (no wait in progress, the
 * parker set up, a private futex) takes no lock and no system call: the
 * node's frame is written before depth claims it and checked after, so a
 * handler that used the same node meanwhile is seen (H).  A region wait
 * also claims a slot of the region's (ENOMEM when none is left). */
int
pf_waiter_claim(const struct pf_req *r, struct pf_table *tab, uintptr_t frame,
                struct pf_thread **tp, struct pf_waiter **wp)
{
  struct pf_thread *t = pf_self_peek();
  struct pf_waiter *w;
  struct pf_crit c;
  pf_ref ref;
  int ret;

  if (PF_LIKELY(t != NULL && t->depth == 0 && (!(r->flags & PF_F_SHARED) || tab->slots))) {
    w = &t->nodes[0];
    if (PF_LIKELY(w->parker.gen == *pf_emu_port->gen)) {
      w->frame = frame;
      t->depth = 1;
      if (PF_LIKELY(w->frame == frame && AO_int_load(&w->n.state) == PF_W_IDLE)) {
        /* A signal handler may strike between any two stores here and
         * abandon the node (thread.c; asynchronous cancellation is deferred
         * here, see (X)): its node is valid before its table says it is in
         * use, in program order (w->node is &w->n at rest: set at birth and
         * by every release). */
        w->node = &w->n;
        AO_compiler_barrier();
        w->tab = tab;
        if (tab->slots) {
          /* A region's slot: one compare-and-swap, no lock, no signal mask.
           * (A siglongjmp or an asynchronous cancellation landing between
           * the claim and the next store would leave the slot owned by this
           * process until it exits: README, limits.) */
          if (tab->ops->slot_claim(tab, &ref, 0) < 0) {
            w->tab = NULL;
            t->depth = 0;
            goto slow;
          }
          w->node = &tab->slots[ref - 1];
          w->ref = ref;
          tab->ops->wait_begin(tab);
        } else {
          w->ref = t->index * PF_NEST_MAX + 1;
        }
        pf_emu_port->prepare(&w->parker, &w->node->park);   /* set up already: arms, lock-free */
        *tp = t;
        *wp = w;
        return 0;
      }
      /* a handler used this node meanwhile: pf_self_enter sorts it out */
    }
  }
slow:
  pf_crit_enter(&c);
  pf_self_enter(frame);
  if ((r->flags & PF_F_SHARED) && !tab->slots && (ret = pf_os_shared_key_check(r->uaddr)) < 0)
    goto out;
  ret = -ENOMEM;
  if ((t = pf_self_get()) == NULL || t->depth == PF_NEST_MAX)
    goto out;
  w = &t->nodes[t->depth];
  if (tab->slots) {
    if ((ret = tab->ops->slot_claim(tab, &ref, 1)) < 0)
      goto out;
    w->node = &tab->slots[ref - 1];
  } else {
    ref = t->index * PF_NEST_MAX + t->depth + 1;
    w->node = &w->n;
  }
  if ((ret = pf_emu_port->prepare(&w->parker, &w->node->park)) < 0) {
    if (tab->slots)
      tab->ops->slot_release(tab, w->node);
    goto out;
  }
  w->tab = tab;
  w->ref = ref;
  w->frame = frame;
  if (tab->slots)
    tab->ops->wait_begin(tab);
  t->depth++;
  *tp = t;
  *wp = w;
out:
  pf_crit_exit(&c);
  return ret;
}

/* One wait: claim a node, queue it (H), sleep.  Called with cancellation
 * deferred; async: the caller had it asynchronous (X).  Out of line: the
 * cleanup handler's landing pad stays out of pf_emu_wait_queued's frame,
 * where asynchronous cancellation is enabled again. */
static PF_NOINLINE int
pf_emu_wait_once(const struct pf_req *r, struct pf_table *tab, const struct pf_key *key, int async)
{
  volatile char here = 0;                   /* this frame, for pf_self_enter */
  uint32_t idx = pf_key_bucket(tab, key);
  struct pf_bucket *b = &tab->buckets[idx];
  struct pf_thread *t;
  struct pf_waiter *w;
  struct pf_node *n;
  int ret;

  if ((ret = pf_waiter_claim(r, tab, (uintptr_t)&here, &t, &w)) < 0)
    return ret;
  n = w->node;
  pthread_cleanup_push(pf_wait_cancelled, w);
  pf_node_prepare(n, key, idx, r->mask, r->pi);   /* pi: 0, or WAIT_REQUEUE_PI's (src/pi.c) */
  if (tab->slots) {
    n->seq = tab->ops->next_seq(tab);
    n->waker = w->lref;                         /* its waiter, for a requeue (M) */
  }
  AO_int_store(&n->state, PF_W_QUEUED);
  PF_CRASH("wait_queued");
  AO_int_fetch_and_add_full(&b->waiters, 1);            /* (A) */
  n->counted = 1;
  PF_CRASH("wait_counted");
  pf_bucket_push(tab, idx, n, w->ref);                  /* (H) */
  PF_CRASH("wait_pushed");
  if (pf_word_load(r->uaddr) != r->val) {
    /* The word changed: leave again, unless a waker took us first. */
    int took = pf_waiter_leave_follow(w);        /* (M) a requeue may have moved it */
    n = w->node;
    if (took != 0)
      ret = took < 0 ? took : -EAGAIN;
    else                                          /* woken wins; detached: EAGAIN */
      ret = AO_int_load_acquire(&n->state) == PF_W_WAKING ? 0 : -EAGAIN;
    if (pf_waiter_intact(w))
      AO_int_store(&n->state, PF_W_IDLE);
  } else {
    ret = pf_waiter_sleep(w, r->dl, async);
    n = w->node;
  }
  /* A WAIT_REQUEUE_PI waiter woken without the PI lock (a plain wake of
   * its word: CMP_REQUEUE_PI makes it a PF_PI_LOCK waiter): EAGAIN, as
   * Linux's. */
  if (ret == 0 && r->pi && (n->pi & PF_PI_KIND) != PF_PI_LOCK)
    ret = -EAGAIN;
  /* Requeued onto the PI word and then interrupted by a signal: Linux
   * does not restart that wait (the restart would find the first word
   * changed) and answers EWOULDBLOCK at once. */
  if (ret == -EINTR && r->pi && (n->pi & PF_PI_KIND) == PF_PI_LOCK)
    ret = -EAGAIN;
  pthread_cleanup_pop(0);
  pf_self_pop(t, w);
  return ret;
}

/* The slow path: queue and sleep, and restart as Linux does (F).  Out of
 * line, so the mismatch fast path in pf_emu_wait needs no frame. */
static PF_NOINLINE int
pf_emu_wait_queued(const struct pf_req *r, struct pf_table *tab, struct pf_key key)
{
  int ret, type = PTHREAD_CANCEL_DEFERRED, async;
  /* (X): asynchronous cancellation only inside the port's park. */
  pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &type);
  async = type == PTHREAD_CANCEL_ASYNCHRONOUS;
  for (;;) {
    ret = pf_emu_wait_once(r, tab, &key, async);
    /* futex(2) restarts only untimed waits; futex_wait(2), the clean
     * call's model, restarts timed ones too (the deadline is absolute). */
    if (ret != -EINTR || (r->dl && (r->flags & PF_F_LEGACY)) || !pf_sig_restartable())
      break;
    if (pf_word_load(r->uaddr) != r->val) {
      ret = -EAGAIN;                                    /* (F) the restart re-reads it */
      break;
    }
  }
  if (async)
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &type);   /* a pending one acts here */
  return ret;
}

int
pf_emu_wait(const struct pf_req *r)
{
  struct pf_key key;
  struct pf_table *tab;
  uint32_t v;
  int ret;

  if ((ret = pf_key_make(r->uaddr, r->flags, &key, &tab)) < 0)
    return ret;
  /* Fast path (pf.h, pf_wait_mismatch): no lock, no syscall; a word that
   * cannot be read answers EFAULT (the guarded read), never a signal. */
  if ((ret = pf_os_word_read(r->uaddr, &v)) < 0)
    return ret;
  if (v != r->val) {
    /* a shared wait outside regions: Linux makes the key before it reads
     * the word, and refuses a read-only private anonymous page (EFAULT).
     * A word that can be written has a key (emu.h pf_emu_mismatch_keyed); else
     * the OS's answer, as below. */
#ifndef _WIN32
    if (key.space == PF_KEY_SHARED_LOCAL && pf_os_word_touch(r->uaddr) != 0
        && pf_key_object(r->uaddr, &key, &tab) == -EFAULT)
      return -EFAULT;
#endif
    return -EAGAIN;
  }
  /* a WAIT_REQUEUE_PI waiter never goes to the OS's futex (ENOSYS there) */
  if ((ret = r->pi ? pf_key_object(r->uaddr, &key, &tab) : pf_key_object_os(r->uaddr, &key, &tab)) < 0)
    return ret == -PF_EOSFUTEX ? pf_emu_os_futex(PF_OSF_WAIT, r) : ret;
  return pf_emu_wait_queued(r, tab, key);
}
