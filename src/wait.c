/* wait.c - FUTEX_WAIT / WAIT_BITSET under emulation.
 *
 * The ordering argument: why no wakeup is lost.
 *
 * A waiter must never sleep after a waker has changed the futex word and
 * decided there is nobody to wake.  The protocol, for waiter W and waker K
 * on the same key (so the same bucket B):
 *
 *   W:  waiters(B) += 1   (A) AO_fetch_and_add1_full: a full barrier
 *       lock(B)
 *       read *uaddr; if != val: unlock, waiters(B) -= 1, EAGAIN
 *       enqueue node; unlock(B); park
 *
 *   K:  *uaddr = new      (the caller's store, before it calls wake)
 *       (B) AO_nop_full(), then read waiters(B): a full barrier, then the read
 *       if waiters(B) == 0: return 0            -- the fast path, no lock
 *       lock(B); dequeue matches; unlock(B); unpark them
 *
 * (A) orders W's increment before W's read of *uaddr; (B) orders K's store
 * to *uaddr before K's read of the count.  With both full barriers, either
 * K's read sees W's increment (then K takes the lock, and B's lock orders
 * W's enqueue against K's scan: K finds the node or W, after K's unlock,
 * reads the new value and returns EAGAIN), or W's increment comes after
 * K's read, so W's read of *uaddr comes after K's store: W sees the new
 * value and does not sleep.  This is the kernel's (A)/(B) pairing in
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
 * returns -EINTR and the waiter leaves the queue.  An untimed wait then
 * does what Linux's restart of futex_wait does when the handler had
 * SA_RESTART: it starts over, re-reading the word (EAGAIN if the handler,
 * or anyone, changed it); otherwise, and always for a timed wait, EINTR.
 * The port cannot say which signal ran: pf_sig_restartable (thread.c)
 * decides from the handlers installed (exact unless they disagree).
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

/* Park w until a waker takes it, its deadline passes or a handler runs.
 * 0 woken (woken wins), -ETIMEDOUT, -EINTR (a handler ran, or detached
 * it).  w is IDLE on return: off every queue, its token collected. */
static int
pf_waiter_sleep(struct pf_waiter *w, const struct pf_deadline *dl)
{
  int ret = pf_emu_port->park(&w->park, dl);
  AO_t st;

  if (ret != 0) {
    struct pf_crit c;
    int dequeued;
    pf_crit_enter(&c);
    dequeued = pf_waiter_dequeue(w, PF_W_GONE);                        /* (E) */
    if (dequeued)
      AO_store(&w->state, PF_W_IDLE);
    pf_crit_exit(&c);
    if (dequeued)
      return ret;             /* -ETIMEDOUT, -EINTR (or a port error) */
    pf_emu_port->collect(&w->park);   /* (D) woken wins, or (G) detached: the token is due */
  }
  st = AO_load(&w->state);
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
  if (t && t->depth > 0 && &t->nodes[t->depth - 1] == w) {
    pf_waiter_abandon(w);
    pf_self_pop(t, w);
  }
  pf_crit_exit(&c);
}

/* The slow path: queue and sleep.  Out of line, so the mismatch fast path
 * in pf_emu_wait needs no frame. */
static PF_NOINLINE int
pf_emu_wait_queued(const struct pf_req *r, struct pf_key key)
{
  volatile char here = 0;                   /* this frame, for pf_self_enter */
  const uintptr_t frame = (uintptr_t)&here;
  uintptr_t idx = pf_key_bucket(&key);
  struct pf_bucket *b = &pf_table.buckets[idx];
  struct pf_thread *t;
  struct pf_waiter *w;
  struct pf_crit c;
  int ret;

restart:
  pf_crit_enter(&c);
  pf_self_enter_fast(frame);
  if ((r->flags & PF_F_SHARED) && (ret = pf_os_shared_key_check(r->uaddr)) < 0)
    goto out_crit;
  ret = -ENOMEM;
  if ((t = pf_self_get()) == NULL)
    goto out_crit;
  if (t->depth == PF_NEST_MAX)
    goto out_crit;
  w = &t->nodes[t->depth];
  if ((ret = pf_emu_port->prepare(&w->park)) < 0)
    goto out_crit;
  w->frame = frame;
  t->depth++;

  AO_fetch_and_add1_full(&b->waiters);                  /* (A) */
  pf_bucket_lock(b);
  if (pf_word_load(r->uaddr) != r->val) {
    AO_fetch_and_sub1(&b->waiters);
    pf_bucket_unlock(b);
    pf_self_pop(t, w);
    ret = -EAGAIN;
    goto out_crit;
  }
  w->key = key;
  w->bitset = r->mask;
  AO_store(&w->bucket, idx);
  AO_store(&w->state, PF_W_QUEUED);
  pf_queue_append_locked(b, w);
  pf_bucket_unlock(b);

  pthread_cleanup_push(pf_wait_cancelled, w);
  pf_crit_exit(&c);
  ret = pf_waiter_sleep(w, r->dl);
  pthread_cleanup_pop(0);
  pf_self_pop(t, w);
  if (ret == -EINTR && !r->dl && pf_sig_restartable())
    goto restart;                                       /* (F) */
  return ret;

out_crit:
  pf_crit_exit(&c);
  return ret;
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
