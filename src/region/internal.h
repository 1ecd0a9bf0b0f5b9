/* internal.h - the region layer: what its files share.
 *
 * A region is shared memory with a futex table of its own in it (the
 * layout: region.h).  Under emulation a shared (non-PRIVATE) op on a word
 * of a region is keyed by the word's offset and runs on the region's
 * table, with the same engine code as the private table (src/table.c,
 * wait.c, wake.c, wake_op.c, requeue.c); under the native backend the
 * kernel keys the shared mapping itself and the table is simply unused.
 * The layer builds on the engine (src/emu.h); the engine never includes
 * these headers.  It plugs into the engine in two places: a region's
 * table carries the layer's ops (struct pf_table_ops: the robust lock,
 * the rebuild, the slots; handle.c), and each open handle is one of the
 * engine's key spaces (struct pf_keyspace: its words, keyed by offset in
 * the attachment's table), which the engine's shared keys look up.
 *
 * One file per job:
 *   region.h    the layout of the shared memory, what processes share
 *   internal.h  this header
 *   api.c       the public pfutex_region_* calls
 *   handle.c    handles, attachments, the registry of open handles
 *   object.c    shm objects (POSIX, and Windows' named mappings), anonymous
 *               mappings, the names of attach tables
 *   layout.c    geometry, a new region's layout, the check of one found
 *   proc.c      process entries, lock ids and whether they are alive, fork
 *   live.c      the liveness mechanisms (with the OS's half, src/os.h)
 *   slot.c      the slot pool: claim, free, reap, scavenge, the generation
 *               sweep
 *   lock.c      the robust bucket lock (takeover, the holders' counts) and
 *               the rebuild of a bucket from its slots
 *   robust.c    robust list heads in the region: a dead process's lists
 *               walked by a survivor
 *   check.c     pf_region_check (white-box)
 * lock.c, slot.c, robust.c and check.c are the emulation's only
 * (configure: a port).
 */
#ifndef PF_REGION_INTERNAL_H
#define PF_REGION_INTERNAL_H

#include "region.h"

#include <pthread.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define pf_region pfutex_region        /* the public handle is the layer's region */

/* ---- Attachments and handles ----------------------------------------------- */
/* A region object as this process is attached to it: one per object, however
 * many handles (and mappings) the process has open on it, so every mapping
 * of a word is one futex, one table, one process entry.  The layout of the
 * shared memory itself is in region.h. */
struct pf_rgn_att {
  struct pf_table tab;             /* the region's table (geometry validated once) */
  struct pf_rgn_hdr *hdr;
  struct pf_rgn_proc *procs;
  uint32_t nprocs;
  uint32_t me;                     /* this process's lock id: entry + 1 and the
                                      entry's generation << 16 (0: none) */
  int pid;                         /* the process me was claimed for (fork) */
  int fd;                          /* the object's descriptor (close-on-exec): the
                                      OS's record of who is alive (src/os.h); -1 none */
  uint32_t live;                   /* the region's liveness mechanism (PF_LIVE_*) */
  int live_fd;                     /* the descriptor its record locks are on: fd, a
                                      companion file's (lockfile), or -1 (start) */
  char id[80];                     /* the object's identity ("" : unique) */
  char *map;                       /* the mapping the table is in */
  size_t map_len;
  int refs;                        /* handles (pf_regions_lock) */
  int nfds, fds_cap;               /* more descriptors of its files (the object, the
                                      companion), closed with it: closing one
                                      earlier would drop the record locks */
  int *fds;
  AO_t waits;                      /* waits of this process in progress on it */
  volatile unsigned int *local_locks;  /* per bucket, process-local: held by the one
                                      thread of this process that may take or hold
                                      the bucket's lock (src/region/lock.c) */
  uint32_t local_n;
  AO_t local_locking;              /* its bucket locks in flight, as this process
                                      knows them: the truth its entry's count is
                                      repaired to (src/region/lock.c) */
  struct pf_rgn_att *next;         /* all attachments (pf_regions_lock; never freed) */
};

