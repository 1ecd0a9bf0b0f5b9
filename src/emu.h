/* emu.h - the emulation engine: keys, waiter nodes, waitqueue tables, bucket
 * locks, threads' records, the operations.  Private to the engine (the
 * files of src/) and the region layer built on it; a park port sees
 * src/port.h only.  Nothing here is OS-specific. */
#ifndef PF_EMU_H
#define PF_EMU_H

#include "pf.h"
#include "port.h"
#include "crash.h"

#include <signal.h>

/* ---- Node references ---------------------------------------------------- */
/* Queues link nodes by 32-bit references, never by pointers, so one queue
 * code serves the private table (nodes in this process's thread records)
 * and the tables in shared regions (nodes in the region's slot array,
 * mapped at a different address in each process, read by 32-bit and
 * 64-bit processes alike).  A reference is an index + 1 in its table's node
 * space; 0 is none.  Resolving one is bounds-checked (region memory is
 * untrusted: a reference out of range is corruption, never an access). */
typedef uint32_t pf_ref;

/* ---- Keys -------------------------------------------------------------- */
/* A private futex is keyed by its address.  A shared one outside every
 * region is keyed by its address too, in a key space of its own: a
 * FUTEX_PRIVATE_FLAG waiter is not woken by a shared wake of the same word,
 * as on Linux.  A shared futex in a region is keyed by its offset in the
 * region, in the region's own table. */
enum { PF_KEY_PRIVATE = 0, PF_KEY_SHARED_LOCAL = 1, PF_KEY_REGION = 2 };
/* A word of a shared mapping outside regions (src/region/shared.c): the
 * space's top bit, its other 31 bits and the word a hash of the object
 * and the offset, in the user's shared table. */
#define PF_KEY_OBJECT 0x80000000u
struct pf_key {
  uint64_t word;
  uint32_t space;
};
struct pf_table;
struct pf_os_objid;
/* The shared table's key for the word at offset id->off of object id
 * (src/region/shared.c): 0, or -errno (no table: ENOMEM, EACCES...). */
int pf_shared_key(const struct pf_os_objid *id, struct pf_key *k, struct pf_table **tab);
/* Its region's name, for this user and port (tests remove it). */
int pf_shared_name(char *buf, size_t len);
/* Open the shared table if this process has not tried yet (the region
 * layer, as it opens a region: src/region/shared.c): its waiters can then
 * be moved to a shared mapping's word by another process's requeue. */
void pf_shared_prepare(void);

static inline int
pf_key_eq(const struct pf_key *a, const struct pf_key *b)
{
  return a->word == b->word && a->space == b->space;
}

/* ---- Nodes ------------------------------------------------------------- */
/* state transitions (the only ones):
 *   IDLE -> QUEUED     the waiter, as it queues (before its push, (H))
 *   QUEUED -> WAKING   a waker, under the bucket lock, as it unlinks the node;
 *                      after unlocking it gives the port's token, its last
 *                      touch of the node (wait.c (D))
 *   QUEUED -> DETACHED a pfutex call made by a signal handler on the waiter's
 *                      own thread, under the bucket lock: the kernel takes a
 *                      waiter off its queue while it runs a handler; the
 *                      detacher gives the token itself (wait.c (G))
 *   QUEUED -> GONE     the waiter itself, under the bucket lock (timeout,
 *                      signal, cancellation, or the repair of an abandoned
 *                      wait): it unlinked itself
 *   WAKING, DETACHED -> IDLE   the waiter (or the repair), once it holds
 *                      the token; GONE -> IDLE the same, at once
 *   QUEUED -> MOVED    a requeue to a word of another table (src/requeue.c),
 *                      under both bucket locks: the node is off its queue and
 *                      a node of the other table, queued there for the same
 *                      waiter (its `pi` PF_PI_ADOPT until the waiter adopts
 *                      it), takes its place; the requeuer gives the token
 *                      after unlocking, and the waiter adopts the new node
 *                      (wait.c (M))
 *   MOVED -> IDLE      the waiter, once it adopted the new node
 * A node leaves IDLE only in its own thread's wait, so no queue ever holds
 * a node whose wait is over, and no waker touches one.
 *
 * The layout is fixed (80 bytes, fixed-width fields, no pointers): a node
 * is also a region's slot.  Fields marked "slot" are used in regions only. */
enum { PF_W_IDLE = 0, PF_W_QUEUED, PF_W_WAKING, PF_W_DETACHED, PF_W_GONE,
       PF_W_ROBUST /* a region slot on no queue: a thread's robust list head
                      (src/region/robust.c), never a wait's */,
       PF_W_MOVED };

struct pf_node {
  uint32_t key_lo, key_hi;       /* the key's word (bucket lock; requeue rewrites it) */
  uint32_t key_space;
  pf_ref next, prev;             /* bucket queue links; bucket lock */
  pf_ref in_next;                /* the bucket's incoming stack (wait.c (H)) */
  pf_ref wake_next;              /* the waker's list once unlinked */
  uint32_t linked;               /* on the bucket's queue; bucket lock */
  uint32_t counted;              /* holds one of waiters(B) (A); the owner before
                                    it pushes, then the bucket lock */
  uint32_t bucket;               /* index of the bucket whose queue holds the node;
                                    written under that bucket's lock (requeue: both) */
  uint32_t state;                /* PF_W_*, see the transition table */
  uint32_t bitset;               /* set before queueing, then read-only */
  uint32_t owner;                /* slot: the owning process's lock id (0: free) */
  uint32_t pi;                   /* 0, or a PI lock waiter (src/pi.c): PF_PI_LOCK
                                    and its thread id; set before queueing */
  uint32_t pushed;               /* slot: pushed since claimed (queue rebuild) */
  uint32_t waker;                /* slot: the lock id of the process that set WAKING;
                                    while QUEUED, its waiter's own private-table
                                    reference (pf_waiter_lref: a requeue finds it) */
  uint32_t seq;                  /* slot: arrival order (queue rebuild) */
  struct pf_park park;           /* the port's shared half */
};

