/* region_sound: the failures of issue 18, one scenario each.  Every
 * scenario asks what the kernel answers (the native backend runs the same
 * scenario as the reference, regions keyed by the kernel) and checks exact
 * counts and promptness: a wait that should end at once and takes more than
 * RS_STALL_NS is a stall.
 *
 *   1  a process stopped (SIGSTOP) inside a bucket's critical section:
 *      a: W waits; H is stopped inside wake's locked section (crash point
 *         wake_locked); P does wake(1); then H is continued.  The wakes'
 *         counts must sum to exactly the waiters that returned 0.
 *      b: as a, and P is stopped in turn, half way through unlinking W
 *         (crash point unlink_half), if it gets that far while H is
 *         stopped; H is continued, then P.  Same count.
 *      How H is stopped inside: with --enable-crash-points the crash
 *      points SIGKILL the process (src/crash.c pf_crash_point); this program
 *      defines kill() itself, which turns a process's SIGKILL of itself
 *      into SIGSTOP while rs_stop_at_crash is set (ELF interposition: the
 *      engine is linked statically into the tests).  Whether it worked is
 *      seen, not assumed: waitpid(WUNTRACED) must report the stop within
 *      2 s, else the scenario skips.  Under the native backend the kernel
 *      cannot be stopped inside a futex op: H stops itself before its wake.
 *   2  pid reuse: waiter X (queued first) is SIGKILLed, an unrelated
 *      process (no region) gets X's pid, then wake(1) must wake the live
 *      waiter L queued behind X, at once.  Method: a private pid and IPC
 *      namespace (unshare, as root; else with a user namespace), where
 *      /proc/sys/kernel/ns_last_pid picks the next pid; skips when that
 *      cannot be done here.
 *   3  two regions at once (one bucket each), WAKE_OP from region A's word
 *      to region B's while another thread of the same process holds B's
 *      bucket lock:
 *      a: deterministic: W1 waits on A's word, W2 on B's; thread T pauses
 *         300 ms at crash point unlink_half inside its wake(1) of B's word
 *         (this program's kill() makes the crash point a pause of the
 *         calling thread; A and B are ordered as the engine orders their
 *         tables, from the headers' `order`, so that B is locked second);
 *         meanwhile the main thread's WAKE_OP(A, B, 1, 1).  Two waiters:
 *         the two calls must count 2 in all, both waiters return 0;
 *      b: statistical: two threads wake A's and B's words in hot loops
 *         while the main thread loops WAKE_OP(A, B, 1, 1) for up to 2 s;
 *         S3_N waiters (threads of another process, S3_LIVE at once) each
 *         wait exactly once.  Every wake's count tallied must equal the
 *         waits that returned 0, every waiter returns (wakes of all go
 *         on until 5 s after the last thread began its wait: a thread
 *         qemu-user had not run yet is told apart from a lost wakeup), no
 *         WAKE_OP stalls.
 *   4  a region header whose user_size was scribbled to 0..3: a fresh
 *      process (exec) opens it (refused, or harmless), then a healthy
 *      region's cross-process wake must still reach it.  (Fixed by
 *      3940308, "a region whose user area is under 4 bytes no longer
 *      claims every address": passes there, fails on its parent.)
 *   5  scribbled queue links never crash a waker:
 *      a: waker K is stopped (as in 1) after marking the first of three
 *         waiters (crash point wake_marked); the other two queued slots'
 *         next links are set to an out-of-range reference; K continues:
 *         it must not die of a signal;
 *      b: for ~1 s a scribbler flips queued slots' next (and in_next)
 *         links to 0, out of range or 0xffffffff and back, while waker
 *         processes walk the whole queue (wakes of a word nobody waits on,
 *         in the waiters' bucket) and waiter processes sit in it (timed
 *         waits): nobody dies of a signal, nobody hangs.
 *   6  exec ghost: a thread of process E waits on a region word, E's main
 *      thread execs an image that never opens the region; live waiter L
 *      (another process) is queued behind; wake(1) must wake L at once.
 *   7  one named region open twice in one process (two handles, two
 *      mappings): a) WAKE_OP across the mappings does not stall; b)
 *      CMP_REQUEUE from mapping 1's word to mapping 2's other word moves
 *      (2: one woken, one requeued), not EINVAL; c) a wait through one
 *      mapping is woken by a wake through the other, both ways.
 *   8  a fork child gets a dead waiter's pid and a wake comes right after
 *      the fork: it must wake the live waiter queued behind the dead one.
 *      Deterministic: in the pid namespace of 2, ns_last_pid gives the
 *      child the dead waiter's pid, and a pthread_atfork child handler of
 *      this program (registered before the library's) holds the child in
 *      fork until the parent's wake(1) has returned.
 *   9  a region's creator stopped at crash point region_creating (object
 *      sized, layout unwritten): a) an opener waits while it is stopped,
 *      and both opens succeed once it is continued; b) killed there
 *      instead: an opener gets ENOTRECOVERABLE at once (the creator's
 *      byte: on the object, or on the companion file under the FreeBSD
 *      and macOS shims, as on those systems).
 *  10  one region opened 20 times by one process (20 descriptors of one
 *      object: closing any would drop the process's record locks) with a
 *      waiter; another process's wake(1) must count it and wake it.
 *
 * Each scenario runs in a process (group) of its own, bounded in time; it
 * reports its checks through shared memory and the parent prints them, so
 * a crash or a hang is that scenario's failure and the others still run.
 * PFUTEX_SOUND_ONLY=N runs scenario N only. */
#ifdef _WIN32
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork(), SIGSTOP, pid namespaces");
  return 0;
}
#else
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#ifdef __linux__
# include <sys/syscall.h>
#endif
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
# include <sys/prctl.h>
#endif

#include "region/internal.h"   /* white-box: the region layout (headers, slots), crash points */
#include "pft.h"
#include "region_util.h"

extern char **environ;

#define ANY PFUTEX_BITSET_MATCH_ANY
#define RS_STALL_NS (500LL * 1000 * 1000)       /* "at once": well under this */
#define RS_SEC (1000LL * 1000 * 1000)
#define RS_BUDGET_S 25                          /* a scenario's bound: then it hung */

static char self_exe[PATH_MAX];
static int is_linux;             /* the native backend: the kernel is the reference */

/* ---- Stop points: crash points that SIGSTOP instead of SIGKILL ------------------------------ */
static volatile int rs_pausing;         /* 1 while it pauses, 2 after */
#if defined(PF_CRASH_POINTS) && defined(__linux__)
static volatile int rs_stop_at_crash;
static __thread long long rs_pause_ns;  /* this thread pauses at the point instead */
# define RS_HAVE_STOP 1
/* The engine's crash point does kill(getpid(), SIGKILL); in a process that
 * armed a stop point, that becomes SIGSTOP, and the process goes on from
 * the crash point when continued; in a thread that armed a pause, the
 * thread sleeps there (holding whatever it holds) and goes on.  Every
 * other kill() is passed on. */
int
kill(pid_t pid, int sig)
{
  if (sig == SIGKILL && pid == (pid_t)syscall(SYS_getpid)) {
    if (rs_pause_ns > 0) {
      struct timespec ts;
      int saved = errno;
      ts.tv_sec = (time_t)(rs_pause_ns / 1000000000LL);
      ts.tv_nsec = (long)(rs_pause_ns % 1000000000LL);
      rs_pause_ns = 0;
      __atomic_store_n(&rs_pausing, 1, __ATOMIC_SEQ_CST);
      while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
      __atomic_store_n(&rs_pausing, 2, __ATOMIC_SEQ_CST);
      errno = saved;
      return 0;
    }
    if (rs_stop_at_crash)
      sig = SIGSTOP;
  }
  return (int)syscall(SYS_kill, pid, sig);
}
#else
# define RS_HAVE_STOP 0
#endif

/* Arm: stop the k-th time this process reaches crash point `name`. */
static int
rs_arm_stop(const char *name, long k)
{
#if RS_HAVE_STOP
  pf_crash_name = name;
  pf_crash_left = k;
  rs_stop_at_crash = 1;
  return 1;
#else
  (void)name;
  (void)k;
  return 0;
#endif
}

/* Arm (in the thread itself): pause for ns at the k-th crash point `name`
 * reached in this process (only this thread may reach it meanwhile). */
static int
rs_arm_pause(const char *name, long k, long long ns)
{
#if RS_HAVE_STOP
  rs_pausing = 0;
  rs_pause_ns = ns;
  pf_crash_name = name;
  pf_crash_left = k;
  return 1;
#else
  (void)name;
  (void)k;
  (void)ns;
  return 0;
#endif
}

/* ---- Reports: a scenario's checks, printed by the parent ------------------------------------ */
#define RS_MAXCHK 24
struct rs_rep {
  volatile int n;
  struct {
    int pass;
    char msg[200];
  } c[RS_MAXCHK];
  char skip[240];
};

/* One waiting process's (or thread's) account. */
struct rs_res {
  volatile int started, done, opid, tid;
  volatile long ret;
  volatile int err;
  volatile long long t_done;
};

struct rs_s3 {
  volatile int spawned, live, entered, returned, ret0, other, quit, give_up, last_err;
};

struct rs_shared {
  struct rs_rep rep;
  struct rs_res res[16];
  struct rs_s3 s3;
  volatile int hold_release;     /* 8: the held fork child may go on */
  volatile int hold_seen;        /* 8: it is held */
  volatile int go;               /* 6: exec now */
};
static struct rs_shared *sh;

