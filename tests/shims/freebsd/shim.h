/* shim.h - FreeBSD's _umtx_op(2), as ports/freebsd/park.c sees it, for the
 * port's second build on Linux (configure --enable-test-shims=freebsd):
 * the OS's names, signature and constant values, the call redirected to
 * the model in shim.c.
 *
 * Sources (checked with the search tool, freebsd/freebsd-src):
 *   sys/sys/umtx.h     the op codes, UMTX_ABSTIME, the _umtx_op prototype
 *                      (FreeBSD 11 and later; 15 and 16 exist since 8.x)
 *   sys/sys/_umtx.h    struct _umtx_time
 *   sys/sys/_clock_id.h  CLOCK_REALTIME 0, CLOCK_MONOTONIC 4: not defined
 *                      here.  The port names the clock; each build takes the
 *                      value from its own <time.h> (Linux's 0 and 1 here),
 *                      and the shim reads _clockid as a host clock id.
 *   lib/libc/sys/_umtx_op.2, sys/kern/kern_umtx.c  the behaviour (shim.c). */
#ifndef PF_SHIM_FREEBSD_H
#define PF_SHIM_FREEBSD_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* sys/sys/umtx.h: op codes for _umtx_op (the ones the port uses). */
#define UMTX_OP_WAIT              2
#define UMTX_OP_WAKE              3
#define UMTX_OP_WAIT_UINT         11
#define UMTX_OP_WAIT_UINT_PRIVATE 15
#define UMTX_OP_WAKE_PRIVATE      16
/* sys/sys/umtx.h: _umtx_time._flags */
#define UMTX_ABSTIME              0x01

/* sys/sys/_umtx.h */
struct _umtx_time {
  struct timespec _timeout;
  uint32_t _flags;
  uint32_t _clockid;
};

/* sys/sys/umtx.h declares
 *   int _umtx_op(void *obj, int op, u_long val, void *uaddr, void *uaddr2);
 * (u_long is unsigned long; spelled out here, as glibc hides u_long in
 * strict modes). */
#define _umtx_op pf_shim_freebsd__umtx_op
int _umtx_op(void *obj, int op, unsigned long val, void *uaddr, void *uaddr2);

/* ---- The object identity calls (ports/freebsd/objid.c) -------------------
 * sys/sys/umtx.h: UMTX_OP_SHM and its flags (_umtx_op(NULL, UMTX_OP_SHM,
 * flags, addr, NULL): a descriptor of the umtx registry page of the
 * (object, offset) holding addr; kern_umtx.c umtx_shm). */
#define UMTX_OP_SHM               25
#define UMTX_SHM_CREAT            0x0001
#define UMTX_SHM_LOOKUP           0x0002
#define UMTX_SHM_DESTROY          0x0004
#define UMTX_SHM_ALIVE            0x0008
/* sys/sys/sysctl.h; sys/sys/user.h (struct kinfo_vmentry, 1160 bytes on
 * amd64, as FreeBSD 13-15 define it; kve_obj is the union's other member,
 * FreeBSD 13.1 and later).  The model (shim.c) answers
 * {CTL_KERN, KERN_PROC, KERN_PROC_VMMAP, pid} for the caller's pid from
 * Linux's /proc/self/maps, records packed as the kernel packs them
 * (kve_structsize: up to the path's end, rounded up to 8), and classifies
 * each mapping as FreeBSD would show its kind:
 *   private ("p")                 KVME_FLAG_COW (FreeBSD: private file
 *                                 mappings; private anonymous ones after a
 *                                 fork, which the model assumes always);
 *   a file (not on shmem 00:01,
 *   not under /dev/shm)           KVME_TYPE_VNODE, KF_ATTR_VALID, fsid the
 *                                 device, fileid the inode, kve_offset;
 *   shared anonymous (/dev/zero)  KVME_TYPE_SWAP, kve_obj a hash of the
 *                                 object (OBJ_ANON);
 *   POSIX shm (/dev/shm), memfd,
 *   SysV                          KVME_TYPE_SWAP, kve_obj 0 (no identity);
 * and UMTX_OP_SHM (CREAT, LOOKUP) with a file per (device, inode, byte
 * offset) in /dev/shm (pfutex-fbsd-umtxshm-*), one inode for every process
 * that asks about one word. */
