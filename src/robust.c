/* robust.c - robust lists under emulation: set_robust_list(2),
 * get_robust_list(2), and the walk Linux makes when a thread exits
 * (kernel/futex/core.c, exit_robust_list), checked against Linux 6.18 by
 * tests/futex_ext:
 *
 *   register  one list head per thread (len must be the head's size:
 *             EINVAL; a fork child starts with none, as Linux's); kept
 *             thread-local, and in a registry by thread id
 *             for get_robust_list of another thread of this process (a
 *             thread of another process: ESRCH here, where Linux answers
 *             EPERM or the head when permitted).
 *   the walk  when a thread that registered a list exits (its key
 *             destructor: pthread_exit, or a return from its start
 *             routine), each entry (at most ROBUST_LIST_LIMIT, 2048, as the
 *             kernel; a loop ends there) and then list_op_pending: the word
 *             at entry + futex_offset, if it names this thread, becomes
 *             (word & FUTEX_WAITERS) | FUTEX_OWNER_DIED (the id cleared,
 *             as the kernel clears it), and with FUTEX_WAITERS one waiter
 *             is woken by a shared wake (the kernel's; glibc's robust
 *             mutexes wait with shared ops for that reason).  A pending
 *             non-PI word that is 0 gets the wake alone (an unlock that
 *             died between its store and its wake).  An entry whose low
 *             bit is set is a PI futex: no wake; its first queued PI
 *             locker is handed the lock instead (src/pi.c), as the
 *             kernel's exit of the owner's PI state does.  Memory is read
 *             with pf_os_copy_in and probed before each write: a bad
 *             pointer ends the walk (the kernel's fault does), never with
 *             a signal.  The walk stops at the first entry whose word is
 *             misaligned or unreadable, as the kernel's does.
 *
 *   regions   a head that lies in a region is also recorded in one of
 *             the region's slots (src/region/robust.c), so that when the
 *             process dies without running its destructors (SIGKILL), a
 *             surviving process that waits in the region walks the list
 *             from the region's bytes; no slot left: ENOMEM.
 *
 *   exit()    the exit of the whole process (exit(), a return from main)
 *             runs no key destructor: an exit handler walks every list
 *             registered in the process (pf_robust_exit_all).
 *
 * Not here: a process that ends by _exit() or a fatal signal has the
 * lists whose heads are outside regions walked by nobody. */
#include "emu.h"
#include "os.h"

#include <pthread.h>
#include <stdlib.h>

#define PF_FUTEX_WAITERS    0x80000000u
#define PF_FUTEX_OWNER_DIED 0x40000000u
#define PF_ROBUST_LIMIT     2048

/* struct robust_list_head's layout (<linux/futex.h>). */
struct pf_robust_head {
  uintptr_t next;                /* struct robust_list * */
  long futex_offset;
  uintptr_t pending;             /* struct robust_list * */
};

struct pf_robust_reg {
  struct pf_robust_reg *next;
  uint32_t tid;
  void *head;
  size_t len;
  pf_ref rslot;                  /* a head in a region: its registration there
                                    (src/region/robust.c), else 0 */
  uint64_t rkey;                 /* the head's key in that region */
};

static pthread_once_t pf_robust_once = PTHREAD_ONCE_INIT;
static pthread_key_t pf_robust_key;
static pthread_mutex_t pf_robust_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pf_robust_reg *pf_robust_regs;     /* every thread that registered */

static void pf_robust_exit(void *arg);
static void pf_robust_walk(void *headp, uint32_t tid);
static void pf_robust_region_drop(struct pf_robust_reg *r);

/* fork(): as Linux's, the child starts with no robust list (its thread's
 * registration is cleared, its id is the child's); the other threads'
 * records, of threads the child does not have, go. */
