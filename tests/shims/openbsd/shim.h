/* shim.h - OpenBSD's futex(2), as the openbsd port sees it, redirected to a
 * model on Linux futexes (shim.c).  Only for PF_SHIM builds.
 *
 * Declarations and values from openbsd/src:
 *   sys/sys/futex.h (rev 1.2, 2018-06-03; the same values in rev 1.3,
 *   2025-05-07): FUTEX_WAIT 1, FUTEX_WAKE 2, FUTEX_REQUEUE 3,
 *   FUTEX_PRIVATE_FLAG 128, FUTEX_*_PRIVATE = op | FUTEX_PRIVATE_FLAG;
 *   the prototype below.  lib/libc/sys/futex.2 (rev 1.5, 2019; current
 *   man.openbsd.org page): the behaviour shim.c models.
 * Not confirmed: rev 1.3's FUTEX_OP_MASK 0x007f / FUTEX_FLAG_MASK 0xff80
 * were seen in a mirror only (not needed by the port). */
#ifndef PF_SHIM_OPENBSD_H
#define PF_SHIM_OPENBSD_H

#include <stdint.h>
#include <stddef.h>
#include <time.h>

#define FUTEX_WAIT          1
#define FUTEX_WAKE          2
#define FUTEX_REQUEUE       3
#define FUTEX_PRIVATE_FLAG  128
#define FUTEX_WAIT_PRIVATE    (FUTEX_WAIT | FUTEX_PRIVATE_FLAG)
#define FUTEX_WAKE_PRIVATE    (FUTEX_WAKE | FUTEX_PRIVATE_FLAG)
#define FUTEX_REQUEUE_PRIVATE (FUTEX_REQUEUE | FUTEX_PRIVATE_FLAG)

/* <sys/futex.h>: int futex(volatile uint32_t *, int, int,
 *                          const struct timespec *, volatile uint32_t *); */
int pf_shim_openbsd_futex(volatile uint32_t *uaddr, int op, int val,
                          const struct timespec *timeout, volatile uint32_t *uaddr2);
#define futex pf_shim_openbsd_futex

/* ---- The shim's own knobs (not OpenBSD's): tests/shims/openbsd/test.c ---- */
/* Every nth FUTEX_WAIT that would sleep returns 0 at once instead (a
 * spurious wakeup; 0: never).  Default 4, or $PF_SHIM_SPURIOUS. */
void pf_shim_openbsd_set_spurious(unsigned int n);
/* 1: the old return convention (the error number is the return value);
 * 0 (default, or $PF_SHIM_OPENBSD_OLDRET unset): -1 and errno. */
void pf_shim_openbsd_set_oldret(int on);
/* How many FUTEX_WAIT calls ended with EINTR / ECANCELED so far. */
unsigned long pf_shim_openbsd_interrupts(int ecanceled);

/* ---- The map query (ports/openbsd/objid.c) ---------------------------------
 * openbsd/src sys/sys/sysctl.h: CTL_KERN 1, KERN_PROC_VMMAP 80, struct
 * kinfo_vmentry (field order and types below), KVE_ET_OBJ 0x01,
 * KVE_ET_COPYONWRITE 0x04, KVE_ET_NEEDSCOPY 0x08, KVE_PROT_*; the etype is
 * the entry's raw one and kve_inheritance the raw MAP_INHERIT_* value
 * (uvm/uvm_extern.h UVM_INHERIT; sys/sys/mman.h MAP_INHERIT_SHARE 0,
 * MAP_INHERIT_COPY 1).  The model (shim.c) answers the caller's own map
 * from Linux's, as kern_sysctl.c sysctl_proc_vmmap and uvm_map.c
 * uvm_map_fill_vmmap do:
 *   - a name of 3 ints (more: ENOTDIR; fewer: EINVAL); no buffer: the
 *     largest length, VMMAP_MAXLEN (MAXPHYS, 64 KiB), and 0; a length of 0,
 *     not a multiple of the record or above the largest: EINVAL; another
 *     process: EPERM here (root only on OpenBSD);
 *   - the first record's kve_start is where to begin: the entries whose
 *     start is at or above it (0: all), as many as fit, and the length
 *     filled (a full buffer is no error);
 *   - a Linux mapping as OpenBSD would show it: private ("p"):
 *     KVE_ET_COPYONWRITE | KVE_ET_NEEDSCOPY, inheritance MAP_INHERIT_COPY,
 *     KVE_ET_OBJ for a file; shared ("s"): inheritance MAP_INHERIT_SHARE,
 *     KVE_ET_OBJ for a file or a SysV segment (an inode), none for
 *     anonymous shared memory (an amap: Linux's /dev/zero, inode and all,
 *     cannot be told from a segment by the model, and need not be). */
#define CTL_KERN            1
#define KERN_PROC_VMMAP     80
#define KVE_ET_OBJ          0x00000001
#define KVE_ET_COPYONWRITE  0x00000004
#define KVE_ET_NEEDSCOPY    0x00000008
#define KVE_PROT_NONE       0x00000000
#define KVE_PROT_READ       0x00000001
#define KVE_PROT_WRITE      0x00000002
#define KVE_PROT_EXEC       0x00000004
struct kinfo_vmentry {
  unsigned long kve_start;
  unsigned long kve_end;
  unsigned long kve_guard;
  unsigned long kve_fspace;
  unsigned long kve_fspace_augment;
  uint64_t kve_offset;
  int kve_wired_count;
  int kve_etype;
  int kve_protection;
  int kve_max_protection;
  int kve_advice;
  int kve_inheritance;
  uint8_t kve_flags;
};
#define sysctl pf_shim_openbsd_sysctl
int sysctl(const int *name, unsigned int namelen, void *oldp, size_t *oldlenp, void *newp,
           size_t newlen);
/* How many map queries this process made (tests/shims/openbsd/test.c). */
unsigned long pf_shim_openbsd_sysctls(void);

/* ports/openbsd/objid.c, built over this shim. */
struct pf_os_objid;
int pf_openbsd_shim_object_id(const void *p, struct pf_os_objid *id);
/* ... its answer for one map entry (PF_OPENBSD_CLASSIFY). */
int pf_openbsd_shim_classify(const struct kinfo_vmentry *e);
/* The shim port's object_id (ports/openbsd/park.c): by default the host's
 * (Linux's) identity, so the suite's shared-memory tests run the engine on
 * this port as on emu-futex; pf_shim_openbsd_set_identity(1) (or
 * $PF_SHIM_OPENBSD_IDENTITY=1 at start) makes it OpenBSD's, the model
 * above through ports/openbsd/objid.c, as the real port is built. */
int pf_shim_openbsd_object_id(const void *p, struct pf_os_objid *id);
void pf_shim_openbsd_set_identity(int on);

#endif
