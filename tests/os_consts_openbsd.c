/* os_consts_openbsd.c - what the OpenBSD port (ports/openbsd/vmmap.h) and
 * its shim (tests/shims/openbsd/shim.h) spell of OpenBSD, for
 * tests/os_consts. */
#include "../tests/shims/openbsd/shim.h"
#include "../ports/openbsd/vmmap.h"
#include "os_consts.h"

#define S "tests/shims/openbsd/shim.h"
#define P "ports/openbsd/vmmap.h"
_Static_assert(__builtin_types_compatible_p(__typeof__(futex),
                                            int (volatile uint32_t *, int, int, const struct timespec *,
                                                 volatile uint32_t *)),
               "the shim's futex prototype");

const struct pft_oc pft_oc_openbsd[] = {
  PFT_OC_C(FUTEX_WAIT, S), PFT_OC_C(FUTEX_WAKE, S), PFT_OC_C(FUTEX_REQUEUE, S),
  PFT_OC_C(FUTEX_PRIVATE_FLAG, S),
  PFT_OC_FN(futex, "(*mut u32, c_int, c_int, *const timespec, *mut u32) -> c_int", S),
  PFT_OC_C(CTL_KERN, S), PFT_OC_C(KERN_PROC_VMMAP, S),
  PFT_OC_C(KVE_ET_OBJ, S), PFT_OC_C(KVE_ET_COPYONWRITE, S), PFT_OC_C(KVE_ET_NEEDSCOPY, S),
  PFT_OC_C(KVE_PROT_NONE, S), PFT_OC_C(KVE_PROT_READ, S), PFT_OC_C(KVE_PROT_WRITE, S),
  PFT_OC_C(KVE_PROT_EXEC, S),
  PFT_OC_CN("KVE_ET_OBJ", PF_OBSD_ET_OBJ, P), PFT_OC_CN("KVE_ET_COPYONWRITE", PF_OBSD_ET_COW, P),
  PFT_OC_CN("KVE_PROT_READ", PF_OBSD_PROT_READ, P), PFT_OC_CN("KVE_PROT_WRITE", PF_OBSD_PROT_WRITE, P),
  PFT_OC_CN("KVE_INH_SHARE", PF_OBSD_INHERIT_SHARE, P),
  PFT_OC_SZ(kinfo_vmentry, S),
  PFT_OC_OFF(kinfo_vmentry, kve_start, S), PFT_OC_OFF(kinfo_vmentry, kve_end, S),
  PFT_OC_OFF(kinfo_vmentry, kve_offset, S), PFT_OC_OFF(kinfo_vmentry, kve_etype, S),
  PFT_OC_OFF(kinfo_vmentry, kve_protection, S), PFT_OC_OFF(kinfo_vmentry, kve_inheritance, S),
  PFT_OC_OFF(kinfo_vmentry, kve_flags, S),
  PFT_OC_END
};
