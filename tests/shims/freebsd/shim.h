/* shim.h - FreeBSD's _umtx_op(2), as ports/freebsd/park.c sees it, for the
 * port's second build on Linux (configure --enable-test-shims=freebsd):
 * the OS's names, signature and constant values, the call redirected to
 * the model in shim.c.
 *
 * Sources (checked with the search tool, freebsd/freebsd-src):
 *   sys/sys/umtx.h     the op codes, UMTX_ABSTIME, the _umtx_op prototype
 *                      (FreeBSD 11 and later; 15 and 16 exist since 8.x)
 *   sys/sys/_umtx.h    struct _umtx_time
 *   sys/sys/_clock_id.h  CLOCK_REALTIME 0, CLOCK_MONOTONIC 4: not defined
 *                      here.  The port names the clock; each build takes the
 *                      value from its own <time.h> (Linux's 0 and 1 here),
 *                      and the shim reads _clockid as a host clock id.
 *   lib/libc/sys/_umtx_op.2, sys/kern/kern_umtx.c  the behaviour (shim.c). */
#ifndef PF_SHIM_FREEBSD_H
#define PF_SHIM_FREEBSD_H

#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* sys/sys/umtx.h: op codes for _umtx_op (the ones the port uses). */
#define UMTX_OP_WAIT              2
#define UMTX_OP_WAKE              3
#define UMTX_OP_WAIT_UINT         11
#define UMTX_OP_WAIT_UINT_PRIVATE 15
#define UMTX_OP_WAKE_PRIVATE      16
/* sys/sys/umtx.h: _umtx_time._flags */
#define UMTX_ABSTIME              0x01

/* sys/sys/_umtx.h */
struct _umtx_time {
  struct timespec _timeout;
  uint32_t _flags;
  uint32_t _clockid;
};

/* sys/sys/umtx.h declares
 *   int _umtx_op(void *obj, int op, u_long val, void *uaddr, void *uaddr2);
 * (u_long is unsigned long; spelled out here, as glibc hides u_long in
 * strict modes). */
#define _umtx_op pf_shim_freebsd__umtx_op
int _umtx_op(void *obj, int op, unsigned long val, void *uaddr, void *uaddr2);

/* The shim's own knob (not FreeBSD's): every `every`-th wait of this
 * process returns 0 at once with the word unchanged, as a wake meant for an
 * earlier sleeper on the same word does (0: never).  The default comes
 * from $PF_SHIM_FREEBSD_SPURIOUS, else 5.  For tests/shims/freebsd/test.c. */
void pf_shim_freebsd_spurious(unsigned int every);

#endif
