/* procmap.h - Linux's PROCMAP_QUERY ioctl on /proc/self/maps (Linux 6.11,
 * include/uapi/linux/fs.h), declared here for headers older than that:
 * one mapping by address, with its flags, offset, device and inode.
 * ports/linux/objid.c asks it for a shared word's object; the shims'
 * models of the BSD and macOS map calls (tests/shims/procmaps.h) ask it
 * for the mapping they describe. */
#ifndef PF_LINUX_PROCMAP_H
#define PF_LINUX_PROCMAP_H

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

struct pf_procmap_query {
  uint64_t size, query_flags, query_addr;
  uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset;
  uint64_t inode;
  uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
  uint64_t vma_name_addr, build_id_addr;
};
#define PF_PROCMAP_QUERY _IOWR('f', 17, struct pf_procmap_query)
/* vma_flags (the maps file gives the same bits in its "rwxs" field) */
#define PF_PROCMAP_VMA_READABLE   0x01u
#define PF_PROCMAP_VMA_WRITABLE   0x02u
#define PF_PROCMAP_VMA_EXECUTABLE 0x04u
#define PF_PROCMAP_VMA_SHARED     0x08u
/* query_flags: the mapping holding the address, else the next one */
#define PF_PROCMAP_COVERING_OR_NEXT 0x10u

/* SysV segments.  A segment is a shmem file whose inode number is its
 * shmid (ipc/shm.c newseg), so it shares its numbers with the other files
 * of its device (anonymous shared memory and memfds: get_next_ino), and
 * every IPC namespace numbers its segments from 0.  The kernel keys a
 * futex by the inode itself, never by its number.  Here a segment is
 * told by its name ("/SYSV" and the key, in the maps file and in the
 * query's vma_name) and its inode number becomes the tag below, the IPC
 * namespace's inode number (bits 31-62) and the shmid (bits 0-30): no
 * other file's number has bit 63 (shmem's are 32-bit), and two namespaces'
 * segments differ. */
#define PF_PROCMAP_SYSV_INO 0x8000000000000000ull

static inline int
pf_procmap_sysv_name(const char *name)
{
  return strncmp(name, "/SYSV", 5) == 0;
}

/* The identity's inode number for segment shmid of this process's IPC
 * namespace (0 in bits 31-62 if /proc/self/ns/ipc cannot be read). */
static inline uint64_t
pf_procmap_sysv_ino(uint64_t shmid)
{
  char buf[64];
  uint64_t ns = 0;
  ssize_t n = readlink("/proc/self/ns/ipc", buf, sizeof buf - 1);
  if (n > 0) {
    const char *q = memchr(buf, '[', (size_t)n);
    buf[n] = '\0';
    for (q = q ? q + 1 : buf + n; *q >= '0' && *q <= '9'; q++)
      ns = ns * 10 + (uint64_t)(*q - '0');
  }
  return PF_PROCMAP_SYSV_INO | (ns & 0xffffffffull) << 31 | (shmid & 0x7fffffffull);
}

/* The inode number an identity takes for a mapping named `name` showing
 * inode number ino: a segment's tagged as above, any other's as it is. */
static inline uint64_t
pf_procmap_ino(uint64_t ino, const char *name)
{
  return pf_procmap_sysv_name(name) ? pf_procmap_sysv_ino(ino) : ino;
}

/* The query (q prepared: size, flags, address) with the mapping's name in
 * name[size] ("" when it has none); a name that does not fit
 * (ENAMETOOLONG) is a file's, asked again without it (name ""): 0, or the
 * ioctl's errno. */
static inline int
pf_procmap_query_named(int fd, struct pf_procmap_query *q, char *name, uint32_t size)
{
  memset(name, 0, size);                      /* (valgrind does not see the kernel write it) */
  q->vma_name_addr = (uint64_t)(uintptr_t)name;
  q->vma_name_size = size;
  if (ioctl(fd, PF_PROCMAP_QUERY, q) == 0)
    return 0;
  if (errno != ENAMETOOLONG)
    return errno;
  q->vma_name_addr = 0;
  q->vma_name_size = 0;
  name[0] = '\0';
  return ioctl(fd, PF_PROCMAP_QUERY, q) == 0 ? 0 : errno;
}

#endif