static void
rs_check(int pass, const char *fmt, ...)
{
  va_list ap;
  int n = sh->rep.n;
  if (n >= RS_MAXCHK)
    return;
  va_start(ap, fmt);
  vsnprintf(sh->rep.c[n].msg, sizeof sh->rep.c[n].msg, fmt, ap);
  va_end(ap);
  sh->rep.c[n].pass = pass;
  __atomic_store_n(&sh->rep.n, n + 1, __ATOMIC_SEQ_CST);
}

static void
rs_skip(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(sh->rep.skip, sizeof sh->rep.skip, fmt, ap);
  va_end(ap);
}

/* ---- Processes ------------------------------------------------------------------------------ */

static pid_t
rs_fork(void)
{
  pid_t pid;
  fflush(stdout);
  if ((pid = fork()) < 0)
    sysbail("fork");
  if (pid == 0) {
#ifdef PR_SET_PDEATHSIG
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
#endif
    ru_child_alarm(30);
  }
  return pid;
}

/* This process's pid as /proc (mounted for the first pid namespace) names it. */
static int
rs_outer_pid(void)
{
  char b[32];
  ssize_t n = readlink("/proc/self", b, sizeof b - 1);
  if (n <= 0)
    return (int)getpid();
  b[n] = 0;
  return atoi(b);
}

/* 1: pid ended within ns (*st its status); 0: still running. */
static int
rs_end_within(pid_t pid, long long ns, int *st)
{
  long long end = pft_now_ns() + ns;
  for (;;) {
    pid_t r = waitpid(pid, st, WNOHANG);
    if (r == pid)
      return 1;
    if (r < 0 && errno != EINTR)
      return 1;
    if (pft_now_ns() > end)
      return 0;
    usleep(500);
  }
}

/* 1: pid stopped within ns; -1: it ended (*st); 0: neither. */
static int
rs_stop_within(pid_t pid, long long ns, int *st)
{
  long long end = pft_now_ns() + ns;
  for (;;) {
    pid_t r = waitpid(pid, st, WNOHANG | WUNTRACED);
    if (r == pid)
      return WIFSTOPPED(*st) ? 1 : -1;
    if (pft_now_ns() > end)
      return 0;
    usleep(500);
  }
}

static void
rs_kill(pid_t pid)
{
  int st;
  if (pid <= 0)
    return;
  kill(pid, SIGKILL);
  kill(pid, SIGCONT);
  while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
    ;
}

static const char *
rs_status(int st)
{
  static char b[64];
  if (WIFSIGNALED(st))
    snprintf(b, sizeof b, "killed by signal %d (%s)", WTERMSIG(st), strsignal(WTERMSIG(st)));
  else if (WIFEXITED(st))
    snprintf(b, sizeof b, "exit %d", WEXITSTATUS(st));
  else
    snprintf(b, sizeof b, "status %#x", st);
  return b;
}

/* 1 when *flag is set within ns. */
static int
rs_flag_within(volatile int *flag, long long ns)
{
  long long end = pft_now_ns() + ns;
  while (!__atomic_load_n(flag, __ATOMIC_SEQ_CST)) {
    if (pft_now_ns() > end)
      return 0;
    usleep(200);
  }
  return 1;
}

/* A waiter process: pfutex_wait(w, val), untimed; its account in *r. */
static pid_t
rs_waiter(uint32_t *w, uint32_t val, struct rs_res *r)
{
  pid_t pid;
  memset((void *)r, 0, sizeof *r);
  r->ret = -2;
  pid = rs_fork();
  if (pid == 0) {
    long ret;
    r->opid = rs_outer_pid();
    r->tid = r->opid;
    __atomic_store_n(&r->started, 1, __ATOMIC_SEQ_CST);
    errno = 0;
    ret = pfutex_wait(w, val, ANY, 0, NULL, PFUTEX_CLOCK_MONOTONIC);
    r->err = errno;
    r->ret = ret;
    r->t_done = pft_now_ns();
    __atomic_store_n(&r->done, 1, __ATOMIC_SEQ_CST);
    _exit(ret == 0 ? 0 : 1);
  }
  return pid;
}

/* The waiter of *r sleeps in its wait (so it is queued). */
static int
rs_asleep(struct rs_res *r)
{
  if (!rs_flag_within(&r->started, 10 * RS_SEC))
    return 0;
  return ru_wait_asleep(r->opid, r->tid, NULL, &r->done) == 0;
}

static const char *
rs_res_str(const struct rs_res *r)
{
  static char b[96];
  if (!r->done)
    snprintf(b, sizeof b, "still waiting");
  else if (r->ret == 0)
    snprintf(b, sizeof b, "returned 0");
  else
    snprintf(b, sizeof b, "returned %ld (%s)", r->ret, pft_errname(r->err));
  return b;
}

static pfutex_region_t *
rs_anon(size_t size, unsigned slots, unsigned buckets, unsigned procs)
{
  pfutex_region_attr_t a;
  memset(&a, 0, sizeof a);
  a.slots = slots;
  a.buckets = buckets;
  a.procs = procs;
  return pfutex_region_anon_attr(size, &a);
}

/* A second, raw view of a named region's object (white-box: region.h). */
static unsigned char *
rs_raw_map(const char *name, size_t *len)
{
  struct stat st;
  void *m;
  int fd = shm_open(name, O_RDWR, 0);
  if (fd < 0)
    return NULL;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return NULL;
  }
  m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  /* fd stays open: where the OS's record locks on the object say who is
   * alive (src/os.h), closing a descriptor of it would drop this process's
   * locks, and its peers would take it for dead (doc/regions.md). */
  if (m == MAP_FAILED) {
    close(fd);
    return NULL;
  }
  *len = (size_t)st.st_size;
  return m;
}

/* ---- 1. A lock holder stopped inside its critical section ----------------------------------- */

static void
s1_case(int variant)
{
  static const char *const tag[2] = { "1a", "1b" };
  struct rs_res *W = &sh->res[0], *H = &sh->res[1], *P = &sh->res[2], *F = &sh->res[3];
  pfutex_region_t *rg = rs_anon(4096, 16, 1, 16);
  uint32_t *w;
  pid_t wp = -1, hp = -1, pp = -1, fp;
  int st, p_st = 0, r, p_stopped = 0, p_ended_early = 0, h_end, p_end, w_end;
  long long t0, p_ns = 0;
  long total;

  if (!rg) {
    rs_check(0, "%s: anonymous region: %s", tag[variant], pft_errname(errno));
    return;
  }
  w = pfutex_region_addr(rg);
  *w = 0;
  memset((void *)H, 0, sizeof *H);
  memset((void *)P, 0, sizeof *P);
  H->ret = P->ret = -2;
  wp = rs_waiter(w, 0, W);
  if (!rs_asleep(W)) {
    rs_check(0, "%s: waiter W asleep", tag[variant]);
    goto out;
  }
  if ((hp = rs_fork()) == 0) {
    long ret;
    if (is_linux)
      kill(getpid(), SIGSTOP);        /* the kernel's op is atomic: stop before it */
    else
      rs_arm_stop("wake_locked", 1);
    errno = 0;
    ret = pfutex_wake(w, ANY, 1, 0);
    H->err = errno;
    H->ret = ret;
    H->done = 1;
    _exit(0);
  }
  r = rs_stop_within(hp, 2 * RS_SEC, &st);
  if (r != 1) {
    rs_skip("%s: H did not stop inside wake (crash point wake_locked; configure "
            "--enable-crash-points): %s", tag[variant], r < 0 ? rs_status(st) : "still running");
    goto out;
  }
  /* P: a third process's wake(1), with H stopped holding the lock. */
  t0 = pft_now_ns();
  if ((pp = rs_fork()) == 0) {
    long ret;
    if (variant == 1 && !is_linux)
      rs_arm_stop("unlink_half", 1);
    errno = 0;
    ret = pfutex_wake(w, ANY, 1, 0);
    P->err = errno;
    P->ret = ret;
    P->t_done = pft_now_ns();
    P->done = 1;
    _exit(0);
  }
  if (variant == 0) {
    if (rs_end_within(pp, 1600LL * 1000 * 1000, &p_st)) {
      p_ended_early = 1;
      p_ns = P->t_done - t0;
      diag("  %s: P's wake(1) returned %ld after %.2f s while H was stopped%s", tag[variant],
           P->ret, (double)p_ns / 1e9, is_linux ? "" : " inside wake's locked section");
    } else {
      diag("  %s: P's wake(1) waits while H is stopped (1.6 s)", tag[variant]);
    }
  } else {
    r = rs_stop_within(pp, 1600LL * 1000 * 1000, &p_st);
    if (r == 1) {
      p_stopped = 1;
      diag("  %s: P got into the critical section while H was stopped in it (after %.2f s) "
           "and stopped half way through unlinking W", tag[variant],
           (double)(pft_now_ns() - t0) / 1e9);
    } else if (r < 0) {
      p_ended_early = 1;
      diag("  %s: P's wake(1) returned %ld while H was stopped", tag[variant], P->ret);
    } else {
      diag("  %s: P's wake(1) waits while H is stopped (1.6 s)", tag[variant]);
    }
  }
  kill(hp, SIGCONT);
  h_end = rs_end_within(hp, 3 * RS_SEC, &st);
  rs_check(h_end && WIFEXITED(st) && WEXITSTATUS(st) == 0,
           "%s: H's wake ends once H is continued (%s)", tag[variant],
           h_end ? rs_status(st) : "hung");
  if (h_end)
    hp = -1;
  if (p_stopped)
    kill(pp, SIGCONT);
  if (p_ended_early)
    p_end = 1;
  else
    p_end = rs_end_within(pp, 3 * RS_SEC, &p_st);
  rs_check(p_end && WIFEXITED(p_st) && WEXITSTATUS(p_st) == 0, "%s: P's wake ends (%s)",
           tag[variant], p_end ? rs_status(p_st) : "hung");
  if (p_end)
    pp = -1;
  w_end = rs_end_within(wp, 2 * RS_SEC, &st);
  if (w_end)
    wp = -1;
  total = (H->ret > 0 ? H->ret : 0) + (P->ret > 0 ? P->ret : 0);
  rs_check(total == 1 && W->done && W->ret == 0 && H->ret >= 0 && P->ret >= 0,
           "%s: one waiter: the wakes' counts sum to 1 (H %ld, P %ld) and W returned 0 (W %s)",
           tag[variant], H->ret, P->ret, rs_res_str(W));
  if (!w_end) {                  /* W's wake was lost: let it go first */
    pfutex_wake(w, ANY, INT_MAX, 0);
    if (rs_end_within(wp, RS_SEC, &st))
      wp = -1;
  }
  /* The bucket afterwards: a fresh waiter, a wake(1). */
  *w = 0;
  fp = rs_waiter(w, 0, F);
  if (!rs_asleep(F)) {
    rs_check(0, "%s: afterwards a fresh waiter sleeps (%s)", tag[variant], rs_res_str(F));
  } else {
    long long t1 = pft_now_ns();
    int prompt;
    r = pfutex_wake(w, ANY, 1, 0);
    prompt = rs_flag_within(&F->done, RS_STALL_NS);
    rs_check(r == 1 && prompt && F->ret == 0,
             "%s: afterwards wake(1) of a fresh waiter returns 1 (%d) and it returns 0 at once "
             "(%s after %.2f s)", tag[variant], r, rs_res_str(F),
             (double)((F->done ? F->t_done : pft_now_ns()) - t1) / 1e9);
  }
  pfutex_wake(w, ANY, INT_MAX, 0);
  rs_kill(fp);
out:
  pfutex_wake(w, ANY, INT_MAX, 0);
  rs_kill(hp);
  rs_kill(pp);
  rs_kill(wp);
  (void)p_ns;
  pfutex_region_close(rg);
}

