/* fuzz_multiplexer: differential fuzzing of pfutex() against the kernel's
 * futex(2), op by op.
 *
 * Each input decodes to one call: op (a small op with the PRIVATE and
 * CLOCK_REALTIME flags, or all 32 bits: unknown ops, high bits, negative),
 * val, val3, what the timeout slot holds (NULL, zero, tiny, past or
 * near-future deadlines, tv_nsec < 0 or >= 1e9, tv_sec < 0, a misaligned
 * timespec, one on a PROT_NONE page, unmapped, straddling into PROT_NONE, a
 * low address; or, for REQUEUE/CMP_REQUEUE/WAKE_OP, val2 as any integer),
 * uaddr and uaddr2 (aligned words, misaligned, NULL, PROT_NONE, read-only,
 * unmapped, low, the edge of user space, kernel space, the last word before
 * a PROT_NONE page) and the words' values.  The call runs once as
 * syscall(SYS_futex, ...) and once as pfutex(...) (under the backend
 * PFUTEX_BACKEND names: .ci/fuzz runs emu:futex and emu:sysv; the replay
 * runs under every backend) on the same addresses, the words reset in
 * between; return value, errno and the words after the call must agree.
 *
 * Nothing blocks: every timeout that reaches a wait is zero, a few
 * microseconds or already passed, and a wait with no timeout gets a value
 * that differs from the word's (the harness flips it), so the kernel never
 * sleeps for long; a pfutex call that does not return is a hang (libFuzzer's
 * -timeout; in the replay the watchdog, and alarm() in forked calls).
 *
 * Where pfutex legitimately differs, the harness normalises (one line
 * each; N1, N2 and N4 were allowances for word reads that faulted and for
 * fast paths that answered before the key was made: pfutex now matches
 * the kernel there, and any difference fails):
 *  N1 a call whose word is on an unreadable page (PROT_NONE, unmapped,
 *     low) runs in a forked child, so that a fault kills the child, not
 *     the fuzzer: any SIGSEGV/SIGBUS there is a finding (the emulation
 *     reads words under its guard, ports/posix/guard.c: EFAULT);
 *  N3 the PI ops (LOCK_PI, UNLOCK_PI, TRYLOCK_PI, WAIT_REQUEUE_PI,
 *     CMP_REQUEUE_PI, LOCK_PI2): the kernel is not called (it would take or
 *     block on the lock); where the kernel's timeout check answers (EFAULT,
 *     EINVAL) pfutex must answer the same, words untouched; the rest is not
 *     fuzzed here: tests/futex_ext compares those ops with the kernel
 *     scenario by scenario, examples/pi_mutex stresses them.
 */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "pfutex.h"
#include "fuzz.h"

#if defined(__linux__)
# include <sys/mman.h>
# include <sys/syscall.h>
# include <sys/wait.h>
# include <unistd.h>
#endif

#if defined(__linux__) && defined(SYS_futex)

#define FZ_PRIVATE  128
#define FZ_REALTIME 256

enum { A_W0, A_W1, A_W2, A_END, A_MIS1, A_MIS2, A_NULL, A_NONE, A_RO0, A_RO1, A_RO2, A_UNMAP,
       A_LOW, A_TOP, A_PASTTOP, A_KERNEL, A_STRADDLE, A_SAME, A_N };
enum { T_NULL, T_ZERO, T_TINY, T_PAST, T_SOON, T_NEGNS, T_BIGNS, T_NEGS, T_MISAL, T_NONE,
       T_UNMAP, T_STRADDLE, T_LOW, T_HALF, T_N };

/* The arena: page 0 the words (read-write), 1 PROT_NONE, 2 read-only
 * (0, 1, 0xffffffff at its start), 3 timespecs (read-write), 4 PROT_NONE,
 * 5 unmapped. */
static char *arena;
static long pg;
static int emu;                 /* the backend is an emulated one */
static struct fz_res *shared_res;   /* a MAP_SHARED page for forked calls */

struct fz_res {
  long ret;
  int err;
  int fault;                    /* the call faulted (forked calls only) */
  uint32_t w[4];
};

