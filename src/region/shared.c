/* shared.c - shared futexes outside regions (issue 20): a shared
 * (non-PRIVATE) op on a word in any MAP_SHARED mapping is keyed, as the
 * kernel keys it, by the object the mapping maps and the word's offset in
 * it (src/os.h pf_os_object_id), in one table that every process of the
 * user finds: a named region of its own, "the shared table".
 *
 *   where   the region /pfutex-shared-u<euid>-<port>-v<layout>[-be], made by the first
 *           process that needs it (mode 0600) and kept (as the kernel's
 *           table is): one per user and emulation port, since waiters of
 *           two ports park differently.  Its table is a region's: slots
 *           owned by processes the OS vouches for, locks a dead holder
 *           leaves to the next, everything region code does when a
 *           process dies at any instruction (src/region/).
 *   who     the region's object must belong to this user and be writable
 *           by nobody else: one that another user made (to read or
 *           scribble on this user's waits) is refused (EACCES), never
 *           used.  Processes of two users that share memory therefore do
 *           not meet in one table: their shared futexes do not wake each
 *           other (doc/shared-futexes.md).
 *   keys    95 bits of hash of (device, inode, offset): the key's word
 *           and, top bit set, its space (the table keeps both in every
 *           slot).  Two live words alias with probability about n^2 / 2^96
 *           for n words waited on at once; the kernel's key is exact.
 *   private a word in a private mapping keeps the process-local key it
 *           always had (the kernel keys such a page by address too).
 */
#include "internal.h"
#include "os.h"

#ifdef _WIN32
/* Windows names no object for shared memory outside regions
 * (ports/win32/os.c): never asked for a key. */
int
pf_shared_name(char *buf, size_t len)
{
  (void)buf;
  (void)len;
  return -ENOSYS;
}

int
pf_shared_key(const struct pf_os_objid *id, struct pf_key *k, struct pf_table **tab)
{
  (void)id;
  (void)k;
  (void)tab;
  return -ENOSYS;
}

void
pf_shared_prepare(void)
{
}

int
pf_shared_opening(void)
{
  return 0;
}
#else

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PF_SHARED_SLOTS   4096u
#define PF_SHARED_BUCKETS 1024u
#define PF_SHARED_PROCS   1024u

static pthread_mutex_t pf_shared_lock = PTHREAD_MUTEX_INITIALIZER;
static AO_t pf_shared_rg;                /* struct pf_region *, once open */
static volatile int pf_shared_busy;      /* pf_shared_lock: an open in progress, */
static pthread_t pf_shared_opener;       /* by this thread */

int
pf_shared_opening(void)
{
  return pf_shared_busy && pthread_equal(pf_shared_opener, pthread_self());
}

static uint64_t
pf_shared_mix(uint64_t x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x;
}

/* One table per user, port, region layout and byte order: a process of
 * another layout version (an older or newer pfutex) or byte order (a
 * big-endian program under qemu-user beside little-endian ones) would be
 * refused by the other's table, so it makes its own (their waits do not
 * meet; they could not share the words' layout either).  32- and 64-bit
 * processes share one (regions are laid out alike for both). */
int
pf_shared_name(char *buf, size_t len)
{
  const union {
    uint32_t u;
    unsigned char c[4];
  } order = { 1 };
  int n = snprintf(buf, len, "/pfutex-shared-u%lu-%s-v%u%s", (unsigned long)geteuid(),
                   pf_emu_port ? pf_emu_port->name : "none", (unsigned)PF_RGN_VERSION,
                   order.c[0] ? "" : "-be");
  return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

/* The object is this user's and nobody else may write it. */
static int
pf_shared_trusted(const struct pf_region *rg)
{
  struct stat sb;
  if (fstat(rg->att->fd, &sb) != 0)
    return -EACCES;
  if (sb.st_uid != geteuid() || (sb.st_mode & 022))
    return -EACCES;
  return 0;
}

/* A fork child may inherit the lock held by another thread's open. */
static void
pf_shared_atfork_child(void)
{
  pf_shared_busy = 0;
  pthread_mutex_init(&pf_shared_lock, NULL);
}

static pthread_once_t pf_shared_once = PTHREAD_ONCE_INIT;
static void
pf_shared_init(void)
{
  (void)pthread_atfork(NULL, NULL, pf_shared_atfork_child);
}

/* The first shared op of the process opens the table: with every signal
 * blocked (a handler's own shared op cannot then wait for the lock its
 * thread holds) and cancellation off (the open makes calls that are
 * cancellation points). */
static struct pf_table *
pf_shared_open(int *err)
{
  pfutex_region_attr_t attr;
  struct pf_region *rg;
  sigset_t all, old;
  char name[96];
  int ret = 0, cs;

  pthread_once(&pf_shared_once, pf_shared_init);
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
  pthread_mutex_lock(&pf_shared_lock);
  rg = (struct pf_region *)AO_load(&pf_shared_rg);
  if (!rg) {
    memset(&attr, 0, sizeof attr);
    attr.slots = PF_SHARED_SLOTS;
    attr.buckets = PF_SHARED_BUCKETS;
    attr.procs = PF_SHARED_PROCS;
    if ((ret = pf_shared_name(name, sizeof name)) == 0) {
      int saved = errno;
      pf_shared_opener = pthread_self();
      pf_shared_busy = 1;
      rg = pfutex_region_open_attr(name, 64, O_RDWR | O_CREAT, 0600, &attr);
      pf_shared_busy = 0;
      if (!rg)
        ret = errno == EAGAIN ? -ENOMEM : -errno;
      else if ((ret = pf_shared_trusted(rg)) < 0) {
        (void)pfutex_region_close(rg);
        rg = NULL;
      }
      errno = saved;
    }
    if (rg)
      AO_store_release(&pf_shared_rg, (AO_t)rg);
  }
  pthread_mutex_unlock(&pf_shared_lock);
  pthread_setcancelstate(cs, NULL);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (!rg)
    *err = ret < 0 ? ret : -ENOMEM;
  return rg ? rg->ks.tab : NULL;
}

/* emu.h: the shared table's key for a word of object id (0), or -errno
 * (the table could not be opened: ENOMEM, EACCES, ...). */
int
pf_shared_key(const struct pf_os_objid *id, struct pf_key *k, struct pf_table **tab)
{
  struct pf_region *rg = (struct pf_region *)AO_load_acquire(&pf_shared_rg);
  uint64_t h = pf_shared_mix(id->dev ^ pf_shared_mix(id->ino ^ pf_shared_mix(id->off)));
  uint64_t h2 = pf_shared_mix(h ^ 0x9e3779b97f4a7c15ull ^ pf_shared_mix(id->off + id->ino));
  int err = -ENOMEM;
  if (rg)
    *tab = rg->ks.tab;
  else if (!(*tab = pf_shared_open(&err)))
    return err;
  k->word = h;
  k->space = PF_KEY_OBJECT | ((uint32_t)h2 & ~PF_KEY_OBJECT);
  return 0;
}

/* emu.h: a process that opens a region opens the shared table too (once,
 * best effort: src/region/handle.c), so that a requeue by another process
 * can move its waiters to a shared mapping's word: a waiter moves only to
 * a table its process has an entry in (src/requeue.c). */
static volatile int pf_shared_tried;

void
pf_shared_prepare(void)
{
  int err;
  if (pf_shared_tried || AO_load_acquire(&pf_shared_rg))
    return;
  pf_shared_tried = 1;
  (void)pf_shared_open(&err);
}
#endif
