/* pi.c - the priority-inheritance lock ops under emulation: FUTEX_LOCK_PI,
 * FUTEX_LOCK_PI2, FUTEX_TRYLOCK_PI and FUTEX_UNLOCK_PI, with Linux's word
 * protocol and errors (checked against Linux 6.18 by tests/futex_ext):
 *
 *   the word  the owner's thread id (pfutex_tid) in the low 30 bits,
 *             FUTEX_WAITERS (bit 31) while a locker may be queued,
 *             FUTEX_OWNER_DIED (bit 30) as the robust list left it.
 *   lock      under the bucket lock, made ready once (wait.c (I)), in the
 *             kernel's order (futex_lock_pi_atomic): our own id is
 *             EDEADLK; a free word (id 0) is taken with one compare-and-
 *             swap, OWNER_DIED kept, FUTEX_WAITERS added when PI waiters
 *             are queued; else FUTEX_WAITERS is set first, then the owner
 *             is looked for (none: ESRCH, the bit stays set, as the
 *             kernel leaves it); a trylock ends there (EAGAIN); a lock
 *             queues a PI waiter and sleeps.  A timeout is absolute: on
 *             CLOCK_REALTIME for LOCK_PI, on the clock the op names for
 *             LOCK_PI2.  A signal handler restarts the lock (the kernel's
 *             ERESTARTNOINTR); a timed-out locker leaves FUTEX_WAITERS set.
 *   unlock    our own id, else EPERM; under the bucket lock, the first PI
 *             waiter (FIFO: the kernel's order among equal priorities) is
 *             handed the lock: the word becomes its id | FUTEX_WAITERS
 *             (OWNER_DIED cleared), then it is woken; with none queued the
 *             word becomes 0.  Woken wins (wait.c (D)): a waiter whose
 *             timeout races the hand-off returns 0 and owns the lock, as a
 *             kernel waiter does.
 *
 * A PI waiter is an ordinary node with bitset 0, so no wake, wake_op or
 * requeue matches it (the kernel answers EINVAL to a plain wake of a PI
 * word instead), and `pi` = PF_PI_LOCK | its id.  Every word access is a
 * load or a compare-and-swap; the word is probed writable first (EFAULT:
 * a guarded write of no change), outside the locks.  The uncontended
 * lock and unlock take no lock at all (F, pf_pi_fast).
 *
 * No priority is boosted: no port's park call (futex, umtx, ulock,
 * WaitOnAddress, SysV semaphores) offers priority inheritance.
 *
 * An owner that ends holding the lock: Linux hands it to the top waiter
 * when the owner exits, FUTEX_OWNER_DIED set (robust list or not).
 * Here a blocked locker asks every PF_PI_POLL_NS whether the owner is
 * alive (pf_os_tid_alive: the OS on Linux and Windows; elsewhere the OS
 * for the owner's process and, for its threads, what that process
 * published: src/tid.c (T)), and hands the lock over when it is not; a
 * robust list's walk does it at once (src/robust.c).  A thread id reused
 * meanwhile by a new thread passes for the owner: the locker then waits
 * on (its timeout). */
#include "emu.h"
#include "os.h"

#include <pthread.h>
#include <time.h>

#define PF_FUTEX_WAITERS    0x80000000u
#define PF_FUTEX_OWNER_DIED 0x40000000u

static int pf_pi_handoff_dead(struct pf_table *tab, const struct pf_key *key, uint32_t *uaddr,
                              uint32_t tid, int od, int only_queued);

static int
pf_pi_cas(uint32_t *uaddr, uint32_t old, uint32_t new)
{
  return AO_int_compare_and_swap_full((volatile unsigned int *)uaddr, old, new);
}

/* The first PI waiter on key k in bucket i (its lock held, made ready), or
 * NULL; *ref its reference. */