/* A node's `pi`: a waiter for a PI lock (bitset 0: no wake matches it,
 * no requeue moves it; UNLOCK_PI hands it the lock), with its thread id
 * in the low 30 bits. */
#define PF_PI_LOCK 0x80000000u
#define PF_PI_RQ   0x40000000u      /* a WAIT_REQUEUE_PI waiter, not yet requeued */
#define PF_PI_VX   0xc0000000u      /* both: a futex_waitv member (src/waitv.c) */
#define PF_PI_KIND 0xc0000000u
/* A PI waiter of either kind (not a waitv member, not a plain waiter). */
static inline int
pf_node_is_pi(const struct pf_node *n)
{
  uint32_t k = n->pi & PF_PI_KIND;
  return k == PF_PI_LOCK || k == PF_PI_RQ;
}
#define PF_PI_TID  0x3fffffffu
/* A plain waiter's node queued by a cross-table requeue for a waiter that
 * has not adopted it yet (wait.c (M)): its park is not armed, so a waker
 * marks it WAKING and gives no token (the waiter finds the mark). */
#define PF_PI_ADOPT 0x00000001u
/* The same for a futex_waitv member moved to another table (src/waitv.c):
 * named by no parker until its waiter adopts it; a waker counts it. */
#define PF_PI_VXADOPT 0x00000002u
/* A node moved to another table whose destination is published in the
 * node itself, not in its waiter's record (src/requeue.c: the waiter is
 * another process's, or the node was one its waiter had not adopted):
 * while MOVED, key_space PF_KEY_XDEST, the key's word the destination
 * table's `order` (0: the private table) and `seq` the destination
 * node's reference there.  Written after MOVED, under the lock of the
 * node's bucket (a queued node's key is how a rebuild files it), the
 * space last (release); read by the waiter only: the space first
 * (acquire), else under that lock. */
#define PF_KEY_XDEST 0x7fffffffu
static inline void
pf_node_publish_dest(struct pf_node *n, uint64_t order, pf_ref ref)
{
  n->key_lo = (uint32_t)order;
  n->key_hi = (uint32_t)(order >> 32);
  n->seq = ref;
  AO_int_store_release(&n->key_space, PF_KEY_XDEST);
}
/* A futex_waitv in a region (src/waitv.c): its parker is the waiter's
 * slot, on no queue, `pi` PF_VX_PARKER; member i's `pi` is PF_PI_VX | i << 21
 * | the parker's slot reference (slots: at most 2^20, region.h).  In the
 * private table a member's `pi` is PF_PI_VX | i << 21 (its lent record
 * names the parker). */
#define PF_VX_PARKER 0xffffffffu
#define PF_VX_MEMBER(i, parker) (PF_PI_VX | ((uint32_t)(i) << 21) | (uint32_t)(parker))
#define PF_VX_INDEX(pi) (((pi) >> 21) & 0x1ffu)
#define PF_VX_LEAD(pi) ((pi) & 0x1fffffu)
/* A futex_waitv member, adopted or not (not its parker). */
static inline int
pf_node_is_vx(const struct pf_node *n)
{
  uint32_t pi = AO_int_load(&n->pi);
  return ((pi & PF_PI_KIND) == PF_PI_VX && pi != PF_VX_PARKER) || pi == PF_PI_VXADOPT;
}

static inline uint64_t
pf_node_keyword(const struct pf_node *n)
{
  return (uint64_t)n->key_lo | ((uint64_t)n->key_hi << 32);
}

static inline void
pf_node_setkey(struct pf_node *n, const struct pf_key *k)
{
  n->key_lo = (uint32_t)k->word;
  n->key_hi = (uint32_t)(k->word >> 32);
  n->key_space = k->space;
}

static inline int
pf_node_keyeq(const struct pf_node *n, const struct pf_key *k)
{
  return n->key_lo == (uint32_t)k->word && n->key_hi == (uint32_t)(k->word >> 32)
         && n->key_space == k->space;
}

/* A node about to be queued in bucket idx of a table: its key, bitset and
 * kind (`pi`), its links and marks cleared (wait.c, pi.c, waitv.c). */
static inline void
pf_node_prepare(struct pf_node *n, const struct pf_key *k, uint32_t idx, uint32_t bitset,
                uint32_t pi)
{
  pf_node_setkey(n, k);
  n->bitset = bitset;
  AO_int_store(&n->pi, pi);                       /* atomic: a region waitv's end scans slots */
  AO_int_store(&n->bucket, idx);
  n->linked = 0;
  n->counted = 0;
  n->pushed = 0;
  n->waker = 0;
  n->in_next = 0;
}

/* ---- Buckets and tables -------------------------------------------------- */
#define PF_CACHELINE 64
struct pf_bucket {                 /* fixed layout, 64 bytes: also a region's bucket */
  uint32_t lock;                   /* 0 free; else the holder (private: 1; region:
                                      its lock id, src/region/lock.c) */
  pf_ref incoming;                 /* waiters pushed without the lock, newest first;
                                      drained onto the queue by every lock holder
                                      before it looks (H) */
  uint32_t waiters;                /* nodes queued here plus waiters past barrier (A)
                                      that have not queued yet: see wait.c */
  pf_ref head, tail;               /* FIFO queue; lock */
  uint32_t pad[11];
};

struct pf_table;
/* How a region's table plugs into the engine (the region layer, src/region/,
 * fills one in; the private table has none).  The engine knows nothing of
 * regions: it calls these on a table whose ops (or slots) are set, behind
 * that one test, so no private path makes an indirect call. */