static void
pf_robust_atfork_child(void)
{
  struct pf_robust_reg *r = pthread_getspecific(pf_robust_key), *x, *nx;
  pthread_mutex_init(&pf_robust_lock, NULL);
  for (x = pf_robust_regs; x; x = nx) {
    nx = x->next;
    if (x != r)
      free(x);
  }
  pf_robust_regs = r;
  if (r) {
    r->next = NULL;
    r->head = NULL;
    r->len = 0;
    r->rslot = 0;
    r->tid = (uint32_t)pf_os_tid() & PF_PI_TID;
  }
}

/* exit(), or a return from main: Linux walks the list of each thread of
 * the process as they all end (exit_group).  Here no thread-specific data
 * destructor runs then, so the exit handler walks every list registered
 * in this process, each with its thread's id (the other threads still
 * run meanwhile: the process is ending), and drops their registrations in
 * regions (walked already: the survivors need not).  _exit() and fatal
 * signals run no handler: lists in regions are walked by the survivors
 * (src/region/robust.c), others are not. */
static void
pf_robust_exit_all(void)
{
  struct pf_robust_reg *r;
  pthread_mutex_lock(&pf_robust_lock);
  for (r = pf_robust_regs; r; r = r->next) {
    if (r->head)
      pf_robust_walk(r->head, r->tid);
    pf_robust_region_drop(r);
    r->head = NULL;
  }
  pthread_mutex_unlock(&pf_robust_lock);
}

static void
pf_robust_init(void)
{
  (void)pthread_key_create(&pf_robust_key, pf_robust_exit);
  (void)pthread_atfork(NULL, NULL, pf_robust_atfork_child);
  (void)atexit(pf_robust_exit_all);
}

/* A wake of one waiter of a dead owner's word: the library's own call
 * (pf_internal_begin), not a handler's: the walk may run in a waiter's
 * own slice (wait.c (R)) and wake that very waiter, which must then
 * return 0, as Linux's waiter does. */
static void
pf_robust_wake(uint32_t *uaddr)
{
  struct pf_crit c;
  pf_internal_begin(&c);
  (void)pfutex_wake(uaddr, PFUTEX_BITSET_MATCH_ANY, 1, PFUTEX_SHARED);
  pf_internal_end(&c);
}

/* One word of a dying thread: 0, or -1 to end the walk (a bad address). */
int
pf_robust_word_died(uint32_t *uaddr, uint32_t tid, int pi, int pending)
{
  uint32_t v;
  int tries;
  if (((uintptr_t)uaddr & 3u) || pf_addr_unreadable(uaddr))
    return -1;
  if (pf_os_copy_in(&v, uaddr, sizeof v) < 0)
    return -1;
  if (pending && !pi && v == 0) {
    pf_robust_wake(uaddr);
    return 0;
  }
  if ((v & PF_PI_TID) != tid)
    return 0;
  if (pf_os_probe_write(uaddr) < 0)
    return -1;
  if (pi) {
    struct pf_crit c;                       /* (the library's own call: pf_robust_wake) */
    int r;
    pf_internal_begin(&c);
    r = pf_emu_pi_owner_died(uaddr, tid);
    pf_internal_end(&c);
    return r < 0 ? -1 : 0;
  }
  for (tries = 0; tries < 1000; tries++) {
    uint32_t nv = (v & PF_FUTEX_WAITERS) | PF_FUTEX_OWNER_DIED;
    if (AO_int_compare_and_swap_full((volatile unsigned int *)uaddr, v, nv)) {
      if (v & PF_FUTEX_WAITERS)
        pf_robust_wake(uaddr);
      return 0;
    }
    v = pf_word_load(uaddr);
    if ((v & PF_PI_TID) != tid)
      return 0;
  }
  return 0;
}

/* The address here of the dead process's pointer p, for n bytes of the
 * region's words, or 0. */
static uintptr_t
pf_rb_addr(const struct pf_robust_view *v, uint64_t p, size_t n)
{
  uint64_t k = p - v->dead_base;
  uintptr_t a;
  if (v->psize == 4)
    k &= 0xffffffffu;              /* its arithmetic wraps at 32 bits */
  if (k > (uint64_t)(UINTPTR_MAX - v->key_base))
    return 0;
  a = v->key_base + (uintptr_t)k;
  if (a < v->lo || a - v->lo > v->span || v->span - (a - v->lo) < n)
    return 0;
  return a;
}

