/* table.c - the hashed waitqueue tables: buckets, keys, hashing, queues and
 * bucket locks.  One code for the private table (this process's futexes)
 * and for the tables in shared regions (src/region/): nodes are named by
 * 32-bit references (emu.h), never by pointers.  No allocation after init;
 * none on any wait or wake path.
 *
 * Regions: memory another process can scribble on, and whose users can be
 * killed at any instruction.  So in a region's table every reference is
 * bounds-checked when resolved (pf_node_get) and every queue walk is
 * bounded by the slot count: a bad link is corruption, answered by a
 * rebuild of the bucket from its slots (the table's ops), and if that does
 * not help by -ENOTRECOVERABLE, never a wild access or a loop.  What else a
 * region's table needs (a lock that survives its holder, slots owned by
 * processes, the rebuild) is the region layer's (src/region/lock.c and
 * slot.c), reached through the table's ops (emu.h, struct pf_table_ops):
 * this file never calls it on the private table.
 */
#include "emu.h"
#include "os.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pf_table *(*volatile pf_table_by_order)(uint64_t order);   /* src/emu.h */

struct pf_table pf_table;

/* fork(): the child has one thread and none of the parent's waiters; a
 * bucket lock another thread held at the fork would stay held forever, so
 * the child starts from an empty private table (invariant 6).  Region
 * tables are shared with the parent and stay as they are. */
static void
pf_table_atfork_child(void)
{
  memset(pf_table.buckets, 0, pf_table.nbuckets * sizeof *pf_table.buckets);
}

int
pf_table_init(void)
{
  long ncpu = sysconf(_SC_NPROCESSORS_CONF);
  uint32_t n = 1;
  unsigned int bits = 0;
  void *mem;

  if (ncpu < 1)
    ncpu = 1;
  while (n < (uint32_t)ncpu * 256 && bits < 20) {
    n <<= 1;
    bits++;
  }
  if (posix_memalign(&mem, PF_CACHELINE, n * sizeof(struct pf_bucket)) != 0)
    return -ENOMEM;
  memset(mem, 0, n * sizeof(struct pf_bucket));
  pf_table.buckets = mem;
  pf_table.nbuckets = n;
  pf_table.bits = bits;
  pf_table.slots = NULL;
  pf_table.ops = NULL;
  pf_table.rgn = NULL;
  pf_table.order = 0;
  if (pthread_atfork(NULL, NULL, pf_table_atfork_child) != 0)
    return -ENOMEM;
  return 0;
}

