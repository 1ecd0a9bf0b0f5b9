/* pshared_sync.h - process-shared mutex, condition variable and counting
 * semaphore on pfutex shared regions.
 *
 * Only the public API: pfutex() with <pfutex/linux.h>'s op names, and the
 * compiler's __atomic builtins.  Header-only, static inline.  It is
 * examples/nptl_sync.h made process-shared:
 *
 *   - every object lives in a pfutex region (pfutex_region_anon,
 *     pfutex_region_open or pfutex_region_attach), which every process
 *     using it has mapped, at any address;
 *   - every futex op is a SHARED one: FUTEX_WAIT, FUTEX_WAKE and
 *     FUTEX_CMP_REQUEUE without FUTEX_PRIVATE_FLAG.  A region word used
 *     that way is keyed by (region, offset), so a wake in one process finds
 *     the waiters of every other.  (With FUTEX_PRIVATE_FLAG the word would
 *     be keyed by address in the calling process: its waiters would never
 *     see another process's wake.)
 *
 * The mutex is the three-state mutex of Ulrich Drepper's "Futexes Are
 * Tricky" (mutex3): 0 unlocked, 1 locked, 2 locked with (possible) waiters.
 * Unlock makes a system call only when the state was 2.
 *
 * The condition variable is the pre-2.25 glibc design: a sequence word that
 * every signal and broadcast bumps.  A waiter reads it, unlocks the mutex
 * and waits on it; a signal or broadcast between the read and the wait
 * changes the word, so the wait returns EAGAIN at once: no wakeup is lost.
 * Broadcast wakes one waiter and FUTEX_CMP_REQUEUEs the rest onto the
 * mutex word, where each is woken by the unlock of the one before it: that
 * is correct because a waiter back from the condvar re-locks the mutex in
 * the contended state (2), so the unlock after it always wakes.
 * CMP_REQUEUE can fail in two ways after which broadcast wakes everyone on
 * the condvar word instead (always correct: every waiter re-checks its
 * predicate and re-locks in state 2; only slower, as all of them race for
 * the mutex):
 *   EAGAIN  a signal or broadcast bumped the word between our bump and the
 *           requeue (nothing was done);
 *   EINVAL  the requeue cannot be done.  pfutex's emulation backends keep
 *           one waitqueue table per region (and one per process for memory
 *           outside every region); a waiter cannot move from one table to
 *           another, so a requeue that would move waiters from a region
 *           word to a word of another region, or outside every region,
 *           fails with EINVAL before doing anything.  Linux moves them; on
 *           the emulation that happens if the mutex and the condvar are
 *           not in the same region.  Here they are, so the fallback is not
 *           expected to run; the programs count it.
 *
 * The semaphore is a value word and a count of waiters: P takes a unit
 * with a compare-and-swap or, at 0, announces itself in `waiters' and
 * waits for the value to change from 0; V adds a unit and wakes one waiter
 * if any announced itself.  The two sides are ordered by full fences
 * (waiters++ then read value; value++ then read waiters), so a V either
 * sees the waiter or the waiter's FUTEX_WAIT sees the new value (EAGAIN).
 *
 * Every object counts the futex errors it did not expect (anything but
 * EAGAIN and EINTR from a wait; any error from a wake) in `errors', with
 * the last errno in `last_errno', so a test can check there were none.
 * The primitives stay correct without them, but a wait that failed with,
 * say, ENOMEM would silently turn into a spin.
 */
#ifndef PSHARED_SYNC_H
#define PSHARED_SYNC_H

#include <errno.h>
#include <limits.h>
#include <stdint.h>

#include <pfutex.h>
#include <pfutex/linux.h>

struct ps_mutex {
  uint32_t word;          /* 0 unlocked, 1 locked, 2 contended */
  uint32_t errors;        /* unexpected futex errors */
  uint32_t last_errno;
};

