/* shm.c - shared regions: process-shared futexes on every backend.
 *
 * A region is shared memory with a futex table of its own in it (layout:
 * src/region.h).  Under emulation a shared (non-PRIVATE) op on a word of
 * a region is keyed by the word's offset and runs on the region's table,
 * with the same engine code as the private table (src/table.c, wait.c,
 * wake.c, requeue.c); under the native backend the kernel keys the shared
 * mapping itself and the table is simply unused.
 *
 * Processes.  Each process attached to a region holds an entry in its
 * process table, and the OS vouches that the entry's owner is alive
 * (src/os.h: a record lock on byte e of the region's object, which the
 * kernel drops when the owner dies or execs; Windows: pid and creation
 * time).  The owner's lock id, (generation & 0xffff) << 16 | (entry + 1),
 * marks the bucket locks it holds and the slots it owns, so anyone can
 * tell whether the process behind a lock or a slot is alive: the entry
 * must still hold that generation and the OS must still hold its lock.
 * Never a guess: a stopped or starved process stays alive, a reused pid
 * means nothing.  A process has one attachment (struct pf_rgn_att) per
 * region object, whatever the number of handles it opened on it: one
 * entry, one table, one descriptor (closing another descriptor of the
 * object would drop the process's record locks: the attachment keeps
 * every descriptor it opened until its last handle closes).
 *
 * Slots.  A wait on a region word claims a slot with one compare-and-swap
 * of its owner word (so a process killed at any instruction either owns
 * it, and it is reclaimable, or does not), and frees it when the wait is
 * over.  The slots of dead processes are reclaimed when the pool runs out
 * (pf_region_scavenge), by the wakers that meet them on a queue, and by a
 * rebuild of a bucket.  Exhaustion, after that, is ENOMEM.
 *
 * Lifetime.  Named regions: shm_open objects (pfutex_region_unlink removes
 * the name).  Anonymous: a MAP_SHARED|MAP_ANONYMOUS mapping, gone with its
 * last process.  Attach: the table lives in a shm object of its own named
 * after the user's object, "/pfutex.<dev>.<ino>" (hexadecimal), created
 * with the user's object's permission bits, and kept until
 * pfutex_region_attach_unlink(fd) (or shm_unlink / rm /dev/shm/pfutex.*):
 * processes that attach later find it there.
 */
#include "region.h"
#include "os.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifdef _WIN32
/* Windows: a named region is a named pagefile-backed file mapping,
 * "Local\pfutex-region-<name>" (ports/win32/os.c, pf_win32_shm_map),
 * created with its size in one call.  Such an object lives as long as a
 * process maps it: "unlink" cannot remove a name that is still mapped, and
 * the last close removes it (doc/ports.md, "Windows").  pfutex_region_unlink
 * answers 0 when the object exists, ENOENT when none does.  Attach tables
 * are named after the file's device and inode, which Windows' fstat does
 * not give: pfutex_region_attach fails with ENOTSUP there. */
static int
pf_w32_shm_unlink(const char *name)
{
  if (pf_win32_shm_exists(name))
    return 0;
  errno = ENOENT;
  return -1;
}
# define shm_unlink pf_w32_shm_unlink
#endif

volatile AO_t pf_regions[PF_REGIONS_MAX];
volatile AO_t pf_regions_n;
static pthread_mutex_t pf_regions_lock = PTHREAD_MUTEX_INITIALIZER;

/* This process's pid, kept current across fork (glibc's getpid is a system
 * call; the liveness checks are on the wake path). */
static volatile int pf_rgn_self_pid;

static int
pf_rgn_pid(void)
{
  int p = pf_rgn_self_pid;
  if (PF_UNLIKELY(p == 0)) {
    p = (int)getpid();
    pf_rgn_self_pid = p;
  }
  return p;
}

#define PF_RGN_ALIGN(x, a) (((x) + (uint64_t)(a) - 1) & ~((uint64_t)(a) - 1))

/* ---- Liveness ------------------------------------------------------------------ */

static struct pf_rgn_att *
pf_tab_att(const struct pf_table *tab)
{
  return tab->rgn;
}

uint32_t
pf_region_lock_id(const struct pf_table *tab)
{
  return pf_tab_att(tab)->me;
}

/* The locks-in-flight count of the process behind lock id `id` (NULL for
 * an id that names no entry). */
volatile unsigned int *
pf_region_locking(const struct pf_table *tab, uint32_t id)
{
  const struct pf_rgn_att *a = pf_tab_att(tab);
  uint32_t e = id & 0xffffu;
  if (e == 0 || e > a->nprocs)
    return NULL;
  return &a->procs[e - 1].locking;
}

/* This thread's intent on bucket i, in its process's entry: a free place of
 * held[] set to i + 1 (NULL when every place is taken: the count then says
 * more than the list, and lockers wait as for a live holder). */
volatile unsigned int *
pf_region_intent_take(const struct pf_table *tab, uint32_t i)
{
  const struct pf_rgn_att *a = pf_tab_att(tab);
  uint32_t e = a->me & 0xffffu, k;
  struct pf_rgn_proc *p;
  if (e == 0 || e > a->nprocs)
    return NULL;
  p = &a->procs[e - 1];
  for (k = 0; k < PF_RGN_HELD; k++)
    if (AO_int_load(&p->held[k]) == 0 && AO_int_compare_and_swap_full(&p->held[k], 0, i + 1))
      return &p->held[k];
  return NULL;
}

/* May the live process behind lock id `id` hold bucket i, or be about to?
 * 1 when its entry lists i (in a place other than `mine`, this thread's
 * own), or counts more locks in flight than it lists (it may be between
 * the two); 0 when it lists neither: the lock word is a scribble.  The
 * list is read before the count, which its owner raises before it writes
 * the list and lowers after it clears it. */
int
pf_region_may_hold(const struct pf_table *tab, uint32_t id, uint32_t i,
                   const volatile unsigned int *mine)
{
  const struct pf_rgn_att *a = pf_tab_att(tab);
  uint32_t e = id & 0xffffu, k, inuse = 0;
  const struct pf_rgn_proc *p;
  if (e == 0 || e > a->nprocs)
    return 0;
  p = &a->procs[e - 1];
  for (k = 0; k < PF_RGN_HELD; k++) {
    uint32_t v = AO_int_load(&p->held[k]);
    if (v == 0)
      continue;
    inuse++;
    if (v == i + 1 && &p->held[k] != mine)
      return 1;
  }
  AO_nop_full();
  return AO_int_load(&p->locking) > inuse;
}

/* Is the process behind lock id `id` gone (or is id garbage)?  Only the OS
 * says a process is gone (src/os.h); a generation that moved on says the
 * OS said so to the entry's next owner. */
