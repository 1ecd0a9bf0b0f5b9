/* emu.h - the emulation engine: waitqueue table, waiter nodes, park ports.
 * Private to src/ and ports/; nothing here is OS-specific. */
#ifndef PF_EMU_H
#define PF_EMU_H

#include "pf.h"

#include <signal.h>

/* ---- The park port: the only thing an OS supplies ---------------------- */
/* A port parks and unparks exactly one waiter; it knows nothing of futex
 * semantics.  Each waiter node embeds one parker, kept with the node for
 * the life of the process (nodes live in per-thread records, src/thread.c).
 * Contract:
 *   prepare(p)   before the node is queued, with signals blocked: arm p for
 *                one park/unpark pair, setting up the port's resources for
 *                p the first time (0, or -ENOMEM when they are exhausted).
 *   park(p, dl)  sleep until unparked (0: the token is consumed), until the
 *                absolute deadline dl passes (-ETIMEDOUT; NULL: none), or a
 *                signal handler ran (-EINTR).  A port never restarts its
 *                sleep after a handler: the engine decides, re-checking the
 *                futex word as Linux's restart does (wait.c (F)).  It may
 *                return -EINTR spuriously; never 0 without a token.  Not a
 *                cancellation point (futex(2) is not one), but interruptible
 *                by asynchronous cancellation.
 *   unpark(p)    give p its token; called at most once per prepare.  Giving
 *                the token must be the port's last access to *p.
 *   collect(p)   the token is given or on its way: make sure it is taken,
 *                even if a park already took it and was then cut short (an
 *                asynchronous cancellation or a siglongjmp can strike right
 *                after the OS handed the token over, before the park could
 *                record it).  Returns once the token is consumed. */
struct pf_parker {
  unsigned int word;     /* 0 armed, 1 token given (futex port: the futex word;
                            sysv: release/acquire pair around the semaphore) */
  int id;                /* sysv port: semaphore set id */
  int num;               /* sysv port: semaphore number in the set */
  unsigned int gen;      /* sysv port: the port generation p was set up in (0: never) */
  int cnt, cnt_next;     /* sysv port: its consumption counter before and after
                            the pending park (see ports/sysv/park.c) */
};

struct pf_port {
  const char *name;      /* "futex", "sysv": the backend is "emu:" name */
  /* The port's generation: a parker whose gen differs needs set-up, which
   * prepare may do under a lock (the engine then calls it with signals
   * blocked); otherwise prepare only arms the parker, lock-free. */
  const unsigned int *gen;
  int (*init)(void);     /* once per process; 0 or -errno */
  int (*prepare)(struct pf_parker *p);
  int (*park)(struct pf_parker *p, const struct pf_deadline *dl);
  void (*unpark)(struct pf_parker *p);
  void (*collect)(struct pf_parker *p);
};

extern const struct pf_port pf_port_futex;
extern const struct pf_port pf_port_sysv;
extern const struct pf_port *pf_emu_port;   /* the active port, set once at init */

/* ---- Keys -------------------------------------------------------------- */
/* A private futex is keyed by its address.  A shared one outside any
 * shared region is keyed by its address too, in a key space of its own: a
 * FUTEX_PRIVATE_FLAG waiter is not woken by a shared wake of the same word,
 * as on Linux.  (Shared regions will key by region and offset.) */
enum { PF_KEY_PRIVATE = 0, PF_KEY_SHARED_LOCAL = 1 };
struct pf_key {
  uintptr_t word;
  uintptr_t space;
};

static inline int
pf_key_eq(const struct pf_key *a, const struct pf_key *b)
{
  return a->word == b->word && a->space == b->space;
}

/* ---- Waiter nodes ------------------------------------------------------ */
/* state transitions (the only ones):
 *   IDLE -> QUEUED     the waiter, under the bucket lock, as it queues
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
 * A node leaves IDLE only in its own thread's wait, so no queue ever holds
 * a node whose wait is over, and no waker touches one. */
enum { PF_W_IDLE = 0, PF_W_QUEUED, PF_W_WAKING, PF_W_DETACHED, PF_W_GONE };

struct pf_waiter {
  struct pf_waiter *next, *prev;   /* bucket queue links; bucket lock */
  struct pf_waiter *in_next;       /* the bucket's incoming stack (wait.c (H)) */
  int linked;                      /* on the bucket's queue; bucket lock */
  int counted;                     /* holds one of waiters(B) (A); the owner before
                                      it pushes, then the bucket lock */
  struct pf_key key;               /* bucket lock (requeue rewrites it) */
  uint32_t bitset;                 /* set before queueing, then read-only */
  AO_t bucket;                     /* index of the bucket whose queue holds the node;
                                      written under that bucket's lock (requeue: both) */
  AO_t state;                      /* PF_W_*, see the transition table */
  struct pf_waiter *wake_next;     /* the waker's private list once unlinked */
  volatile uintptr_t frame;        /* the owning wait's stack frame (thread.c); volatile:
                                      a handler of the owner reads it (wait.c (H)) */
  struct pf_parker park;           /* the port's */
};

