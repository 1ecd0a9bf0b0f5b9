/* layout.c - regions: the geometry of a region's memory, the layout written
 * into a new one, and the check of one found (region.h; untrusted memory:
 * every field is checked before it becomes an offset or a count).
 */
#include "internal.h"

#include <string.h>
#include <time.h>
#include <unistd.h>

#define PF_RGN_ALIGN(x, a) (((x) + (uint64_t)(a) - 1) & ~((uint64_t)(a) - 1))

static long
pf_page_size(void)
{
  long p = sysconf(_SC_PAGESIZE);
  return p > 0 ? p : 4096;
}

int
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

/* How a new region's processes learn who is alive (src/os.h, live.c):
 * record locks on the object where the host's shm objects take them, else
 * on a companion file (FreeBSD, macOS, and their shims), else (Windows)
 * pid and start time. */
uint32_t
pf_live_default(void)
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
void
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
  h->live = pf_live_default();
  AO_nop_full();
  AO_int_store_release(&h->magic, PF_RGN_MAGIC);
}

/* Check a header against the object's size (untrusted): 0 and *g, or
 * -EINVAL (not a region), -EPROTO (another layout or ABI), or
 * -ENOTRECOVERABLE (inconsistent). */
int
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