/* A handle (pfutex_region_t): one open of a region, with its mapping. */
struct pfutex_region {
  struct pf_keyspace ks;           /* first: its futex words [lo, lo + span) here,
                                      keyed address - key_base in tab, the
                                      attachment's (registered in pf_keyspaces) */
  struct pf_rgn_att *att;          /* the object's attachment */
  char *map;                       /* this handle's mapping (the whole region, or for
                                      attach the table beside the user's object) */
  size_t map_len;
  void *user;
  size_t user_len;
  int kind;                        /* PF_RGN_NAMED, _ANON, _ATTACH */
  int slot;                        /* in pf_regions */
  int internal;                    /* the shared table's (not one of the user's) */
  struct pfutex_region *next_free; /* closed handles kept for reuse (handle.c) */
};
/* The registry of open handles is the engine's key spaces (src/emu.h):
 * each handle's ks, its first member. */
#define PF_REGIONS_MAX PF_KEYSPACES_MAX
#define PF_REGIONS_USER 64               /* pfutex_region(3): the user's; the shared
                                            table (shared.c) has a place of its own */
/* The thread of this process opening the shared table (shared.c), if any:
 * its handle is not one of the user's 64. */
int pf_shared_opening(void);
#define pf_regions pf_keyspaces
#define pf_regions_n pf_keyspaces_n

/* The region holding the word [p, p+4), or NULL. */
static inline struct pf_region *
pf_region_find(const void *p)
{
  return (struct pf_region *)(uintptr_t)pf_keyspace_find(p);
}

static inline void
pf_region_key(struct pf_region *rg, const void *p, struct pf_key *k, struct pf_table **tab)
{
  k->word = (uint64_t)((uintptr_t)p - rg->ks.key_base);
  k->space = PF_KEY_REGION;
  *tab = rg->ks.tab;
}

/* ---- Geometry and layout (layout.c) --------------------------------------- */
struct pf_geom {
  uint32_t nbuckets, nslots, nprocs;
  uint64_t procs_off, buckets_off, slots_off, user_off, user_size, total;
};
/* The geometry of a new region from its attributes (a: NULL for the
 * defaults) and user size (with_user: 0 for an attach table): 0, -EINVAL. */
int pf_geom_from_attr(const pfutex_region_attr_t *a, size_t user, int with_user, struct pf_geom *g);
/* Write the layout into fresh (zeroed) memory; the magic goes last. */
void pf_layout_init(void *mem, const struct pf_geom *g, int kind);
/* Check a header against the object's size (untrusted): 0 and *g, or
 * -EINVAL (not a region), -EPROTO (another layout or ABI), or
 * -ENOTRECOVERABLE (inconsistent). */
int pf_layout_check(const struct pf_rgn_hdr *h, uint64_t size, struct pf_geom *g);

/* ---- Objects (object.c) --------------------------------------------------- */
/* Create (O_EXCL) or open the object `name` holding a region of kind
 * `kind`: 0 and *mapp, *lenp, *g, *createdp and the object's descriptor
 * *fdp (to keep: src/os.h; -1 on Windows); or -errno. */
int pf_region_shm(const char *name, int oflag, mode_t mode, const pfutex_region_attr_t *attr,
                  size_t size, int kind, void **mapp, size_t *lenp, struct pf_geom *g, int *createdp,
                  int *fdp);
/* An anonymous region's memory (and descriptor, or -1): 0, or -errno. */
int pf_anon_map(uint64_t total, void **mapp, int *fdp);
/* The name of the attach table beside the object open as fd. */
int pf_attach_name(int fd, char *buf, size_t len, struct stat *st);
/* Remove an object's name (shm_unlink; Windows: object.c). */
int pf_region_obj_unlink(const char *name);