static struct pf_node *
pf_pi_top_locked(struct pf_table *tab, uint32_t i, const struct pf_key *k, pf_ref *ref)
{
  struct pf_bucket *b = &tab->buckets[i];
  struct pf_walk it;
  struct pf_node *n;
  pf_ref r;
  pf_walk_start(&it, tab, b);
  while ((n = pf_walk_next(&it, &r)) != NULL) {
    if (AO_int_load(&n->state) != PF_W_QUEUED || !pf_node_keyeq(n, k)
        || (n->pi & PF_PI_KIND) != PF_PI_LOCK)
      continue;
    if (tab->slots && tab->ops->reap(tab, b, n, r))
      continue;                           /* its process died */
    *ref = r;
    return n;
  }
  return NULL;
}

/* The hand-off of pf_pi_handoff_dead (below), bucket i's lock held and
 * made ready; the woken locker onto l.  1 when it handed the lock over. */
static int
pf_pi_handoff_dead_locked(struct pf_table *tab, uint32_t i, const struct pf_key *key,
                          uint32_t *uaddr, uint32_t tid, int od, struct pf_wake_list *l)
{
  for (;;) {
    uint32_t v = pf_word_load(uaddr), nv;
    struct pf_node *n;
    pf_ref ref;
    if ((v & PF_PI_TID) != tid)
      return 0;
    n = pf_pi_top_locked(tab, i, key, &ref);
    if (n)
      nv = PF_FUTEX_WAITERS | (v & PF_FUTEX_OWNER_DIED) | (od ? PF_FUTEX_OWNER_DIED : 0)
           | (n->pi & PF_PI_TID);
    else if (od)
      nv = (v & PF_FUTEX_WAITERS) | PF_FUTEX_OWNER_DIED;
    else
      return 0;
    if (!pf_pi_cas(uaddr, v, nv))
      continue;
    if (n)
      pf_node_wake_locked(tab, &tab->buckets[i], n, ref, l);
    return n != NULL;
  }
}

/* One attempt under bucket i's lock: 0 taken, 1 wait (FUTEX_WAITERS set),
 * -EDEADLK, -ESRCH, -EAGAIN (try: held by another).  An owner that is
 * gone while lockers are queued: the first of them is handed the lock
 * first (onto l), as the kernel did at the owner's exit; with none queued,
 * ESRCH (the kernel's, for a dead owner without a robust list's help). */
static int
pf_pi_attempt_locked(struct pf_table *tab, uint32_t i, const struct pf_key *k, uint32_t *uaddr,
                     uint32_t tid, int try, struct pf_wake_list *l)
{
  pf_ref r;
  for (;;) {
    uint32_t v = pf_word_load(uaddr), nv;
    if ((v & PF_PI_TID) == tid)
      return -EDEADLK;
    if (!(v & PF_PI_TID)) {
      nv = (v & PF_FUTEX_OWNER_DIED) | tid;
      if (pf_pi_top_locked(tab, i, k, &r))
        nv |= PF_FUTEX_WAITERS;
      if (pf_pi_cas(uaddr, v, nv))
        return 0;
      continue;
    }
    nv = v | PF_FUTEX_WAITERS;
    if (nv != v && !pf_pi_cas(uaddr, v, nv))
      continue;
    /* A private op's owner must be a thread of this process: one of
     * another process's is EPERM, after FUTEX_WAITERS is set (Linux's,
     * seen on 6.18: the caller's bug, which a wait would never see end). */
    if (k->space == PF_KEY_PRIVATE && pf_os_tid_foreign(v & PF_PI_TID))
      return -EPERM;
    if (!pf_os_tid_alive(v & PF_PI_TID)) {
      if (pf_pi_top_locked(tab, i, k, &r)
          && pf_pi_handoff_dead_locked(tab, i, k, uaddr, v & PF_PI_TID, 1, l))
        continue;
      return -ESRCH;
    }
    return try ? -EAGAIN : 1;
  }
}

/* TRYLOCK_PI: the attempt alone, no node. */
static int
pf_pi_trylock(struct pf_table *tab, const struct pf_key *key, uint32_t *uaddr, uint32_t tid)
{
  volatile char here = 0;
  struct pf_wake_list list = { 0 };
  uint32_t idx = pf_key_bucket(tab, key);
  struct pf_crit c;
  int ret;
  pf_crit_enter(&c);                                    /* (G) in wait.c */
  pf_self_enter_fast((uintptr_t)&here);
  if ((ret = pf_bucket_lock(tab, idx)) == 0) {
    if ((ret = pf_bucket_ready_locked(tab, idx)) == 0)
      ret = pf_pi_attempt_locked(tab, idx, key, uaddr, tid, 1, &list);
    pf_bucket_unlock(tab, idx);
    pf_wake_list(&list);
  }
  pf_crit_exit(&c);
  return ret;
}

