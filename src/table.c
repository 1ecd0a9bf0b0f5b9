/* table.c - the hashed waitqueue table: buckets, keys, hashing, queues and
 * bucket locks.  No allocation after init; none on any wait or wake path. */
#include "emu.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pf_table pf_table;

static void
pf_table_reset(void)
{
  memset(pf_table.buckets, 0, pf_table.nbuckets * sizeof *pf_table.buckets);
}

/* fork(): the child has one thread and none of the parent's waiters; a
 * bucket lock another thread held at the fork would stay held forever, so
 * the child starts from an empty table (invariant 6). */
static void
pf_table_atfork_child(void)
{
  pf_table_reset();
}

int
pf_table_init(void)
{
  long ncpu = sysconf(_SC_NPROCESSORS_CONF);
  uintptr_t n = 1;
  unsigned int bits = 0;
  void *mem;

  if (ncpu < 1)
    ncpu = 1;
  while (n < (uintptr_t)ncpu * 256) {
    n <<= 1;
    bits++;
  }
  if (posix_memalign(&mem, PF_CACHELINE, n * sizeof(struct pf_bucket)) != 0)
    return -ENOMEM;
  pf_table.buckets = mem;
  pf_table.nbuckets = n;
  pf_table.shift = (unsigned int)(sizeof(uintptr_t) * 8) - bits;
  pf_table_reset();
  if (pthread_atfork(NULL, NULL, pf_table_atfork_child) != 0)
    return -ENOMEM;
  return 0;
}

void
pf_cpu_relax(unsigned int *spins)
{
  if (++*spins < 100) {
#if defined(__i386__) || defined(__x86_64__)
    __asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
  } else {
    sched_yield();
  }
}

/* Bucket locks are test-and-test-and-set spinlocks that yield the CPU when
 * the holder seems preempted.  Critical sections are a few dozen
 * instructions and never make a system call. */
void
pf_spin_lock(AO_t *l)
{
  unsigned int spins = 0;
  while (AO_load(l) != 0 || !AO_compare_and_swap_acquire(l, 0, 1))
    pf_cpu_relax(&spins);
}

void
pf_spin_unlock(AO_t *l)
{
  AO_store_release(l, 0);
}

void
pf_bucket_lock(struct pf_bucket *b)
{
  pf_spin_lock(&b->lock);
}

void
pf_bucket_unlock(struct pf_bucket *b)
{
  pf_spin_unlock(&b->lock);
}

/* Two buckets, in index order (indices, not addresses: a shared table is
 * mapped at different addresses in each process); one lock when equal. */
void
pf_bucket_lock2(uintptr_t i1, uintptr_t i2)
{
  if (i1 > i2) {
    uintptr_t t = i1;
    i1 = i2;
    i2 = t;
  }
  pf_bucket_lock(&pf_table.buckets[i1]);
  if (i2 != i1)
    pf_bucket_lock(&pf_table.buckets[i2]);
}

void
pf_bucket_unlock2(uintptr_t i1, uintptr_t i2)
{
  pf_bucket_unlock(&pf_table.buckets[i1]);
  if (i2 != i1)
    pf_bucket_unlock(&pf_table.buckets[i2]);
}

void
pf_queue_append_locked(struct pf_bucket *b, struct pf_waiter *w)
{
  PF_ASSERT(AO_load(&b->lock) != 0);
  w->next = NULL;
  w->prev = b->tail;
  if (b->tail)
    b->tail->next = w;
  else
    b->head = w;
  b->tail = w;
}

void
pf_queue_unlink_locked(struct pf_bucket *b, struct pf_waiter *w)
{
  PF_ASSERT(AO_load(&b->lock) != 0);
  if (w->prev)
    w->prev->next = w->next;
  else
    b->head = w->next;
  if (w->next)
    w->next->prev = w->prev;
  else
    b->tail = w->prev;
  w->next = w->prev = NULL;
}

void
pf_bucket_push(struct pf_bucket *b, struct pf_waiter *w)
{
  AO_t old;
  do {
    old = AO_load(&b->incoming);
    w->in_next = (struct pf_waiter *)old;
  } while (!AO_compare_and_swap_full(&b->incoming, old, (AO_t)w));
}

/* Take the whole incoming stack (pushes only ever add to it and this takes
 * it whole, so no ABA) and append it to the queue in arrival order. */
void
pf_bucket_drain_locked(struct pf_bucket *b)
{
  struct pf_waiter *s, *rev = NULL;
  AO_t top;
  PF_ASSERT(AO_load(&b->lock) != 0);
  do
    top = AO_load(&b->incoming);
  while (top && !AO_compare_and_swap_full(&b->incoming, top, 0));
  for (s = (struct pf_waiter *)top; s;) {
    struct pf_waiter *n = s->in_next;
    s->in_next = rev;
    rev = s;
    s = n;
  }
  while (rev) {
    struct pf_waiter *n = rev->in_next;
    pf_queue_append_locked(b, rev);
    rev->linked = 1;
    rev = n;
  }
}

/* Off the queue, giving back its count (A). */
void
pf_waiter_unlink_locked(struct pf_bucket *b, struct pf_waiter *w)
{
  pf_queue_unlink_locked(b, w);
  w->linked = 0;
  if (w->counted) {
    w->counted = 0;
    AO_fetch_and_sub1(&b->waiters);
  }
}

int
pf_waiter_dequeue(struct pf_waiter *w, AO_t to, int dead)
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
    pf_bucket_drain_locked(b);            /* every push of w is on the queue now */
    if (w->linked) {
      pf_waiter_unlink_locked(b, w);
    } else if (dead && w->counted) {      /* never pushed, never will be */
      w->counted = 0;
      AO_fetch_and_sub1(&b->waiters);
    }
    queued = AO_load(&w->state) == PF_W_QUEUED;
    if (queued)
      AO_store(&w->state, to);
    pf_bucket_unlock(b);
    return queued;
  }
}

int
pf_queue_wake_locked(struct pf_bucket *b, const struct pf_key *k, uint32_t mask, int nr,
                     struct pf_waiter ***tailp)
{
  struct pf_waiter *w, *next;
  int n = 0;

  PF_ASSERT(AO_load(&b->lock) != 0);
  pf_bucket_drain_locked(b);
  for (w = b->head; w && n < nr; w = next) {
    next = w->next;
    if (AO_load(&w->state) != PF_W_QUEUED || !pf_key_eq(&w->key, k) || !(w->bitset & mask))
      continue;                           /* (G) a detached node its owner will remove */
    pf_waiter_unlink_locked(b, w);
    AO_store(&w->state, PF_W_WAKING);
    w->wake_next = NULL;
    **tailp = w;
    *tailp = &w->wake_next;
    n++;
  }
  return n;
}

void
pf_wake_list(struct pf_waiter *w)
{
  while (w) {
    struct pf_waiter *next = w->wake_next;   /* read before the token is given */
    pf_emu_port->unpark(&w->park);           /* the token is the last touch (wait.c (D)) */
    w = next;
  }
}
