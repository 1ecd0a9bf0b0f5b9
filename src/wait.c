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
 * (pf_waiter_dequeue, table.c).
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
 * (G) Handlers.  Every region that holds a bucket lock (and a waker's
 * unparks) runs with signals blocked and cancellation disabled
 * (pf_crit_enter), so a handler never meets a lock its own thread holds.
 * Between those regions a handler may run while this thread's node is
 * queued; if it calls pfutex, that call first detaches the interrupted
 * wait (QUEUED -> DETACHED, token given: pf_self_enter), as the kernel has
 * its waiter off the queue while a handler runs; the interrupted wait then
 * restarts or fails with EINTR by (F).  Nested waits use the next node of
 * the thread's record, each with its own parker.
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

/* Park w until a waker takes it, its deadline passes or a handler runs.
 * 0 woken (woken wins), -ETIMEDOUT, -EINTR (a handler ran, or detached
 * it).  w is IDLE on return: off every queue, its token collected. */
static int
pf_waiter_sleep(struct pf_waiter *w, const struct pf_deadline *dl)
{
  int ret = pf_emu_port->park(&w->park, dl);
  AO_t st;

  if (ret != 0) {
    if (pf_waiter_leave(w)) {
      AO_store(&w->state, PF_W_IDLE);
      return ret;             /* -ETIMEDOUT, -EINTR (or a port error) */
    }
    pf_emu_port->collect(&w->park);   /* (D) woken wins, or (G) detached: the token is due */
  }
  st = AO_load(&w->state);
  if (st == PF_W_DETACHED)
    (void)pf_waiter_leave(w); /* (H) detached before its push: still on the queue */
  AO_store(&w->state, PF_W_IDLE);
  return st == PF_W_WAKING ? 0 : -EINTR;
}

/* Cancellation or pthread_exit while this wait is in progress: end it. */
static void
pf_wait_cancelled(void *arg)
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

/* Claim this thread's next node for a wait whose frame is `frame`: 0 and
 * *tp, *wp set, or -errno.  The common case (no wait in progress, the
 * parker set up, a private futex) takes no lock and no system call: the
 * node's frame is written before depth claims it and checked after, so a
 * handler that used the same node meanwhile is seen (H). */
static int
pf_waiter_claim(const struct pf_req *r, uintptr_t frame, struct pf_thread **tp,
                struct pf_waiter **wp)
{
  struct pf_thread *t = pf_self_peek();
  struct pf_waiter *w;
  struct pf_crit c;
  int ret;

  if (PF_LIKELY(t != NULL && t->depth == 0 && !(r->flags & PF_F_SHARED))) {
    w = &t->nodes[0];
    if (PF_LIKELY(w->park.gen == *pf_emu_port->gen)) {
      w->frame = frame;
      t->depth = 1;
      if (PF_LIKELY(w->frame == frame && AO_load(&w->state) == PF_W_IDLE)) {
        pf_emu_port->prepare(&w->park);   /* set up already: arms, lock-free */
        *tp = t;
        *wp = w;
        return 0;
      }
      /* a handler used this node meanwhile: pf_self_enter sorts it out */
    }
  }
  pf_crit_enter(&c);
  pf_self_enter(frame);
  if ((r->flags & PF_F_SHARED) && (ret = pf_os_shared_key_check(r->uaddr)) < 0)
    goto out;
  ret = -ENOMEM;
  if ((t = pf_self_get()) == NULL || t->depth == PF_NEST_MAX)
    goto out;
  w = &t->nodes[t->depth];
  if ((ret = pf_emu_port->prepare(&w->park)) < 0)
    goto out;
  w->frame = frame;
  t->depth++;
  *tp = t;
  *wp = w;
out:
  pf_crit_exit(&c);
  return ret;
}

/* One wait: claim a node, queue it (H), sleep. */
static int
pf_emu_wait_once(const struct pf_req *r, const struct pf_key *key)
{
  volatile char here = 0;                   /* this frame, for pf_self_enter */
  uintptr_t idx = pf_key_bucket(key);
  struct pf_bucket *b = &pf_table.buckets[idx];
  struct pf_thread *t;
  struct pf_waiter *w;
  int ret;

  if ((ret = pf_waiter_claim(r, (uintptr_t)&here, &t, &w)) < 0)
    return ret;
  pthread_cleanup_push(pf_wait_cancelled, w);
  w->key = *key;
  w->bitset = r->mask;
  AO_store(&w->bucket, idx);
  w->linked = 0;
  w->counted = 0;
  AO_store(&w->state, PF_W_QUEUED);
  AO_fetch_and_add1_full(&b->waiters);                  /* (A) */
  w->counted = 1;
  pf_bucket_push(b, w);                                 /* (H) */
  if (pf_word_load(r->uaddr) != r->val) {
    /* The word changed: leave again, unless a waker took us first. */
    if (pf_waiter_leave(w)) {
      ret = -EAGAIN;
    } else {
      AO_t st;
      pf_emu_port->collect(&w->park);
      st = AO_load(&w->state);
      ret = st == PF_W_WAKING ? 0 : -EAGAIN;   /* woken wins; detached: EAGAIN */
    }
    AO_store(&w->state, PF_W_IDLE);
  } else {
    ret = pf_waiter_sleep(w, r->dl);
  }
  pthread_cleanup_pop(0);
  pf_self_pop(t, w);
  return ret;
}

/* The slow path: queue and sleep, and restart as Linux does (F).  Out of
 * line, so the mismatch fast path in pf_emu_wait needs no frame. */
static PF_NOINLINE int
pf_emu_wait_queued(const struct pf_req *r, struct pf_key key)
{
  int ret;
  for (;;) {
    ret = pf_emu_wait_once(r, &key);
    /* futex(2) restarts only untimed waits; futex_wait(2), the clean
     * call's model, restarts timed ones too (the deadline is absolute). */
    if (ret != -EINTR || (r->dl && (r->flags & PF_F_LEGACY)) || !pf_sig_restartable())
      return ret;
    if (pf_word_load(r->uaddr) != r->val)
      return -EAGAIN;                                   /* (F) the restart re-reads it */
  }
}

int
pf_emu_wait(const struct pf_req *r)
{
  struct pf_key key;
  int ret;

  if ((ret = pf_key_make(r->uaddr, r->flags, &key)) < 0)
    return ret;
  if ((ret = pf_word_check(r->uaddr)) < 0)
    return ret;
  /* Fast path (pf.h, pf_wait_mismatch): no lock, no syscall. */
  if (pf_wait_mismatch(r->uaddr, r->val))
    return -EAGAIN;
  return pf_emu_wait_queued(r, key);
}
