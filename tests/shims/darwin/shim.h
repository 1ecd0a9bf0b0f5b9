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

/* ---- Mach VM queries (ports/darwin/objid.c) ------------------------------
 * Names, types and values of XNU's osfmk/mach/mach_vm.defs (the calls),
 * osfmk/mach/vm_region.h (the structures, VM_REGION_BASIC_INFO_64 9 under
 * pack(4); VM_PAGE_INFO_BASIC 1), osfmk/mach/vm_inherit.h, vm_prot.h and
 * kern_return.h.  The model (shim.c) answers from Linux's /proc/self/maps:
 *   mach_vm_region: the mapping holding the address or the next one (the
 *     address moved to its start), KERN_INVALID_ADDRESS when none is;
 *     protection from its "rwx", inheritance VM_INHERIT_SHARE for an "s"
 *     mapping, else VM_INHERIT_COPY (mmap's defaults on macOS), offset its
 *     file offset; with VM_REGION_EXTENDED_INFO the protection, and
 *     external_pager 1 for a file's mapping (an inode), else 0;
 *   mach_vm_page_info: zeroes and KERN_SUCCESS at an unmapped address (as
 *     XNU); else object_id a hash (never 0) of the mapping's device and
 *     inode for a shared mapping, of the process and the mapping's start
 *     for a private one (XNU: of the object's address), offset the byte
 *     offset in the object, depth 0 (no shadow chains are modelled). */
#pragma pack(push, 4)
typedef int kern_return_t;
typedef unsigned int mach_port_t;
typedef uint64_t mach_vm_address_t;
typedef uint64_t mach_vm_size_t;
typedef unsigned int mach_msg_type_number_t;
typedef int vm_prot_t;
typedef unsigned int vm_inherit_t;
typedef unsigned int boolean_t;
typedef int vm_behavior_t;
typedef unsigned long long memory_object_offset_t;
typedef unsigned long long vm_object_id_t;
typedef int vm_region_flavor_t;
typedef int *vm_region_info_t;
struct vm_region_basic_info_64 {
  vm_prot_t protection;
  vm_prot_t max_protection;
  vm_inherit_t inheritance;
  boolean_t shared;
  boolean_t reserved;
  memory_object_offset_t offset;
  vm_behavior_t behavior;
  unsigned short user_wired_count;
};
struct vm_region_extended_info {
  vm_prot_t protection;
  unsigned int user_tag;
  unsigned int pages_resident;
  unsigned int pages_shared_now_private;
  unsigned int pages_swapped_out;
  unsigned int pages_dirtied;
  unsigned int ref_count;
  unsigned short shadow_depth;
  unsigned char external_pager;
  unsigned char share_mode;
  unsigned int pages_reusable;
};
#pragma pack(pop)
typedef struct vm_region_basic_info_64 vm_region_basic_info_data_64_t;
typedef struct vm_region_extended_info vm_region_extended_info_data_t;
typedef int *vm_page_info_t;
typedef int vm_page_info_flavor_t;
struct vm_page_info_basic {
  int disposition;
  int ref_count;
  vm_object_id_t object_id;
  memory_object_offset_t offset;
  int depth;
  int __pad;
};
typedef struct vm_page_info_basic vm_page_info_basic_data_t;
#define KERN_SUCCESS            0
#define KERN_INVALID_ADDRESS    1
#define KERN_INVALID_ARGUMENT   4
#define MACH_PORT_NULL          ((mach_port_t)0)
#define VM_PROT_READ            ((vm_prot_t)0x01)
#define VM_PROT_WRITE           ((vm_prot_t)0x02)
#define VM_PROT_EXECUTE         ((vm_prot_t)0x04)
#define VM_INHERIT_SHARE        ((vm_inherit_t)0)
#define VM_INHERIT_COPY         ((vm_inherit_t)1)
#define VM_REGION_BASIC_INFO_64 9
#define VM_REGION_BASIC_INFO_COUNT_64 \
  ((mach_msg_type_number_t)(sizeof(vm_region_basic_info_data_64_t) / sizeof(int)))
#define VM_REGION_EXTENDED_INFO 13
#define VM_REGION_EXTENDED_INFO_COUNT \
  ((mach_msg_type_number_t)(sizeof(vm_region_extended_info_data_t) / sizeof(int)))
#define VM_PAGE_INFO_BASIC      1
#define VM_PAGE_INFO_BASIC_COUNT \
  ((mach_msg_type_number_t)(sizeof(vm_page_info_basic_data_t) / sizeof(int)))
#define VM_PAGE_QUERY_PAGE_PRESENT 0x1
mach_port_t pf_shim_darwin_mach_task_self(void);
kern_return_t pf_shim_darwin_mach_port_deallocate(mach_port_t task, mach_port_t name);
kern_return_t pf_shim_darwin_mach_vm_region(mach_port_t task, mach_vm_address_t *address,
                                            mach_vm_size_t *size, vm_region_flavor_t flavor,
                                            vm_region_info_t info, mach_msg_type_number_t *count,
                                            mach_port_t *object_name);
kern_return_t pf_shim_darwin_mach_vm_page_info(mach_port_t task, mach_vm_address_t address,
                                               vm_page_info_flavor_t flavor, vm_page_info_t info,
                                               mach_msg_type_number_t *count);
#define mach_task_self      pf_shim_darwin_mach_task_self
#define mach_port_deallocate pf_shim_darwin_mach_port_deallocate
#define mach_vm_region      pf_shim_darwin_mach_vm_region
#define mach_vm_page_info   pf_shim_darwin_mach_vm_page_info

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
       PF_SHIM_DARWIN_SPURIOUS, PF_SHIM_DARWIN_EFAULT, PF_SHIM_DARWIN_VM_REGION,
       PF_SHIM_DARWIN_PAGE_INFO, PF_SHIM_DARWIN_NCOUNT };
/* Calls made (and injections done) in this process, by kind. */
unsigned long pf_shim_darwin_count(int kind);
/* Change the injection periods (0: off); for the shim's own test. */
void pf_shim_darwin_inject(unsigned int spurious_every, unsigned int efault_every);

#endif
