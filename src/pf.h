/* pf.h - pfutex's private umbrella header.
 *
 * Conventions (musl-like): internal functions return 0, a count, or a
 * negative errno; src/futex.c and src/api.c convert once to -1/errno at the
 * public boundary.  Names: pf_* / PF_*, object then verb, _locked when the
 * caller holds the lock.
 */
#ifndef PF_H
#define PF_H

#ifdef HAVE_CONFIG_H
# include "config.h"
#endif

#ifdef _WIN32
/* libtool compiles a DLL's objects (and those of the convenience library
 * libpfutex.a is made from) with -DDLL_EXPORT, which has winpthreads'
 * <pthread.h> declare its calls dllimport: the objects would reference
 * __imp_pthread_*, which a static link (libwinpthread.a) cannot resolve.
 * Plain references resolve both ways (an import library has a stub per
 * call).  pfutex's own exports use PFUTEX_BUILDING_DLL.  Every file of the
 * library includes this header before any system header. */
# undef DLL_EXPORT
# include "posix.h"    /* Windows: the POSIX names src/ uses (ports/win32/posix.h) */
#endif
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <atomic_ops.h>
#ifdef PF_SCHED_POINTS
# include "schedpt.h"  /* every atomic a scheduling point (testing only) */
#endif

#include "pfutex.h"

#ifdef PF_ASSERTIONS
# include <assert.h>
# define PF_ASSERT(x) assert(x)
#else
# define PF_ASSERT(x) ((void)0)
#endif

#if defined(__GNUC__)
# define PF_LIKELY(x)   __builtin_expect(!!(x), 1)
# define PF_UNLIKELY(x) __builtin_expect(!!(x), 0)
# define PF_NOINLINE    __attribute__((noinline))
#else
# define PF_LIKELY(x)   (x)
# define PF_UNLIKELY(x) (x)
# define PF_NOINLINE
#endif

/* Linux futex(2) numbers, used by the multiplexer's decoder. */
enum {
  PF_OP_WAIT = 0, PF_OP_WAKE = 1, PF_OP_FD = 2, PF_OP_REQUEUE = 3,
  PF_OP_CMP_REQUEUE = 4, PF_OP_WAKE_OP = 5, PF_OP_LOCK_PI = 6,
  PF_OP_UNLOCK_PI = 7, PF_OP_TRYLOCK_PI = 8, PF_OP_WAIT_BITSET = 9,
  PF_OP_WAKE_BITSET = 10, PF_OP_WAIT_REQUEUE_PI = 11,
  PF_OP_CMP_REQUEUE_PI = 12, PF_OP_LOCK_PI2 = 13,
  PF_OP_PRIVATE_FLAG = 128, PF_OP_CLOCK_REALTIME = 256
};

/* ---- Deadlines (src/time.c) -------------------------------------------- */
/* An absolute point on a clock; every timeout becomes one at the public
 * boundary, validated once. */
struct pf_deadline {
  struct timespec abs;   /* absolute time on `clock` */
  int clock;             /* PFUTEX_CLOCK_MONOTONIC or PFUTEX_CLOCK_REALTIME */
};

int pf_timespec_valid(const struct timespec *ts);
int pf_deadline_from_rel(struct pf_deadline *dl, const struct timespec *rel);
int pf_deadline_from_abs(struct pf_deadline *dl, const struct timespec *abs, int clock);
/* The caller's timeout pointer is untrusted: the front ends never
 * dereference it.  The native backend hands it to the kernel (which answers
 * EFAULT for a bad pointer); everyone else copies it in with
 * pf_os_copy_in (src/os.h), which answers EFAULT instead of faulting. */
int pf_timespec_copy_in(struct timespec *dst, const struct timespec *user);
int pf_clock_now(int clock, struct timespec *now);
/* Time left until dl: 0 and *left, or -ETIMEDOUT when passed. */
int pf_deadline_left(const struct pf_deadline *dl, struct timespec *left);

/* ---- Decoded requests -------------------------------------------------- */
/* Both front ends (the multiplexer and the clean calls) validate and decode
 * into one of these; the backends see only this.  All counts are exact
 * (>= 0): the decoders apply Linux's quirks (legacy WAKE with 0 wakes one). */
#define PF_F_SHARED   0x1u   /* not FUTEX_PRIVATE_FLAG */
#define PF_F_LEGACY   0x2u   /* came through pfutex(): old futex(2) semantics */
#define PF_F_CMP      0x4u   /* requeue: compare *uaddr with val first */