/* A blocked locker looks at its lock's owner every PF_PI_POLL_NS: gone
 * (the OS says so: pf_os_tid_alive), the lock goes to the first queued
 * locker with FUTEX_OWNER_DIED, as the kernel's exit of a PI owner hands
 * it over, robust list or not. */
#define PF_PI_POLL_NS 100000000L
/* A walk of a dead owner's robust list by another survivor is waited for
 * in 1 ms naps, this many at most (a walker stopped for good: ESRCH). */
#define PF_PI_WALK_WAITS 10000
struct pf_pi_poll {
  struct pf_table *tab;
  const struct pf_key *key;
  uint32_t *uaddr;
  uint32_t tid;
};

static void
pf_pi_poll_owner(void *arg)
{
  struct pf_pi_poll *p = arg;
  uint32_t owner = pf_word_load(p->uaddr) & PF_PI_TID;
  struct pf_crit c;
  if (!owner || owner == p->tid || pf_os_tid_alive(owner))
    return;
  pf_crit_enter(&c);
  (void)pf_pi_handoff_dead(p->tab, p->key, p->uaddr, owner, 1, 1);
  pf_crit_exit(&c);
}

/* One LOCK_PI: claim a node, attempt under the lock, queue it there if the
 * word is held (pushed, as a waiter queues: wait.c (H); the next holder of
 * the lock drains it), sleep.  Out of line, as pf_emu_wait_once is (wait.c
 * (X)). */
static PF_NOINLINE int
pf_pi_lock_once(const struct pf_req *r, struct pf_table *tab, const struct pf_key *key,
                uint32_t tid, int async)
{
  volatile char here = 0;
  uint32_t idx = pf_key_bucket(tab, key);
  struct pf_bucket *b = &tab->buckets[idx];
  struct pf_thread *t;
  struct pf_waiter *w;
  struct pf_node *n;
  struct pf_wake_list list = { 0 };
  struct pf_crit c;
  int ret;

  if ((ret = pf_waiter_claim(r, tab, (uintptr_t)&here, &t, &w)) < 0)
    return ret;
  n = w->node;
  pthread_cleanup_push(pf_wait_cancelled, w);
  pf_node_prepare(n, key, idx, 0, PF_PI_LOCK | tid);
  if (tab->slots)
    n->seq = tab->ops->next_seq(tab);
  pf_crit_enter(&c);
  if ((ret = pf_bucket_lock(tab, idx)) == 0) {
    if ((ret = pf_bucket_ready_locked(tab, idx)) == 0)
      ret = pf_pi_attempt_locked(tab, idx, key, r->uaddr, tid, 0, &list);
    if (ret == 1) {
      AO_int_store(&n->state, PF_W_QUEUED);
      AO_int_fetch_and_add_full(&b->waiters, 1);        /* (A) */
      n->counted = 1;
      pf_bucket_push(tab, idx, n, w->ref);              /* (H) */
    }
    pf_bucket_unlock(tab, idx);
    pf_wake_list(&list);
  }
  pf_crit_exit(&c);
  if (ret == 1) {
    struct pf_pi_poll pp = { tab, key, r->uaddr, tid };
    struct pf_sleep_poll poll = { pf_pi_poll_owner, &pp, PF_PI_POLL_NS };
    ret = pf_waiter_sleep_poll(w, r->dl, async, &poll);   /* 0: handed the lock */
  }
  pthread_cleanup_pop(0);
  pf_self_pop(t, w);
  return ret;
}

static int
pf_pi_lock(const struct pf_req *r, struct pf_table *tab, const struct pf_key *key, uint32_t tid)
{
  int ret, type = PTHREAD_CANCEL_DEFERRED, async;
  pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &type);   /* wait.c (X) */
  async = type == PTHREAD_CANCEL_ASYNCHRONOUS;
  do
    ret = pf_pi_lock_once(r, tab, key, tid, async);
  while (ret == -EINTR);                                   /* restarted, as the kernel's */
  if (async)
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, &type);
  return ret;
}