struct fz_case {
  int op, cmd;
  uint32_t val, val3;
  int a1, a2, t;
  uint64_t t_raw;               /* the timeout's numbers, or val2 */
  uint32_t init[4];
};

static uint32_t *
word(int i)
{
  static const int off[4] = { 0, 4, 128, -4 };
  return (uint32_t *)(void *)(arena + (off[i] < 0 ? pg + off[i] : off[i]));
}

static uint32_t *
addr(const struct fz_case *c, int a, uint32_t *first)
{
  switch (a) {
  case A_W0: return word(0);
  case A_W1: return word(1);
  case A_W2: return word(2);
  case A_END: return word(3);
  case A_MIS1: return (uint32_t *)(void *)(arena + 9);
  case A_MIS2: return (uint32_t *)(void *)(arena + 14);
  case A_NULL: return NULL;
  case A_NONE: return (uint32_t *)(void *)(arena + pg + 4 * (c->init[0] & 7));
  case A_RO0: return (uint32_t *)(void *)(arena + 2 * pg);
  case A_RO1: return (uint32_t *)(void *)(arena + 2 * pg + 4);
  case A_RO2: return (uint32_t *)(void *)(arena + 2 * pg + 8);
  case A_UNMAP: return (uint32_t *)(void *)(arena + 5 * pg);
  case A_LOW: return (uint32_t *)(uintptr_t)0x2000;   /* below mmap_min_addr */
#if defined(__x86_64__) && !defined(__ILP32__)
  case A_TOP: return (uint32_t *)(((uintptr_t)1 << 47) - 4096);
  case A_PASTTOP: return (uint32_t *)(((uintptr_t)1 << 47) - 4092);
  case A_KERNEL: return (uint32_t *)(uintptr_t)0xffff800000000000ull;
#else
  case A_TOP: return (uint32_t *)(UINTPTR_MAX - 4095);
  case A_PASTTOP: return (uint32_t *)(UINTPTR_MAX - 3);
  case A_KERNEL: return (uint32_t *)(UINTPTR_MAX & ~(uintptr_t)4095 & ~(uintptr_t)0x7fffffff);
#endif
  case A_STRADDLE: return (uint32_t *)(void *)(arena + pg - 2);
  case A_SAME: return first;
  }
  return NULL;
}

/* The kernel reads it and may fault on it in user space (N1). */
/* A_KERNEL is past pfutex's own range check (src/pf.h) on x86_64 and
 * aarch64 only; elsewhere (a 32-bit process on a 64-bit kernel may use
 * every address) it is an unmapped user address, which pfutex may read. */
#if (defined(__x86_64__) || defined(__aarch64__)) && !defined(__ILP32__)
# define FZ_KERNEL_CHECKED 1
#else
# define FZ_KERNEL_CHECKED 0
#endif

static int
faultable(int a)
{
  return a == A_NONE || a == A_UNMAP || a == A_LOW || a == A_TOP || a == A_PASTTOP
         || a == A_STRADDLE || (a == A_KERNEL && !FZ_KERNEL_CHECKED);
}

static int
is_val2_op(int cmd)
{
  return cmd == 3 || cmd == 4 || cmd == 5 || cmd == 12;
}

static int
is_pi_op(int cmd)
{
  return cmd == 6 || cmd == 7 || cmd == 8 || cmd == 11 || cmd == 12 || cmd == 13;
}

static int
reads_timeout(int cmd)
{
  return cmd == 0 || cmd == 9 || cmd == 6 || cmd == 11 || cmd == 13;
}

/* Build the timeout argument afresh for each call (a "soon" deadline is
 * computed from the clock now). */
