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
 * checks the name did not change meanwhile, and retries if it did.
 */
#include "emu.h"

/* (E): unlink ourselves if still queued; 1 if we did, 0 if a waker got us. */
static int
pf_waiter_dequeue_self(struct pf_waiter *w)
{
  for (;;) {
    uintptr_t idx = AO_load_acquire(&w->bucket);
    struct pf_bucket *b = &pf_table.buckets[idx];
    int queued;

    pf_bucket_lock(b);
    if (AO_load(&w->bucket) != idx) {     /* requeued meanwhile: follow it */
      pf_bucket_unlock(b);
      continue;
    }
    queued = AO_load(&w->state) == PF_W_QUEUED;
    if (queued) {
      pf_queue_unlink_locked(b, w);
      AO_fetch_and_sub1(&b->waiters);
      AO_store(&w->state, PF_W_GONE);
    }
    pf_bucket_unlock(b);
    return queued;
  }
}

static int
pf_waiter_sleep(struct pf_waiter *w, const struct pf_deadline *dl)
{
  int ret = pf_emu_port->park(&w->park, dl);

  if (ret == 0)
    return 0;                 /* only a waker unparks, and that was its last touch */
  if (pf_waiter_dequeue_self(w))
    return ret;               /* -ETIMEDOUT, -EINTR (or a port error) */
  while (pf_emu_port->park(&w->park, NULL) != 0)
    ;                         /* (D) woken wins: the token is on its way */
  return 0;
}

/* The slow path: queue and sleep.  Out of line, so the mismatch fast path
 * in pf_emu_wait needs no frame for the node. */
static PF_NOINLINE int
pf_emu_wait_queued(const struct pf_req *r, struct pf_key key)
{
  struct pf_waiter w;
  struct pf_bucket *b;
  uintptr_t idx;
  int ret;

  if ((ret = pf_emu_port->prepare(&w.park)) < 0)
    return ret;
  idx = pf_key_bucket(&key);
  b = &pf_table.buckets[idx];

  AO_fetch_and_add1_full(&b->waiters);                  /* (A) */
  pf_bucket_lock(b);
  if (pf_word_load(r->uaddr) != r->val) {
    AO_fetch_and_sub1(&b->waiters);
    pf_bucket_unlock(b);
    return -EAGAIN;
  }
  w.key = key;
  w.bitset = r->mask;
  AO_store(&w.bucket, idx);
  AO_store(&w.state, PF_W_QUEUED);
  pf_queue_append_locked(b, &w);
  pf_bucket_unlock(b);

  return pf_waiter_sleep(&w, r->dl);
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
