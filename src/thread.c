/* thread.c - per-thread records, critical sections, and what happens to a
 * wait when its thread goes away by a route other than returning.
 *
 * Why records, not stack nodes.  A waiter's node used to live in its wait's
 * stack frame.  A siglongjmp out of a handler, an asynchronous cancellation
 * or pthread_exit can end that frame with the node still queued, and a later
 * wake would write into reused stack.  Nodes now live in a record owned by
 * the thread (one node per nesting level: a wait inside a handler that
 * interrupted a wait), so a node is always valid memory; its wait's frame
 * address is kept beside it, which tells a later call of the same thread
 * whether that wait is still in progress below it (a handler interrupted
 * it) or was abandoned (a longjmp went past it).
 *
 * How each route out of a wait is handled (one mechanism each):
 *   - cancellation and pthread_exit: a cleanup handler around the wait
 *     (pthread_cleanup_push; with -fexceptions it runs during the forced
 *     unwind) abandons the node: off its queue, token collected;
 *   - siglongjmp: the next slow-path call of the thread (pf_self_enter)
 *     finds a wait whose frame is gone and abandons it; until then the node
 *     stays queued in memory nobody else uses (a wake may count it once);
 *   - thread exit: the record's key destructor abandons what is left and
 *     returns the record to the pool; a later destructor of the same thread
 *     that waits takes an ephemeral record for the length of that wait;
 *   - fork: the child's pool keeps only the forking thread's record.
 *
 * Records are never returned to the system (dlclose cannot unload the
 * library: it is linked -z nodelete) and never freed while their thread may
 * still use them.
 */
#include "emu.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__GNUC__)
# define PF_TLS __thread __attribute__((tls_model("initial-exec")))
#else
# define PF_TLS __thread
#endif

static PF_TLS struct pf_thread *pf_self;    /* this thread's record, or NULL */
static PF_TLS int pf_self_exited;           /* its key destructor has run */
static PF_TLS unsigned int pf_self_internal; /* >0: the library calls itself (pf_internal_begin) */

static pthread_key_t pf_thread_key;
sigset_t pf_sig_nonfault;                   /* port.h */

/* The pool.  pf_pool_lock is a spinlock taken only inside a critical
 * section (signals blocked), so a handler never meets it held. */
static AO_t pf_pool_lock;
static struct pf_thread *pf_pool_all;       /* every record ever made; pf_pool_lock */
static struct pf_thread *pf_pool_free;      /* pf_pool_lock */

/* ---- Critical sections --------------------------------------------------- */

void
pf_cancel_off(struct pf_cancel *c)
{
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &c->state);
  pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &c->type);
}

void
pf_cancel_restore(const struct pf_cancel *c)
{
  pthread_setcancelstate(c->state, NULL);     /* deferred for now: never acts here */
  if (c->state == PTHREAD_CANCEL_ENABLE && c->type == PTHREAD_CANCEL_ASYNCHRONOUS) {
    pthread_testcancel();
    pthread_setcanceltype(PTHREAD_CANCEL_ASYNCHRONOUS, NULL);
  }
}

void
pf_crit_enter(struct pf_crit *c)
{
  /* Cancellation off first: with asynchronous cancellation enabled only
   * pthread_setcancelstate/type are safe to call (POSIX), and a
   * cancellation that struck inside pthread_sigmask (an interceptor of a
   * sanitizer's, say) could leave a lock of its held. */
  pf_cancel_off(&c->cancel);
  pthread_sigmask(SIG_BLOCK, &pf_sig_nonfault, &c->mask);
}

void
pf_crit_exit(struct pf_crit *c)
{
  pthread_sigmask(SIG_SETMASK, &c->mask, NULL);
  /* With asynchronous cancellation pending this acts now: every lock is
   * released and the waits' cleanup handlers are in place. */
  pf_cancel_restore(&c->cancel);
}

/* ---- The pool ------------------------------------------------------------ */
/* Records are made in chunks of PF_CHUNK (mmap: async-signal-safe, unlike
 * malloc; never unmapped) listed in a directory (emu.h, pf_thread_node). */
struct pf_thread *volatile pf_chunks[PF_CHUNKS_MAX];
static unsigned int pf_nchunks;             /* pf_pool_lock */