/* ---- The registry, handles and attachments (handle.c) --------------------- */
extern pthread_mutex_t pf_regions_lock;    /* the registry, the attachments, closed handles */
extern struct pf_rgn_att *pf_atts;         /* every attachment (pf_regions_lock; never freed) */
/* Keep fd with the attachment of its file (the object, or a companion
 * file: live.c), or close it when this process has none. */
void pf_fd_dispose(int fd);
/* A handle for the mapping map (whole region, or an attach table), and
 * back to the closed handles. */
struct pf_region *pf_region_new(void *map, size_t map_len, const struct pf_geom *g, int kind);
void pf_region_free(struct pf_region *rg);
/* Attach the handle and publish it: 0, or -errno (fd is the attachment's,
 * or closed, either way).  name and mode: a lockfile region's companion
 * file (live.c). */
int pf_region_register(struct pf_region *rg, int fd, const char *name, mode_t mode,
                       const struct pf_geom *g);
/* pfutex_region_close: 0, -EINVAL, -EBUSY. */
int pf_region_unregister(struct pf_region *r);

/* ---- Processes (proc.c, live.c) ------------------------------------------- */
/* This process's pid, kept current across fork (proc.c). */
extern volatile int pf_rgn_self_pid;
static inline int
pf_rgn_pid(void)
{
  int p = pf_rgn_self_pid;
  if (PF_UNLIKELY(p == 0)) {
    p = (int)getpid();
    pf_rgn_self_pid = p;
  }
  return p;
}

/* A region's table is its attachment's (emu.h, struct pf_table: rgn). */
static inline struct pf_rgn_att *
pf_tab_att(const struct pf_table *tab)
{
  return tab->rgn;
}

/* This process's lock id in tab's region, and whether the process behind
 * a lock id is gone (or the id is garbage). */
uint32_t pf_region_lock_id(const struct pf_table *tab);
int pf_region_lock_holder_dead(const struct pf_table *tab, uint32_t holder);
/* The count of bucket locks held or being taken by the process behind
 * lock id `id`, in its entry (NULL: no such entry). */
volatile unsigned int *pf_region_locking(const struct pf_table *tab, uint32_t id);
/* Is the node's owning process alive (always, for the private table)? */
int pf_node_owner_alive(const struct pf_table *tab, const struct pf_node *n);

/* Is the process behind lock id `id` gone (or is id garbage)? */
int pf_region_id_dead(const struct pf_rgn_att *a, uint32_t id);
/* Take an entry of the process table for this process (0, -ENOMEM, -errno),
 * and give it up. */
int pf_att_proc_claim(struct pf_rgn_att *a);
void pf_att_proc_release(struct pf_rgn_att *a);
/* Once per process, before the first region: the pid, the fork handler. */
void pf_regions_init_once(void);
/* lockfile: the record locks are on a companion regular file (the host's
 * shm objects refuse them): its path for region object `name` (NULL: an
 * anonymous region, a temporary file unlinked at once), opened or created
 * (create: 0600 | mode's read/write bits; else -ENOENT when there is
 * none): a descriptor, or -errno (live.c).  Close one only through
 * pf_fd_dispose: closing any descriptor of a file drops every record lock
 * this process holds on it. */
int pf_live_file_open(const char *name, mode_t mode, int create);
int pf_live_file_unlink(const char *name);
/* The liveness mechanisms (src/os.h): is one built here, and entry e's
 * owner by mechanism `live` (the header's). */
int pf_live_supported(uint32_t live);
/* The mechanism of the regions this process creates (layout.c). */
uint32_t pf_live_default(void);
/* Entry e's owner: become it (0, -EBUSY when a live process is, -errno), is
 * it a live process other than this one (1) or gone (0), give it up. */
int pf_live_claim(uint32_t live, int fd, uint32_t e, struct pf_rgn_proc *p);
int pf_live_held(uint32_t live, int fd, uint32_t e, const struct pf_rgn_proc *p);
void pf_live_release(uint32_t live, int fd, uint32_t e, struct pf_rgn_proc *p);