struct pf_table_ops {
  /* pf_bucket_lock: the robust lock.  The word names its holder; a locker
   * takes the lock over from a holder the OS says is dead (or a scribble)
   * and rebuilds the bucket: 0, -ENOMEM (no process entry), or
   * -ENOTRECOVERABLE. */
  int (*lock)(struct pf_table *tab, uint32_t i);
  /* pf_bucket_unlock, after its release store of the word: the count of
   * locks this process holds goes down. */
  void (*unlocked)(struct pf_table *tab, uint32_t i);
  /* Bucket i's queue is corrupt (its lock held, pf_bucket_ready_locked):
   * rebuild queue, incoming stack and count from the slots: 0, or
   * -ENOTRECOVERABLE. */
  int (*rebuild)(struct pf_table *tab, uint32_t i);
  /* A walk under b's lock met n (reference ref) QUEUED: 1 when n's process
   * is dead (n is then freed, or left to a later walk while its push may
   * still be on the incoming stack: never counted), 0 when alive. */
  int (*reap)(struct pf_table *tab, struct pf_bucket *b, struct pf_node *n, pf_ref ref);
  /* This process's lock id (a waker marks the nodes it wakes with it). */
  uint32_t (*lock_id)(const struct pf_table *tab);
  /* A slot for a wait of this process: 0 and *ref, or -ENOMEM when the
   * pool is exhausted (after reclaiming the slots of dead processes, which
   * takes bucket locks: only when `crit`, inside a critical section; else
   * -EAGAIN: ask again inside one). */
  int (*slot_claim)(struct pf_table *tab, pf_ref *ref, int crit);
  /* Give back this process's slot n (nothing if it is not ours any more). */
  void (*slot_release)(struct pf_table *tab, struct pf_node *n);
  /* This process still owns n (a corrupt region may free a slot under us). */
  int (*slot_mine)(const struct pf_table *tab, const struct pf_node *n);
  /* The arrival number of a node being queued (a rebuild orders by it). */
  uint32_t (*next_seq)(struct pf_table *tab);
  /* Waits of this process in progress on the table (a close is EBUSY). */
  void (*wait_begin)(struct pf_table *tab);
  void (*wait_end)(struct pf_table *tab);
  /* A thread of this process registered a robust list whose head is in
   * the table's region (src/robust.c): record it in a slot, so that a
   * surviving process walks the list if this one dies (SIGKILL).  key_base
   * is the address the region's keys count from here, head_key the
   * head's key.  0 and *ref, or -ENOMEM (no slot).  Inside a critical
   * section. */
  int (*robust_reg)(struct pf_table *tab, uint64_t key_base, uint64_t head_key, uint32_t tid,
                    pf_ref *ref);
  /* That registration ends (the thread exits, or registers another
   * head): nothing if slot ref no longer holds it. */
  void (*robust_unreg)(struct pf_table *tab, pf_ref ref, uint64_t head_key, uint32_t tid);
  /* A region park's slice: its length in ns (0: the usual), shorter
   * while threads of any process have robust lists registered there; and
   * after each, the lists of processes that died are walked
   * (src/region/robust.c). */
  long (*slice_ns)(const struct pf_table *tab);
  void (*robust_check)(struct pf_table *tab);
  /* Is a registration of thread tid's list still there (not yet walked,
   * or being walked by another survivor)? */
  int (*robust_pending)(const struct pf_table *tab, uint32_t tid);
  /* A requeue moving another process's waiter to a word of table `to`
   * (src/requeue.c, wait.c (M)): the lock id there of the live process
   * behind lock id `owner` here (0: it has no entry there); and this
   * process's slot n, queued for that process's waiter under its
   * bucket's lock, given to it (its owner word: `owner`). */
  uint32_t (*peer_id)(const struct pf_table *tab, uint32_t owner, const struct pf_table *to);
  void (*slot_give)(struct pf_table *tab, struct pf_node *n, uint32_t owner);
};
/* This process's table whose `order` is `order` (0: the private table),
 * with a wait begun on it (wait_begin: a close meanwhile is EBUSY), or
 * NULL when it has none: the region layer's (src/region/handle.c), set
 * when it opens its first region (NULL until then). */
extern struct pf_table *(*volatile pf_table_by_order)(uint64_t order);

struct pf_rgn_att;
/* A table: the process's private one, or a region's (process-local handle
 * to the shared arrays).  Its geometry is read once and never again from
 * shared memory. */
struct pf_table {
  struct pf_bucket *buckets;
  uint32_t nbuckets;               /* a power of two */
  unsigned int bits;               /* log2(nbuckets) */
  struct pf_node *slots;           /* region: the slot array; NULL: private */
  uint32_t nslots;
  const struct pf_table_ops *ops;  /* region: its ops; NULL: private */
  struct pf_rgn_att *rgn;          /* region: the region layer's (its attachment),
                                      never looked at here; NULL: private */
  uint64_t order;                  /* lock order between tables (private: 0) */
};
extern struct pf_table pf_table;   /* the private table */

/* ---- Threads (src/thread.c) -------------------------------------------- */
/* Each thread that waits owns a record holding its waits, one per nesting
 * level (a wait inside a signal handler that interrupted a wait), so a
 * node never lives on a stack a longjmp or a cancellation may free.
 * Records come from a pool (mmap'd, never returned to the system) and are
 * recycled with their parkers when their thread is gone.  A wait on a
 * private table queues the record's own node; a wait on a region queues a
 * slot of the region's (wait.c). */