static int
pf_region_id_dead(const struct pf_rgn_att *a, uint32_t id)
{
  uint32_t e = id & 0xffffu, gen;
  const struct pf_rgn_proc *p;
  if (e == 0 || e > a->nprocs)
    return 1;
  if (id == a->me && a->pid == pf_rgn_pid())
    return 0;
  if (e == (a->me & 0xffffu) && a->pid == pf_rgn_pid())
    return 1;                                 /* our entry, an earlier owner's id */
  p = &a->procs[e - 1];
  gen = AO_int_load(&p->gen);
  if ((gen & 0xffffu) != id >> 16)
    return 1;
  return !pf_live_held(a->live, a->live_fd, e - 1, p);
}

int
pf_region_lock_holder_dead(const struct pf_table *tab, uint32_t holder)
{
  return pf_region_id_dead(pf_tab_att(tab), holder);
}

int
pf_node_owner_alive(const struct pf_table *tab, const struct pf_node *n)
{
  uint32_t o;
  if (!tab->slots)
    return 1;
  o = AO_int_load(&n->owner);
  return o != 0 && !pf_region_id_dead(pf_tab_att(tab), o);
}

uint32_t pf_region_next_seq(struct pf_table *tab);
uint32_t
pf_region_next_seq(struct pf_table *tab)
{
  return AO_int_fetch_and_add_full(&pf_tab_att(tab)->hdr->seq, 1);
}

void
pf_region_wait_begin(struct pf_table *tab)
{
  AO_fetch_and_add1_full(&pf_tab_att(tab)->waits);
}

void
pf_region_wait_end(struct pf_table *tab)
{
  AO_fetch_and_sub1_full(&pf_tab_att(tab)->waits);
}

/* ---- Slots ----------------------------------------------------------------------- */

/* Free n if its owner is still `owner`: this process's lock id for its own
 * slot, or a dead process's.  A dead process's slot is made ours first,
 * with one compare-and-swap, so of two processes freeing it only one
 * writes it, and a slot freed and claimed meanwhile stays its new owner's;
 * then its fields, then the owner word (a process killed in between leaves
 * a slot owned by a dead process: freed again later). */
void
pf_slot_free(struct pf_table *tab, struct pf_node *n, uint32_t owner)
{
  uint32_t me = pf_tab_att(tab)->me;
  if (owner == 0 || me == 0)
    return;
  if (owner != me) {
    if (!AO_int_compare_and_swap_full(&n->owner, owner, me))
      return;
  } else if (AO_int_load(&n->owner) != me) {
    return;
  }
  n->linked = 0;
  n->pushed = 0;
  n->counted = 0;
  AO_int_store(&n->state, PF_W_IDLE);
  PF_CRASH("slot_freeing");
  (void)AO_int_compare_and_swap_full(&n->owner, me, 0);
}

/* Does this process still own slot n (a corrupt region may have freed it
 * under us)? */
int
pf_slot_mine(const struct pf_table *tab, const struct pf_node *n)
{
  return AO_int_load(&n->owner) == pf_tab_att(tab)->me;
}

#ifdef PF_HAVE_EMU
/* Reclaim dead processes' slots: those on no queue at once, those that may
 * be on one under their bucket's lock.  Inside a critical section (it takes
 * bucket locks). */
static void
pf_att_scavenge(struct pf_rgn_att *a)
{
  struct pf_table *tab = &a->tab;
  uint32_t s;
  for (s = 0; s < tab->nslots; s++) {
    struct pf_node *n = &tab->slots[s];
    uint32_t o = AO_int_load(&n->owner), st, i;
    if (o == 0 || !pf_region_id_dead(a, o))
      continue;
    st = AO_int_load(&n->state);
    if (st != PF_W_QUEUED && st != PF_W_DETACHED) {
      pf_slot_free(tab, n, o);
      continue;
    }
    i = AO_int_load(&n->bucket);
    if (i >= tab->nbuckets)
      i = 0;
    if (pf_bucket_lock(tab, i) < 0)
      continue;
    (void)pf_bucket_ready_locked(tab, i);
    if (AO_int_load(&n->owner) == o && AO_int_load(&n->bucket) == i)
      (void)pf_slot_free_dead_locked(tab, &tab->buckets[i], n, s + 1, o);
    pf_bucket_unlock(tab, i);
  }
}

void
pf_region_scavenge(struct pf_region *rg)
{
  struct pf_crit c;
  pf_crit_enter(&c);
  pf_att_scavenge(rg->att);
  pf_crit_exit(&c);
}

/* Entry e's generation wrapped: after 65,536 owners an old lock id could
 * be the new owner's (ours) again.  Clear every word an earlier owner of e
 * left, by entry alone, not by liveness (an aliased id passes for ours):
 * first the slots (this process owns none yet: every slot of e is an
 * earlier owner's, freed, under its bucket's lock when it may be queued),
 * then the bucket locks naming e (taken over and rebuilt).  Inside a
 * critical section; this process's lock id is already the new one. */
static void
pf_att_sweep_entry(struct pf_rgn_att *a, uint32_t e)
{
  struct pf_table *tab = &a->tab;
  uint32_t s, i;
  for (s = 0; s < tab->nslots; s++) {
    struct pf_node *n = &tab->slots[s];
    uint32_t o = AO_int_load(&n->owner), st;
    if (o == 0 || (o & 0xffffu) != e + 1)
      continue;
    st = AO_int_load(&n->state);
    if (st != PF_W_QUEUED && st != PF_W_DETACHED) {
      pf_slot_free(tab, n, o);
      continue;
    }
    i = AO_int_load(&n->bucket);
    if (i >= tab->nbuckets)
      i = 0;
    if (pf_bucket_lock(tab, i) < 0)
      continue;
    (void)pf_bucket_ready_locked(tab, i);
    if (AO_int_load(&n->owner) == o && AO_int_load(&n->bucket) == i)
      (void)pf_slot_free_dead_locked(tab, &tab->buckets[i], n, s + 1, o);
    pf_bucket_unlock(tab, i);
  }
  for (i = 0; i < tab->nbuckets; i++) {
    uint32_t h = AO_int_load(&tab->buckets[i].lock);
    if (h != 0 && (h & 0xffffu) == e + 1 && pf_bucket_lock(tab, i) == 0)
      pf_bucket_unlock(tab, i);
  }
}
#endif

int
pf_slot_claim(struct pf_table *tab, pf_ref *ref, int crit)
{
  struct pf_rgn_att *a = pf_tab_att(tab);
  uint32_t hint, k, round;
  if (a->me == 0 || a->pid != pf_rgn_pid())
    return -ENOMEM;                         /* no process entry (they ran out) */
  for (round = 0; round < 2; round++) {
    hint = AO_int_load(&a->hdr->hint);
    if (hint >= tab->nslots)
      hint = 0;                             /* region bytes: a scribble */
    for (k = 0; k < tab->nslots; k++) {
      uint32_t s = (hint + k) % tab->nslots;
      struct pf_node *n = &tab->slots[s];
      if (AO_int_load(&n->owner) == 0 && AO_int_compare_and_swap_full(&n->owner, 0, a->me)) {
        PF_CRASH("slot_claimed");
        AO_int_store(&n->state, PF_W_IDLE);
        n->linked = n->pushed = n->counted = 0;
        AO_int_store(&a->hdr->hint, (s + 1) % tab->nslots);
        *ref = s + 1;
        return 0;
      }
    }
#ifdef PF_HAVE_EMU
    if (round == 0) {
      if (!crit)
        return -EAGAIN;                     /* the scavenge takes locks: see emu.h */
      pf_att_scavenge(a);
    }
#endif
  }
  return -ENOMEM;
}

