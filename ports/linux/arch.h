/* arch.h - the native backend's per-architecture facts, one row each: the
 * futex system call numbers, whether the 32-bit time64 call exists, and
 * whether a raw syscall instruction is used instead of libc's syscall().
 * Each number is from the kernel's own table (cited per row); the futex2
 * calls (futex_wake 454, futex_wait 455, futex_requeue 456, Linux 6.7) and
 * futex_time64 (422, Linux 5.1, every 32-bit architecture) share one
 * number on every architecture here: the unified numbering of the
 * architecture-independent calls added since 5.1.  tests/linux_arch prints
 * the row a build selected and checks it against the C library's
 * <sys/syscall.h> where that defines the name.
 *
 *   arch       futex  time64  reference
 *   x86_64     202    -       arch/x86/entry/syscalls/syscall_64.tbl
 *   i386       240    422     arch/x86/entry/syscalls/syscall_32.tbl
 *   aarch64     98    -       include/uapi/asm-generic/unistd.h
 *   riscv64     98    -       include/uapi/asm-generic/unistd.h
 *   arm (EABI) 240    422     arch/arm/tools/syscall.tbl
 *   ppc64      221    -       arch/powerpc/kernel/syscalls/syscall.tbl
 *   s390x      238    -       arch/s390/kernel/syscalls/syscall.tbl
 * Elsewhere: libc's SYS_futex (and SYS_futex_time64 if it has one), said so
 * by PF_ARCH_NAME.  Every row but ppc64 big-endian is checked by
 * tests/linux_arch against the C library's headers for its CPU and against
 * the kernel: x86_64 natively, the others in .ci/cross's builds under
 * qemu-user (whose answers are the host kernel's, numbers translated). */
#ifndef PF_LINUX_ARCH_H
#define PF_LINUX_ARCH_H

#include <sys/syscall.h>

#if defined(__x86_64__) && !defined(__ILP32__)
# define PF_ARCH_NAME "x86_64"
# define PF_ARCH_NR_FUTEX 202
# define PF_ARCH_NR_FUTEX_TIME64 0
# define PF_ARCH_SYSCALL_INSN 1          /* ports/linux/sys.c: the syscall instruction */
#elif defined(__i386__)
# define PF_ARCH_NAME "i386"
# define PF_ARCH_NR_FUTEX 240
# define PF_ARCH_NR_FUTEX_TIME64 422
#elif defined(__aarch64__) && !defined(__ILP32__)
# define PF_ARCH_NAME "aarch64"
# define PF_ARCH_NR_FUTEX 98
# define PF_ARCH_NR_FUTEX_TIME64 0
#elif defined(__riscv) && __riscv_xlen == 64
# define PF_ARCH_NAME "riscv64"
# define PF_ARCH_NR_FUTEX 98
# define PF_ARCH_NR_FUTEX_TIME64 0
#elif defined(__arm__) && defined(__ARM_EABI__)
# define PF_ARCH_NAME "arm"
# define PF_ARCH_NR_FUTEX 240
# define PF_ARCH_NR_FUTEX_TIME64 422
#elif defined(__powerpc64__)
# define PF_ARCH_NAME "ppc64"
# define PF_ARCH_NR_FUTEX 221
# define PF_ARCH_NR_FUTEX_TIME64 0
#elif defined(__s390x__)
# define PF_ARCH_NAME "s390x"
# define PF_ARCH_NR_FUTEX 238
# define PF_ARCH_NR_FUTEX_TIME64 0
#else
# define PF_ARCH_NAME "unknown (the C library's numbers)"
# define PF_ARCH_NR_FUTEX SYS_futex
# ifdef SYS_futex_time64
#  define PF_ARCH_NR_FUTEX_TIME64 SYS_futex_time64
# else
#  define PF_ARCH_NR_FUTEX_TIME64 0
# endif
#endif
#ifndef PF_ARCH_SYSCALL_INSN
# define PF_ARCH_SYSCALL_INSN 0          /* libc's syscall() */
#endif

/* The architecture-independent numbers (every row above). */
#define PF_ARCH_NR_FUTEX_WAKE    454
#define PF_ARCH_NR_FUTEX_WAIT    455
#define PF_ARCH_NR_FUTEX_REQUEUE 456
#define PF_ARCH_NR_FUTEX_WAITV   449

#endif
