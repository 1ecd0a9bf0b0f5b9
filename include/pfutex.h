/* pfutex.h - Linux futex semantics on every system.
 *
 * Two entry points over one engine:
 *   - the compatibility multiplexer pfutex(), with Linux futex(2)'s op
 *     numbers, flags, argument overloading, return values and errno;
 *   - clean single-purpose calls (pfutex_wait, pfutex_wake, pfutex_requeue,
 *     pfutex_cmp_requeue, pfutex_wake_op), modelled on Linux 6.7's
 *     futex_wait(2)/futex_wake(2)/futex_requeue(2).
 * Every call returns -1 and sets errno on failure, like syscall(2).
 * See pfutex(3) and one manual page per call.
 */
#ifndef PFUTEX_H
#define PFUTEX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The one export macro: the library is built with hidden visibility. */
#if defined(_WIN32) && defined(PFUTEX_BUILDING_DLL)
# define PFUTEX_API __declspec(dllexport)
#elif defined(__GNUC__) && __GNUC__ >= 4
# define PFUTEX_API __attribute__((visibility("default")))
#else
# define PFUTEX_API
#endif

#define PFUTEX_VERSION_MAJOR 0
#define PFUTEX_VERSION_MINOR 1
#define PFUTEX_VERSION_PATCH 0

/* ---- Flags of the clean calls ------------------------------------------ */
/* The futex is used by one process only (like FUTEX2_PRIVATE).  Without it
 * the futex is shared: a private waiter is never woken by a shared wake on
 * the same word, nor the other way round (as on Linux). */
#define PFUTEX_PRIVATE          128u
#define PFUTEX_SHARED           0u

/* Clocks for pfutex_wait's absolute deadline (Linux's numbering). */
#define PFUTEX_CLOCK_REALTIME   0
#define PFUTEX_CLOCK_MONOTONIC  1

/* Bitset that matches every waiter. */
#define PFUTEX_BITSET_MATCH_ANY 0xffffffffu

/* ---- pfutex_wake_op encoding (same bits as Linux FUTEX_OP) -------------- */
#define PFUTEX_OP_SET           0       /* *uaddr2 = oparg  */
#define PFUTEX_OP_ADD           1       /* *uaddr2 += oparg */
#define PFUTEX_OP_OR            2       /* *uaddr2 |= oparg */
#define PFUTEX_OP_ANDN          3       /* *uaddr2 &= ~oparg */
#define PFUTEX_OP_XOR           4       /* *uaddr2 ^= oparg */
#define PFUTEX_OP_OPARG_SHIFT   8       /* use (1 << oparg) as the operand */
#define PFUTEX_OP_CMP_EQ        0
#define PFUTEX_OP_CMP_NE        1
#define PFUTEX_OP_CMP_LT        2
#define PFUTEX_OP_CMP_LE        3
#define PFUTEX_OP_CMP_GT        4
#define PFUTEX_OP_CMP_GE        5
#define PFUTEX_OP(op, oparg, cmp, cmparg) \
  ((((uint32_t)(op) & 0xfu) << 28) | (((uint32_t)(cmp) & 0xfu) << 24) \
   | (((uint32_t)(oparg) & 0xfffu) << 12) | ((uint32_t)(cmparg) & 0xfffu))

/* ---- The compatibility multiplexer ------------------------------------- */
/* Exactly Linux futex(2): op is FUTEX_WAIT (0) ... FUTEX_WAKE_BITSET (10)
 * optionally or-ed with FUTEX_PRIVATE_FLAG (128) and FUTEX_CLOCK_REALTIME
 * (256); for REQUEUE, CMP_REQUEUE and WAKE_OP the timeout slot carries val2
 * (cast it: (const struct timespec *)(uintptr_t)val2).  Names for the op
 * numbers are in <pfutex/linux.h>.  The PI ops (FUTEX_LOCK_PI ...
 * FUTEX_LOCK_PI2) go to the kernel on the native backend and follow
 * Linux's word protocol under emulation (see pfutex(3)).  FUTEX_FD and
 * unknown ops fail with ENOSYS. */
PFUTEX_API long pfutex(uint32_t *uaddr, int op, uint32_t val,
                       const struct timespec *timeout, uint32_t *uaddr2,
                       uint32_t val3);

/* ---- Clean single-purpose calls ---------------------------------------- */
/* Wait while *uaddr == val until woken by a wake whose mask shares a bit with
 * `mask`, or until the absolute `deadline` (NULL: none) on clock `clockid`
 * (PFUTEX_CLOCK_MONOTONIC or PFUTEX_CLOCK_REALTIME) passes.  Returns 0 when
 * woken (spurious wakeups are possible, as on Linux), else -1 with errno
 * EAGAIN (*uaddr != val), ETIMEDOUT, EINTR (a signal handler ran), EINVAL
 * (misaligned uaddr, mask 0, bad flags, bad deadline, or a bad clock with a
 * deadline: like futex_wait(2), the clock is not looked at without one) or
 * EFAULT.  Every clean call fails with ENOSYS when no backend is active. */
