/* handle.c - regions: this process's handles and attachments.
 *
 * A handle (pfutex_region_t) is one open of a region, with its mapping; an
 * attachment (struct pf_rgn_att) is this process's one use of a region
 * object, however many handles it opened on it: one table, one process
 * entry (proc.c), one set of descriptors (closing another descriptor of
 * the object would drop the process's record locks: the attachment keeps
 * every descriptor it opened until its last handle closes).  The registry
 * (pf_regions) publishes open handles to the engine's key lookup.
 */
#include "internal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The registry (the engine's key spaces, src/emu.h): open handles, read
 * lock-free by the shared keys' lookup, changed under pf_regions_lock. */
pthread_mutex_t pf_regions_lock = PTHREAD_MUTEX_INITIALIZER;

struct pf_rgn_att *pf_atts;          /* pf_regions_lock */

/* The registry's lock, taken with every signal blocked: a wait may look a
 * table up under it (pf_region_table_by_order, wait.c (M)), and a wait may
 * run in a signal handler, which must never find its own thread holding
 * it.  (Windows: no signals.) */
#ifdef _WIN32
typedef int pf_regions_sigs;
# define pf_regions_lock_all(old) ((void)(old), pthread_mutex_lock(&pf_regions_lock))
# define pf_regions_unlock_all(old) ((void)(old), pthread_mutex_unlock(&pf_regions_lock))
#else
#include <signal.h>
typedef sigset_t pf_regions_sigs;
static void
pf_regions_lock_all(sigset_t *old)
{
  sigset_t all;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, old);
  pthread_mutex_lock(&pf_regions_lock);
}

static void
pf_regions_unlock_all(const sigset_t *old)
{
  pthread_mutex_unlock(&pf_regions_lock);
  pthread_sigmask(SIG_SETMASK, old, NULL);
}
#endif

#ifdef PF_HAVE_EMU
/* Waits of this process in progress on an attachment's words: a close of
 * its last handle meanwhile is EBUSY. */
static void
pf_region_wait_begin(struct pf_table *tab)
{
  AO_fetch_and_add1_full(&pf_tab_att(tab)->waits);
}

static void
pf_region_wait_end(struct pf_table *tab)
{
  AO_fetch_and_sub1_full(&pf_tab_att(tab)->waits);
}

/* How the engine reaches a region's table (src/emu.h, struct pf_table_ops;
 * the functions: internal.h). */
static const struct pf_table_ops pf_region_table_ops = {
  .lock = pf_region_bucket_lock,
  .unlocked = pf_region_bucket_unlocked,
  .rebuild = pf_bucket_rebuild_locked,
  .reap = pf_slot_reap_locked,
  .lock_id = pf_region_lock_id,
  .slot_claim = pf_slot_claim,
  .slot_release = pf_slot_release,
  .slot_mine = pf_slot_mine,
  .next_seq = pf_region_next_seq,
  .wait_begin = pf_region_wait_begin,
  .wait_end = pf_region_wait_end,
  .robust_reg = pf_region_robust_reg,
  .robust_unreg = pf_region_robust_unreg,
  .slice_ns = pf_region_slice_ns,
  .robust_check = pf_region_robust_check,
  .robust_pending = pf_region_robust_pending,
  .peer_id = pf_region_peer_id,
  .slot_give = pf_slot_give,
};

/* The engine's pf_table_by_order (src/emu.h): the table of this process's
 * live attachment whose order it is, a wait begun on it under the
 * registry's lock (so a close that has not ended its attachment yet is
 * EBUSY from here on, and one that has is not found). */
static struct pf_table *
pf_region_table_by_order(uint64_t order)
{
  struct pf_rgn_att *a;
  struct pf_table *t = NULL;
  pthread_mutex_lock(&pf_regions_lock);
  for (a = pf_atts; a; a = a->next) {
    if (a->refs > 0 && a->me != 0 && a->pid == pf_rgn_pid() && a->tab.order == order) {
      pf_region_wait_begin(&a->tab);
      t = &a->tab;
      break;
    }
  }
  pthread_mutex_unlock(&pf_regions_lock);
  return t;
}

#endif

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

/* Keep fd open until attachment a ends.  Where no memory is left for the
 * list, fd stays open for good: closing it would drop the locks. */
