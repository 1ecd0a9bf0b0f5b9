/* procmap.h - Linux's PROCMAP_QUERY ioctl on /proc/self/maps (Linux 6.11,
 * include/uapi/linux/fs.h), declared here for headers older than that:
 * one mapping by address, with its flags, offset, device and inode.
 * ports/linux/objid.c asks it for a shared word's object; the shims'
 * models of the BSD and macOS map calls (tests/shims/procmaps.h) ask it
 * for the mapping they describe. */
#ifndef PF_LINUX_PROCMAP_H
#define PF_LINUX_PROCMAP_H

#include <stdint.h>
#include <sys/ioctl.h>

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

#endif
