/* sys.c - raw Linux futex system calls (old multiplexer, futex_time64 and
 * the futex2 family), without libc wrappers. */
#include "sys.h"

#include <pthread.h>
#include <unistd.h>
#include <sys/syscall.h>

/* struct __kernel_timespec: 64-bit fields on every architecture. */
struct pf_kts {
  int64_t tv_sec;
  int64_t tv_nsec;
};

/* struct futex_waitv (Linux 5.16+). */
struct pf_waitv {
  uint64_t val;
  uint64_t uaddr;
  uint32_t flags;
  uint32_t reserved;
};

/* A system call's result as the kernel gives it: a count, or -errno.  On
 * x86_64 the instruction itself (no libc wrapper setting errno for us to
 * read back); elsewhere libc's syscall(). */
#if PF_ARCH_SYSCALL_INSN && defined(__x86_64__) && defined(__GNUC__)
static inline long
pf_sys6(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
  long ret;
  register long r10 __asm__("r10") = a4;
  register long r8 __asm__("r8") = a5;
  register long r9 __asm__("r9") = a6;
  __asm__ __volatile__("syscall"
                       : "=a"(ret)
                       : "a"(n), "D"(a1), "S"(a2), "d"(a3), "r"(r10), "r"(r8), "r"(r9)
                       : "rcx", "r11", "memory");
  return ret;
}
# define PF_SYS(n, a1, a2, a3, a4, a5, a6)                                             \
  pf_sys6((long)(n), (long)(a1), (long)(a2), (long)(a3), (long)(a4), (long)(a5), (long)(a6))
#else
static long
pf_sys_ret(long r)
{
  return r == -1 ? -errno : r;
}
# define PF_SYS(n, a1, a2, a3, a4, a5, a6) pf_sys_ret(syscall((n), a1, a2, a3, a4, a5, a6))
#endif

#if SIZEOF_VOID_P == 4 && PF_NR_futex_time64 != 0
static pthread_once_t pf_sys_once = PTHREAD_ONCE_INIT;
static enum pf_linux_old pf_sys_old = PF_LINUX_OLD_FUTEX;

static void
pf_sys_probe(void)
{
  uint32_t w = 0;
  /* A wake of 0 waiters on a private word: harmless, ENOSYS before 5.1. */
  if (syscall(PF_NR_futex_time64, &w, PF_OP_WAKE | PF_OP_PRIVATE_FLAG, 1, NULL, NULL, 0) >= 0)
    pf_sys_old = PF_LINUX_OLD_TIME64;
}

enum pf_linux_old
pf_linux_sys_init(void)
{
  pthread_once(&pf_sys_once, pf_sys_probe);
  return pf_sys_old;
}

void
pf_linux_sys_force_time32(void)
{
  pf_linux_sys_init();
  pf_sys_old = PF_LINUX_OLD_FUTEX;
}
#else
enum pf_linux_old
pf_linux_sys_init(void)
{
  return PF_LINUX_OLD_FUTEX;   /* 64-bit: SYS_futex already takes 64-bit time */
}

void
pf_linux_sys_force_time32(void)
{
}
#endif

long
pf_linux_futex(uint32_t *uaddr, int op, uint32_t val, const struct timespec *ts,
               uintptr_t val2, uint32_t *uaddr2, uint32_t val3)
{
#if SIZEOF_VOID_P == 4 && PF_NR_futex_time64 != 0
  if (pf_linux_sys_init() == PF_LINUX_OLD_TIME64) {
    struct pf_kts k;
    const void *slot = (const void *)val2;
    if (ts) {
      k.tv_sec = ts->tv_sec;
      k.tv_nsec = ts->tv_nsec;
      slot = &k;
    }
    return PF_SYS(PF_NR_futex_time64, uaddr, op, val, slot, uaddr2, val3);
  } else {
    /* The time32 call: clamp what a 32-bit time_t cannot hold. */
    struct { int32_t tv_sec; int32_t tv_nsec; } o;
    const void *slot = (const void *)val2;
    if (ts) {
      o.tv_sec = ts->tv_sec > INT32_MAX ? INT32_MAX : (int32_t)ts->tv_sec;
      o.tv_nsec = (int32_t)ts->tv_nsec;
      slot = &o;
    }
    return PF_SYS(PF_NR_futex, uaddr, op, val, slot, uaddr2, val3);
  }
#else
  const void *slot = ts ? (const void *)ts : (const void *)val2;
  return PF_SYS(PF_NR_futex, uaddr, op, val, slot, uaddr2, val3);
#endif
}