/* ---- Threads (src/thread.c) -------------------------------------------- */
/* Each thread that waits owns a record holding its waiter nodes, one per
 * nesting level (a wait inside a signal handler that interrupted a wait),
 * so a node never lives on a stack a longjmp or a cancellation may free.
 * Records come from a pool (mmap'd, never returned to the system) and are
 * recycled with their parkers when their thread is gone. */
#define PF_NEST_MAX 8
struct pf_thread {
  struct pf_thread *next;          /* pool links (all records / free list) */
  struct pf_thread *next_free;
  volatile unsigned int depth;     /* waits in progress: nodes[0..depth); the owner and
                                      its signal handlers only (volatile: in program order) */
  int ephemeral;                   /* taken after the thread's key destructor ran:
                                      back to the pool when depth returns to 0 */
  struct pf_waiter nodes[PF_NEST_MAX];
};

/* Critical sections: every region that holds a bucket lock, and a waker's
 * unparks, run with all signals blocked and cancellation disabled, so a
 * handler (or an asynchronous cancellation) never finds its own thread
 * holding a lock, nor a woken waiter without its token.  Two system calls
 * (the signal mask) per slow-path operation; the fast paths take none. */
struct pf_cancel {
  int state, type;
};
/* Cancellation off, and back as it was: if it was enabled and asynchronous
 * and a cancellation came meanwhile, it acts in pf_cancel_restore, through
 * pthread_testcancel (glibc 2.36 acts inside pthread_setcancelstate too,
 * but then pthread_join reports NULL instead of PTHREAD_CANCELED). */
void pf_cancel_off(struct pf_cancel *c);
void pf_cancel_restore(const struct pf_cancel *c);

struct pf_crit {
  sigset_t mask;
  struct pf_cancel cancel;
};
/* Every signal but the synchronous faults (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGTRAP, SIGSYS): a fault raised while they are blocked kills the process
 * instead of reaching its handler, and a fault's handler runs on the
 * faulting thread, never on one asleep.  Set by pf_thread_init. */
extern sigset_t pf_sig_nonfault;
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
static inline void
pf_self_enter_fast(uintptr_t frame)
{
  struct pf_thread *t = pf_self_peek();
  if (PF_UNLIKELY(t && t->depth))
    pf_self_enter(frame);
}
/* End the wait at the top of t (w): back to IDLE, release an ephemeral
 * record. */
void pf_self_pop(struct pf_thread *t, struct pf_waiter *w);
/* Take w off whatever it is on and collect any token due to it; w's wait
 * is over (cancellation, longjmp, thread exit).  Critical section held. */
void pf_waiter_abandon(struct pf_waiter *w);
int pf_thread_init(void);

/* Would Linux restart an untimed wait after the handler that just ran?
 * (SA_RESTART).  The port cannot say which signal it was: 1 when every
 * handler that could have run (signals not blocked in this thread, fault
 * signals excepted) has SA_RESTART, else 0. */
int pf_sig_restartable(void);
/* Could any handler have run?  0 when no unblocked signal has one: an EINTR
 * then came from a stop (SIGSTOP/SIGCONT, ptrace), after which Linux
 * resumes even a timed futex wait. */
int pf_sig_handler_possible(void);

/* ---- Buckets and the table --------------------------------------------- */
#define PF_CACHELINE 64
struct pf_bucket {
  AO_t lock;                       /* 0 free, 1 held */
  AO_t incoming;                   /* waiters pushed without the lock, newest first
                                      (struct pf_waiter *); drained onto the queue
                                      by every lock holder before it looks (H) */
  AO_t waiters;                    /* nodes queued here plus waiters past barrier (A)
                                      that have not queued yet: see wait.c */
  struct pf_waiter *head, *tail;   /* FIFO queue; lock */
} __attribute__((aligned(PF_CACHELINE)));

struct pf_table {
  struct pf_bucket *buckets;
  uintptr_t nbuckets;              /* a power of two: 256 per CPU, like Linux */
  unsigned int shift;              /* for the multiplicative hash */
};
extern struct pf_table pf_table;

int pf_table_init(void);

/* Inline, like the two below: they are on the fast paths (a mismatched
 * wait, a wake with nobody waiting), where a call costs as much as the work.
 * Multiplicative (Fibonacci) hashing of the word, salted by the key space;
 * the table has at least 256 buckets, so the shift is below the word size. */