#define PF_NEST_MAX 8
struct pf_waiter {
  struct pf_node n;                /* the node a private wait queues */
  struct pf_table *tab;            /* the table of the node queued (NULL: none) */
  pf_ref ref;                      /* that node's reference in tab */
  struct pf_node *node;            /* and its address */
  volatile uintptr_t frame;        /* the owning wait's stack frame (thread.c); volatile:
                                      a handler of the owner reads it (wait.c (H)) */
  struct pf_parker parker;         /* the port's local half */
  /* A futex_waitv (src/waitv.c): n is then the group's parker node, on no
   * queue (QUEUED while armed; a waker of a member CASes it to WAKING
   * under the member's bucket lock and unparks it, once); the members are
   * the nodes of vx_n / 8 records taken from the pool, chained from vx. */
  struct pf_thread *vx;
  uint32_t vx_n;                   /* entries */
  uint32_t vx_pushed;              /* members queued so far (0..vx_n) */
  /* A futex_waitv over the words of more than one shared table: a record
   * lent per further table, chained by vx_next, whose vx_ptab and
   * vx_pref name that table's parker slot (its members name it) and whose
   * nodes[0].parker is that parker's local half. */
  struct pf_thread *vx_sec;
  /* Members moved here from another table by a requeue and adopted in
   * this process's table (src/waitv.c): a lent record each (its
   * nodes[0]), chained by vx_next. */
  struct pf_thread *vx_mv;
  uint32_t vx_moves;               /* members adopted after a move (src/waitv.c) */
  int vx_found;                    /* the highest entry found woken while following
                                      moves, or -1 */
  volatile int vx_intr;            /* a handler ran while the parker was rung (by a
                                      move, perhaps: the wait must not go on) */
  int vx_sliced;                   /* the waitv parks in slices of its own (a park
                                      that ends one is a slice: src/schedpt.h) */
  /* A requeue to a word of another table (src/requeue.c, wait.c (M)): the
   * node queued there for this wait, not adopted yet (mv_node NULL: none);
   * written by the requeuer (a thread of this process) under the lock of
   * the bucket that holds mv_node, read by the waiter under it too. */
  volatile AO_t mv_tab;            /* struct pf_table *: pf_mv_tab() */
  volatile AO_t mv_node;           /* struct pf_node *: pf_mv_node() */
  volatile AO_t mv_gen;            /* odd while the two above change (one writer at a
                                      time: the holder of the named node's lock), so
                                      the waiter reads them as a pair without it */
  pf_ref mv_ref;
  struct pf_thread *mv_rec;        /* mv_node's record when mv_tab is the private
                                      table (a record lent for it) */
  struct pf_thread *px_rec;        /* the lent record holding `node` (adopted), or NULL */
  struct pf_waiter *px_for;        /* in a lent record's nodes[0]: the waiter its node
                                      was queued for */
  pf_ref lref;                     /* this waiter's own node's reference in the private
                                      table (set at birth): a region slot it queues
                                      names it in `waker` (pf_waiter_of) */
};
static inline struct pf_node *
pf_mv_node(const struct pf_waiter *w)
{
  return (struct pf_node *)AO_load_acquire(&w->mv_node);
}
static inline struct pf_table *
pf_mv_tab(const struct pf_waiter *w)
{
  return (struct pf_table *)AO_load(&w->mv_tab);
}

struct pf_thread {
  struct pf_thread *next;          /* pool links (all records / free list) */
  struct pf_thread *next_free;
  uint32_t index;                  /* in the pool: node references are derived from it */
  volatile unsigned int depth;     /* waits in progress: nodes[0..depth); the owner and
                                      its signal handlers only (volatile: in program order) */
  int ephemeral;                   /* taken after the thread's key destructor ran:
                                      back to the pool when depth returns to 0 */
  struct pf_waiter nodes[PF_NEST_MAX];
  /* A record lent to a futex_waitv for its members' nodes (src/waitv.c):
   * the group's parker node and its reference (a member's waker rings
   * it), the next lent record; NULL for a thread's own record. */
  struct pf_node *vx_lead;
  pf_ref vx_lead_ref;
  int vx_lead_shared;              /* the parker is a region's slot (a waitv mixing
                                      a region's words with private ones): rung with
                                      a shared unpark, at once */
  struct pf_thread *vx_next;
  struct pf_waiter *vx_for;        /* the waitv whose members these nodes are */
  struct pf_table *vx_ptab;        /* lent as a further table's parker (vx_sec):
                                      that table, and its slot's reference */
  pf_ref vx_pref;
  int vx_found_here;               /* (a further table's) its members found woken
                                      at the end (pf_vx_end: rung?) */
};
/* The private table's node space: record r's level l is reference
 * r * PF_NEST_MAX + l + 1.  Records are made in chunks of PF_CHUNK listed
 * in a directory (src/thread.c), so a reference resolves with two loads. */
#define PF_CHUNK_BITS 6
#define PF_CHUNK (1u << PF_CHUNK_BITS)
#define PF_CHUNKS_MAX 1024                  /* 65536 threads waiting at once */
extern struct pf_thread *volatile pf_chunks[PF_CHUNKS_MAX];
static inline struct pf_thread *
pf_thread_rec(pf_ref ref)
{
  uint32_t rec = (ref - 1) / PF_NEST_MAX;
  struct pf_thread *chunk = pf_chunks[(rec >> PF_CHUNK_BITS) & (PF_CHUNKS_MAX - 1)];
  return &chunk[rec & (PF_CHUNK - 1)];
}
static inline struct pf_node *
pf_thread_node(pf_ref ref)
{
  uint32_t i = ref - 1, rec = i / PF_NEST_MAX;
  struct pf_thread *chunk = pf_chunks[(rec >> PF_CHUNK_BITS) & (PF_CHUNKS_MAX - 1)];
  return &chunk[rec & (PF_CHUNK - 1)].nodes[i % PF_NEST_MAX].n;
}

/* Critical sections: every region that holds a bucket lock, and a waker's
 * unparks, run with all signals blocked and cancellation disabled, so a
 * handler (or an asynchronous cancellation) never finds its own thread
 * holding a lock, nor a woken waiter without its token.  Two system calls
 * (the signal mask) per slow-path operation; the fast paths take none.
 * (struct pf_cancel and pf_sig_nonfault, the signals blocked: src/port.h.) */
struct pf_crit {
  sigset_t mask;
  struct pf_cancel cancel;
};
void pf_crit_enter(struct pf_crit *c);
void pf_crit_exit(struct pf_crit *c);

/* The calling thread's record, taking one from the pool (NULL: -ENOMEM).
 * Inside a critical section. */
struct pf_thread *pf_self_get(void);
/* The calling thread's record or NULL, without taking one. */
struct pf_thread *pf_self_peek(void);
/* At the start of every slow path, inside the critical section: waits of
 * this thread that are still in progress are either interrupted by the
 * signal handler making this call (detach them, (G)) or were left by a
 * siglongjmp (repair them).  `frame` is the caller's frame address. */