static const struct timespec *
timeout_arg(const struct fz_case *c)
{
  char *tsp = arena + 3 * pg;
  struct timespec ts = { 0, 0 };
  uint32_t lo = (uint32_t)c->t_raw, hi = (uint32_t)(c->t_raw >> 32);
  int absolute = c->cmd != 0;
  clockid_t clk = (c->op & FZ_REALTIME) ? CLOCK_REALTIME : CLOCK_MONOTONIC;

  if (is_val2_op(c->cmd)) {
    /* val2: any integer, mostly small ones */
    switch (hi & 3) {
    case 0: return (const struct timespec *)(uintptr_t)(intptr_t)(int8_t)lo;
    case 1: return (const struct timespec *)(uintptr_t)(intptr_t)(int32_t)lo;
    case 2: return (const struct timespec *)(uintptr_t)c->t_raw;
    default: return (const struct timespec *)(uintptr_t)lo;
    }
  }
  switch (c->t) {
  case T_NULL:
    return NULL;
  case T_ZERO:
    break;
  case T_TINY:
  case T_MISAL:
    ts.tv_nsec = (long)(lo % 2000u);
    break;
  case T_PAST:
    if (absolute) {
      clock_gettime(clk, &ts);
      ts.tv_sec -= (time_t)(hi % 3u);
      if (ts.tv_nsec >= (long)(lo % 1000000000u))
        ts.tv_nsec -= (long)(lo % 1000000000u);
    } else {
      ts.tv_nsec = (long)(lo % 2000u);
    }
    break;
  case T_SOON:
    if (absolute)
      clock_gettime(clk, &ts);
    ts.tv_nsec += (long)(lo % 5000u);
    if (ts.tv_nsec >= 1000000000L) {
      ts.tv_nsec -= 1000000000L;
      ts.tv_sec++;
    }
    break;
  case T_NEGNS:
    ts.tv_sec = (time_t)(hi & 0xff);
    ts.tv_nsec = -1 - (long)(lo & 0x7fffffff);
    break;
  case T_BIGNS:
    ts.tv_sec = (time_t)(hi & 0xff);
    ts.tv_nsec = 1000000000L + (long)(lo & 0x3fffffff);
    break;
  case T_NEGS:
    ts.tv_sec = -1 - (time_t)(hi & 0x7fffffff);
    ts.tv_nsec = (long)(lo % 1000000000u);
    break;
  case T_NONE:
    return (const struct timespec *)(void *)(arena + pg + (lo & 0xff));
  case T_UNMAP:
    return (const struct timespec *)(void *)(arena + 5 * pg + (lo & 0xff));
  case T_STRADDLE:
    /* tv_sec readable, tv_nsec on the PROT_NONE page */
    memset(tsp + pg - sizeof ts, 0, sizeof ts);
    return (const struct timespec *)(void *)(tsp + pg - sizeof ts / 2);
  case T_LOW:
    return (const struct timespec *)(uintptr_t)(0x1000 + (lo & 0xfff0));
  case T_HALF:
    /* a valid timespec whose last byte is the page's last */
    memcpy(tsp + pg - sizeof ts, &ts, sizeof ts);
    return (const struct timespec *)(void *)(tsp + pg - sizeof ts);
  }
  if (c->t == T_MISAL) {
    memcpy(tsp + 1 + (hi & 6), &ts, sizeof ts);
    return (const struct timespec *)(void *)(tsp + 1 + (hi & 6));
  }
  memcpy(tsp, &ts, sizeof ts);
  return (const struct timespec *)(void *)tsp;
}

static void
reset_words(const struct fz_case *c)
{
  int i;
  for (i = 0; i < 4; i++)
    *word(i) = c->init[i];
}

static void
one_call(const struct fz_case *c, int kernel, struct fz_res *r)
{
  uint32_t *u1 = addr(c, c->a1, NULL), *u2 = addr(c, c->a2, u1);
  uint32_t val = c->val;
  const struct timespec *t = timeout_arg(c);
  int i;

  reset_words(c);
  /* A wait with no timeout must not match, or it would sleep forever. */
  if ((c->cmd == 0 || c->cmd == 9) && t == NULL && u1 && ((uintptr_t)u1 & 3) == 0
      && !faultable(c->a1) && c->a1 != A_KERNEL)
    val = *(volatile uint32_t *)u1 ^ (val | 1);
  errno = 0;
  if (kernel)
    r->ret = syscall(SYS_futex, u1, c->op, val, t, u2, c->val3);
  else
    r->ret = pfutex(u1, c->op, val, t, u2, c->val3);
  r->err = r->ret == -1 ? errno : 0;
  r->fault = 0;
  for (i = 0; i < 4; i++)
    r->w[i] = *word(i);
}