static int
pf_pool_grow_locked(void)
{
  struct pf_thread *chunk;
  unsigned int i;
  if (pf_nchunks == PF_CHUNKS_MAX)
    return -ENOMEM;
  chunk = mmap(NULL, PF_CHUNK * sizeof *chunk, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (chunk == MAP_FAILED)
    return -ENOMEM;
  for (i = 0; i < PF_CHUNK; i++) {
    unsigned int l;
    /* A waiter's node is valid from birth (its own), so whoever sees its
     * table set (a handler, a cancellation, the key destructor) finds a
     * node to read: wait.c's fast claim stores the table alone. */
    for (l = 0; l < PF_NEST_MAX; l++) {
      chunk[i].nodes[l].node = &chunk[i].nodes[l].n;
      chunk[i].nodes[l].lref = (pf_nchunks * PF_CHUNK + i) * PF_NEST_MAX + l + 1;
    }
    chunk[i].index = pf_nchunks * PF_CHUNK + i;
    chunk[i].next = pf_pool_all;
    pf_pool_all = &chunk[i];
    chunk[i].next_free = pf_pool_free;
    pf_pool_free = &chunk[i];
  }
  /* published with release: a reader that loads it with acquire
   * (pf_parker_any, from any thread) sees the records made */
  AO_store_release((volatile AO_t *)(void *)&pf_chunks[pf_nchunks], (AO_t)(uintptr_t)chunk);
  pf_nchunks++;                             /* (not in the macro's argument: it may be read twice) */
  return 0;
}

static struct pf_thread *
pf_pool_take(void)
{
  struct pf_thread *t = NULL;
  pf_spin_lock(&pf_pool_lock);
  if (pf_pool_free || pf_pool_grow_locked() == 0) {
    t = pf_pool_free;
    pf_pool_free = t->next_free;
  }
  pf_spin_unlock(&pf_pool_lock);
  if (t) {
    unsigned int l;
    t->depth = 0;
    t->ephemeral = 0;
    for (l = 0; l < PF_NEST_MAX; l++)
      AO_store(&t->nodes[l].parker.parked, 0);   /* a park its last thread left unwound */
  }
  return t;
}

static void
pf_pool_give(struct pf_thread *t)
{
  pf_spin_lock(&pf_pool_lock);
  t->next_free = pf_pool_free;
  pf_pool_free = t;
  pf_spin_unlock(&pf_pool_lock);
}

struct pf_thread *
pf_record_lend(void)
{
  struct pf_thread *t = pf_pool_take();
  if (t) {
    t->nodes[0].px_for = NULL;
    t->vx_lead = NULL;
    t->vx_lead_shared = 0;
    t->vx_next = NULL;
    t->vx_for = NULL;
    t->vx_ptab = NULL;
    t->vx_pref = 0;
  }
  return t;
}

void
pf_record_return(struct pf_thread *t)
{
  t->vx_lead = NULL;
  t->vx_lead_shared = 0;
  t->vx_next = NULL;
  t->vx_ptab = NULL;
  t->vx_pref = 0;
  pf_pool_give(t);
}

struct pf_thread *
pf_self_peek(void)
{
  return pf_self;
}

struct pf_thread *
pf_self_get(void)
{
  struct pf_thread *t = pf_self;
  if (PF_LIKELY(t != NULL))
    return t;
  if ((t = pf_pool_take()) == NULL)
    return NULL;
  if (pf_self_exited || pthread_setspecific(pf_thread_key, t) != 0)
    t->ephemeral = 1;   /* after the key destructor: for this wait only */
  pf_self = t;
  return t;
}

/* src/port.h: the parkers of every record, for a port's test hooks.  The
 * directory only grows (pf_pool_grow_locked publishes a chunk after its
 * records are made). */
int
pf_parker_any(int (*pred)(const struct pf_parker *p, void *arg), void *arg)
{
  unsigned int c, r, l;
  for (c = 0; c < PF_CHUNKS_MAX; c++) {
    struct pf_thread *chunk
        = (struct pf_thread *)(uintptr_t)AO_load_acquire((volatile AO_t *)(void *)&pf_chunks[c]);
    if (!chunk)
      break;
    for (r = 0; r < PF_CHUNK; r++)
      for (l = 0; l < PF_NEST_MAX; l++)
        if (pred(&chunk[r].nodes[l].parker, arg))
          return 1;
  }
  return 0;
}

static int
pf_parked_by(const struct pf_parker *p, void *arg)
{
  return AO_load(&p->parked) == *(const AO_t *)arg;
}

/* src/port.h */
int
pf_thread_parked(uintptr_t thr)
{
  AO_t a = (AO_t)thr;
  return a != 0 && pf_parker_any(pf_parked_by, &a);
}

/* ---- Waits that end by another route ------------------------------------- */

/* A node of a cross-table requeue's that is no wait's any more (wait.c
 * (M)): off every queue, its token (if any) taken.  A region's slot goes
 * back with its wait; a lent record goes back to the pool; a waiter's own
 * node is only made IDLE. */
void
pf_waiter_drop_dest(struct pf_table *tab, struct pf_node *n, struct pf_thread *rec)
{
  if (tab->slots) {
    if (tab->ops->slot_mine(tab, n))
      AO_int_store(&n->state, PF_W_IDLE);
    tab->ops->slot_release(tab, n);
    tab->ops->wait_end(tab);
    return;
  }
  AO_int_store(&n->state, PF_W_IDLE);
  if (rec) {
    rec->nodes[0].px_for = NULL;
    pf_record_return(rec);
  }
}

/* The wait of w is over: give back its region slot, or the record lent for
 * the node a cross-table requeue gave it. */
static void
pf_waiter_release(struct pf_waiter *w)
{
  struct pf_table *tab = w->tab;
  if (tab && (tab->slots || w->px_rec))
    pf_waiter_drop_dest(tab, w->node, w->px_rec);
  w->px_rec = NULL;
  w->tab = NULL;
  w->node = &w->n;
}

/* Is w's wait the one that queued n of tab, as its node or as the node it
 * has yet to adopt?  (Under the lock of n's bucket, n QUEUED: w wrote
 * those fields before n was pushed, or a requeuer did under this lock.) */
static int
pf_waiter_holds(const struct pf_waiter *w, const struct pf_table *tab, const struct pf_node *n)
{
  return (w->node == n && w->tab == tab) || (pf_mv_node(w) == n && pf_mv_tab(w) == tab);
}

void
pf_waiter_name_dest(struct pf_waiter *w, struct pf_table *t2, struct pf_node *n2)
{
  AO_t g = AO_load(&w->mv_gen);
  AO_store(&w->mv_gen, g + 1);
  AO_nop_full();
  AO_store(&w->mv_tab, (AO_t)t2);
  AO_store(&w->mv_node, (AO_t)n2);
  AO_store_release(&w->mv_gen, g + 2);
}

struct pf_waiter *
pf_waiter_of(struct pf_table *tab, struct pf_node *n, pf_ref r)
{
  struct pf_waiter *w = pf_waiter_own(tab, n, r);
  return w && pf_waiter_holds(w, tab, n) ? w : NULL;
}

struct pf_waiter *
pf_waiter_own(struct pf_table *tab, struct pf_node *n, pf_ref r)
{
  struct pf_waiter *w;
  uint32_t rec;
  if (tab->slots) {
    if (AO_int_load(&n->owner) != tab->ops->lock_id(tab))
      return NULL;
    r = n->waker;                         /* region bytes: checked */
  }
  rec = (r - 1) / PF_NEST_MAX;
  if (r == 0 || (rec >> PF_CHUNK_BITS) >= PF_CHUNKS_MAX || !pf_chunks[rec >> PF_CHUNK_BITS])
    return NULL;
  w = &pf_thread_rec(r)->nodes[(r - 1) % PF_NEST_MAX];
  if (tab->slots)
    return w->lref == r ? w : NULL;
  if (&w->n != n)
    return NULL;
  return w->px_for ? w->px_for : w;       /* a lent record's node: queued for it */
}

int
pf_waiter_move_locked(struct pf_waiter *w, struct pf_table *t2, struct pf_node *n2, pf_ref ref2,
                      struct pf_thread *rec2)
{
  struct pf_table *ot = pf_mv_tab(w);
  struct pf_node *on = pf_mv_node(w);
  struct pf_thread *orec = w->mv_rec;
  if (rec2)
    rec2->nodes[0].px_for = w;
  pf_waiter_name_dest(w, t2, n2);
  w->mv_ref = ref2;
  w->mv_rec = rec2;
  if (!on)
    return 0;
  pf_waiter_drop_dest(ot, on, orec);      /* never adopted: the waiter never touched it */
  return 1;
}

void
pf_waiter_abandon(struct pf_waiter *w)
{
  struct pf_node *n;
  uint32_t st;
  AO_store(&w->parker.parked, 0);         /* a park left by siglongjmp or cancellation */
  if (!w->tab)
    return;
  if (PF_UNLIKELY(w->vx_n != 0)) {
    pf_vx_abandon(w);                     /* a futex_waitv (src/waitv.c) */
    return;
  }
  for (;;) {
    n = w->node;
    st = AO_int_load(&n->state);
    if (st != PF_W_IDLE && pf_waiter_dequeue(w, PF_W_GONE, 1))
      st = PF_W_GONE;
    else
      st = AO_int_load(&n->state);
    if (st == PF_W_WAKING || st == PF_W_DETACHED || st == PF_W_MOVED) {
      /* The token is given (DETACHED) or on its way (WAKING, MOVED): take
       * it, so the parker starts its next wait empty and no waker touches
       * w later. */
      pf_emu_port->collect(&w->parker, &n->park, w->tab->slots != NULL);
    }
    /* moved to another table (wait.c (M)): take the node queued there for
     * us, and off its queue too (a waker that took it first gave no token) */
    if (st != PF_W_MOVED || pf_waiter_adopt(w) != 0)
      break;
  }
  n = w->node;
  if (!w->tab->slots || w->tab->ops->slot_mine(w->tab, n))
    AO_int_store(&n->state, PF_W_IDLE);
  pf_waiter_release(w);
}

void
pf_self_pop(struct pf_thread *t, struct pf_waiter *w)
{
  unsigned int idx = (unsigned int)(w - t->nodes);
  PF_ASSERT(idx < t->depth);
  if (PF_UNLIKELY(t->depth != idx + 1)) {
    /* Waits above ours were started by a handler that interrupted ours and
     * left them by a siglongjmp inside the handler: their frames are gone. */
    struct pf_crit c;
    pf_crit_enter(&c);
    while (t->depth > idx + 1) {
      pf_waiter_abandon(&t->nodes[t->depth - 1]);
      t->depth--;
    }
    pf_crit_exit(&c);
  }
  if (PF_LIKELY(w->tab == &pf_table)) {
    AO_int_store(&w->node->state, PF_W_IDLE);
    if (PF_UNLIKELY(w->px_rec != NULL)) {
      struct pf_crit c;                   /* the pool's lock: not under a handler */
      pf_crit_enter(&c);
      pf_waiter_release(w);
      pf_crit_exit(&c);
    }
  } else if (w->tab) {
    if (w->tab->ops->slot_mine(w->tab, w->node))
      AO_int_store(&w->node->state, PF_W_IDLE);
    pf_waiter_release(w);
  }
  t->depth = idx;
  if (idx == 0 && t->ephemeral) {
    struct pf_crit c;
    pf_crit_enter(&c);
    if (pf_self == t && t->depth == 0) {
      pf_self = NULL;
      pf_pool_give(t);
    }
    pf_crit_exit(&c);
  }
}

/* Is the wait whose frame is `wframe` still in progress below the caller at
 * `frame`?  Stacks grow down on every target: a live outer wait's frame is
 * above ours, unless this call runs on the alternate signal stack and the
 * wait did not. */
static int
pf_frame_live(uintptr_t wframe, uintptr_t frame)
{
  stack_t ss;
  if (frame < wframe)
    return 1;
  if (sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK)) {
    uintptr_t lo = (uintptr_t)ss.ss_sp, hi = lo + ss.ss_size;
    return !(wframe >= lo && wframe < hi);
  }
  return 0;
}

