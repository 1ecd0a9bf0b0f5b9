/* futex_op.c - FUTEX_WAKE_OP's encoded operation (FUTEX_OP()): decode it,
 * apply it, compare; the emulated op is in src/wake_op.c, the native
 * fallback in ports/linux/native.c.
 *
 * Encoding (Linux): bit 31 OPARG_SHIFT, bits 28-30 op, 24-27 cmp, 12-23
 * oparg, 0-11 cmparg; oparg and cmparg are sign-extended 12-bit numbers.
 * With OPARG_SHIFT the operand is 1 << oparg, oparg clamped to 0..31 by
 * masking (the kernel logs and masks rather than failing).  An op other
 * than SET/ADD/OR/ANDN/XOR is ENOSYS before anything is stored; an unknown
 * cmp is ENOSYS after the store.  Comparisons are on the old value as int.
 */
#include "pf.h"

static int32_t
pf_sext12(uint32_t v)
{
  v &= 0xfffu;
  return (v & 0x800u) ? (int32_t)(v | 0xfffff000u) : (int32_t)v;
}

int
pf_wakeop_valid_op(uint32_t encoded)
{
  return ((encoded >> 28) & 7u) <= PFUTEX_OP_XOR;
}

uint32_t
pf_wakeop_apply(uint32_t encoded, uint32_t oldval)
{
  uint32_t op = (encoded >> 28) & 7u;
  int32_t oparg = pf_sext12(encoded >> 12);
  uint32_t arg;

  if (encoded & ((uint32_t)PFUTEX_OP_OPARG_SHIFT << 28))
    arg = (uint32_t)1 << ((uint32_t)oparg & 31u);
  else
    arg = (uint32_t)oparg;
  switch (op) {
  case PFUTEX_OP_SET:  return arg;
  case PFUTEX_OP_ADD:  return oldval + arg;
  case PFUTEX_OP_OR:   return oldval | arg;
  case PFUTEX_OP_ANDN: return oldval & ~arg;
  default:             return oldval ^ arg;   /* XOR; callers check validity first */
  }
}

int
pf_wakeop_compare(uint32_t encoded, uint32_t oldval)
{
  int32_t old = (int32_t)oldval;
  int32_t cmparg = pf_sext12(encoded);
  switch ((encoded >> 24) & 0xfu) {
  case PFUTEX_OP_CMP_EQ: return old == cmparg;
  case PFUTEX_OP_CMP_NE: return old != cmparg;
  case PFUTEX_OP_CMP_LT: return old < cmparg;
  case PFUTEX_OP_CMP_LE: return old <= cmparg;
  case PFUTEX_OP_CMP_GT: return old > cmparg;
  case PFUTEX_OP_CMP_GE: return old >= cmparg;
  default:               return -ENOSYS;
  }
}