/* Installed before pfutex's first call, so that the library's guard
 * (ports/posix/guard.c) is installed over it and chains to it: a fault
 * pfutex's guard does not end reaches this handler.  In a forked call's
 * child it is a finding; in the fuzzer's own process it goes on to the
 * handler that was there before (libFuzzer's, the sanitizer's, or the
 * default action): the faulting load runs again under it. */
static struct sigaction fault_old[2];
static pid_t fault_parent;

static void
fault_handler(int sig)
{
  if (getpid() != fault_parent) {
    shared_res->fault = 1;
    _exit(0);
  }
  sigaction(sig, &fault_old[sig == SIGBUS], NULL);
}

/* pfutex's call in a child: a fault there is a finding (N1), and so is
 * a hang. */
static int
forked_call(const struct fz_case *c, struct fz_res *r)
{
  pid_t pid;
  int st;
  memset(shared_res, 0, sizeof *shared_res);
  shared_res->ret = -2;
  pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    alarm(10);
    one_call(c, 0, shared_res);
    _exit(0);
  }
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
  *r = *shared_res;
  if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && r->fault)
    return 0;
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || r->ret == -2)
    return -1;
  return 0;
}

static const char *
opname(int cmd)
{
  static const char *const n[] = { "WAIT", "WAKE", "FD", "REQUEUE", "CMP_REQUEUE", "WAKE_OP",
                                   "LOCK_PI", "UNLOCK_PI", "TRYLOCK_PI", "WAIT_BITSET",
                                   "WAKE_BITSET", "WAIT_REQUEUE_PI", "CMP_REQUEUE_PI",
                                   "LOCK_PI2" };
  return cmd >= 0 && cmd < 14 ? n[cmd] : "unknown";
}

static void
report(const struct fz_case *c, const struct fz_res *k, const struct fz_res *p, const char *what)
{
  fz_fail("%s: op %d (%s%s%s) val %#x val3 %#x addr %d/%d timeout kind %d raw %#llx "
          "init %#x %#x %#x %#x: kernel %ld errno %d words %#x %#x %#x %#x; "
          "pfutex %ld errno %d%s words %#x %#x %#x %#x (backend %s)",
          what, c->op, opname(c->cmd), (c->op & FZ_PRIVATE) ? "|PRIVATE" : "",
          (c->op & FZ_REALTIME) ? "|REALTIME" : "", (unsigned)c->val, (unsigned)c->val3,
          c->a1, c->a2, c->t, (unsigned long long)c->t_raw, (unsigned)c->init[0],
          (unsigned)c->init[1], (unsigned)c->init[2], (unsigned)c->init[3], k->ret, k->err,
          (unsigned)k->w[0], (unsigned)k->w[1], (unsigned)k->w[2], (unsigned)k->w[3], p->ret,
          p->err, p->fault ? " (faulted)" : "", (unsigned)p->w[0], (unsigned)p->w[1],
          (unsigned)p->w[2], (unsigned)p->w[3], pfutex_backend() ? pfutex_backend() : "none");
}