/* ---- Slots (slot.c) and the lock (lock.c): the table's ops ----------------- */
/* The ops (emu.h, struct pf_table_ops, where each is described):
 * lock, unlocked, rebuild (lock.c), reap, slot_claim, slot_release,
 * slot_mine, next_seq (slot.c), lock_id (proc.c), wait_begin, wait_end
 * (handle.c, which fills the table in). */
int pf_region_bucket_lock(struct pf_table *tab, uint32_t i);
void pf_region_bucket_unlocked(struct pf_table *tab, uint32_t i);
/* Also after a takeover, by the lock itself. */
int pf_bucket_rebuild_locked(struct pf_table *tab, uint32_t i);
int pf_slot_reap_locked(struct pf_table *tab, struct pf_bucket *b, struct pf_node *n, pf_ref ref);
int pf_slot_claim(struct pf_table *tab, pf_ref *ref, int crit);
void pf_slot_release(struct pf_table *tab, struct pf_node *n);
int pf_slot_mine(const struct pf_table *tab, const struct pf_node *n);
void pf_slot_give(struct pf_table *tab, struct pf_node *n, uint32_t owner);
uint32_t pf_region_peer_id(const struct pf_table *from, uint32_t id, const struct pf_table *to);
uint32_t pf_region_next_seq(struct pf_table *tab);
/* Free n if its owner word is still `owner`: this process's lock id, or a
 * dead process's (slot.c). */
void pf_slot_free(struct pf_table *tab, struct pf_node *n, uint32_t owner);
/* Is node ref on bucket b's incoming stack (its lock held)? */
int pf_node_on_stack_locked(struct pf_table *tab, struct pf_bucket *b, pf_ref ref);
/* Robust list heads in the region (robust.c): the table's robust_reg,
 * robust_unreg, slice_ns and robust_check ops; a registration of a dead
 * process walked and freed (slot.c's reclaims call it); this process's
 * own dropped when it leaves the region. */
int pf_region_robust_reg(struct pf_table *tab, uint64_t key_base, uint64_t head_key, uint32_t tid,
                         pf_ref *ref);
void pf_region_robust_unreg(struct pf_table *tab, pf_ref ref, uint64_t head_key, uint32_t tid);
long pf_region_slice_ns(const struct pf_table *tab);
void pf_region_robust_check(struct pf_table *tab);
int pf_region_robust_pending(const struct pf_table *tab, uint32_t tid);
void pf_rgn_robust_reap(struct pf_rgn_att *a, uint32_t s, uint32_t o);
void pf_rgn_robust_drop_all(struct pf_rgn_att *a);
#ifdef PF_HAVE_EMU
/* Entry e's generation wrapped: clear what its earlier owners left. */
void pf_att_sweep_entry(struct pf_rgn_att *a, uint32_t e);
#endif

/* ---- White-box ------------------------------------------------------------- */
/* For the tests (tests/region_*.c; check.c, slot.c): the region's internal
 * consistency, and what its slots and entries hold. */
struct pf_region_stats {
  uint32_t slots_free, slots_live, slots_dead;
  uint32_t procs_live, procs_dead;
  uint32_t queued;                 /* nodes on the queues */
  uint32_t waiters_excess;         /* sum over buckets of waiters - queued (conservative) */
};
/* Lock every bucket (taking over dead holders), check its queue (rebuilt
 * from the slots once if bad), and count: 0, or -ENOTRECOVERABLE with a
 * reason in *why.  Run with no wait of this process in progress. */
int pf_region_check(struct pf_region *rg, struct pf_region_stats *st, const char **why);
/* Free the slots of dead processes (done on demand when the pool runs out). */
void pf_region_scavenge(struct pf_region *rg);

/* The crash points' names and targets, for the kill tests: src/crash.h
 * (included by emu.h). */

#endif