PFUTEX_API int pfutex_wait(uint32_t *uaddr, uint32_t val, uint32_t mask,
                           unsigned int flags, const struct timespec *deadline,
                           int clockid);

/* Wake at most nr waiters of uaddr whose bitset shares a bit with mask.
 * nr 0 wakes none; a negative nr fails with EINVAL.  Returns the number
 * woken. */
PFUTEX_API int pfutex_wake(uint32_t *uaddr, uint32_t mask, int nr,
                           unsigned int flags);

/* Wake at most nr_wake waiters of uaddr and move at most nr_requeue of the
 * rest to uaddr2.  Returns woken + moved.  Negative counts: EINVAL. */
PFUTEX_API int pfutex_requeue(uint32_t *uaddr, uint32_t *uaddr2, int nr_wake,
                              int nr_requeue, unsigned int flags);

/* As pfutex_requeue, but first checks *uaddr == val atomically with the
 * requeue; EAGAIN (and nothing done) when it differs. */
PFUTEX_API int pfutex_cmp_requeue(uint32_t *uaddr, uint32_t val,
                                  uint32_t *uaddr2, int nr_wake,
                                  int nr_requeue, unsigned int flags);

/* Atomically apply op (PFUTEX_OP(...)) to *uaddr2, wake at most nr_wake
 * waiters of uaddr and, if the comparison on the old value of *uaddr2 holds,
 * at most nr_wake2 waiters of uaddr2.  Returns the total woken.  Counts of 0
 * wake none; negative counts: EINVAL; an unknown op or cmp: ENOSYS (an
 * unknown cmp after *uaddr2 was modified, as on Linux). */
PFUTEX_API int pfutex_wake_op(uint32_t *uaddr, uint32_t *uaddr2, int nr_wake,
                              int nr_wake2, uint32_t op, unsigned int flags);

/* ---- Many words at once: futex_waitv(2) -------------------------------- */
/* The layout of Linux's struct futex_waitv: val is compared with the 32-bit
 * word at uaddr; flags is PFUTEX2_SIZE_U32, optionally with PFUTEX2_PRIVATE;
 * __reserved is 0. */
struct pfutex_waitv {
  uint64_t val;
  uint64_t uaddr;
  uint32_t flags;
  uint32_t __reserved;
};
#define PFUTEX2_SIZE_U32        0x02u
#define PFUTEX2_PRIVATE         128u
#define PFUTEX_WAITV_MAX        128

/* Linux futex_waitv(2): wait until a wake reaches any of the nr_futexes
 * words (1 .. PFUTEX_WAITV_MAX), each while it holds its val.  Returns the
 * index of a woken entry; -1 with errno EAGAIN (a word differed: nothing
 * stays queued), ETIMEDOUT (the absolute timeout on clockid,
 * PFUTEX_CLOCK_MONOTONIC or PFUTEX_CLOCK_REALTIME, passed; NULL: none),
 * EINTR, EINVAL (nr_futexes 0 or too many, flags not 0, an entry's flags
 * or __reserved, a misaligned word, a bad clock or timeout) or EFAULT. */
PFUTEX_API long pfutex_waitv(struct pfutex_waitv *waiters, unsigned int nr_futexes,
                             unsigned int flags, const struct timespec *timeout,
                             int clockid);

/* ---- Priority inheritance and robust lists ------------------------------ */
/* The PI ops go through pfutex() with Linux's numbers (FUTEX_LOCK_PI ...,
 * <pfutex/linux.h>) and word protocol: the owner's id in the low 30 bits,
 * FUTEX_WAITERS, FUTEX_OWNER_DIED.  pfutex_tid() is the id this thread
 * uses in PI and robust words: Linux's gettid() on Linux. */
PFUTEX_API pid_t pfutex_tid(void);

/* Linux set_robust_list(2) and get_robust_list(2), with the layout of
 * Linux's struct robust_list_head (<linux/futex.h>, or <pfutex/linux.h>
 * where there is none).  pid 0: the calling thread. */
struct robust_list_head;
PFUTEX_API int pfutex_set_robust_list(struct robust_list_head *head, size_t len);
PFUTEX_API int pfutex_get_robust_list(int pid, struct robust_list_head **head, size_t *len);

/* ---- Backends ---------------------------------------------------------- */
/* Name of the active backend: "linux:futex2", "linux:futex" or
 * "linux:futex_time64" for the native Linux backend, "emu:<port>" for the
 * emulation (e.g. "emu:futex", "emu:sysv").  The environment variable
 * PFUTEX_BACKEND, read once at first use, selects a compiled backend by name
 * ("linux", "emu:futex", ...; "linux:futex2", "linux:futex" and, on 32-bit,
 * "linux:futex_time64" force one syscall family); NULL when it names no
 * compiled backend or that backend cannot start (e.g. "linux:futex2" on a
 * kernel without it), in which case every call fails with ENOSYS. */