void pf_self_enter(uintptr_t frame);
/* Around the library's own op calls made for this thread's wait in
 * progress (src/thread.c): a critical section in which pf_self_enter
 * takes no call for a handler's. */
void pf_internal_begin(struct pf_crit *c);
void pf_internal_end(struct pf_crit *c);
static inline void
pf_self_enter_fast(uintptr_t frame)
{
  struct pf_thread *t = pf_self_peek();
  if (PF_UNLIKELY(t && t->depth))
    pf_self_enter(frame);
}
/* Records lent to a futex_waitv for its members (src/waitv.c): from the
 * pool (NULL: none left), and back. */
struct pf_thread *pf_record_lend(void);
void pf_record_return(struct pf_thread *t);
/* A futex_waitv's end by another route (src/waitv.c), critical section
 * held: detach (a handler of its thread calls pfutex: the group parker
 * DETACHED and given its token), or abandon (its members off their queues,
 * every token due collected, the records returned). */
void pf_vx_detach(struct pf_waiter *w);
void pf_vx_abandon(struct pf_waiter *w);
/* End the wait at the top of t (w): back to IDLE, release an ephemeral
 * record. */
void pf_self_pop(struct pf_thread *t, struct pf_waiter *w);
/* Take w off whatever it is on and collect any token due to it; w's wait
 * is over (cancellation, longjmp, thread exit).  Critical section held. */
void pf_waiter_abandon(struct pf_waiter *w);
/* Cross-table requeue (src/requeue.c, wait.c (M)), this process's waiters
 * only.  pf_waiter_of: the waiter whose wait queued node n (reference r)
 * of table tab, as its node or as the node it has yet to adopt; NULL when
 * none of this process's.  pf_waiter_move_locked: make node n2 (ref2) of
 * t2, queued by the caller, w's new destination, giving back the one it
 * had not adopted yet (1: there was one, so the waiter needs no token),
 * under the locks of both buckets.  pf_waiter_adopt: the waiter takes its
 * destination as its node: 1 if a waker took that node first (then WAKING,
 * no token due), 0 when queued and armed, -errno. */
struct pf_waiter *pf_waiter_of(struct pf_table *tab, struct pf_node *n, pf_ref r);
/* The waiter of this process for which node n (reference r) of tab was
 * queued, whether or not it names n (pf_waiter_of does): a node a requeue
 * published for it (wait.c (M)) included.  NULL: another process's. */
struct pf_waiter *pf_waiter_own(struct pf_table *tab, struct pf_node *n, pf_ref r);
int pf_waiter_move_locked(struct pf_waiter *w, struct pf_table *t2, struct pf_node *n2,
                          pf_ref ref2, struct pf_thread *rec2);
int pf_waiter_adopt(struct pf_waiter *w);
/* The destination a requeue published in w->node (of w->tab), MOVED:
 * its table (a wait begun on it when it is a shared table), node,
 * reference and (the private table) record.  0; 1 when out of reach;
 * -errno (wait.c). */
int pf_waiter_dest_published(struct pf_waiter *w, struct pf_table **tp, struct pf_node **np,
                             pf_ref *refp, struct pf_thread **recp);
/* Name (t2, n2) w's destination (NULL, NULL: none), as one pair for a
 * reader without the lock (pf_waiter_adopt); the caller holds the lock
 * of the bucket of the node named before or after. */
void pf_waiter_name_dest(struct pf_waiter *w, struct pf_table *t2, struct pf_node *n2);
void pf_waiter_drop_dest(struct pf_table *tab, struct pf_node *n, struct pf_thread *rec);
int pf_thread_init(void);

/* Would Linux restart an untimed wait after the handler that just ran?
 * (SA_RESTART).  The port cannot say which signal it was: 1 when every
 * handler that could have run (signals not blocked in this thread, fault
 * signals excepted) has SA_RESTART, else 0. */
int pf_sig_restartable(void);

/* ---- Tables (src/table.c) ------------------------------------------------ */
int pf_table_init(void);

/* The node `ref` names in tab, or NULL when it names none (0) or is out of
 * range (corruption: a region's memory is untrusted). */
static inline struct pf_node *
pf_node_get(const struct pf_table *tab, pf_ref ref)
{
  if (PF_LIKELY(tab->slots != NULL)) {
    if (PF_UNLIKELY(ref == 0 || ref > tab->nslots))
      return NULL;
    return &tab->slots[ref - 1];
  }
  return ref ? pf_thread_node(ref) : NULL;
}

/* Inline, like the two below: they are on the fast paths (a mismatched
 * wait, a wake with nobody waiting), where a call costs as much as the work.
 * Multiplicative (Fibonacci) hashing of the key folded to 32 bits, the same
 * on every ABI (a region's table is shared by 32-bit and 64-bit processes). */
static inline uint32_t
pf_key_hash(const struct pf_key *k, uint32_t nbuckets)
{
  uint32_t x = (uint32_t)(k->word >> 2) ^ (uint32_t)(k->word >> 34) ^ (k->space * 0x5bd1e995u);
  x *= 0x9e3779b9u;
  return (uint32_t)(((uint64_t)x * nbuckets) >> 32);   /* the top bits, scaled: no branch */
}

static inline uint32_t
pf_key_bucket(const struct pf_table *tab, const struct pf_key *k)
{
  return pf_key_hash(k, tab->nbuckets);
}

/* Shared key spaces: address ranges [lo, lo + span) whose words are keyed
 * by their offset (address - key_base) in a table of their own.  The
 * region layer registers each open handle's (src/region/handle.c); the
 * engine looks them up inline and lock-free: one load while none is
 * registered, a few per space otherwise.  The array is defined in
 * src/backend.c (every build has regions). */
