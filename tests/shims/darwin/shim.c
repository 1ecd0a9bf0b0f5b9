/* shim.c - a model of macOS's compare-and-wait calls (the private
 * __ulock_wait / __ulock_wait2 / __ulock_wake, and the public
 * os_sync_wait_on_address* / os_sync_wake_by_address_*) on Linux futexes,
 * for ports/darwin/park.c built with -DPF_SHIM (backend emu:darwin-shim).
 *
 * Modelled from XNU's bsd/kern/sys_ulock.c (sys_ulock_wait2, ulock_wake;
 * apple-oss-distributions/xnu) and Apple's documentation of the os_sync
 * calls; each behaviour is checked in tests/shims/darwin/test.c:
 *  - keys: a private op (UL_COMPARE_AND_WAIT, OS_SYNC_*_NONE) is keyed by
 *    (task, address) -> a Linux FUTEX_PRIVATE_FLAG futex; a shared one
 *    (UL_COMPARE_AND_WAIT_SHARED, OS_SYNC_*_SHARED) by (VM object, offset)
 *    -> a Linux shared futex.  Neither wakes the other's waiters.
 *  - wait: a wake and a value mismatch both return >= 0 (the waiters left;
 *    this model says 0: it does not count them).  The 32-bit ops compare
 *    the word, zero-extended, with the 64-bit value: high bits set never
 *    match.  Errors: EINVAL (unknown flags or opcode, address 0 or
 *    misaligned, a shared op on an unmapped address: uaddr_findobj fails),
 *    EFAULT (a private op's copyin fails), ETIMEDOUT, EINTR.
 *  - signals: EINTR after a handler, timed or untimed: the kernel returns
 *    EINTR (THREAD_INTERRUPTED), never ERESTART, so no restart even under
 *    SA_RESTART.  Linux restarts an untimed FUTEX_WAIT under SA_RESTART,
 *    so "forever" is a Linux wait with a deadline no machine reaches.
 *  - timeouts, relative: __ulock_wait microseconds (uint32_t), __ulock_wait2
 *    and os_sync_wait_on_address_with_timeout nanoseconds (uint64_t); 0 is
 *    forever (XNU: "if (timeout) nanoseconds_to_deadline").  For
 *    _with_timeout that 0 is forever too is inferred (the call is a thin
 *    wrapper over __ulock_wait2), not confirmed.  _with_deadline: absolute
 *    mach absolute time (here: CLOCK_MONOTONIC ns); clockid must be
 *    OS_CLOCK_MACH_ABSOLUTE_TIME, else EINVAL.
 *  - EFAULT for a valid word: the kernel copies the word in under a
 *    spinlock, where a page fault fails ("let the user level code fault it
 *    in"): injected every Nth wait (PFUTEX_DARWIN_SHIM_EFAULT, default 11).
 *  - spurious returns: a wake meant for an earlier waiter on the same
 *    address (a reused word) ends a later wait with >= 0 while the word is
 *    unchanged: injected every Nth wait (PFUTEX_DARWIN_SHIM_SPURIOUS,
 *    default 5).
 *  - wake: 0, no count; ENOENT when nobody waits on the key (ull_get with
 *    ULL_MUST_EXIST finds none; the model: Linux woke 0); ULF_WAKE_ALL
 *    wakes all, else one.  Errors EINVAL (flags, opcode, address 0, a
 *    shared op on an unmapped address).  A private wake never reads
 *    memory: an unmapped or misaligned address is just nobody: ENOENT.
 *  - errno: without ULF_NO_ERRNO -1 and errno; with it -errno.  os_sync:
 *    -1 and errno (Apple's documentation).
 * Not modelled (the port never uses them): the other opcodes (unfair locks,
 * 64-bit words) and os_sync's size 8 (EINVAL here, valid on macOS);
 * ULF_WAKE_THREAD (EINVAL here); ULF_DEADLINE (EINVAL here, as in
 * macOS 11-13's kernel; newer ones accept it); EDOM (one address waited on
 * with two opcodes); ENOMEM; the waiter counts.
 *
 * Which APIs the "system" has: PFUTEX_DARWIN_SHIM_API (shim.h), read by a
 * constructor before any port runs: the newer calls are pointers, NULL
 * when hidden, as weak imports are on an older macOS. */
