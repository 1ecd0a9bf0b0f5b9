/* objid.c - the OpenBSD port's answer to src/port.h object_id (as src/os.h's
 * pf_os_object_id answers): is the word's mapping shared, for shared
 * futexes outside regions (doc/shared-futexes.md).  OpenBSD names no
 * object to user space, so a shared mapping outside a region cannot be
 * keyed in the engine's tables: such a word answers PF_OBJID_KERNEL, and
 * its shared ops go to OpenBSD's own futex(2), which keys it by object
 * (park.c pf_obsd_os_futex: waits and wakes; the ops futex(2) lacks answer
 * ENOSYS), never a key that silently stays in this process.  A private
 * mapping keeps the address key.
 *
 * The call (openbsd/src, checked with the search tool):
 *
 *   sysctl {CTL_KERN, KERN_PROC_VMMAP, getpid()}  (sys/kern/kern_sysctl.c
 *        sysctl_proc_vmmap; uvm/uvm_map.c uvm_map_fill_vmmap): the caller's
 *        own map needs no privilege; the buffer's length is a nonzero
 *        multiple of struct kinfo_vmentry, at most the length a call with
 *        no buffer answers (VMMAP_MAXLEN, MAXPHYS); the first record's
 *        kve_start says where to begin, and the kernel returns the entries
 *        whose START is at or above it, in order: the entry holding an
 *        address inside it (not at its start) is skipped, so the walk
 *        begins at 0 and goes on from the last entry's start + 1 while
 *        the buffer comes back full.  A full buffer is not an error (the
 *        copyout's success replaces fill_vmmap's ENOMEM).  The kernel walks
 *        the whole map under the map's write lock for every call: the cost
 *        of a shared op outside regions here.
 *   struct kinfo_vmentry (sys/sys/sysctl.h): kve_etype is the entry's raw
 *        etype: UVM_ET_OBJ 0x01, UVM_ET_COPYONWRITE 0x04 (KVE_ET_OBJ,
 *        KVE_ET_COPYONWRITE); kve_inheritance the raw MAP_INHERIT_* value
 *        (SHARE 0, COPY 1, ...; not the KVE_INH_* values, which are
 *        shifted); kve_protection KVE_PROT_READ 1, KVE_PROT_WRITE 2.
 *        No object, device or inode: no identity.
 *   uvm/uvm_mmap.c: MAP_PRIVATE maps copy-on-write (UVM_ET_COPYONWRITE)
 *        with MAP_INHERIT_COPY; MAP_SHARED with MAP_INHERIT_SHARE, no
 *        copy-on-write; sysv_shm.c sys_shmat: an object, MAP_INHERIT_SHARE.
 *
 * So: no entry holds p, or it cannot be read: -EFAULT; copy-on-write and
 * not inherited shared (minherit(2) can make a private mapping shared
 * across fork): private, 0, except read-only anonymous memory, -EFAULT
 * (Linux's get_futex_key); inherited shared: PF_OBJID_KERNEL; a shared
 * mapping minherit(2) made not inherited shared: PF_OBJID_NONE
 * (PF_OPENBSD_CLASSIFY below).
 *
 * Limit: the map query is not among the sysctls pledge(2) allows, so a
 * pledged process's shared op outside a region would be killed by the
 * kernel; a pledged program must use private ops or regions (doc/ports.md).
 *
 * Built twice, like park.c: for OpenBSD, and over tests/shims/openbsd/,
 * whose model of the sysctl answers from Linux's own map. */
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
# define PF_OPENBSD_OBJID pf_openbsd_shim_object_id
#else
# include <sys/types.h>
# include <sys/sysctl.h>
# define PF_OPENBSD_OBJID pf_openbsd_object_id
#endif

#include "vmmap.h"