long
pf_linux_futex_wait2(uint32_t *uaddr, uint32_t val, uint32_t mask, unsigned int flags,
                     const void *kts, int clockid)
{
  return PF_SYS(PF_NR_futex_wait, uaddr, (unsigned long)val, (unsigned long)mask,
                flags | PF_FUTEX2_SIZE_U32, kts, clockid);
}

long
pf_linux_futex_raw(uint32_t *uaddr, int op, uint32_t val, const struct timespec *timeout,
                   uint32_t *uaddr2, uint32_t val3)
{
#if SIZEOF_VOID_P == 4 && PF_NR_futex_time64 != 0
  const int cmd = op & ~(PF_OP_PRIVATE_FLAG | PF_OP_CLOCK_REALTIME);
  if (pf_linux_sys_init() == PF_LINUX_OLD_TIME64) {
    if (timeout && (cmd == PF_OP_WAIT || cmd == PF_OP_WAIT_BITSET || cmd == PF_OP_LOCK_PI
                    || cmd == PF_OP_LOCK_PI2 || cmd == PF_OP_WAIT_REQUEUE_PI)) {
      struct timespec ts;
      struct pf_kts k;
      int ret = pf_timespec_copy_in(&ts, timeout);
      if (ret < 0)
        return ret;
      k.tv_sec = ts.tv_sec;
      k.tv_nsec = ts.tv_nsec;
      return PF_SYS(PF_NR_futex_time64, uaddr, op, val, &k, uaddr2, val3);
    }
    return PF_SYS(PF_NR_futex_time64, uaddr, op, val, timeout, uaddr2, val3);
  }
#endif
  return PF_SYS(PF_NR_futex, uaddr, op, val, timeout, uaddr2, val3);
}

long
pf_linux_futex_wake2(uint32_t *uaddr, uint32_t mask, int nr, unsigned int flags)
{
  return PF_SYS(PF_NR_futex_wake, uaddr, (unsigned long)mask, nr, flags | PF_FUTEX2_SIZE_U32, 0, 0);
}

long
pf_linux_futex_requeue2(uint32_t *uaddr, uint32_t val, uint32_t *uaddr2,
                        unsigned int flags, int nr_wake, int nr_requeue)
{
  struct pf_waitv w[2];
  w[0].val = val;
  w[0].uaddr = (uintptr_t)uaddr;
  w[0].flags = flags | PF_FUTEX2_SIZE_U32;
  w[0].reserved = 0;
  w[1].val = 0;
  w[1].uaddr = (uintptr_t)uaddr2;
  w[1].flags = flags | PF_FUTEX2_SIZE_U32;
  w[1].reserved = 0;
  return PF_SYS(PF_NR_futex_requeue, w, 0, nr_wake, nr_requeue, 0, 0);
}

long
pf_linux_futex_waitv(struct pfutex_waitv *w, unsigned int nr, unsigned int flags,
                     const struct timespec *timeout, int clockid)
{
#if SIZEOF_VOID_P == 4
  /* futex_waitv(2) reads a struct __kernel_timespec: widen a copy, after
   * the checks the kernel makes before it reads the timeout. */
  if (timeout && flags == 0 && nr != 0 && nr <= PFUTEX_WAITV_MAX && w) {
    struct timespec ts;
    struct pf_kts k;
    int ret = pf_timespec_copy_in(&ts, timeout);
    if (ret < 0)
      return ret;
    k.tv_sec = ts.tv_sec;
    k.tv_nsec = ts.tv_nsec;
    return PF_SYS(PF_NR_futex_waitv, w, nr, flags, &k, clockid, 0);
  }
#endif
  return PF_SYS(PF_NR_futex_waitv, w, nr, flags, timeout, clockid, 0);
}

long
pf_linux_set_robust_list(struct robust_list_head *head, size_t len)
{
  return PF_SYS(SYS_set_robust_list, head, len, 0, 0, 0, 0);
}

long
pf_linux_get_robust_list(int pid, struct robust_list_head **head, size_t *len)
{
  return PF_SYS(SYS_get_robust_list, pid, head, len, 0, 0, 0);
}
