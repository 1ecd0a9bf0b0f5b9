/* wake_op: the FUTEX_WAKE_OP encoding.  The op (SET ADD OR ANDN XOR, with
 * OPARG_SHIFT: operand 1 << (oparg & 31)) is applied to *uaddr2; oparg and
 * cmparg are sign-extended 12-bit fields; waiters of uaddr2 are woken when
 * the signed comparison of the OLD *uaddr2 with cmparg holds.  An unknown
 * op fails with ENOSYS before touching *uaddr2; an unknown cmp fails with
 * ENOSYS after the op was applied, waking nobody.  Also pfutex_wake_op. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <pfutex/linux.h>
#include "pft.h"

static uint32_t u1, u2;

#define NR2(n) ((const struct timespec *)(uintptr_t)(n))

static long
wake_op(uint32_t encoded)
{
  return pfutex(&u1, FUTEX_WAKE_OP_PRIVATE, 1, NR2(1), &u2, encoded);
}

/* No waiters: returns 0 and leaves `want` in *uaddr2.  2 tests. */
static void
op_case(uint32_t init, uint32_t encoded, uint32_t want, const char *what)
{
  u1 = 0;
  u2 = init;
  PFT_IS(wake_op(encoded), 0, 0, what);
  if (!ok(u2 == want, "%s: *uaddr2 %#x -> %#x", what, init, want))
    diag("    got %#x", u2);
}

/* One waiter on uaddr, one on uaddr2 (*uaddr2 == old); the comparison
 * decides whether the second is woken.  `clean` uses pfutex_wake_op.
 * 2 tests. */
