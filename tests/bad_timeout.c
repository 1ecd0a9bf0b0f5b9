/* bad_timeout: a timeout pointer the process cannot read gives -1/EFAULT on
 * every backend (native included), never a signal, and the timeout is
 * checked in the kernel's order.
 *
 * Bad pointers: the start of a PROT_NONE page, of an unmapped page, the
 * first page ((void *)8), and a struct timespec that straddles a page
 * boundary with tv_nsec on a PROT_NONE page or on an unmapped page (its
 * first half readable).  Ops: FUTEX_WAIT (relative), FUTEX_WAIT_BITSET
 * (absolute, both clocks), private and shared, and pfutex_wait (deadline,
 * both clocks, private and shared): each must be -1/EFAULT, and equal to
 * the kernel's own answer for the same arguments (syscall(SYS_futex) for
 * pfutex(); futex_wait(2), syscall 455, for pfutex_wait where the kernel
 * has it, through pft_sys_futex_wait: on 32-bit time_t a readable timeout
 * is handed to it as the struct __kernel_timespec it reads).
 *
 * Order: a bad timeout together with another error (zero bitset, misaligned
 * or NULL uaddr, mismatched value, FUTEX_CLOCK_REALTIME on FUTEX_WAIT; for
 * pfutex_wait also a bad clock and unknown flags, which futex_wait(2)
 * checks BEFORE the timeout): pfutex must give exactly the kernel's answer.
 * The PI ops (not implemented: ENOSYS) must not fault either.  Controls: a
 * readable zero timeout on a read-only page, and one straddling two
 * readable pages, time out like the kernel.
 *
 * Every pfutex call runs in a forked child, so a signal death is reported
 * as "not ok" with its signal and every case is reported (under
 * ThreadSanitizer, which cannot fork a threaded process, in the process
 * itself: a fault then kills the test).  The kernel's reference calls run
 * in the test process (a raw system call never faults). */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork() (each bad pointer is tried in a child) and the raw futex(2) call to compare with");
  return 0;
}
#else
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "pft.h"

#if defined(__linux__)
# include <sys/mman.h>
# include <sys/syscall.h>
# include <sys/wait.h>
#endif

#if defined(__linux__) && defined(SYS_futex)

enum { F_WAIT = 0, F_LOCK_PI = 6, F_WAIT_BITSET = 9, F_WAIT_REQUEUE_PI = 11, F_LOCK_PI2 = 13 };
#define PRIV 128
#define RT 256

/* ---- Running one call in a child ---------------------------------------- */

struct outcome {
  int died;        /* 0: returned; else the signal that killed the child, or -1:
                      the child exited without a result (a sanitizer report?) */
  int status;      /* exit status when died == -1 */
  long ret;
  int err;
};

typedef long (*call_fn)(const void *arg);

static unsigned int child_secs = 4;