/* ---- Process entries -------------------------------------------------------------- */

/* Take an entry of the process table: one the OS says nobody alive owns
 * (src/os.h).  Not in a critical section: opens and fork children. */
static int
pf_att_proc_claim(struct pf_rgn_att *a)
{
  uint32_t self = (uint32_t)getpid(), e;
  a->me = 0;
  a->pid = (int)self;
  for (e = 0; e < a->nprocs; e++) {
    struct pf_rgn_proc *p = &a->procs[e];
    uint32_t gen, old, k;
    int ret = pf_live_claim(a->live, a->live_fd, e, p);
    if (ret == -EBUSY)
      continue;
    if (ret < 0)
      return ret == -ENOMEM || ret == -ENOLCK ? -ENOMEM : ret;
    PF_CRASH("proc_claiming");
    old = AO_int_load(&p->gen);
    gen = old + 1;
    if ((gen & 0xffffu) == 0)
      gen++;
    AO_int_store(&p->gen, gen);
    AO_int_store(&p->locking, 0);
    for (k = 0; k < PF_RGN_HELD; k++)
      AO_int_store(&p->held[k], 0);
    AO_int_store_release(&p->pid, self);
    a->me = ((gen & 0xffffu) << 16) | (e + 1);
#ifdef PF_HAVE_EMU
    if ((gen & 0xffffu) == 1 && old != 0) {
      struct pf_crit c;
      pf_crit_enter(&c);
      pf_att_sweep_entry(a, e);
      pf_crit_exit(&c);
    }
#endif
    return 0;
  }
  return -ENOMEM;
}

static void
pf_att_proc_release(struct pf_rgn_att *a)
{
  uint32_t e = a->me & 0xffffu;
  if (a->me && a->pid == (int)getpid() && e <= a->nprocs) {
    (void)AO_int_compare_and_swap_full(&a->procs[e - 1].pid, (uint32_t)a->pid, 0);
    pf_live_release(a->live, a->live_fd, e - 1, &a->procs[e - 1]);
  }
  a->me = 0;
}

static struct pf_rgn_att *pf_atts;          /* pf_regions_lock */

/* fork(): the child is another process: an entry of its own in every
 * region it inherited (the OS gave it none of its parent's record locks;
 * none left: its waits there fail with ENOMEM). */
static void
pf_regions_atfork_child(void)
{
  struct pf_rgn_att *a;
  pf_rgn_self_pid = (int)getpid();
  pthread_mutex_init(&pf_regions_lock, NULL);
  for (a = pf_atts; a; a = a->next) {
    if (a->refs > 0) {
      AO_store(&a->waits, 0);
      (void)pf_att_proc_claim(a);
    }
  }
}

static pthread_once_t pf_regions_once = PTHREAD_ONCE_INIT;
static void
pf_regions_init(void)
{
  pf_rgn_self_pid = (int)getpid();
  (void)pthread_atfork(NULL, NULL, pf_regions_atfork_child);
}

/* ---- Layout ------------------------------------------------------------------------- */

struct pf_geom {
  uint32_t nbuckets, nslots, nprocs;
  uint64_t procs_off, buckets_off, slots_off, user_off, user_size, total;
};

static long
pf_page_size(void)
{
  long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? p : 4096;
}

static int
pf_geom_from_attr(const pfutex_region_attr_t *a, size_t user, int with_user, struct pf_geom *g)
{
  uint64_t page = (uint64_t)pf_page_size();
  unsigned int i;
  g->nslots = PFUTEX_REGION_DEFAULT_SLOTS;
  g->nbuckets = PFUTEX_REGION_DEFAULT_BUCKETS;
  g->nprocs = PFUTEX_REGION_DEFAULT_PROCS;
  if (a) {
    for (i = 0; i < sizeof a->reserved / sizeof a->reserved[0]; i++)
      if (a->reserved[i])
        return -EINVAL;
    if (a->slots)
      g->nslots = a->slots;
    if (a->buckets)
      g->nbuckets = a->buckets;
    if (a->procs)
      g->nprocs = a->procs;
  }
  if (g->nslots > 65535u || g->nprocs > PF_RGN_MAX_PROCS || g->nbuckets > PF_RGN_MAX_BUCKETS
      || (g->nbuckets & (g->nbuckets - 1)) != 0)
    return -EINVAL;
  g->procs_off = PF_RGN_ALIGN(sizeof(struct pf_rgn_hdr), 64);
  g->buckets_off = PF_RGN_ALIGN(g->procs_off + (uint64_t)g->nprocs * sizeof(struct pf_rgn_proc), 64);
  g->slots_off = g->buckets_off + (uint64_t)g->nbuckets * sizeof(struct pf_bucket);
  g->user_off = PF_RGN_ALIGN(g->slots_off + (uint64_t)g->nslots * sizeof(struct pf_node), page);
  g->user_size = with_user ? (uint64_t)user : 0;
  if (with_user && (user == 0 || (uint64_t)user > (uint64_t)SIZE_MAX / 2))
    return -EINVAL;
  g->total = g->user_off + PF_RGN_ALIGN(g->user_size, page);
  if (g->total > (uint64_t)SIZE_MAX / 2)
    return -EINVAL;
  return 0;
}

/* This process's backend family (region.h). */
static uint32_t
pf_region_backend_code(void)
{
  const char *b = pfutex_backend();
  uint32_t h = 5381;
  if (!b)
    return 0;
  if (strncmp(b, "linux", 5) == 0)
    return PF_RGN_BE_LINUX;
  while (*b)
    h = h * 33 + (unsigned char)*b++;
  return PF_RGN_BE_EMU | (h & 0xffffu);
}

/* How a new region's processes learn who is alive (src/os.h, src/live.c):
 * record locks on the object where the host's shm objects take them, else
 * on a companion file (FreeBSD, macOS, and their shims), else (Windows)
 * pid and start time. */
static uint32_t
pf_region_live_default(void)
{
#ifdef PF_HAVE_LIVE_LOCK
# ifdef PF_HAVE_OBJECT_LOCKS
  const char *b = pfutex_backend();
  if (b && (strstr(b, "freebsd") || strstr(b, "darwin")))
    return PF_LIVE_LOCKFILE;                /* their shims, as those systems do */
  return PF_LIVE_LOCK;
# else
  return PF_LIVE_LOCKFILE;
# endif
#else
  return PF_LIVE_START;
#endif
}