static void
cmp_case(int clean, uint32_t old, uint32_t encoded, int holds, const char *what)
{
  struct pft_waiter a = { .uaddr = &u1, .val = 0, .op_flags = FUTEX_PRIVATE_FLAG };
  struct pft_waiter b = { .uaddr = &u2, .op_flags = FUTEX_PRIVATE_FLAG };
  long r;
  int e;

  u1 = 0;
  u2 = old;
  b.val = old;
  pft_waiter_start(&a);
  pft_waiter_start(&b);
  errno = 0;
  r = clean ? pfutex_wake_op(&u1, &u2, 1, 1, encoded, PFUTEX_PRIVATE) : wake_op(encoded);
  e = errno;
  pft_is_ret(r, e, holds ? 2 : 1, 0, what);
  if (r < 1)                    /* do not hang on a broken wake */
    pfutex(&u1, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
  pft_waiter_join(&a);
  if (holds) {
    if (r != 2)
      pfutex(&u2, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    pft_waiter_join(&b);
    ok(r == 2 && b.ret == 0, "%s: the uaddr2 waiter was woken", what);
  } else {
    int asleep = pft_wait_asleep(b.tid) == 0 && !b.done;
    ok(asleep, "%s: the uaddr2 waiter is still asleep", what);
    pfutex(&u2, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    pft_waiter_join(&b);
  }
}

/* An unknown op or cmp: -1/ENOSYS, *uaddr2 == want afterwards.  2 tests. */
static void
bad_case(int clean, uint32_t encoded, uint32_t want, const char *what)
{
  long r;
  int e;
  u1 = 0;
  u2 = 0x55;
  errno = 0;
  r = clean ? pfutex_wake_op(&u1, &u2, 1, 1, encoded, PFUTEX_PRIVATE) : wake_op(encoded);
  e = errno;
  pft_is_ret(r, e, -1, ENOSYS, what);
  if (!ok(u2 == want, "%s: *uaddr2 %#x afterwards", what, want))
    diag("    got %#x", u2);
}

#define SH FUTEX_OP_OPARG_SHIFT

int
main(void)
{
  char name[64];
  int i;

  plan(123);
  pft_watchdog(60);
  if (pft_skip_wake_op(123))
    return 0;

  /* ---- the ops (cmp EQ 0 on a nonzero old value: nothing to wake anyway) */
  op_case(0x1234, PFUTEX_OP(FUTEX_OP_SET, 7, FUTEX_OP_CMP_EQ, 0), 7, "SET 7");
  op_case(0x1234, PFUTEX_OP(FUTEX_OP_SET, 0x7ff, FUTEX_OP_CMP_EQ, 0), 0x7ff, "SET 0x7ff");
  op_case(0x1234, PFUTEX_OP(FUTEX_OP_SET, 0x800, FUTEX_OP_CMP_EQ, 0), 0xfffff800u, "SET 0x800 (-2048)");
  op_case(5, PFUTEX_OP(FUTEX_OP_ADD, 3, FUTEX_OP_CMP_EQ, 0), 8, "ADD 3");
  op_case(5, PFUTEX_OP(FUTEX_OP_ADD, 0xfff, FUTEX_OP_CMP_EQ, 0), 4, "ADD 0xfff (-1)");
  op_case(0xffffffffu, PFUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_EQ, 0), 0, "ADD 1 wraps");
  op_case(0x10, PFUTEX_OP(FUTEX_OP_OR, 3, FUTEX_OP_CMP_EQ, 0), 0x13, "OR 3");
  op_case(0x10, PFUTEX_OP(FUTEX_OP_OR, 0xfff, FUTEX_OP_CMP_EQ, 0), 0xffffffffu, "OR 0xfff (-1)");
  op_case(0xff, PFUTEX_OP(FUTEX_OP_ANDN, 0x0f, FUTEX_OP_CMP_EQ, 0), 0xf0, "ANDN 0xf");
  op_case(0xffffffffu, PFUTEX_OP(FUTEX_OP_ANDN, 0x800, FUTEX_OP_CMP_EQ, 0), 0x7ff, "ANDN 0x800 (-2048)");
  op_case(0xf0, PFUTEX_OP(FUTEX_OP_XOR, 0xff, FUTEX_OP_CMP_EQ, 0), 0x0f, "XOR 0xff");
  op_case(0xf0, PFUTEX_OP(FUTEX_OP_XOR, 0xfff, FUTEX_OP_CMP_EQ, 0), 0xffffff0fu, "XOR 0xfff (-1)");
  /* OPARG_SHIFT */
  op_case(0x1234, PFUTEX_OP((FUTEX_OP_SET | SH), 5, FUTEX_OP_CMP_EQ, 0), 32, "SET|SHIFT 5");
  op_case(1, PFUTEX_OP((FUTEX_OP_ADD | SH), 4, FUTEX_OP_CMP_EQ, 0), 17, "ADD|SHIFT 4");
  op_case(1, PFUTEX_OP((FUTEX_OP_OR | SH), 31, FUTEX_OP_CMP_EQ, 0), 0x80000001u, "OR|SHIFT 31");
  op_case(0xff, PFUTEX_OP((FUTEX_OP_ANDN | SH), 4, FUTEX_OP_CMP_EQ, 0), 0xef, "ANDN|SHIFT 4");
  op_case(0xff, PFUTEX_OP((FUTEX_OP_XOR | SH), 0, FUTEX_OP_CMP_EQ, 0), 0xfe, "XOR|SHIFT 0");
  op_case(0x1234, PFUTEX_OP((FUTEX_OP_SET | SH), 33, FUTEX_OP_CMP_EQ, 0), 2, "SET|SHIFT 33 (masked to 1)");
  op_case(0x1234, PFUTEX_OP((FUTEX_OP_SET | SH), 0x7ff, FUTEX_OP_CMP_EQ, 0), 0x80000000u,
          "SET|SHIFT 0x7ff (masked to 31)");
  op_case(0x1234, PFUTEX_OP((FUTEX_OP_SET | SH), 0xfff, FUTEX_OP_CMP_EQ, 0), 0x80000000u,
          "SET|SHIFT 0xfff (-1, masked to 31)");
  /* 40 tests so far */

  /* ---- the comparisons, on the signed OLD value (op ADD 0 keeps it) */
#define KEEP(cmp, arg) PFUTEX_OP(FUTEX_OP_ADD, 0, (cmp), (arg))
  cmp_case(0, 5, KEEP(FUTEX_OP_CMP_EQ, 5), 1, "5 EQ 5");
  cmp_case(0, 5, KEEP(FUTEX_OP_CMP_EQ, 6), 0, "5 EQ 6");
  cmp_case(0, 0xfffff800u, KEEP(FUTEX_OP_CMP_EQ, 0x800), 1, "-2048 EQ 0x800 (-2048)");
  cmp_case(0, 0x800, KEEP(FUTEX_OP_CMP_EQ, 0x800), 0, "2048 EQ 0x800 (-2048)");
  cmp_case(0, 5, KEEP(FUTEX_OP_CMP_NE, 6), 1, "5 NE 6");
  cmp_case(0, 5, KEEP(FUTEX_OP_CMP_NE, 5), 0, "5 NE 5");
  cmp_case(0, 0xfffffffeu, KEEP(FUTEX_OP_CMP_LT, 0xfff), 1, "-2 LT 0xfff (-1)");
  cmp_case(0, 0xffffffffu, KEEP(FUTEX_OP_CMP_LT, 0xfff), 0, "-1 LT 0xfff (-1)");
  cmp_case(0, 0xffffffffu, KEEP(FUTEX_OP_CMP_LT, 1), 1, "-1 LT 1 (signed)");
  cmp_case(0, 5, KEEP(FUTEX_OP_CMP_LE, 5), 1, "5 LE 5");
  cmp_case(0, 6, KEEP(FUTEX_OP_CMP_LE, 5), 0, "6 LE 5");
  cmp_case(0, 0x80000000u, KEEP(FUTEX_OP_CMP_LE, 0), 1, "INT_MIN LE 0 (signed)");
  cmp_case(0, 6, KEEP(FUTEX_OP_CMP_GT, 5), 1, "6 GT 5");
  cmp_case(0, 5, KEEP(FUTEX_OP_CMP_GT, 5), 0, "5 GT 5");
  cmp_case(0, 0xffffffffu, KEEP(FUTEX_OP_CMP_GT, 5), 0, "-1 GT 5 (signed)");
  cmp_case(0, 5, KEEP(FUTEX_OP_CMP_GE, 5), 1, "5 GE 5");
  cmp_case(0, 4, KEEP(FUTEX_OP_CMP_GE, 5), 0, "4 GE 5");
  cmp_case(0, 0, KEEP(FUTEX_OP_CMP_GE, 0xfff), 1, "0 GE 0xfff (-1)");
  /* the old value is compared, not the new one */
  cmp_case(0, 5, PFUTEX_OP(FUTEX_OP_SET, 10, FUTEX_OP_CMP_EQ, 5), 1, "SET 10, old 5 EQ 5");
  cmp_case(0, 5, PFUTEX_OP(FUTEX_OP_SET, 5, FUTEX_OP_CMP_NE, 5), 0, "SET 5 on 5, old NE 5");
  cmp_case(0, 5, PFUTEX_OP(FUTEX_OP_ADD, 1, FUTEX_OP_CMP_GT, 5), 0, "ADD 1, old 5 GT 5");
  /* 40 + 42 = 82 */

  /* ---- unknown op: nothing modified; unknown cmp: modified, then ENOSYS */
  for (i = 5; i <= 7; i++) {
    snprintf(name, sizeof name, "op %d", i);
    bad_case(0, PFUTEX_OP(i, 1, FUTEX_OP_CMP_EQ, 0), 0x55, name);
  }
  for (i = 6; i <= 15; i++) {
    snprintf(name, sizeof name, "cmp %d", i);
    bad_case(0, PFUTEX_OP(FUTEX_OP_SET, 9, i, 0), 9, name);
  }
  /* 82 + 6 + 20 = 108 */

  /* an unknown cmp wakes nobody on uaddr either */
  {
    struct pft_waiter a = { .uaddr = &u1, .val = 0, .op_flags = FUTEX_PRIVATE_FLAG };
    u1 = 0;
    u2 = 0x55;
    pft_waiter_start(&a);
    PFT_IS(wake_op(PFUTEX_OP(FUTEX_OP_SET, 9, 7, 0)), -1, ENOSYS, "cmp 7 with a waiter on uaddr");
    is_int(9, u2, "cmp 7 with a waiter: *uaddr2 modified");
    ok(pft_wait_asleep(a.tid) == 0 && !a.done, "cmp 7: the uaddr waiter is still asleep");
    pfutex(&u1, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    pft_waiter_join(&a);
  }
  /* 111 */

  /* ---- pfutex_wake_op with PFUTEX_OP */
  u1 = 0;
  u2 = 5;
  PFT_IS(pfutex_wake_op(&u1, &u2, 1, 1, PFUTEX_OP(PFUTEX_OP_ADD, 0xfff, PFUTEX_OP_CMP_EQ, 0),
                        PFUTEX_PRIVATE), 0, 0, "pfutex_wake_op ADD -1, no waiters");
  is_int(4, u2, "pfutex_wake_op ADD -1: 5 -> 4");
  u2 = 0;
  PFT_IS(pfutex_wake_op(&u1, &u2, 1, 1,
                        PFUTEX_OP(PFUTEX_OP_OR | PFUTEX_OP_OPARG_SHIFT, 35, PFUTEX_OP_CMP_EQ, 0),
                        PFUTEX_PRIVATE), 0, 0, "pfutex_wake_op OR|SHIFT 35, no waiters");
  is_int(8, u2, "pfutex_wake_op OR|SHIFT 35: 0 -> 8");
  cmp_case(1, 0xfffffffeu, PFUTEX_OP(PFUTEX_OP_SET, 0, PFUTEX_OP_CMP_LT, 0xfff), 1,
           "pfutex_wake_op -2 LT -1");
  cmp_case(1, 5, PFUTEX_OP(PFUTEX_OP_SET, 0, PFUTEX_OP_CMP_GE, 6), 0, "pfutex_wake_op 5 GE 6");
  bad_case(1, PFUTEX_OP(6, 1, PFUTEX_OP_CMP_EQ, 0), 0x55, "pfutex_wake_op op 6");
  bad_case(1, PFUTEX_OP(PFUTEX_OP_SET, 9, 15, 0), 9, "pfutex_wake_op cmp 15");
  /* 111 + 4 + 4 + 4 = 123 */
  return 0;
}