struct pf_keyspace {
  uintptr_t lo, span, key_base;
  struct pf_table *tab;
};
#define PF_KEYSPACES_MAX 65                 /* 64 regions, and the shared table's */
extern volatile AO_t pf_keyspaces[PF_KEYSPACES_MAX];   /* const struct pf_keyspace *, or 0 */
extern volatile AO_t pf_keyspaces_n;                   /* high-water mark */

/* The key space holding the word [p, p+4), or NULL. */
static inline const struct pf_keyspace *
pf_keyspace_find(const void *p)
{
  AO_t n = AO_load_acquire(&pf_keyspaces_n), i;
  for (i = 0; i < n; i++) {
    const struct pf_keyspace *ks = (const struct pf_keyspace *)AO_load_acquire(&pf_keyspaces[i]);
    if (ks && ks->span >= 4 && (uintptr_t)p - ks->lo <= ks->span - 4)   /* (span < 4: no word) */
      return ks;
  }
  return NULL;
}

/* The front ends' mismatch fast path (pf.h pf_wait_mismatch), for a
 * shared wait: may it answer EAGAIN without the word's key?  Linux makes
 * the key before it reads the word and refuses a read-only private
 * anonymous page (EFAULT); elsewhere the backend decides (pf_emu_wait:
 * the OS's answer).  A region's word always has a key; another must be
 * writable: the touch (an atomic add of 0, no system call) is the write
 * fault the kernel's key makes too, paid only outside regions.  Windows:
 * no touch (its plain add would fault; no shared key is refused there). */
static inline int
pf_emu_mismatch_keyed(uint32_t *uaddr)
{
#ifndef _WIN32
  return pf_keyspace_find(uaddr) != NULL || pf_os_word_touch(uaddr) == 0;
#else
  (void)uaddr;
  return 1;
#endif
}

/* Linux's get_futex_key checks: alignment (EINVAL), then the address
 * range (EFAULT).  A private key never touches memory, so the kernel
 * accepts NULL there; a shared key maps the page, so NULL is EFAULT.  A
 * shared key in a region is (region, offset) in the region's table.  The
 * shared case is out of line (src/table.c), so the private fast paths stay
 * frameless. */
int pf_key_make_shared(uint32_t *uaddr, struct pf_key *k, struct pf_table **tab);
/* A shared-local key of a word in a shared mapping becomes its object's
 * key in the user's shared table (src/table.c, issue 20): 0 or -errno. */
int pf_key_object(const uint32_t *uaddr, struct pf_key *k, struct pf_table **tab);
/* The same for wait, wake, requeue and wake_op, which a port's os_futex
 * can take whole: -PF_EOSFUTEX for a word the OS's own futex keys
 * (src/port.h os_futex; never an errno), then pf_emu_os_futex(op, r). */
#define PF_EOSFUTEX 0x4f53
int pf_key_object_os(const uint32_t *uaddr, struct pf_key *k, struct pf_table **tab);
int pf_emu_os_futex(int op, const struct pf_req *r);
static inline int
pf_key_make(uint32_t *uaddr, unsigned int flags, struct pf_key *k, struct pf_table **tab)
{
  if (flags & PF_F_SHARED)
    return pf_key_make_shared(uaddr, k, tab);
  if (!PF_ALIGNED(uaddr))
    return -EINVAL;
  if (pf_addr_out_of_range(uaddr))
    return -EFAULT;
  k->space = PF_KEY_PRIVATE;
  k->word = (uintptr_t)uaddr;
  *tab = &pf_table;
  return 0;
}

/* Both keys of a requeue or wake_op, with Linux's checks in Linux's order
 * (src/table.c). */
int pf_key_make2(const struct pf_req *r, struct pf_key *k1, struct pf_table **t1, struct pf_key *k2,
                 struct pf_table **t2);
/* ... -PF_EOSFUTEX when both words go to the port's os_futex, -EINVAL when
 * one does (a waiter cannot move between the OS's futex and the engine). */
int pf_key_make2_os(const struct pf_req *r, struct pf_key *k1, struct pf_table **t1,
                    struct pf_key *k2, struct pf_table **t2);

/* Memory is read at uaddr: 0, or -EFAULT where the kernel's read would
 * fail (pf_os_word_read: the first page, the kernel half, and, told by a
 * guarded read, any word a load would take a signal on).  Ops check each
 * word they read here, before any lock, so a bad word answers EFAULT and
 * never faults while the library holds a lock. */
static inline int
pf_word_check(const uint32_t *uaddr)
{
  uint32_t v;
  return pf_os_word_read(uaddr, &v);
}

/* The wake fast path: 1 when nobody can be waiting on key.  (B) in wait.c:
 * a full fence, then a plain load of the count.  The fence is local (a
 * locked op on the stack on x86); the load leaves the bucket's line shared,
 * so wakers of one futex do not bounce it between CPUs. */
static inline int
pf_emu_nobody_waits(const struct pf_table *tab, const struct pf_key *k, uint32_t *idx)
{
  uint32_t i = pf_key_bucket(tab, k);
  *idx = i;
  AO_nop_full();
  return AO_int_load(&tab->buckets[i].waiters) == 0;
}

/* The front ends' wake fast path (src/api.c, src/futex.c): 1 when a wake
 * of uaddr (PF_F_* flags) passes the key checks and finds nobody waiting;
 * 0 when the engine must decide (including every error). */
int pf_emu_wake_idle_shared(uint32_t *uaddr);
static inline int
pf_emu_wake_idle(uint32_t *uaddr, unsigned int flags)
{
  struct pf_key key;
  struct pf_bucket *b;
  if (flags & PF_F_SHARED)
    return pf_emu_wake_idle_shared(uaddr);       /* out of line: no frame here */
  if (!PF_ALIGNED(uaddr) || pf_addr_out_of_range(uaddr))
    return 0;
  key.space = PF_KEY_PRIVATE;
  key.word = (uintptr_t)uaddr;
  b = &pf_table.buckets[pf_key_bucket(&pf_table, &key)];
  AO_nop_full();                                 /* (B) */
  return AO_int_load(&b->waiters) == 0;
}

