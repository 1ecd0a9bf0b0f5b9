/* objid.c - the FreeBSD port's object identity (src/port.h object_id, as
 * src/os.h's pf_os_object_id answers): which VM object a shared mapping
 * maps, and where in it a word lies, for shared futexes outside regions
 * (doc/shared-futexes.md).  FreeBSD keys its own shared umtx words by
 * (VM object, offset) inside the kernel (sys/kern/kern_umtx.c
 * umtx_key_get); user space learns as much in two ways
 * (freebsd/freebsd-src):
 *
 *   sysctl {CTL_KERN, KERN_PROC, KERN_PROC_VMMAP, pid}  (sys/kern/kern_proc.c
 *        kern_proc_vmmap_out; the records of sys/sys/user.h struct
 *        kinfo_vmentry, packed, each kve_structsize long): the map entry
 *        holding p: no entry, or neither read nor write permission:
 *        -EFAULT; KVME_FLAG_COW (a private file mapping, and any private
 *        mapping after a fork): private, keyed by address (0), or -EFAULT
 *        for read-only anonymous memory as Linux's get_futex_key; a vnode
 *        (KVME_TYPE_VNODE with KF_ATTR_VALID): (kve_vn_fsid, kve_vn_fileid)
 *        and the byte offset kve_offset + (p - kve_start); an anonymous
 *        object (OBJ_ANON: MAP_SHARED | MAP_ANON, shared across fork;
 *        kve_obj, FreeBSD 13.1 and later): (kve_obj, offset).  The whole
 *        map is copied out on every call (the kernel has no per-address
 *        form), so this costs far more than Linux's one ioctl;
 *   _umtx_op(UMTX_OP_SHM, UMTX_SHM_CREAT, p)  (kern_umtx.c umtx_shm): the
 *        kernel's registry of one page per (object, offset), for the
 *        objects the map names nothing for (POSIX shm, SHM_ANON and memfd,
 *        SysV segments: swap objects that are not OBJ_ANON): every process
 *        asking about the same word gets a descriptor of the same page, so
 *        its fstat (st_dev, st_ino) names the word.  The entry lives until
 *        the object does (umtx_shm_object_terminated): one page per word,
 *        charged to RLIMIT_UMTXP, as libthr pays for each process-shared
 *        pthread object.  Refused (an old kernel, the limit): the mapping
 *        is shared and unnamed: PF_OBJID_NONE (ENOSYS, never a silent key).
 *
 * The word is read first (guarded, src/os.h): an entry never faulted has
 * no object yet.  Limits: before a fork, a private anonymous mapping shows
 * no COW flag and is keyed by its object (only this process maps it: the
 * same futexes as by address; its read-only pages are not refused).
 *
 * Built twice, like park.c: for FreeBSD, and over tests/shims/freebsd/,
 * whose model of both calls answers from Linux's /proc/self/maps. */
#include "os.h"
#include "port.h"

#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#ifdef PF_SHIM
# include "shim.h"
# define PF_FREEBSD_OBJID pf_freebsd_shim_object_id
#else
# include <sys/param.h>
# include <sys/types.h>
# include <sys/sysctl.h>
# include <sys/user.h>
# include <sys/umtx.h>
# define PF_FREEBSD_OBJID pf_freebsd_object_id
#endif

/* The device half of the keys that name no file: an anonymous object's
 * address, and a word's umtx registry page ("fbanon", "fbshm"). */
#define PF_FBSD_DEV_ANON 0x6662616e6f6eull
#define PF_FBSD_DEV_SHM  0x666273686dull

int PF_FREEBSD_OBJID(const void *p, struct pf_os_objid *id);

/* The map entry holding a, copied into *e: 1, 0 none, -1 the map cannot
 * be had.  The buffer is mapped, not allocated: a signal handler's op may
 * get here. */
