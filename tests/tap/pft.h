/* pft.h - pfutex test helpers: watchdog, "is this thread asleep", waiter
 * threads, return/errno checks.  Never synchronise on sleeps: wait on state. */
#ifndef PF_TAP_PFT_H
#define PF_TAP_PFT_H

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "basic.h"
#include "pfutex.h"

/* Built with ThreadSanitizer?  Its runtime defers signal handlers while a
 * thread blocks in a raw system call and does not support fork() from a
 * threaded process, so the EINTR and fork tests skip under it. */
#if defined(__SANITIZE_THREAD__)
# define PFT_TSAN 1
#elif defined(__has_feature)
# if __has_feature(thread_sanitizer)
#  define PFT_TSAN 1
# endif
#endif
#ifdef PFT_TSAN
# define PFT_SKIP_UNDER_TSAN() skip_all("not meaningful under ThreadSanitizer (signal deferral, fork)")
#else
# define PFT_SKIP_UNDER_TSAN() ((void)0)
#endif

/* Start a watchdog: after `seconds` (times $PFUTEX_TEST_TIMEOUT_SCALE, for
 * valgrind or sanitizers) print "Bail out!" and _exit, so a hang is a
 * failure.  Every blocking test calls it first. */
void pft_watchdog(unsigned int seconds);

#ifndef _WIN32
/* Read at most size - 1 bytes of the file at path into buf (a /proc
 * file: one read) and end them with a NUL: the count, or -1 when it
 * cannot be opened or reads nothing. */
ssize_t pft_read_file(const char *path, char *buf, size_t size);
/* Wait until at least n waiters are queued on the shared word *u (up to
 * 10 s): counted by moving every waiter of u to u + 8 (the same table:
 * the same region or mapping, a move within one table) and back.  A
 * waiter seen asleep may still be on its way to its queue. */
void pft_await_queued(uint32_t *u, int n);
#endif

/* Does futex_waitv work here (a probe's mismatch answers EAGAIN)?  Not
 * under qemu-user, nor on Linux before 5.16, with the native backend. */
int pft_have_waitv(void);

/* The state letter ('S', 'R', 'D', 'Z', ...) of thread tid of process
 * pid from /proc (pid 0: this process; tid 0: the process itself), or -1
 * when it is gone. */
int pft_task_state(pid_t pid, pid_t tid);

/* This thread's kernel id. */
pid_t pft_gettid(void);

/* Poll until thread `tid` of this process is asleep in the kernel (state S
 * or D in /proc/self/task/TID/stat); 0 when it is, -1 if it does not happen
 * within the watchdog. */
int pft_wait_asleep(pid_t tid);

/* Install a plain handler for sig with sa_flags `flags` (bails on error). */
void pft_install(int sig, void (*fn)(int), int flags);

/* Return once every other thread of this process sleeps: fork only then
 * (a thread still starting may hold a lock inside a sanitizer's allocator,
 * which the child would inherit held). */
void pft_settle_threads(void);

/* The errno name for the errors futex calls give ("EFAULT"), else
 * strerror's text; "0" for 0. */
const char *pft_errname(int e);

/* CLOCK_MONOTONIC in nanoseconds. */
long long pft_now_ns(void);

/* Is the named backend the emulation? */
int pft_backend_is_emu(void);

/* The emulator a cross build's tests run under (PFUTEX_TEST_EMULATOR, set
 * by the test wrappers: "qemu-aarch64-static", say), else NULL.  A check
 * that tests the emulator instead of the library skips under one, saying
 * why. */
const char *pft_emulator(void);

/* NULL when a seccomp filter can be installed here (a child tries one
 * that allows everything); else why not ("Invalid argument", plus the
 * emulator's name: qemu-user refuses PR_SET_SECCOMP). */
const char *pft_seccomp_unavailable(void);

/* 0 when the kernel's FUTEX_WAKE_OP stores the right value (1 + 1 = 2 in
 * this CPU's byte order); else the value it stored.  qemu-user hands the op
 * to the host's kernel, which applies it in the host's byte order: on a
 * big-endian guest of a little-endian host 1 + 1 gives 0x01000001. */
uint32_t pft_kernel_wake_op_wrong(void);

/* futex_wait(2) (Linux 6.7; 455 on every architecture) as a test's kernel
 * reference for pfutex_wait(uaddr, val, mask, flags, ts, clockid): -1/errno
 * like syscall().  flags are pfutex_wait's (PFUTEX_PRIVATE is FUTEX2_PRIVATE;
 * other bits are passed on), FUTEX2_SIZE_U32 added.  The kernel reads a
 * struct __kernel_timespec (64-bit tv_sec and tv_nsec) on every ABI, so
 * where struct timespec is narrower (32-bit time_t: i386, armhf) a readable
 * ts is widened into one, as ports/linux/native.c does; an unreadable one
 * is passed on as it is: the kernel's wider read faults too, at its own
 * place in the order of its checks.  Elsewhere ts goes to the kernel as it
 * is.  -1/ENOSYS where the system has no such call. */
long pft_sys_futex_wait(uint32_t *uaddr, uint32_t val, uint32_t mask, unsigned int flags,
                        const struct timespec *ts, int clockid);

/* When the active backend is the native one and the kernel's WAKE_OP is
 * wrong (above: only ever seen under qemu-user on a big-endian guest),
 * print n skips saying so and return 1: the WAKE_OP checks would test the
 * emulator.  The emulated backends' WAKE_OP is checked on the same CPU by
 * the same tests.  Else 0. */
int pft_skip_wake_op(int n);

/* Check a -1/errno or count result: "ret == want_ret, and errno == want_errno
 * when want_ret is -1". */
int pft_is_ret(long got, int got_errno, long want_ret, int want_errno, const char *what);
#define PFT_IS(call, want_ret, want_errno, what) \
  do { long pft_r_; errno = 0; pft_r_ = (call); \
       pft_is_ret(pft_r_, errno, (want_ret), (want_errno), (what)); } while (0)

/* Waiter threads on one futex word. */
struct pft_waiter {
  pthread_t thread;
  pid_t tid;                  /* set before the wait starts */
  uint32_t *uaddr;
  uint32_t val;
  uint32_t bitset;            /* 0: plain FUTEX_WAIT */
  int op_flags;               /* FUTEX_PRIVATE_FLAG or 0 */
  const struct timespec *timeout;
  volatile int started;       /* set just before the call */
  volatile int done;          /* set after it returned */
  long ret;
  int err;
};

/* Start a thread that does pfutex(uaddr, WAIT or WAIT_BITSET, ...) and wait
 * until it is asleep. */
void pft_waiter_start(struct pft_waiter *w);
/* Join it; returns w->ret. */
long pft_waiter_join(struct pft_waiter *w);
/* Count how many of ws[0..n) have returned, after giving woken threads time
 * to finish: waits until `expect` are done (or the watchdog fires), then
 * checks that no more than `expect` are. */
int pft_count_done(struct pft_waiter *ws, int n);
void pft_wait_done(struct pft_waiter *ws, int n, int expect);

void pft_timespec_add_ns(struct timespec *ts, long long ns);
long long pft_elapsed_ns(const struct timespec *a, const struct timespec *b);

#endif