/* Write the layout into fresh (zeroed) memory; the magic goes last. */
static void
pf_layout_init(void *mem, const struct pf_geom *g, int kind)
{
  struct pf_rgn_hdr *h = mem;
  struct timespec ts;
  uint64_t order;
  clock_gettime(CLOCK_REALTIME, &ts);
  order = ((uint64_t)ts.tv_nsec << 32) ^ (uint64_t)ts.tv_sec ^ ((uint64_t)getpid() << 20)
          ^ (uint64_t)(uintptr_t)mem;
  order = (order * 0x9e3779b97f4a7c15ull) | 1u;   /* never 0, the private table's */
  h->version = PF_RGN_VERSION;
  h->endian = PF_RGN_ENDIAN;
  h->hdr_size = sizeof(struct pf_rgn_hdr);
  h->node_size = sizeof(struct pf_node);
  h->bucket_size = sizeof(struct pf_bucket);
  h->proc_size = sizeof(struct pf_rgn_proc);
  h->nbuckets = g->nbuckets;
  h->nslots = g->nslots;
  h->nprocs = g->nprocs;
  h->kind = (uint32_t)kind;
  h->total = g->total;
  h->procs_off = g->procs_off;
  h->buckets_off = g->buckets_off;
  h->slots_off = g->slots_off;
  h->user_off = g->user_off;
  h->user_size = g->user_size;
  h->order = order;
  h->backend = pf_region_backend_code();
  h->live = pf_region_live_default();
  AO_nop_full();
  AO_int_store_release(&h->magic, PF_RGN_MAGIC);
}

/* Check a header against the object's size (untrusted): 0 and *g, or
 * -EINVAL (not a region), -EPROTO (another layout or ABI), or
 * -ENOTRECOVERABLE (inconsistent). */
static int
pf_layout_check(const struct pf_rgn_hdr *h, uint64_t size, struct pf_geom *g)
{
  uint64_t end;
  if (AO_int_load_acquire(&h->magic) != PF_RGN_MAGIC)
    return -EINVAL;
  if (h->version != PF_RGN_VERSION || h->endian != PF_RGN_ENDIAN
      || h->hdr_size != sizeof(struct pf_rgn_hdr) || h->node_size != sizeof(struct pf_node)
      || h->bucket_size != sizeof(struct pf_bucket) || h->proc_size != sizeof(struct pf_rgn_proc)
      || h->backend != pf_region_backend_code() || !pf_live_supported(h->live))
    return -EPROTO;
  g->nbuckets = h->nbuckets;
  g->nslots = h->nslots;
  g->nprocs = h->nprocs;
  g->procs_off = h->procs_off;
  g->buckets_off = h->buckets_off;
  g->slots_off = h->slots_off;
  g->user_off = h->user_off;
  g->user_size = h->user_size;
  g->total = h->total;
  if (g->nbuckets == 0 || g->nbuckets > PF_RGN_MAX_BUCKETS || (g->nbuckets & (g->nbuckets - 1))
      || g->nslots == 0 || g->nslots > PF_RGN_MAX_SLOTS || g->nprocs == 0
      || g->nprocs > PF_RGN_MAX_PROCS)
    return -ENOTRECOVERABLE;
  if (g->total != size || g->total > (uint64_t)SIZE_MAX / 2)
    return -ENOTRECOVERABLE;
  /* the parts in order, aligned, inside the object; every offset is
   * bounded by the total first, so no sum below can wrap (the counts are
   * at most 2^20, the sizes 128) */
  if (g->procs_off > g->total || g->buckets_off > g->total || g->slots_off > g->total
      || g->user_off > g->total || g->user_size > g->total)
    return -ENOTRECOVERABLE;
  if (g->procs_off < sizeof(struct pf_rgn_hdr) || g->procs_off % 64
      || g->buckets_off < g->procs_off + (uint64_t)g->nprocs * sizeof(struct pf_rgn_proc)
      || g->buckets_off % 64
      || g->slots_off < g->buckets_off + (uint64_t)g->nbuckets * sizeof(struct pf_bucket)
      || g->slots_off % 64 || g->user_off % 64)
    return -ENOTRECOVERABLE;
  end = g->slots_off + (uint64_t)g->nslots * sizeof(struct pf_node);
  if (end > g->user_off || g->user_size > g->total - g->user_off)
    return -ENOTRECOVERABLE;
  if (h->kind != PF_RGN_ATTACH && g->user_size < 4)
    return -ENOTRECOVERABLE;              /* no word: its span would wrap (emu.h) */
  return 0;
}

/* ---- Attachments and handles --------------------------------------------------------- */

/* Closed handles, kept for reuse: a handle stays valid memory after close,
 * so closing it again is EINVAL, not a use after free (as a closed file
 * descriptor, it may name a later region once reused).  Attachments are
 * never freed either: one whose last handle closed is reused. */
static struct pf_region *pf_region_free_list;      /* pf_regions_lock */

/* The identity of the object open as fd ("" when it has none: never
 * shared with another handle). */
static void
pf_object_id(int fd, const char *name, char *id, size_t len)
{
  id[0] = 0;
#ifdef _WIN32
  (void)fd;
  if (name)
    snprintf(id, len, "n%s", name);
#else
  struct stat st;
  (void)name;
  if (fd >= 0 && fstat(fd, &st) == 0)
    snprintf(id, len, "d%llx.%llx", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino);
#endif
}

/* The attachment of object `id` (pf_regions_lock held), or NULL. */
static struct pf_rgn_att *
pf_att_find(const char *id)
{
  struct pf_rgn_att *a;
  if (!id[0])
    return NULL;
  for (a = pf_atts; a; a = a->next)
    if (a->refs > 0 && strcmp(a->id, id) == 0)
      return a;
  return NULL;
}

/* Keep fd with the attachment of its object, or close it when this process
 * has none (pf_regions_lock held).  Closing a descriptor of an object the
 * process is attached to would drop the process's record locks on it
 * (src/os.h), that is, its life in the region's eyes. */
static void
pf_fd_dispose_locked(int fd)
{
  char id[80];
  struct pf_rgn_att *a;
  if (fd < 0)
    return;
  pf_object_id(fd, NULL, id, sizeof id);
  if ((a = pf_att_find(id)) != NULL && a->nfds < (int)(sizeof a->fds / sizeof a->fds[0])) {
    a->fds[a->nfds++] = fd;
    return;
  }
  close(fd);
}

static void
pf_fd_dispose(int fd)
{
  pthread_mutex_lock(&pf_regions_lock);
  pf_fd_dispose_locked(fd);
  pthread_mutex_unlock(&pf_regions_lock);
}

/* A handle for the mapping map (whole region, or an attach table). */
static struct pf_region *
pf_region_new(void *map, size_t map_len, const struct pf_geom *g, int kind)
{
  struct pf_region *rg;
  pthread_mutex_lock(&pf_regions_lock);
  if ((rg = pf_region_free_list) != NULL)
    pf_region_free_list = rg->next_free;
  pthread_mutex_unlock(&pf_regions_lock);
  if (!rg && !(rg = calloc(1, sizeof *rg)))
    return NULL;
  memset(rg, 0, sizeof *rg);
  rg->map = map;
  rg->map_len = map_len;
  rg->kind = kind;
  if (kind != PF_RGN_ATTACH) {
    rg->user = (char *)map + g->user_off;
    rg->user_len = (size_t)g->user_size;
    rg->lo = (uintptr_t)rg->user;
    rg->span = rg->user_len;
    rg->key_base = (uintptr_t)map;
  }
  rg->slot = -1;
  return rg;
}