static int
pf_pi_unlock(struct pf_table *tab, const struct pf_key *key, uint32_t *uaddr, uint32_t tid)
{
  volatile char here = 0;
  struct pf_wake_list list = { 0 };
  uint32_t idx = pf_key_bucket(tab, key);
  struct pf_crit c;
  int ret;

  if ((pf_word_load(uaddr) & PF_PI_TID) != tid)
    return -EPERM;
  pf_crit_enter(&c);
  pf_self_enter_fast((uintptr_t)&here);
  if ((ret = pf_bucket_lock(tab, idx)) < 0)
    goto out;
  if ((ret = pf_bucket_ready_locked(tab, idx)) == 0) {
    for (;;) {
      uint32_t v = pf_word_load(uaddr);
      struct pf_node *n;
      pf_ref ref;
      if ((v & PF_PI_TID) != tid) {
        ret = -EPERM;
        break;
      }
      if ((n = pf_pi_top_locked(tab, idx, key, &ref)) != NULL) {
        if (!pf_pi_cas(uaddr, v, PF_FUTEX_WAITERS | (n->pi & PF_PI_TID)))
          continue;
        pf_node_wake_locked(tab, &tab->buckets[idx], n, ref, &list);
        break;
      }
      if (pf_pi_cas(uaddr, v, 0))
        break;
    }
  }
  pf_bucket_unlock(tab, idx);
  pf_wake_list(&list);
out:
  pf_crit_exit(&c);
  return ret;
}

/* WAIT_REQUEUE_PI: a wait on uaddr (wait.c, the same protocol) tagged
 * PF_PI_RQ with our id; CMP_REQUEUE_PI makes it a PI locker of uaddr2
 * (woken owning it, or moved onto uaddr2's queue).  Woken by a plain wake
 * instead: EAGAIN (wait.c).  A signal handler restarts it, re-reading the
 * word, as the kernel's ERESTARTNOINTR does. */
static int
pf_pi_wait_requeue(const struct pf_req *r, uint32_t tid)
{
  struct pf_req q = *r;
  struct pf_key k2;
  struct pf_table *t2;
  int ret;
  if (r->uaddr == r->uaddr2)
    return -EINVAL;
  if ((ret = pf_key_make(r->uaddr2, r->flags, &k2, &t2)) < 0)
    return ret;
  q.pi = PF_PI_RQ | tid;
  do
    ret = pf_emu_wait(&q);
  while (ret == -EINTR);
  return ret;
}

/* CMP_REQUEUE_PI: with *uaddr == val, the first waiter of uaddr (a
 * WAIT_REQUEUE_PI waiter, else EINVAL) is given uaddr2 if it is free
 * (FUTEX_WAITERS too when more are to be moved) and woken; then up to
 * nr_requeue of them (one more when the first did not get the lock) move
 * onto uaddr2's queue as PI lockers, FUTEX_WAITERS set on uaddr2.
 * Returns woken + moved, as Linux's; nr_wake must be 1 (EINVAL).  A node
 * cannot move to another table (as requeue.c): EINVAL. */