#define CTL_KERN                  1
#define KERN_PROC                 14
#define KERN_PROC_VMMAP           32
#define KVME_TYPE_NONE            0
#define KVME_TYPE_DEFAULT         1
#define KVME_TYPE_VNODE           2
#define KVME_TYPE_SWAP            3
#define KVME_TYPE_DEVICE          4
#define KVME_TYPE_PHYS            5
#define KVME_TYPE_DEAD            6
#define KVME_TYPE_SG              7
#define KVME_TYPE_MGTDEVICE       8
#define KVME_TYPE_GUARD           9
#define KVME_TYPE_UNKNOWN         255
#define KVME_PROT_READ            0x00000001
#define KVME_PROT_WRITE           0x00000002
#define KVME_PROT_EXEC            0x00000004
#define KVME_FLAG_COW             0x00000001
#define KVME_FLAG_NEEDS_COPY      0x00000002
#define KF_ATTR_VALID             0x0001
struct kinfo_vmentry {
  int kve_structsize;
  int kve_type;
  uint64_t kve_start;
  uint64_t kve_end;
  uint64_t kve_offset;
  uint64_t kve_vn_fileid;
  uint32_t kve_vn_fsid_freebsd11;
  int kve_flags;
  int kve_resident;
  int kve_private_resident;
  int kve_protection;
  int kve_ref_count;
  int kve_shadow_count;
  int kve_vn_type;
  uint64_t kve_vn_size;
  uint32_t kve_vn_rdev_freebsd11;
  uint16_t kve_vn_mode;
  uint16_t kve_status;
  union {
    uint64_t _kve_vn_fsid;
    uint64_t _kve_obj;
  } kve_type_spec;
  uint64_t kve_vn_rdev;
  int _kve_ispare[8];
  char kve_path[1024];
};
#define kve_vn_fsid kve_type_spec._kve_vn_fsid
#define kve_obj     kve_type_spec._kve_obj
#define sysctl pf_shim_freebsd_sysctl
int sysctl(const int *name, unsigned int namelen, void *oldp, size_t *oldlenp, const void *newp,
           size_t newlen);
/* Calls made in this process (tests/shims/freebsd/test.c). */
enum { PF_SHIM_FBSD_VMMAP, PF_SHIM_FBSD_UMTX_SHM, PF_SHIM_FBSD_NCOUNT };
unsigned long pf_shim_freebsd_count(int kind);

/* The shim's own knob (not FreeBSD's): every `every`-th wait of this
 * process returns 0 at once with the word unchanged, as a wake meant for an
 * earlier sleeper on the same word does (0: never).  The default comes
 * from $PF_SHIM_FREEBSD_SPURIOUS, else 5.  For tests/shims/freebsd/test.c. */
void pf_shim_freebsd_spurious(unsigned int every);


/* ports/freebsd/objid.c, built over this shim, and the shim port's
 * object_id (ports/freebsd/park.c): by default the host's (Linux's)
 * identity, so the suite's shared-memory tests run the engine on this port
 * as on emu-futex; pf_shim_freebsd_set_identity(1) (or
 * $PF_SHIM_FREEBSD_IDENTITY=1 at start) makes it FreeBSD's, the model
 * above through ports/freebsd/objid.c, as the real port is built. */
struct pf_os_objid;
int pf_freebsd_shim_object_id(const void *p, struct pf_os_objid *id);
int pf_shim_freebsd_object_id(const void *p, struct pf_os_objid *id);
void pf_shim_freebsd_set_identity(int on);

#endif