/* Bucket locks (the pools' spinlocks: src/port.h).  Bucket locks are robust
 * in regions: a locker that finds the holder's process dead takes the lock
 * over and rebuilds the bucket from its slots (the table's ops,
 * src/region/lock.c).  pf_bucket_lock returns 0, or -ENOTRECOVERABLE when
 * the region is corrupt (-ENOMEM: this process has no entry in it). */
int pf_bucket_lock(struct pf_table *tab, uint32_t i);
void pf_bucket_unlock(struct pf_table *tab, uint32_t i);
/* Two buckets, possibly of two tables, in a fixed order (table order, then
 * index); one lock when they are the same. */
int pf_bucket_lock2(struct pf_table *t1, uint32_t i1, struct pf_table *t2, uint32_t i2);
void pf_bucket_unlock2(struct pf_table *t1, uint32_t i1, struct pf_table *t2, uint32_t i2);

/* The one walk of a bucket's queue (its lock held), for every reader of a
 * queue: each node once, head to tail, its reference resolved and
 * bounds-checked (pf_node_get) and its `next` read once, before the caller
 * looks at it, so a link a scribble changes meanwhile is never followed
 * unchecked.  A reference that resolves to nothing, or a walk longer than
 * the table's nodes, ends the walk with it->bad set: corruption, which the
 * bucket's next ready rebuilds. */
struct pf_walk {
  struct pf_table *tab;
  pf_ref next;
  unsigned int budget;
  int bad;
};
static inline void
pf_walk_start(struct pf_walk *it, struct pf_table *tab, const struct pf_bucket *b)
{
  it->tab = tab;
  it->next = b->head;
  it->budget = tab->slots ? tab->nslots + 1 : ~0u;
  it->bad = 0;
}
static inline struct pf_node *
pf_walk_next(struct pf_walk *it, pf_ref *ref)
{
  struct pf_node *n;
  if (!it->next)
    return NULL;
  if (it->budget-- == 0 || (n = pf_node_get(it->tab, it->next)) == NULL) {
    it->bad = 1;
    it->next = 0;
    return NULL;
  }
  *ref = it->next;
  it->next = n->next;
  return n;
}

/* Queue operations; the bucket's lock held.  A region's queue is bounded:
 * a walk longer than its slot count, or a reference out of range, is
 * corruption (-ENOTRECOVERABLE), never a loop. */
void pf_queue_append_locked(struct pf_table *tab, struct pf_bucket *b, struct pf_node *n, pf_ref ref);
void pf_queue_unlink_locked(struct pf_table *tab, struct pf_bucket *b, struct pf_node *n);
/* (E)/(G): under the lock of the bucket w's node is on now, make sure it is
 * off its queue, and if it is still QUEUED set it to `to` (GONE or
 * DETACHED): 1 if it did, 0 if it had left already (woken or detached).
 * `dead`: the wait that owns w is over, so a node it never pushed never
 * will be. */
int pf_waiter_dequeue(struct pf_waiter *w, uint32_t to, int dead);
/* (H): push node ref onto bucket i's incoming stack: one compare-and-swap. */
void pf_bucket_push(struct pf_table *tab, uint32_t i, struct pf_node *n, pf_ref ref);
int pf_bucket_drain_locked(struct pf_table *tab, struct pf_bucket *b);
/* Drain bucket i and, in a region, check its queue (rebuilt from the
 * slots once if it is bad): 0, or -ENOTRECOVERABLE. */
int pf_bucket_ready_locked(struct pf_table *tab, uint32_t i);
/* Unlink n from b's queue and give back its count (A). */
void pf_node_unlink_locked(struct pf_table *tab, struct pf_bucket *b, struct pf_node *n);
/* Give back n's count (A), if it holds one. */
void pf_node_uncount_locked(struct pf_bucket *b, struct pf_node *n);
/* A waker's list of nodes to unpark after unlocking. */
struct pf_wake_list {
  struct pf_table *tab;            /* the table of the nodes (one per list) */
  pf_ref head;
  struct pf_node *tail;
  int n;
};
/* Chain node w (reference r) of tab at the end of l, under its lock. */
static inline void
pf_wake_list_add(struct pf_wake_list *l, struct pf_table *tab, struct pf_node *w, pf_ref r)
{
  w->wake_next = 0;
  if (l->tail)
    l->tail->wake_next = r;
  else
    l->head = r;
  l->tail = w;
  l->tab = tab;
  l->n++;
}
/* Two buckets made ready (drained, checked) once each: one drain when they
 * are the same bucket (wait.c (I)). */
int pf_bucket_ready2_locked(struct pf_table *t1, uint32_t i1, struct pf_table *t2, uint32_t i2);
/* Unlink up to nr waiters matching key and mask, mark them WAKING and chain
 * them (FIFO) onto the list; returns how many, or -EINVAL when it meets a
 * PI waiter of the key (src/pi.c; those before it are on the list).  The caller made bucket i
 * ready once since it took the lock, after its last store to a futex word
 * (wait.c (I)); this never drains.  In a region, a waiter whose
 * process died is reaped instead (ops->reap): it is never counted. */
int pf_queue_wake_locked(struct pf_table *tab, uint32_t i, const struct pf_key *k,
                         uint32_t mask, int nr, struct pf_wake_list *l);
/* Unlink w (reference r, QUEUED, on bucket b's queue), mark it WAKING and
 * chain it onto the list (pf_queue_wake_locked's step for one node). */
/* Ring the parker of futex_waitv member w (reference r) of tab, under its
 * bucket's lock: QUEUED -> WAKING, chained on l for its token (1), or
 * unparked at once (a private member's shared parker), or rung already,
 * or none (0). */
int pf_vx_ring_locked(struct pf_table *tab, struct pf_node *w, pf_ref r, struct pf_wake_list *l);
void pf_node_wake_locked(struct pf_table *tab, struct pf_bucket *b, struct pf_node *w, pf_ref r,
                         struct pf_wake_list *l);
