/* readonly: futex ops on read-only memory behave as Linux's, never SIGSEGV.
 *
 * (a) WAKE_OP whose uaddr2 cannot be written (a PROT_READ private anonymous
 *     page, untouched or populated before the mprotect; a read-only
 *     MAP_SHARED anonymous page; a read-only file mapping; a PROT_NONE
 *     page): pfutex_wake_op with nr_wake2 0 and 1 (and nr_wake 0), private
 *     and shared, and pfutex(FUTEX_WAKE_OP): -1/EFAULT, as the kernel's
 *     futex(2).  After each, in the same process, a waiter on uaddr (and,
 *     when readable, one on uaddr2) is woken by one wake: no bucket lock was
 *     left held.  An invalid op (ENOSYS before any store) and an invalid
 *     comparison (checked after the store, so EFAULT) on a read-only uaddr2
 *     give the kernel's answer.
 * (b) A shared (no PRIVATE flag) wait on a read-only private anonymous page
 *     whose value matches: -1/EFAULT (the kernel cannot make a shared key
 *     for it), through FUTEX_WAIT, FUTEX_WAIT_BITSET and pfutex_wait, each
 *     with a 50 ms timeout so a wrong "success" path cannot hang.  The same
 *     wait on a read-only MAP_SHARED anonymous page and on read-only file
 *     mappings (shared and private) is accepted by the kernel: ETIMEDOUT,
 *     and pfutex must agree.  Private waits on read-only memory are
 *     accepted: ETIMEDOUT / EAGAIN as the kernel.  A shared wait whose
 *     value does not match, timed or not, through every call: EFAULT on
 *     the private anonymous page (the kernel makes the key first), EAGAIN
 *     on the shared and file mappings, as the kernel.
 * (c) A shared FUTEX_WAKE / pfutex_wake on the read-only private anonymous
 *     page, nobody waiting: EFAULT, the kernel's answer, on every backend
 *     (the emulation asks the OS for the mapping of every shared word
 *     outside regions).  On the shared and file mappings, and privately, 0
 *     everywhere.
 *
 * (d) Words no load can reach (an unmapped page, a PROT_NONE page, shared
 *     and private file pages past the file's end): waits, wakes, requeues,
 *     WAKE_OP and the PI ops, private and shared, each on the bad word as
 *     uaddr (and as uaddr2 where the op reads it): the kernel's answer
 *     (EFAULT where it reads the word or makes a shared key; a private
 *     wake or requeue touches no memory and succeeds), never a signal.
 *
 * Each call runs in a forked child (a signal death is "not ok" with its
 * signal; a hang dies of SIGALRM), except under ThreadSanitizer, which
 * cannot fork a threaded process: there each call runs in the test process.
 * The kernel's reference calls run in the test process. */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork() and mprotect'ed private pages (POSIX memory faults)");
  return 0;
}
#else
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include <dirent.h>
#include <errno.h>
#include <signal.h>
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

#ifndef SYS_futex_wake
# define SYS_futex_wake 454
#endif
#define FUTEX2_SIZE_U32 0x02

enum { F_WAIT = 0, F_WAKE = 1, F_WAKE_OP = 5, F_WAIT_BITSET = 9, F_WAKE_BITSET = 10 };
#define PRIV 128
#define TMO_NS 50000000LL     /* every timed wait: 50 ms */

/* ---- Running one call in a child ---------------------------------------- */

#define NEXTRA 4
struct outcome {
  int died;        /* the call: 0: returned; a signal number; -1: exited
                      without a result */
  int status;
  long ret;
  int err;
  int after_died;  /* the same for the "still works" checks of (a) */
  int after_status;
  int stage;       /* how far the child got: S_* */
  long extra[NEXTRA];   /* wake count and waiter result on uaddr, then uaddr2 */
};
enum { S_NONE, S_CALL, S_WAKE1, S_JOIN1, S_WAKE2, S_JOIN2, S_DONE };
static const char *const stage_after[] = {
  "in the call", "starting a waiter on uaddr or waking it", "joining the waiter on uaddr",
  "starting a waiter on uaddr2 or waking it", "joining the waiter on uaddr2", "at exit", "?"
};

struct rcase;
typedef void (*case_fn)(const struct rcase *c, struct outcome *o);

static unsigned int child_secs = 4;
static int report_fd = -1;     /* in a child: where the call's result goes */

/* The child reports after each stage, so a hang or a death is placed: in
 * the call itself, or in the "still works" checks that follow. */
static void
report(struct outcome *o, int stage)
{
  o->stage = stage;
  if (report_fd >= 0 && write(report_fd, o, sizeof *o) != (ssize_t)sizeof *o)
    _exit(3);
}

