/* robust_mutex.h - a robust process-shared mutex on pfutex, built the way
 * glibc builds PTHREAD_MUTEX_ROBUST ones on futex(2) and set_robust_list(2):
 *
 *   the word    0 free; else the owner's id (pfutex_tid()) | FUTEX_WAITERS
 *               when someone sleeps on it; FUTEX_OWNER_DIED once the owner
 *               died holding it (set by whoever walks the owner's list)
 *   the list    each thread links the mutexes it holds into its robust list
 *               (pfutex_set_robust_list), and names the one it is taking or
 *               releasing in list_op_pending, so that a death at any
 *               instruction leaves every held mutex findable
 *   a death     the kernel (native backend) walks the list when the thread
 *               ends, however it ends; under emulation the thread's exit
 *               does, and for a process killed outright a surviving
 *               process that waits in the region does (the list must then
 *               be in the region: put each thread's rm_thread there)
 *   lock        returns 0, or EOWNERDEAD: the caller holds the mutex and
 *               must repair what the dead owner left
 *
 * Words are shared (no FUTEX_PRIVATE_FLAG): a region's, under emulation.
 * Uses the GCC/Clang __atomic builtins (example code; the library itself
 * uses libatomic_ops). */
#ifndef ROBUST_MUTEX_H
#define ROBUST_MUTEX_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <pfutex.h>
#include <pfutex/linux.h>

typedef struct rm_mutex {
  struct robust_list link;       /* in its owner's list while held */
  uint32_t word;
  uint32_t pad;
} rm_mutex_t;

/* One per thread, registered by rm_thread_init; in the region for a
 * process killed outright to be recovered under emulation. */
typedef struct rm_thread {
  struct robust_list_head head;
} rm_thread_t;

#ifndef ROBUST_LIST_LIMIT
# define ROBUST_LIST_LIMIT 2048
#endif
#define RM_OFFSET ((long)offsetof(rm_mutex_t, word) - (long)offsetof(rm_mutex_t, link))

/* 0, or an errno (pfutex_set_robust_list's). */
static inline int
rm_thread_init(rm_thread_t *t)
{
  t->head.list.next = &t->head.list;
  t->head.futex_offset = RM_OFFSET;
  t->head.list_op_pending = NULL;
  return pfutex_set_robust_list(&t->head, sizeof t->head) == 0 ? 0 : errno;
}

static inline void
rm_pending(rm_thread_t *t, rm_mutex_t *m)
{
  __atomic_store_n(&t->head.list_op_pending, m ? &m->link : NULL, __ATOMIC_SEQ_CST);
}

/* Lock: 0, EOWNERDEAD (held now; the previous owner died holding it),
 * ETIMEDOUT (abstime, CLOCK_MONOTONIC, passed: not held), or another
 * errno of the wait. */
static inline int
rm_mutex_timedlock(rm_thread_t *t, rm_mutex_t *m, const struct timespec *abstime)
{
  uint32_t me = (uint32_t)pfutex_tid(), v;
  int ret = 0;
  rm_pending(t, m);
  for (;;) {
    v = __atomic_load_n(&m->word, __ATOMIC_ACQUIRE);
    if ((v & FUTEX_TID_MASK) == 0) {
      /* free, or its owner died: take it, keeping FUTEX_WAITERS */
      uint32_t nv = me | (v & FUTEX_WAITERS);
      if (__atomic_compare_exchange_n(&m->word, &v, nv, 0, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
        ret = (v & FUTEX_OWNER_DIED) ? EOWNERDEAD : 0;
        break;
      }
      continue;
    }
    if (!(v & FUTEX_WAITERS)
        && !__atomic_compare_exchange_n(&m->word, &v, v | FUTEX_WAITERS, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
      continue;
    if (pfutex_wait(&m->word, v | FUTEX_WAITERS, PFUTEX_BITSET_MATCH_ANY, PFUTEX_SHARED, abstime,
                    PFUTEX_CLOCK_MONOTONIC) < 0
        && errno != EAGAIN && errno != EINTR) {
      rm_pending(t, NULL);
      return errno;
    }
  }
  /* held: into the list, then no longer pending */
  m->link.next = t->head.list.next;
  __atomic_store_n(&t->head.list.next, &m->link, __ATOMIC_SEQ_CST);
  rm_pending(t, NULL);
  return ret;
}

static inline int
rm_mutex_lock(rm_thread_t *t, rm_mutex_t *m)
{
  return rm_mutex_timedlock(t, m, NULL);
}

/* Unlock (the caller holds m): out of the list, the word to 0, one waiter
 * woken. */
static inline void
rm_mutex_unlock(rm_thread_t *t, rm_mutex_t *m)
{
  struct robust_list *volatile *pp = &t->head.list.next;
  int limit = ROBUST_LIST_LIMIT;
  rm_pending(t, m);
  while (*pp != &t->head.list && *pp != &m->link && limit-- > 0)
    pp = &(*pp)->next;
  if (*pp == &m->link)
    __atomic_store_n(pp, m->link.next, __ATOMIC_SEQ_CST);
  if (__atomic_exchange_n(&m->word, 0, __ATOMIC_RELEASE) & FUTEX_WAITERS)
    (void)pfutex_wake(&m->word, PFUTEX_BITSET_MATCH_ANY, 1, PFUTEX_SHARED);
  rm_pending(t, NULL);
}

#endif
