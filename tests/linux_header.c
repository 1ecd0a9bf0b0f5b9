/* linux_header: <pfutex/linux.h> gives the FUTEX_* names with Linux's
 * values, with no clash when <linux/futex.h> comes before or after it, and
 * futex() is the multiplexer. */
#include "config.h"
#include <errno.h>
#ifdef HAVE_LINUX_FUTEX_H
# include <linux/futex.h>     /* before ours */
#endif
#include <pfutex/linux.h>
#ifdef HAVE_LINUX_FUTEX_H
# include <linux/futex.h>     /* and after: the include guard, no redefinition */
#endif

#include "pft.h"

int
main(void)
{
  uint32_t w = 5;
  plan(13);
  is_int(0, FUTEX_WAIT, "FUTEX_WAIT");
  is_int(1, FUTEX_WAKE, "FUTEX_WAKE");
  is_int(3, FUTEX_REQUEUE, "FUTEX_REQUEUE");
  is_int(4, FUTEX_CMP_REQUEUE, "FUTEX_CMP_REQUEUE");
  is_int(5, FUTEX_WAKE_OP, "FUTEX_WAKE_OP");
  is_int(9, FUTEX_WAIT_BITSET, "FUTEX_WAIT_BITSET");
  is_int(10, FUTEX_WAKE_BITSET, "FUTEX_WAKE_BITSET");
  is_int(128, FUTEX_PRIVATE_FLAG, "FUTEX_PRIVATE_FLAG");
  is_int(256, FUTEX_CLOCK_REALTIME, "FUTEX_CLOCK_REALTIME");
  is_int((long)0xffffffffu, (long)(uint32_t)FUTEX_BITSET_MATCH_ANY, "FUTEX_BITSET_MATCH_ANY");
  is_int((long)PFUTEX_OP(PFUTEX_OP_ADD, 1, PFUTEX_OP_CMP_GT, 0),
         (long)(uint32_t)FUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_GT, 0), "FUTEX_OP == PFUTEX_OP");
  errno = 0;
  ok(futex(&w, FUTEX_WAIT_PRIVATE, 4, NULL, NULL, 0) == -1 && errno == EAGAIN,
     "futex() wraps pfutex(): WAIT on a mismatch is EAGAIN");
  ok(futex(&w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0) == 0, "futex() WAKE with no waiter is 0");
  return 0;
}