struct pf_req {
  uint32_t *uaddr;
  uint32_t *uaddr2;
  uint32_t val;                  /* wait: expected value; cmp_requeue: cmpval */
  uint32_t mask;                 /* wait/wake bitset, never 0 */
  uint32_t wakeop;               /* wake_op: encoded operation */
  uint32_t pi;                   /* wait: 0, or a WAIT_REQUEUE_PI waiter's tag
                                    (src/pi.c) */
  int nr;                        /* wake, requeue, wake_op: nr_wake */
  int nr2;                       /* requeue: nr_requeue; wake_op: nr_wake2 */
  unsigned int flags;            /* PF_F_* */
  /* wait: the caller's timeout, not yet read (see pf_timespec_copy_in) */
  const struct timespec *uts;    /* NULL for none */
  int uts_kind;                  /* PF_TS_REL (legacy FUTEX_WAIT) or PF_TS_ABS */
  int clock;                     /* PF_TS_ABS: PFUTEX_CLOCK_* as given (checked late) */
  const struct pf_deadline *dl;  /* wait: the timeout read and checked by the front
                                    end (pf_req_deadline), for backends without
                                    PF_BE_KERNEL; NULL for none */
};
enum { PF_TS_NONE = 0, PF_TS_REL, PF_TS_ABS };
/* Read and validate r's timeout: 1 and *dl set, 0 for none, or -EFAULT /
 * -EINVAL, in the kernel's order (futex_wait(2): the clock, then the
 * pointer, then the values). */
int pf_req_deadline(const struct pf_req *r, struct pf_deadline *dl);

/* ---- Backends (src/backend.c) ------------------------------------------ */
struct pf_backend {
  const char *name;              /* the PFUTEX_BACKEND selector */
  /* Once, before first use, with the PFUTEX_BACKEND value that selected it
   * (its name, or for "linux" a sub-name such as "linux:futex"); 0 or
   * -errno.  Sets *reported to the name pfutex_backend() returns. */
  int (*init)(const struct pf_backend *self, const char *want, const char **reported);
  int (*wait)(const struct pf_req *r);
  int (*wake)(const struct pf_req *r);
  int (*requeue)(const struct pf_req *r);
  int (*wake_op)(const struct pf_req *r);
  /* Optional: the multiplexer's supported ops handed over undecoded (the
   * native backend: the kernel then makes every check, in its own order). */
  long (*raw)(uint32_t *uaddr, int op, uint32_t val, const struct timespec *timeout,
              uint32_t *uaddr2, uint32_t val3);
  unsigned int caps;             /* PF_BE_* */
  /* Optional (NULL: ENOSYS): the PI ops of the multiplexer (LOCK_PI,
   * UNLOCK_PI, TRYLOCK_PI, WAIT_REQUEUE_PI, CMP_REQUEUE_PI, LOCK_PI2),
   * undecoded; futex_waitv(2) as pfutex_waitv takes it; set_robust_list(2)
   * and get_robust_list(2).  Each returns a count or 0, or -errno. */
  long (*pi)(uint32_t *uaddr, int op, uint32_t val, const struct timespec *timeout,
             uint32_t *uaddr2, uint32_t val3);
  long (*waitv)(struct pfutex_waitv *w, unsigned int nr, unsigned int flags,
                const struct timespec *timeout, int clockid);
  long (*robust_set)(struct robust_list_head *head, size_t len);
  long (*robust_get)(int pid, struct robust_list_head **head, size_t *len);
  /* Optional (the emulation): the PI ops decoded by the multiplexer, cmd
   * their op number (PF_OP_LOCK_PI ...); NULL, or -ENOSYS: not here. */
  int (*pi_req)(const struct pf_req *r, int cmd);
};
/* The backend is the emulation engine (src/emu.h): a front end may run the
 * engine's two fast paths itself, before building a request: a mismatched
 * untimed wait (pf_wait_mismatch) and a wake with nobody waiting
 * (pf_emu_nobody_waits), each after the checks the engine makes first. */
#define PF_BE_EMU 0x1u
/* The backend checks a wait's timeout and mask itself, in the kernel's
 * order (the native backend: the kernel does): the clean calls hand both
 * over unchecked. */
#define PF_BE_KERNEL 0x2u

/* The active backend, NULL when PFUTEX_BACKEND named none (then -ENOSYS).
 * pf_backend_state: 0 before the selection, then PF_BE_SELECTED | the
 * active backend's caps (release/acquire: once it is nonzero, pf_active is
 * final).  Inline: after the first call each is one plain load on x86. */
#define PF_BE_SELECTED 0x100u
extern AO_t pf_backend_state_word;
extern const struct pf_backend *pf_active;
const struct pf_backend *pf_backend_get_slow(void);

