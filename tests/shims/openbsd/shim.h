/* shim.h - OpenBSD's futex(2), as the openbsd port sees it, redirected to a
 * model on Linux futexes (shim.c).  Only for PF_SHIM builds.
 *
 * Declarations and values from openbsd/src:
 *   sys/sys/futex.h (rev 1.2, 2018-06-03; the same values in rev 1.3,
 *   2025-05-07): FUTEX_WAIT 1, FUTEX_WAKE 2, FUTEX_REQUEUE 3,
 *   FUTEX_PRIVATE_FLAG 128, FUTEX_*_PRIVATE = op | FUTEX_PRIVATE_FLAG;
 *   the prototype below.  lib/libc/sys/futex.2 (rev 1.5, 2019; current
 *   man.openbsd.org page): the behaviour shim.c models.
 * Not confirmed: rev 1.3's FUTEX_OP_MASK 0x007f / FUTEX_FLAG_MASK 0xff80
 * were seen in a mirror only (not needed by the port). */
#ifndef PF_SHIM_OPENBSD_H
#define PF_SHIM_OPENBSD_H

#include <stdint.h>
#include <time.h>

#define FUTEX_WAIT          1
#define FUTEX_WAKE          2
#define FUTEX_REQUEUE       3
#define FUTEX_PRIVATE_FLAG  128
#define FUTEX_WAIT_PRIVATE    (FUTEX_WAIT | FUTEX_PRIVATE_FLAG)
#define FUTEX_WAKE_PRIVATE    (FUTEX_WAKE | FUTEX_PRIVATE_FLAG)
#define FUTEX_REQUEUE_PRIVATE (FUTEX_REQUEUE | FUTEX_PRIVATE_FLAG)

/* <sys/futex.h>: int futex(volatile uint32_t *, int, int,
 *                          const struct timespec *, volatile uint32_t *); */
int pf_shim_openbsd_futex(volatile uint32_t *uaddr, int op, int val,
                          const struct timespec *timeout, volatile uint32_t *uaddr2);
#define futex pf_shim_openbsd_futex

/* ---- The shim's own knobs (not OpenBSD's): tests/shims/openbsd/test.c ---- */
/* Every nth FUTEX_WAIT that would sleep returns 0 at once instead (a
 * spurious wakeup; 0: never).  Default 4, or $PF_SHIM_SPURIOUS. */
void pf_shim_openbsd_set_spurious(unsigned int n);
/* 1: the old return convention (the error number is the return value);
 * 0 (default, or $PF_SHIM_OPENBSD_OLDRET unset): -1 and errno. */
void pf_shim_openbsd_set_oldret(int on);
/* How many FUTEX_WAIT calls ended with EINTR / ECANCELED so far. */
unsigned long pf_shim_openbsd_interrupts(int ecanceled);

#endif
