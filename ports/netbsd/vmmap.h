/* vmmap.h - the value of NetBSD's <uvm/uvm_param.h> / <sys/mman.h> that
 * ports/netbsd/objid.c compares a struct kinfo_vmentry's kve_inheritance
 * with, spelled by the port (netbsd/src sys/sys/mman.h: MAP_INHERIT_SHARE
 * 0).  tests/os_consts compares it with the Rust libc crate's. */
#ifndef PF_NETBSD_VMMAP_H
#define PF_NETBSD_VMMAP_H

#define PF_NBSD_INHERIT_SHARE 0         /* MAP_INHERIT_SHARE */

#endif
