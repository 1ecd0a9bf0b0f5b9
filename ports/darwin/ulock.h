/* ulock.h - the values of macOS's wait calls that the darwin port spells
 * itself: the private ulock operations and flags (XNU bsd/sys/ulock.h),
 * and, where the SDK has no <os/os_sync_wait_on_address.h> (before macOS
 * 14.4), that header's flags (Apple's header: NONE 0, SHARED 1).
 * tests/os_consts compares them with the Rust libc crate's. */
#ifndef PF_DARWIN_ULOCK_H
#define PF_DARWIN_ULOCK_H

#define UL_COMPARE_AND_WAIT        1
#define UL_COMPARE_AND_WAIT_SHARED 3
#define ULF_WAKE_ALL               0x00000100
#define ULF_NO_ERRNO               0x01000000

#ifndef PF_DARWIN_HAVE_OS_SYNC
# define OS_SYNC_WAIT_ON_ADDRESS_NONE   0x00000000u
# define OS_SYNC_WAIT_ON_ADDRESS_SHARED 0x00000001u
# define OS_SYNC_WAKE_BY_ADDRESS_NONE   0x00000000u
# define OS_SYNC_WAKE_BY_ADDRESS_SHARED 0x00000001u
#endif

#endif