static int
pf_pi_cmp_requeue(const struct pf_req *r)
{
  volatile char here = 0;
  struct pf_wake_list list = { 0 };
  struct pf_crit c;
  struct pf_key k1, k2;
  struct pf_table *t1, *t2;
  struct pf_bucket *b1, *b2;
  struct pf_walk it;
  struct pf_node *n, *top = NULL;
  uint32_t i1, i2, v2, nv;
  pf_ref ref, topref = 0;
  int ret, got = 0, moved = 0;
  int64_t limit;

  if (r->nr != 1 || r->nr2 < 0)
    return -EINVAL;
  if ((ret = pf_key_make2(r, &k1, &t1, &k2, &t2)) < 0)
    return ret;
  if (t1 == t2 && pf_key_eq(&k1, &k2))
    return -EINVAL;
  if ((ret = pf_word_check(r->uaddr)) < 0 || (ret = pf_word_check(r->uaddr2)) < 0)
    return ret;
  if ((ret = pf_os_word_touch(r->uaddr2)) < 0)
    return ret;
  i1 = pf_key_bucket(t1, &k1);
  i2 = pf_key_bucket(t2, &k2);
  b1 = &t1->buckets[i1];
  b2 = &t2->buckets[i2];
  pf_crit_enter(&c);
  pf_self_enter_fast((uintptr_t)&here);
  AO_int_fetch_and_add_full(&b2->waiters, 1);           /* (C) in wait.c */
  if ((ret = pf_bucket_lock2(t1, i1, t2, i2)) < 0)
    goto out_nolock;
  if (pf_word_load(r->uaddr) != r->val) {
    ret = -EAGAIN;
    goto out_unlock;
  }
  if ((ret = pf_bucket_ready2_locked(t1, i1, t2, i2)) < 0)
    goto out_unlock;
  pf_walk_start(&it, t1, b1);
  while ((n = pf_walk_next(&it, &ref)) != NULL) {
    if (AO_int_load(&n->state) != PF_W_QUEUED || !pf_node_keyeq(n, &k1))
      continue;
    if (t1->slots && t1->ops->reap(t1, b1, n, ref))
      continue;
    top = n;
    topref = ref;
    break;
  }
  ret = 0;
  if (!top)
    goto out_unlock;                                    /* nobody: 0 */
  if ((top->pi & PF_PI_KIND) != PF_PI_RQ) {
    ret = -EINVAL;                                      /* a plain waiter */
    goto out_unlock;
  }
  /* the lock for the first waiter, if uaddr2 is free */
  for (;;) {
    struct pf_node *q;
    pf_ref qr;
    v2 = pf_word_load(r->uaddr2);
    if ((v2 & PF_PI_TID) == (top->pi & PF_PI_TID)) {
      ret = -EDEADLK;
      goto out_unlock;
    }
    if (!(v2 & PF_PI_TID)) {
      nv = (v2 & PF_FUTEX_OWNER_DIED) | (top->pi & PF_PI_TID);
      if (r->nr2 > 0 || pf_pi_top_locked(t2, i2, &k2, &qr))
        nv |= PF_FUTEX_WAITERS;
      if (!pf_pi_cas(r->uaddr2, v2, nv))
        continue;
      AO_int_store(&top->pi, PF_PI_LOCK | (top->pi & PF_PI_TID));   /* woken owning it */
      pf_node_wake_locked(t1, b1, top, topref, &list);
      got = 1;
      break;
    }
    nv = v2 | PF_FUTEX_WAITERS;
    if (nv != v2 && !pf_pi_cas(r->uaddr2, v2, nv))
      continue;
    if (!pf_os_tid_alive(v2 & PF_PI_TID)) {
      if (pf_pi_top_locked(t2, i2, &k2, &qr)
          && pf_pi_handoff_dead_locked(t2, i2, &k2, r->uaddr2, v2 & PF_PI_TID, 1, &list))
        continue;
      ret = -ESRCH;
      goto out_unlock;
    }
    (void)q;
    break;
  }
  /* the others (and the first, if it did not get the lock) onto uaddr2 */
  limit = (int64_t)r->nr2 + (got ? 0 : 1);              /* INT_MAX + 1 must not wrap (32-bit long) */
  pf_walk_start(&it, t1, b1);
  while (moved < limit && (n = pf_walk_next(&it, &ref)) != NULL) {
    if (AO_int_load(&n->state) != PF_W_QUEUED || !pf_node_keyeq(n, &k1))
      continue;
    if (t1->slots && t1->ops->reap(t1, b1, n, ref))
      continue;
    if ((n->pi & PF_PI_KIND) != PF_PI_RQ || t1 != t2) {
      ret = -EINVAL;                                    /* a plain waiter; another table */
      goto out_unlock;
    }
    if (got && moved == 0) {                            /* uaddr2 has a locker queued now */
      for (;;) {
        v2 = pf_word_load(r->uaddr2);
        if ((v2 & PF_FUTEX_WAITERS) || pf_pi_cas(r->uaddr2, v2, v2 | PF_FUTEX_WAITERS))
          break;
      }
    }
    n->bitset = 0;
    AO_int_store(&n->pi, PF_PI_LOCK | (n->pi & PF_PI_TID));
    if (b1 != b2) {
      AO_int_fetch_and_add_full(&b2->waiters, 1);
      pf_node_setkey(n, &k2);
      AO_int_store_release(&n->bucket, i2);
      pf_queue_unlink_locked(t1, b1, n);
      AO_int_fetch_and_add_full(&b1->waiters, (unsigned int)-1);
      pf_queue_append_locked(t2, b2, n, ref);
    } else {
      pf_node_setkey(n, &k2);
    }
    moved++;
  }
  ret = got + moved;
out_unlock:
  pf_bucket_unlock2(t1, i1, t2, i2);
out_nolock:
  AO_int_fetch_and_add_full(&b2->waiters, (unsigned int)-1);
  pf_wake_list(&list);
  pf_crit_exit(&c);
  return ret;
}