static void
s1(void)
{
  s1_case(0);
  if (sh->rep.skip[0])
    return;
  s1_case(1);
}

/* ---- 2 and 8. pid reuse, in a pid namespace of our own -------------------------------------- */

/* Run fn as pid 1 of a new pid (and IPC: emu:sysv's sets stay inside)
 * namespace; 0, or -1 (skip recorded). */
static void
rs_in_pidns(void (*fn)(void), const char *tag)
{
  pid_t c;
  int st;
  if ((c = rs_fork()) == 0) {
#ifndef __linux__
    (void)fn;
    (void)st;
    rs_skip("%s: pid namespaces are Linux's", tag);
    _exit(0);
#else
    int flags = CLONE_NEWPID | CLONE_NEWIPC, e;
    pid_t i;
    if (unshare(flags) != 0) {
      e = errno;
      if (unshare(CLONE_NEWUSER | flags) != 0) {
        rs_skip("%s: no pid namespace here: unshare(CLONE_NEWPID|CLONE_NEWIPC): %s; with "
                "CLONE_NEWUSER: %s (uid %d)", tag, strerror(e), strerror(errno), (int)getuid());
        _exit(0);
      }
    }
    fflush(stdout);
    if ((i = fork()) < 0) {
      rs_skip("%s: fork in the new pid namespace: %s", tag, strerror(errno));
      _exit(0);
    }
    if (i == 0) {
      fn();
      fflush(stdout);
      _exit(0);
    }
    while (waitpid(i, &st, 0) < 0 && errno == EINTR)
      ;
    _exit(WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st));
#endif
  }
  if (!rs_end_within(c, 20 * RS_SEC, &st)) {
    rs_check(0, "%s: the pid namespace's run ends (hung)", tag);
    rs_kill(c);
  } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    rs_check(0, "%s: the pid namespace's run ends normally (%s)", tag, rs_status(st));
  }
}

/* Make the next pid of this pid namespace `want`: 0, or -errno. */
static int
rs_next_pid(pid_t want)
{
  char b[32];
  int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY), n, e;
  if (fd < 0)
    return -errno;
  n = snprintf(b, sizeof b, "%d", (int)want - 1);
  e = write(fd, b, (size_t)n) == n ? 0 : -errno;
  close(fd);
  return e;
}

/* X waits, then L waits behind it on the same word; X is SIGKILLed.  0 and
 * *xp (the dead waiter's pid), *lp; or -1 (reported). */
static int
rs_dead_then_live(uint32_t *w, const char *tag, pid_t *xp, pid_t *lp)
{
  struct rs_res *X = &sh->res[0], *L = &sh->res[1];
  int st;
  *lp = -1;
  *xp = rs_waiter(w, 0, X);
  if (!rs_asleep(X)) {
    rs_check(0, "%s: waiter X asleep", tag);
    rs_kill(*xp);
    return -1;
  }
  *lp = rs_waiter(w, 0, L);
  if (!rs_asleep(L)) {
    rs_check(0, "%s: waiter L asleep behind X", tag);
    rs_kill(*xp);
    rs_kill(*lp);
    return -1;
  }
  kill(*xp, SIGKILL);
  while (waitpid(*xp, &st, 0) < 0 && errno == EINTR)
    ;
  return 0;
}

/* After a wake(1) that returned r at t0: L must have returned 0 at once. */
static void
rs_check_live_woken(const char *tag, const char *what, int r, long long t0)
{
  struct rs_res *L = &sh->res[1];
  int prompt = rs_flag_within(&L->done, RS_STALL_NS);
  if (!prompt)
    (void)rs_flag_within(&L->done, RS_SEC);    /* late, or never: say which */
  rs_check(r == 1, "%s: %s: wake(1) returns 1 (%d)", tag, what, r);
  rs_check(prompt && L->ret == 0,
           "%s: %s: the live waiter queued behind the dead one returns 0 at once (%s%s)", tag,
           what, rs_res_str(L), L->done ? (prompt ? "" : ", late") : ": a lost wakeup");
}

static void
s2_in_ns(void)
{
  pfutex_region_t *rg = rs_anon(4096, 16, 4, 16);
  uint32_t *w;
  pid_t x, l, z = -1;
  char *argv[] = { self_exe, (char *)"--idle", NULL };
  long long t0;
  int r, e;

  if (!rg) {
    rs_check(0, "2: anonymous region: %s", pft_errname(errno));
    return;
  }
  w = pfutex_region_addr(rg);
  *w = 0;
  if (rs_dead_then_live(w, "2", &x, &l) < 0)
    goto out;
  if ((e = rs_next_pid(x)) < 0) {
    rs_skip("2: cannot pick the next pid (/proc/sys/kernel/ns_last_pid: %s)", strerror(-e));
    goto out;
  }
  /* posix_spawn: no fork handlers run, so the new process has nothing to
   * do with the region (no process entry of its own) */
  if ((e = posix_spawn(&z, self_exe, NULL, NULL, argv, environ)) != 0) {
    rs_skip("2: posix_spawn: %s", strerror(e));
    z = -1;
    goto out;
  }
  if (z != x) {
    rs_skip("2: the pid was not reused (got %d, wanted %d)", (int)z, (int)x);
    goto out;
  }
  diag("  2: waiter X (pid %d in the namespace) killed; an unrelated process now has pid %d",
       (int)x, (int)z);
  t0 = pft_now_ns();
  r = pfutex_wake(w, ANY, 1, 0);
  rs_check_live_woken("2", "dead waiter's pid reused", r, t0);
out:
  pfutex_wake(w, ANY, INT_MAX, 0);
  rs_kill(z);
  rs_kill(l);
  pfutex_region_close(rg);
}

static void
s2(void)
{
  rs_in_pidns(s2_in_ns, "2");
}

/* 8: the fork child that must get the dead waiter's pid is held in this
 * program's fork handler (registered before the library's) until the
 * parent's wake returned. */
static int rs_hold_armed;          /* process-local: only the one fork */
static void
rs_atfork_child(void)
{
  if (rs_hold_armed && sh) {
    long long end = pft_now_ns() + 2 * RS_SEC;
    __atomic_store_n(&sh->hold_seen, 1, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&sh->hold_release, __ATOMIC_SEQ_CST) && pft_now_ns() < end)
      usleep(100);
    rs_hold_armed = 0;
  }
}