static struct outcome
run_child(case_fn fn, const struct rcase *c)
{
  struct outcome o;
  memset(&o, 0, sizeof o);
#ifdef PFT_TSAN
  fn(c, &o);
  return o;
#else
  {
    int fds[2], status;
    pid_t pid;
    if (pipe(fds) != 0)
      sysbail("pipe");
    fflush(stdout);
    pft_settle_threads();
    pid = fork();
    if (pid < 0)
      sysbail("fork");
    if (pid == 0) {
      close(fds[0]);
      report_fd = fds[1];
      alarm(child_secs);     /* a hang becomes a death by SIGALRM */
      fn(c, &o);             /* reports after each stage */
      report(&o, S_DONE);
      _exit(0);
    }
    close(fds[1]);
    {
      struct outcome rec;
      int any = 0;
      while (read(fds[0], &rec, sizeof rec) == (ssize_t)sizeof rec) {
        o = rec;
        any = 1;
      }
      close(fds[0]);
      while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
          sysbail("waitpid");
      if (!any || o.stage != S_DONE) {
        int how = WIFSIGNALED(status) ? WTERMSIG(status) : -1;
        int st = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        if (!any) {
          o.died = how;
          o.status = st;
        }
        o.after_died = how;
        o.after_status = st;
      }
    }
    return o;
  }
#endif
}

static void
describe(char *buf, size_t n, const struct outcome *o)
{
  if (o->died > 0)
    snprintf(buf, n, "died of signal %d (%s)", o->died, strsignal(o->died));
  else if (o->died < 0)
    snprintf(buf, n, "exited with status %d without a result", o->status);
  else if (o->ret == -1)
    snprintf(buf, n, "-1/%s", pft_errname(o->err));
  else
    snprintf(buf, n, "%ld", o->ret);
}

static int
same(const struct outcome *a, const struct outcome *b)
{
  return !a->died && !b->died && a->ret == b->ret && (a->ret != -1 || a->err == b->err);
}

static int
is_result(const struct outcome *o, long ret, int err)
{
  return !o->died && o->ret == ret && (ret != -1 || o->err == err);
}

/* ---- The cases -------------------------------------------------------------- */

enum kind { K_FUTEX, K_WAIT, K_WAKE, K_WAKEOP };
enum tmo { T_NONE, T_REL, T_ABS_MONO };

struct rcase {
  enum kind kind;
  const char *name;
  uint32_t *uaddr;
  int op;              /* K_FUTEX */
  uint32_t val;        /* wait: expected value; K_FUTEX WAKE*: count */
  enum tmo tmo;        /* waits */
  uint32_t *uaddr2;    /* WAKE_OP */
  uint32_t val3;       /* K_FUTEX: bitset or the WAKE_OP encoding; K_WAKEOP: the op */
  int nr, nr2;         /* K_WAKEOP / K_FUTEX WAKE_OP: nr_wake, nr_wake2 (val2) */
  unsigned int flags;  /* clean calls: PFUTEX_PRIVATE or 0 */
  int after;           /* (a): 1: check the buckets of uaddr afterwards, 2: and of uaddr2 */
};

static uint32_t w_main;          /* uaddr of the WAKE_OP cases (holds 0) */
static uint32_t w_kernel;        /* the kernel's own copy, nobody waits on it */

static const uint32_t OP_ADD1 = PFUTEX_OP(PFUTEX_OP_ADD, 1, PFUTEX_OP_CMP_EQ, 0);

static void
make_timeout(enum tmo t, struct timespec *ts)
{
  if (t == T_REL) {
    ts->tv_sec = 0;
    ts->tv_nsec = (long)TMO_NS;
  } else {
    clock_gettime(CLOCK_MONOTONIC, ts);
    pft_timespec_add_ns(ts, TMO_NS);
  }
}

/* A waiter on uaddr (private when op_flags is PRIV) is woken by one wake:
 * o->extra[i] gets the wake's count (1), o->extra[i + 1] the waiter's
 * result (0, or -errno). */
static void
wake_one_waiter(struct outcome *o, int i, uint32_t *uaddr, int op_flags)
{
  struct pft_waiter wt;
  memset(&wt, 0, sizeof wt);
  wt.uaddr = uaddr;
  wt.val = *(volatile uint32_t *)uaddr;
  wt.op_flags = op_flags;
  pft_waiter_start(&wt);
  o->extra[i] = pfutex(uaddr, F_WAKE | op_flags, 1, NULL, NULL, 0);
  report(o, i == 0 ? S_WAKE1 : S_WAKE2);
  pft_waiter_join(&wt);
  o->extra[i + 1] = wt.ret == -1 ? -wt.err : wt.ret;
  report(o, i == 0 ? S_JOIN1 : S_JOIN2);
}

