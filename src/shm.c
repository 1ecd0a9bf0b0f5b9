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
 * process table (pid and generation).  Its lock id, (generation & 0xffff)
 * << 16 | (entry + 1), marks the bucket locks it holds and the slots it
 * owns, so anyone can tell whether the process behind a lock or a slot is
 * alive: the entry must still hold that generation, and the pid must be
 * alive (pf_os_pid_alive: kill(pid, 0) on POSIX systems; a port where the
 * OS needs help supplies its own, src/os.h).  A pid that is reused by an
 * unrelated process while the region still names it would keep the dead
 * process's slots until that pid exits too: README, limits.
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
 * the last close removes it (README, Windows).  pfutex_region_unlink
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

static struct pf_region *
pf_tab_region(const struct pf_table *tab)
{
  return tab->rgn;
}

uint32_t
pf_region_lock_id(const struct pf_table *tab)
{
  return pf_tab_region(tab)->me;
}

/* The locks-in-flight count of the process behind lock id `id` (NULL for
 * an id that names no entry). */
volatile unsigned int *
pf_region_locking(const struct pf_table *tab, uint32_t id)
{
  const struct pf_region *rg = pf_tab_region(tab);
  uint32_t e = id & 0xffffu;
  if (e == 0 || e > rg->nprocs)
    return NULL;
  return &rg->procs[e - 1].locking;
}

/* Is the process behind lock id `id` gone (or is id garbage)? */
static int
pf_region_id_dead(const struct pf_region *rg, uint32_t id)
{
  uint32_t e = id & 0xffffu, pid, gen;
  const struct pf_rgn_proc *p;
  if (e == 0 || e > rg->nprocs)
    return 1;
  if (id == rg->me && rg->pid == pf_rgn_pid())
    return 0;
  p = &rg->procs[e - 1];
  pid = AO_int_load(&p->pid);
  gen = AO_int_load(&p->gen);
  if (pid == 0 || (pid & PF_RGN_CLAIMING) || (gen & 0xffffu) != id >> 16)
    return 1;
  return !pf_os_pid_alive((int)pid);
}

int
pf_region_lock_holder_dead(const struct pf_table *tab, uint32_t holder)
{
  return pf_region_id_dead(pf_tab_region(tab), holder);
}

int
pf_node_owner_alive(const struct pf_table *tab, const struct pf_node *n)
{
  uint32_t o;
  if (!tab->slots)
    return 1;
  o = AO_int_load(&n->owner);
  return o != 0 && !pf_region_id_dead(pf_tab_region(tab), o);
}

uint32_t pf_region_next_seq(struct pf_table *tab);
uint32_t
pf_region_next_seq(struct pf_table *tab)
{
  return AO_int_fetch_and_add_full(&pf_tab_region(tab)->hdr->seq, 1);
}

void
pf_region_wait_begin(struct pf_table *tab)
{
  AO_fetch_and_add1_full(&pf_tab_region(tab)->waits);
}

void
pf_region_wait_end(struct pf_table *tab)
{
  AO_fetch_and_sub1_full(&pf_tab_region(tab)->waits);
}

/* ---- Slots ----------------------------------------------------------------------- */

/* Free n if its owner is still `owner` (this process's lock id for its
 * own slot, or a dead process's found under the slot's bucket lock): its
 * state first, then the owner word, with a CAS, so a slot that someone else
 * freed and claimed meanwhile stays theirs and is never written. */
void
pf_slot_free(struct pf_table *tab, struct pf_node *n, uint32_t owner)
{
  (void)tab;
  if (owner == 0 || AO_int_load(&n->owner) != owner)
    return;
  n->linked = 0;
  n->pushed = 0;
  n->counted = 0;
  AO_int_store(&n->state, PF_W_IDLE);
  PF_CRASH("slot_freeing");
  (void)AO_int_compare_and_swap_full(&n->owner, owner, 0);
}

/* Does this process still own slot n (a corrupt region may have freed it
 * under us)? */
int
pf_slot_mine(const struct pf_table *tab, const struct pf_node *n)
{
  return AO_int_load(&n->owner) == pf_tab_region(tab)->me;
}

