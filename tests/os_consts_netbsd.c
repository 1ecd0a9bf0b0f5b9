/* os_consts_netbsd.c - what the NetBSD port (ports/netbsd/vmmap.h) and its
 * shim (tests/shims/netbsd/shim.h) spell of NetBSD, for tests/os_consts. */
#include "../tests/shims/netbsd/shim.h"
#include "../ports/netbsd/vmmap.h"
#include "os_consts.h"

#define S "tests/shims/netbsd/shim.h"
#define P "ports/netbsd/vmmap.h"

const struct pft_oc pft_oc_netbsd[] = {
  PFT_OC_C(FUTEX_WAIT, S), PFT_OC_C(FUTEX_WAKE, S), PFT_OC_C(FUTEX_REQUEUE, S),
  PFT_OC_C(FUTEX_CMP_REQUEUE, S), PFT_OC_C(FUTEX_WAKE_OP, S), PFT_OC_C(FUTEX_WAIT_BITSET, S),
  PFT_OC_C(FUTEX_WAKE_BITSET, S), PFT_OC_C(FUTEX_PRIVATE_FLAG, S), PFT_OC_C(FUTEX_CLOCK_REALTIME, S),
  PFT_OC_C(FUTEX_CMD_MASK, S), PFT_OC_C(FUTEX_BITSET_MATCH_ANY, S), PFT_OC_C(SYS___futex, S),
  PFT_OC_C(CTL_VM, S), PFT_OC_C(VM_PROC, S), PFT_OC_C(VM_PROC_MAP, S),
  PFT_OC_C(KVME_TYPE_NONE, S), PFT_OC_C(KVME_TYPE_OBJECT, S), PFT_OC_C(KVME_TYPE_VNODE, S),
  PFT_OC_C(KVME_TYPE_KERN, S), PFT_OC_C(KVME_TYPE_DEVICE, S), PFT_OC_C(KVME_TYPE_ANON, S),
  PFT_OC_C(KVME_TYPE_SUBMAP, S), PFT_OC_C(KVME_TYPE_UNKNOWN, S),
  PFT_OC_C(KVME_PROT_READ, S), PFT_OC_C(KVME_PROT_WRITE, S), PFT_OC_C(KVME_PROT_EXEC, S),
  PFT_OC_C(KVME_FLAG_COW, S), PFT_OC_C(KVME_FLAG_NEEDS_COPY, S),
  PFT_OC_CN("MAP_INHERIT_SHARE", PF_NBSD_INHERIT_SHARE, P),
  PFT_OC_SZ(kinfo_vmentry, S),
  PFT_OC_OFF(kinfo_vmentry, kve_start, S), PFT_OC_OFF(kinfo_vmentry, kve_end, S),
  PFT_OC_OFF(kinfo_vmentry, kve_offset, S), PFT_OC_OFF(kinfo_vmentry, kve_type, S),
  PFT_OC_OFF(kinfo_vmentry, kve_flags, S), PFT_OC_OFF(kinfo_vmentry, kve_protection, S),
  PFT_OC_OFF(kinfo_vmentry, kve_inheritance, S), PFT_OC_OFF(kinfo_vmentry, kve_vn_fileid, S),
  PFT_OC_OFF(kinfo_vmentry, kve_vn_fsid, S), PFT_OC_OFF(kinfo_vmentry, kve_path, S),
  PFT_OC_END
};