static void
s8_in_ns(void)
{
  pfutex_region_t *rg = rs_anon(4096, 16, 4, 16);
  uint32_t *w;
  pid_t x, l, f = -1;
  long long t0;
  int r, e, held;

  if (!rg) {
    rs_check(0, "8: anonymous region: %s", pft_errname(errno));
    return;
  }
  w = pfutex_region_addr(rg);
  *w = 0;
  if (rs_dead_then_live(w, "8", &x, &l) < 0)
    goto out;
  if ((e = rs_next_pid(x)) < 0) {
    rs_skip("8: cannot pick the next pid (/proc/sys/kernel/ns_last_pid: %s)", strerror(-e));
    goto out;
  }
  sh->hold_release = 0;
  sh->hold_seen = 0;
  rs_hold_armed = 1;
  fflush(stdout);
  f = fork();
  if (f == 0) {
    _exit(0);       /* a child that never waits: it only has the pid */
  }
  rs_hold_armed = 0;
  if (f < 0) {
    rs_check(0, "8: fork: %s", strerror(errno));
    goto out;
  }
  if (f != x) {
    sh->hold_release = 1;
    rs_skip("8: the pid was not reused (got %d, wanted %d)", (int)f, (int)x);
    goto out;
  }
  t0 = pft_now_ns();
  r = pfutex_wake(w, ANY, 1, 0);      /* right after the fork */
  held = __atomic_load_n(&sh->hold_seen, __ATOMIC_SEQ_CST);
  sh->hold_release = 1;
  diag("  8: waiter X (pid %d) killed; a fork child has its pid (%s); wake(1) right after the fork",
       (int)x, held ? "held inside fork() until the wake returned" : "not yet running");
  rs_check_live_woken("8", "a fork child has the dead waiter's pid", r, t0);
out:
  sh->hold_release = 1;
  pfutex_wake(w, ANY, INT_MAX, 0);
  rs_kill(f);
  rs_kill(l);
  pfutex_region_close(rg);
}

static void
s8(void)
{
  rs_in_pidns(s8_in_ns, "8");
}

/* ---- 3. Two regions at once, a thread of ours hot on each ----------------------------------- */

#define S3_N 400            /* waits in all */
#define S3_LIVE 12          /* at once */
static uint32_t *s3_aw, *s3_bw;
static volatile int s3_stop;
static long s3_hot_tally[2], s3_hot_bad[2];