static void
pf_att_keep_fd(struct pf_rgn_att *a, int fd)
{
  if (a->nfds == a->fds_cap) {
    int cap = a->fds_cap ? 2 * a->fds_cap : 8;
    int *n = realloc(a->fds, (size_t)cap * sizeof *n);
    if (!n)
      return;
    a->fds = n;
    a->fds_cap = cap;
  }
  a->fds[a->nfds++] = fd;
}

/* Keep fd with the attachment whose object or companion file (live.c) it
 * is a descriptor of, or close it when this process has none
 * (pf_regions_lock held).  Closing any descriptor of a file drops every
 * record lock the process holds on it (src/os.h): its life in the region's
 * eyes. */
static void
pf_fd_dispose_locked(int fd)
{
  char id[80];
  struct pf_rgn_att *a;
  struct stat st, ls;
  if (fd < 0)
    return;
  pf_object_id(fd, NULL, id, sizeof id);
  if ((a = pf_att_find(id)) != NULL) {
    pf_att_keep_fd(a, fd);
    return;
  }
#ifndef _WIN32
  if (fstat(fd, &st) == 0)
    for (a = pf_atts; a; a = a->next)
      if (a->refs > 0 && a->live_fd >= 0 && a->live_fd != a->fd && fstat(a->live_fd, &ls) == 0
          && ls.st_dev == st.st_dev && ls.st_ino == st.st_ino) {
        pf_att_keep_fd(a, fd);
        return;
      }
#else
  (void)st;
  (void)ls;
#endif
  close(fd);
}

void
pf_fd_dispose(int fd)
{
  pf_regions_sigs sigs;
  pf_regions_lock_all(&sigs);
  pf_fd_dispose_locked(fd);
  pf_regions_unlock_all(&sigs);
}

/* A handle for the mapping map (whole region, or an attach table). */
struct pf_region *
pf_region_new(void *map, size_t map_len, const struct pf_geom *g, int kind)
{
  pf_regions_sigs sigs;
  struct pf_region *rg;
  pf_regions_lock_all(&sigs);
  if ((rg = pf_region_free_list) != NULL)
    pf_region_free_list = rg->next_free;
  pf_regions_unlock_all(&sigs);
  if (!rg && !(rg = calloc(1, sizeof *rg)))
    return NULL;
  memset(rg, 0, sizeof *rg);
  rg->map = map;
  rg->map_len = map_len;
  rg->kind = kind;
  if (kind != PF_RGN_ATTACH) {
    rg->user = (char *)map + g->user_off;
    rg->user_len = (size_t)g->user_size;
    rg->ks.lo = (uintptr_t)rg->user;
    rg->ks.span = rg->user_len;
    rg->ks.key_base = (uintptr_t)map;
  }
  rg->slot = -1;
  return rg;
}

