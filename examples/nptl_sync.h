/* nptl_sync.h - an NPTL-style mutex and condition variable on pfutex.
 *
 * Only the public API: pfutex() with <pfutex/linux.h>'s op names, and the
 * compiler's __atomic builtins.  Header-only, static inline.
 *
 * The mutex is the three-state mutex of Ulrich Drepper's "Futexes Are
 * Tricky" (mutex3): 0 unlocked, 1 locked, 2 locked with (possible) waiters.
 * Unlock makes a system call only when the state was 2.
 *
 * The condition variable is the pre-2.25 glibc design: a sequence word that
 * every signal and broadcast bumps.  A waiter reads it, unlocks the mutex and
 * waits on it; a signal or broadcast between the read and the wait changes
 * the word, so the wait returns EAGAIN at once: no wakeup is lost.
 * Broadcast does not wake every waiter to stampede on the mutex: it wakes one
 * and FUTEX_CMP_REQUEUEs the rest onto the mutex word.  That is correct only
 * because a waiter returning from the condvar re-locks the mutex in the
 * contended state (2): then each requeued waiter is woken by the unlock of
 * the one before it.  CMP_REQUEUE fails with EAGAIN if a signal slipped in
 * between the bump and the requeue; broadcast then simply wakes everyone.
 * As with pthread_cond_wait, callers must re-check their predicate.
 */
#ifndef NPTL_SYNC_H
#define NPTL_SYNC_H

#include <errno.h>
#include <limits.h>
#include <stdint.h>

#include <pfutex.h>
#include <pfutex/linux.h>

struct nptl_mutex {
  uint32_t word;   /* 0 unlocked, 1 locked, 2 contended */
};
#define NPTL_MUTEX_INIT { 0 }

struct nptl_cond {
  uint32_t seq;    /* bumped by every signal and broadcast */
};
#define NPTL_COND_INIT { 0 }

static inline uint32_t
nptl_cas(uint32_t *p, uint32_t expect, uint32_t desired)
{
  __atomic_compare_exchange_n(p, &expect, desired, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
  return expect;   /* the old value */
}

static inline void
nptl_mutex_lock(struct nptl_mutex *m)
{
  uint32_t c = nptl_cas(&m->word, 0, 1);
  if (c == 0)
    return;                                    /* uncontended: no syscall */
  if (c != 2)
    c = __atomic_exchange_n(&m->word, 2, __ATOMIC_ACQUIRE);
  while (c != 0) {
    pfutex(&m->word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
    c = __atomic_exchange_n(&m->word, 2, __ATOMIC_ACQUIRE);
  }
}

/* Lock as if contended: for waiters coming back from the condvar, which
 * may have been requeued onto the mutex word with others behind them. */
static inline void
nptl_mutex_lock_contended(struct nptl_mutex *m)
{
  while (__atomic_exchange_n(&m->word, 2, __ATOMIC_ACQUIRE) != 0)
    pfutex(&m->word, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
}

static inline int
nptl_mutex_trylock(struct nptl_mutex *m)
{
  return nptl_cas(&m->word, 0, 1) == 0 ? 0 : EBUSY;
}

static inline void
nptl_mutex_unlock(struct nptl_mutex *m)
{
  if (__atomic_fetch_sub(&m->word, 1, __ATOMIC_RELEASE) != 1) {
    __atomic_store_n(&m->word, 0, __ATOMIC_RELEASE);
    pfutex(&m->word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  }
}

static inline void
nptl_cond_wait(struct nptl_cond *c, struct nptl_mutex *m)
{
  uint32_t seq = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
  nptl_mutex_unlock(m);
  pfutex(&c->seq, FUTEX_WAIT_PRIVATE, seq, NULL, NULL, 0);
  nptl_mutex_lock_contended(m);
}

static inline void
nptl_cond_signal(struct nptl_cond *c)
{
  __atomic_fetch_add(&c->seq, 1, __ATOMIC_SEQ_CST);
  pfutex(&c->seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Wake one waiter; move the others onto the mutex word. */
static inline void
nptl_cond_broadcast(struct nptl_cond *c, struct nptl_mutex *m)
{
  uint32_t seq = __atomic_add_fetch(&c->seq, 1, __ATOMIC_SEQ_CST);
  if (pfutex(&c->seq, FUTEX_CMP_REQUEUE_PRIVATE, 1,
             (const struct timespec *)(uintptr_t)INT_MAX, &m->word, seq) < 0
      && errno == EAGAIN)
    pfutex(&c->seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

#endif /* NPTL_SYNC_H */