static struct outcome
run_child(call_fn fn, const void *arg)
{
  struct outcome o;
  memset(&o, 0, sizeof o);
#ifdef PFT_TSAN
  errno = 0;
  o.ret = fn(arg);
  o.err = errno;
  return o;
#else
  {
    int fds[2], status;
    pid_t pid;
    struct outcome got;
    if (pipe(fds) != 0)
      sysbail("pipe");
    fflush(stdout);
    pft_settle_threads();
    pid = fork();
    if (pid < 0)
      sysbail("fork");
    if (pid == 0) {
      close(fds[0]);
      alarm(child_secs);     /* a hang becomes a death by SIGALRM */
      errno = 0;
      got.died = 0;
      got.status = 0;
      got.ret = fn(arg);
      got.err = errno;
      if (write(fds[1], &got, sizeof got) != (ssize_t)sizeof got)
        _exit(3);
      _exit(0);
    }
    close(fds[1]);
    if (read(fds[0], &got, sizeof got) == (ssize_t)sizeof got) {
      o = got;
    } else {
      o.died = -1;
    }
    close(fds[0]);
    while (waitpid(pid, &status, 0) < 0)
      if (errno != EINTR)
        sysbail("waitpid");
    if (WIFSIGNALED(status)) {
      o.died = WTERMSIG(status);
    } else if (o.died == -1) {
      o.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    return o;
  }
#endif
}

static void
describe(char *buf, size_t n, long ret, int err)
{
  if (ret == -1)
    snprintf(buf, n, "-1/%s", pft_errname(err));
  else
    snprintf(buf, n, "%ld", ret);
}

/* Print why a child gave no answer; 1 when it did answer. */
static int
answered(const struct outcome *o)
{
  if (o->died > 0) {
    diag("    the call died of signal %d (%s)", o->died, strsignal(o->died));
    return 0;
  }
  if (o->died < 0) {
    diag("    the child exited with status %d without a result", o->status);
    return 0;
  }
  return 1;
}

/* ---- The cases -------------------------------------------------------------- */

static uint32_t word;            /* holds 0 */
static uint32_t words[2];        /* (char *)words + 1: a misaligned address */

enum kind { K_FUTEX, K_WAIT2 };

struct tcase {
  enum kind kind;
  const char *name;
  uint32_t *uaddr;
  int op;             /* K_FUTEX: the futex(2) op */
  uint32_t val;
  uint32_t mask;      /* K_FUTEX: val3; K_WAIT2: mask */
  unsigned int flags; /* K_WAIT2: pfutex_wait's flags */
  int clock;          /* K_WAIT2 */
  const struct timespec *ts;
};

static long
call_pfutex(const void *arg)
{
  const struct tcase *c = arg;
  if (c->kind == K_FUTEX)
    return pfutex(c->uaddr, c->op, c->val, c->ts, (c->op & 127) == F_WAIT_REQUEUE_PI ? &words[1] : NULL,
                  c->mask);
  return pfutex_wait(c->uaddr, c->val, c->mask, c->flags, c->ts, c->clock);
}

/* The kernel's answer: 1 and *ret and *err, or 0 when it has no such call
 * (futex_wait(2) before Linux 6.7, or refused by the test's seccomp filter). */
static int
call_kernel(const struct tcase *c, long *ret, int *err)
{
  errno = 0;
  if (c->kind == K_FUTEX) {
    *ret = syscall(SYS_futex, c->uaddr, c->op, c->val, c->ts,
                   (c->op & 127) == F_WAIT_REQUEUE_PI ? &words[1] : NULL, c->mask);
  } else {
    /* other flag bits are passed on (both answer EINVAL); the clocks are
     * Linux's; an unreadable ts reaches the kernel as it is */
    *ret = pft_sys_futex_wait(c->uaddr, c->val, c->mask, c->flags, c->ts, c->clock);
  }
  *err = errno;
  return !(c->kind == K_WAIT2 && *ret == -1 && *err == ENOSYS);
}

/* must_efault: the contract's answer regardless of the kernel's; the kernel
 * reference is checked too when it exists.  Otherwise: equal to the kernel's
 * answer (skipped with the reason when the kernel has no such call). */
static void
check_case(const struct tcase *c, int must, long must_ret, int must_err)
{
  struct outcome o;
  long kret = 0;
  int kerr = 0, have_k;
  char got[64], kern[64];

  have_k = call_kernel(c, &kret, &kerr);
  if (!must && !have_k) {
    skip("%s: futex_wait(2) not available here (ENOSYS: kernel < 6.7 or refused by seccomp), no reference", c->name);
    return;
  }
  o = run_child(call_pfutex, c);
  describe(kern, sizeof kern, kret, kerr);
  if (!o.died)
    describe(got, sizeof got, o.ret, o.err);
  else
    snprintf(got, sizeof got, "no answer");
  if (must) {
    char want[64];
    int good;
    describe(want, sizeof want, must_ret, must_err);
    good = !o.died && o.ret == must_ret && (must_ret != -1 || o.err == must_err);
    if (have_k)
      good = good && kret == must_ret && (must_ret != -1 || kerr == must_err);
    if (!ok(good, "%s: %s%s", c->name, want, have_k ? " (as the kernel)" : " (no kernel reference)")) {
      answered(&o);
      diag("    pfutex: %s; kernel: %s", got, have_k ? kern : "n/a");
    }
  } else {
    int good = !o.died && o.ret == kret && (kret != -1 || o.err == kerr);
    if (!ok(good, "%s: as the kernel (%s)", c->name, kern)) {
      answered(&o);
      diag("    pfutex: %s; kernel: %s", got, kern);
    }
  }
}

/* The PI ops are not implemented (ENOSYS); the kernel's answer with a bad
 * timeout is EFAULT.  Either is fine; a fault is not. */
static void
check_pi(const struct tcase *c)
{
  struct outcome o = run_child(call_pfutex, c);
  long kret;
  int kerr;
  char got[64], kern[64];
  call_kernel(c, &kret, &kerr);
  describe(kern, sizeof kern, kret, kerr);
  if (!o.died)
    describe(got, sizeof got, o.ret, o.err);
  else
    snprintf(got, sizeof got, "no answer");
  if (!ok(!o.died && o.ret == -1 && (o.err == EFAULT || o.err == ENOSYS),
          "%s: no signal, -1/EFAULT (the kernel's) or -1/ENOSYS (PI not implemented)", c->name)) {
    answered(&o);
    diag("    pfutex: %s; kernel: %s", got, kern);
  } else if (o.err != kerr) {
    diag("    pfutex: %s; kernel: %s", got, kern);
  }
}

/* Does anything live at p now?  (Paranoia: the unmapped pages must stay so.) */
static int
mapped(const void *p, long pg)
{
  unsigned char v;
  return mincore((void *)((uintptr_t)p & ~(uintptr_t)(pg - 1)), (size_t)pg, &v) == 0;
}

int
main(void)
{
  long pg = sysconf(_SC_PAGESIZE);
  const size_t nsoff = offsetof(struct timespec, tv_nsec);
  char *m, *none_pg, *unmap_pg, *ro_pg;
  const char *scale = getenv("PFUTEX_TEST_TIMEOUT_SCALE");
  struct bad { const char *name; const struct timespec *ts; } bad[5];
  uint32_t *mis = (uint32_t *)(void *)((char *)words + 1);
  size_t i, j;

  pft_watchdog(60);
  if (scale && atoi(scale) > 0)
    child_secs *= (unsigned int)atoi(scale);

  /* Warm the library up first (backend selection, table, this thread's
   * record), so nothing it maps later can land in the unmapped page. */
  {
    struct timespec past = { 0, 0 };
    pfutex_wake(&word, ~0u, 1, PFUTEX_PRIVATE);
    pfutex_wait(&word, 0, ~0u, PFUTEX_PRIVATE, &past, PFUTEX_CLOCK_MONOTONIC);
  }

  /* [0] rw [1] PROT_NONE [2] rw [3] unmapped [4] rw [5] read-only; all zeros */
  m = mmap(NULL, (size_t)pg * 6, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED)
    sysbail("mmap");
  none_pg = m + pg;
  unmap_pg = m + 3 * pg;
  ro_pg = m + 5 * pg;
  if (mprotect(none_pg, (size_t)pg, PROT_NONE) != 0 || mprotect(ro_pg, (size_t)pg, PROT_READ) != 0
      || munmap(unmap_pg, (size_t)pg) != 0)
    sysbail("mprotect/munmap");

  bad[0].name = "timeout on a PROT_NONE page";
  bad[0].ts = (const struct timespec *)(void *)none_pg;
  bad[1].name = "timeout on an unmapped page";
  bad[1].ts = (const struct timespec *)(void *)unmap_pg;
  bad[2].name = "timeout at (void *)8";
  bad[2].ts = (const struct timespec *)(uintptr_t)8;
  /* tv_sec on the readable page before, tv_nsec on the unreadable one */
  bad[3].name = "timeout straddling into a PROT_NONE page";
  bad[3].ts = (const struct timespec *)(void *)(none_pg - nsoff);
  bad[4].name = "timeout straddling into an unmapped page";
  bad[4].ts = (const struct timespec *)(void *)(unmap_pg - nsoff);

  plan_lazy();
  diag("backend %s", pfutex_backend() ? pfutex_backend() : "(none)");

  /* 1. Every timed op, every bad pointer: -1/EFAULT, as the kernel. */
  {
    static const struct { enum kind kind; const char *name; int op; unsigned flags; int clock; } ops[] = {
      { K_FUTEX, "FUTEX_WAIT_PRIVATE", F_WAIT | PRIV, 0, 0 },
      { K_FUTEX, "FUTEX_WAIT (shared)", F_WAIT, 0, 0 },
      { K_FUTEX, "FUTEX_WAIT_BITSET_PRIVATE", F_WAIT_BITSET | PRIV, 0, 0 },
      { K_FUTEX, "FUTEX_WAIT_BITSET_PRIVATE|CLOCK_REALTIME", F_WAIT_BITSET | PRIV | RT, 0, 0 },
      { K_FUTEX, "FUTEX_WAIT_BITSET (shared)", F_WAIT_BITSET, 0, 0 },
      { K_FUTEX, "FUTEX_WAIT_BITSET|CLOCK_REALTIME (shared)", F_WAIT_BITSET | RT, 0, 0 },
      { K_WAIT2, "pfutex_wait private monotonic", 0, PFUTEX_PRIVATE, PFUTEX_CLOCK_MONOTONIC },
      { K_WAIT2, "pfutex_wait private realtime", 0, PFUTEX_PRIVATE, PFUTEX_CLOCK_REALTIME },
      { K_WAIT2, "pfutex_wait shared monotonic", 0, PFUTEX_SHARED, PFUTEX_CLOCK_MONOTONIC },
      { K_WAIT2, "pfutex_wait shared realtime", 0, PFUTEX_SHARED, PFUTEX_CLOCK_REALTIME },
    };
    for (j = 0; j < sizeof bad / sizeof bad[0]; j++) {
      for (i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        char name[200];
        struct tcase c;
        memset(&c, 0, sizeof c);
        snprintf(name, sizeof name, "%s, %s", ops[i].name, bad[j].name);
        c.kind = ops[i].kind;
        c.name = name;
        c.uaddr = &word;
        c.op = ops[i].op;
        c.val = 0;
        c.mask = ~0u;
        c.flags = ops[i].flags;
        c.clock = ops[i].clock;
        c.ts = bad[j].ts;
        check_case(&c, 1, -1, EFAULT);
      }
    }
  }

  /* 2. The order of the checks: a bad timeout with another error. */
  {
    const struct timespec *b = bad[0].ts;
    const struct tcase order[] = {
      { K_FUTEX, "FUTEX_WAIT_BITSET_PRIVATE, bitset 0 and a bad timeout", &word, F_WAIT_BITSET | PRIV, 0, 0, 0, 0, b },
      { K_FUTEX, "FUTEX_WAIT_BITSET_PRIVATE|CLOCK_REALTIME, bitset 0 and a bad timeout", &word, F_WAIT_BITSET | PRIV | RT, 0, 0, 0, 0, b },
      { K_FUTEX, "FUTEX_WAIT_BITSET (shared), bitset 0 and a bad timeout", &word, F_WAIT_BITSET, 0, 0, 0, 0, b },
      { K_FUTEX, "FUTEX_WAIT_PRIVATE, misaligned uaddr and a bad timeout", mis, F_WAIT | PRIV, 0, ~0u, 0, 0, b },
      { K_FUTEX, "FUTEX_WAIT (shared), misaligned uaddr and a bad timeout", mis, F_WAIT, 0, ~0u, 0, 0, b },
      { K_FUTEX, "FUTEX_WAIT_BITSET_PRIVATE, misaligned uaddr and a bad timeout", mis, F_WAIT_BITSET | PRIV, 0, ~0u, 0, 0, b },
      { K_FUTEX, "FUTEX_WAIT_PRIVATE, mismatched value and a bad timeout", &word, F_WAIT | PRIV, 5, ~0u, 0, 0, b },
      { K_FUTEX, "FUTEX_WAIT (shared), mismatched value and a bad timeout", &word, F_WAIT, 5, ~0u, 0, 0, b },
      { K_FUTEX, "FUTEX_WAIT_BITSET_PRIVATE, mismatched value and a bad timeout", &word, F_WAIT_BITSET | PRIV, 5, ~0u, 0, 0, b },
      { K_FUTEX, "FUTEX_WAIT_BITSET|CLOCK_REALTIME (shared), mismatched value and a bad timeout", &word, F_WAIT_BITSET | RT, 5, ~0u, 0, 0, b },
      { K_FUTEX, "FUTEX_WAIT_PRIVATE, NULL uaddr and a bad timeout", NULL, F_WAIT | PRIV, 0, ~0u, 0, 0, b },
      { K_FUTEX, "FUTEX_WAIT (shared), NULL uaddr and a bad timeout", NULL, F_WAIT, 0, ~0u, 0, 0, b },
      { K_FUTEX, "FUTEX_WAIT_PRIVATE|CLOCK_REALTIME (ENOSYS op) and a bad timeout", &word, F_WAIT | PRIV | RT, 0, ~0u, 0, 0, b },
      { K_FUTEX, "FUTEX_WAIT_PRIVATE, misaligned uaddr, mismatch, unmapped timeout", mis, F_WAIT | PRIV, 5, ~0u, 0, 0, bad[1].ts },
      { K_WAIT2, "pfutex_wait, mask 0 and a bad deadline", &word, 0, 0, 0, PFUTEX_PRIVATE, PFUTEX_CLOCK_MONOTONIC, b },
      { K_WAIT2, "pfutex_wait shared, mask 0 and a bad deadline", &word, 0, 0, 0, PFUTEX_SHARED, PFUTEX_CLOCK_REALTIME, b },
      { K_WAIT2, "pfutex_wait, misaligned uaddr and a bad deadline", mis, 0, 0, ~0u, PFUTEX_PRIVATE, PFUTEX_CLOCK_MONOTONIC, b },
      { K_WAIT2, "pfutex_wait, mismatched value and a bad deadline", &word, 0, 5, ~0u, PFUTEX_PRIVATE, PFUTEX_CLOCK_MONOTONIC, b },
      { K_WAIT2, "pfutex_wait shared, mismatched value and a bad deadline", &word, 0, 5, ~0u, PFUTEX_SHARED, PFUTEX_CLOCK_MONOTONIC, b },
      { K_WAIT2, "pfutex_wait, NULL uaddr and a bad deadline", NULL, 0, 0, ~0u, PFUTEX_PRIVATE, PFUTEX_CLOCK_MONOTONIC, b },
      { K_WAIT2, "pfutex_wait shared, NULL uaddr and a bad deadline", NULL, 0, 0, ~0u, PFUTEX_SHARED, PFUTEX_CLOCK_MONOTONIC, b },
      { K_WAIT2, "pfutex_wait, bad clock (7) and a bad deadline", &word, 0, 0, ~0u, PFUTEX_PRIVATE, 7, b },
      { K_WAIT2, "pfutex_wait, unknown flag (1024) and a bad deadline", &word, 0, 0, ~0u, PFUTEX_PRIVATE | 1024u, PFUTEX_CLOCK_MONOTONIC, b },
    };
    for (i = 0; i < sizeof order / sizeof order[0]; i++)
      check_case(&order[i], 0, 0, 0);
  }

  /* 3. The PI ops take a timeout too: no fault. */
  {
    const struct timespec *b = bad[0].ts;
    const struct tcase pi[] = {
      { K_FUTEX, "FUTEX_LOCK_PI_PRIVATE, bad timeout", &words[0], F_LOCK_PI | PRIV, 0, 0, 0, 0, b },
      { K_FUTEX, "FUTEX_LOCK_PI2_PRIVATE, bad timeout", &words[0], F_LOCK_PI2 | PRIV, 0, 0, 0, 0, b },
      { K_FUTEX, "FUTEX_WAIT_REQUEUE_PI_PRIVATE, bad timeout", &words[0], F_WAIT_REQUEUE_PI | PRIV, 0, ~0u, 0, 0, b },
    };
    for (i = 0; i < sizeof pi / sizeof pi[0]; i++)
      check_pi(&pi[i]);
  }

  /* 4. Controls: a readable zero timeout on a read-only page, and one
   * straddling two readable pages ([4] | [5]), time out like the kernel. */
  {
    static const struct { enum kind kind; const char *name; int op; unsigned flags; int clock; } ops[] = {
      { K_FUTEX, "FUTEX_WAIT_PRIVATE", F_WAIT | PRIV, 0, 0 },
      { K_FUTEX, "FUTEX_WAIT_BITSET_PRIVATE", F_WAIT_BITSET | PRIV, 0, 0 },
      { K_FUTEX, "FUTEX_WAIT_BITSET|CLOCK_REALTIME (shared)", F_WAIT_BITSET | RT, 0, 0 },
      { K_WAIT2, "pfutex_wait private monotonic", 0, PFUTEX_PRIVATE, PFUTEX_CLOCK_MONOTONIC },
      { K_WAIT2, "pfutex_wait shared realtime", 0, PFUTEX_SHARED, PFUTEX_CLOCK_REALTIME },
    };
    const struct { const char *name; const struct timespec *ts; } good[] = {
      { "zero timeout on a read-only page", (const struct timespec *)(void *)ro_pg },
      { "zero timeout straddling two readable pages", (const struct timespec *)(void *)(ro_pg - nsoff) },
    };
    for (j = 0; j < sizeof good / sizeof good[0]; j++)
      for (i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        char name[200];
        struct tcase c;
        memset(&c, 0, sizeof c);
        snprintf(name, sizeof name, "%s, %s", ops[i].name, good[j].name);
        c.kind = ops[i].kind;
        c.name = name;
        c.uaddr = &word;
        c.op = ops[i].op;
        c.mask = ~0u;
        c.flags = ops[i].flags;
        c.clock = ops[i].clock;
        c.ts = good[j].ts;
        check_case(&c, 1, -1, ETIMEDOUT);
      }
  }

  ok(!mapped(unmap_pg, pg), "the unmapped page stayed unmapped (the unmapped cases were meaningful)");
  return 0;
}

#else

int
main(void)
{
  skip_all("needs Linux's futex(2) as the reference");
}

#endif
#endif /* !_WIN32 */
