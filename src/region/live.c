/* live.c - regions: which processes are alive, as the OS says (src/os.h).
 *
 * A region records the mechanism its processes use (the header's `live`,
 * chosen by its creator): every process of a region asks the OS the same
 * way.  This file dispatches; holds the "lockfile" mechanism's file, the
 * companion of a region object on the systems whose shm objects refuse
 * record locks (FreeBSD, macOS: EBADF), where the locks of "lock" are
 * taken instead:
 *
 *   /tmp/pfutex-live.<64-bit hash of the object's name, hexadecimal>
 *
 * created with the object's owner permissions, removed with the object's
 * name (pfutex_region_unlink, pfutex_region_attach_unlink): processes
 * attached to a region whose name was removed keep their open one, and a
 * later region of that name gets a file of its own.  An anonymous region's
 * is a temporary file unlinked at once, shared with fork children as the
 * mapping is.  (A file removed by hand while its region's name lives would
 * split the region's processes in two views: doc/regions.md, limits.)
 *
 * And the "start" mechanism, which needs no more of the OS than a
 * process's start time by pid:
 *
 *   claim    read the entry's pid; if the process with that pid started at
 *            the recorded time and has not ended, the entry is busy; else
 *            one compare-and-swap of the pid to PF_RGN_CLAIMING | self
 *            (of two claimers one wins), then the start time, then (the
 *            caller) the pid.
 *   held     the entry's owner is alive: a process with its pid exists,
 *            has not ended (a zombie has), and started at the recorded
 *            time.  A pid reused by a later process has a later start.
 *            During the few instructions of a claim the start time is not
 *            written yet: the claimer is judged by its pid alone there.  A
 *            claimer killed in that window leaves the entry busy for as
 *            long as another process holds that pid: one entry lost for a
 *            while, never a lock taken from a live process.
 *   release  the caller clears the pid.
 */
#include "internal.h"
#include "os.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int
pf_live_supported(uint32_t live)
{
  switch (live) {
#ifdef PF_HAVE_LIVE_LOCK
  case PF_LIVE_LOCK:
  case PF_LIVE_LOCKFILE:
    return 1;
#endif
#ifdef PF_HAVE_LIVE_START
  case PF_LIVE_START:
    return 1;
#endif
  default:
    return 0;
  }
}

#ifdef PF_HAVE_LIVE_LOCK
static void
pf_live_file_path(const char *name, char *buf, size_t len)
{
  uint64_t h = 0xcbf29ce484222325ull;       /* FNV-1a */
  while (*name)
    h = (h ^ (unsigned char)*name++) * 0x100000001b3ull;
  snprintf(buf, len, "/tmp/pfutex-live.%016llx", (unsigned long long)h);
}

int
pf_live_file_open(const char *name, mode_t mode, int create)
{
  char path[64];
  int fd, saved = errno, ret;
  if (!name) {
    snprintf(path, sizeof path, "/tmp/pfutex-live.XXXXXX");
    fd = mkstemp(path);
    if (fd >= 0)
      unlink(path);
  } else {
    pf_live_file_path(name, path, sizeof path);
    fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT : 0),
              (mode & 0666) | 0600);
  }
  if (fd < 0) {
    ret = errno == EMFILE || errno == ENFILE ? -errno : !create && errno == ENOENT ? -ENOENT : -ENOMEM;
    errno = saved;
    return ret;
  }
  (void)fcntl(fd, F_SETFD, FD_CLOEXEC);     /* exec drops the locks */
  errno = saved;
  return fd;
}

int
pf_live_file_unlink(const char *name)
{
  char path[64];
  int saved = errno;
  pf_live_file_path(name, path, sizeof path);
  (void)unlink(path);
  errno = saved;
  return 0;
}
#endif

#ifdef PF_HAVE_LIVE_START
static int
pf_live_start_held(const struct pf_rgn_proc *p)
{
  uint32_t pid = AO_int_load_acquire(&p->pid);
  uint64_t t = 0, want;
  int r;
  if (pid == 0)
    return 0;
  if (pid & PF_RGN_CLAIMING)
    return pf_os_proc_start(pid & ~PF_RGN_CLAIMING, &t) != 0;
  want = ((uint64_t)AO_int_load(&p->start_hi) << 32) | AO_int_load(&p->start_lo);
  r = pf_os_proc_start(pid, &t);
  if (r == 0)
    return 0;
  return r < 0 || t == want;
}

static int
pf_live_start_claim(struct pf_rgn_proc *p)
{
  uint32_t pid = AO_int_load_acquire(&p->pid), self = (uint32_t)getpid();
  uint64_t t = 0;
  if (pid != 0 && pf_live_start_held(p))
    return -EBUSY;
  if (pf_os_proc_start(self, &t) != 1)
    return -ENOSYS;                       /* cannot read our own: no such mechanism */
  if (!AO_int_compare_and_swap_full(&p->pid, pid, PF_RGN_CLAIMING | self))
    return -EBUSY;
  AO_int_store(&p->start_lo, (uint32_t)t);
  AO_int_store(&p->start_hi, (uint32_t)(t >> 32));
  return 0;
}
#endif

int
pf_live_claim(uint32_t live, int fd, uint32_t e, struct pf_rgn_proc *p)
{
  (void)fd;
  (void)e;
  (void)p;
  switch (live) {
#ifdef PF_HAVE_LIVE_LOCK
  case PF_LIVE_LOCK:
  case PF_LIVE_LOCKFILE:
    return pf_os_lock_claim(fd, e);
#endif
#ifdef PF_HAVE_LIVE_START
  case PF_LIVE_START:
    return pf_live_start_claim(p);
#endif
  default:
    return -EPROTO;
  }
}

int
pf_live_held(uint32_t live, int fd, uint32_t e, const struct pf_rgn_proc *p)
{
  (void)fd;
  (void)e;
  (void)p;
  switch (live) {
#ifdef PF_HAVE_LIVE_LOCK
  case PF_LIVE_LOCK:
  case PF_LIVE_LOCKFILE:
    return pf_os_lock_held(fd, e);
#endif
#ifdef PF_HAVE_LIVE_START
  case PF_LIVE_START:
    return pf_live_start_held(p);
#endif
  default:
    return 1;                             /* unknown: never taken from */
  }
}

void
pf_live_release(uint32_t live, int fd, uint32_t e, struct pf_rgn_proc *p)
{
  (void)fd;
  (void)e;
  (void)p;
#ifdef PF_HAVE_LIVE_LOCK
  if (live == PF_LIVE_LOCK || live == PF_LIVE_LOCKFILE)
    pf_os_lock_release(fd, e);
#endif
  (void)live;
}