void
pf_cpu_relax(unsigned int *spins)
{
  PF_SCHED_SPIN();            /* src/schedpt.h: the holder runs first */
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

/* The pools' locks: test-and-test-and-set, yielding when the holder seems
 * preempted.  Critical sections are a few dozen instructions and never make
 * a system call. */
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

static inline void
pf_key_shared_local(uint32_t *uaddr, struct pf_key *k, struct pf_table **tab)
{
  k->space = PF_KEY_SHARED_LOCAL;
  k->word = (uintptr_t)uaddr;
  *tab = &pf_table;
}

/* A shared key (emu.h, pf_key_make): in a key space's table (a region's),
 * or this process's shared-local space. */
int
pf_key_make_shared(uint32_t *uaddr, struct pf_key *k, struct pf_table **tab)
{
  const struct pf_keyspace *ks;
  if (!PF_ALIGNED(uaddr))
    return -EINVAL;
  if (pf_addr_unreadable(uaddr))
    return -EFAULT;
  if ((ks = pf_keyspace_find(uaddr)) != NULL) {
    k->word = (uint64_t)((uintptr_t)uaddr - ks->key_base);
    k->space = PF_KEY_REGION;
    *tab = ks->tab;
    return 0;
  }
  pf_key_shared_local(uaddr, k, tab);
  return 0;
}

/* A shared key outside regions, made for the word at uaddr by
 * pf_key_make: a word of a shared mapping gets its object's key in the
 * user's shared table (src/region/shared.c: 0, or -errno when the table
 * cannot be had); a private mapping's keeps this process's key, by
 * address (so does a word the OS cannot tell about, -ENOSYS); a shared
 * mapping the OS names no object for answers ENOSYS (Windows: a view of
 * a section; use a region), never a key that silently stays local.  As
 * the kernel's get_futex_key, a word no shared key can be made for
 * answers EFAULT, for every op (a wake with nobody waiting included):
 * nothing mapped, a read-only private anonymous page (the OS's answer),
 * or a word a read would fault on (pf_word_check: no permission, a file
 * page past the file's end).  The OS's
 * answer costs a system call (Linux: one ioctl), so callers ask only
 * past the fast paths that need no key of the object (a mismatched
 * wait). */
static int
pf_key_object_at(const uint32_t *uaddr, struct pf_key *k, struct pf_table **tab, int os)
{
  struct pf_os_objid id;
  if (k->space != PF_KEY_SHARED_LOCAL)
    return 0;
  switch (pf_emu_port->object_id ? pf_emu_port->object_id(uaddr, &id)
                                 : pf_os_object_id(uaddr, &id)) {
  case 1:
    if (pf_word_check(uaddr) < 0)
      return -EFAULT;
    return pf_shared_key(&id, k, tab);
  case PF_OBJID_KERNEL:
    if (os && pf_emu_port->os_futex)
      return -PF_EOSFUTEX;            /* the OS's own futex keys it: the op goes there */
    return -ENOSYS;                   /* waitv, PI: the OS's call has none */
  case PF_OBJID_NONE:
    return -ENOSYS;                   /* shared memory the OS names no object for
                                         (Windows): documented, never a silent key */
  case -EFAULT:
    return -EFAULT;
  default:
    return pf_word_check(uaddr);
  }
}

int
pf_key_object(const uint32_t *uaddr, struct pf_key *k, struct pf_table **tab)
{
  return pf_key_object_at(uaddr, k, tab, 0);
}

int
pf_key_object_os(const uint32_t *uaddr, struct pf_key *k, struct pf_table **tab)
{
  return pf_key_object_at(uaddr, k, tab, 1);
}

/* Both keys of a two-word op (requeue, wake_op), as Linux makes them: one
 * after the other, each with its alignment (EINVAL) and then, for a shared
 * key outside every region, EFAULT on a page the kernel would not key.
 * uaddr2 on uaddr's page needs no second check: the same mapping, the same
 * answer (where the check reads /proc/self/maps it is the costly part). */
static int
pf_key_make2_at(const struct pf_req *r, struct pf_key *k1, struct pf_table **t1, struct pf_key *k2,
                struct pf_table **t2, int os)
{
  int ret, os1, os2;
  int local1;
  if ((ret = pf_key_make(r->uaddr, r->flags, k1, t1)) < 0)
    return ret;
  if ((ret = pf_key_object_at(r->uaddr, k1, t1, os)) < 0 && ret != -PF_EOSFUTEX)
    return ret;
  os1 = ret == -PF_EOSFUTEX;
  local1 = !os1 && k1->space == PF_KEY_SHARED_LOCAL;
  if (local1 && (ret = pf_os_shared_key_check(r->uaddr)) < 0)
    return ret;
  if ((ret = pf_key_make(r->uaddr2, r->flags, k2, t2)) < 0)
    return ret;
  if ((ret = pf_key_object_at(r->uaddr2, k2, t2, os)) < 0 && ret != -PF_EOSFUTEX)
    return ret;
  os2 = ret == -PF_EOSFUTEX;
  if (!os2 && k2->space == PF_KEY_SHARED_LOCAL
      && !(local1 && ((uintptr_t)r->uaddr >> 12) == ((uintptr_t)r->uaddr2 >> 12))
      && (ret = pf_os_shared_key_check(r->uaddr2)) < 0)
    return ret;
  if (os1 || os2)                     /* both to the OS's futex, or neither can be */
    return os1 && os2 ? -PF_EOSFUTEX : -EINVAL;
  return 0;
}

int
pf_key_make2(const struct pf_req *r, struct pf_key *k1, struct pf_table **t1, struct pf_key *k2,
             struct pf_table **t2)
{
  return pf_key_make2_at(r, k1, t1, k2, t2, 0);
}

int
pf_key_make2_os(const struct pf_req *r, struct pf_key *k1, struct pf_table **t1, struct pf_key *k2,
                struct pf_table **t2)
{
  return pf_key_make2_at(r, k1, t1, k2, t2, 1);
}

/* A shared op on a word the OS's own futex keys (PF_OBJID_KERNEL): the
 * whole op to the port's os_futex (src/port.h). */
int
pf_emu_os_futex(int op, const struct pf_req *r)
{
  long ret = pf_emu_port->os_futex(op, r);
  return ret > INT_MAX ? INT_MAX : (int)ret;
}

int
pf_emu_wake_idle_shared(uint32_t *uaddr)
{
  struct pf_key key;
  struct pf_table *tab;
  uint32_t i;
  /* a region's word only: any other's key needs the OS's answer
   * (pf_key_object, a system call), which the engine's wake asks once */
  return pf_key_make_shared(uaddr, &key, &tab) == 0 && key.space == PF_KEY_REGION
         && pf_emu_nobody_waits(tab, &key, &i);
}

/* ---- Bucket locks ---------------------------------------------------------- */
/* The lock word: 0 free; the private table's holder is 1.  A region's lock
 * is its ops' (src/region/lock.c): it names its holder, and survives it. */
int
pf_bucket_lock(struct pf_table *tab, uint32_t i)
{
  volatile unsigned int *l = &tab->buckets[i].lock;
  unsigned int spins = 0;

  if (!tab->ops) {
    while (AO_int_load(l) != 0 || !AO_int_compare_and_swap_full(l, 0, 1))
      pf_cpu_relax(&spins);
    return 0;
  }
  return tab->ops->lock(tab, i);
}

void
pf_bucket_unlock(struct pf_table *tab, uint32_t i)
{
  AO_int_store_release(&tab->buckets[i].lock, 0);
  if (tab->ops)
    tab->ops->unlocked(tab, i);
}

static int
pf_table_before(const struct pf_table *t1, uint32_t i1, const struct pf_table *t2, uint32_t i2)
{
  if (t1->order != t2->order)
    return t1->order < t2->order;
  return i1 < i2;
}

int
pf_bucket_lock2(struct pf_table *t1, uint32_t i1, struct pf_table *t2, uint32_t i2)
{
  int ret;
  if (t1 == t2 && i1 == i2)
    return pf_bucket_lock(t1, i1);
  if (!pf_table_before(t1, i1, t2, i2)) {
    struct pf_table *tt = t1;
    uint32_t ti = i1;
    t1 = t2;
    i1 = i2;
    t2 = tt;
    i2 = ti;
  }
  if ((ret = pf_bucket_lock(t1, i1)) < 0)
    return ret;
  if ((ret = pf_bucket_lock(t2, i2)) < 0)
    pf_bucket_unlock(t1, i1);
  return ret;
}

void
pf_bucket_unlock2(struct pf_table *t1, uint32_t i1, struct pf_table *t2, uint32_t i2)
{
  pf_bucket_unlock(t1, i1);
  if (t1 != t2 || i1 != i2)
    pf_bucket_unlock(t2, i2);
}

/* ---- Queues ------------------------------------------------------------------- */

void
pf_queue_append_locked(struct pf_table *tab, struct pf_bucket *b, struct pf_node *n, pf_ref ref)
{
  struct pf_node *t = pf_node_get(tab, b->tail);
  n->next = 0;
  n->prev = t ? b->tail : 0;
  if (t)
    t->next = ref;
  else
    b->head = ref;
  PF_CRASH("append_half");
  b->tail = ref;
}

void
pf_queue_unlink_locked(struct pf_table *tab, struct pf_bucket *b, struct pf_node *n)
{
  struct pf_node *p = pf_node_get(tab, n->prev), *x = pf_node_get(tab, n->next);
  if (p)
    p->next = n->next;
  else
    b->head = x ? n->next : 0;
  PF_CRASH("unlink_half");
  if (x)
    x->prev = n->prev;
  else
    b->tail = p ? n->prev : 0;
  n->next = n->prev = 0;
}

void
pf_bucket_push(struct pf_table *tab, uint32_t i, struct pf_node *n, pf_ref ref)
{
  volatile unsigned int *in = &tab->buckets[i].incoming;
  unsigned int old;
  n->pushed = 1;
  PF_CRASH("push_marked");
  do {
    old = AO_int_load(in);
    n->in_next = old;
  } while (!AO_int_compare_and_swap_full(in, old, ref));
}

/* Take the whole incoming stack (pushes only ever add to it and this takes
 * it whole, so no ABA) and append it to the queue in arrival order.  A node
 * already linked (a region's rebuild linked it before its push landed) is
 * skipped.  -ENOTRECOVERABLE for a stack longer than the table's nodes. */
int
pf_bucket_drain_locked(struct pf_table *tab, struct pf_bucket *b)
{
  pf_ref rev = 0, s;
  unsigned int top, budget = tab->slots ? tab->nslots + 1 : ~0u;
  do
    top = AO_int_load(&b->incoming);
  while (top && !AO_int_compare_and_swap_full(&b->incoming, top, 0));
  PF_CRASH("drain_taken");
  for (s = top; s;) {
    struct pf_node *n = pf_node_get(tab, s);
    pf_ref next;
    if (!n || budget-- == 0)
      return -ENOTRECOVERABLE;
    next = n->in_next;
    n->in_next = rev;
    rev = s;
    s = next;
  }
  while (rev) {
    struct pf_node *n = pf_node_get(tab, rev);
    pf_ref next;
    if (!n)
      return -ENOTRECOVERABLE;            /* relinked by a scribble meanwhile */
    next = n->in_next;
    n->in_next = 0;
    if (!n->linked) {
      pf_queue_append_locked(tab, b, n, rev);
      n->linked = 1;
    }
    rev = next;
  }
  return 0;
}

void
pf_node_unlink_locked(struct pf_table *tab, struct pf_bucket *b, struct pf_node *n)
{
  pf_queue_unlink_locked(tab, b, n);
  n->linked = 0;
  pf_node_uncount_locked(b, n);
}

void
pf_node_uncount_locked(struct pf_bucket *b, struct pf_node *n)
{
  if (n->counted) {
    n->counted = 0;
    AO_int_fetch_and_add_full(&b->waiters, (unsigned int)-1);
  }
}

/* Walk-and-check of a bucket's queue, bounded: 0 when every link resolves
 * and the list is consistent, else -ENOTRECOVERABLE. */
static int
pf_queue_check_locked(struct pf_table *tab, struct pf_bucket *b)
{
  struct pf_walk it;
  struct pf_node *n;
  pf_ref r, prev = 0;
  pf_walk_start(&it, tab, b);
  while ((n = pf_walk_next(&it, &r)) != NULL) {
    if (n->prev != prev || !n->linked)
      return -ENOTRECOVERABLE;
    prev = r;
  }
  return !it.bad && b->tail == prev ? 0 : -ENOTRECOVERABLE;
}

/* Drain, and in a region check the queue; rebuild it once if it is bad. */
int
pf_bucket_ready_locked(struct pf_table *tab, uint32_t i)
{
  struct pf_bucket *b = &tab->buckets[i];
  int ret = pf_bucket_drain_locked(tab, b);
  if (!tab->slots)
    return ret;
  if (ret == 0 && pf_queue_check_locked(tab, b) == 0)
    return 0;
  if ((ret = tab->ops->rebuild(tab, i)) < 0)
    return ret;
  return pf_queue_check_locked(tab, b);
}

int
pf_bucket_ready2_locked(struct pf_table *t1, uint32_t i1, struct pf_table *t2, uint32_t i2)
{
  int ret = pf_bucket_ready_locked(t1, i1);
  if (ret == 0 && (t1 != t2 || i1 != i2))
    ret = pf_bucket_ready_locked(t2, i2);
  return ret;
}

int
pf_waiter_dequeue(struct pf_waiter *w, uint32_t to, int dead)
{
  struct pf_table *tab = w->tab;
  struct pf_node *n = w->node;
  unsigned int tries;
  for (tries = 0;; tries++) {
    uint32_t idx = AO_int_load_acquire(&n->bucket);
    struct pf_bucket *b;
    int queued;

    if (idx >= tab->nbuckets || tries > 1000) {
      /* corrupt: the bucket its key names, where a rebuild files it */
      struct pf_key k;
      k.word = pf_node_keyword(n);
      k.space = n->key_space;
      idx = pf_key_bucket(tab, &k);
      if (tries > 2000)
        return 1;                           /* give up: a region that keeps changing */
    }
    b = &tab->buckets[idx];
    if (pf_bucket_lock(tab, idx) < 0)
      return 1;                             /* unusable region: off it, as far as we can */
    if (tab->slots && AO_int_load(&n->bucket) >= tab->nbuckets)
      AO_int_store(&n->bucket, idx);
    if (tab->slots && !tab->ops->slot_mine(tab, n)) {
      pf_bucket_unlock(tab, idx);           /* corruption freed it: not ours to touch */
      return 1;
    }
    if (AO_int_load(&n->bucket) != idx) {   /* requeued meanwhile: follow it */
      pf_bucket_unlock(tab, idx);
      continue;
    }
    (void)pf_bucket_ready_locked(tab, idx); /* every push of n is on the queue now */
    if (n->linked) {
      pf_node_unlink_locked(tab, b, n);
    } else if (dead) {
      pf_node_uncount_locked(b, n);         /* never pushed, never will be */
    }
    PF_CRASH("dequeue_unlinked");
    queued = AO_int_load(&n->state) == PF_W_QUEUED;
    if (queued)
      AO_int_store(&n->state, to);
    pf_bucket_unlock(tab, idx);
    return queued;
  }
}

int
pf_queue_wake_locked(struct pf_table *tab, uint32_t i, const struct pf_key *k, uint32_t mask,
                     int nr, struct pf_wake_list *l)
{
  struct pf_bucket *b = &tab->buckets[i];
  struct pf_walk it;
  struct pf_node *w;
  pf_ref r;
  int n = 0;

  pf_walk_start(&it, tab, b);
  while (n < nr && (w = pf_walk_next(&it, &r)) != NULL) {
    if (AO_int_load(&w->state) != PF_W_QUEUED || !pf_node_keyeq(w, k))
      continue;                           /* (G) a detached node its owner will remove */
    if (PF_UNLIKELY(w->pi) && pf_node_is_pi(w))
      return -EINVAL;                     /* a PI waiter (src/pi.c): Linux's futex_wake
                                             answers EINVAL there, those before it woken */
    if (!(w->bitset & mask))
      continue;
    if (tab->slots && tab->ops->reap(tab, b, w, r))
      continue;                           /* its process died: the kernel would have
                                             dropped it at exit */
    pf_node_wake_locked(tab, b, w, r, l);
    n++;
  }
  return n;
}

void
pf_node_wake_locked(struct pf_table *tab, struct pf_bucket *b, struct pf_node *w, pf_ref r,
                    struct pf_wake_list *l)
{
  /* Off the queue, WAKING, and only then out of the count: a waker that
   * dies between the unlink and the mark leaves a QUEUED node that no
   * wake would find (its waiter sleeps on, slice after slice) if the
   * count said nobody waits; counted, a later waker takes the lock over
   * and the rebuild queues the node again (wait.c (R)). */
  pf_queue_unlink_locked(tab, b, w);
  w->linked = 0;
  if (tab->slots)
    w->waker = tab->ops->lock_id(tab);
  AO_int_store_release(&w->state, PF_W_WAKING);   /* a waiter may see it without the token (R) */
  pf_node_uncount_locked(b, w);
  PF_CRASH("wake_marked");
  if (PF_UNLIKELY(w->pi == PF_PI_ADOPT || w->pi == PF_PI_VXADOPT)) {
    /* Queued by a cross-table requeue, not adopted yet (wait.c (M); a
     * futex_waitv member's: src/waitv.c): its park is not armed and its
     * waiter is on its way; it adopts the node under this lock, finds it
     * WAKING and needs no token. */
    l->n++;
    return;
  }
  if (PF_UNLIKELY((w->pi & PF_PI_KIND) == PF_PI_VX)) {
    /* A futex_waitv member (src/waitv.c): counted here, as Linux counts
     * each woken entry; its group's parker is rung once, by whoever
     * moves it from QUEUED first, under this lock (its waiter takes every
     * member off under their locks before it looks at the parker). */
    if (!pf_vx_ring_locked(tab, w, r, l))
      l->n++;                           /* (rung: counted by the parker's entry) */
    return;
  }
  pf_wake_list_add(l, tab, w, r);
}

int
pf_vx_ring_locked(struct pf_table *tab, struct pf_node *w, pf_ref r, struct pf_wake_list *l)
{
  /* In a region the parker is its waiter's slot, named by the member:
   * rung only if it is a parker of the member's own process. */
  struct pf_node *lead;
  pf_ref lr;
  if (!tab->slots) {
    struct pf_thread *rec = pf_thread_rec(r);
    lead = rec->vx_lead;
    lr = rec->vx_lead_ref;
    if (lead && rec->vx_lead_shared) {
      /* the parker is a region's slot (a waitv mixing words): not of
       * this table's wake list; rung and unparked here, once */
      if (AO_int_compare_and_swap_full(&lead->state, PF_W_QUEUED, PF_W_WAKING))
        pf_emu_port->unpark(&lead->park, 1);      /* the last touch (wait.c (D)) */
      return 0;
    }
  } else {
    lr = PF_VX_LEAD(w->pi);
    lead = pf_node_get(tab, lr);
    if (lead && (AO_int_load(&lead->pi) != PF_VX_PARKER || AO_int_load(&lead->owner) != AO_int_load(&w->owner)))
      lead = NULL;                    /* a scribble: the member alone */
  }
  if (!lead || !AO_int_compare_and_swap_full(&lead->state, PF_W_QUEUED, PF_W_WAKING))
    return 0;
  if (tab->slots)
    lead->waker = tab->ops->lock_id(tab);
  pf_wake_list_add(l, tab, lead, lr);
  return 1;
}

void
pf_wake_list(struct pf_wake_list *l)
{
  pf_ref r = l->head;
  int left = l->n;                           /* (a waitv's members: more than chained) */
  while (r && left-- > 0) {
    struct pf_node *w = pf_node_get(l->tab, r);
    if (!w)
      break;
    r = w->wake_next;                        /* read before the token is given */
    pf_emu_port->unpark(&w->park, l->tab->slots != NULL);  /* the last touch (wait.c (D)) */
  }
}