static void
call_pfutex(const struct rcase *c, struct outcome *o)
{
  struct timespec ts;
  const struct timespec *tp = NULL;
  if (c->tmo != T_NONE) {
    make_timeout(c->tmo, &ts);
    tp = &ts;
  }
  errno = 0;
  switch (c->kind) {
  case K_FUTEX:
    if ((c->op & 127) == F_WAKE_OP)
      tp = (const struct timespec *)(uintptr_t)(unsigned)c->nr2;
    o->ret = pfutex(c->uaddr, c->op, (c->op & 127) == F_WAKE_OP ? (uint32_t)c->nr : c->val, tp,
                    c->uaddr2, c->val3);
    break;
  case K_WAIT:
    o->ret = pfutex_wait(c->uaddr, c->val, ~0u, c->flags, tp, PFUTEX_CLOCK_MONOTONIC);
    break;
  case K_WAKE:
    o->ret = pfutex_wake(c->uaddr, ~0u, 1, c->flags);
    break;
  case K_WAKEOP:
    o->ret = pfutex_wake_op(c->uaddr, c->uaddr2, c->nr, c->nr2, c->val3, c->flags);
    break;
  }
  o->err = errno;
  report(o, S_CALL);
  if (c->after) {
    int pf = c->kind == K_FUTEX ? (c->op & PRIV) : (int)(c->flags & PFUTEX_PRIVATE);
    wake_one_waiter(o, 0, c->uaddr, pf);
    if (c->after == 2)   /* a private wait on read-only memory is fine */
      wake_one_waiter(o, 2, c->uaddr2, PRIV);
  }
}

/* The kernel's answer (always 1).  The clean calls' reference is
 * futex_wait(2) / futex_wake(2), or, where the kernel has none (before 6.7,
 * or refused by the test's seccomp filter), the same call through futex(2):
 * WAIT_BITSET / WAKE_BITSET with a full mask. */
static int
call_kernel(const struct rcase *c, struct outcome *o)
{
  struct timespec ts;
  const struct timespec *tp = NULL;
  uint32_t *u1 = c->uaddr == &w_main ? &w_kernel : c->uaddr;
  memset(o, 0, sizeof *o);
  if (c->tmo != T_NONE) {
    make_timeout(c->tmo, &ts);
    tp = &ts;
  }
  errno = 0;
  switch (c->kind) {
  case K_FUTEX:
    if ((c->op & 127) == F_WAKE_OP)
      o->ret = syscall(SYS_futex, u1, c->op, c->nr, (uintptr_t)(unsigned)c->nr2, c->uaddr2, c->val3);
    else
      o->ret = syscall(SYS_futex, u1, c->op, c->val, tp, c->uaddr2, c->val3);
    break;
  case K_WAIT:
    o->ret = pft_sys_futex_wait(u1, c->val, ~0u, c->flags, tp, CLOCK_MONOTONIC);
    if (o->ret == -1 && errno == ENOSYS) {   /* the same wait through futex(2) */
      errno = 0;
      o->ret = syscall(SYS_futex, u1, F_WAIT_BITSET | (int)(c->flags & PFUTEX_PRIVATE), c->val, tp,
                       NULL, ~0u);
    }
    break;
  case K_WAKE:
    o->ret = syscall(SYS_futex_wake, u1, (unsigned long)~0u, 1, c->flags | FUTEX2_SIZE_U32);
    if (o->ret == -1 && errno == ENOSYS) {
      errno = 0;
      o->ret = syscall(SYS_futex, u1, F_WAKE_BITSET | (int)(c->flags & PFUTEX_PRIVATE), 1, NULL,
                       NULL, ~0u);
    }
    break;
  case K_WAKEOP:
    /* futex(2) has no nr_wake2 0 (its count 0 means 1): the fault comes
     * first either way */
    o->ret = syscall(SYS_futex, u1, F_WAKE_OP | (int)(c->flags & PFUTEX_PRIVATE), c->nr,
                     (uintptr_t)(unsigned)c->nr2, c->uaddr2, c->val3);
    break;
  }
  o->err = errno;
  return 1;
}

/* pfutex must give (must_ret, must_err); so must the kernel, when it has the
 * call (a check of the test's memory setup), unless `why` says why pfutex
 * differs from it. */
static void
check_must(const struct rcase *c, long must_ret, int must_err, const char *why)
{
  struct outcome k, o;
  char got[96], kern[96];
  int have_k;

  call_kernel(c, &k);
  have_k = !why;
  o = run_child(call_pfutex, c);
  describe(got, sizeof got, &o);
  describe(kern, sizeof kern, &k);
  if (!ok(is_result(&o, must_ret, must_err) && (!have_k || is_result(&k, must_ret, must_err)),
          "%s: %s%s%s", c->name, must_ret == -1 ? "-1/" : "0", must_ret == -1 ? pft_errname(must_err) : "",
          why ? why : " (as the kernel)"))
    diag("    pfutex: %s; kernel: %s", got, kern);
  if (c->after) {
    int good = !o.died && !o.after_died && o.extra[0] == 1 && o.extra[1] == 0;
    if (c->after == 2)
      good = good && o.extra[2] == 1 && o.extra[3] == 0;
    if (!ok(good, "%s: afterwards a waiter on uaddr%s is woken by one wake (no lock left held)",
            c->name, c->after == 2 ? " and one on uaddr2 each" : "")) {
      if (o.after_died > 0)
        diag("    the checks died of signal %d (%s)%s %s", o.after_died, strsignal(o.after_died),
             o.after_died == SIGALRM ? ": a hang" : "", stage_after[o.stage]);
      else if (o.after_died < 0)
        diag("    the checks exited with status %d without a result %s", o.after_status,
             stage_after[o.stage]);
      diag("    uaddr: wake %ld, waiter %ld; uaddr2: wake %ld, waiter %ld (want 1, 0)",
           o.extra[0], o.extra[1], o.extra[2], o.extra[3]);
    }
  }
}

