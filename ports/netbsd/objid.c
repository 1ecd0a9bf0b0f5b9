/* objid.c - the NetBSD port's answer to src/port.h object_id (as src/os.h's
 * pf_os_object_id answers): which file a shared mapping maps, and where in
 * it a word lies, for shared futexes outside regions
 * (doc/shared-futexes.md).
 *
 * The call (NetBSD/src, checked with the search tool):
 *
 *   sysctl {CTL_VM, VM_PROC, VM_PROC_MAP, pid, sizeof (struct kinfo_vmentry)}
 *        (uvm/uvm_map.c sysctl_vmproc, fill_vmentries, fill_vmentry): the
 *        whole map, always (no start address); the caller's own process
 *        needs no privilege (KAUTH_PROCESS_CANSEE); no buffer: the length
 *        needed; a buffer too small: filled, ENOSPC, and the length needed
 *        (so the port asks again, with room to spare: its own buffer is
 *        one more entry); above 10 MiB: E2BIG.  Records are elem_size
 *        apart.
 *   struct kinfo_vmentry (sys/sys/sysctl.h, 1128 bytes): kve_start,
 *        kve_end, kve_offset (the entry's offset in its object),
 *        kve_type (KVME_TYPE_VNODE 2 for a file), kve_flags
 *        (KVME_FLAG_COW 0x1: a private mapping), kve_protection
 *        (KVME_PROT_READ 1, KVME_PROT_WRITE 2), kve_inheritance (the raw
 *        MAP_INHERIT_* value: MAP_INHERIT_SHARE 0), kve_vn_fileid and
 *        kve_vn_fsid (va_fileid and va_fsid: a file's st_ino and st_dev, as
 *        vn_stat fills them).
 *   How mappings show (uvm/uvm_mmap.c, kern/sysv_shm.c, lib/librt/shm.c):
 *        MAP_PRIVATE: KVME_FLAG_COW, MAP_INHERIT_COPY; MAP_SHARED: no COW,
 *        MAP_INHERIT_SHARE; a file: KVME_TYPE_VNODE (and so POSIX shm, a
 *        tmpfs file under /var/shm); anonymous shared memory (an amap),
 *        SysV segments and memfds (anonymous UVM objects): no file, and
 *        nothing else that names them.
 *
 * So: no entry holds p, or it cannot be read: -EFAULT; copy-on-write and
 * not inherited shared: private, 0 (read-only anonymous memory: -EFAULT, as
 * Linux's get_futex_key); a shared file mapping: (kve_vn_fsid,
 * kve_vn_fileid) and the byte offset kve_offset + (p - kve_start), the
 * kernel's own (object, offset) key in user-space terms; any other shared
 * mapping (anonymous, SysV, memfd, a private one minherit(2) made shared):
 * PF_OBJID_KERNEL: NetBSD's own __futex keys those (uvm_voaddr), so the
 * port hands their shared ops to it whole (park.c pf_nbsd_os_futex;
 * futex_waitv and the PI ops on them answer ENOSYS), never a key that
 * silently stays in the process.  The whole map is copied out on
 * every call: the cost of a shared op outside regions here.
 *
 * Built twice, like park.c: for NetBSD, and over tests/shims/netbsd/, whose
 * model of the sysctl answers from Linux's own map. */
#include "os.h"
#include "port.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifdef PF_SHIM
# include "shim.h"
# define PF_NETBSD_OBJID pf_netbsd_shim_object_id
#else
# include <sys/param.h>
# include <sys/types.h>
# include <sys/sysctl.h>
# include <uvm/uvm_param.h>
# define PF_NETBSD_OBJID pf_netbsd_object_id
#endif

#include "vmmap.h"

int PF_NETBSD_OBJID(const void *p, struct pf_os_objid *id);

/* The entry holding a, copied into *e: 1, 0 none, -1 the map cannot be
 * had.  The buffer is mapped, not allocated (a signal handler's op may get
 * here). */
static int
pf_nbsd_entry(uintptr_t a, struct kinfo_vmentry *e)
{
  int mib[5] = { CTL_VM, VM_PROC, VM_PROC_MAP, (int)getpid(), (int)sizeof *e };
  size_t len = 0, size, n, i;
  struct kinfo_vmentry *buf;
  int tries, saved;

  memset(e, 0, sizeof *e);
  for (tries = 0; tries < 4; tries++) {
    if (sysctl(mib, 5, NULL, &len, NULL, 0) != 0)
      return -1;
    size = len + 16 * sizeof *e;             /* room for entries made meanwhile, ours included */
    if (size > 10UL * 1024 * 1024)           /* the kernel's limit (E2BIG above it) */
      size = 10UL * 1024 * 1024;
    buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANON, -1, 0);
    if (buf == MAP_FAILED)
      return -1;
    len = size;
    if (sysctl(mib, 5, buf, &len, NULL, 0) != 0) {
      saved = errno;
      munmap(buf, size);
      if (saved == ENOSPC)
        continue;                            /* it grew past the room: again */
      return -1;
    }
    n = len / sizeof *e;
    for (i = 0; i < n; i++)
      if (buf[i].kve_start <= a && a < buf[i].kve_end) {
        *e = buf[i];
        break;
      }
    munmap(buf, size);
    return i < n;
  }
  return -1;
}

int
PF_NETBSD_OBJID(const void *p, struct pf_os_objid *id)
{
  struct kinfo_vmentry e;
  uintptr_t a = (uintptr_t)p;
  uint32_t v;
  int r, saved = errno;

  memset(id, 0, sizeof *id);
  if (pf_os_word_read(p, &v) < 0)
    return -EFAULT;
  r = pf_nbsd_entry(a, &e);
  errno = saved;
  if (r < 0)
    return -ENOSYS;
  if (r == 0 || !(e.kve_protection & KVME_PROT_READ))
    return -EFAULT;
  if ((e.kve_flags & KVME_FLAG_COW) && e.kve_inheritance != PF_NBSD_INHERIT_SHARE) {
    if (!(e.kve_protection & KVME_PROT_WRITE) && e.kve_type != KVME_TYPE_VNODE)
      return -EFAULT;                        /* read-only anonymous memory */
    return 0;                                /* private: keyed by address */
  }
  if (!(e.kve_flags & KVME_FLAG_COW) && e.kve_type == KVME_TYPE_VNODE) {
    id->dev = (uint64_t)e.kve_vn_fsid;
    id->ino = (uint64_t)e.kve_vn_fileid;
    id->off = (uint64_t)e.kve_offset + (a - (uintptr_t)e.kve_start);
    return 1;
  }
  return PF_OBJID_KERNEL;                    /* shared, and NetBSD names no object: its
                                                own futex keys it (park.c os_futex) */
}