/* Read one of the dead process's pointers (or longs) at p: 0, or -1. */
static int
pf_rb_read(const struct pf_robust_view *v, uint64_t p, uint64_t *out)
{
  uintptr_t a = pf_rb_addr(v, p, v->psize);
  if (!a)
    return -1;
  if (v->psize == 4) {
    uint32_t x;
    if (pf_os_copy_in(&x, (const void *)a, 4) < 0)
      return -1;
    *out = x;
  } else {
    uint64_t x;
    if (pf_os_copy_in(&x, (const void *)a, 8) < 0)
      return -1;
    *out = x;
  }
  return 0;
}

/* The word of entry e (futex_offset off, the dead process's long): 0 and
 * *w, or -1. */
static int
pf_rb_word(const struct pf_robust_view *v, uint64_t e, uint64_t off, uint32_t **w)
{
  uintptr_t a = pf_rb_addr(v, e + off, 4);
  if (!a || (a & 3u))
    return -1;
  *w = (uint32_t *)a;
  return 0;
}

/* The walk of a dead thread's list, head at the owner's `head` (the
 * kernel's exit_robust_list order: every entry but the pending one, then
 * the pending one). */
void
pf_robust_walk_view(const struct pf_robust_view *v, uint64_t head, uint32_t tid)
{
  uint64_t h[3], entry, pending, off, mask = v->psize == 4 ? 0xfffffffeu : ~(uint64_t)1;
  uint32_t *w;
  int i, limit = PF_ROBUST_LIMIT;
  for (i = 0; i < 3; i++)        /* next, futex_offset, list_op_pending */
    if (pf_rb_read(v, head + (uint64_t)i * v->psize, &h[i]) < 0)
      return;
  entry = h[0];
  off = h[1];
  if (v->psize == 4)
    off = (uint64_t)(int64_t)(int32_t)(uint32_t)off;   /* a signed long */
  pending = h[2];
  while ((entry & mask) != (head & mask)) {
    uint64_t next, e = entry & mask;
    if (!e || pf_rb_read(v, e, &next) < 0)
      return;
    if (e != (pending & mask)) {
      if (pf_rb_word(v, e, off, &w) < 0 || pf_robust_word_died(w, tid, (int)(entry & 1), 0) < 0)
        return;
    }
    entry = next;
    if (--limit == 0)
      break;
  }
  if ((pending & mask) && pf_rb_word(v, pending & mask, off, &w) == 0)
    (void)pf_robust_word_died(w, tid, (int)(pending & 1), 1);
}

/* This process's own list: the same walk, through the identity view. */
static void
pf_robust_walk(void *headp, uint32_t tid)
{
  struct pf_robust_view v;
  v.dead_base = 0;
  v.psize = (uint32_t)sizeof(void *);
  v.lo = 0;
  v.span = UINTPTR_MAX;
  v.key_base = 0;
  pf_robust_walk_view(&v, (uint64_t)(uintptr_t)headp, tid);
}

/* The region holding a robust list head [head, head + len) in this
 * process, or NULL; *key its key there, *base the address keys count
 * from. */
static struct pf_table *
pf_robust_region(const void *head, size_t len, uint64_t *key, uint64_t *base)
{
  const struct pf_keyspace *ks = pf_keyspace_find(head);
  if (!ks || !ks->tab || !ks->tab->ops || !ks->tab->ops->robust_reg
      || (uintptr_t)head - ks->lo > ks->span - len)
    return NULL;
  *key = (uint64_t)((uintptr_t)head - ks->key_base);
  *base = (uint64_t)ks->key_base;
  return ks->tab;
}

/* Drop r's registration in a region, if the region is still open here
 * and its slot still holds it. */