/* pfutex must give the kernel's answer. */
/* The read-only MAP_PRIVATE file page (main): under qemu-user the
 * emulation's answer for it is no reference (below). */
static uint32_t *ro_fpriv_page;

static void
check_kernel(const struct rcase *c)
{
  struct outcome k, o;
  char got[96], kern[96];
  /* A shared op on a read-only private file page is keyed by what the page
   * is (the object's own, or a copy: /proc/self/pagemap, ports/linux/
   * objid.c).  Under qemu-user the pages are qemu's: its pagemap
   * describes host pages, and it may back a guest's private file mapping
   * with a copy of its own, so the emulation's answer there is no
   * reference (on x86_64 and i386 the same cases run natively). */
  if (c->uaddr == ro_fpriv_page && pft_emulator() && pft_backend_is_emu()) {
    skip("%s: under %s this process's pages are the emulator's", c->name, pft_emulator());
    return;
  }
  call_kernel(c, &k);
  o = run_child(call_pfutex, c);
  describe(got, sizeof got, &o);
  describe(kern, sizeof kern, &k);
  if (!ok(same(&o, &k), "%s: as the kernel (%s)", c->name, kern))
    diag("    pfutex: %s", got);
}

static char *
map_page(long pg, int prot, int flags, int fd)
{
  char *p = mmap(NULL, (size_t)pg, prot, flags, fd, 0);
  if (p == MAP_FAILED)
    sysbail("mmap");
  return p;
}

