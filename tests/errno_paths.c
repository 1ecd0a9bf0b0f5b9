/* errno_paths: every errno path of the multiplexer pfutex() and of the clean
 * calls, with the kernel's answers (Linux 6.18): alignment, NULL addresses,
 * bad timespecs (checked before the address), zero bitsets, negative counts,
 * unknown, removed and PI ops, FUTEX_CLOCK_REALTIME combinations and value
 * mismatches.  Nothing here blocks. */
#include <errno.h>
#include <stdint.h>
#include <time.h>
#include "pft.h"
#if defined(__linux__)
# include <sys/syscall.h>
# include <unistd.h>
#endif

#define VAL2(n) ((const struct timespec *)(uintptr_t)(unsigned)(n))

static uint32_t words[4] __attribute__((aligned(16)));

int
main(void)
{
  uint32_t *a = &words[0], *b = &words[1];
  uint32_t *mis = (uint32_t *)(void *)((char *)&words[2] + 1);
  const struct timespec neg_ns = { 0, -1 }, big_ns = { 0, 1000000000L };
  const struct timespec neg_s = { -1, 0 }, zero = { 0, 0 };
  struct timespec past;
  static const int pi_ops[] = { 6, 7, 8, 11, 12, 13 };
  static const int bad_ops[] = { 2, 14, -1, 1 | 0x200 };
  unsigned i;

#if defined(__linux__) && defined(SYS_futex)
  plan(89);                      /* the six PI ops' kernel answers as well */
#else
  plan(83);
#endif
  pft_watchdog(60);

  /* ---- misaligned addresses: EINVAL ---- */
  PFT_IS(pfutex(mis, 0 | 128, 0, &zero, NULL, 0), -1, EINVAL, "WAIT_PRIVATE misaligned");
  PFT_IS(pfutex(mis, 0, 0, &zero, NULL, 0), -1, EINVAL, "WAIT misaligned");
  PFT_IS(pfutex(mis, 1 | 128, 1, NULL, NULL, 0), -1, EINVAL, "WAKE_PRIVATE misaligned");
  PFT_IS(pfutex(mis, 1, 1, NULL, NULL, 0), -1, EINVAL, "WAKE misaligned");
  PFT_IS(pfutex(mis, 3 | 128, 1, VAL2(1), b, 0), -1, EINVAL, "REQUEUE misaligned uaddr");
  PFT_IS(pfutex(a, 3 | 128, 1, VAL2(1), mis, 0), -1, EINVAL, "REQUEUE misaligned uaddr2");
  PFT_IS(pfutex(mis, 4 | 128, 1, VAL2(1), b, 0), -1, EINVAL, "CMP_REQUEUE misaligned uaddr");
  PFT_IS(pfutex(a, 4 | 128, 1, VAL2(1), mis, *a), -1, EINVAL, "CMP_REQUEUE misaligned uaddr2");
  PFT_IS(pfutex(mis, 5 | 128, 1, VAL2(1), b, 0), -1, EINVAL, "WAKE_OP misaligned uaddr");
  PFT_IS(pfutex(a, 5 | 128, 1, VAL2(1), mis, 0), -1, EINVAL, "WAKE_OP misaligned uaddr2");

  /* ---- NULL addresses ---- */
  PFT_IS(pfutex(NULL, 0 | 128, 0, &zero, NULL, 0), -1, EFAULT, "WAIT_PRIVATE on NULL");
  PFT_IS(pfutex(NULL, 0, 0, &zero, NULL, 0), -1, EFAULT, "shared WAIT on NULL");
  PFT_IS(pfutex(NULL, 1 | 128, 1, NULL, NULL, 0), 0, 0, "WAKE_PRIVATE on NULL (no key lookup)");
  PFT_IS(pfutex(NULL, 1, 1, NULL, NULL, 0), -1, EFAULT, "shared WAKE on NULL");
  PFT_IS(pfutex(NULL, 4 | 128, 1, VAL2(1), b, 0), -1, EFAULT, "CMP_REQUEUE_PRIVATE with NULL uaddr");
  PFT_IS(pfutex(NULL, 4, 1, VAL2(1), b, 0), -1, EFAULT, "shared CMP_REQUEUE with NULL uaddr");
  PFT_IS(pfutex(a, 5 | 128, 1, VAL2(1), NULL, 0), -1, EFAULT, "WAKE_OP_PRIVATE with NULL uaddr2");
  PFT_IS(pfutex(a, 5, 1, VAL2(1), NULL, 0), -1, EFAULT, "shared WAKE_OP with NULL uaddr2");

  /* ---- bad timespecs: EINVAL, before the address is looked at ---- */
  *a = 0;
  PFT_IS(pfutex(a, 0 | 128, 0, &neg_ns, NULL, 0), -1, EINVAL, "WAIT tv_nsec -1");
  PFT_IS(pfutex(a, 0 | 128, 0, &big_ns, NULL, 0), -1, EINVAL, "WAIT tv_nsec 1e9");
  PFT_IS(pfutex(a, 0 | 128, 0, &neg_s, NULL, 0), -1, EINVAL, "WAIT tv_sec -1");
  PFT_IS(pfutex(a, 9 | 128, 0, &neg_ns, NULL, ~0u), -1, EINVAL, "WAIT_BITSET tv_nsec -1");
  PFT_IS(pfutex(a, 9 | 128, 0, &big_ns, NULL, ~0u), -1, EINVAL, "WAIT_BITSET tv_nsec 1e9");
  PFT_IS(pfutex(a, 9 | 128, 0, &neg_s, NULL, ~0u), -1, EINVAL, "WAIT_BITSET tv_sec -1");
  PFT_IS(pfutex(a, 0 | 128, 1, &neg_ns, NULL, 0), -1, EINVAL, "WAIT bad timeout before value mismatch");
  PFT_IS(pfutex(NULL, 0 | 128, 0, &big_ns, NULL, 0), -1, EINVAL, "WAIT bad timeout before NULL address");
  PFT_IS(pfutex(mis, 9 | 128, 0, &neg_s, NULL, ~0u), -1, EINVAL, "WAIT_BITSET bad timeout before misalignment");
  PFT_IS(pfutex(NULL, 9 | 256, 0, &neg_ns, NULL, ~0u), -1, EINVAL, "WAIT_BITSET|CLOCK_REALTIME bad timeout before NULL");

  /* ---- zero bitsets ---- */
  PFT_IS(pfutex(a, 9 | 128, 0, NULL, NULL, 0), -1, EINVAL, "WAIT_BITSET zero bitset");
  PFT_IS(pfutex(a, 10 | 128, 1, NULL, NULL, 0), -1, EINVAL, "WAKE_BITSET zero bitset");
  PFT_IS(pfutex(a, 10, 1, NULL, NULL, 0), -1, EINVAL, "shared WAKE_BITSET zero bitset");

  /* ---- negative requeue counts ---- */
  PFT_IS(pfutex(a, 3 | 128, (uint32_t)-1, VAL2(1), b, 0), -1, EINVAL, "REQUEUE nr_wake -1");
  PFT_IS(pfutex(a, 3 | 128, 1, VAL2(-1), b, 0), -1, EINVAL, "REQUEUE nr_requeue -1");
  PFT_IS(pfutex(a, 4 | 128, (uint32_t)-1, VAL2(1), b, *a), -1, EINVAL, "CMP_REQUEUE nr_wake -1");
  PFT_IS(pfutex(a, 4 | 128, 1, VAL2(-1), b, *a), -1, EINVAL, "CMP_REQUEUE nr_requeue -1");

  /* ---- unknown, removed and PI ops: ENOSYS ---- */
  for (i = 0; i < sizeof bad_ops / sizeof bad_ops[0]; i++) {
    errno = 0;
    {
      long r = pfutex(a, bad_ops[i], 0, NULL, NULL, 0);
      int e = errno;
      ok(r == -1 && e == ENOSYS, "op %d: -1/ENOSYS", bad_ops[i]);
      if (!(r == -1 && e == ENOSYS))
        diag("    got %ld, errno %d", r, e);
    }
  }
  /* The PI ops: the kernel's answers (a fresh word each, the kernel's
   * call on another as the reference: tests/futex_ext has the scenarios);
   * where there is no kernel to ask, Linux 6.18's answers to these calls
   * (pi_want: the same comparison checks them on Linux). */
  for (i = 0; i < sizeof pi_ops / sizeof pi_ops[0]; i++) {
    static const struct { long r; int e; } pi_want[] = {
      { 0, 0 }, { -1, EPERM }, { 0, 0 }, { -1, EAGAIN }, { -1, EINVAL }, { 0, 0 }
    };
    uint32_t kw[2] = { pi_ops[i] == 11, 0 };    /* WAIT_REQUEUE_PI: a mismatch, never a wait */
    long r, kr = pi_want[i].r;
    int e, ke = pi_want[i].e;
    *a = kw[0];
    *b = 0;
    errno = 0;
    r = pfutex(a, pi_ops[i] | 128, 0, NULL, b, 0);
    e = errno;
#if defined(__linux__) && defined(SYS_futex)
    {
      errno = 0;
      kr = syscall(SYS_futex, &kw[0], pi_ops[i] | 128, 0, NULL, &kw[1], 0);
      ke = errno;
      if (pft_emulator() && kr == -1 && ke == ENOSYS && pi_want[i].e != ENOSYS) {
        skip("PI op %d: %s answers ENOSYS: no reference", pi_ops[i], pft_emulator());
        if (pft_backend_is_emu()) {        /* Linux's answer, then */
          kr = pi_want[i].r;
          ke = pi_want[i].e;
        }
      } else {
        ok(kr == pi_want[i].r && (kr != -1 || ke == pi_want[i].e),
           "PI op %d: the kernel answers %ld/%s as Linux 6.18 did", pi_ops[i], kr,
           kr == -1 ? pft_errname(ke) : "-");
      }
      if (kr == 0 && (pi_ops[i] == 6 || pi_ops[i] == 8 || pi_ops[i] == 13))
        kw[0] = 0;                          /* (ours is unlocked below: compare values) */
    }
#endif
    if (r == 0 && (pi_ops[i] == 6 || pi_ops[i] == 8 || pi_ops[i] == 13))
      *a = 0;
    ok(r == kr && (r != -1 || e == ke) && *a == kw[0] && *b == kw[1],
       "PI op %d: %ld/%s, as the kernel", pi_ops[i], kr, kr == -1 ? pft_errname(ke) : "-");
    if (!(r == kr && (r != -1 || e == ke)))
      diag("    got %ld, errno %d", r, e);
  }
  *a = 0;
  *b = 0;

  /* ---- FUTEX_CLOCK_REALTIME ---- */
  *a = 0;
  PFT_IS(pfutex(a, 0 | 256, 0, &zero, NULL, 0), -1, ENOSYS, "WAIT|CLOCK_REALTIME");
  PFT_IS(pfutex(a, 0 | 128 | 256, 0, &zero, NULL, 0), -1, ENOSYS, "WAIT_PRIVATE|CLOCK_REALTIME");
  PFT_IS(pfutex(a, 1 | 128 | 256, 1, NULL, NULL, 0), -1, ENOSYS, "WAKE_PRIVATE|CLOCK_REALTIME");
  PFT_IS(pfutex(a, 9 | 128 | 256, 0, &zero, NULL, ~0u), -1, ETIMEDOUT,
         "WAIT_BITSET|CLOCK_REALTIME accepted (past deadline)");
  PFT_IS(pfutex(a, 9 | 128 | 256, 1, NULL, NULL, ~0u), -1, EAGAIN,
         "WAIT_BITSET|CLOCK_REALTIME accepted (mismatch)");

  /* ---- value mismatches ---- */
  *a = 5;
  PFT_IS(pfutex(a, 4 | 128, 1, VAL2(1), b, 6), -1, EAGAIN, "CMP_REQUEUE_PRIVATE value mismatch");
  PFT_IS(pfutex(a, 4, 1, VAL2(1), b, 6), -1, EAGAIN, "shared CMP_REQUEUE value mismatch");
  PFT_IS(pfutex(a, 4 | 128, 1, VAL2(1), b, 5), 0, 0, "CMP_REQUEUE_PRIVATE value match, nobody waits");
  PFT_IS(pfutex(a, 0 | 128, 6, NULL, NULL, 0), -1, EAGAIN, "WAIT_PRIVATE value mismatch");

  /* ---- clean calls ---- */
  *a = 0;
  clock_gettime(CLOCK_MONOTONIC, &past);
  PFT_IS(pfutex_wait(a, 0, ~0u, 1u << 20, &past, PFUTEX_CLOCK_MONOTONIC), -1, EINVAL,
         "pfutex_wait unknown flag bit");
  PFT_IS(pfutex_wait(a, 0, ~0u, PFUTEX_PRIVATE | 1, &past, PFUTEX_CLOCK_MONOTONIC), -1, EINVAL,
         "pfutex_wait PRIVATE plus unknown bit");
  PFT_IS(pfutex_wake(a, ~0u, 1, 1u << 20), -1, EINVAL, "pfutex_wake unknown flag bit");
  PFT_IS(pfutex_requeue(a, b, 1, 1, 1u << 20), -1, EINVAL, "pfutex_requeue unknown flag bit");
  PFT_IS(pfutex_wait(a, 0, 0, PFUTEX_PRIVATE, &past, PFUTEX_CLOCK_MONOTONIC), -1, EINVAL,
         "pfutex_wait mask 0");
  PFT_IS(pfutex_wake(a, 0, 1, PFUTEX_PRIVATE), -1, EINVAL, "pfutex_wake mask 0");
  PFT_IS(pfutex_wake(a, ~0u, -1, PFUTEX_PRIVATE), -1, EINVAL, "pfutex_wake nr -1");
  PFT_IS(pfutex_requeue(a, b, -1, 0, PFUTEX_PRIVATE), -1, EINVAL, "pfutex_requeue nr_wake -1");
  PFT_IS(pfutex_cmp_requeue(a, 0, b, 0, -1, PFUTEX_PRIVATE), -1, EINVAL,
         "pfutex_cmp_requeue nr_requeue -1");
  PFT_IS(pfutex_wake_op(a, b, -1, 0, PFUTEX_OP(0, 0, 0, 0), PFUTEX_PRIVATE), -1, EINVAL,
         "pfutex_wake_op nr_wake -1");
  PFT_IS(pfutex_wait(a, 0, ~0u, PFUTEX_PRIVATE, &past, 7), -1, EINVAL, "pfutex_wait clockid 7");
  PFT_IS(pfutex_wait(a, 0, ~0u, PFUTEX_PRIVATE, &big_ns, PFUTEX_CLOCK_MONOTONIC), -1, EINVAL,
         "pfutex_wait deadline tv_nsec 1e9");
  PFT_IS(pfutex_wait(a, 0, ~0u, PFUTEX_PRIVATE, &neg_ns, PFUTEX_CLOCK_MONOTONIC), -1, EINVAL,
         "pfutex_wait deadline tv_nsec -1");
  PFT_IS(pfutex_wait(a, 1, ~0u, PFUTEX_PRIVATE, NULL, PFUTEX_CLOCK_MONOTONIC), -1, EAGAIN,
         "pfutex_wait value mismatch");
  *a = 3;
  PFT_IS(pfutex_cmp_requeue(a, 4, b, 1, 1, PFUTEX_PRIVATE), -1, EAGAIN,
         "pfutex_cmp_requeue value mismatch");

  /* ---- untimed waits on a mismatched word, wakes with nobody waiting:
   * the emulation answers these in the front ends (src/api.c, futex.c);
   * every earlier check must still win over EAGAIN / 0 ---- */
  *a = 7;
  PFT_IS(pfutex_wait(a, 1, ~0u, 1u << 20, NULL, PFUTEX_CLOCK_MONOTONIC), -1, EINVAL,
         "untimed mismatched pfutex_wait, unknown flag bit");
  PFT_IS(pfutex_wait(a, 1, 0, PFUTEX_PRIVATE, NULL, PFUTEX_CLOCK_MONOTONIC), -1, EINVAL,
         "untimed mismatched pfutex_wait, mask 0");
  PFT_IS(pfutex_wait((uint32_t *)((char *)a + 1), 1, ~0u, PFUTEX_PRIVATE, NULL,
                     PFUTEX_CLOCK_MONOTONIC), -1, EINVAL, "untimed pfutex_wait, unaligned");
  PFT_IS(pfutex_wait(NULL, 1, ~0u, PFUTEX_PRIVATE, NULL, PFUTEX_CLOCK_MONOTONIC), -1, EFAULT,
         "untimed pfutex_wait, NULL");
  PFT_IS(pfutex_wake((uint32_t *)((char *)a + 2), ~0u, 1, PFUTEX_PRIVATE), -1, EINVAL,
         "pfutex_wake, unaligned");
  PFT_IS(pfutex_wake(NULL, ~0u, 1, 0), -1, EFAULT, "shared pfutex_wake, NULL");
  PFT_IS(pfutex_wake(a, ~0u, 0, PFUTEX_PRIVATE), 0, 0, "pfutex_wake nr 0, nobody waits");
  PFT_IS(pfutex((uint32_t *)((char *)a + 1), 0 | 128, 1, NULL, NULL, 0), -1, EINVAL,
         "untimed WAIT_PRIVATE, unaligned");
  PFT_IS(pfutex(NULL, 0 | 128, 1, NULL, NULL, 0), -1, EFAULT, "untimed WAIT_PRIVATE, NULL");
  PFT_IS(pfutex(a, 0 | 128 | 256, 1, NULL, NULL, 0), -1, ENOSYS,
         "untimed mismatched WAIT_PRIVATE|CLOCK_REALTIME");
  PFT_IS(pfutex((uint32_t *)((char *)a + 2), 1 | 128, 1, NULL, NULL, 0), -1, EINVAL,
         "WAKE_PRIVATE, unaligned");
  PFT_IS(pfutex(NULL, 1, 1, NULL, NULL, 0), -1, EFAULT, "shared WAKE, NULL");
  PFT_IS(pfutex(NULL, 1 | 128, 1, NULL, NULL, 0), 0, 0, "WAKE_PRIVATE, NULL: 0 as on Linux");
  PFT_IS(pfutex(a, 1 | 128, 0, NULL, NULL, 0), 0, 0, "WAKE_PRIVATE val 0, nobody waits");
  return 0;
}