void
pf_region_free(struct pf_region *rg)
{
  pf_regions_sigs sigs;
  pf_regions_lock_all(&sigs);
  rg->next_free = pf_region_free_list;
  pf_region_free_list = rg;
  pf_regions_unlock_all(&sigs);
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
  if (live == PF_LIVE_LOCKFILE && (live_fd = pf_live_file_open(name, mode, 1)) < 0) {
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
  {
    volatile unsigned int *ll = a->local_locks;
    uint32_t ln = a->local_n;
    int *fds = a->fds, cap = a->fds_cap;
    memset(a, 0, sizeof *a);
    a->fds = fds;                           /* (emptied when it last ended) */
    a->fds_cap = cap;
    if (ll && ln >= g->nbuckets) {
      memset((void *)ll, 0, ln * sizeof *ll);
    } else {
      free((void *)ll);
      ln = g->nbuckets;
      if (!(ll = calloc(ln, sizeof *ll)))
        ln = 0;
    }
    a->local_locks = ll;
    a->local_n = ln;
  }
  a->next = next;
  if (!a->local_locks) {
    if (live_fd >= 0 && live_fd != fd)
      close(live_fd);
    return NULL;                            /* *err: ENOMEM */
  }
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
#ifdef PF_HAVE_EMU
  a->tab.ops = &pf_region_table_ops;
#endif
  a->tab.order = a->hdr->order;
  return a;
}

/* Attach the handle rg (its object open as fd, or -1) and publish it to
 * the engine's lookup: the process's attachment of the object if it has
 * one (fd is then kept with it), else a new one with an entry of its own. */
int
pf_region_register(struct pf_region *rg, int fd, const char *name, mode_t mode,
                   const struct pf_geom *g)
{
  pf_regions_sigs sigs;
  char id[80];
  struct pf_rgn_att *a;
  int i, ret;
  pf_regions_init_once();
  (void)pfutex_backend();                   /* start the backend (the sysv port reclaims) */
#ifdef PF_HAVE_EMU
  pf_table_by_order = pf_region_table_by_order;
#endif
  pf_object_id(fd, name, id, sizeof id);
  pf_regions_lock_all(&sigs);
  {
    int user = 0, free_at = -1;
    rg->internal = pf_shared_opening();
    for (i = 0; i < PF_REGIONS_MAX; i++) {
      const struct pf_region *o = (const struct pf_region *)AO_load(&pf_regions[i]);
      if (!o && free_at < 0)
        free_at = i;
      user += o && !o->internal;
    }
    i = free_at < 0 || (!rg->internal && user >= PF_REGIONS_USER) ? PF_REGIONS_MAX : free_at;
  }
  if (i == PF_REGIONS_MAX) {
    pf_fd_dispose_locked(fd);
    pf_regions_unlock_all(&sigs);
    return -EMFILE;
  }
  if ((a = pf_att_find(id)) != NULL) {
    pf_fd_dispose_locked(fd);
    if ((a->me == 0 || a->pid != (int)getpid()) && (ret = pf_att_proc_claim(a)) < 0) {
      pf_regions_unlock_all(&sigs);
      return ret;                           /* still no entry for this process */
    }
  } else {
    if (!(a = pf_att_new(id, fd, name, mode, rg->map, rg->map_len, g, &ret))) {
      pf_fd_dispose_locked(fd);
      pf_regions_unlock_all(&sigs);
      return ret;
    }
    if ((ret = pf_att_proc_claim(a)) < 0) {
      if (a->live_fd >= 0 && a->live_fd != fd)
        close(a->live_fd);
      a->fd = a->live_fd = -1;
      if (fd >= 0)
        close(fd);
      pf_regions_unlock_all(&sigs);
      return ret;
    }
  }
  a->refs++;
  rg->att = a;
  rg->slot = i;
  rg->ks.tab = &a->tab;                      /* the engine's key space (src/emu.h) */
  AO_store_release(&pf_regions[i], (AO_t)rg);
  if ((AO_t)i >= AO_load(&pf_regions_n))
    AO_store_release(&pf_regions_n, (AO_t)i + 1);
  pf_regions_unlock_all(&sigs);
#ifdef PF_HAVE_EMU
  /* Under emulation a process with a region open has the user's shared
   * table open too (best effort), so that another process's requeue can
   * move its waiters to a MAP_SHARED mapping's word (src/requeue.c): a
   * waiter moves only to a table its process has an entry in.  Here, not
   * at its first wait: that wait would otherwise sleep in the open before
   * it queues. */
  if (!rg->internal && pf_emu_port)
    pf_shared_prepare();
#endif
  return 0;
}

/* Close a handle (pfutex_region_close): 0, -EINVAL (not an open handle),
 * -EBUSY (its attachment's last handle, with waits in progress).  The
 * attachment ends with its last handle: the entry is given up, the
 * descriptors closed (which drops the record locks), the table's mapping
 * unmapped.  Until then the mapping that holds the table stays, even if
 * its handle closed first. */
int
pf_region_unregister(struct pf_region *r)
{
  pf_regions_sigs sigs;
  struct pf_rgn_att *a;
  int i;
  pf_regions_lock_all(&sigs);
  if (!r || r->slot < 0 || r->slot >= PF_REGIONS_MAX
      || AO_load(&pf_regions[r->slot]) != (AO_t)r) {
    pf_regions_unlock_all(&sigs);
    return -EINVAL;
  }
  a = r->att;
  if (a->refs == 1 && AO_load(&a->waits) != 0) {
    pf_regions_unlock_all(&sigs);
    return -EBUSY;
  }
  AO_store_release(&pf_regions[r->slot], 0);
  /* Using a region's words while another thread closes it is the caller's
   * bug, as munmap is. */
  r->slot = -1;
  r->ks.span = 0;
  if (--a->refs == 0) {
#ifdef PF_HAVE_EMU
    pf_rgn_robust_drop_all(a);
#endif
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
  pf_regions_unlock_all(&sigs);
  return 0;
}