/* (F) The uncontended lock and unlock, without the bucket lock, the
 * signal mask or a node: a free word (0) taken, or our own word with no
 * FUTEX_WAITERS (our id alone) freed, by one compare-and-swap, when the
 * bucket counts no waiter.  This is the slow path's own answer: a PI
 * locker sets FUTEX_WAITERS (a compare-and-swap under the bucket lock)
 * before it queues, and a hand-off or a dead owner's hand-off leaves it
 * set while lockers are queued, so a word without it has none queued
 * and the slow path would swap the same values (OWNER_DIED or
 * FUTEX_WAITERS set: the slow path).  The bucket's count catches what
 * the word cannot: a word a program reset to 0 under queued lockers
 * goes the slow way, as before.  Any change to the word meanwhile fails
 * the swap: the slow path.  glibc's PI mutexes make the same two swaps
 * in user space (model/pi.pml checks them beside the ops).  1 done. */
static int
pf_pi_fast(struct pf_table *tab, const struct pf_key *key, uint32_t *uaddr, uint32_t tid,
           int unlock)
{
  struct pf_bucket *b = &tab->buckets[pf_key_bucket(tab, key)];
  uint32_t from = unlock ? tid : 0, v = pf_word_load(uaddr);
  return v == from && AO_int_load(&b->waiters) == 0 && pf_pi_cas(uaddr, from, unlock ? 0 : tid);
}