static void *
s3_wait_once(void *arg)
{
  uint32_t *w = arg;
  int r;
  __atomic_add_fetch(&sh->s3.entered, 1, __ATOMIC_SEQ_CST);   /* running: its wait begins */
  r = pfutex_wait(w, 0, ANY, 0, NULL, PFUTEX_CLOCK_MONOTONIC);
  if (r == 0) {
    __atomic_add_fetch(&sh->s3.ret0, 1, __ATOMIC_SEQ_CST);
  } else {
    sh->s3.last_err = errno;
    __atomic_add_fetch(&sh->s3.other, 1, __ATOMIC_SEQ_CST);
  }
  __atomic_sub_fetch(&sh->s3.live, 1, __ATOMIC_SEQ_CST);
  __atomic_add_fetch(&sh->s3.returned, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

static void *
s3_hot(void *arg)
{
  int k = (int)(intptr_t)arg;
  uint32_t *w = k ? s3_bw : s3_aw;      /* the waiters' own words */
  while (!__atomic_load_n(&s3_stop, __ATOMIC_SEQ_CST)) {
    int r = pfutex_wake(w, ANY, 1, 0);
    if (r > 0)
      s3_hot_tally[k] += r;
    else if (r < 0)
      s3_hot_bad[k]++;
  }
  return NULL;
}

/* 3a: thread T of this process holds the second region's (only) bucket
 * lock, paused half way through unlinking W2 (crash point unlink_half, a
 * 300 ms pause of T alone), while the main thread does WAKE_OP from the
 * first region's word to the second's: the kernel's answer is two waiters,
 * two wakes in all. */
static uint32_t *s3a_word;
static long s3a_ret;
static int s3a_err;

static void *
s3a_thread(void *arg)
{
  (void)arg;
  if (!is_linux)
    (void)rs_arm_pause("unlink_half", 1, 300LL * 1000 * 1000);
  errno = 0;
  s3a_ret = pfutex_wake(s3a_word, ANY, 1, 0);
  s3a_err = errno;
  return NULL;
}

static void
s3a(void)
{
  char na[64], nb[64];
  pfutex_region_attr_t at;
  pfutex_region_t *r[2] = { NULL, NULL };
  unsigned char *raw[2] = { NULL, NULL };
  size_t rawlen[2] = { 0, 0 };
  uint64_t order[2];
  uint32_t *fw, *sw;
  struct rs_res *W1 = &sh->res[0], *W2 = &sh->res[1];
  pid_t p1 = -1, p2 = -1;
  pthread_t t;
  long long t0, dt;
  int i, first, paused, still, mret, merr, d1, d2;

  if (!is_linux && !RS_HAVE_STOP) {
    rs_skip("3a: T cannot pause inside its wake (configure --enable-crash-points)");
    return;
  }
  ru_name(na, sizeof na, "snd3a");
  ru_name(nb, sizeof nb, "snd3b");
  memset(&at, 0, sizeof at);
  at.slots = 16;
  at.buckets = 1;
  at.procs = 16;
  if (!(r[0] = pfutex_region_open_attr(na, 4096, O_RDWR | O_CREAT | O_EXCL, 0600, &at))
      || !(r[1] = pfutex_region_open_attr(nb, 4096, O_RDWR | O_CREAT | O_EXCL, 0600, &at))) {
    rs_check(0, "3a: two named regions: %s", pft_errname(errno));
    goto out;
  }
  for (i = 0; i < 2; i++) {
    if (!(raw[i] = rs_raw_map(i ? nb : na, &rawlen[i]))) {
      rs_check(0, "3a: a raw view of the regions");
      goto out;
    }
    order[i] = ((struct pf_rgn_hdr *)(void *)raw[i])->order;
  }
  /* the engine locks two tables by their order (src/table.c): T must hold
   * the one locked second */
  first = order[0] < order[1] ? 0 : 1;
  fw = pfutex_region_addr(r[first]);
  sw = pfutex_region_addr(r[!first]);
  *fw = *sw = 0;
  p1 = rs_waiter(fw, 0, W1);
  p2 = rs_waiter(sw, 0, W2);
  if (!rs_asleep(W1) || !rs_asleep(W2)) {
    rs_check(0, "3a: a waiter asleep on each region's word");
    goto out;
  }
  s3a_word = sw;
  if (pthread_create(&t, NULL, s3a_thread, NULL) != 0)
    sysbail("pthread_create");
  paused = rs_flag_within(&rs_pausing, 2 * RS_SEC);
  t0 = pft_now_ns();
  errno = 0;
  mret = pfutex_wake_op(fw, sw, 1, 1, PFUTEX_OP(PFUTEX_OP_OR, 0, PFUTEX_OP_CMP_EQ, 0), 0);
  merr = errno;
  dt = pft_now_ns() - t0;
  still = __atomic_load_n(&rs_pausing, __ATOMIC_SEQ_CST) == 1;
  pthread_join(t, NULL);
  d1 = rs_flag_within(&W1->done, 2 * RS_SEC);
  d2 = rs_flag_within(&W2->done, 2 * RS_SEC);
  diag("  3a: T %s; WAKE_OP returned %d after %.3f s (T still paused then: %s); "
       "T's wake returned %ld",
       paused ? "paused half way through unlinking W2, holding the second region's lock"
              : "did not pause (native backend, or no crash points)",
       mret, (double)dt / 1e9, still ? "yes" : "no", s3a_ret);
  rs_check(mret >= 0 && s3a_ret >= 0 && mret + s3a_ret == 2 && d1 && d2 && W1->ret == 0
           && W2->ret == 0,
           "3a: two waiters: WAKE_OP (%d%s%s) and T's wake(1) (%ld%s%s) count 2 in all, and both "
           "returned 0 (W1 %s; W2 %s)", mret, mret < 0 ? " " : "",
           mret < 0 ? pft_errname(merr) : "",
           s3a_ret, s3a_ret < 0 ? " " : "", s3a_ret < 0 ? pft_errname(s3a_err) : "",
           rs_res_str(W1), rs_res_str(W2));
out:
  for (i = 0; i < 2; i++) {
    if (r[i]) {
      pfutex_wake(pfutex_region_addr(r[i]), ANY, INT_MAX, 0);
    }
  }
  rs_kill(p1);
  rs_kill(p2);
  for (i = 0; i < 2; i++) {
    if (raw[i])
      munmap(raw[i], rawlen[i]);
    if (r[i])
      pfutex_region_close(r[i]);
  }
  pfutex_region_unlink(na);
  pfutex_region_unlink(nb);
}

/* 3b: the same, statistically: hot loops of wakes on both regions' words
 * in two threads, WAKE_OP from A to B in the main thread, for up to 2 s. */
static void
s3b(void)
{
  pfutex_region_t *ra = rs_anon(4096, 64, 1, 8), *rb = rs_anon(4096, 64, 1, 8);
  struct rs_s3 *c = &sh->s3;
  pthread_t hot[2];
  pid_t helper;
  long tally = 0, bad = 0, stalls = 0;
  long long t0, worst = 0;
  int st, i;
  uint32_t op = PFUTEX_OP(PFUTEX_OP_OR, 0, PFUTEX_OP_CMP_EQ, 0);   /* leaves 0; compares true */

  if (!ra || !rb) {
    rs_check(0, "3b: two anonymous regions: %s", pft_errname(errno));
    return;
  }
  s3_aw = pfutex_region_addr(ra);
  s3_bw = pfutex_region_addr(rb);
  memset((void *)c, 0, sizeof *c);
  /* The waiters: threads of another process, each waiting once, on A's or
   * B's word (words that stay 0). */
  if ((helper = rs_fork()) == 0) {
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 128 * 1024);
    pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
    while (c->spawned < S3_N && !c->quit) {
      pthread_t t;
      if (__atomic_load_n(&c->live, __ATOMIC_SEQ_CST) >= S3_LIVE) {
        usleep(50);
        continue;
      }
      __atomic_add_fetch(&c->live, 1, __ATOMIC_SEQ_CST);
      if (pthread_create(&t, &a, s3_wait_once, (c->spawned & 1) ? s3_bw : s3_aw) != 0)
        _exit(3);
      __atomic_add_fetch(&c->spawned, 1, __ATOMIC_SEQ_CST);
    }
    /* its waits end before it does (the parent says when to give up) */
    while (!c->give_up && __atomic_load_n(&c->returned, __ATOMIC_SEQ_CST) < c->spawned)
      usleep(1000);
    _exit(0);
  }
  s3_stop = 0;
  for (i = 0; i < 2; i++)
    if (pthread_create(&hot[i], NULL, s3_hot, (void *)(intptr_t)i) != 0)
      sysbail("pthread_create");
  t0 = pft_now_ns();
  while (__atomic_load_n(&c->returned, __ATOMIC_SEQ_CST) < S3_N && pft_now_ns() - t0 < 2 * RS_SEC) {
    long long t1 = pft_now_ns(), dt;
    int r = pfutex_wake_op(s3_aw, s3_bw, 1, 1, op, 0);
    dt = pft_now_ns() - t1;
    if (dt > worst)
      worst = dt;
    if (dt > RS_STALL_NS)
      stalls++;
    if (r > 0)
      tally += r;
    else if (r < 0)
      bad++;
  }
  s3_stop = 1;
  for (i = 0; i < 2; i++)
    pthread_join(hot[i], NULL);
  /* No more waits (a slow machine, qemu-user, may not have started all
   * S3_N in the time); the rest, with wakes of everyone (counted too):
   * every wait that started must return.  Wakes for 5 s after the last
   * thread began its wait (a thread created but not running yet, which a
   * loaded qemu-user machine may keep for seconds, is no lost wakeup: up
   * to 60 s more for them to run). */
  c->quit = 1;
  usleep(20000);                            /* a spawn in flight lands */
  t0 = pft_now_ns();
  {
    int seen = -1;
    long long t_last = t0;
    while (__atomic_load_n(&c->returned, __ATOMIC_SEQ_CST) < __atomic_load_n(&c->spawned, __ATOMIC_SEQ_CST)
           && pft_now_ns() - t_last < 5 * RS_SEC && pft_now_ns() - t0 < 65 * RS_SEC) {
      int r1, r2, en = __atomic_load_n(&c->entered, __ATOMIC_SEQ_CST);
      if (en != seen) {
        seen = en;
        t_last = pft_now_ns();              /* 5 s from the latest wait's start */
      }
      r1 = pfutex_wake(s3_aw, ANY, INT_MAX, 0);
      r2 = pfutex_wake(s3_bw, ANY, INT_MAX, 0);
      tally += (r1 > 0 ? r1 : 0) + (r2 > 0 ? r2 : 0);
      usleep(1000);
    }
  }
  c->give_up = 1;
  if (!rs_end_within(helper, 3 * RS_SEC, &st)) {
    rs_kill(helper);
    st = -1;
  }
  tally += s3_hot_tally[0] + s3_hot_tally[1];
  diag("  3b: %d waits: %d returned 0, %d otherwise; wakes counted %ld (the hot loops %ld, %ld); "
       "slowest WAKE_OP %.3f s", c->spawned, c->ret0, c->other, tally, s3_hot_tally[0],
       s3_hot_tally[1], (double)worst / 1e9);
  rs_check(c->spawned > 0 && c->returned == c->spawned,
           "3b: every one of the %d waits that started (of %d planned) returned (%d did; %d "
           "threads ran%s)", c->spawned, S3_N, c->returned, c->entered,
           c->returned == c->spawned ? ""
           : c->entered == c->spawned ? ": the rest lost their wakeups"
                                      : ": some were created and never ran in 65 s");
  rs_check(tally == c->ret0 && c->other == 0,
           "3b: the wakes' counts (%ld) equal the waits that returned 0 (%d; %d other returns, "
           "last errno %s)", tally, c->ret0, c->other, pft_errname(c->last_err));
  rs_check(bad == 0 && s3_hot_bad[0] == 0 && s3_hot_bad[1] == 0,
           "3b: no wake failed (WAKE_OP %ld, hot loops %ld, %ld)", bad, s3_hot_bad[0],
           s3_hot_bad[1]);
  rs_check(stalls == 0, "3b: no WAKE_OP stalled (> 0.5 s: %ld)", stalls);
  rs_check(st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0, "3b: the waiters' process ended (%s)",
           st == -1 ? "hung" : rs_status(st));
  pfutex_region_close(ra);
  pfutex_region_close(rb);
}

static void
s3(void)
{
  s3a();
  s3b();
}

/* ---- 4. A header whose user_size says 0..3 -------------------------------------------------- */

/* The peer's report, in the healthy region's user area. */
struct s4_peer {
  volatile int started, bad_opened, bad_errno, woke;
  volatile uint64_t bad_size;
};
#define S4_WORD 0
#define S4_REP_OFF 1024

static int
s4_peer_main(const char *bad, const char *good)
{
  pfutex_region_t *b, *g;
  struct s4_peer *p;
  uint32_t *w;
  ru_child_alarm(20);
  errno = 0;
  b = pfutex_region_open(bad, 0, O_RDWR, 0);     /* opened first: found first */
  if (!(g = pfutex_region_open(good, 0, O_RDWR, 0)))
    return 3;
  w = pfutex_region_addr(g);
  p = (struct s4_peer *)(void *)((char *)w + S4_REP_OFF);
  p->bad_opened = b != NULL;
  p->bad_errno = b ? 0 : errno;
  p->bad_size = b ? (uint64_t)pfutex_region_size(b) : 0;
  __atomic_store_n(&p->started, 1, __ATOMIC_SEQ_CST);
  if (pfutex_wait(&w[S4_WORD], 0, ANY, 0, NULL, PFUTEX_CLOCK_MONOTONIC) != 0)
    return 4;
  __atomic_store_n(&p->woke, 1, __ATOMIC_SEQ_CST);
  return 0;
}

static void
s4(void)
{
  char bad[64], good[64];
  pfutex_region_t *g, *b;
  unsigned char *raw;
  size_t rawlen = 0;
  uint32_t *w;
  struct s4_peer *p;
  uint64_t v;

  ru_name(bad, sizeof bad, "snd4b");
  ru_name(good, sizeof good, "snd4g");
  if (!(g = pfutex_region_open(good, 8192, O_RDWR | O_CREAT | O_EXCL, 0600))
      || !(b = pfutex_region_open(bad, 4096, O_RDWR | O_CREAT | O_EXCL, 0600))) {
    rs_check(0, "4: two named regions: %s", pft_errname(errno));
    pfutex_region_unlink(good);
    return;
  }
  pfutex_region_close(b);
  if (!(raw = rs_raw_map(bad, &rawlen))) {
    rs_check(0, "4: map %s: %s", bad, strerror(errno));
    goto out;
  }
  w = pfutex_region_addr(g);
  p = (struct s4_peer *)(void *)((char *)w + S4_REP_OFF);
  for (v = 0; v < 4; v++) {
    char *argv[] = { self_exe, (char *)"--s4-peer", bad, good, NULL };
    pid_t pid;
    int st, r, woke, ended;
    long long t0;
    memcpy(raw + offsetof(struct pf_rgn_hdr, user_size), &v, sizeof v);
    memset((void *)p, 0, sizeof *p);
    w[S4_WORD] = 0;
    if ((pid = rs_fork()) == 0) {
      execv(self_exe, argv);
      _exit(127);
    }
    if (!rs_flag_within(&p->started, 10 * RS_SEC) || ru_wait_asleep(pid, pid, NULL, NULL) != 0) {
      rs_check(0, "4: user_size %u: the peer opened the healthy region and sleeps", (unsigned)v);
      rs_kill(pid);
      continue;
    }
    if (p->bad_opened)
      diag("  4: user_size %u: the peer's open of it succeeded (size %llu)", (unsigned)v,
           (unsigned long long)p->bad_size);
    else
      diag("  4: user_size %u: the peer's open of it failed: %s", (unsigned)v,
           pft_errname(p->bad_errno));
    t0 = pft_now_ns();
    r = pfutex_wake(&w[S4_WORD], ANY, 1, 0);
    /* at once: its wait returns within RS_STALL_NS; its exit may take
     * longer on a loaded machine (a process's teardown) */
    woke = rs_flag_within(&p->woke, RS_STALL_NS);
    ended = rs_end_within(pid, 10 * RS_SEC, &st);
    rs_check(r == 1 && woke && ended && WIFEXITED(st) && WEXITSTATUS(st) == 0,
             "4: user_size %u: a wake of the healthy region reaches the peer's wait: 1 (%d), "
             "it returned 0 at once (%s%s)", (unsigned)v, r, ended ? rs_status(st) : "still waiting",
             woke ? "" : ", not within the bound");
    rs_check(!p->bad_opened || p->bad_size == v,
             "4: user_size %u: the bad region is refused or harmless (%s)", (unsigned)v,
             p->bad_opened ? "opened" : pft_errname(p->bad_errno));
    if (!ended) {
      pfutex_wake(&w[S4_WORD], ANY, INT_MAX, 0);
      rs_kill(pid);
    }
    (void)t0;
  }
  munmap(raw, rawlen);
out:
  pfutex_region_close(g);
  pfutex_region_unlink(good);
  pfutex_region_unlink(bad);
}

/* ---- 5. Scribbled queue links --------------------------------------------------------------- */

struct s5_view {
  struct pf_rgn_hdr *h;
  struct pf_node *slots;
  uint32_t nslots;
};

static int
s5_view(unsigned char *raw, size_t len, struct s5_view *v)
{
  v->h = (struct pf_rgn_hdr *)(void *)raw;
  if (len < sizeof *v->h || v->h->slots_off + (uint64_t)v->h->nslots * sizeof(struct pf_node) > len)
    return -1;
  v->slots = (struct pf_node *)(void *)(raw + v->h->slots_off);
  v->nslots = v->h->nslots;
  return 0;
}

static void
s5a(void)
{
  char name[64];
  pfutex_region_attr_t a;
  pfutex_region_t *rg;
  unsigned char *raw = NULL;
  size_t rawlen = 0;
  struct s5_view v;
  pid_t wp[3] = { -1, -1, -1 }, kp = -1;
  uint32_t *w;
  int i, st, r, scribbled = 0;

  ru_name(name, sizeof name, "snd5a");
  memset(&a, 0, sizeof a);
  a.slots = 16;
  a.buckets = 1;
  a.procs = 16;
  if (!(rg = pfutex_region_open_attr(name, 4096, O_RDWR | O_CREAT | O_EXCL, 0600, &a))) {
    rs_check(0, "5a: named region: %s", pft_errname(errno));
    return;
  }
  w = pfutex_region_addr(rg);
  *w = 0;
  if (!(raw = rs_raw_map(name, &rawlen)) || s5_view(raw, rawlen, &v) < 0) {
    rs_check(0, "5a: a raw view of the region");
    goto out;
  }
  for (i = 0; i < 3; i++) {
    wp[i] = rs_waiter(w, 0, &sh->res[i]);
    if (!rs_asleep(&sh->res[i])) {
      rs_check(0, "5a: waiter %d asleep", i);
      goto out;
    }
  }
  if ((kp = rs_fork()) == 0) {
    if (!is_linux)
      rs_arm_stop("wake_marked", 1);
    _exit(pfutex_wake(w, ANY, 3, 0) < 0 ? 100 + (errno & 127) : 0);
  }
  r = rs_stop_within(kp, 2 * RS_SEC, &st);
  if (r == 1) {
    /* K marked the first waiter and holds the lock: the other two are
     * still queued; their next links go out of range */
    for (i = 0; i < (int)v.nslots; i++)
      if (v.slots[i].owner != 0 && v.slots[i].state == PF_W_QUEUED) {
        v.slots[i].next = v.nslots + 7;
        scribbled++;
      }
    diag("  5a: waker stopped after marking one waiter; %d queued slots' next links set to %u",
         scribbled, v.nslots + 7);
    kill(kp, SIGCONT);
    r = rs_end_within(kp, 3 * RS_SEC, &st);
    rs_check(r && !WIFSIGNALED(st), "5a: the waker walking a scribbled link is not killed (%s)",
             r ? rs_status(st) : "hung");
    kp = -1;
  } else if (r < 0) {
    if (!is_linux) {
      rs_skip("5a: the waker did not stop at wake_marked (configure --enable-crash-points): %s",
              rs_status(st));
    } else {
      rs_check(!WIFSIGNALED(st) && WEXITSTATUS(st) == 0,
               "5a: the waker is not killed (%s; the kernel's walk cannot be stopped)",
               rs_status(st));
    }
    kp = -1;
  } else {
    rs_check(0, "5a: the waker neither stopped nor ended in 2 s");
  }
out:
  for (i = 0; i < 3; i++) {
    pfutex_wake(w, ANY, INT_MAX, 0);
    rs_kill(wp[i]);
  }
  rs_kill(kp);
  if (raw)
    munmap(raw, rawlen);
  pfutex_region_close(rg);
  pfutex_region_unlink(name);
}

/* 5b: waiter processes sit on word 1 (timed waits), waker processes wake
 * word 0, where nobody waits: every wake walks the whole queue past them;
 * the scribbler flips queued slots' next links (and in_next) to garbage and
 * back, so some flips land between a waker's check of the queue and its
 * walk. */
#define S5B_WAITERS 10
#define S5B_WAKERS 3

static void
s5b(void)
{
  char name[64];
  pfutex_region_attr_t a;
  pfutex_region_t *rg;
  unsigned char *raw = NULL;
  size_t rawlen = 0;
  struct s5_view v;
  pid_t kids[S5B_WAITERS + S5B_WAKERS];
  volatile int *stop;
  uint32_t *w, seed = (uint32_t)pft_now_ns();
  long long t0;
  long flips = 0;
  int i, n = 0, crashed = 0, hung = 0;
  char why[200] = "";

  ru_name(name, sizeof name, "snd5b");
  memset(&a, 0, sizeof a);
  a.slots = 32;
  a.buckets = 1;
  a.procs = 32;
  if (!(rg = pfutex_region_open_attr(name, 4096, O_RDWR | O_CREAT | O_EXCL, 0600, &a))) {
    rs_check(0, "5b: named region: %s", pft_errname(errno));
    return;
  }
  w = pfutex_region_addr(rg);
  stop = (volatile int *)(void *)(w + 512);
  *stop = 0;
  if (!(raw = rs_raw_map(name, &rawlen)) || s5_view(raw, rawlen, &v) < 0) {
    rs_check(0, "5b: a raw view of the region");
    goto out;
  }
  for (i = 0; i < S5B_WAITERS + S5B_WAKERS; i++) {
    if ((kids[i] = rs_fork()) == 0) {
      while (!*stop) {
        if (i < S5B_WAITERS) {
          struct timespec dl;
          clock_gettime(CLOCK_MONOTONIC, &dl);
          pft_timespec_add_ns(&dl, 300 * 1000 * 1000);
          (void)pfutex_wait(&w[1], 0, ANY, 0, &dl, PFUTEX_CLOCK_MONOTONIC);
        } else {
          (void)pfutex_wake(&w[0], ANY, 1, 0);
        }
      }
      _exit(0);
    }
    n++;
  }
  t0 = pft_now_ns();
  while (pft_now_ns() - t0 < RS_SEC) {
    for (i = 0; i < (int)v.nslots; i++) {
      struct pf_node *nd = &v.slots[i];
      uint32_t *link, orig, bad;
      int spin;
      if (!nd->owner || nd->state != PF_W_QUEUED)
        continue;
      seed = seed * 1103515245u + 12345u;
      link = ((seed >> 12) & 7) ? &nd->next : &nd->in_next;
      switch ((seed >> 20) & 3) {
      case 0: bad = 0; break;
      case 1: bad = 0xffffffffu; break;
      default: bad = v.nslots + 1 + ((seed >> 4) & 255); break;
      }
      orig = __atomic_load_n(link, __ATOMIC_RELAXED);
      __atomic_store_n(link, bad, __ATOMIC_RELAXED);
      for (spin = 0; spin < 200; spin++)
        __asm__ __volatile__("" ::: "memory");
      /* back, unless someone wrote it meanwhile */
      (void)__atomic_compare_exchange_n(link, &bad, orig, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
      flips++;
    }
  }
  *stop = 1;
  for (i = 0; i < n; i++) {
    int st;
    if (!rs_end_within(kids[i], 3 * RS_SEC, &st)) {
      hung++;
      if (!why[0])
        snprintf(why, sizeof why, "%s %d hung", i < S5B_WAITERS ? "waiter" : "waker", i);
      rs_kill(kids[i]);
    } else if (WIFSIGNALED(st) || WEXITSTATUS(st) != 0) {
      crashed++;
      if (!why[0])
        snprintf(why, sizeof why, "%s %d: %s", i < S5B_WAITERS ? "waiter" : "waker", i,
                 rs_status(st));
    }
  }
  diag("  5b: %ld flips of queued slots' links in 1 s", flips);
  rs_check(crashed == 0 && hung == 0,
           "5b: scribbled next/in_next links: no waiter or waker crashed (%d) or hung (%d)%s%s",
           crashed, hung, why[0] ? ": " : "", why);
out:
  if (raw)
    munmap(raw, rawlen);
  pfutex_region_close(rg);
  pfutex_region_unlink(name);
}

static void
s5(void)
{
  s5a();
  sh->rep.skip[0] = 0;      /* 5b needs no stop point */
  s5b();
}

/* ---- 6. A waiter whose process execs -------------------------------------------------------- */

static void *
s6_thread(void *arg)
{
  uint32_t *w = arg;
  struct rs_res *E = &sh->res[2];
  E->tid = (int)pft_gettid();
  __atomic_store_n(&E->started, 1, __ATOMIC_SEQ_CST);
  (void)pfutex_wait(w, 0, ANY, 0, NULL, PFUTEX_CLOCK_MONOTONIC);
  E->done = 1;
  return NULL;
}

static int
s6_execed(pid_t pid)
{
  char path[64], buf[PATH_MAX + 64];
  ssize_t n;
  snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
  if ((n = pft_read_file(path, buf, sizeof buf)) < 0)
    return 0;
  /* any argument (under qemu-user the first is the emulator's) */
  {
    size_t at = strlen(buf) + 1;
    while (at < (size_t)n) {
      if (strcmp(buf + at, "--idle") == 0)
        return 1;
      at += strlen(buf + at) + 1;
    }
  }
  return 0;
}

static void
s6(void)
{
  pfutex_region_t *rg = rs_anon(4096, 16, 4, 16);
  struct rs_res *L = &sh->res[1], *E = &sh->res[2];
  uint32_t *w;
  pid_t e = -1, l = -1;
  long long t0;
  int r, i;

  if (!rg) {
    rs_check(0, "6: anonymous region: %s", pft_errname(errno));
    return;
  }
  w = pfutex_region_addr(rg);
  *w = 0;
  memset((void *)E, 0, sizeof *E);
  sh->go = 0;
  if ((e = rs_fork()) == 0) {
    char *argv[] = { self_exe, (char *)"--idle", NULL };
    pthread_t t;
    if (pthread_create(&t, NULL, s6_thread, w) != 0)
      _exit(3);
    rs_flag_within(&sh->go, 15 * RS_SEC);
    execv(self_exe, argv);
    _exit(127);
  }
  if (!rs_flag_within(&E->started, 10 * RS_SEC) || ru_wait_asleep(e, E->tid, NULL, &E->done) != 0) {
    rs_check(0, "6: the thread of E asleep in its wait");
    goto out;
  }
  l = rs_waiter(w, 0, L);
  if (!rs_asleep(L)) {
    rs_check(0, "6: waiter L asleep behind E's thread");
    goto out;
  }
  sh->go = 1;
  for (i = 0; i < 4000 && !s6_execed(e); i++)
    usleep(500);
  if (!s6_execed(e)) {
    rs_check(0, "6: E exec'd");
    goto out;
  }
  t0 = pft_now_ns();
  r = pfutex_wake(w, ANY, 1, 0);
  i = rs_flag_within(&L->done, RS_STALL_NS);
  rs_check(r == 1, "6: after E's exec, wake(1) returns 1 (%d)", r);
  rs_check(i && L->ret == 0, "6: ... and wakes the live waiter L at once (%s after %.2f s), not "
           "E's ghost", rs_res_str(L), (double)((L->done ? L->t_done : pft_now_ns()) - t0) / 1e9);
out:
  pfutex_wake(w, ANY, INT_MAX, 0);
  rs_kill(e);
  rs_kill(l);
  pfutex_region_close(rg);
}

/* ---- 7. One region open twice in one process ------------------------------------------------ */

static int
s7_done_within(struct pft_waiter *ws, int n, int want, long long ns)
{
  long long end = pft_now_ns() + ns;
  while (pft_count_done(ws, n) < want && pft_now_ns() < end)
    usleep(200);
  return pft_count_done(ws, n);
}

static void
s7_waiter(struct pft_waiter *wt, uint32_t *w)
{
  memset(wt, 0, sizeof *wt);
  wt->uaddr = w;
  wt->val = 0;
  wt->op_flags = 0;
  pft_waiter_start(wt);
}

static void
s7(void)
{
  char name[64];
  pfutex_region_t *h1, *h2;
  uint32_t *u1, *u2;
  struct pft_waiter ws[2];
  long long t0, dt;
  int r, r2, d, i;

  ru_name(name, sizeof name, "snd7");
  if (!(h1 = pfutex_region_open(name, 4096, O_RDWR | O_CREAT | O_EXCL, 0600))) {
    rs_check(0, "7: named region: %s", pft_errname(errno));
    return;
  }
  if (!(h2 = pfutex_region_open(name, 0, O_RDWR, 0))) {
    rs_check(0, "7: the same region opened a second time: %s", pft_errname(errno));
    pfutex_region_close(h1);
    pfutex_region_unlink(name);
    return;
  }
  u1 = pfutex_region_addr(h1);
  u2 = pfutex_region_addr(h2);
  diag("  7: one region mapped at %p and %p", (void *)u1, (void *)u2);

  /* c: a wait through one mapping, a wake through the other, both ways */
  s7_waiter(&ws[0], &u1[16]);
  t0 = pft_now_ns();
  r = pfutex_wake(&u2[16], ANY, 1, 0);
  d = s7_done_within(ws, 1, 1, RS_STALL_NS);
  rs_check(r == 1 && d == 1, "7c: a wait on mapping 1 is woken at once by a wake on mapping 2 "
           "(wake %d, woken %d)", r, d);
  if (d < 1)
    pfutex_wake(&u1[16], ANY, INT_MAX, 0);
  pft_waiter_join(&ws[0]);
  s7_waiter(&ws[0], &u2[20]);
  r = pfutex_wake(&u1[20], ANY, 1, 0);
  d = s7_done_within(ws, 1, 1, RS_STALL_NS);
  rs_check(r == 1 && d == 1, "7c: a wait on mapping 2 is woken at once by a wake on mapping 1 "
           "(wake %d, woken %d)", r, d);
  if (d < 1)
    pfutex_wake(&u2[20], ANY, INT_MAX, 0);
  pft_waiter_join(&ws[0]);

  /* a: WAKE_OP from mapping 1's word to the same word through mapping 2 */
  s7_waiter(&ws[0], &u1[32]);
  t0 = pft_now_ns();
  r = pfutex_wake_op(&u1[32], &u2[32], 1, 1, PFUTEX_OP(PFUTEX_OP_OR, 0, PFUTEX_OP_CMP_EQ, 0), 0);
  dt = pft_now_ns() - t0;
  d = s7_done_within(ws, 1, 1, RS_STALL_NS);
  rs_check(r == 1 && d == 1, "7a: WAKE_OP(mapping 1's word, mapping 2's same word) wakes the one "
           "waiter: 1 (%d), woken %d", r, d);
  rs_check(dt < RS_STALL_NS, "7a: ... without a stall (%.3f s)", (double)dt / 1e9);
  if (d < 1)
    pfutex_wake(&u1[32], ANY, INT_MAX, 0);
  pft_waiter_join(&ws[0]);
  /* and with nobody waiting */
  t0 = pft_now_ns();
  r = pfutex_wake_op(&u1[36], &u2[36], 1, 1, PFUTEX_OP(PFUTEX_OP_OR, 0, PFUTEX_OP_CMP_EQ, 0), 0);
  dt = pft_now_ns() - t0;
  rs_check(r == 0 && dt < RS_STALL_NS, "7a: WAKE_OP across the mappings, nobody waiting: 0 (%d) "
           "without a stall (%.3f s)", r, (double)dt / 1e9);

  /* b: CMP_REQUEUE from mapping 1's word to mapping 2's other word */
  for (i = 0; i < 2; i++)
    s7_waiter(&ws[i], &u1[48]);
  errno = 0;
  r = pfutex_cmp_requeue(&u1[48], 0, &u2[64], 1, 1, 0);
  rs_check(r == 2, "7b: CMP_REQUEUE 1+1 of two waiters from mapping 1's word to mapping 2's "
           "other word: 2 (%d%s%s)", r, r < 0 ? " " : "", r < 0 ? pft_errname(errno) : "");
  d = s7_done_within(ws, 2, 1, RS_STALL_NS);
  r2 = pfutex_wake(&u1[64], ANY, INT_MAX, 0);
  rs_check(r == 2 && d == 1 && r2 == 1,
           "7b: ... one woken (%d), one moved: a wake of the target word finds it (%d)", d, r2);
  pfutex_wake(&u1[48], ANY, INT_MAX, 0);
  pfutex_wake(&u1[64], ANY, INT_MAX, 0);
  d = s7_done_within(ws, 2, 2, 2 * RS_SEC);
  for (i = 0; i < 2; i++)
    pft_waiter_join(&ws[i]);
  rs_check(d == 2 && ws[0].ret == 0 && ws[1].ret == 0, "7b: both waiters returned 0 (%ld, %ld)",
           ws[0].ret, ws[1].ret);

  if (pfutex_region_close(h2) != 0 || pfutex_region_close(h1) != 0)
    rs_check(0, "7: both handles close: %s", pft_errname(errno));
  pfutex_region_unlink(name);
}

/* ---- Driver --------------------------------------------------------------------------------- */

/* ---- 9. a creator stopped, then killed, while it writes the layout ---------------------------- */

/* Open `name` (no create) in a child; its result in sh->res[k]. */
static pid_t
s9_opener(const char *name, int k)
{
  pid_t pid;
  memset((void *)&sh->res[k], 0, sizeof sh->res[k]);
  if ((pid = rs_fork()) == 0) {
    pfutex_region_t *h;
    sh->res[k].started = 1;
    h = pfutex_region_open(name, 0, O_RDWR, 0);
    sh->res[k].err = h ? 0 : errno;
    sh->res[k].t_done = pft_now_ns();
    __atomic_store_n(&sh->res[k].done, 1, __ATOMIC_SEQ_CST);
    _exit(0);
  }
  return pid;
}

/* A creator child of `name`, stopped at crash point region_creating
 * (after it sized the object, before the layout): its pid, or 0 (skip). */
static pid_t
s9_stopped_creator(const char *name, int k)
{
  pid_t pid;
  int st;
  memset((void *)&sh->res[k], 0, sizeof sh->res[k]);
  if ((pid = rs_fork()) == 0) {
    pfutex_region_t *h;
    rs_arm_stop("region_creating", 1);
    h = pfutex_region_open(name, 4096, O_RDWR | O_CREAT | O_EXCL, 0600);
    sh->res[k].err = h ? 0 : errno;
    __atomic_store_n(&sh->res[k].done, 1, __ATOMIC_SEQ_CST);
    _exit(0);
  }
  if (rs_stop_within(pid, 2 * RS_SEC, &st) != 1) {
    rs_kill(pid);
    return 0;
  }
  return pid;
}

static void
s9(void)
{
  char name[64];
  pid_t c, o;
  int st;
  long long t;

  if (!RS_HAVE_STOP) {
    rs_skip("no crash points in this build");
    return;
  }
  /* a: stopped creator: an opener waits; continued: both succeed */
  ru_name(name, sizeof name, "snd9a");
  (void)pfutex_region_unlink(name);
  if (!(c = s9_stopped_creator(name, 0))) {
    rs_skip("the creator did not stop at region_creating");
    (void)pfutex_region_unlink(name);
    return;
  }
  o = s9_opener(name, 1);
  usleep(300 * 1000);
  rs_check(!sh->res[1].done, "9a: an opener of a region whose creator is stopped while it "
           "writes the layout waits (returned: %s)",
           sh->res[1].done ? pft_errname(sh->res[1].err) : "no");
  t = pft_now_ns();
  kill(c, SIGCONT);
  rs_end_within(c, 5 * RS_SEC, &st);
  rs_end_within(o, 5 * RS_SEC, &st);
  rs_check(sh->res[0].done && sh->res[0].err == 0, "9a: the continued creator's open succeeds (%s)",
           sh->res[0].done ? pft_errname(sh->res[0].err) : "did not return");
  rs_check(sh->res[1].done && sh->res[1].err == 0 && sh->res[1].t_done - t < 2 * RS_SEC,
           "9a: then the opener's succeeds (%s)",
           sh->res[1].done ? pft_errname(sh->res[1].err) : "did not return");
  rs_kill(c);
  rs_kill(o);
  (void)pfutex_region_unlink(name);

  /* b: the creator dies there: an opener learns it at once */
  ru_name(name, sizeof name, "snd9b");
  (void)pfutex_region_unlink(name);
  if (!(c = s9_stopped_creator(name, 0))) {
    rs_skip("the creator did not stop at region_creating");
    (void)pfutex_region_unlink(name);
    return;
  }
  rs_kill(c);
  t = pft_now_ns();
  o = s9_opener(name, 1);
  rs_end_within(o, 10 * RS_SEC, &st);
  rs_check(sh->res[1].done && sh->res[1].err == ENOTRECOVERABLE
           && sh->res[1].t_done - t < 2 * RS_SEC,
           "9b: an opener of a region whose creator died writing the layout gets "
           "ENOTRECOVERABLE within 2 s (%s after %.2f s)",
           sh->res[1].done ? pft_errname(sh->res[1].err) : "did not return",
           sh->res[1].done ? (double)(sh->res[1].t_done - t) / 1e9 : 0.0);
  rs_kill(o);
  (void)pfutex_region_unlink(name);
}

/* ---- 10. one region open many times in one process ------------------------------------------ */

#define S10_OPENS 20

static void
s10(void)
{
  char name[64];
  pfutex_region_t *h[S10_OPENS];
  uint32_t *w;
  struct pft_waiter wt;
  pid_t b;
  int i, n = 0, st, d;

  ru_name(name, sizeof name, "snd10");
  (void)pfutex_region_unlink(name);
  if (!(h[n++] = pfutex_region_open(name, 4096, O_RDWR | O_CREAT | O_EXCL, 0600))) {
    rs_check(0, "10: named region: %s", pft_errname(errno));
    return;
  }
  for (; n < S10_OPENS; n++)
    if (!(h[n] = pfutex_region_open(name, 0, O_RDWR, 0))) {
      rs_check(0, "10: open number %d: %s", n + 1, pft_errname(errno));
      break;
    }
  w = pfutex_region_addr(h[0]);
  memset(&wt, 0, sizeof wt);
  wt.uaddr = &w[8];
  wt.val = 0;
  pft_waiter_start(&wt);
  usleep(100 * 1000);
  memset((void *)&sh->res[0], 0, sizeof sh->res[0]);
  if ((b = rs_fork()) == 0) {
    pfutex_region_t *hb = pfutex_region_open(name, 0, O_RDWR, 0);
    long r = -1;
    if (hb) {
      r = pfutex_wake((uint32_t *)pfutex_region_addr(hb) + 8, ANY, 1, 0);
      sh->res[0].err = r < 0 ? errno : 0;
    } else {
      sh->res[0].err = errno;
    }
    sh->res[0].ret = r;
    __atomic_store_n(&sh->res[0].done, 1, __ATOMIC_SEQ_CST);
    _exit(0);
  }
  rs_end_within(b, 10 * RS_SEC, &st);
  d = s7_done_within(&wt, 1, 1, RS_STALL_NS);
  rs_check(sh->res[0].done && sh->res[0].ret == 1 && d == 1,
           "10: after %d opens of one region in a process, another process's wake(1) of its "
           "waiter counts 1 (%ld, %s) and the waiter returns (%d)", n, (long)sh->res[0].ret,
           pft_errname(sh->res[0].err), d);
  if (d == 0) {
    (void)pfutex_wake(&w[8], ANY, 1, 0);
    s7_done_within(&wt, 1, 1, 2 * RS_SEC);
  }
  pft_waiter_join(&wt);
  rs_kill(b);
  for (i = 0; i < n; i++)
    pfutex_region_close(h[i]);
  (void)pfutex_region_unlink(name);
}

struct rs_scen {
  int id;
  const char *name;
  void (*fn)(void);
};

static const struct rs_scen rs_scens[] = {
  { 1, "stopped lock holder", s1 },
  { 2, "pid reuse", s2 },
  { 3, "two regions, a hot thread on each", s3 },
  { 4, "header with user_size 0..3", s4 },
  { 5, "scribbled queue links", s5 },
  { 6, "exec ghost", s6 },
  { 7, "one region open twice", s7 },
  { 8, "fork child with a dead waiter's pid", s8 },
  { 9, "creator stopped, then killed, writing the layout", s9 },
  { 10, "one region open 20 times in a process", s10 },
};

static void
rs_run(const struct rs_scen *s)
{
  pid_t pid;
  int st, i, n, ended;
  long long t0 = pft_now_ns();

  memset(&sh->rep, 0, sizeof sh->rep);
  fflush(stdout);
  if ((pid = fork()) < 0)
    sysbail("fork");
  if (pid == 0) {
    setpgid(0, 0);
    s->fn();
    fflush(stdout);
    _exit(0);
  }
  setpgid(pid, pid);
  ended = rs_end_within(pid, RS_BUDGET_S * RS_SEC, &st);
  if (!ended) {
    kill(-pid, SIGKILL);
    rs_kill(pid);
  }
  n = sh->rep.n;
  for (i = 0; i < n; i++)
    ok(sh->rep.c[i].pass, "%d %s: %s", s->id, s->name, sh->rep.c[i].msg);
  if (!ended)
    ok(0, "%d %s: hung (killed after %d s)", s->id, s->name, RS_BUDGET_S);
  else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    ok(0, "%d %s: its process ended normally (%s)", s->id, s->name, rs_status(st));
  if (sh->rep.skip[0])
    skip("%d %s: %s", s->id, s->name, sh->rep.skip);
  else if (n == 0 && ended && WIFEXITED(st) && WEXITSTATUS(st) == 0)
    ok(0, "%d %s: no check ran", s->id, s->name);
  kill(-pid, SIGKILL);        /* anything it left */
  diag("scenario %d: %.1f s", s->id, (double)(pft_now_ns() - t0) / 1e9);
}

int
main(int argc, char **argv)
{
  const char *only = getenv("PFUTEX_SOUND_ONLY");
  ssize_t n;
  size_t i;

  if (argc >= 2 && strcmp(argv[1], "--idle") == 0) {
    /* an image that never opens a region (6: exec target; 2: a pid's new owner) */
    alarm(20);
    for (;;)
      pause();
  }
  /* before the library's fork handlers (8) */
  pthread_atfork(NULL, NULL, rs_atfork_child);
  if (argc == 4 && strcmp(argv[1], "--s4-peer") == 0)
    return s4_peer_main(argv[2], argv[3]);

  PFT_SKIP_UNDER_TSAN();
  plan_lazy();
  pft_watchdog(240);
  if (!pfutex_backend())
    skip_all("no backend");
  is_linux = ru_backend_is_linux();
  if ((n = readlink("/proc/self/exe", self_exe, sizeof self_exe - 1)) <= 0)
    sysbail("readlink /proc/self/exe");
  self_exe[n] = 0;
  sh = ru_shared_alloc(sizeof *sh);
  diag("backend %s%s", pfutex_backend(),
       RS_HAVE_STOP ? "" : " (no crash points: the stop scenarios skip under emulation)");
  for (i = 0; i < sizeof rs_scens / sizeof rs_scens[0]; i++) {
    if (only && *only && atoi(only) != rs_scens[i].id)
      continue;
    rs_run(&rs_scens[i]);
  }
  return 0;
}
#endif /* !_WIN32 */