static inline AO_t
pf_backend_state(void)
{
  return AO_load_acquire(&pf_backend_state_word);
}

static inline const struct pf_backend *
pf_backend_get(void)
{
  if (PF_LIKELY(pf_backend_state() != 0))
    return pf_active;
  return pf_backend_get_slow();
}
extern const struct pf_backend pf_backend_linux;
extern const struct pf_backend pf_backend_emu_futex;
extern const struct pf_backend pf_backend_emu_sysv;
extern const struct pf_backend pf_backend_emu_freebsd;
extern const struct pf_backend pf_backend_emu_dragonfly;
extern const struct pf_backend pf_backend_emu_openbsd;
extern const struct pf_backend pf_backend_emu_netbsd;
extern const struct pf_backend pf_backend_emu_darwin;
extern const struct pf_backend pf_backend_emu_win32;
extern const struct pf_backend pf_backend_emu_freebsd_shim;
extern const struct pf_backend pf_backend_emu_dragonfly_shim;
extern const struct pf_backend pf_backend_emu_openbsd_shim;
extern const struct pf_backend pf_backend_emu_netbsd_shim;
extern const struct pf_backend pf_backend_emu_darwin_shim;

/* WAKE_OP arithmetic (src/futex_op.c), as Linux's futex_atomic_op_inuser:
 * pf_wakeop_valid_op: 1 if the op field is SET..XOR, else 0 (-> ENOSYS, no
 * store); pf_wakeop_apply: the new value from the old one;
 * pf_wakeop_compare: 1/0 for the comparison, -ENOSYS for an unknown cmp. */
int pf_wakeop_valid_op(uint32_t encoded);
uint32_t pf_wakeop_apply(uint32_t encoded, uint32_t oldval);
int pf_wakeop_compare(uint32_t encoded, uint32_t oldval);

/* Address checks that need no system call.
 * pf_addr_out_of_range: at or above the top of user space (Linux: EFAULT
 * even for private keys, which never touch memory).  pf_addr_unreadable:
 * out of range or in the first page: EFAULT wherever memory would be read
 * or written, or a shared key built.  Other unreadable words are told by
 * the read itself (pf_os_word_read). */
/* The kernel's range check on a futex address (access_ok), as Linux 6.18
 * makes it: on x86_64 an address up to TASK_SIZE_MAX (2^47 - 4096) itself
 * passes (older kernels stopped one word short); aarch64 ends at 2^48; a
 * 32-bit process on a 64-bit kernel passes with any address.  Memory can
 * be read only below the guard page under TASK_SIZE_MAX (x86_64) or the
 * top page (32-bit), and never in the first page. */
#if defined(__x86_64__) && !defined(__ILP32__)
# define PF_ADDR_RANGE_END    (((uintptr_t)1 << 47) - 4096)
# define PF_ADDR_READABLE_END (((uintptr_t)1 << 47) - 4096 - 4)
#elif defined(__aarch64__) && !defined(__ILP32__)
# define PF_ADDR_RANGE_END    (((uintptr_t)1 << 48) - 4)
# define PF_ADDR_READABLE_END (((uintptr_t)1 << 48) - 4)
#else
# define PF_ADDR_RANGE_END    UINTPTR_MAX
# define PF_ADDR_READABLE_END (UINTPTR_MAX - 4096)
#endif

static inline int
pf_addr_out_of_range(const void *p)
{
  return (uintptr_t)p > PF_ADDR_RANGE_END;
}

static inline int
pf_addr_unreadable(const void *p)
{
  return (uintptr_t)p < 4096 || (uintptr_t)p > PF_ADDR_READABLE_END;
}
#define PF_ALIGNED(p) ((((uintptr_t)(p)) & 3u) == 0)

/* src/os.h: the word read as the kernel reads it (-EFAULT, never a
 * signal), and written unchanged (-EFAULT where a store would fault). */
int pf_os_word_read(const uint32_t *p, uint32_t *v);
int pf_os_word_touch(uint32_t *p);

/* 1 when a wait on uaddr for val fails with EAGAIN by a read of the word
 * now, every earlier check (alignment EINVAL, address EFAULT) passing; 0
 * when the backend must decide.  The load is an acquire, so a caller that
 * reads data after EAGAIN sees what was published before the word changed.
 * A mismatch seen at any moment of the call is a valid EAGAIN.  (A shared
 * wait needs one more check first: src/emu.h pf_emu_mismatch_keyed.) */
static inline int
pf_wait_mismatch(const uint32_t *uaddr, uint32_t val)
{
  uint32_t v;
  return PF_ALIGNED(uaddr) && pf_os_word_read(uaddr, &v) == 0 && v != val;
}

#endif /* PF_H */
