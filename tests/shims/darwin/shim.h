/* shim.h - macOS's compare-and-wait calls, as ports/darwin/park.c sees them
 * on macOS, modelled on Linux futexes (tests/shims/darwin/shim.c) for the
 * backend emu:darwin-shim.  Names, signatures and values are the OS's:
 *   - the private ulock calls and constants: XNU bsd/sys/ulock.h
 *     (apple-oss-distributions/xnu): UL_COMPARE_AND_WAIT 1,
 *     UL_COMPARE_AND_WAIT_SHARED 3, ULF_WAKE_ALL 0x100, ULF_NO_ERRNO
 *     0x01000000, the ULF_WAIT_MASK / ULF_WAKE_MASK flags;
 *   - the public os_sync calls: Apple's documentation of
 *     <os/os_sync_wait_on_address.h> (macOS 14.4) for the signatures; the
 *     flag values (NONE 0, SHARED 1) and OS_CLOCK_MACH_ABSOLUTE_TIME (32,
 *     <os/clock.h>) from third-party copies of the SDK header: not
 *     checked against an SDK here (Zig 0.11's macOS headers predate 14.4).
 * Functions the port finds by weak import (present only on newer systems)
 * are pointers here, NULL when the shim hides that API
 * (PFUTEX_DARWIN_SHIM_API, see shim.c), so the port's run-time choice is
 * the same code on both. */
#ifndef PF_SHIM_DARWIN_H
#define PF_SHIM_DARWIN_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

/* ---- <sys/ulock.h> (private) -------------------------------------------- */
#define UL_COMPARE_AND_WAIT             1
#define UL_UNFAIR_LOCK                  2
#define UL_COMPARE_AND_WAIT_SHARED      3
#define UL_UNFAIR_LOCK64_SHARED         4
#define UL_COMPARE_AND_WAIT64           5
#define UL_COMPARE_AND_WAIT64_SHARED    6
#define ULF_WAKE_ALL                    0x00000100
#define ULF_WAKE_THREAD                 0x00000200
#define ULF_WAKE_ALLOW_NON_OWNER        0x00000400
#define ULF_WAIT_WORKQ_DATA_CONTENTION  0x00010000
#define ULF_WAIT_CANCEL_POINT           0x00020000
#define ULF_WAIT_ADAPTIVE_SPIN          0x00040000
#define ULF_NO_ERRNO                    0x01000000
#define UL_OPCODE_MASK                  0x000000FF
#define UL_FLAGS_MASK                   0xFFFFFF00
#define ULF_WAIT_MASK  (ULF_NO_ERRNO | ULF_WAIT_WORKQ_DATA_CONTENTION | ULF_WAIT_CANCEL_POINT \
                        | ULF_WAIT_ADAPTIVE_SPIN)
#define ULF_WAKE_MASK  (ULF_NO_ERRNO | ULF_WAKE_ALL | ULF_WAKE_THREAD | ULF_WAKE_ALLOW_NON_OWNER)

/* __ulock_wait: timeout in microseconds, 0 = forever (macOS 10.12+). */
int pf_shim_darwin_ulock_wait(uint32_t operation, void *addr, uint64_t value, uint32_t timeout_us);
/* __ulock_wait2: timeout in nanoseconds, 0 = forever (macOS 11+: weak). */
extern int (*pf_shim_darwin_ulock_wait2)(uint32_t operation, void *addr, uint64_t value,
                                         uint64_t timeout_ns, uint64_t value2);
int pf_shim_darwin_ulock_wake(uint32_t operation, void *addr, uint64_t wake_value);
#define __ulock_wait  pf_shim_darwin_ulock_wait
#define __ulock_wait2 pf_shim_darwin_ulock_wait2
#define __ulock_wake  pf_shim_darwin_ulock_wake

