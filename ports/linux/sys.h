/* sys.h - raw Linux futex system calls, shared by the native backend and the
 * emulation's futex park port.  All return 0/count or -errno. */
#ifndef PF_LINUX_SYS_H
#define PF_LINUX_SYS_H

#include "pf.h"

/* Syscall numbers: one row per architecture in arch.h. */
#include "arch.h"
#define PF_NR_futex          PF_ARCH_NR_FUTEX
#define PF_NR_futex_wake     PF_ARCH_NR_FUTEX_WAKE
#define PF_NR_futex_wait     PF_ARCH_NR_FUTEX_WAIT
#define PF_NR_futex_requeue  PF_ARCH_NR_FUTEX_REQUEUE
#define PF_NR_futex_time64   PF_ARCH_NR_FUTEX_TIME64   /* 32-bit architectures only */
#define PF_NR_futex_waitv    PF_ARCH_NR_FUTEX_WAITV

#define PF_FUTEX2_SIZE_U32   0x02u
#define PF_FUTEX2_PRIVATE    128u

/* Which old multiplexed call carries timeouts: chosen once by
 * pf_linux_sys_init (futex_time64 on 32-bit when the kernel has it). */
enum pf_linux_old { PF_LINUX_OLD_FUTEX, PF_LINUX_OLD_TIME64 };
enum pf_linux_old pf_linux_sys_init(void);
/* Force the time32 futex call (the "linux:futex" selector on 32-bit). */
void pf_linux_sys_force_time32(void);

/* The old futex(2).  `ts` is a timeout (converted for futex_time64 or the
 * 32-bit time_t call as needed); `val2` is passed in the timeout slot
 * instead when ts is NULL and val2 is nonzero. */
long pf_linux_futex(uint32_t *uaddr, int op, uint32_t val, const struct timespec *ts,
                    uintptr_t val2, uint32_t *uaddr2, uint32_t val3);
/* The futex(2) call exactly as a caller made it: the timeout slot is
 * passed on untouched (a pointer the kernel reads, or val2), except on
 * 32-bit with futex_time64, where a timeout is copied in safely (EFAULT)
 * and widened. */
long pf_linux_futex_raw(uint32_t *uaddr, int op, uint32_t val, const struct timespec *timeout,
                        uint32_t *uaddr2, uint32_t val3);
/* futex_wait(2); kts is a struct __kernel_timespec the kernel reads (NULL:
 * none), clockid Linux's (CLOCK_REALTIME 0, CLOCK_MONOTONIC 1). */
long pf_linux_futex_wait2(uint32_t *uaddr, uint32_t val, uint32_t mask, unsigned int flags,
                          const void *kts, int clockid);
long pf_linux_futex_wake2(uint32_t *uaddr, uint32_t mask, int nr, unsigned int flags);
long pf_linux_futex_requeue2(uint32_t *uaddr, uint32_t val, uint32_t *uaddr2,
                             unsigned int flags, int nr_wake, int nr_requeue);

/* futex_waitv(2) (Linux 5.16+), the timeout a struct timespec (widened
 * on 32-bit: the kernel reads a struct __kernel_timespec). */
long pf_linux_futex_waitv(struct pfutex_waitv *w, unsigned int nr, unsigned int flags,
                          const struct timespec *timeout, int clockid);
/* set_robust_list(2), get_robust_list(2). */
long pf_linux_set_robust_list(struct robust_list_head *head, size_t len);
long pf_linux_get_robust_list(int pid, struct robust_list_head **head, size_t *len);

#endif