/* The library's own call of an op on behalf of this thread's wait in
 * progress (a dead process's robust list walked from the wait's slice,
 * src/robust.c), signals blocked: not a handler's nested call, so
 * pf_self_enter leaves the wait alone.  A wake it makes of the wait's
 * own word wakes the wait, as the kernel's walk at the owner's exit
 * would (issue 32: it ended the wait with EINTR or EAGAIN). */
void
pf_internal_begin(struct pf_crit *c)
{
  pf_crit_enter(c);
  pf_self_internal++;
}

void
pf_internal_end(struct pf_crit *c)
{
  pf_self_internal--;
  pf_crit_exit(c);
}

void
pf_self_enter(uintptr_t frame)
{
  struct pf_thread *t = pf_self;
  if (pf_self_internal)
    return;                                 /* (the library's own call: above) */
  while (t && t->depth > 0) {
    struct pf_waiter *w = &t->nodes[t->depth - 1];
    if (pf_frame_live(w->frame, frame)) {
      /* (G): a handler of this thread interrupted that wait and now calls
       * pfutex: the kernel would have taken the waiter off its queue before
       * running the handler.  Take it off and give it its token, so its
       * park ends at once; it then restarts or fails with EINTR.  The waits
       * below it were detached when it started. */
      if (PF_UNLIKELY(w->vx_n != 0))
        pf_vx_detach(w);                  /* a futex_waitv (src/waitv.c) */
      else if (w->tab && pf_waiter_dequeue(w, PF_W_DETACHED, 0))
        pf_emu_port->unpark(&w->node->park, w->tab->slots != NULL);
      return;
    }
    /* A siglongjmp went past that wait: end it here. */
    pf_waiter_abandon(w);
    t->depth--;
  }
}