/* ---- <os/os_sync_wait_on_address.h> (macOS 14.4+: weak) ------------------ */
#define PF_DARWIN_HAVE_OS_SYNC 1       /* what configure says when the SDK has it */
typedef uint32_t os_sync_wait_on_address_flags_t;
typedef uint32_t os_sync_wake_by_address_flags_t;
#define OS_SYNC_WAIT_ON_ADDRESS_NONE   0x00000000u
#define OS_SYNC_WAIT_ON_ADDRESS_SHARED 0x00000001u
#define OS_SYNC_WAKE_BY_ADDRESS_NONE   0x00000000u
#define OS_SYNC_WAKE_BY_ADDRESS_SHARED 0x00000001u
typedef uint32_t os_clockid_t;
#define OS_CLOCK_MACH_ABSOLUTE_TIME 32

extern int (*pf_shim_darwin_os_sync_wait)(void *addr, uint64_t value, size_t size,
                                          os_sync_wait_on_address_flags_t flags);
extern int (*pf_shim_darwin_os_sync_wait_deadline)(void *addr, uint64_t value, size_t size,
                                                   os_sync_wait_on_address_flags_t flags,
                                                   os_clockid_t clockid, uint64_t deadline);
extern int (*pf_shim_darwin_os_sync_wait_timeout)(void *addr, uint64_t value, size_t size,
                                                  os_sync_wait_on_address_flags_t flags,
                                                  os_clockid_t clockid, uint64_t timeout_ns);
extern int (*pf_shim_darwin_os_sync_wake_any)(void *addr, size_t size,
                                              os_sync_wake_by_address_flags_t flags);
extern int (*pf_shim_darwin_os_sync_wake_all)(void *addr, size_t size,
                                              os_sync_wake_by_address_flags_t flags);
#define os_sync_wait_on_address               pf_shim_darwin_os_sync_wait
#define os_sync_wait_on_address_with_deadline pf_shim_darwin_os_sync_wait_deadline
#define os_sync_wait_on_address_with_timeout  pf_shim_darwin_os_sync_wait_timeout
#define os_sync_wake_by_address_any           pf_shim_darwin_os_sync_wake_any
#define os_sync_wake_by_address_all           pf_shim_darwin_os_sync_wake_all

/* mach_absolute_time, the clock of _with_deadline: modelled as
 * CLOCK_MONOTONIC nanoseconds (timebase 1/1, as on Intel Macs). */
uint64_t pf_shim_darwin_mach_absolute_time(void);

/* ---- The shim's own knobs and counters (tests/shims/darwin/test.c) ------- */
/* Environment, read once at start-up:
 *   PFUTEX_DARWIN_SHIM_API=os_sync|ulock2|ulock  newest API the "system" has
 *     (default os_sync, a current macOS): ulock2 hides os_sync_*, ulock also
 *     __ulock_wait2.
 *   PFUTEX_DARWIN_SHIM_SPURIOUS=N  every Nth wait that would sleep returns
 *     at once as woken (a stale wake), default 5; 0: never.
 *   PFUTEX_DARWIN_SHIM_EFAULT=N    every Nth wait fails with EFAULT (the
 *     kernel's copyin of a non-resident page), default 11; 0: never. */
enum { PF_SHIM_DARWIN_ULOCK_WAIT, PF_SHIM_DARWIN_ULOCK_WAIT2, PF_SHIM_DARWIN_ULOCK_WAKE,
       PF_SHIM_DARWIN_OS_SYNC_WAIT, PF_SHIM_DARWIN_OS_SYNC_WAKE,
       PF_SHIM_DARWIN_SPURIOUS, PF_SHIM_DARWIN_EFAULT, PF_SHIM_DARWIN_NCOUNT };
/* Calls made (and injections done) in this process, by kind. */
unsigned long pf_shim_darwin_count(int kind);
/* Change the injection periods (0: off); for the shim's own test. */
void pf_shim_darwin_inject(unsigned int spurious_every, unsigned int efault_every);

#endif