PFUTEX_API const char *pfutex_backend(void);

/* NULL-terminated list of the compiled backends' names, the default first
 * (the "linux" sub-names above are accepted but not listed). */
PFUTEX_API const char *const *pfutex_backends(void);

/* ---- Shared regions: process-shared futexes ----------------------------- */
/* A region is shared memory whose futex words are shared between processes
 * on every backend: a word used without PFUTEX_PRIVATE (FUTEX_PRIVATE_FLAG)
 * is keyed by (region, offset), so processes that map the region at
 * different addresses wait for and wake each other.  Under the native
 * backend a region is plain shared memory and the kernel does the rest;
 * under emulation each region carries its own waitqueue table (offsets and
 * fixed-width integers only: 32-bit and 64-bit processes can share one),
 * robust to a process killed at any instruction.  See pfutex_region(3).
 * Every call returns NULL or -1 with errno on failure. */
typedef struct pfutex_region pfutex_region_t;

/* A named region, like shm_open(3): oflag is O_RDWR, optionally with
 * O_CREAT and O_EXCL (anything else: EINVAL); mode as shm_open's.  size is
 * the user area's size in bytes when the region is created (zeroed), and
 * when it exists 0 or at most its size.  Errors: EEXIST, ENOENT, EACCES,
 * EINVAL (bad name, size or flag), ENOMEM, EPROTO (the object is a region
 * of another layout version or ABI), ENOTRECOVERABLE (its header is
 * corrupt), and shm_open's, ftruncate's and mmap's. */
PFUTEX_API pfutex_region_t *pfutex_region_open(const char *name, size_t size, int oflag,
                                               mode_t mode);

/* An anonymous region of `size` bytes (zeroed) shared with the fork()
 * children of this process (they inherit the handle). */
PFUTEX_API pfutex_region_t *pfutex_region_anon(size_t size);

/* Make memory the caller mapped itself futex-shareable: addr is a
 * MAP_SHARED mapping of the first len bytes of the file or shared memory
 * object open as fd.  pfutex never writes into those bytes: a word there is
 * keyed by the object's identity (device, inode) and its offset, and under
 * emulation the table lives in a shared memory object of its own beside
 * the user's (see pfutex_region(3) for its name, lifetime and removal:
 * pfutex_region_attach_unlink).  fd may be closed after the call. */
PFUTEX_API pfutex_region_t *pfutex_region_attach(int fd, void *addr, size_t len);

/* The user area: its address in this process, and its size. */
PFUTEX_API void *pfutex_region_addr(pfutex_region_t *r);
PFUTEX_API size_t pfutex_region_size(pfutex_region_t *r);

/* Unmap the region (for attach: only pfutex's table; the caller's mapping
 * stays).  Under emulation, EBUSY while a wait of this process is in
 * progress on one of its words; the native backend does not count waits
 * (closing memory a thread waits on is then the caller's bug, as munmap). */
PFUTEX_API int pfutex_region_close(pfutex_region_t *r);

/* Remove a named region's name, like shm_unlink(3): processes that have it
 * open keep using it. */
PFUTEX_API int pfutex_region_unlink(const char *name);

/* Remove the table pfutex keeps beside the object open as fd (attach). */
PFUTEX_API int pfutex_region_attach_unlink(int fd);

/* Sizing.  By default a region's table has PFUTEX_REGION_DEFAULT_SLOTS
 * waiter slots (at most that many waits in progress at once on its words,
 * over every process: one more fails with ENOMEM), PFUTEX_REGION_DEFAULT_BUCKETS
 * buckets and room for PFUTEX_REGION_DEFAULT_PROCS processes attached at
 * once.  The _attr variants take other sizes when they create the table
 * (a field left 0 takes the default); an existing table keeps its own. */
#define PFUTEX_REGION_DEFAULT_SLOTS   1024u
#define PFUTEX_REGION_DEFAULT_BUCKETS 256u
#define PFUTEX_REGION_DEFAULT_PROCS   256u
typedef struct pfutex_region_attr {
  unsigned int slots;         /* waiter slots, 1 .. 65535 */
  unsigned int buckets;       /* a power of two, 1 .. 65536 */
  unsigned int procs;         /* processes attached at once, 1 .. 65535 */
  unsigned int reserved[5];   /* 0 */
} pfutex_region_attr_t;
PFUTEX_API pfutex_region_t *pfutex_region_open_attr(const char *name, size_t size, int oflag,
                                                    mode_t mode,
                                                    const pfutex_region_attr_t *attr);
PFUTEX_API pfutex_region_t *pfutex_region_anon_attr(size_t size, const pfutex_region_attr_t *attr);
PFUTEX_API pfutex_region_t *pfutex_region_attach_attr(int fd, void *addr, size_t len,
                                                      const pfutex_region_attr_t *attr);

#ifdef __cplusplus
}
#endif
#endif /* PFUTEX_H */
