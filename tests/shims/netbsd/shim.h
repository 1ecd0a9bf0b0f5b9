/* shim.h - NetBSD's __futex system call, as the netbsd port sees it
 * (syscall(SYS___futex, ...)), redirected to a model on Linux futexes
 * (shim.c).  Only for PF_SHIM builds; included after every system header.
 *
 * Values from NetBSD/src sys/sys/futex.h (rev 1.6, 2025-03-04; "intended
 * to be ABI-compatible with the Linux futex(2) system call"): FUTEX_WAIT 0,
 * FUTEX_WAKE 1, FUTEX_REQUEUE 3, FUTEX_CMP_REQUEUE 4, FUTEX_WAKE_OP 5,
 * FUTEX_WAIT_BITSET 9, FUTEX_WAKE_BITSET 10, FUTEX_PRIVATE_FLAG __BIT(7)
 * (128), FUTEX_CLOCK_REALTIME __BIT(8) (256), FUTEX_BITSET_MATCH_ANY
 * all 32 bits.  The seven arguments: sys/kern/sys_futex.c sys___futex
 * (rev 1.18, 2022-04-21).
 * Not confirmed from NetBSD's own sys/sys/syscall.h: SYS___futex = 166
 * (third-party code says so; the shim accepts only this number). */
#ifndef PF_SHIM_NETBSD_H
#define PF_SHIM_NETBSD_H

#include <time.h>

#define FUTEX_WAIT              0
#define FUTEX_WAKE              1
#define FUTEX_REQUEUE           3
#define FUTEX_CMP_REQUEUE       4
#define FUTEX_WAKE_OP           5
#define FUTEX_WAIT_BITSET       9
#define FUTEX_WAKE_BITSET       10
#define FUTEX_PRIVATE_FLAG      (1 << 7)
#define FUTEX_CLOCK_REALTIME    (1 << 8)
#define FUTEX_CMD_MASK          (~(FUTEX_PRIVATE_FLAG | FUTEX_CLOCK_REALTIME))
#define FUTEX_BITSET_MATCH_ANY  ((int)0xffffffffu)

#define SYS___futex 166

/* syscall(SYS___futex, int *uaddr, int op, int val,
 *         const struct timespec *timeout, int *uaddr2, int val2, int val3):
 * -1 and errno on error. */
long pf_shim_netbsd_syscall(long number, ...);
#undef syscall
#define syscall pf_shim_netbsd_syscall

/* ---- The shim's own knobs (not NetBSD's): tests/shims/netbsd/test.c ---- */
/* Every nth wait that would sleep returns 0 at once (a spurious wakeup;
 * 0: never).  Default 4, or $PF_SHIM_SPURIOUS. */
void pf_shim_netbsd_set_spurious(unsigned int n);
/* How many waits were restarted after an SA_RESTART handler so far. */
unsigned long pf_shim_netbsd_restarts(void);

#endif