static void
pf_region_free(struct pf_region *rg)
{
  pthread_mutex_lock(&pf_regions_lock);
  rg->next_free = pf_region_free_list;
  pf_region_free_list = rg;
  pthread_mutex_unlock(&pf_regions_lock);
}

/* A fresh attachment to the region mapped at map (pf_regions_lock held):
 * NULL and *err when its liveness file cannot be opened. */
static struct pf_rgn_att *
pf_att_new(const char *id, int fd, const char *name, mode_t mode, char *map, size_t map_len,
           const struct pf_geom *g, int *err)
{
  uint32_t live = ((struct pf_rgn_hdr *)(void *)map)->live;   /* checked with the layout */
  int live_fd = live == PF_LIVE_LOCK ? fd : -1;
  struct pf_rgn_att *a, *next;
  unsigned int bits = 0;
#ifdef PF_HAVE_LIVE_LOCK
  if (live == PF_LIVE_LOCKFILE && (live_fd = pf_live_file_open(name, mode)) < 0) {
    *err = live_fd;
    return NULL;
  }
#else
  (void)name;
  (void)mode;
#endif
  *err = -ENOMEM;
  for (a = pf_atts; a; a = a->next)
    if (a->refs == 0)
      break;
  if (!a) {
    if (!(a = calloc(1, sizeof *a))) {
      if (live_fd >= 0 && live_fd != fd)
        close(live_fd);
      return NULL;
    }
    a->next = pf_atts;
    pf_atts = a;
  }
  next = a->next;
  memset(a, 0, sizeof *a);
  a->next = next;
  while ((1u << bits) < g->nbuckets)
    bits++;
  snprintf(a->id, sizeof a->id, "%s", id);
  a->fd = fd;
  a->live_fd = live_fd;
  a->map = map;
  a->map_len = map_len;
  a->hdr = (struct pf_rgn_hdr *)(void *)map;
  a->live = live;                           /* read once */
  a->procs = (struct pf_rgn_proc *)(void *)(map + g->procs_off);
  a->nprocs = g->nprocs;
  a->tab.buckets = (struct pf_bucket *)(void *)(map + g->buckets_off);
  a->tab.nbuckets = g->nbuckets;
  a->tab.bits = bits;
  a->tab.slots = (struct pf_node *)(void *)(map + g->slots_off);
  a->tab.nslots = g->nslots;
  a->tab.rgn = a;
  a->tab.order = a->hdr->order;
  return a;
}

/* Attach the handle rg (its object open as fd, or -1) and publish it to
 * the engine's lookup: the process's attachment of the object if it has
 * one (fd is then kept with it), else a new one with an entry of its own. */
static int
pf_region_register(struct pf_region *rg, int fd, const char *name, mode_t mode,
                   const struct pf_geom *g)
{
  char id[80];
  struct pf_rgn_att *a;
  int i, ret;
  pthread_once(&pf_regions_once, pf_regions_init);
  (void)pfutex_backend();                   /* start the backend (the sysv port reclaims) */
  pf_object_id(fd, name, id, sizeof id);
  pthread_mutex_lock(&pf_regions_lock);
  for (i = 0; i < PF_REGIONS_MAX; i++)
    if (AO_load(&pf_regions[i]) == 0)
      break;
  if (i == PF_REGIONS_MAX) {
    pf_fd_dispose_locked(fd);
    pthread_mutex_unlock(&pf_regions_lock);
    return -EMFILE;
  }
  if ((a = pf_att_find(id)) != NULL) {
    pf_fd_dispose_locked(fd);
    if ((a->me == 0 || a->pid != (int)getpid()) && (ret = pf_att_proc_claim(a)) < 0) {
      pthread_mutex_unlock(&pf_regions_lock);
      return ret;                           /* still no entry for this process */
    }
  } else {
    if (!(a = pf_att_new(id, fd, name, mode, rg->map, rg->map_len, g, &ret))) {
      pf_fd_dispose_locked(fd);
      pthread_mutex_unlock(&pf_regions_lock);
      return ret;
    }
    if ((ret = pf_att_proc_claim(a)) < 0) {
      if (a->live_fd >= 0 && a->live_fd != fd)
        close(a->live_fd);
      a->fd = a->live_fd = -1;
      if (fd >= 0)
        close(fd);
      pthread_mutex_unlock(&pf_regions_lock);
      return ret;
    }
  }
  a->refs++;
  rg->att = a;
  rg->slot = i;
  AO_store_release(&pf_regions[i], (AO_t)rg);
  if ((AO_t)i >= AO_load(&pf_regions_n))
    AO_store_release(&pf_regions_n, (AO_t)i + 1);
  pthread_mutex_unlock(&pf_regions_lock);
  return 0;
}

static void *
pf_fail_null(int err)
{
  errno = err;
  return NULL;
}

/* The creator of a region object still at work on its layout?  The lock
 * mechanism: it holds the creator's byte (src/os.h) from before it sized
 * the object until the layout is written; else its pid and start time. */
static int
pf_region_creator_busy(int fd, const struct pf_rgn_hdr *h)
{
#ifdef PF_HAVE_OBJECT_LOCKS
  (void)h;
  return pf_os_lock_held(fd, PF_OS_CREATOR_BYTE);
#elif defined(_WIN32)
  (void)fd;
  return h->init_pid == 0 || pf_os_pid_alive((int)h->init_pid);
#else
  uint64_t t;
  (void)fd;
  return h->init_pid == 0 || pf_os_proc_start(h->init_pid, &t) != 0;
#endif
}

#ifdef _WIN32
/* Windows: create (O_EXCL) or open the named mapping for `name` (see the
 * top of this file), then as below: 0 and *mapp, *lenp, *g; or -errno. */