/* The key destructor: the thread is exiting. */
static void
pf_thread_exit(void *arg)
{
  struct pf_thread *t = arg;
  struct pf_crit c;
  pf_crit_enter(&c);
  if (t == pf_self) {
    while (t->depth > 0) {
      pf_waiter_abandon(&t->nodes[t->depth - 1]);
      t->depth--;
    }
    pf_self = NULL;
    pf_self_exited = 1;
    pf_pool_give(t);
  }
  pf_crit_exit(&c);
}

/* fork(): the child has one thread and a fresh, empty table (table.c).  The
 * other threads' records are free in the child; the forking thread keeps
 * its own record (its waits, if fork was called from a handler that
 * interrupted one, are not queued in the child's table: they end as if
 * detached). */
static void
pf_thread_atfork_child(void)
{
  struct pf_thread *t;
  pf_pool_lock = 0;
  pf_pool_free = NULL;
  for (t = pf_pool_all; t; t = t->next) {
    struct pf_waiter *f = t->nodes[0].px_for;
    if (t == pf_self)
      continue;
    if (f && pf_self && f >= pf_self->nodes && f < pf_self->nodes + PF_NEST_MAX)
      continue;       /* lent for a node of this thread's wait (wait.c (M)): kept */
    t->nodes[0].px_for = NULL;
    t->depth = 0;
    t->next_free = pf_pool_free;
    pf_pool_free = t;
  }
  if (pf_self) {
    /* Not in the child's (empty) table any more.  The futex port's token
     * is its word; a SysV semaphore is the parent's: README, limits. */
    unsigned int i;
    for (i = 0; i < pf_self->depth; i++) {
      struct pf_waiter *w = &pf_self->nodes[i];
      struct pf_node *n = pf_mv_node(w) && pf_mv_tab(w) == &pf_table ? pf_mv_node(w) : w->node;
      if (n != w->node) {
        /* a node a requeue queued for it here, not adopted yet: it finds
         * it detached (no token: never armed) */
        n->linked = 0;
        n->counted = 0;
        AO_int_store(&n->state, PF_W_DETACHED);
        continue;
      }
      if (w->tab != &pf_table)
        continue;     /* a region's slot stays the parent's wait (README, limits) */
      if (AO_int_load(&n->state) == PF_W_QUEUED) {
        n->linked = 0;
        n->counted = 0;
        AO_int_store(&n->state, PF_W_DETACHED);
        AO_int_store_release(&n->park.word, 1);
      } else if (AO_int_load(&n->state) == PF_W_MOVED) {
        AO_int_store_release(&n->park.word, 1);   /* its requeuer is the parent's */
      }
    }
  }
}

