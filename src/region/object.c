/* object.c - regions: the shared memory objects that hold them.
 *
 * Named regions: shm_open objects (pfutex_region_unlink removes the name).
 * Anonymous: a MAP_SHARED|MAP_ANONYMOUS mapping (or, where the record-lock
 * liveness needs a descriptor, a memfd or a shm object unlinked at once),
 * gone with its last process.  Attach: the table lives in a shm object of
 * its own named after the user's object, "/pfutex.<dev>.<ino>"
 * (hexadecimal), created with the user's object's permission bits, and
 * kept until pfutex_region_attach_unlink(fd) (or shm_unlink / rm
 * /dev/shm/pfutex.*): processes that attach later find it there.
 */
#include "internal.h"
#include "os.h"

#include <fcntl.h>
#include <stdio.h>
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

/* Remove the name of a region's object (Windows: see above). */
int
pf_region_obj_unlink(const char *name)
{
  return shm_unlink(name);
}

#ifdef _WIN32
/* The creator of a region object still at work on its layout?  Windows:
 * its pid, for the few instructions of the creation. */
static int
pf_region_creator_busy(const struct pf_rgn_hdr *h)
{
  return h->init_pid == 0 || pf_os_pid_alive((int)h->init_pid);
}
#else
/* The creator of a region object holds the creator's byte (src/os.h) from
 * before it sizes the object until the layout is written: on the object
 * itself where this host's regions lock it (lock), on the companion file
 * where they lock that (lockfile: FreeBSD, macOS, and their shims, which
 * so run those systems' path here: live.c).  cfd: the companion's
 * descriptor (lockfile), or -1. */
static int
pf_region_creator_claim(int fd, int cfd)
{
  if (cfd >= 0)
    return pf_os_lock_claim(cfd, PF_OS_CREATOR_BYTE);
#ifdef PF_HAVE_OBJECT_LOCKS
  return pf_os_lock_claim(fd, PF_OS_CREATOR_BYTE);
#else
  (void)fd;
  return 0;                               /* (no host: lockfile is the default there) */
#endif
}

static void
pf_region_creator_done(int fd, int cfd)
{
  if (cfd >= 0) {
    pf_os_lock_release(cfd, PF_OS_CREATOR_BYTE);
    pf_fd_dispose(cfd);
    return;
  }
#ifdef PF_HAVE_OBJECT_LOCKS
  pf_os_lock_release(fd, PF_OS_CREATOR_BYTE);
#else
  (void)fd;
#endif
}

/* Is the creator of the object `name` (open as fd) still at work on its
 * layout?  Asked where this process's own regions are locked: a creator
 * of another backend's regions would be refused (EPROTO) anyway. */
static int
pf_region_creator_busy(int fd, const char *name)
{
  int cfd, busy;
  if (pf_live_default() == PF_LIVE_LOCKFILE) {
    if ((cfd = pf_live_file_open(name, 0, 0)) < 0)
      return cfd != -ENOENT;              /* none: no creator; else ask again later */
    busy = pf_os_lock_held(cfd, PF_OS_CREATOR_BYTE);
    pf_fd_dispose(cfd);
    return busy;
  }
#ifdef PF_HAVE_OBJECT_LOCKS
  return pf_os_lock_held(fd, PF_OS_CREATOR_BYTE);
#else
  (void)fd;
  return 1;
#endif
}
#endif

#ifdef _WIN32
/* Windows: create (O_EXCL) or open the named mapping for `name` (see the
 * top of this file), then as below: 0 and *mapp, *lenp, *g; or -errno. */
int
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
    if (ret != -EINVAL || AO_int_load(&h->magic) != 0 || !pf_region_creator_busy(h)
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
pf_region_wait_ready(int fd, const char *name, struct stat *st, void **mapp, struct pf_geom *g)
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
      if (!pf_region_creator_busy(fd, name) && AO_int_load_acquire(&h->magic) == 0) {
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
int
pf_region_shm(const char *name, int oflag, mode_t mode, const pfutex_region_attr_t *attr,
              size_t size, int kind, void **mapp, size_t *lenp, struct pf_geom *g, int *createdp,
              int *fdp)
{
  struct stat st;
  int fd, ret, created = 0, cfd = -1;

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
    if (pf_live_default() == PF_LIVE_LOCKFILE && (cfd = pf_live_file_open(name, mode, 1)) < 0)
      return cfd;
    fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, mode);
    if (fd >= 0) {
      created = 1;
      *g = want;
      /* the creator's byte, before the object has a size (src/os.h) */
      if ((ret = pf_region_creator_claim(fd, cfd)) < 0) {
        shm_unlink(name);
        close(fd);
        pf_fd_dispose(cfd);
        return ret == -EBUSY ? -ENOTRECOVERABLE : ret;
      }
      if (ftruncate(fd, (off_t)want.total) != 0) {
        ret = -errno;
        shm_unlink(name);
        close(fd);
        pf_region_creator_done(-1, cfd);
        return ret == -EFBIG || ret == -EINVAL ? -ENOMEM : ret;
      }
    } else {
      ret = -errno;
      pf_fd_dispose(cfd);
      if (ret != -EEXIST || (oflag & O_EXCL))
        return ret;
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
      pf_region_creator_done(fd, cfd);
      close(fd);
      return ret;
    }
    ((struct pf_rgn_hdr *)map)->init_pid = (uint32_t)getpid();
    PF_CRASH("region_creating");
    pf_layout_init(map, g, kind);
    pf_region_creator_done(fd, cfd);
    *mapp = map;
    *lenp = (size_t)g->total;
    *createdp = 1;
    *fdp = fd;
    return 0;
  }
  ret = pf_region_wait_ready(fd, name, &st, mapp, g);
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

/* An anonymous region's memory: a descriptor where the record-lock
 * liveness needs one (a memfd, or a shm object unlinked at once), shared
 * with fork children as the mapping is. */
int
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

/* The name of the table beside the object open as fd. */
int
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