static int
pf_fbsd_entry(uintptr_t a, struct kinfo_vmentry *e)
{
  int mib[4] = { CTL_KERN, KERN_PROC, KERN_PROC_VMMAP, (int)getpid() };
  size_t len = 0, size, off;
  char *buf;
  int tries, ret = -1;

  for (tries = 0; tries < 4; tries++) {
    if (sysctl(mib, 4, NULL, &len, NULL, 0) != 0)
      return -1;
    size = len + len / 3 + 4096;             /* room for a map that grows meanwhile */
    buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANON, -1, 0);
    if (buf == MAP_FAILED)
      return -1;
    len = size;
    if (sysctl(mib, 4, buf, &len, NULL, 0) != 0) {
      munmap(buf, size);
      if (errno == ENOMEM)
        continue;                            /* it grew past the room: again */
      return -1;
    }
    ret = 0;
    for (off = 0; off + sizeof(int) <= len;) {
      const struct kinfo_vmentry *k = (const struct kinfo_vmentry *)(const void *)(buf + off);
      size_t sz = (size_t)k->kve_structsize;
      if (sz < offsetof(struct kinfo_vmentry, kve_path) || off + sz > len)
        break;                               /* a record the kernel would not write */
      if (a >= k->kve_start && a < k->kve_end) {
        memset(e, 0, sizeof *e);
        memcpy(e, k, offsetof(struct kinfo_vmentry, kve_path));
        ret = 1;
        break;
      }
      off += sz;
    }
    munmap(buf, size);
    return ret;
  }
  return -1;
}

/* The word's registry page in the kernel's umtx shm table: 1 (*id set), or
 * 0 when the kernel refuses it. */
static int
pf_fbsd_umtx_shm(const void *p, struct pf_os_objid *id)
{
  struct stat st;
  int fd = _umtx_op(NULL, UMTX_OP_SHM, UMTX_SHM_CREAT, (void *)(uintptr_t)p, NULL), ok;
  if (fd < 0)
    return 0;
  ok = fstat(fd, &st) == 0;
  close(fd);
  if (!ok)
    return 0;
  id->dev = PF_FBSD_DEV_SHM ^ ((uint64_t)st.st_dev << 16);
  id->ino = (uint64_t)st.st_ino;
  id->off = 0;                               /* the page names the word itself */
  return 1;
}

int
PF_FREEBSD_OBJID(const void *p, struct pf_os_objid *id)
{
  struct kinfo_vmentry e;
  uintptr_t a = (uintptr_t)p;
  uint32_t v;
  int r, saved = errno;

  memset(id, 0, sizeof *id);
  if (pf_os_word_read(p, &v) < 0)            /* an object for the entry, the page in */
    return -EFAULT;
  r = pf_fbsd_entry(a, &e);
  errno = saved;
  if (r < 0)
    return -ENOSYS;
  if (r == 0 || !(e.kve_protection & (KVME_PROT_READ | KVME_PROT_WRITE)))
    return -EFAULT;
  if (e.kve_flags & KVME_FLAG_COW) {
    if (!(e.kve_protection & KVME_PROT_WRITE) && e.kve_type != KVME_TYPE_VNODE)
      return -EFAULT;                        /* read-only anonymous memory */
    return 0;                                /* private: keyed by address */
  }
  if (e.kve_type == KVME_TYPE_VNODE && (e.kve_status & KF_ATTR_VALID)) {
    id->dev = (uint64_t)e.kve_vn_fsid;
    id->ino = (uint64_t)e.kve_vn_fileid;
    id->off = (uint64_t)e.kve_offset + (a - (uintptr_t)e.kve_start);
    return 1;
  }
#ifdef kve_obj
  if (e.kve_obj != 0) {
    id->dev = PF_FBSD_DEV_ANON;
    id->ino = (uint64_t)e.kve_obj;
    id->off = (uint64_t)e.kve_offset + (a - (uintptr_t)e.kve_start);
    return 1;
  }
#endif
  r = pf_fbsd_umtx_shm(p, id);
  errno = saved;
  return r ? 1 : PF_OBJID_NONE;
}
