/* linux_arch: the native backend's per-architecture row (ports/linux/arch.h)
 * that this build selected, printed and checked against the C library's
 * <sys/syscall.h> wherever it names the same call, and against the kernel:
 * each number is called once with an operation that is harmless (a wake of
 * nobody on a private word) and must not answer ENOSYS, except the futex2
 * and time64 calls on kernels that predate them (then said so). */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include <errno.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "arch.h"
#include "pft.h"

static long
raw(long nr, void *a1, long a2, long a3)
{
  long r = syscall(nr, a1, a2, a3, 0L, 0L, 0L);
  return r == -1 ? -errno : r;
}

int
main(void)
{
  uint32_t w = 0;
  long r;

  plan(7);
  diag("row: %s, futex %d, futex_time64 %d, futex2 %d/%d/%d, %s", PF_ARCH_NAME,
       (int)PF_ARCH_NR_FUTEX, (int)PF_ARCH_NR_FUTEX_TIME64, PF_ARCH_NR_FUTEX_WAKE,
       PF_ARCH_NR_FUTEX_WAIT, PF_ARCH_NR_FUTEX_REQUEUE,
       PF_ARCH_SYSCALL_INSN ? "raw syscall instruction" : "libc syscall()");
#ifdef SYS_futex
  is_int(SYS_futex, PF_ARCH_NR_FUTEX, "futex: the row agrees with <sys/syscall.h>");
#else
  skip("the C library names no SYS_futex");
#endif
#ifdef SYS_futex_time64
  is_int(SYS_futex_time64, PF_ARCH_NR_FUTEX_TIME64,
         "futex_time64: the row agrees with <sys/syscall.h>");
#else
  ok(PF_ARCH_NR_FUTEX_TIME64 == 0 || sizeof(void *) == 4,
     "futex_time64: none in <sys/syscall.h>, none in the row (or a 32-bit row)");
#endif
#ifdef SYS_futex_wake
  ok(SYS_futex_wake == PF_ARCH_NR_FUTEX_WAKE && SYS_futex_wait == PF_ARCH_NR_FUTEX_WAIT
         && SYS_futex_requeue == PF_ARCH_NR_FUTEX_REQUEUE,
     "futex_wake/wait/requeue: the row agrees with <sys/syscall.h>");
#else
  skip("the C library's headers predate futex_wake/wait/requeue (Linux 6.7)");
#endif
  /* The kernel: FUTEX_WAKE_PRIVATE of one on a word nobody waits on -> 0. */
  r = raw(PF_ARCH_NR_FUTEX, &w, 1 | 128, 1);
  is_int(0, r, "the kernel answers the row's futex number as futex (a wake of nobody)");
  if (PF_ARCH_NR_FUTEX_TIME64) {
    r = raw(PF_ARCH_NR_FUTEX_TIME64, &w, 1 | 128, 1);
    ok(r == 0 || r == -ENOSYS, "futex_time64: %s", r == 0 ? "a wake of nobody"
       : r == -ENOSYS ? "ENOSYS (a kernel before 5.1, or refused)" : pft_errname((int)-r));
  } else {
    skip("no futex_time64 on this architecture");
  }
  /* futex_wake(uaddr, mask, nr, flags): FUTEX2_SIZE_U32 | FUTEX2_PRIVATE, nr 0 */
  {
    long k = syscall(PF_ARCH_NR_FUTEX_WAKE, &w, 0xffffffffUL, 0L, 2L | 128L);
    r = k == -1 ? -errno : k;
  }
  ok(r == 0 || r == -ENOSYS, "futex_wake: %s", r == 0 ? "woke nobody"
     : r == -ENOSYS ? "ENOSYS (a kernel before 6.7, or refused)" : pft_errname((int)-r));
  ok(PF_ARCH_SYSCALL_INSN == 0 || sizeof(void *) == 8,
     "the raw syscall instruction only in a 64-bit row (%s)", PF_ARCH_NAME);
  return 0;
}