#include "pf.h"
#include "sys.h"            /* ports/linux: pf_linux_futex */
#include "shim.h"
#include "../procmaps.h"

#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static volatile AO_t pf_shim_darwin_counts[PF_SHIM_DARWIN_NCOUNT];
static volatile AO_t pf_shim_darwin_seq;                /* waits so far: the injections' clock */
static unsigned int pf_shim_darwin_spurious_every = 5;
static unsigned int pf_shim_darwin_efault_every = 11;

unsigned long
pf_shim_darwin_count(int kind)
{
  return (unsigned long)AO_load(&pf_shim_darwin_counts[kind]);
}

void
pf_shim_darwin_inject(unsigned int spurious_every, unsigned int efault_every)
{
  pf_shim_darwin_spurious_every = spurious_every;
  pf_shim_darwin_efault_every = efault_every;
}

static void
pf_shim_darwin_note(int kind)
{
  AO_fetch_and_add1(&pf_shim_darwin_counts[kind]);
}

uint64_t
pf_shim_darwin_mach_absolute_time(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Can the kernel read the word (a shared key: find its page)?  0 or
 * EFAULT, without a signal: a Linux futex wait with a deadline already
 * passed reads the word and returns at once. */
static int
pf_shim_darwin_readable(uint32_t *addr, int shared)
{
  static const struct timespec past = { 0, 0 };
  long r = pf_linux_futex(addr, PF_OP_WAIT_BITSET | (shared ? 0 : PF_OP_PRIVATE_FLAG), 0, &past, 0,
                          NULL, PFUTEX_BITSET_MATCH_ANY);
  return r == -EFAULT ? EFAULT : 0;
}

/* ---- The one wait -------------------------------------------------------- */
/* Sleep while *addr == value, keyed private or shared, until the absolute
 * CLOCK_MONOTONIC nanosecond `abs_ns` (0: forever).  0 (woken, mismatch,
 * spurious) or a positive errno. */
static int
pf_shim_darwin_wait(uint32_t *addr, uint64_t value, int shared, uint64_t abs_ns)
{
  /* Far enough that no machine reaches it, near enough for any time_t. */
  static const struct timespec never = { 0x7fffffff, 0 };
  struct timespec abs;
  unsigned long n;
  long r;
  int op;

  if (addr == NULL || ((uintptr_t)addr & 3))
    return EINVAL;
  n = (unsigned long)AO_fetch_and_add1(&pf_shim_darwin_seq) + 1;
  if (pf_shim_darwin_efault_every && n % pf_shim_darwin_efault_every == 0) {
    pf_shim_darwin_note(PF_SHIM_DARWIN_EFAULT);
    return EFAULT;                       /* copyin of a non-resident page */
  }
  /* The kernel reads the word (a shared op first finds its VM object). */
  if (pf_shim_darwin_readable(addr, shared))
    return shared ? EINVAL : EFAULT;
  if (value > UINT32_MAX)
    return 0;                            /* a 32-bit word never equals it */
  if (pf_shim_darwin_spurious_every && n % pf_shim_darwin_spurious_every == 0) {
    pf_shim_darwin_note(PF_SHIM_DARWIN_SPURIOUS);
    return 0;                            /* a stale wake */
  }
  if (abs_ns) {
    abs.tv_sec = (time_t)(abs_ns / 1000000000u);
    abs.tv_nsec = (long)(abs_ns % 1000000000u);
  } else {
    abs = never;
  }
  op = PF_OP_WAIT_BITSET | (shared ? 0 : PF_OP_PRIVATE_FLAG);
  r = pf_linux_futex(addr, op, (uint32_t)value, &abs, 0, NULL, PFUTEX_BITSET_MATCH_ANY);
  switch (r) {
  case 0:
  case -EAGAIN:
    return 0;
  case -ETIMEDOUT:
  case -EINTR:
    return (int)-r;
  case -EFAULT:
    return shared ? EINVAL : EFAULT;
  default:
    return (int)-r;
  }
}

static uint64_t
pf_shim_darwin_after(uint64_t ns)
{
  uint64_t now;
  if (ns == 0)
    return 0;                            /* forever */
  now = pf_shim_darwin_mach_absolute_time();
  if (ns > (uint64_t)0x7fffffff * 1000000000u - now)
    return 0;                            /* beyond any machine's life: forever */
  return now + ns;
}

/* 0, or the waiters' count; errors by the errno convention of `operation`. */
static int
pf_shim_darwin_ulock_ret(uint32_t operation, int err)
{
  if (err == 0)
    return 0;
  if (operation & ULF_NO_ERRNO)
    return -err;
  errno = err;
  return -1;
}

/* The opcode: 0 and *shared, or EINVAL. */
static int
pf_shim_darwin_ulock_op(uint32_t operation, uint32_t mask, int *shared)
{
  uint32_t flags = operation & UL_FLAGS_MASK;
  if ((flags & mask) != flags)
    return EINVAL;
  switch (operation & UL_OPCODE_MASK) {
  case UL_COMPARE_AND_WAIT:        *shared = 0; return 0;
  case UL_COMPARE_AND_WAIT_SHARED: *shared = 1; return 0;
  default:                         return EINVAL;   /* others: not modelled */
  }
}

static int
pf_shim_darwin_ulock_wait2_impl(uint32_t operation, void *addr, uint64_t value, uint64_t timeout_ns,
                                uint64_t value2)
{
  int shared, err;
  (void)value2;                          /* UL_UNFAIR_LOCK64_SHARED's only */
  pf_shim_darwin_note(PF_SHIM_DARWIN_ULOCK_WAIT2);
  if (operation & ULF_WAIT_CANCEL_POINT)
    pthread_testcancel();
  if ((err = pf_shim_darwin_ulock_op(operation, ULF_WAIT_MASK, &shared)) == 0)
    err = pf_shim_darwin_wait(addr, value, shared, pf_shim_darwin_after(timeout_ns));
  return pf_shim_darwin_ulock_ret(operation, err);
}

int
pf_shim_darwin_ulock_wait(uint32_t operation, void *addr, uint64_t value, uint32_t timeout_us)
{
  int shared, err;
  pf_shim_darwin_note(PF_SHIM_DARWIN_ULOCK_WAIT);
  if (operation & ULF_WAIT_CANCEL_POINT)
    pthread_testcancel();
  /* sys_ulock_wait: timeout * NSEC_PER_USEC, then sys_ulock_wait2. */
  if ((err = pf_shim_darwin_ulock_op(operation, ULF_WAIT_MASK, &shared)) == 0)
    err = pf_shim_darwin_wait(addr, value, shared,
                              pf_shim_darwin_after((uint64_t)timeout_us * 1000u));
  return pf_shim_darwin_ulock_ret(operation, err);
}

/* Wake one or all on the key: 0 or a positive errno (ENOENT: nobody). */
static int
pf_shim_darwin_wake(void *addr, int shared, int all)
{
  long r;
  if (addr == NULL)
    return EINVAL;
  if (!shared && ((uintptr_t)addr & 3))
    return ENOENT;                       /* nobody can wait there (wait refuses it) */
  if (shared && ((uintptr_t)addr & 3))  /* keyed by object: a mapped page is fine */
    return pf_shim_darwin_readable((uint32_t *)((uintptr_t)addr & ~(uintptr_t)3), 1) ? EINVAL : ENOENT;
  r = pf_linux_futex(addr, PF_OP_WAKE | (shared ? 0 : PF_OP_PRIVATE_FLAG), all ? INT_MAX : 1,
                     NULL, 0, NULL, 0);
  if (r > 0)
    return 0;
  if (r == 0)
    return ENOENT;
  return r == -EFAULT ? (shared ? EINVAL : ENOENT) : (int)-r;
}

int
pf_shim_darwin_ulock_wake(uint32_t operation, void *addr, uint64_t wake_value)
{
  int shared, err;
  (void)wake_value;                      /* ULF_WAKE_THREAD's only */
  pf_shim_darwin_note(PF_SHIM_DARWIN_ULOCK_WAKE);
  if ((err = pf_shim_darwin_ulock_op(operation, ULF_WAKE_MASK, &shared)) == 0) {
    if (operation & ULF_WAKE_THREAD)
      err = EINVAL;                      /* not modelled */
    else
      err = pf_shim_darwin_wake(addr, shared, (operation & ULF_WAKE_ALL) != 0);
  }
  return pf_shim_darwin_ulock_ret(operation, err);
}

/* ---- os_sync ---------------------------------------------------------------- */
static int
pf_shim_darwin_os_ret(int err)
{
  if (err == 0)
    return 0;
  errno = err;
  return -1;
}

/* flags, size and address: 0 or EINVAL. */
static int
pf_shim_darwin_os_args(void *addr, size_t size, uint32_t flags)
{
  if (flags & ~OS_SYNC_WAIT_ON_ADDRESS_SHARED)
    return EINVAL;
  if (size != 4)
    return EINVAL;                       /* 8: valid on macOS, not modelled */
  if (addr == NULL || ((uintptr_t)addr & (size - 1)))
    return EINVAL;
  return 0;
}

static int
pf_shim_darwin_os_wait_abs(void *addr, uint64_t value, size_t size, uint32_t flags, uint64_t abs_ns)
{
  int err;
  pf_shim_darwin_note(PF_SHIM_DARWIN_OS_SYNC_WAIT);
  if ((err = pf_shim_darwin_os_args(addr, size, flags)) == 0)
    err = pf_shim_darwin_wait(addr, value, (flags & OS_SYNC_WAIT_ON_ADDRESS_SHARED) != 0, abs_ns);
  return pf_shim_darwin_os_ret(err);
}

static int
pf_shim_darwin_os_wait_impl(void *addr, uint64_t value, size_t size, uint32_t flags)
{
  return pf_shim_darwin_os_wait_abs(addr, value, size, flags, 0);
}

static int
pf_shim_darwin_os_wait_timeout_impl(void *addr, uint64_t value, size_t size, uint32_t flags,
                                    os_clockid_t clockid, uint64_t timeout_ns)
{
  if (clockid != OS_CLOCK_MACH_ABSOLUTE_TIME) {
    pf_shim_darwin_note(PF_SHIM_DARWIN_OS_SYNC_WAIT);
    return pf_shim_darwin_os_ret(EINVAL);
  }
  return pf_shim_darwin_os_wait_abs(addr, value, size, flags, pf_shim_darwin_after(timeout_ns));
}

static int
pf_shim_darwin_os_wait_deadline_impl(void *addr, uint64_t value, size_t size, uint32_t flags,
                                     os_clockid_t clockid, uint64_t deadline)
{
  if (clockid != OS_CLOCK_MACH_ABSOLUTE_TIME) {
    pf_shim_darwin_note(PF_SHIM_DARWIN_OS_SYNC_WAIT);
    return pf_shim_darwin_os_ret(EINVAL);
  }
  /* A deadline already passed: ETIMEDOUT once the value matched (the
   * kernel compares first, then blocks with the deadline). */
  if (deadline > (uint64_t)0x7fffffff * 1000000000u)
    deadline = 0;
  return pf_shim_darwin_os_wait_abs(addr, value, size, flags, deadline);
}

static int
pf_shim_darwin_os_wake(void *addr, size_t size, uint32_t flags, int all)
{
  int err;
  pf_shim_darwin_note(PF_SHIM_DARWIN_OS_SYNC_WAKE);
  if ((err = pf_shim_darwin_os_args(addr, size, flags)) == 0)
    err = pf_shim_darwin_wake(addr, (flags & OS_SYNC_WAKE_BY_ADDRESS_SHARED) != 0, all);
  return pf_shim_darwin_os_ret(err);
}

static int
pf_shim_darwin_os_wake_any_impl(void *addr, size_t size, uint32_t flags)
{
  return pf_shim_darwin_os_wake(addr, size, flags, 0);
}

static int
pf_shim_darwin_os_wake_all_impl(void *addr, size_t size, uint32_t flags)
{
  return pf_shim_darwin_os_wake(addr, size, flags, 1);
}

/* ---- The "system's" APIs: the weak imports ----------------------------------- */
/* ---- Mach VM queries (ports/darwin/objid.c): shim.h says what is modelled */

mach_port_t
pf_shim_darwin_mach_task_self(void)
{
  return (mach_port_t)0x103;           /* any name that is not MACH_PORT_NULL */
}

kern_return_t
pf_shim_darwin_mach_port_deallocate(mach_port_t task, mach_port_t name)
{
  (void)task;
  (void)name;
  return KERN_SUCCESS;
}

/* 1 (*m set), or 0 when no mapping ends above a. */
static int
pf_shim_darwin_mapping(uint64_t a, struct pf_shim_map *m)
{
  return pf_shim_maps_at(a, m) == 1;
}

kern_return_t
pf_shim_darwin_mach_vm_region(mach_port_t task, mach_vm_address_t *address, mach_vm_size_t *size,
                              vm_region_flavor_t flavor, vm_region_info_t info,
                              mach_msg_type_number_t *count, mach_port_t *object_name)
{
  struct vm_region_basic_info_64 *bi = (struct vm_region_basic_info_64 *)(void *)info;
  struct vm_region_extended_info *ei = (struct vm_region_extended_info *)(void *)info;
  struct pf_shim_map m;
  pf_shim_darwin_note(PF_SHIM_DARWIN_VM_REGION);
  if (task != pf_shim_darwin_mach_task_self() || !count || !address || !size || !info
      || !((flavor == VM_REGION_BASIC_INFO_64 && *count >= VM_REGION_BASIC_INFO_COUNT_64)
           || (flavor == VM_REGION_EXTENDED_INFO && *count >= VM_REGION_EXTENDED_INFO_COUNT)))
    return KERN_INVALID_ARGUMENT;
  if (pf_shim_darwin_mapping(*address, &m) != 1)
    return KERN_INVALID_ADDRESS;
  *address = m.lo;
  *size = m.hi - m.lo;
  if (object_name)
    *object_name = MACH_PORT_NULL;
  if (flavor == VM_REGION_EXTENDED_INFO) {
    memset(ei, 0, sizeof *ei);
    ei->protection = (m.perms[0] == 'r' ? VM_PROT_READ : 0) | (m.perms[1] == 'w' ? VM_PROT_WRITE : 0)
                     | (m.perms[2] == 'x' ? VM_PROT_EXECUTE : 0);
    ei->ref_count = 1;
    ei->external_pager = m.ino != 0 && m.dev != 1;    /* a file (shmem is 00:01) */
    *count = VM_REGION_EXTENDED_INFO_COUNT;
    return KERN_SUCCESS;
  }
  memset(bi, 0, sizeof *bi);
  bi->protection = (m.perms[0] == 'r' ? VM_PROT_READ : 0) | (m.perms[1] == 'w' ? VM_PROT_WRITE : 0)
                   | (m.perms[2] == 'x' ? VM_PROT_EXECUTE : 0);
  bi->max_protection = VM_PROT_READ | VM_PROT_WRITE | VM_PROT_EXECUTE;
  bi->inheritance = m.perms[3] == 's' ? VM_INHERIT_SHARE : VM_INHERIT_COPY;
  bi->shared = m.perms[3] == 's';
  bi->offset = m.off;
  *count = VM_REGION_BASIC_INFO_COUNT_64;
  return KERN_SUCCESS;
}

kern_return_t
pf_shim_darwin_mach_vm_page_info(mach_port_t task, mach_vm_address_t address,
                                 vm_page_info_flavor_t flavor, vm_page_info_t info,
                                 mach_msg_type_number_t *count)
{
  struct vm_page_info_basic *pi = (struct vm_page_info_basic *)(void *)info;
  struct pf_shim_map m;
  pf_shim_darwin_note(PF_SHIM_DARWIN_PAGE_INFO);
  if (task != pf_shim_darwin_mach_task_self() || flavor != VM_PAGE_INFO_BASIC || !count
      || *count < VM_PAGE_INFO_BASIC_COUNT - 1 || !info)
    return KERN_INVALID_ARGUMENT;
  memset(pi, 0, (size_t)*count * sizeof(int));
  if (pf_shim_darwin_mapping(address, &m) != 1 || m.lo > address)
    return KERN_SUCCESS;                /* unmapped: zeroes (XNU) */
  pi->disposition = VM_PAGE_QUERY_PAGE_PRESENT;
  pi->ref_count = 1;
  if (m.perms[3] == 's')
    pi->object_id = pf_shim_mix(pf_shim_mix(m.dev) ^ m.ino);
  else
    pi->object_id = pf_shim_mix(pf_shim_mix((uint64_t)getpid()) ^ m.lo);
  pi->offset = (m.perms[3] == 's' ? m.off : 0) + (address - m.lo);
  pi->depth = 0;
  return KERN_SUCCESS;
}

int (*pf_shim_darwin_ulock_wait2)(uint32_t, void *, uint64_t, uint64_t, uint64_t)
  = pf_shim_darwin_ulock_wait2_impl;
int (*pf_shim_darwin_os_sync_wait)(void *, uint64_t, size_t, os_sync_wait_on_address_flags_t)
  = pf_shim_darwin_os_wait_impl;
int (*pf_shim_darwin_os_sync_wait_deadline)(void *, uint64_t, size_t, os_sync_wait_on_address_flags_t,
                                            os_clockid_t, uint64_t)
  = pf_shim_darwin_os_wait_deadline_impl;
int (*pf_shim_darwin_os_sync_wait_timeout)(void *, uint64_t, size_t, os_sync_wait_on_address_flags_t,
                                           os_clockid_t, uint64_t)
  = pf_shim_darwin_os_wait_timeout_impl;
int (*pf_shim_darwin_os_sync_wake_any)(void *, size_t, os_sync_wake_by_address_flags_t)
  = pf_shim_darwin_os_wake_any_impl;
int (*pf_shim_darwin_os_sync_wake_all)(void *, size_t, os_sync_wake_by_address_flags_t)
  = pf_shim_darwin_os_wake_all_impl;

static unsigned int
pf_shim_darwin_env_uint(const char *name, unsigned int dflt)
{
  const char *s = getenv(name);
  char *end;
  unsigned long v;
  if (!s || !*s)
    return dflt;
  v = strtoul(s, &end, 10);
  if (*end || v > 1000000) {
    fprintf(stderr, "%s=%s: not a number of waits (0..1000000)\n", name, s);
    abort();
  }
  return (unsigned int)v;
}

__attribute__((constructor)) static void
pf_shim_darwin_setup(void)
{
  const char *api = getenv("PFUTEX_DARWIN_SHIM_API");
  pf_shim_darwin_spurious_every = pf_shim_darwin_env_uint("PFUTEX_DARWIN_SHIM_SPURIOUS", 5);
  pf_shim_darwin_efault_every = pf_shim_darwin_env_uint("PFUTEX_DARWIN_SHIM_EFAULT", 11);
  if (!api || !*api || strcmp(api, "os_sync") == 0)
    return;                              /* a current macOS (14.4+) */
  if (strcmp(api, "ulock2") != 0 && strcmp(api, "ulock") != 0) {
    fprintf(stderr, "PFUTEX_DARWIN_SHIM_API=%s: not one of os_sync ulock2 ulock\n", api);
    abort();
  }
  /* macOS 11 to 14.3: no os_sync_*. */
  pf_shim_darwin_os_sync_wait = NULL;
  pf_shim_darwin_os_sync_wait_deadline = NULL;
  pf_shim_darwin_os_sync_wait_timeout = NULL;
  pf_shim_darwin_os_sync_wake_any = NULL;
  pf_shim_darwin_os_sync_wake_all = NULL;
  if (strcmp(api, "ulock") == 0)
    pf_shim_darwin_ulock_wait2 = NULL;   /* before macOS 11 */
}