#ifdef PF_HAVE_EMU
/* Reclaim dead processes' slots: those on no queue at once, those that may
 * be on one under their bucket's lock. */
void
pf_region_scavenge(struct pf_region *rg)
{
  struct pf_table *tab = &rg->tab;
  uint32_t s;
  for (s = 0; s < tab->nslots; s++) {
    struct pf_node *n = &tab->slots[s];
    uint32_t o = AO_int_load(&n->owner), st, i;
    if (o == 0 || !pf_region_id_dead(rg, o))
      continue;
    st = AO_int_load(&n->state);
    if (st != PF_W_QUEUED && st != PF_W_DETACHED) {
      if (AO_int_load(&n->owner) == o) {
        AO_int_store(&n->state, PF_W_IDLE);
        (void)AO_int_compare_and_swap_full(&n->owner, o, 0);
      }
      continue;
    }
    i = AO_int_load(&n->bucket);
    if (i >= tab->nbuckets)
      i = 0;
    if (pf_bucket_lock(tab, i) < 0)
      continue;
    (void)pf_bucket_ready_locked(tab, i);
    if (AO_int_load(&n->owner) == o && AO_int_load(&n->bucket) == i) {
      struct pf_bucket *b = &tab->buckets[i];
      if (n->linked)
        pf_node_unlink_locked(tab, b, n);
      else
        pf_node_uncount_locked(b, n);     /* never pushed */
      pf_slot_free(tab, n, o);
    }
    pf_bucket_unlock(tab, i);
  }
}
#endif

int
pf_slot_claim(struct pf_table *tab, pf_ref *ref)
{
  struct pf_region *rg = pf_tab_region(tab);
  uint32_t hint, k, round;
  if (rg->me == 0 || rg->pid != pf_rgn_pid())
    return -ENOMEM;                         /* no process entry (they ran out) */
  for (round = 0; round < 2; round++) {
    hint = AO_int_load(&rg->hdr->hint);
    for (k = 0; k < tab->nslots; k++) {
      uint32_t s = (hint + k) % tab->nslots;
      struct pf_node *n = &tab->slots[s];
      if (AO_int_load(&n->owner) == 0 && AO_int_compare_and_swap_full(&n->owner, 0, rg->me)) {
        PF_CRASH("slot_claimed");
        AO_int_store(&n->state, PF_W_IDLE);
        n->linked = n->pushed = n->counted = 0;
        AO_int_store(&rg->hdr->hint, (s + 1) % tab->nslots);
        *ref = s + 1;
        return 0;
      }
    }
#ifdef PF_HAVE_EMU
    if (round == 0)
      pf_region_scavenge(rg);
#endif
  }
  return -ENOMEM;
}

/* ---- Process entries -------------------------------------------------------------- */

/* Is entry e held by another open handle of this process on the same
 * object? */
static int
pf_region_entry_ours(const struct pf_region *self, uint32_t e)
{
  AO_t n = AO_load(&pf_regions_n), i;
  for (i = 0; i < n; i++) {
    struct pf_region *rg = (struct pf_region *)AO_load(&pf_regions[i]);
    if (rg && rg != self && rg->hdr->order == self->hdr->order && (rg->me & 0xffffu) == e + 1
        && rg->pid == (int)getpid())
      return 1;
  }
  return 0;
}

/* Take an entry of the process table: a free one, one whose process is
 * dead, or one our own pid left from before an exec. */
static int
pf_region_proc_claim(struct pf_region *rg)
{
  uint32_t self = (uint32_t)getpid(), e;
  rg->me = 0;
  rg->pid = (int)self;
  for (e = 0; e < rg->nprocs; e++) {
    struct pf_rgn_proc *p = &rg->procs[e];
    uint32_t pid = AO_int_load(&p->pid), gen;
    if (pid != 0) {
      if (pid & PF_RGN_CLAIMING) {
        if (pf_os_pid_alive((int)(pid & ~PF_RGN_CLAIMING)))
          continue;                          /* being claimed by a live process */
      } else if (pid == self) {
        if (pf_region_entry_ours(rg, e))
          continue;                          /* else: our image before an exec */
      } else if (pf_os_pid_alive((int)pid)) {
        continue;
      }
    }
    if (!AO_int_compare_and_swap_full(&p->pid, pid, PF_RGN_CLAIMING | self))
      continue;
    PF_CRASH("proc_claiming");
    gen = AO_int_load(&p->gen) + 1;
    if ((gen & 0xffffu) == 0)
      gen++;
    AO_int_store(&p->gen, gen);
    AO_int_store(&p->locking, 0);
    AO_int_store_release(&p->pid, self);
    rg->me = ((gen & 0xffffu) << 16) | (e + 1);
    return 0;
  }
  return -ENOMEM;
}

