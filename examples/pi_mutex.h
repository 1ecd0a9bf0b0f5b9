/* pi_mutex.h - a priority-inheritance mutex on pfutex's PI ops, as glibc
 * builds PTHREAD_PRIO_INHERIT mutexes on futex(2): the word holds the
 * owner's id (pfutex_tid()) and FUTEX_WAITERS; the uncontended lock and
 * unlock are one compare-and-swap in user space, and only contention goes
 * to FUTEX_LOCK_PI / FUTEX_UNLOCK_PI, which queue the locker and hand the
 * lock over.  Private (one process) or shared (a word in a region, or any
 * memory the native backend's kernel can key). */
#ifndef PI_MUTEX_H
#define PI_MUTEX_H

#include <errno.h>
#include <stdint.h>
#include <time.h>
#include <pfutex/linux.h>

typedef struct {
  uint32_t word;                 /* 0: free; else owner id | FUTEX_WAITERS */
} pi_mutex_t;

static inline int
pi_op(int pshared, int op)
{
  return pshared ? op : op | FUTEX_PRIVATE_FLAG;
}

/* 0, or an errno: ETIMEDOUT (abstime, CLOCK_REALTIME, passed), EDEADLK,
 * and whatever else the op answers. */
static inline int
pi_mutex_timedlock(pi_mutex_t *m, int pshared, const struct timespec *abstime)
{
  uint32_t zero = 0, me = (uint32_t)pfutex_tid();
  if (__atomic_compare_exchange_n(&m->word, &zero, me, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
    return 0;
  if (pfutex(&m->word, pi_op(pshared, FUTEX_LOCK_PI), 0, abstime, NULL, 0) == 0)
    return 0;
  return errno;
}

static inline int
pi_mutex_lock(pi_mutex_t *m, int pshared)
{
  return pi_mutex_timedlock(m, pshared, NULL);
}

/* 0, or EBUSY (held), EDEADLK, ... */
static inline int
pi_mutex_trylock(pi_mutex_t *m, int pshared)
{
  uint32_t zero = 0, me = (uint32_t)pfutex_tid();
  if (__atomic_compare_exchange_n(&m->word, &zero, me, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
    return 0;
  if (pfutex(&m->word, pi_op(pshared, FUTEX_TRYLOCK_PI), 0, NULL, NULL, 0) == 0)
    return 0;
  return errno == EAGAIN ? EBUSY : errno;
}

/* 0, or EPERM (not the owner). */
static inline int
pi_mutex_unlock(pi_mutex_t *m, int pshared)
{
  uint32_t me = (uint32_t)pfutex_tid();
  if (__atomic_compare_exchange_n(&m->word, &me, 0, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED))
    return 0;                     /* no waiters: nobody to hand it to */
  if (pfutex(&m->word, pi_op(pshared, FUTEX_UNLOCK_PI), 0, NULL, NULL, 0) == 0)
    return 0;
  return errno;
}

#endif