int
main(void)
{
  long pg = sysconf(_SC_PAGESIZE);
  const char *scale = getenv("PFUTEX_TEST_TIMEOUT_SCALE");
  uint32_t *ro_anon, *ro_pop, *none, *ro_shanon, *ro_file, *ro_fpriv;
  char path[] = "/tmp/pfutex-readonly-XXXXXX";
  int fd;
  size_t i;

  pft_watchdog(60);
  if (scale && atoi(scale) > 0)
    child_secs *= (unsigned int)atoi(scale);

  ro_anon = (uint32_t *)(void *)map_page(pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1);
  ro_pop = (uint32_t *)(void *)map_page(pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
  *(volatile uint32_t *)ro_pop = 0;                  /* populated, then read-only */
  none = (uint32_t *)(void *)map_page(pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
  ro_shanon = (uint32_t *)(void *)map_page(pg, PROT_READ, MAP_SHARED | MAP_ANONYMOUS, -1);
  if (mprotect(ro_pop, (size_t)pg, PROT_READ) != 0)
    sysbail("mprotect");
  if ((fd = mkstemp(path)) < 0)
    sysbail("mkstemp");
  unlink(path);
  if (ftruncate(fd, pg) != 0)
    sysbail("ftruncate");
  ro_file = (uint32_t *)(void *)map_page(pg, PROT_READ, MAP_SHARED, fd);
  ro_fpriv = (uint32_t *)(void *)map_page(pg, PROT_READ, MAP_PRIVATE, fd);
  ro_fpriv_page = ro_fpriv;
  close(fd);

  plan_lazy();
  diag("backend %s", pfutex_backend() ? pfutex_backend() : "(none)");

  /* (a) WAKE_OP with an unwritable uaddr2: EFAULT, and nothing left held. */
  {
    const struct rcase a[] = {
      { K_WAKEOP, "pfutex_wake_op private, nr_wake2 0, uaddr2 read-only private anonymous", &w_main, 0, 0, T_NONE, ro_anon, OP_ADD1, 1, 0, PFUTEX_PRIVATE, 2 },
      { K_WAKEOP, "pfutex_wake_op private, nr_wake2 1, uaddr2 read-only private anonymous", &w_main, 0, 0, T_NONE, ro_anon, OP_ADD1, 1, 1, PFUTEX_PRIVATE, 2 },
      { K_WAKEOP, "pfutex_wake_op private, nr_wake 0, nr_wake2 0, uaddr2 read-only private anonymous", &w_main, 0, 0, T_NONE, ro_anon, OP_ADD1, 0, 0, PFUTEX_PRIVATE, 2 },
      { K_WAKEOP, "pfutex_wake_op private, nr_wake2 0, uaddr2 populated then read-only", &w_main, 0, 0, T_NONE, ro_pop, OP_ADD1, 1, 0, PFUTEX_PRIVATE, 2 },
      { K_WAKEOP, "pfutex_wake_op shared, nr_wake2 0, uaddr2 read-only private anonymous", &w_main, 0, 0, T_NONE, ro_anon, OP_ADD1, 1, 0, PFUTEX_SHARED, 1 },
      { K_WAKEOP, "pfutex_wake_op shared, nr_wake2 1, uaddr2 read-only private anonymous", &w_main, 0, 0, T_NONE, ro_anon, OP_ADD1, 1, 1, PFUTEX_SHARED, 1 },
      { K_WAKEOP, "pfutex_wake_op private, nr_wake2 0, uaddr2 read-only MAP_SHARED anonymous", &w_main, 0, 0, T_NONE, ro_shanon, OP_ADD1, 1, 0, PFUTEX_PRIVATE, 2 },
      { K_WAKEOP, "pfutex_wake_op private, nr_wake2 1, uaddr2 read-only file mapping", &w_main, 0, 0, T_NONE, ro_file, OP_ADD1, 1, 1, PFUTEX_PRIVATE, 2 },
      { K_WAKEOP, "pfutex_wake_op private, nr_wake2 0, uaddr2 PROT_NONE", &w_main, 0, 0, T_NONE, none, OP_ADD1, 1, 0, PFUTEX_PRIVATE, 1 },
      { K_WAKEOP, "pfutex_wake_op private, nr_wake2 1, uaddr2 PROT_NONE", &w_main, 0, 0, T_NONE, none, OP_ADD1, 1, 1, PFUTEX_PRIVATE, 1 },
      { K_FUTEX, "FUTEX_WAKE_OP_PRIVATE, val2 1, uaddr2 read-only private anonymous", &w_main, F_WAKE_OP | PRIV, 0, T_NONE, ro_anon, OP_ADD1, 1, 1, 0, 2 },
      { K_FUTEX, "FUTEX_WAKE_OP_PRIVATE, val2 0, uaddr2 read-only private anonymous", &w_main, F_WAKE_OP | PRIV, 0, T_NONE, ro_anon, OP_ADD1, 1, 0, 0, 2 },
      { K_FUTEX, "FUTEX_WAKE_OP (shared), val2 1, uaddr2 read-only private anonymous", &w_main, F_WAKE_OP, 0, T_NONE, ro_anon, OP_ADD1, 1, 1, 0, 1 },
      { K_FUTEX, "FUTEX_WAKE_OP_PRIVATE, uaddr2 populated then read-only", &w_main, F_WAKE_OP | PRIV, 0, T_NONE, ro_pop, OP_ADD1, 1, 1, 0, 2 },
      { K_FUTEX, "FUTEX_WAKE_OP_PRIVATE, uaddr2 read-only file mapping", &w_main, F_WAKE_OP | PRIV, 0, T_NONE, ro_file, OP_ADD1, 1, 1, 0, 2 },
      { K_FUTEX, "FUTEX_WAKE_OP_PRIVATE, uaddr2 PROT_NONE", &w_main, F_WAKE_OP | PRIV, 0, T_NONE, none, OP_ADD1, 1, 1, 0, 1 },
    };
    for (i = 0; i < sizeof a / sizeof a[0]; i++)
      check_must(&a[i], -1, EFAULT, NULL);
  }
  {
    /* The order: an invalid op is ENOSYS before any store; an invalid
     * comparison is looked at after the store, which faults first. */
    const struct rcase a2[] = {
      { K_FUTEX, "FUTEX_WAKE_OP_PRIVATE, invalid op (7), uaddr2 read-only", &w_main, F_WAKE_OP | PRIV, 0, T_NONE, ro_anon, PFUTEX_OP(7, 1, PFUTEX_OP_CMP_EQ, 0), 1, 1, 0, 0 },
      { K_FUTEX, "FUTEX_WAKE_OP_PRIVATE, invalid comparison (7), uaddr2 read-only", &w_main, F_WAKE_OP | PRIV, 0, T_NONE, ro_anon, PFUTEX_OP(PFUTEX_OP_ADD, 1, 7, 0), 1, 1, 0, 0 },
      { K_FUTEX, "FUTEX_WAKE_OP_PRIVATE, invalid op (7), uaddr2 PROT_NONE", &w_main, F_WAKE_OP | PRIV, 0, T_NONE, none, PFUTEX_OP(7, 1, PFUTEX_OP_CMP_EQ, 0), 1, 1, 0, 0 },
    };
    for (i = 0; i < sizeof a2 / sizeof a2[0]; i++)
      check_kernel(&a2[i]);
  }

  /* (b) waits on read-only memory (50 ms timeouts). */
  {
    const struct rcase b[] = {
      { K_FUTEX, "shared FUTEX_WAIT, read-only private anonymous page, value matches", ro_anon, F_WAIT, 0, T_REL, NULL, 0, 0, 0, 0, 0 },
      { K_FUTEX, "shared FUTEX_WAIT, populated then read-only private anonymous page, value matches", ro_pop, F_WAIT, 0, T_REL, NULL, 0, 0, 0, 0, 0 },
      { K_FUTEX, "shared FUTEX_WAIT_BITSET, read-only private anonymous page, value matches", ro_anon, F_WAIT_BITSET, 0, T_ABS_MONO, NULL, ~0u, 0, 0, 0, 0 },
      { K_WAIT, "pfutex_wait shared, read-only private anonymous page, value matches", ro_anon, 0, 0, T_ABS_MONO, NULL, 0, 0, 0, PFUTEX_SHARED, 0 },
    };
    for (i = 0; i < sizeof b / sizeof b[0]; i++)
      check_must(&b[i], -1, EFAULT, NULL);
  }
  {
    const struct rcase b2[] = {
      { K_FUTEX, "shared FUTEX_WAIT, read-only MAP_SHARED anonymous page, value matches", ro_shanon, F_WAIT, 0, T_REL, NULL, 0, 0, 0, 0, 0 },
      { K_FUTEX, "shared FUTEX_WAIT, read-only MAP_SHARED file mapping, value matches", ro_file, F_WAIT, 0, T_REL, NULL, 0, 0, 0, 0, 0 },
      { K_FUTEX, "shared FUTEX_WAIT, read-only MAP_PRIVATE file mapping, value matches", ro_fpriv, F_WAIT, 0, T_REL, NULL, 0, 0, 0, 0, 0 },
      { K_FUTEX, "shared FUTEX_WAIT, read-only MAP_SHARED anonymous page, mismatch", ro_shanon, F_WAIT, 1, T_REL, NULL, 0, 0, 0, 0, 0 },
      { K_FUTEX, "FUTEX_WAIT_PRIVATE, read-only private anonymous page, value matches", ro_anon, F_WAIT | PRIV, 0, T_REL, NULL, 0, 0, 0, 0, 0 },
      { K_FUTEX, "FUTEX_WAIT_PRIVATE, read-only private anonymous page, mismatch", ro_anon, F_WAIT | PRIV, 1, T_REL, NULL, 0, 0, 0, 0, 0 },
      { K_FUTEX, "FUTEX_WAIT_PRIVATE untimed, read-only private anonymous page, mismatch", ro_anon, F_WAIT | PRIV, 1, T_NONE, NULL, 0, 0, 0, 0, 0 },
      { K_WAIT, "pfutex_wait private, read-only private anonymous page, value matches", ro_anon, 0, 0, T_ABS_MONO, NULL, 0, 0, 0, PFUTEX_PRIVATE, 0 },
      { K_WAIT, "pfutex_wait shared, read-only MAP_SHARED file mapping, value matches", ro_file, 0, 0, T_ABS_MONO, NULL, 0, 0, 0, PFUTEX_SHARED, 0 },
    };
    for (i = 0; i < sizeof b2 / sizeof b2[0]; i++)
      check_kernel(&b2[i]);
  }
  {
    const struct rcase b3[] = {
      { K_FUTEX, "shared FUTEX_WAIT, read-only private anonymous page, mismatch", ro_anon, F_WAIT, 1, T_REL, NULL, 0, 0, 0, 0, 0 },
      { K_FUTEX, "shared FUTEX_WAIT untimed, read-only private anonymous page, mismatch", ro_anon, F_WAIT, 1, T_NONE, NULL, 0, 0, 0, 0, 0 },
      { K_FUTEX, "shared FUTEX_WAIT untimed, populated then read-only private anonymous page, mismatch", ro_pop, F_WAIT, 1, T_NONE, NULL, 0, 0, 0, 0, 0 },
      { K_FUTEX, "shared FUTEX_WAIT_BITSET, read-only private anonymous page, mismatch", ro_anon, F_WAIT_BITSET, 1, T_ABS_MONO, NULL, ~0u, 0, 0, 0, 0 },
      { K_FUTEX, "shared FUTEX_WAIT_BITSET untimed, read-only private anonymous page, mismatch", ro_anon, F_WAIT_BITSET, 1, T_NONE, NULL, ~0u, 0, 0, 0, 0 },
      { K_WAIT, "pfutex_wait shared untimed, read-only private anonymous page, mismatch", ro_anon, 0, 1, T_NONE, NULL, 0, 0, 0, PFUTEX_SHARED, 0 },
      { K_WAIT, "pfutex_wait shared untimed, populated then read-only private anonymous page, mismatch", ro_pop, 0, 1, T_NONE, NULL, 0, 0, 0, PFUTEX_SHARED, 0 },
      { K_FUTEX, "shared FUTEX_WAIT untimed, read-only MAP_SHARED anonymous page, mismatch", ro_shanon, F_WAIT, 1, T_NONE, NULL, 0, 0, 0, 0, 0 },
      { K_FUTEX, "shared FUTEX_WAIT untimed, read-only MAP_SHARED file mapping, mismatch", ro_file, F_WAIT, 1, T_NONE, NULL, 0, 0, 0, 0, 0 },
      { K_FUTEX, "shared FUTEX_WAIT untimed, read-only MAP_PRIVATE file mapping, mismatch", ro_fpriv, F_WAIT, 1, T_NONE, NULL, 0, 0, 0, 0, 0 },
      { K_WAIT, "pfutex_wait shared untimed, read-only MAP_PRIVATE file mapping, mismatch", ro_fpriv, 0, 1, T_NONE, NULL, 0, 0, 0, PFUTEX_SHARED, 0 },
    };
    for (i = 0; i < sizeof b3 / sizeof b3[0]; i++)
      check_kernel(&b3[i]);
  }

  /* (c) wakes with nobody waiting. */
  {
    const struct rcase c1[] = {
      { K_FUTEX, "shared FUTEX_WAKE, read-only private anonymous page, nobody waiting", ro_anon, F_WAKE, 1, T_NONE, NULL, 0, 0, 0, 0, 0 },
      { K_FUTEX, "shared FUTEX_WAKE, populated then read-only private anonymous page, nobody waiting", ro_pop, F_WAKE, 1, T_NONE, NULL, 0, 0, 0, 0, 0 },
      { K_WAKE, "pfutex_wake shared, read-only private anonymous page, nobody waiting", ro_anon, 0, 0, T_NONE, NULL, 0, 0, 0, PFUTEX_SHARED, 0 },
    };
    for (i = 0; i < sizeof c1 / sizeof c1[0]; i++)
      check_must(&c1[i], -1, EFAULT, NULL);
  }
  {
    const struct rcase c2[] = {
      { K_FUTEX, "shared FUTEX_WAKE, read-only MAP_SHARED anonymous page, nobody waiting", ro_shanon, F_WAKE, 1, T_NONE, NULL, 0, 0, 0, 0, 0 },
      { K_FUTEX, "shared FUTEX_WAKE, read-only MAP_SHARED file mapping, nobody waiting", ro_file, F_WAKE, 1, T_NONE, NULL, 0, 0, 0, 0, 0 },
      { K_FUTEX, "shared FUTEX_WAKE, read-only MAP_PRIVATE file mapping, nobody waiting", ro_fpriv, F_WAKE, 1, T_NONE, NULL, 0, 0, 0, 0, 0 },
      { K_FUTEX, "FUTEX_WAKE_PRIVATE, read-only private anonymous page, nobody waiting", ro_anon, F_WAKE | PRIV, 1, T_NONE, NULL, 0, 0, 0, 0, 0 },
      { K_WAKE, "pfutex_wake private, read-only private anonymous page, nobody waiting", ro_anon, 0, 0, T_NONE, NULL, 0, 0, 0, PFUTEX_PRIVATE, 0 },
    };
    for (i = 0; i < sizeof c2 / sizeof c2[0]; i++)
      check_kernel(&c2[i]);
  }
  {
    const struct rcase c3 = { K_FUTEX, "shared FUTEX_WAKE_BITSET, read-only private anonymous page, nobody waiting", ro_anon, F_WAKE_BITSET, 1, T_NONE, NULL, ~0u, 0, 0, 0, 0 };
    check_kernel(&c3);
  }

  /* (d) words no load can reach: the kernel answers EFAULT where it reads
   * the word or makes a shared key, and a private wake or requeue, which
   * touches no memory, succeeds; pfutex must agree, and never die of the
   * SIGSEGV or SIGBUS a load there raises. */
  {
    uint32_t *gone, *past, *past_priv, *bad[4];
    static const char *const badname[4] = { "an unmapped page", "a PROT_NONE page",
                                            "a shared file page past the file's end",
                                            "a private file page past the file's end" };
    static uint32_t ok_word;             /* a good second word */
    char path2[] = "/tmp/pfutex-readonly-XXXXXX";
    int fd2, b;
    if ((fd2 = mkstemp(path2)) < 0)
      sysbail("mkstemp");
    unlink(path2);
    if (ftruncate(fd2, pg) != 0)
      sysbail("ftruncate");
    past = (uint32_t *)(void *)map_page(pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd2);
    past_priv = (uint32_t *)(void *)map_page(pg, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd2);
    if (ftruncate(fd2, 0) != 0)          /* both pages now lie past the end */
      sysbail("ftruncate");
    close(fd2);
    /* the hole last: a later mmap of this process would fill it */
    gone = (uint32_t *)(void *)map_page(pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1);
    if (munmap(gone, (size_t)pg) != 0)
      sysbail("munmap");
    bad[0] = gone;
    bad[1] = none;
    bad[2] = past;
    bad[3] = past_priv;
    for (b = 0; b < 4; b++) {
      char nm[24][112];
      const struct rcase d[] = {
        { K_FUTEX, nm[0], bad[b], F_WAIT, 0, T_NONE, NULL, 0, 0, 0, 0, 0 },
        { K_FUTEX, nm[1], bad[b], F_WAIT | PRIV, 0, T_NONE, NULL, 0, 0, 0, 0, 0 },
        { K_FUTEX, nm[2], bad[b], F_WAIT | PRIV, 0, T_REL, NULL, 0, 0, 0, 0, 0 },
        { K_FUTEX, nm[3], bad[b], F_WAIT_BITSET, 0, T_ABS_MONO, NULL, ~0u, 0, 0, 0, 0 },
        { K_WAIT, nm[4], bad[b], 0, 0, T_NONE, NULL, 0, 0, 0, PFUTEX_PRIVATE, 0 },
        { K_WAIT, nm[5], bad[b], 0, 0, T_REL, NULL, 0, 0, 0, 0, 0 },
        { K_FUTEX, nm[6], bad[b], F_WAKE, 1, T_NONE, NULL, 0, 0, 0, 0, 0 },
        { K_FUTEX, nm[7], bad[b], F_WAKE | PRIV, 1, T_NONE, NULL, 0, 0, 0, 0, 0 },
        { K_FUTEX, nm[8], bad[b], F_WAKE_BITSET, 1, T_NONE, NULL, ~0u, 0, 0, 0, 0 },
        { K_WAKE, nm[9], bad[b], 0, 0, T_NONE, NULL, 0, 0, 0, 0, 0 },
        { K_WAKE, nm[10], bad[b], 0, 0, T_NONE, NULL, 0, 0, 0, PFUTEX_PRIVATE, 0 },
        { K_FUTEX, nm[11], bad[b], 3 /* REQUEUE */, 1, T_NONE, &ok_word, 0, 0, 0, 0, 0 },
        { K_FUTEX, nm[12], bad[b], 3 | PRIV, 1, T_NONE, &ok_word, 0, 0, 0, 0, 0 },
        { K_FUTEX, nm[13], bad[b], 4 /* CMP_REQUEUE */, 1, T_NONE, &ok_word, 0, 0, 0, 0, 0 },
        { K_FUTEX, nm[14], bad[b], 4 | PRIV, 1, T_NONE, &ok_word, 0, 0, 0, 0, 0 },
        { K_FUTEX, nm[15], &ok_word, 3, 1, T_NONE, bad[b], 0, 0, 0, 0, 0 },
        { K_FUTEX, nm[16], &ok_word, 4 | PRIV, 1, T_NONE, bad[b], 0, 0, 0, 0, 0 },
        { K_FUTEX, nm[17], &w_main, F_WAKE_OP | PRIV, 0, T_NONE, bad[b], OP_ADD1, 1, 1, 0, 0 },
        { K_FUTEX, nm[18], bad[b], F_WAKE_OP, 0, T_NONE, &ok_word, OP_ADD1, 1, 1, 0, 0 },
        { K_FUTEX, nm[19], bad[b], F_WAKE_OP | PRIV, 0, T_NONE, &ok_word, OP_ADD1, 1, 1, 0, 0 },
        { K_FUTEX, nm[20], bad[b], 6 /* LOCK_PI */ | PRIV, 0, T_NONE, NULL, 0, 0, 0, 0, 0 },
        { K_FUTEX, nm[21], bad[b], 8 /* TRYLOCK_PI */ | PRIV, 0, T_NONE, NULL, 0, 0, 0, 0, 0 },
        { K_FUTEX, nm[22], bad[b], 7 /* UNLOCK_PI */ | PRIV, 0, T_NONE, NULL, 0, 0, 0, 0, 0 },
        { K_FUTEX, nm[23], bad[b], 6 /* LOCK_PI */, 0, T_NONE, NULL, 0, 0, 0, 0, 0 },
      };
      static const char *const what[24] = {
        "shared FUTEX_WAIT untimed", "FUTEX_WAIT_PRIVATE untimed", "FUTEX_WAIT_PRIVATE timed",
        "shared FUTEX_WAIT_BITSET timed", "pfutex_wait private untimed", "pfutex_wait shared timed",
        "shared FUTEX_WAKE", "FUTEX_WAKE_PRIVATE", "shared FUTEX_WAKE_BITSET",
        "pfutex_wake shared", "pfutex_wake private", "shared FUTEX_REQUEUE, uaddr",
        "FUTEX_REQUEUE_PRIVATE, uaddr", "shared FUTEX_CMP_REQUEUE, uaddr",
        "FUTEX_CMP_REQUEUE_PRIVATE, uaddr", "shared FUTEX_REQUEUE, uaddr2",
        "FUTEX_CMP_REQUEUE_PRIVATE, uaddr2", "FUTEX_WAKE_OP_PRIVATE, uaddr2",
        "shared FUTEX_WAKE_OP, uaddr", "FUTEX_WAKE_OP_PRIVATE, uaddr",
        "FUTEX_LOCK_PI_PRIVATE", "FUTEX_TRYLOCK_PI_PRIVATE", "FUTEX_UNLOCK_PI_PRIVATE",
        "shared FUTEX_LOCK_PI"
      };
      for (i = 0; i < 24; i++) {
        snprintf(nm[i], sizeof nm[i], "%s on %s", what[i], badname[b]);
        check_kernel(&d[i]);
      }
    }
  }
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
