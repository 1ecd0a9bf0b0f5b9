/* vmmap.h - the values of OpenBSD's <sys/sysctl.h> and <uvm/uvm_extern.h>
 * that ports/openbsd/objid.c reads in a struct kinfo_vmentry, spelled by
 * the port (KVE_ET_*, KVE_PROT_* and KVE_INH_* are in the kernel's
 * headers, not always visible to a program): openbsd/src sys/sys/sysctl.h
 * and sys/uvm/uvm_extern.h (MAP_INHERIT_SHARE).  tests/os_consts compares
 * them with the Rust libc crate's. */
#ifndef PF_OPENBSD_VMMAP_H
#define PF_OPENBSD_VMMAP_H

#define PF_OBSD_ET_OBJ        0x01      /* KVE_ET_OBJ */
#define PF_OBSD_ET_COW        0x04      /* KVE_ET_COPYONWRITE */
#define PF_OBSD_PROT_READ     0x01      /* KVE_PROT_READ */
#define PF_OBSD_PROT_WRITE    0x02      /* KVE_PROT_WRITE */
#define PF_OBSD_INHERIT_SHARE 0         /* KVE_INH_SHARE, MAP_INHERIT_SHARE */

#endif