static void
pf_robust_region_drop(struct pf_robust_reg *r)
{
  struct pf_table *tab;
  uint64_t key, base;
  struct pf_crit c;
  if (!r->rslot)
    return;
  pf_crit_enter(&c);
  if (r->head && (tab = pf_robust_region(r->head, r->len, &key, &base)) != NULL && key == r->rkey)
    tab->ops->robust_unreg(tab, r->rslot, r->rkey, r->tid);
  pf_crit_exit(&c);
  r->rslot = 0;
}

/* A head in a region: registered there too, for a survivor's walk (a
 * process killed by SIGKILL runs no destructor).  0, or -ENOMEM. */
static int
pf_robust_region_add(struct pf_robust_reg *r)
{
  struct pf_table *tab;
  uint64_t key, base;
  struct pf_crit c;
  int ret = 0;
  pf_crit_enter(&c);
  if ((tab = pf_robust_region(r->head, r->len, &key, &base)) != NULL
      && (ret = tab->ops->robust_reg(tab, base, key, r->tid, &r->rslot)) == 0)
    r->rkey = key;
  pf_crit_exit(&c);
  return ret;
}

static void
pf_robust_exit(void *arg)
{
  struct pf_robust_reg *r = arg, **pp;
  pthread_mutex_lock(&pf_robust_lock);
  for (pp = &pf_robust_regs; *pp; pp = &(*pp)->next)
    if (*pp == r) {
      *pp = r->next;
      break;
    }
  pthread_mutex_unlock(&pf_robust_lock);
  if (r->head)
    pf_robust_walk(r->head, r->tid);
  pf_robust_region_drop(r);
  free(r);
}

long
pf_emu_robust_set(struct robust_list_head *head, size_t len)
{
  struct pf_robust_reg *r;
  if (len != sizeof(struct pf_robust_head))
    return -EINVAL;
  pthread_once(&pf_robust_once, pf_robust_init);
  if (!(r = pthread_getspecific(pf_robust_key))) {
    if (!(r = calloc(1, sizeof *r)))
      return -ENOMEM;
    r->tid = (uint32_t)pf_os_tid() & PF_PI_TID;
    if (pthread_setspecific(pf_robust_key, r) != 0) {
      free(r);
      return -ENOMEM;
    }
    pthread_mutex_lock(&pf_robust_lock);
    r->next = pf_robust_regs;
    pf_robust_regs = r;
    pthread_mutex_unlock(&pf_robust_lock);
  }
  pf_robust_region_drop(r);
  pthread_mutex_lock(&pf_robust_lock);
  r->head = head;
  r->len = len;
  pthread_mutex_unlock(&pf_robust_lock);
  if (pf_robust_region_add(r) < 0) {
    pthread_mutex_lock(&pf_robust_lock);  /* the region's slots ran out: no list */
    r->head = NULL;
    r->len = 0;
    pthread_mutex_unlock(&pf_robust_lock);
    return -ENOMEM;
  }
  return 0;
}

long
pf_emu_robust_get(int pid, struct robust_list_head **head, size_t *len)
{
  struct pf_robust_reg *r;
  void *h = NULL;
  size_t l = sizeof(struct pf_robust_head);
  int found = 0;
  uint32_t want = pid ? (uint32_t)pid : (uint32_t)pf_os_tid() & PF_PI_TID;
  pthread_once(&pf_robust_once, pf_robust_init);
  pthread_mutex_lock(&pf_robust_lock);
  for (r = pf_robust_regs; r; r = r->next)
    if (r->tid == want) {
      h = r->head;
      l = r->len;
      found = 1;
      break;
    }
  pthread_mutex_unlock(&pf_robust_lock);
  if (!found && pid != 0 && !(pid > 0 && (uint32_t)pid == ((uint32_t)pf_os_tid() & PF_PI_TID)))
    return -ESRCH;
  /* the kernel writes len, then head: EFAULT for either */
  if (pf_os_probe_write(len) < 0 || pf_os_probe_write(head) < 0)
    return -EFAULT;
  *len = l;
  *head = (struct robust_list_head *)h;
  return 0;
}