static inline uintptr_t
pf_key_bucket(const struct pf_key *k)
{
#if SIZEOF_VOID_P == 8
  const uintptr_t golden = (uintptr_t)0x9e3779b97f4a7c15ull;
#else
  const uintptr_t golden = (uintptr_t)0x9e3779b9u;
#endif
  uintptr_t h = ((k->word >> 2) ^ (k->space * 0x5bd1e995u)) * golden;
  PF_ASSERT(pf_table.shift < sizeof(uintptr_t) * 8);
  return h >> pf_table.shift;
}

/* Linux's get_futex_key checks: alignment (EINVAL), then the address
 * range (EFAULT).  A private key never touches memory, so the kernel
 * accepts NULL there; a shared key maps the page, so NULL is EFAULT. */
static inline int
pf_key_make(uint32_t *uaddr, unsigned int flags, struct pf_key *k)
{
  if (!PF_ALIGNED(uaddr))
    return -EINVAL;
  if (flags & PF_F_SHARED) {
    if (pf_addr_unreadable(uaddr))
      return -EFAULT;
    k->space = PF_KEY_SHARED_LOCAL;
  } else {
    if (pf_addr_out_of_range(uaddr))
      return -EFAULT;
    k->space = PF_KEY_PRIVATE;
  }
  k->word = (uintptr_t)uaddr;
  return 0;
}

/* Memory is read at uaddr: the first page and the kernel half are EFAULT. */
static inline int
pf_word_check(const uint32_t *uaddr)
{
  return pf_addr_unreadable(uaddr) ? -EFAULT : 0;
}

/* The wake fast path: 1 when nobody can be waiting on key.  (B) in wait.c:
 * a full fence, then a plain load of the count.  The fence is local (a
 * locked op on the stack on x86); the load leaves the bucket's line shared,
 * so wakers of one futex do not bounce it between CPUs. */
static inline int
pf_emu_nobody_waits(const struct pf_key *k, struct pf_bucket **bp)
{
  struct pf_bucket *b = &pf_table.buckets[pf_key_bucket(k)];
  *bp = b;
  AO_nop_full();
  return AO_load(&b->waiters) == 0;
}

/* The front ends' wake fast path (src/api.c, src/futex.c): 1 when a wake
 * of uaddr (PF_F_* flags) passes the key checks and finds nobody waiting;
 * 0 when the engine must decide (including every error). */
static inline int
pf_emu_wake_idle(uint32_t *uaddr, unsigned int flags)
{
  struct pf_key key;
  struct pf_bucket *b;
  return pf_key_make(uaddr, flags, &key) == 0 && pf_emu_nobody_waits(&key, &b);
}

/* Test-and-test-and-set spinlocks that yield the CPU when the holder seems
 * preempted: the bucket locks, and the engine's and ports' small pools
 * (taken only inside a critical section, so a handler never meets one held). */
void pf_spin_lock(AO_t *l);
void pf_spin_unlock(AO_t *l);
void pf_bucket_lock(struct pf_bucket *b);
void pf_bucket_unlock(struct pf_bucket *b);
void pf_bucket_lock2(uintptr_t i1, uintptr_t i2);
void pf_bucket_unlock2(uintptr_t i1, uintptr_t i2);

void pf_queue_append_locked(struct pf_bucket *b, struct pf_waiter *w);
void pf_queue_unlink_locked(struct pf_bucket *b, struct pf_waiter *w);
/* (E)/(G): under the lock of the bucket w is on now, make sure w is off its
 * queue, and if w is still QUEUED set it to `to` (GONE or DETACHED): 1 if
 * it did, 0 if w had left already (woken or detached).  `dead`: the wait
 * that owns w is over, so a node it never pushed never will be. */
int pf_waiter_dequeue(struct pf_waiter *w, AO_t to, int dead);
/* (H): push w onto b's incoming stack: one compare-and-swap. */
void pf_bucket_push(struct pf_bucket *b, struct pf_waiter *w);
void pf_bucket_drain_locked(struct pf_bucket *b);
/* Unlink w from b's queue and give back its count (A). */
void pf_waiter_unlink_locked(struct pf_bucket *b, struct pf_waiter *w);
/* Unlink up to nr waiters matching key and mask, mark them WAKING and chain
 * them (FIFO) onto *list; returns how many. */
int pf_queue_wake_locked(struct pf_bucket *b, const struct pf_key *k, uint32_t mask, int nr,
                         struct pf_waiter ***tailp);
/* After unlocking: unpark each (the token is the last touch). */
void pf_wake_list(struct pf_waiter *list);

static inline uint32_t
pf_word_load(const uint32_t *uaddr)
{
  return AO_int_load((const volatile unsigned int *)uaddr);
}

void pf_cpu_relax(unsigned int *spins);

int pf_emu_wait(const struct pf_req *r);
int pf_emu_wake(const struct pf_req *r);
int pf_emu_requeue(const struct pf_req *r);
int pf_emu_wake_op(const struct pf_req *r);

#endif
