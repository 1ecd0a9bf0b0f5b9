/* os_consts_dragonfly.c - the DragonFly port's calls as its shim declares
 * them (tests/shims/dragonfly/shim.h), for tests/os_consts.  The port
 * spells no constant of DragonFly's. */
#include "../tests/shims/dragonfly/shim.h"
#include "os_consts.h"

#define S "tests/shims/dragonfly/shim.h"
/* (volatile has no Rust spelling: the crate's *const c_int) */
_Static_assert(__builtin_types_compatible_p(__typeof__(umtx_sleep), int (volatile const int *, int, int)),
               "the shim's umtx_sleep prototype");
_Static_assert(__builtin_types_compatible_p(__typeof__(umtx_wakeup), int (volatile const int *, int)),
               "the shim's umtx_wakeup prototype");

const struct pft_oc pft_oc_dragonfly[] = {
  PFT_OC_FN(umtx_sleep, "(*const c_int, c_int, c_int) -> c_int", S),
  PFT_OC_FN(umtx_wakeup, "(*const c_int, c_int) -> c_int", S),
  PFT_OC_END
};