/* N3: the PI ops' answer from the kernel's timeout check, or 0 (none). */
static int
pi_expected(const struct fz_case *c)
{
  if (!reads_timeout(c->cmd))
    return 0;
  switch (c->t) {
  case T_NONE: case T_UNMAP: case T_STRADDLE: case T_LOW:
    return EFAULT;
  case T_NEGNS: case T_BIGNS: case T_NEGS:
    return EINVAL;
  default:
    return 0;
  }
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
  const char *b;
  (void)argc;
  (void)argv;
  pg = sysconf(_SC_PAGESIZE);
  arena = mmap(NULL, (size_t)(6 * pg), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  shared_res = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (arena == MAP_FAILED || shared_res == MAP_FAILED) {
    perror("mmap");
    abort();
  }
  ((uint32_t *)(void *)(arena + 2 * pg))[1] = 1;
  ((uint32_t *)(void *)(arena + 2 * pg))[2] = 0xffffffffu;
  if (mprotect(arena + pg, (size_t)pg, PROT_NONE) != 0
      || mprotect(arena + 2 * pg, (size_t)pg, PROT_READ) != 0
      || mprotect(arena + 4 * pg, (size_t)pg, PROT_NONE) != 0
      || munmap(arena + 5 * pg, (size_t)pg) != 0) {
    perror("mprotect");
    abort();
  }
  {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = fault_handler;
    fault_parent = getpid();
    sigaction(SIGSEGV, &sa, &fault_old[0]);
    sigaction(SIGBUS, &sa, &fault_old[1]);
  }
  b = pfutex_backend();
  emu = b && strncmp(b, "emu:", 4) == 0;
  if (!fz_replay)
    fprintf(stderr, "fuzz_multiplexer: backend %s\n", b ? b : "none");
  return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
  struct fz_in in = { data, size };
  struct fz_case c;
  struct fz_res k, p;
  uint8_t sel = fz_u8(&in);
  int i, same;

  if (!arena)
    LLVMFuzzerInitialize(NULL, NULL);
  memset(&c, 0, sizeof c);
  if ((sel & 3) == 3) {
    c.op = (int)fz_u32(&in);                     /* every bit */
  } else {
    c.op = fz_u8(&in) % 16;
    c.op |= (sel & 4) ? FZ_PRIVATE : 0;
    c.op |= (sel & 8) ? FZ_REALTIME : 0;
  }
  c.cmd = c.op & ~(FZ_PRIVATE | FZ_REALTIME);
  c.val = fz_u32(&in);
  c.val3 = fz_u32(&in);
  c.a1 = fz_u8(&in) % A_N;
  c.a2 = fz_u8(&in) % A_N;
  if (c.a1 == A_SAME)
    c.a1 = A_W0;
  c.t = fz_u8(&in) % T_N;
  c.t_raw = fz_u64(&in);
  for (i = 0; i < 4; i++) {
    uint8_t how = fz_u8(&in);
    /* small values and their neighbours often: the fuzzer finds the rest */
    c.init[i] = (how & 0x80) ? fz_u32(&in) : (uint32_t)(how & 0x7f);
  }
  /* val: often the word's own value, so waits reach their timeouts */
  if ((sel & 0x30) == 0x10 && c.a1 <= A_END)
    c.val = c.init[c.a1 == A_END ? 3 : c.a1];

  if (is_pi_op(c.cmd)) {                        /* N3 */
    int want = pi_expected(&c);
    if (!want)
      return 0;
    one_call(&c, 0, &p);
    memset(&k, 0, sizeof k);
    k.ret = -1;
    k.err = want;
    memcpy(k.w, c.init, sizeof k.w);
    if (p.ret != -1 || p.err != want || memcmp(p.w, c.init, sizeof p.w) != 0)
      report(&c, &k, &p, "PI op (N3)");
    return 0;
  }

  one_call(&c, 1, &k);
  if (emu && (faultable(c.a1) || faultable(c.a2))) {
    if (forked_call(&c, &p) < 0) {
      report(&c, &k, &p, "forked pfutex call crashed or hung");
      return 0;
    }
    if (p.fault) {                              /* N1 */
      report(&c, &k, &p, "pfutex faulted (a signal, where the kernel answers)");
      return 0;
    }
  } else {
    one_call(&c, 0, &p);
  }
  reset_words(&c);

  same = k.ret == p.ret && k.err == p.err && memcmp(k.w, p.w, sizeof k.w) == 0;
  if (!same)
    report(&c, &k, &p, "divergence");
  return 0;
}

const char *
fz_unsupported(void)
{
  /* Under qemu-user the reference would be the host's kernel (its range
   * checks, its byte order for WAKE_OP): tests/kernel_diff covers that. */
  const char *e = getenv("PFUTEX_TEST_EMULATOR");
  return e && *e ? "under an emulator the reference is the host's kernel" : NULL;
}

#else /* no SYS_futex: nothing to compare with */

const char *
fz_unsupported(void)
{
  return "differential fuzzing needs Linux futex(2)";
}

FZ_NO_TARGET

#endif