struct ps_cond {
  uint32_t seq;           /* bumped by every signal and broadcast */
  uint32_t errors;
  uint32_t last_errno;
  uint32_t requeues;      /* broadcasts whose CMP_REQUEUE succeeded */
  uint32_t moved;         /* waiters those woke or requeued */
  uint32_t fallback_eagain;   /* broadcasts that woke all after EAGAIN */
  uint32_t fallback_einval;   /* ... after EINVAL */
};

struct ps_sem {
  uint32_t value;         /* units available */
  uint32_t waiters;       /* processes in (or about to enter) a wait */
  uint32_t errors;
  uint32_t last_errno;
  uint32_t sleeps;        /* waits that slept and were woken */
};

/* A one-shot start gate for n processes: the last to arrive wakes all. */
struct ps_gate {
  uint32_t arrived;
  uint32_t errors;
  uint32_t last_errno;
};

/* All-zero memory (a new region) is an unlocked mutex, a fresh condvar
 * and a closed gate; a semaphore needs its value set before any process
 * uses it. */

static inline void
ps_error(uint32_t *errors, uint32_t *last, int err)
{
  __atomic_add_fetch(errors, 1, __ATOMIC_RELAXED);
  __atomic_store_n(last, (uint32_t)err, __ATOMIC_RELAXED);
}

/* A shared FUTEX_WAIT on *uaddr while it holds val: EAGAIN and EINTR are
 * normal answers, anything else is counted. */
static inline void
ps_futex_wait(uint32_t *uaddr, uint32_t val, uint32_t *errors, uint32_t *last)
{
  if (pfutex(uaddr, FUTEX_WAIT, val, NULL, NULL, 0) < 0 && errno != EAGAIN && errno != EINTR)
    ps_error(errors, last, errno);
}

static inline void
ps_futex_wake(uint32_t *uaddr, int nr, uint32_t *errors, uint32_t *last)
{
  if (pfutex(uaddr, FUTEX_WAKE, (uint32_t)nr, NULL, NULL, 0) < 0)
    ps_error(errors, last, errno);
}

/* ---- Mutex ---------------------------------------------------------------------- */

