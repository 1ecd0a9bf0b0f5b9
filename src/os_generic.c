/* os_generic.c - src/os.h where the OS offers no cheap answer: a plain copy
 * (a bad pointer faults here, in the caller's thread, with no lock held)
 * and no probes. */
#include "os.h"

#include <string.h>

int
pf_os_copy_in(void *dst, const void *src, size_t n)
{
  memcpy(dst, src, n);
  return 0;
}

int
pf_os_probe_write(const void *p)
{
  (void)p;
  return 0;
}

int
pf_os_shared_key_check(const void *p)
{
  (void)p;
  return 0;
}
