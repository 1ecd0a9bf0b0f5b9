/* linux_arch: the native backend's per-architecture row (ports/linux/arch.h)
 * that this build selected, printed and checked against the C library's
 * <sys/syscall.h> wherever it names the same call, and against the kernel:
 * each number is called once with an operation that is harmless (a wake of
 * nobody on a private word) and must not answer ENOSYS, except the futex2
 * and time64 calls on kernels that predate them (then said so).
 *
 * Then the choice the native backend made, from what the kernel answered
 * this process (the test runs linux-nofutex2 and linux-notime64 refuse
 * calls with a seccomp filter, or under qemu-user in libc's syscall()):
 * futex2 when it works, else on a 32-bit row futex_time64 when the kernel
 * has it (preferred over the time32 call), else futex; a timed wait
 * through the chosen call times out.  And the byte order: FUTEX_WAKE_OP
 * on a word holding 1 (ADD 1) leaves 2, through the kernel and through the
 * active backend. */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
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

  plan(11);
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

  /* The native backend's choice. */
  {
    const char *got = pfutex_backend(), *want;
    long f2 = syscall(PF_ARCH_NR_FUTEX_WAKE, &w, 0xffffffffUL, 0L, 2L | 128L);
    long t64 = PF_ARCH_NR_FUTEX_TIME64 ? raw(PF_ARCH_NR_FUTEX_TIME64, &w, 1 | 128, 1) : -ENOSYS;
    f2 = f2 == -1 ? -errno : f2;
    want = f2 != -ENOSYS ? "linux:futex2" : t64 == 0 ? "linux:futex_time64" : "linux:futex";
    if (!got || strncmp(got, "linux", 5) != 0) {
      skip("the native backend is not the active one (%s)", got ? got : "none");
      skip("(native backend)");
    } else {
      uint32_t z = 0;
      struct timespec rel = { 0, 20 * 1000 * 1000 };
      long long t0 = pft_now_ns();
      long tr;
      diag("kernel answers: futex2 %s, futex_time64 %s; selected %s",
           f2 == -ENOSYS ? "ENOSYS" : "yes", PF_ARCH_NR_FUTEX_TIME64 ? (t64 == 0 ? "yes" : "ENOSYS") : "none",
           got);
      is_string(want, got, "the backend chose %s (futex2, else time64 on a 32-bit row, else futex)", want);
      errno = 0;
      tr = pfutex(&z, 0 | 128, 0, &rel, NULL, 0);
      ok(tr == -1 && errno == ETIMEDOUT && pft_now_ns() - t0 >= 19 * 1000 * 1000,
         "a 20 ms relative FUTEX_WAIT through %s times out (%ld/%s)", got, tr, pft_errname(errno));
    }
  }

  /* Byte order: FUTEX_WAKE_OP (ADD 1) on a word holding 1. */
  {
    static uint32_t a = 0, b = 1;
    uint32_t wrong = pft_kernel_wake_op_wrong();
    int bo = 1;
    diag("byte order: %s", *(unsigned char *)&bo ? "little-endian" : "big-endian");
    if (wrong && pft_emulator())
      skip("the kernel's FUTEX_WAKE_OP stored 0x%08x for 1 + 1 under %s (it applies the op in the "
           "host's byte order); the emulation's WAKE_OP is checked on this CPU by the other runs",
           (unsigned)wrong, pft_emulator());
    else
      ok(wrong == 0, "the kernel's FUTEX_WAKE_OP: 1 + 1 = 2 (stored 0x%08x)", wrong ? (unsigned)wrong : 2u);
    if (wrong && strncmp(pfutex_backend(), "linux", 5) == 0 && pft_emulator())
      skip("the native backend's WAKE_OP is the kernel's (above)");
    else {
      long r2 = pfutex(&a, 5 | 128, 0, NULL, &b,
                       PFUTEX_OP(PFUTEX_OP_ADD, 1, PFUTEX_OP_CMP_EQ, 0));
      ok(r2 == 0 && b == 2, "WAKE_OP through %s: 1 + 1 = 2 (returned %ld, stored 0x%08x)",
         pfutex_backend(), r2, (unsigned)b);
    }
  }
  return 0;
}
