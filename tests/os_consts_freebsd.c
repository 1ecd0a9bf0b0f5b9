/* os_consts_freebsd.c - what the FreeBSD port's shim spells of FreeBSD
 * (tests/shims/freebsd/shim.h), for tests/os_consts.  On FreeBSD the port
 * takes all of it from <sys/umtx.h>, <sys/sysctl.h> and <sys/user.h>. */
#include "../tests/shims/freebsd/shim.h"
#include "os_consts.h"

#define S "tests/shims/freebsd/shim.h"
_Static_assert(__builtin_types_compatible_p(__typeof__(_umtx_op),
                                            int (void *, int, unsigned long, void *, void *)),
               "the shim's _umtx_op prototype");

const struct pft_oc pft_oc_freebsd[] = {
  PFT_OC_C(UMTX_OP_WAIT, S), PFT_OC_C(UMTX_OP_WAKE, S), PFT_OC_C(UMTX_OP_WAIT_UINT, S),
  PFT_OC_C(UMTX_OP_WAIT_UINT_PRIVATE, S), PFT_OC_C(UMTX_OP_WAKE_PRIVATE, S),
  PFT_OC_C(UMTX_OP_SHM, S), PFT_OC_C(UMTX_ABSTIME, S),
  PFT_OC_C(UMTX_SHM_CREAT, S), PFT_OC_C(UMTX_SHM_LOOKUP, S), PFT_OC_C(UMTX_SHM_DESTROY, S),
  PFT_OC_C(UMTX_SHM_ALIVE, S),
  PFT_OC_SZ(_umtx_time, S), PFT_OC_OFF(_umtx_time, _timeout, S),
  PFT_OC_OFF(_umtx_time, _flags, S), PFT_OC_OFF(_umtx_time, _clockid, S),
  PFT_OC_FN(_umtx_op, "(*mut c_void, c_int, c_ulong, *mut c_void, *mut c_void) -> c_int", S),
  PFT_OC_C(CTL_KERN, S), PFT_OC_C(KERN_PROC, S), PFT_OC_C(KERN_PROC_VMMAP, S),
  PFT_OC_C(KVME_TYPE_NONE, S), PFT_OC_C(KVME_TYPE_DEFAULT, S), PFT_OC_C(KVME_TYPE_VNODE, S),
  PFT_OC_C(KVME_TYPE_SWAP, S), PFT_OC_C(KVME_TYPE_DEVICE, S), PFT_OC_C(KVME_TYPE_PHYS, S),
  PFT_OC_C(KVME_TYPE_DEAD, S), PFT_OC_C(KVME_TYPE_SG, S), PFT_OC_C(KVME_TYPE_MGTDEVICE, S),
  PFT_OC_C(KVME_TYPE_GUARD, S), PFT_OC_C(KVME_TYPE_UNKNOWN, S),
  PFT_OC_C(KVME_PROT_READ, S), PFT_OC_C(KVME_PROT_WRITE, S), PFT_OC_C(KVME_PROT_EXEC, S),
  PFT_OC_C(KVME_FLAG_COW, S), PFT_OC_C(KVME_FLAG_NEEDS_COPY, S), PFT_OC_C(KF_ATTR_VALID, S),
  PFT_OC_SZ(kinfo_vmentry, S),
  PFT_OC_OFF(kinfo_vmentry, kve_structsize, S), PFT_OC_OFF(kinfo_vmentry, kve_type, S),
  PFT_OC_OFF(kinfo_vmentry, kve_start, S), PFT_OC_OFF(kinfo_vmentry, kve_end, S),
  PFT_OC_OFF(kinfo_vmentry, kve_offset, S), PFT_OC_OFF(kinfo_vmentry, kve_vn_fileid, S),
  PFT_OC_OFF(kinfo_vmentry, kve_flags, S), PFT_OC_OFF(kinfo_vmentry, kve_protection, S),
  PFT_OC_OFF(kinfo_vmentry, kve_status, S), PFT_OC_OFF(kinfo_vmentry, kve_vn_fsid, S),
  PFT_OC_OFF(kinfo_vmentry, kve_obj, S), PFT_OC_OFF(kinfo_vmentry, kve_path, S),
  PFT_OC_FSZ(kinfo_vmentry, kve_vn_fsid, S), PFT_OC_FSZ(kinfo_vmentry, kve_path, S),
  PFT_OC_END
};