int
pf_emu_pi(const struct pf_req *r, int cmd)
{
  struct pf_key key;
  struct pf_table *tab;
  uint32_t tid = (uint32_t)pf_os_tid() & PF_PI_TID;
  int ret, walked;

  if (cmd == PF_OP_WAIT_REQUEUE_PI)
    return pf_pi_wait_requeue(r, tid);
  if (cmd == PF_OP_CMP_REQUEUE_PI)
    return pf_pi_cmp_requeue(r);
  /* UNLOCK_PI reads the word and checks its owner first (Linux's
   * futex_unlock_pi: get_user, then EPERM, then the key): another's word
   * is EPERM even misaligned or read-only; the caller's own then gets
   * the key's EINVAL or the write's EFAULT below.  (A misaligned word is
   * copied in: a guarded load of it could fault where the kernel reads.) */
  if (cmd == PF_OP_UNLOCK_PI) {
    uint32_t v;
    if (((uintptr_t)r->uaddr & 3u) ? pf_os_copy_in(&v, r->uaddr, sizeof v) < 0
                                    : pf_os_word_read(r->uaddr, &v) < 0)
      return -EFAULT;
    if ((v & PF_PI_TID) != tid)
      return -EPERM;
  }
  if ((ret = pf_key_make(r->uaddr, r->flags, &key, &tab)) < 0)
    return ret;
  if ((ret = pf_key_object(r->uaddr, &key, &tab)) < 0)
    return ret;
  if (cmd != PF_OP_UNLOCK_PI && (ret = pf_word_check(r->uaddr)) < 0)     /* (read above) */
    return ret;
  if ((ret = pf_os_word_touch(r->uaddr)) < 0)          /* the kernel's EFAULT */
    return ret;
  if (cmd != PF_OP_LOCK_PI && cmd != PF_OP_LOCK_PI2 && cmd != PF_OP_TRYLOCK_PI
      && cmd != PF_OP_UNLOCK_PI)
    return -ENOSYS;
  if (pf_pi_fast(tab, &key, r->uaddr, tid, cmd == PF_OP_UNLOCK_PI))
    return 0;
  if (cmd == PF_OP_UNLOCK_PI)
    return pf_pi_unlock(tab, &key, r->uaddr, tid);
  for (walked = 0;; walked = 1) {
    uint32_t dead;
    int waits = 0;
    ret = cmd == PF_OP_TRYLOCK_PI ? pf_pi_trylock(tab, &key, r->uaddr, tid)
                                  : pf_pi_lock(r, tab, &key, tid);
    /* A dead owner with nobody queued: ESRCH, unless its robust list,
     * walked now, frees the word (the kernel walks it at the exit, before
     * the id is gone: a robust owner's death never answers ESRCH there).
     * A region's dead processes' lists (src/region/robust.c): walked
     * here; one another survivor is walking (its slot taken: model/pi.pml
     * found this locker answering ESRCH meanwhile), or that cannot start
     * now (the registry busy), is waited for, as a Linux locker waits
     * for the owner's exit to finish; then once more.  A private word's
     * owner was a thread of this process, walked at its own exit. */
    if (ret != -ESRCH || walked || !tab->slots)
      return ret;
    dead = pf_word_load(r->uaddr) & PF_PI_TID;
    tab->ops->robust_check(tab);
    while (dead && tab->ops->robust_pending(tab, dead) && waits++ < PF_PI_WALK_WAITS) {
      struct timespec ms = { 0, 1000000L };
      nanosleep(&ms, NULL);
      tab->ops->robust_check(tab);
    }
  }
}

/* The owner tid of the PI word uaddr (key k in tab) is gone: under the
 * bucket's lock, its first queued PI locker is handed the lock, the word
 * becoming its id | FUTEX_WAITERS, FUTEX_OWNER_DIED kept (od: set), as the
 * kernel's exit of the owner's PI state makes it; with none queued, od
 * sets (word & FUTEX_WAITERS) | FUTEX_OWNER_DIED (the robust walk's
 * value), else nothing.  Inside a critical section; 0, or -errno. */
static int
pf_pi_handoff_dead(struct pf_table *tab, const struct pf_key *key, uint32_t *uaddr, uint32_t tid,
                   int od, int only_queued)
{
  struct pf_wake_list list = { 0 };
  uint32_t idx = pf_key_bucket(tab, key);
  pf_ref r;
  int ret;
  if ((ret = pf_bucket_lock(tab, idx)) < 0)
    return ret;
  if ((ret = pf_bucket_ready_locked(tab, idx)) == 0
      && (!only_queued || pf_pi_top_locked(tab, idx, key, &r)))
    (void)pf_pi_handoff_dead_locked(tab, idx, key, uaddr, tid, od, &list);
  pf_bucket_unlock(tab, idx);
  pf_wake_list(&list);
  return ret;
}

/* The PI word uaddr's owner tid is exiting with it on its robust list
 * (src/robust.c): the hand-off above, FUTEX_OWNER_DIED set, to a locker
 * of this process that used the private op if one is queued, else to a
 * shared one (the kernel's PI state serves both). */
int
pf_emu_pi_owner_died(uint32_t *uaddr, uint32_t tid)
{
  volatile char here = 0;
  struct pf_key key;
  struct pf_table *tab;
  struct pf_crit c;
  int ret;
  pf_crit_enter(&c);
  pf_self_enter_fast((uintptr_t)&here);
  if (pf_key_make(uaddr, 0, &key, &tab) == 0)
    (void)pf_pi_handoff_dead(tab, &key, uaddr, tid, 1, 1);
  if ((ret = pf_key_make(uaddr, PF_F_SHARED, &key, &tab)) == 0
      && (ret = pf_key_object(uaddr, &key, &tab)) == 0)
    ret = pf_pi_handoff_dead(tab, &key, uaddr, tid, 1, 0);
  pf_crit_exit(&c);
  return ret;
}