#ifdef PF_SHIM
# define PF_OPENBSD_CLASSIFY pf_openbsd_shim_classify
#else
# define PF_OPENBSD_CLASSIFY pf_openbsd_classify
#endif
int PF_OPENBSD_OBJID(const void *p, struct pf_os_objid *id);
int PF_OPENBSD_CLASSIFY(const struct kinfo_vmentry *e);

/* The answer for the entry e holding the word (header comment):
 * copy-on-write and not inherited shared: private (0; read-only anonymous
 * memory -EFAULT); shared and inherited shared: PF_OBJID_KERNEL, which
 * futex(2) keys by object or amap (sys_futex.c futex_addrs tests
 * MAP_INHERIT_SHARE); a shared mapping minherit(2) made anything else:
 * futex(2) would key it by the bare address, across every process, so
 * PF_OBJID_NONE (ENOSYS). */
int
PF_OPENBSD_CLASSIFY(const struct kinfo_vmentry *e)
{
  if (!(e->kve_protection & PF_OBSD_PROT_READ))
    return -EFAULT;
  if (e->kve_etype & PF_OBSD_ET_COW) {
    if (e->kve_inheritance == PF_OBSD_INHERIT_SHARE)
      return PF_OBJID_KERNEL;                /* private, made shared across fork */
    if (!(e->kve_protection & PF_OBSD_PROT_WRITE) && !(e->kve_etype & PF_OBSD_ET_OBJ))
      return -EFAULT;                        /* read-only anonymous memory */
    return 0;                                /* private: keyed by address */
  }
  return e->kve_inheritance == PF_OBSD_INHERIT_SHARE ? PF_OBJID_KERNEL : PF_OBJID_NONE;
}

/* The entry holding a, copied into *e: 1, 0 none, -1 the map cannot be
 * had.  The buffer is mapped, not allocated (a signal handler's op may get
 * here). */
static int
pf_obsd_entry(uintptr_t a, struct kinfo_vmentry *e)
{
  int mib[3] = { CTL_KERN, KERN_PROC_VMMAP, (int)getpid() };
  size_t room = 0, len, n, i;
  struct kinfo_vmentry *buf;
  unsigned long start = 0;
  int ret = -1, rounds;

  if (sysctl(mib, 3, NULL, &room, NULL, 0) != 0 || room < sizeof *buf)
    return -1;
  room -= room % sizeof *buf;
  buf = mmap(NULL, room, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANON, -1, 0);
  if (buf == MAP_FAILED)
    return -1;
  for (rounds = 0; rounds < 1 << 16; rounds++) {
    memset(buf, 0, sizeof *buf);
    buf[0].kve_start = start;
    len = room;
    if (sysctl(mib, 3, buf, &len, NULL, 0) != 0)
      break;                                 /* -1 */
    n = len / sizeof *buf;
    for (i = 0; i < n && buf[i].kve_start <= a; i++)
      if (a < buf[i].kve_end)
        break;
    if (i < n || n < room / sizeof *buf) {   /* decided: at or past a, or the map's end */
      ret = i < n && buf[i].kve_start <= a;
      if (ret)
        *e = buf[i];
      break;
    }
    if (buf[n - 1].kve_start + 1 <= start)
      break;                                 /* no progress, an answer the kernel would not
                                                give: -1 */
    start = buf[n - 1].kve_start + 1;        /* a full buffer, all below a: go on */
  }
  munmap(buf, room);
  return ret;
}

int
PF_OPENBSD_OBJID(const void *p, struct pf_os_objid *id)
{
  struct kinfo_vmentry e;
  uint32_t v;
  int r, saved = errno;

  memset(id, 0, sizeof *id);
  if (pf_os_word_read(p, &v) < 0)
    return -EFAULT;
  r = pf_obsd_entry((uintptr_t)p, &e);
  errno = saved;
  if (r < 0)
    return -ENOSYS;
  if (r == 0)
    return -EFAULT;
  return PF_OPENBSD_CLASSIFY(&e);            /* shared: OpenBSD names no object; its own
                                                futex keys it (park.c os_futex) */
}