static inline uint32_t
ps_cas(uint32_t *p, uint32_t expect, uint32_t desired)
{
  __atomic_compare_exchange_n(p, &expect, desired, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
  return expect;   /* the old value */
}

static inline void
ps_mutex_lock(struct ps_mutex *m)
{
  uint32_t c = ps_cas(&m->word, 0, 1);
  if (c == 0)
    return;                                    /* uncontended: no syscall */
  if (c != 2)
    c = __atomic_exchange_n(&m->word, 2, __ATOMIC_ACQUIRE);
  while (c != 0) {
    ps_futex_wait(&m->word, 2, &m->errors, &m->last_errno);
    c = __atomic_exchange_n(&m->word, 2, __ATOMIC_ACQUIRE);
  }
}

/* Lock as if contended: for waiters coming back from the condvar, which
 * may have been requeued onto the mutex word with others behind them. */
static inline void
ps_mutex_lock_contended(struct ps_mutex *m)
{
  while (__atomic_exchange_n(&m->word, 2, __ATOMIC_ACQUIRE) != 0)
    ps_futex_wait(&m->word, 2, &m->errors, &m->last_errno);
}

static inline void
ps_mutex_unlock(struct ps_mutex *m)
{
  if (__atomic_fetch_sub(&m->word, 1, __ATOMIC_RELEASE) != 1) {
    __atomic_store_n(&m->word, 0, __ATOMIC_RELEASE);
    ps_futex_wake(&m->word, 1, &m->errors, &m->last_errno);
  }
}

/* ---- Condition variable ------------------------------------------------------------ */

static inline void
ps_cond_wait(struct ps_cond *c, struct ps_mutex *m)
{
  uint32_t seq = __atomic_load_n(&c->seq, __ATOMIC_ACQUIRE);
  ps_mutex_unlock(m);
  ps_futex_wait(&c->seq, seq, &c->errors, &c->last_errno);
  ps_mutex_lock_contended(m);
}

static inline void
ps_cond_signal(struct ps_cond *c)
{
  __atomic_fetch_add(&c->seq, 1, __ATOMIC_SEQ_CST);
  ps_futex_wake(&c->seq, 1, &c->errors, &c->last_errno);
}

/* Wake one waiter and move the others onto the mutex word; wake them all
 * if the requeue is refused (EAGAIN, EINVAL: see the top of the file).
 * Called with m locked, as the programs here do (not required). */
static inline void
ps_cond_broadcast(struct ps_cond *c, struct ps_mutex *m)
{
  uint32_t seq = __atomic_add_fetch(&c->seq, 1, __ATOMIC_SEQ_CST);
  long r = pfutex(&c->seq, FUTEX_CMP_REQUEUE, 1,
                  (const struct timespec *)(uintptr_t)INT_MAX, &m->word, seq);
  if (r >= 0) {
    __atomic_add_fetch(&c->requeues, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&c->moved, (uint32_t)r, __ATOMIC_RELAXED);
    return;
  }
  if (errno == EAGAIN)
    __atomic_add_fetch(&c->fallback_eagain, 1, __ATOMIC_RELAXED);
  else if (errno == EINVAL)
    __atomic_add_fetch(&c->fallback_einval, 1, __ATOMIC_RELAXED);
  else
    ps_error(&c->errors, &c->last_errno, errno);
  ps_futex_wake(&c->seq, INT_MAX, &c->errors, &c->last_errno);
}

/* ---- Counting semaphore ------------------------------------------------------------ */

static inline void
ps_sem_init(struct ps_sem *s, uint32_t value)
{
  s->waiters = 0;
  s->errors = 0;
  s->last_errno = 0;
  s->sleeps = 0;
  __atomic_store_n(&s->value, value, __ATOMIC_RELEASE);
}

/* P: take a unit, waiting while there is none. */
static inline void
ps_sem_wait(struct ps_sem *s)
{
  uint32_t v = __atomic_load_n(&s->value, __ATOMIC_RELAXED);
  for (;;) {
    while (v > 0)
      if (__atomic_compare_exchange_n(&s->value, &v, v - 1, 0, __ATOMIC_ACQUIRE,
                                      __ATOMIC_RELAXED))
        return;
    __atomic_add_fetch(&s->waiters, 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);   /* waiters++ before the wait reads value */
    if (pfutex(&s->value, FUTEX_WAIT, 0, NULL, NULL, 0) == 0)
      __atomic_add_fetch(&s->sleeps, 1, __ATOMIC_RELAXED);
    else if (errno != EAGAIN && errno != EINTR)
      ps_error(&s->errors, &s->last_errno, errno);
    __atomic_sub_fetch(&s->waiters, 1, __ATOMIC_RELAXED);
    v = __atomic_load_n(&s->value, __ATOMIC_RELAXED);
  }
}

/* V: give a unit back, and wake one waiter if one announced itself. */
static inline void
ps_sem_post(struct ps_sem *s)
{
  __atomic_add_fetch(&s->value, 1, __ATOMIC_RELEASE);
  __atomic_thread_fence(__ATOMIC_SEQ_CST);     /* value++ before reading waiters */
  if (__atomic_load_n(&s->waiters, __ATOMIC_RELAXED) > 0)
    ps_futex_wake(&s->value, 1, &s->errors, &s->last_errno);
}

/* ---- Start gate ---------------------------------------------------------------------- */

/* Arrive, and wait until n processes have: so that workers started one
 * after the other really run at the same time. */
static inline void
ps_gate_pass(struct ps_gate *g, uint32_t n)
{
  uint32_t v = __atomic_add_fetch(&g->arrived, 1, __ATOMIC_SEQ_CST);
  if (v >= n) {
    ps_futex_wake(&g->arrived, INT_MAX, &g->errors, &g->last_errno);
    return;
  }
  while (v < n) {
    ps_futex_wait(&g->arrived, v, &g->errors, &g->last_errno);
    v = __atomic_load_n(&g->arrived, __ATOMIC_ACQUIRE);
  }
}

#endif /* PSHARED_SYNC_H */