static void
pf_region_proc_release(struct pf_region *rg)
{
  uint32_t e = rg->me & 0xffffu;
  if (rg->me && rg->pid == (int)getpid() && e <= rg->nprocs)
    (void)AO_int_compare_and_swap_full(&rg->procs[e - 1].pid, (uint32_t)rg->pid, 0);
  rg->me = 0;
}

/* fork(): the child is another process: an entry of its own in every
 * region it inherited (none left: its waits there fail with ENOMEM). */
static void
pf_regions_atfork_child(void)
{
  AO_t n = AO_load(&pf_regions_n), i;
  pf_rgn_self_pid = (int)getpid();
  pthread_mutex_init(&pf_regions_lock, NULL);
  for (i = 0; i < n; i++) {
    struct pf_region *rg = (struct pf_region *)AO_load(&pf_regions[i]);
    if (rg) {
      AO_store(&rg->waits, 0);
      (void)pf_region_proc_claim(rg);
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
      || h->backend != pf_region_backend_code())
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
  return 0;
}

/* ---- Handles ------------------------------------------------------------------------- */

/* Closed handles, kept for reuse: a handle stays valid memory after close,
 * so closing it again is EINVAL, not a use after free (as a closed file
 * descriptor, it may name a later region once reused). */
static struct pf_region *pf_region_free_list;      /* pf_regions_lock */

static struct pf_region *
pf_region_new(void *map, size_t map_len, const struct pf_geom *g, int kind)
{
  struct pf_region *rg;
  unsigned int bits = 0;
  pthread_mutex_lock(&pf_regions_lock);
  if ((rg = pf_region_free_list) != NULL)
    pf_region_free_list = rg->next_free;
  pthread_mutex_unlock(&pf_regions_lock);
  if (!rg && !(rg = calloc(1, sizeof *rg)))
    return NULL;
  memset(rg, 0, sizeof *rg);
  while ((1u << bits) < g->nbuckets)
    bits++;
  rg->map = map;
  rg->map_len = map_len;
  rg->kind = kind;
  rg->hdr = map;
  rg->procs = (struct pf_rgn_proc *)(void *)((char *)map + g->procs_off);
  rg->nprocs = g->nprocs;
  rg->tab.buckets = (struct pf_bucket *)(void *)((char *)map + g->buckets_off);
  rg->tab.nbuckets = g->nbuckets;
  rg->tab.bits = bits;
  rg->tab.slots = (struct pf_node *)(void *)((char *)map + g->slots_off);
  rg->tab.nslots = g->nslots;
  rg->tab.rgn = rg;
  rg->tab.order = rg->hdr->order;
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

/* Claim an entry and publish the region to the engine's lookup. */
static int
pf_region_register(struct pf_region *rg)
{
  int i, ret;
  pthread_once(&pf_regions_once, pf_regions_init);
  (void)pfutex_backend();                   /* start the backend (the sysv port reclaims) */
  pthread_mutex_lock(&pf_regions_lock);
  for (i = 0; i < PF_REGIONS_MAX; i++)
    if (AO_load(&pf_regions[i]) == 0)
      break;
  if (i == PF_REGIONS_MAX) {
    pthread_mutex_unlock(&pf_regions_lock);
    return -EMFILE;
  }
  if ((ret = pf_region_proc_claim(rg)) < 0) {
    pthread_mutex_unlock(&pf_regions_lock);
    return ret;
  }
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

#ifdef _WIN32
/* Windows: create (O_EXCL) or open the named mapping for `name` (see the
 * top of this file), then as below: 0 and *mapp, *lenp, *g; or -errno. */
static int
pf_region_shm(const char *name, int oflag, mode_t mode, const pfutex_region_attr_t *attr,
              size_t size, int kind, void **mapp, size_t *lenp, struct pf_geom *g, int *createdp)
{
  int ret, tries;
  struct pf_rgn_hdr *h;

  (void)mode;                             /* Local\ objects: the session's ACL */
  *createdp = 0;
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
    if (ret != -EINVAL || AO_int_load(&h->magic) != 0
        || (h->init_pid != 0 && !pf_os_pid_alive((int)h->init_pid)) || tries == 5000) {
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
      /* not ready: is its creator still at work? */
      if (h->init_pid != 0 && !pf_os_pid_alive((int)h->init_pid)) {
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
 * `kind`: 0 and *mapp, *lenp, *g; or -errno. */
static int
pf_region_shm(const char *name, int oflag, mode_t mode, const pfutex_region_attr_t *attr,
              size_t size, int kind, void **mapp, size_t *lenp, struct pf_geom *g, int *createdp)
{
  struct stat st;
  int fd, ret, created = 0;

  *createdp = 0;
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
    *mapp = map;
    *lenp = (size_t)g->total;
    *createdp = 1;
    close(fd);
    return 0;
  }
  ret = pf_region_wait_ready(fd, &st, mapp, g);
  close(fd);
  if (ret < 0)
    return ret;
  *lenp = (size_t)st.st_size;
  if (kind != PF_RGN_ATTACH && size != 0 && (uint64_t)size > g->user_size) {
    munmap(*mapp, *lenp);
    return -EINVAL;
  }
  if ((kind == PF_RGN_ATTACH) != (((struct pf_rgn_hdr *)*mapp)->kind == PF_RGN_ATTACH)) {
    munmap(*mapp, *lenp);
    return -EINVAL;                       /* a named region is no attach table, and back */
  }
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
  int ret;

  int created;

  if (!name || (oflag & O_ACCMODE) != O_RDWR || (oflag & ~(O_ACCMODE | O_CREAT | O_EXCL)))
    return pf_fail_null(EINVAL);
  if ((ret = pf_region_shm(name, oflag, mode, attr, size, PF_RGN_NAMED, &map, &len, &g,
                           &created)) < 0)
    return pf_fail_null(-ret);
  if (!(rg = pf_region_new(map, len, &g, PF_RGN_NAMED)))
    ret = -ENOMEM;
  else if ((ret = pf_region_register(rg)) == 0)
    return rg;
  /* failed after all: a region this call created does not stay behind */
  munmap(map, len);
  free(rg);
  if (created)
    shm_unlink(name);
  return pf_fail_null(-ret);
}

pfutex_region_t *
pfutex_region_open(const char *name, size_t size, int oflag, mode_t mode)
{
  return pfutex_region_open_attr(name, size, oflag, mode, NULL);
}

pfutex_region_t *
pfutex_region_anon_attr(size_t size, const pfutex_region_attr_t *attr)
{
  struct pf_geom g;
  struct pf_region *rg;
  void *map;
  int ret;

  if ((ret = pf_geom_from_attr(attr, size, 1, &g)) < 0)
    return pf_fail_null(-ret);
  map = mmap(NULL, (size_t)g.total, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED)
    return pf_fail_null(ENOMEM);
  pf_layout_init(map, &g, PF_RGN_ANON);
  if (!(rg = pf_region_new(map, (size_t)g.total, &g, PF_RGN_ANON))) {
    munmap(map, (size_t)g.total);
    return pf_fail_null(ENOMEM);
  }
  if ((ret = pf_region_register(rg)) < 0) {
    munmap(map, (size_t)g.total);
    free(rg);
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
  int ret;

  if (!addr || len < 4 || ((uintptr_t)addr & 3u) || (uintptr_t)addr + len < (uintptr_t)addr)
    return pf_fail_null(EINVAL);
  if ((ret = pf_attach_name(fd, name, sizeof name, &st)) < 0)
    return pf_fail_null(-ret);
  if ((uint64_t)len > (uint64_t)st.st_size)
    return pf_fail_null(EINVAL);
  int created;

  if ((ret = pf_region_shm(name, O_RDWR | O_CREAT, st.st_mode & 0666, attr, 0, PF_RGN_ATTACH,
                           &map, &mlen, &g, &created)) < 0)
    return pf_fail_null(-ret);
  if (!(rg = pf_region_new(map, mlen, &g, PF_RGN_ATTACH))) {
    munmap(map, mlen);
    return pf_fail_null(ENOMEM);
  }
  rg->user = addr;
  rg->user_len = len;
  rg->lo = (uintptr_t)addr;
  rg->span = len & ~(size_t)3;
  rg->key_base = (uintptr_t)addr;           /* the key is the offset in the object */
  if ((ret = pf_region_register(rg)) < 0) {
    munmap(map, mlen);
    free(rg);
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
  return shm_unlink(name);
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

int
pfutex_region_close(pfutex_region_t *r)
{
  if (!r || r->slot < 0 || r->slot >= PF_REGIONS_MAX
      || AO_load(&pf_regions[r->slot]) != (AO_t)r) {
    errno = EINVAL;
    return -1;
  }
  pthread_mutex_lock(&pf_regions_lock);
  if (AO_load(&r->waits) != 0) {
    pthread_mutex_unlock(&pf_regions_lock);
    errno = EBUSY;
    return -1;
  }
  AO_store_release(&pf_regions[r->slot], 0);
  pthread_mutex_unlock(&pf_regions_lock);
  pf_region_proc_release(r);
  munmap(r->map, r->map_len);
  /* Using a region's words while another thread closes it is the caller's
   * bug, as munmap is. */
  r->slot = -1;
  r->span = 0;
  pthread_mutex_lock(&pf_regions_lock);
  r->next_free = pf_region_free_list;
  pf_region_free_list = r;
  pthread_mutex_unlock(&pf_regions_lock);
  return 0;
}

int
pfutex_region_unlink(const char *name)
{
  if (!name) {
    errno = EINVAL;
    return -1;
  }
  return shm_unlink(name);
}

/* ---- Consistency (white-box) ---------------------------------------------------------- */
#ifdef PF_HAVE_EMU
int
pf_region_check(struct pf_region *rg, struct pf_region_stats *st, const char **why)
{
  struct pf_table *tab = &rg->tab;
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
    for (r = b->head; r && (n = pf_node_get(tab, r)) != NULL; r = n->next) {
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
    else if (pf_region_id_dead(rg, o))
      st->slots_dead++;
    else
      st->slots_live++;
  }
  for (s = 0; s < rg->nprocs; s++) {
    uint32_t pid = AO_int_load(&rg->procs[s].pid);
    if (pid == 0)
      continue;
    if ((pid & PF_RGN_CLAIMING) || !pf_os_pid_alive((int)pid))
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
 * 1) it reaches crash point `name`; white-box tests may set the two
 * variables below directly. */
const char *pf_crash_name;
long pf_crash_left;
/* Every crash point, for the tests to enumerate. */
const char *const pf_crash_points[] = {
  "wait_queued", "wait_counted", "push_marked", "wait_pushed", "dequeue_unlinked",
  "wake_locked", "drain_taken", "append_half", "unlink_half", "wake_marked", "wake_unlocked",
  "wake_op_locked", "wake_op_stored", "requeue_locked", "requeue_rekeyed", "requeue_moved",
  "slot_claimed", "slot_freeing", "proc_claiming", "lock_takeover", "rebuild_mid",
  "region_creating", NULL
};
static int pf_crash_env_read;

void
pf_crash_point(const char *name)
{
  if (!pf_crash_env_read) {
    const char *e = getenv("PFUTEX_CRASH_AT");
    pf_crash_env_read = 1;
    if (e && !pf_crash_name) {
      static char buf[64];
      const char *colon = strchr(e, ':');
      size_t n = colon ? (size_t)(colon - e) : strlen(e);
      if (n < sizeof buf) {
        memcpy(buf, e, n);
        buf[n] = 0;
        pf_crash_name = buf;
        pf_crash_left = colon ? atol(colon + 1) : 1;
      }
    }
  }
  if (pf_crash_name && strcmp(name, pf_crash_name) == 0 && --pf_crash_left == 0)
    kill(getpid(), SIGKILL);
}
#endif
