/* region_peer.h - the protocol between tests/region_exec and its helper
 * program tests/region_peer, through the memory of a named region.
 *
 *   region_peer NAME SLOT ROLE ARGS...
 * opens the region NAME by name (it is an unrelated process: fork + exec),
 * does ROLE and reports in slot SLOT of the control area; its exit status
 * is 0 when it could do its part (the test checks the results).  Roles:
 *   wait K          FUTEX_WAIT (shared) on word K, value 0
 *   wake K          wait until the parent (the test) sleeps after setting
 *                   test_started, then pfutex_wake(word K, 1)
 *   wake_now K      FUTEX_WAKE (shared) word K, INT_MAX
 *   cmp_requeue K1 VAL K2 NR_WAKE NR_REQUEUE
 *                   FUTEX_CMP_REQUEUE from word K1 to word K2
 *   wake_op K1 K2 OP   pfutex_wake_op(word K1, word K2, 1, 1, OP, shared)
 */
#ifndef PF_REGION_PEER_H
#define PF_REGION_PEER_H

#include <stdint.h>

#define RP_SIZE 8192u
#define RP_WORD(k) ((uint32_t)(k) * 64u)        /* futex word k (k < 32) */
#define RP_CTL_OFF 4096u
#define RP_SLOTS 4

struct rp_slot {
  volatile int32_t started;       /* the peer opened the region, is about to act */
  volatile int32_t done;          /* its call returned */
  volatile int32_t test_started;  /* the test is about to wait (role wake) */
  int32_t err;
  int64_t ret;
  char backend[32];               /* pfutex_backend() in the peer */
};

#endif
