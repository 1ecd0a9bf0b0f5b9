/* api.c - the public pfutex_region_* calls: check the arguments, make or
 * find the object (object.c), map and check it (layout.c), register the
 * handle (handle.c); -errno inside, errno at this boundary.
 */
#include "internal.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

static void *
pf_fail_null(int err)
{
  errno = err;
  return NULL;
}

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
    pf_region_obj_unlink(name);
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
  rg->ks.lo = (uintptr_t)addr;
  rg->ks.span = len & ~(size_t)3;
  rg->ks.key_base = (uintptr_t)addr;           /* the key is the offset in the object */
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
  ret = pf_region_obj_unlink(name);
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

/* Close a handle (handle.c). */
int
pfutex_region_close(pfutex_region_t *r)
{
  int ret = pf_region_unregister(r);
  if (ret < 0) {
    errno = -ret;
    return -1;
  }
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
  ret = pf_region_obj_unlink(name);
#ifdef PF_HAVE_LIVE_LOCK
  if (ret == 0)
    (void)pf_live_file_unlink(name);          /* its liveness file, if any (live.c) */
#endif
  return ret;
}