/* After unlocking: unpark each (the token is the last touch). */
void pf_wake_list(struct pf_wake_list *l);

static inline uint32_t
pf_word_load(const uint32_t *uaddr)
{
  return AO_int_load((const volatile unsigned int *)uaddr);
}

void pf_cpu_relax(unsigned int *spins);

/* --enable-sched-points (src/schedpt.h): a lock waiter's spin and a
 * region's slice are scheduling points; without it, nothing.  The crash
 * points (src/crash.h) are scheduling points too. */
#ifndef PF_SCHED_POINTS
# define PF_SCHED_SPIN() ((void)0)
# define PF_SCHED_SLICE(v) ((void)0)
# define PF_SCHED_POLL(v) ((void)0)
# define PF_SCHED_POLLING() 0
#endif

/* The wait's steps (src/wait.c), for the other ops that queue a waiter
 * (src/pi.c): claim this thread's next node for a wait on tab; park it
 * until woken (0), timed out or interrupted, leaving it IDLE; the cleanup
 * handler of a wait in progress. */
int pf_waiter_claim(const struct pf_req *r, struct pf_table *tab, uintptr_t frame,
                    struct pf_thread **tp, struct pf_waiter **wp);
int pf_waiter_sleep(struct pf_waiter *w, const struct pf_deadline *dl, int async);
/* The same, calling poll->fn(poll->arg) every poll->ns (< 1 s) of the
 * sleep while w is queued, outside any lock and critical section (src/pi.c:
 * a PI owner's death). */
struct pf_sleep_poll {
  void (*fn)(void *arg);
  void *arg;
  long ns;
};
int pf_waiter_sleep_poll(struct pf_waiter *w, const struct pf_deadline *dl, int async,
                         const struct pf_sleep_poll *poll);
void pf_wait_cancelled(void *arg);

int pf_emu_wait(const struct pf_req *r);
/* Region waits park in slices (wait.c (R)): how long a waiter whose waker
 * died between WAKING and the token sleeps before it notices.  The end of
 * a slice of ns (< 1 s) from now or the deadline dl (NULL: none),
 * whichever is first (*last: the deadline). */
#define PF_REGION_SLICE_NS 1000000000L
void pf_slice_ns(const struct pf_deadline *dl, long ns, struct pf_deadline *out, int *last);
/* One park of w (the port's; in slices for a region: wait.c (R)). */
int pf_waiter_park(struct pf_waiter *w, const struct pf_deadline *dl, int async);
/* futex_waitv under emulation (src/waitv.c), raw arguments; the members
 * found woken so far, in all (tests). */
extern volatile AO_t pf_vx_woken_total;
/* ... and waits that ended with a member found woken whose parker no
 * waker had rung (the protocol's invariant: every waker that marks a
 * member woken rings its parker under the member's lock; broken only by
 * a waker that died between the two, in a region, or by a move's
 * re-arming (M)).  Tests where nobody dies and nothing moves require 0:
 * a lost ring, told apart from a late one by a count, not by time. */
extern volatile AO_t pf_vx_unrung_total;
/* Waiters moved across tables so far (src/requeue.c), named in their
 * records and published in their nodes (tests: which path ran); and moved
 * waits of this process that found their destination out of reach and
 * ended as spurious wakeups (wait.c (M): only when a requeuer died or the
 * table was closed; tests check it stays 0 otherwise). */
extern volatile AO_t pf_xmove_named_total, pf_xmove_pub_total, pf_xmove_unreachable_total;
/* futex_waitv members followed to the node a move queued for them, in all
 * (src/waitv.c (M); tests/storm reports them) */
extern volatile AO_t pf_vx_followed_total;
/* ... and waitvs rung by a move that a handler's pfutex call ended
 * (vx_intr; tests/storm reports them) */
extern volatile AO_t pf_vx_intr_total;
long pf_emu_waitv(struct pfutex_waitv *w, unsigned int nr, unsigned int flags,
                  const struct timespec *timeout, int clockid);
int pf_emu_wake(const struct pf_req *r);
int pf_emu_requeue(const struct pf_req *r);
int pf_emu_wake_op(const struct pf_req *r);
/* The PI ops (src/pi.c): cmd is PF_OP_LOCK_PI, LOCK_PI2, TRYLOCK_PI,
 * UNLOCK_PI, WAIT_REQUEUE_PI or CMP_REQUEUE_PI; r decoded (the deadline
 * read and checked). */
int pf_emu_pi(const struct pf_req *r, int cmd);
/* A robust PI word's owner tid is exiting (src/robust.c): hand the lock to
 * the first queued PI locker, FUTEX_OWNER_DIED set.  0, or -errno. */
int pf_emu_pi_owner_died(uint32_t *uaddr, uint32_t tid);
/* set_robust_list(2) and get_robust_list(2) under emulation, and the walk
 * at thread exit (src/robust.c). */
long pf_emu_robust_set(struct robust_list_head *head, size_t len);
/* One word of a robust list whose owner tid died (the kernel's
 * handle_futex_death): FUTEX_OWNER_DIED and one waiter woken, a PI word
 * handed on; pending: the list's list_op_pending.  0, or -1 to end the
 * walk (a bad address).  Also for a dead process's list in a region
 * (src/region/robust.c). */
int pf_robust_word_died(uint32_t *uaddr, uint32_t tid, int pi, int pending);
/* Where a list owner's pointers land in this process: its key base and
 * pointer size, and the range they must fall in with the key base here
 * (a region's handle; the identity view for this process's own list). */
struct pf_robust_view {
  uint64_t dead_base;
  uint32_t psize;                  /* 4 or 8 */
  uintptr_t lo, span, key_base;
};
/* The walk of a list whose head is at the owner's address `head`: every
 * pointer translated and checked to lie in the view before it is read. */
void pf_robust_walk_view(const struct pf_robust_view *v, uint64_t head, uint32_t tid);
long pf_emu_robust_get(int pid, struct robust_list_head **head, size_t *len);

#endif
