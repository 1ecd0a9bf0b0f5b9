/* os_consts_darwin.c - what the darwin port (ports/darwin/ulock.h) and its
 * shim (tests/shims/darwin/shim.h) spell of macOS, for tests/os_consts. */
#include "../tests/shims/darwin/shim.h"
#include "os_consts.h"

#define S "tests/shims/darwin/shim.h"
#define P "ports/darwin/ulock.h"

const struct pft_oc pft_oc_darwin[] = {
  PFT_OC_C(UL_COMPARE_AND_WAIT, S), PFT_OC_C(UL_UNFAIR_LOCK, S), PFT_OC_C(UL_COMPARE_AND_WAIT_SHARED, S),
  PFT_OC_C(UL_UNFAIR_LOCK64_SHARED, S), PFT_OC_C(UL_COMPARE_AND_WAIT64, S),
  PFT_OC_C(UL_COMPARE_AND_WAIT64_SHARED, S), PFT_OC_C(ULF_WAKE_ALL, S), PFT_OC_C(ULF_WAKE_THREAD, S),
  PFT_OC_C(ULF_WAKE_ALLOW_NON_OWNER, S), PFT_OC_C(ULF_NO_ERRNO, S),
  PFT_OC_C(OS_SYNC_WAIT_ON_ADDRESS_NONE, S), PFT_OC_C(OS_SYNC_WAIT_ON_ADDRESS_SHARED, S),
  PFT_OC_C(OS_SYNC_WAKE_BY_ADDRESS_NONE, S), PFT_OC_C(OS_SYNC_WAKE_BY_ADDRESS_SHARED, S),
  PFT_OC_C(OS_CLOCK_MACH_ABSOLUTE_TIME, S),
  PFT_OC_C(KERN_SUCCESS, S), PFT_OC_C(KERN_INVALID_ADDRESS, S), PFT_OC_C(KERN_INVALID_ARGUMENT, S),
  PFT_OC_C(VM_PROT_READ, S), PFT_OC_C(VM_PROT_WRITE, S), PFT_OC_C(VM_PROT_EXECUTE, S),
  PFT_OC_C(VM_INHERIT_SHARE, S), PFT_OC_C(VM_INHERIT_COPY, S), PFT_OC_C(VM_REGION_BASIC_INFO_64, S),
  PFT_OC_C(VM_REGION_EXTENDED_INFO, S), PFT_OC_C(VM_PAGE_INFO_BASIC, S),
  PFT_OC_C(VM_PAGE_QUERY_PAGE_PRESENT, S),
  PFT_OC_SZ(vm_region_basic_info_64, S), PFT_OC_OFF(vm_region_basic_info_64, protection, S),
  PFT_OC_OFF(vm_region_basic_info_64, inheritance, S), PFT_OC_OFF(vm_region_basic_info_64, offset, S),
  PFT_OC_SZ(vm_region_extended_info, S), PFT_OC_OFF(vm_region_extended_info, external_pager, S),
  PFT_OC_OFF(vm_region_extended_info, share_mode, S),
  PFT_OC_SZ(vm_page_info_basic, S), PFT_OC_OFF(vm_page_info_basic, object_id, S),
  PFT_OC_OFF(vm_page_info_basic, offset, S), PFT_OC_OFF(vm_page_info_basic, depth, S),
  PFT_OC_END
};

/* The port's own spelling, read apart from the shim's (the same names). */
#undef UL_COMPARE_AND_WAIT
#undef UL_COMPARE_AND_WAIT_SHARED
#undef ULF_WAKE_ALL
#undef ULF_NO_ERRNO
#undef PF_DARWIN_HAVE_OS_SYNC
#undef OS_SYNC_WAIT_ON_ADDRESS_NONE
#undef OS_SYNC_WAIT_ON_ADDRESS_SHARED
#undef OS_SYNC_WAKE_BY_ADDRESS_NONE
#undef OS_SYNC_WAKE_BY_ADDRESS_SHARED
#undef PF_DARWIN_ULOCK_H
#include "../ports/darwin/ulock.h"

const struct pft_oc pft_oc_darwin_port[] = {
  PFT_OC_C(UL_COMPARE_AND_WAIT, P), PFT_OC_C(UL_COMPARE_AND_WAIT_SHARED, P),
  PFT_OC_C(ULF_WAKE_ALL, P), PFT_OC_C(ULF_NO_ERRNO, P),
  PFT_OC_C(OS_SYNC_WAIT_ON_ADDRESS_NONE, P), PFT_OC_C(OS_SYNC_WAIT_ON_ADDRESS_SHARED, P),
  PFT_OC_C(OS_SYNC_WAKE_BY_ADDRESS_NONE, P), PFT_OC_C(OS_SYNC_WAKE_BY_ADDRESS_SHARED, P),
  PFT_OC_END
};