static int
pf_region_shm(const char *name, int oflag, mode_t mode, const pfutex_region_attr_t *attr,
              size_t size, int kind, void **mapp, size_t *lenp, struct pf_geom *g, int *createdp,
              int *fdp)
{
  int ret, tries;
  struct pf_rgn_hdr *h;

  (void)mode;                             /* Local\ objects: the session's ACL */
  *createdp = 0;
  *fdp = -1;
  if (oflag & O_CREAT) {
    struct pf_geom want;
    if ((ret = pf_geom_from_attr(attr, size, kind != PF_RGN_ATTACH, &want)) < 0) {
      if (oflag & O_EXCL)
        return ret;
      int gret = ret;
      if ((ret = pf_win32_shm_map(name, 0, 0, mapp, lenp)) < 0)
        return ret == -ENOENT ? gret : ret;
      goto opened;
    }
    ret = pf_win32_shm_map(name, 1, want.total, mapp, lenp);
    if (ret == 0) {
      *g = want;
      ((struct pf_rgn_hdr *)*mapp)->init_pid = (uint32_t)getpid();
      PF_CRASH("region_creating");
      pf_layout_init(*mapp, g, kind);
      *createdp = 1;
      return 0;
    }
    if (ret != -EEXIST || (oflag & O_EXCL))
      return ret;
  }
  if ((ret = pf_win32_shm_map(name, 0, 0, mapp, lenp)) < 0)
    return ret;
opened:
  /* Wait (bounded) for its creator to finish the layout. */
  h = *mapp;
  for (tries = 0;; tries++) {
    if ((ret = pf_layout_check(h, (uint64_t)*lenp, g)) == 0)
      break;
    if (ret != -EINVAL || AO_int_load(&h->magic) != 0 || !pf_region_creator_busy(-1, h)
        || tries == 5000) {
      munmap(*mapp, *lenp);
      return ret == -EINVAL && AO_int_load(&h->magic) == 0 ? -ENOTRECOVERABLE : ret;
    }
    {
      struct timespec ms = { 0, 1000000 };
      nanosleep(&ms, NULL);
    }
  }
  if (kind != PF_RGN_ATTACH && size != 0 && (uint64_t)size > g->user_size) {
    munmap(*mapp, *lenp);
    return -EINVAL;
  }
  if ((kind == PF_RGN_ATTACH) != (h->kind == PF_RGN_ATTACH)) {
    munmap(*mapp, *lenp);
    return -EINVAL;
  }
  return 0;
}
#else
/* Wait (bounded) for an object someone else is creating to be ready. */
static int
pf_region_wait_ready(int fd, struct stat *st, void **mapp, struct pf_geom *g)
{
  int tries;
  for (tries = 0; tries < 5000; tries++) {
    struct pf_rgn_hdr *h;
    void *map;
    int ret;
    if (fstat(fd, st) != 0)
      return -errno;
    if ((uint64_t)st->st_size >= sizeof(struct pf_rgn_hdr)) {
      map = mmap(NULL, (size_t)st->st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      if (map == MAP_FAILED)
        return -errno;
      h = map;
      if ((ret = pf_layout_check(h, (uint64_t)st->st_size, g)) == 0) {
        *mapp = map;
        return 0;
      }
      if (ret != -EINVAL || AO_int_load(&h->magic) != 0) {
        munmap(map, (size_t)st->st_size);
        return ret;
      }
      /* not ready: is its creator still at work?  (Then the magic again:
       * it may have finished meanwhile.) */
      if (!pf_region_creator_busy(fd, h) && AO_int_load_acquire(&h->magic) == 0) {
        munmap(map, (size_t)st->st_size);
        return -ENOTRECOVERABLE;          /* it died creating it: unlink, recreate */
      }
      munmap(map, (size_t)st->st_size);
    }
    {
      struct timespec ms = { 0, 1000000 };
      nanosleep(&ms, NULL);
    }
  }
  return -ENOTRECOVERABLE;
}

/* Create (O_EXCL) or open the shm object `name` holding a region of kind
 * `kind`: 0 and *mapp, *lenp, *g and the object's descriptor *fdp (to keep:
 * src/os.h); or -errno. */
static int
pf_region_shm(const char *name, int oflag, mode_t mode, const pfutex_region_attr_t *attr,
              size_t size, int kind, void **mapp, size_t *lenp, struct pf_geom *g, int *createdp,
              int *fdp)
{
  struct stat st;
  int fd, ret, created = 0;

  *createdp = 0;
  *fdp = -1;
  if (oflag & O_CREAT) {
    struct pf_geom want;
    if ((ret = pf_geom_from_attr(attr, size, kind != PF_RGN_ATTACH, &want)) < 0) {
      /* no size to create with: fine if it exists already (O_CREAT alone) */
      if (oflag & O_EXCL)
        return ret;
      if ((fd = shm_open(name, O_RDWR, 0)) < 0)
        return errno == ENOENT ? ret : -errno;
      goto opened;
    }
    fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, mode);
    if (fd >= 0) {
      created = 1;
      *g = want;
#ifdef PF_HAVE_OBJECT_LOCKS
      /* the creator's byte, before the object has a size (src/os.h) */
      if ((ret = pf_os_lock_claim(fd, PF_OS_CREATOR_BYTE)) < 0) {
        shm_unlink(name);
        close(fd);
        return ret == -EBUSY ? -ENOTRECOVERABLE : ret;
      }
#endif
      if (ftruncate(fd, (off_t)want.total) != 0) {
        ret = -errno;
        shm_unlink(name);
        close(fd);
        return ret == -EFBIG || ret == -EINVAL ? -ENOMEM : ret;
      }
    } else if (errno != EEXIST || (oflag & O_EXCL)) {
      return -errno;
    }
  }
  if (!created && (fd = shm_open(name, O_RDWR, 0)) < 0)
    return -errno;
opened:
  (void)fcntl(fd, F_SETFD, FD_CLOEXEC);   /* exec drops the record locks (src/os.h) */
  if (created) {
    void *map = mmap(NULL, (size_t)g->total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (map == MAP_FAILED) {
      ret = -errno;
      shm_unlink(name);
      close(fd);
      return ret;
    }
    ((struct pf_rgn_hdr *)map)->init_pid = (uint32_t)getpid();
    PF_CRASH("region_creating");
    pf_layout_init(map, g, kind);
#ifdef PF_HAVE_OBJECT_LOCKS
    pf_os_lock_release(fd, PF_OS_CREATOR_BYTE);
#endif
    *mapp = map;
    *lenp = (size_t)g->total;
    *createdp = 1;
    *fdp = fd;
    return 0;
  }
  ret = pf_region_wait_ready(fd, &st, mapp, g);
  if (ret < 0) {
    pf_fd_dispose(fd);
    return ret;
  }
  *lenp = (size_t)st.st_size;
  if (kind != PF_RGN_ATTACH && size != 0 && (uint64_t)size > g->user_size)
    ret = -EINVAL;
  else if ((kind == PF_RGN_ATTACH) != (((struct pf_rgn_hdr *)*mapp)->kind == PF_RGN_ATTACH))
    ret = -EINVAL;                        /* a named region is no attach table, and back */
  if (ret < 0) {
    munmap(*mapp, *lenp);
    pf_fd_dispose(fd);
    return ret;
  }
  *fdp = fd;
  return 0;
}

#endif

pfutex_region_t *
pfutex_region_open_attr(const char *name, size_t size, int oflag, mode_t mode,
                        const pfutex_region_attr_t *attr)
{
  struct pf_geom g;
  struct pf_region *rg;
  void *map;
  size_t len;
  int ret, fd, created;

  if (!name || (oflag & O_ACCMODE) != O_RDWR || (oflag & ~(O_ACCMODE | O_CREAT | O_EXCL)))
    return pf_fail_null(EINVAL);
  if ((ret = pf_region_shm(name, oflag, mode, attr, size, PF_RGN_NAMED, &map, &len, &g,
                           &created, &fd)) < 0)
    return pf_fail_null(-ret);
  if (!(rg = pf_region_new(map, len, &g, PF_RGN_NAMED))) {
    pf_fd_dispose(fd);
    ret = -ENOMEM;
  } else if ((ret = pf_region_register(rg, fd, name, mode, &g)) == 0) {
    return rg;                            /* (fd is the attachment's now) */
  } else {
    pf_region_free(rg);
  }
  /* failed after all: a region this call created does not stay behind */
  munmap(map, len);
  if (created)
    shm_unlink(name);
  return pf_fail_null(-ret);
}

pfutex_region_t *
pfutex_region_open(const char *name, size_t size, int oflag, mode_t mode)
{
  return pfutex_region_open_attr(name, size, oflag, mode, NULL);
}

/* An anonymous region's memory: a descriptor where the record-lock
 * liveness needs one (a memfd, or a shm object unlinked at once), shared
 * with fork children as the mapping is. */
static int
pf_anon_map(uint64_t total, void **mapp, int *fdp)
{
  void *map;
  int fd = -1;
#ifdef PF_HAVE_OBJECT_LOCKS
# if defined(HAVE_MEMFD_CREATE) && defined(__linux__)   /* NetBSD's memfds refuse record locks */
  fd = memfd_create("pfutex-region", MFD_CLOEXEC);
# else
  {
    static volatile AO_t seq;
    char name[64];
    int tries;
    for (tries = 0; tries < 100 && fd < 0; tries++) {
      snprintf(name, sizeof name, "/pfutex-anon.%ld.%lu", (long)getpid(),
               (unsigned long)AO_fetch_and_add1(&seq));
      fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
      if (fd >= 0)
        shm_unlink(name);
      else if (errno != EEXIST)
        break;
    }
  }
# endif
  if (fd < 0)
    return errno == EMFILE || errno == ENFILE ? -errno : -ENOMEM;
  (void)fcntl(fd, F_SETFD, FD_CLOEXEC);
  if (ftruncate(fd, (off_t)total) != 0) {
    close(fd);
    return -ENOMEM;
  }
  map = mmap(NULL, (size_t)total, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
#else
  map = mmap(NULL, (size_t)total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
#endif
  if (map == MAP_FAILED) {
    if (fd >= 0)
      close(fd);
    return -ENOMEM;
  }
  *mapp = map;
  *fdp = fd;
  return 0;
}

pfutex_region_t *
pfutex_region_anon_attr(size_t size, const pfutex_region_attr_t *attr)
{
  struct pf_geom g;
  struct pf_region *rg;
  void *map;
  int ret, fd;

  if ((ret = pf_geom_from_attr(attr, size, 1, &g)) < 0)
    return pf_fail_null(-ret);
  if ((ret = pf_anon_map(g.total, &map, &fd)) < 0)
    return pf_fail_null(-ret);
  pf_layout_init(map, &g, PF_RGN_ANON);
  if (!(rg = pf_region_new(map, (size_t)g.total, &g, PF_RGN_ANON))) {
    munmap(map, (size_t)g.total);
    if (fd >= 0)
      close(fd);
    return pf_fail_null(ENOMEM);
  }
  if ((ret = pf_region_register(rg, fd, NULL, 0600, &g)) < 0) {
    munmap(map, (size_t)g.total);
    pf_region_free(rg);
    return pf_fail_null(-ret);
  }
  return rg;
}

pfutex_region_t *
pfutex_region_anon(size_t size)
{
  return pfutex_region_anon_attr(size, NULL);
}

/* The name of the table beside the object open as fd. */
static int
pf_attach_name(int fd, char *buf, size_t len, struct stat *st)
{
#ifdef _WIN32
  (void)fd; (void)buf; (void)len; (void)st;
  return -ENOTSUP;                          /* no inode numbers: see the top of this file */
#endif
  if (fstat(fd, st) != 0)
    return -errno;
  if (!S_ISREG(st->st_mode))
    return -EINVAL;
  snprintf(buf, len, "/pfutex.%llx.%llx", (unsigned long long)st->st_dev,
           (unsigned long long)st->st_ino);
  return 0;
}

pfutex_region_t *
pfutex_region_attach_attr(int fd, void *addr, size_t len, const pfutex_region_attr_t *attr)
{
  char name[64];
  struct stat st;
  struct pf_geom g;
  struct pf_region *rg;
  void *map;
  size_t mlen;
  int ret, created, tfd;

  if (!addr || len < 4 || ((uintptr_t)addr & 3u) || (uintptr_t)addr + len < (uintptr_t)addr)
    return pf_fail_null(EINVAL);
  if ((ret = pf_attach_name(fd, name, sizeof name, &st)) < 0)
    return pf_fail_null(-ret);
  if ((uint64_t)len > (uint64_t)st.st_size)
    return pf_fail_null(EINVAL);
  if ((ret = pf_region_shm(name, O_RDWR | O_CREAT, st.st_mode & 0666, attr, 0, PF_RGN_ATTACH,
                           &map, &mlen, &g, &created, &tfd)) < 0)
    return pf_fail_null(-ret);
  if (!(rg = pf_region_new(map, mlen, &g, PF_RGN_ATTACH))) {
    munmap(map, mlen);
    pf_fd_dispose(tfd);
    return pf_fail_null(ENOMEM);
  }
  rg->user = addr;
  rg->user_len = len;
  rg->lo = (uintptr_t)addr;
  rg->span = len & ~(size_t)3;
  rg->key_base = (uintptr_t)addr;           /* the key is the offset in the object */
  if ((ret = pf_region_register(rg, tfd, name, st.st_mode & 0666, &g)) < 0) {
    munmap(map, mlen);
    pf_region_free(rg);
    return pf_fail_null(-ret);
  }
  return rg;
}

pfutex_region_t *
pfutex_region_attach(int fd, void *addr, size_t len)
{
  return pfutex_region_attach_attr(fd, addr, len, NULL);
}

int
pfutex_region_attach_unlink(int fd)
{
  char name[64];
  struct stat st;
  int ret;
  if ((ret = pf_attach_name(fd, name, sizeof name, &st)) < 0) {
    errno = -ret;
    return -1;
  }
  ret = shm_unlink(name);
#ifdef PF_HAVE_LIVE_LOCK
  if (ret == 0)
    (void)pf_live_file_unlink(name);
#endif
  return ret;
}

void *
pfutex_region_addr(pfutex_region_t *r)
{
  return r ? r->user : NULL;
}

size_t
pfutex_region_size(pfutex_region_t *r)
{
  return r ? r->user_len : 0;
}

/* Close a handle.  The attachment ends with its last handle: the entry is
 * given up, the descriptors closed (which drops the record locks), the
 * table's mapping unmapped.  Until then the mapping that holds the table
 * stays, even if its handle closed first. */
int
pfutex_region_close(pfutex_region_t *r)
{
  struct pf_rgn_att *a;
  int i;
  pthread_mutex_lock(&pf_regions_lock);
  if (!r || r->slot < 0 || r->slot >= PF_REGIONS_MAX
      || AO_load(&pf_regions[r->slot]) != (AO_t)r) {
    pthread_mutex_unlock(&pf_regions_lock);
    errno = EINVAL;
    return -1;
  }
  a = r->att;
  if (a->refs == 1 && AO_load(&a->waits) != 0) {
    pthread_mutex_unlock(&pf_regions_lock);
    errno = EBUSY;
    return -1;
  }
  AO_store_release(&pf_regions[r->slot], 0);
  /* Using a region's words while another thread closes it is the caller's
   * bug, as munmap is. */
  r->slot = -1;
  r->span = 0;
  if (--a->refs == 0) {
    pf_att_proc_release(a);
    if (a->map != r->map)
      munmap(a->map, a->map_len);
    munmap(r->map, r->map_len);
    if (a->fd >= 0)
      close(a->fd);
    if (a->live_fd >= 0 && a->live_fd != a->fd)
      close(a->live_fd);
    for (i = 0; i < a->nfds; i++)
      close(a->fds[i]);
    a->fd = a->live_fd = -1;
    a->nfds = 0;
    a->id[0] = 0;
  } else if (r->map != a->map) {
    munmap(r->map, r->map_len);
  }
  r->next_free = pf_region_free_list;
  pf_region_free_list = r;
  pthread_mutex_unlock(&pf_regions_lock);
  return 0;
}

int
pfutex_region_unlink(const char *name)
{
  int ret;
  if (!name) {
    errno = EINVAL;
    return -1;
  }
  ret = shm_unlink(name);
#ifdef PF_HAVE_LIVE_LOCK
  if (ret == 0)
    (void)pf_live_file_unlink(name);          /* its liveness file, if any (src/live.c) */
#endif
  return ret;
}

/* ---- Consistency (white-box) ---------------------------------------------------------- */
#ifdef PF_HAVE_EMU
int
pf_region_check(struct pf_region *rg, struct pf_region_stats *st, const char **why)
{
  struct pf_rgn_att *a = rg->att;
  struct pf_table *tab = &a->tab;
  uint32_t i, s;
  *why = "";
  memset(st, 0, sizeof *st);
  for (i = 0; i < tab->nbuckets; i++) {
    struct pf_bucket *b = &tab->buckets[i];
    uint32_t q = 0, w;
    pf_ref r;
    if (pf_bucket_lock(tab, i) < 0) {
      *why = "bucket lock";
      return -ENOTRECOVERABLE;
    }
    if (pf_bucket_ready_locked(tab, i) < 0) {
      pf_bucket_unlock(tab, i);
      *why = "queue unrecoverable";
      return -ENOTRECOVERABLE;
    }
    struct pf_node *n;
    struct pf_walk it;
    pf_walk_start(&it, tab, b);
    while ((n = pf_walk_next(&it, &r)) != NULL) {
      struct pf_key k;
      uint32_t sst;                        /* (checked by pf_bucket_ready_locked) */
      sst = AO_int_load(&n->state);
      k.word = pf_node_keyword(n);
      k.space = n->key_space;
      if (pf_key_bucket(tab, &k) != i || n->bucket != i) {
        pf_bucket_unlock(tab, i);
        *why = "a node in the wrong bucket";
        return -ENOTRECOVERABLE;
      }
      if (sst != PF_W_QUEUED && sst != PF_W_DETACHED) {
        pf_bucket_unlock(tab, i);
        *why = "a node on a queue in a state off the queue";
        return -ENOTRECOVERABLE;
      }
      q++;
    }
    w = AO_int_load(&b->waiters);
    if (w < q) {
      pf_bucket_unlock(tab, i);
      *why = "waiter count below the queue length (a wakeup could be lost)";
      return -ENOTRECOVERABLE;
    }
    st->waiters_excess += w - q;
    st->queued += q;
    pf_bucket_unlock(tab, i);
  }
  for (s = 0; s < tab->nslots; s++) {
    uint32_t o = AO_int_load(&tab->slots[s].owner);
    if (o == 0)
      st->slots_free++;
    else if (pf_region_id_dead(a, o))
      st->slots_dead++;
    else
      st->slots_live++;
  }
  for (s = 0; s < a->nprocs; s++) {
    uint32_t pid = AO_int_load(&a->procs[s].pid);
    if (pid == 0)
      continue;
    if (s + 1 != (a->me & 0xffffu) && !pf_live_held(a->live, a->live_fd, s, &a->procs[s]))
      st->procs_dead++;
    else
      st->procs_live++;
  }
  return 0;
}
#endif

/* ---- Crash points (configure --enable-crash-points) ------------------------------------- */
#ifdef PF_CRASH_POINTS
#include <signal.h>
/* PFUTEX_CRASH_AT=name:k kills this process (SIGKILL) the k-th time (from
 * 1) it reaches crash point `name`; PFUTEX_STOP_AT=name:k stops it there
 * instead (SIGSTOP: a holder stopped inside its critical section, until
 * someone sends SIGCONT).  White-box tests may set the variables below
 * directly. */
const char *pf_crash_name;
long pf_crash_left;
const char *pf_stop_name;
long pf_stop_left;
/* Every crash point, for the tests to enumerate. */
const char *const pf_crash_points[] = {
  "wait_queued", "wait_counted", "push_marked", "wait_pushed", "dequeue_unlinked",
  "wake_locked", "drain_taken", "append_half", "unlink_half", "wake_marked", "wake_unlocked",
  "wake_op_locked", "wake_op_stored", "requeue_locked", "requeue_rekeyed", "requeue_moved",
  "slot_claimed", "slot_freeing", "proc_claiming", "lock_takeover", "rebuild_mid",
  "region_creating", NULL
};
static int pf_crash_env_read;

static void
pf_crash_env(const char *var, const char **name, long *left, char *buf, size_t len)
{
  const char *e = getenv(var);
  if (e && !*name) {
    const char *colon = strchr(e, ':');
    size_t n = colon ? (size_t)(colon - e) : strlen(e);
    if (n < len) {
      memcpy(buf, e, n);
      buf[n] = 0;
      *name = buf;
      *left = colon ? atol(colon + 1) : 1;
    }
  }
}

void
pf_crash_point(const char *name)
{
  if (!pf_crash_env_read) {
    static char cbuf[64], sbuf[64];
    pf_crash_env_read = 1;
    pf_crash_env("PFUTEX_CRASH_AT", &pf_crash_name, &pf_crash_left, cbuf, sizeof cbuf);
    pf_crash_env("PFUTEX_STOP_AT", &pf_stop_name, &pf_stop_left, sbuf, sizeof sbuf);
  }
  if (pf_crash_name && strcmp(name, pf_crash_name) == 0 && --pf_crash_left == 0)
    kill(getpid(), SIGKILL);
  if (pf_stop_name && strcmp(name, pf_stop_name) == 0 && --pf_stop_left == 0)
    kill(getpid(), SIGSTOP);
}
#endif
