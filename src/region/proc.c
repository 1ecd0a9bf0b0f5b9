/* proc.c - regions: process entries, lock ids, and which ids are alive.
 *
 * Each process attached to a region holds an entry in its process table,
 * and the OS vouches that the entry's owner is alive (src/os.h: a record
 * lock on byte e of the region's object, which the kernel drops when the
 * owner dies or execs; Windows: pid and creation time; live.c).  The
 * owner's lock id, (generation & 0xffff) << 16 | (entry + 1), marks the
 * bucket locks it holds and the slots it owns, so anyone can tell whether
 * the process behind a lock or a slot is alive: the entry must still hold
 * that generation and the OS must still hold its lock.  Never a guess: a
 * stopped or starved process stays alive, a reused pid means nothing.  A
 * process has one attachment (struct pf_rgn_att, handle.c) per region
 * object, so one entry per object.  A fork child is another process: it
 * claims entries of its own (the atfork handler below).
 */
#include "internal.h"

#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* This process's pid, kept current across fork (glibc's getpid is a system
 * call; the liveness checks are on the wake path): internal.h, pf_rgn_pid. */
volatile int pf_rgn_self_pid;

/* This process's random number, written beside its pid in every entry it
 * takes (region.h): a pid and a nonce that match in two regions' entries,
 * both alive by the OS's word, are one process (a pid alone could be
 * another pid namespace's).  New in every fork child. */
static uint32_t pf_rgn_self_nonce;

static void
pf_rgn_nonce_make(void)
{
  struct timespec a, b;
  uint64_t x;
  int here;
  (void)clock_gettime(CLOCK_REALTIME, &a);
  (void)clock_gettime(CLOCK_MONOTONIC, &b);
  x = ((uint64_t)a.tv_sec << 32) ^ (uint64_t)a.tv_nsec ^ ((uint64_t)b.tv_nsec << 20)
      ^ ((uint64_t)(uint32_t)getpid() << 40) ^ (uint64_t)(uintptr_t)&here;
  x += 0x9e3779b97f4a7c15ull;                 /* splitmix64's finaliser */
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  x ^= x >> 31;
  pf_rgn_self_nonce = (uint32_t)x ? (uint32_t)x : 1u;
}

/* ---- Lock ids and liveness ------------------------------------------------------- */

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

/* Is the process behind lock id `id` gone (or is id garbage)?  Only the OS
 * says a process is gone (src/os.h); a generation that moved on says the
 * OS said so to the entry's next owner. */
int
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

/* The lock id in table `to` of the live process behind lock id `id` in
 * table `from` (a requeue between them moves its waiter: src/requeue.c),
 * or 0 when that process has no live entry there.  Region bytes: pid and
 * nonce must match, read around the generation, and the OS must say the
 * entry's owner is alive; the waiter checks the slot it is given as its
 * own too (wait.c (M)). */
uint32_t
pf_region_peer_id(const struct pf_table *from, uint32_t id, const struct pf_table *to)
{
  const struct pf_rgn_att *a = pf_tab_att(from), *b = pf_tab_att(to);
  uint32_t e = id & 0xffffu, pid, nonce, f;
  if (e == 0 || e > a->nprocs || pf_region_id_dead(a, id))
    return 0;
  if (id == a->me && a->pid == pf_rgn_pid())
    return b->pid == pf_rgn_pid() ? b->me : 0;      /* this process's */
  pid = AO_int_load_acquire(&a->procs[e - 1].pid);
  nonce = AO_int_load(&a->procs[e - 1].nonce);
  if (pid == 0 || (pid & PF_RGN_CLAIMING) || nonce == 0 || pf_region_id_dead(a, id))
    return 0;
  for (f = 0; f < b->nprocs; f++) {
    const struct pf_rgn_proc *p = &b->procs[f];
    uint32_t gen, id2;
    if (AO_int_load(&p->pid) != pid || AO_int_load(&p->nonce) != nonce)
      continue;
    gen = AO_int_load_acquire(&p->gen);
    id2 = ((gen & 0xffffu) << 16) | (f + 1);
    if (AO_int_load_acquire(&p->pid) != pid || AO_int_load(&p->nonce) != nonce)
      continue;                                     /* changing hands */
    if (!pf_region_id_dead(b, id2))
      return id2;
  }
  return 0;
}

/* ---- Process entries -------------------------------------------------------------- */

/* Take an entry of the process table: one the OS says nobody alive owns
 * (src/os.h).  Not in a critical section: opens and fork children. */
int
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
    AO_int_store(&p->nonce, pf_rgn_self_nonce);
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

void
pf_att_proc_release(struct pf_rgn_att *a)
{
  uint32_t e = a->me & 0xffffu;
  if (a->me && a->pid == (int)getpid() && e <= a->nprocs) {
    (void)AO_int_compare_and_swap_full(&a->procs[e - 1].pid, (uint32_t)a->pid, 0);
    pf_live_release(a->live, a->live_fd, e - 1, &a->procs[e - 1]);
  }
  a->me = 0;
}

/* fork(): the child is another process: an entry of its own in every
 * region it inherited (the OS gave it none of its parent's record locks;
 * none left: its waits there fail with ENOMEM). */
static void
pf_regions_atfork_child(void)
{
  struct pf_rgn_att *a;
  pf_rgn_self_pid = (int)getpid();
  pf_rgn_nonce_make();
  pthread_mutex_init(&pf_regions_lock, NULL);
  for (a = pf_atts; a; a = a->next) {
    if (a->refs > 0) {
      AO_store(&a->waits, 0);
      AO_store(&a->local_locking, 0);   /* the forking thread holds no bucket lock */
      if (a->local_locks)
        memset((void *)a->local_locks, 0, a->local_n * sizeof *a->local_locks);
      (void)pf_att_proc_claim(a);
    }
  }
}

static pthread_once_t pf_regions_once = PTHREAD_ONCE_INIT;
static void
pf_regions_init(void)
{
  pf_rgn_self_pid = (int)getpid();
  pf_rgn_nonce_make();
  (void)pthread_atfork(NULL, NULL, pf_regions_atfork_child);
}

void
pf_regions_init_once(void)
{
  pthread_once(&pf_regions_once, pf_regions_init);
}