int
pf_thread_init(void)
{
  static const int faults[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS };
  size_t i;
  sigfillset(&pf_sig_nonfault);
  sigdelset(&pf_sig_nonfault, SIGKILL);
  sigdelset(&pf_sig_nonfault, SIGSTOP);
  for (i = 0; i < sizeof faults / sizeof faults[0]; i++)
    sigdelset(&pf_sig_nonfault, faults[i]);
  if (pthread_key_create(&pf_thread_key, pf_thread_exit) != 0)
    return -ENOMEM;
  if (pthread_atfork(NULL, NULL, pf_thread_atfork_child) != 0)
    return -ENOMEM;
  return 0;
}

/* ---- Restart after a handler ----------------------------------------------- */

/* 1 when a signal handler that is not SA_RESTART (restart_only) / any
 * handler (otherwise) could have run in this thread: an unblocked signal
 * other than the synchronous faults has one. */
static int
pf_sig_handlers(int restart_only)
{
  sigset_t blocked;
  struct pf_cancel cancel;
  int sig, ret = 0;
  pf_cancel_off(&cancel);   /* sigaction is no async-cancel-safe call */
  if (pthread_sigmask(SIG_BLOCK, NULL, &blocked) != 0)
    sigemptyset(&blocked);
  for (sig = 1; sig < NSIG; sig++) {
    struct sigaction sa;
    /* Fault signals are raised by the faulting thread itself, which was
     * asleep: their handlers (a sanitizer's, say) do not count. */
    if (sigismember(&pf_sig_nonfault, sig) != 1 || sigismember(&blocked, sig) == 1
        || sigaction(sig, NULL, &sa) != 0)
      continue;
    if ((sa.sa_flags & SA_SIGINFO) || (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN))
      if (!restart_only || !(sa.sa_flags & SA_RESTART)) {
        ret = 1;
        break;
      }
  }
  pf_cancel_restore(&cancel);
  return ret;
}

int
pf_sig_restartable(void)
{
  return !pf_sig_handlers(1);
}

int
pf_sig_handler_possible(void)
{
  return pf_sig_handlers(0);
}
