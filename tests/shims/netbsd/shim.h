/* shim.h - NetBSD's __futex system call, as the netbsd port sees it
 * (syscall(SYS___futex, ...)), redirected to a model on Linux futexes
 * (shim.c).  Only for PF_SHIM builds; included after every system header.
 *
 * Values from NetBSD/src sys/sys/futex.h (rev 1.6, 2025-03-04; "intended
 * to be ABI-compatible with the Linux futex(2) system call"): FUTEX_WAIT 0,
 * FUTEX_WAKE 1, FUTEX_REQUEUE 3, FUTEX_CMP_REQUEUE 4, FUTEX_WAKE_OP 5,
 * FUTEX_WAIT_BITSET 9, FUTEX_WAKE_BITSET 10, FUTEX_PRIVATE_FLAG __BIT(7)
 * (128), FUTEX_CLOCK_REALTIME __BIT(8) (256), FUTEX_BITSET_MATCH_ANY
 * all 32 bits.  The seven arguments: sys/kern/sys_futex.c sys___futex
 * (rev 1.18, 2022-04-21).
 * Not confirmed from NetBSD's own sys/sys/syscall.h: SYS___futex = 166
 * (third-party code says so; the shim accepts only this number). */
#ifndef PF_SHIM_NETBSD_H
#define PF_SHIM_NETBSD_H

#include <time.h>

#define FUTEX_WAIT              0
#define FUTEX_WAKE              1
#define FUTEX_REQUEUE           3
#define FUTEX_CMP_REQUEUE       4
#define FUTEX_WAKE_OP           5
#define FUTEX_WAIT_BITSET       9
#define FUTEX_WAKE_BITSET       10
#define FUTEX_PRIVATE_FLAG      (1 << 7)
#define FUTEX_CLOCK_REALTIME    (1 << 8)
#define FUTEX_CMD_MASK          (~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME))
#define FUTEX_BITSET_MATCH_ANY  ((int)0xffffffffu)

#define SYS___futex 166

/* syscall(SYS___futex, int *uaddr, int op, int val,
 *         const struct timespec *timeout, int *uaddr2, int val2, int val3):
 * -1 and errno on error. */
long pf_shim_netbsd_syscall(long number, ...);
#undef syscall
#define syscall pf_shim_netbsd_syscall

/* ---- The shim's own knobs (not NetBSD's): tests/shims/netbsd/test.c ---- */
/* Every nth wait that would sleep returns 0 at once (a spurious wakeup;
 * 0: never).  Default 4, or $PF_SHIM_SPURIOUS. */
void pf_shim_netbsd_set_spurious(unsigned int n);
/* How many waits were restarted after an SA_RESTART handler so far. */
unsigned long pf_shim_netbsd_restarts(void);


/* ---- The map query (ports/netbsd/objid.c) ----------------------------------
 * NetBSD/src sys/sys/sysctl.h: CTL_VM 2, struct kinfo_vmentry (below,
 * 1128 bytes), KVME_TYPE_*, KVME_PROT_*, KVME_FLAG_*; uvm/uvm_param.h:
 * VM_PROC 16, VM_PROC_MAP 1.  The model (shim.c) answers the caller's own
 * map from Linux's, as uvm_map.c sysctl_vmproc and fill_vmentries do:
 *   - a name of 5 ints, else EINVAL; pid -1 or the caller's (another:
 *     ESRCH here); elem_size 0 or above twice the record: EINVAL;
 *   - no buffer: the length needed; above 10 MiB: E2BIG; room for no
 *     record: ENOMEM; too small: filled, ENOSPC, and the length needed;
 *     each record min(record, elem_size) bytes, elem_size apart;
 *   - a Linux mapping as NetBSD would show it: private ("p"):
 *     KVME_FLAG_COW | KVME_FLAG_NEEDS_COPY, MAP_INHERIT_COPY (1); shared:
 *     MAP_INHERIT_SHARE (0); a file (an inode not on Linux's internal
 *     shmem device 0:1, /dev/shm's tmpfs files included, as NetBSD's POSIX
 *     shm is a tmpfs file): KVME_TYPE_VNODE, kve_vn_fsid the device,
 *     kve_vn_fileid the inode; anonymous shared memory, SysV segments and
 *     memfds (shmem 0:1): KVME_TYPE_ANON, no file (NetBSD shows anonymous
 *     shared memory as UNKNOWN: no object; both name nothing); private
 *     anonymous memory: KVME_TYPE_UNKNOWN. */
#include <stdint.h>
#include <stddef.h>
#define CTL_VM                2
#define VM_PROC               16
#define VM_PROC_MAP           1
#define KVME_TYPE_NONE        0
#define KVME_TYPE_OBJECT      1
#define KVME_TYPE_VNODE       2
#define KVME_TYPE_KERN        3
#define KVME_TYPE_DEVICE      4
#define KVME_TYPE_ANON        5
#define KVME_TYPE_SUBMAP      6
#define KVME_TYPE_UNKNOWN     255
#define KVME_PROT_READ        0x00000001
#define KVME_PROT_WRITE       0x00000002
#define KVME_PROT_EXEC        0x00000004
#define KVME_FLAG_COW         0x00000001
#define KVME_FLAG_NEEDS_COPY  0x00000002
struct kinfo_vmentry {
  uint64_t kve_start;
  uint64_t kve_end;
  uint64_t kve_offset;
  uint32_t kve_type;
  uint32_t kve_flags;
  uint32_t kve_count;
  uint32_t kve_wired_count;
  uint32_t kve_advice;
  uint32_t kve_attributes;
  uint32_t kve_protection;
  uint32_t kve_max_protection;
  uint32_t kve_ref_count;
  uint32_t kve_inheritance;
  uint64_t kve_vn_fileid;
  uint64_t kve_vn_size;
  uint64_t kve_vn_fsid;
  uint64_t kve_vn_rdev;
  uint32_t kve_vn_type;
  uint32_t kve_vn_mode;
  char kve_path[1024];
};
#define sysctl pf_shim_netbsd_sysctl
int sysctl(const int *name, unsigned int namelen, void *oldp, size_t *oldlenp, const void *newp,
           size_t newlen);
/* How many map queries this process made (tests/shims/netbsd/test.c). */
unsigned long pf_shim_netbsd_sysctls(void);

/* ports/netbsd/objid.c, built over this shim. */
struct pf_os_objid;
int pf_netbsd_shim_object_id(const void *p, struct pf_os_objid *id);
/* The shim port's object_id (ports/netbsd/park.c): by default the host's
 * (Linux's) identity, so the suite's shared-memory tests run the engine on
 * this port as on emu-futex; pf_shim_netbsd_set_identity(1) (or
 * $PF_SHIM_NETBSD_IDENTITY=1 at start) makes it NetBSD's, the model above
 * through ports/netbsd/objid.c, as the real port is built. */
int pf_shim_netbsd_object_id(const void *p, struct pf_os_objid *id);
void pf_shim_netbsd_set_identity(int on);

#endif
