/* pft.c - pfutex test helpers. */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include "pft.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef __linux__
# include <sys/syscall.h>
#endif
#ifdef _WIN32
# include <windows.h>
/* ports/win32/park.c (linked into the tests with the library's core): is
 * Windows thread tid asleep in a park (WaitOnAddress or its semaphore)? */
int pf_win32_thread_parked(unsigned long tid);
#else
# include <sys/wait.h>
# ifdef PF_HAVE_EMU
/* src/thread.c (linked into the tests with the library's core): is the
 * thread whose pthread_self() is thr in a port's park? */
int pf_thread_parked(uintptr_t thr);
# endif
#endif
#if defined(HAVE_LINUX_SECCOMP_H) && defined(HAVE_LINUX_FILTER_H) && defined(HAVE_SYS_PRCTL_H)
# include <linux/filter.h>
# include <linux/seccomp.h>
# include <sys/prctl.h>
#endif

#define PFT_FUTEX_WAIT 0
#define PFT_FUTEX_WAIT_BITSET 9

static unsigned int pft_watchdog_secs = 60;

static pid_t pft_watchdog_tid;

static void *
pft_watchdog_main(void *arg)
{
  struct timespec ts;
  __atomic_store_n(&pft_watchdog_tid, pft_gettid(), __ATOMIC_SEQ_CST);
  ts.tv_sec = (time_t)(uintptr_t)arg;
  ts.tv_nsec = 0;
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
  printf("Bail out! watchdog: test still running after %lu s\n", (unsigned long)(uintptr_t)arg);
  fflush(stdout);
  _exit(254);
  return NULL;
}

void
pft_watchdog(unsigned int seconds)
{
  pthread_t t;
  const char *scale = getenv("PFUTEX_TEST_TIMEOUT_SCALE");
#ifndef _WIN32
  sigset_t all, old;
#endif
  if (scale && atoi(scale) > 0)
    seconds *= (unsigned int)atoi(scale);
  pft_watchdog_secs = seconds;
#ifdef _WIN32
  /* Windows: no signals to keep away from it; a thread like the others. */
  if (pthread_create(&t, NULL, pft_watchdog_main, (void *)(uintptr_t)seconds) != 0)
    sysbail("watchdog thread");
#else
  /* The watchdog must not take the tests' signals. */
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  if (pthread_create(&t, NULL, pft_watchdog_main, (void *)(uintptr_t)seconds) != 0)
    sysbail("watchdog thread");
  pthread_sigmask(SIG_SETMASK, &old, NULL);
#endif
  pthread_detach(t);
  /* Return once it sleeps: a fork right after this must not copy a lock
   * (ASan's allocator, say) the new thread holds while it starts. */
  while (!__atomic_load_n(&pft_watchdog_tid, __ATOMIC_SEQ_CST))
    sched_yield();
#ifndef _WIN32                 /* no fork on Windows; and it sleeps in no park */
  pft_wait_asleep(__atomic_load_n(&pft_watchdog_tid, __ATOMIC_SEQ_CST));
#endif
}

#ifdef _WIN32
/* Windows: no /proc.  A thread's id is GetCurrentThreadId(); "asleep" means
 * asleep in a park of the win32 port (pf_win32_thread_parked), the only
 * sleeps the tests wait for; other states are unknown ('?').  The process
 * itself (tid 0) is 'R' while it exists. */
pid_t
pft_gettid(void)
{
  return (pid_t)GetCurrentThreadId();
}

int
pft_task_state(pid_t pid, pid_t tid)
{
  if (pid && (DWORD)pid != GetCurrentProcessId())
    return -1;
  if (!tid)
    return 'R';
  return pf_win32_thread_parked((unsigned long)tid) ? 'S' : '?';
}

int
pft_wait_asleep(pid_t tid)
{
  /* Two consecutive samples parked; about 15 s at most (the watchdogs
   * fire before that). */
  int seen = 0;
  long tries;
  for (tries = 0; tries < 75000; tries++) {
    if (pf_win32_thread_parked((unsigned long)tid)) {
      if (++seen >= 2)
        return 0;
    } else {
      seen = 0;
    }
    sched_yield();
    usleep(200);
  }
  return -1;
}
#else
pid_t
pft_gettid(void)
{
#ifdef __linux__
  return (pid_t)syscall(SYS_gettid);
#else
  return getpid();            /* elsewhere (a macOS build): no thread ids in /proc to look up */
#endif
}

ssize_t
pft_read_file(const char *path, char *buf, size_t size)
{
  ssize_t n;
  int fd;
  if (size < 2 || (fd = open(path, O_RDONLY)) < 0)
    return -1;
  n = read(fd, buf, size - 1);
  close(fd);
  if (n <= 0)
    return -1;
  buf[n] = 0;
  return n;
}

void
pft_await_queued(uint32_t *u, int n)
{
  const struct timespec *all = (const struct timespec *)(uintptr_t)0x7fffffff;
  long tries;
  for (tries = 0; tries < 20000; tries++) {
    int moved = (int)pfutex(u, 3, 0, all, u + 8, 0), back = 0, r;   /* FUTEX_REQUEUE */
    while (back < moved && (r = (int)pfutex(u + 8, 3, 0, all, u, 0)) > 0)
      back += r;
    if (moved >= n)
      return;
    usleep(500);
  }
  diag("only some of %d waiters queued on the word", n);
}

int
pft_task_state(pid_t pid, pid_t tid)
{
  char path[96], proc[32], buf[512], *p;
  if (pid)
    snprintf(proc, sizeof proc, "/proc/%d", (int)pid);
  else
    snprintf(proc, sizeof proc, "/proc/self");
  if (tid)
    snprintf(path, sizeof path, "%s/task/%d/stat", proc, (int)tid);
  else
    snprintf(path, sizeof path, "%s/stat", proc);
  if (pft_read_file(path, buf, sizeof buf) < 0)
    return -1;
  p = strrchr(buf, ')');   /* comm may hold spaces */
  return p && p[1] == ' ' ? p[2] : -1;
}

int
pft_wait_asleep(pid_t tid)
{
  /* Two consecutive samples asleep, to step over a brief sleep elsewhere. */
  int seen = 0;
  for (;;) {
    int st = pft_task_state(0, tid);
    if (st == 'S' || st == 'D') {
      if (++seen >= 2)
        return 0;
    } else {
      seen = 0;
    }
    if (st < 0)
      return -1;
    sched_yield();
    usleep(200);
  }
}

#endif /* !_WIN32 */

#ifdef _WIN32
void
pft_install(int sig, void (*fn)(int), int flags)
{
  (void)fn; (void)flags;
  bail("pft_install(%d): no POSIX signal handlers on Windows", sig);
}
#else
void
pft_install(int sig, void (*fn)(int), int flags)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = fn;
  sa.sa_flags = flags;
  sigemptyset(&sa.sa_mask);
  if (sigaction(sig, &sa, NULL) != 0)
    sysbail("sigaction");
}
#endif

void
pft_settle_threads(void)
{
#ifdef _WIN32
  return;                      /* no fork on Windows */
#else
  DIR *d = opendir("/proc/self/task");
  struct dirent *e;
  pid_t self = pft_gettid();
  if (!d)
    return;
  while ((e = readdir(d)) != NULL) {
    pid_t t = (pid_t)atoi(e->d_name);
    if (t > 0 && t != self)
      pft_wait_asleep(t);
  }
  closedir(d);
#endif
}

const char *
pft_errname(int e)
{
  switch (e) {
  case 0: return "0";
  case EFAULT: return "EFAULT";
  case EINVAL: return "EINVAL";
  case ENOSYS: return "ENOSYS";
  case EAGAIN: return "EAGAIN";
  case ETIMEDOUT: return "ETIMEDOUT";
  case EINTR: return "EINTR";
  case ENOMEM: return "ENOMEM";
  case EPERM: return "EPERM";
  case EDEADLK: return "EDEADLK";
  case ESRCH: return "ESRCH";
  default: return strerror(e);
  }
}

long long
pft_now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int
pft_backend_is_emu(void)
{
  const char *b = pfutex_backend();
  return b && strncmp(b, "emu:", 4) == 0;
}

const char *
pft_emulator(void)
{
  const char *e = getenv("PFUTEX_TEST_EMULATOR");
  return e && *e ? e : NULL;
}

const char *
pft_seccomp_unavailable(void)
{
#if defined(HAVE_LINUX_SECCOMP_H) && defined(HAVE_LINUX_FILTER_H) && defined(HAVE_SYS_PRCTL_H) && !defined(_WIN32)
  static char why[256];
  int st;
  pid_t pid = fork();
  if (pid == 0) {
    struct sock_filter allow = BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog prog;
    prog.len = 1;
    prog.filter = &allow;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
      _exit(errno);
    _exit(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0 ? 0 : errno);
  }
  if (pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0)
    return NULL;
  snprintf(why, sizeof why, "%s%s%s",
           pid > 0 && WIFEXITED(st) ? strerror(WEXITSTATUS(st)) : "no child",
           pft_emulator() ? ", under " : "", pft_emulator() ? pft_emulator() : "");
  return why;
#else
  return "no seccomp on this system";
#endif
}

uint32_t
pft_kernel_wake_op_wrong(void)
{
#if defined(__linux__) && defined(SYS_futex)
  static uint32_t w1, w2;
  long r;
  w1 = 0;
  w2 = 1;
  /* FUTEX_WAKE_OP_PRIVATE, nobody waiting: ADD 1 to w2 (compare EQ 0) */
  r = syscall(SYS_futex, &w1, 5 | 128, 0, (void *)0, &w2, (1u << 28) | (1u << 12) | 0u);
  if (r < 0 || w2 == 2)
    return 0;
  return w2;
#else
  return 0;
#endif
}

#ifdef __linux__
/* Copy n bytes from src through a pipe: the kernel reads them, so an
 * unreadable src gives -1 (EFAULT), never a signal. */
static int
pft_copy_in(void *dst, const void *src, size_t n)
{
  int fds[2], good;
  if (pipe(fds) != 0)
    return -1;
  good = write(fds[1], src, n) == (ssize_t)n && read(fds[0], dst, n) == (ssize_t)n;
  close(fds[0]);
  close(fds[1]);
  return good ? 0 : -1;
}
#endif

long
pft_sys_futex_wait(uint32_t *uaddr, uint32_t val, uint32_t mask, unsigned int flags,
                   const struct timespec *ts, int clockid)
{
#ifdef __linux__
  struct { int64_t tv_sec, tv_nsec; } k;   /* struct __kernel_timespec */
  const void *kts = ts;
  struct timespec t;
  if (ts && sizeof ts->tv_sec < sizeof k.tv_sec && pft_copy_in(&t, ts, sizeof t) == 0) {
    k.tv_sec = t.tv_sec;
    k.tv_nsec = t.tv_nsec;
    kts = &k;
  }
  return syscall(455, uaddr, (unsigned long)val, (unsigned long)mask, flags | 0x02u, kts, clockid);
#else
  (void)uaddr; (void)val; (void)mask; (void)flags; (void)ts; (void)clockid;
  errno = ENOSYS;
  return -1;
#endif
}

int
pft_skip_wake_op(int n)
{
  const char *b = pfutex_backend();
  uint32_t wrong;
  if (!b || strncmp(b, "linux", 5) != 0 || (wrong = pft_kernel_wake_op_wrong()) == 0)
    return 0;
  while (n-- > 0)
    skip("the kernel's FUTEX_WAKE_OP stores 0x%08x for 1 + 1 here (under %s): the native "
         "backend's WAKE_OP is the kernel's", (unsigned)wrong,
         pft_emulator() ? pft_emulator() : "no emulator");
  return 1;
}

int
pft_is_ret(long got, int got_errno, long want_ret, int want_errno, const char *what)
{
  if (want_ret == -1) {
    int r = ok(got == -1 && got_errno == want_errno, "%s: -1/%s", what, strerror(want_errno));
    if (!r)
      diag("    got %ld, errno %d (%s)", got, got_errno, strerror(got_errno));
    return r;
  }
  {
    int r = ok(got == want_ret, "%s: %ld", what, want_ret);
    if (!r)
      diag("    got %ld, errno %d (%s)", got, got_errno, got == -1 ? strerror(got_errno) : "-");
    return r;
  }
}

static void *
pft_waiter_main(void *arg)
{
  struct pft_waiter *w = arg;
  int op = (w->bitset ? PFT_FUTEX_WAIT_BITSET : PFT_FUTEX_WAIT) | w->op_flags;
  w->tid = pft_gettid();
  __atomic_store_n(&w->started, 1, __ATOMIC_SEQ_CST);
  errno = 0;
  w->ret = pfutex(w->uaddr, op, w->val, w->timeout, NULL, w->bitset);
  w->err = errno;
  __atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

#if !defined(_WIN32) && defined(PF_HAVE_EMU)
/* Asleep is not yet queued: a thread may sleep elsewhere first (a page
 * fault, a lock, its first wait's allocation), and a wake then finds
 * nobody; CI saw it once (readonly's first waiter under emu:futex, the
 * wake returned 0 and the waiter slept on).  Under an emulated backend
 * wait until the engine says the thread is in its park (queued before
 * that: src/wait.c), or it is asleep in a system call whose first
 * argument is the word (a word the OS's own futex keeps).  After 2 s of
 * neither, the answer "asleep" stands (said in a diagnostic). */
static int
pft_in_syscall_on(pid_t tid, const void *addr)
{
  char path[96], buf[256];
  unsigned long long a0 = 0;
  long nr = -1;
  snprintf(path, sizeof path, "/proc/self/task/%d/syscall", (int)tid);
  if (pft_read_file(path, buf, sizeof buf) < 0)
    return 0;
  return sscanf(buf, "%ld %llx", &nr, &a0) == 2 && nr >= 0
         && (uintptr_t)a0 == (uintptr_t)addr;
}

static void
pft_wait_parked(struct pft_waiter *w)
{
  long long end = pft_now_ns() + 2000000000LL;
  while (!__atomic_load_n(&w->done, __ATOMIC_SEQ_CST)) {
    if (pf_thread_parked((uintptr_t)w->thread) || pft_in_syscall_on(w->tid, w->uaddr))
      return;
    if (pft_now_ns() > end) {
      diag("pft_waiter_start: thread %d asleep 2 s but not in a park of the engine, nor in a "
           "system call on its word: taken as waiting", (int)w->tid);
      return;
    }
    usleep(100);
  }
}
#endif

void
pft_waiter_start(struct pft_waiter *w)
{
#if !defined(_WIN32) && defined(PF_HAVE_EMU)
  /* asked before the thread runs: its first op may be what selects the
   * backend (under pthread_once; helgrind sees no order for a read of the
   * name from here meanwhile) */
  int emu = pft_backend_is_emu();
#endif
  w->started = w->done = 0;
  if (pthread_create(&w->thread, NULL, pft_waiter_main, w) != 0)
    sysbail("pthread_create");
  while (!__atomic_load_n(&w->started, __ATOMIC_SEQ_CST))
    sched_yield();
  if (pft_wait_asleep(w->tid) != 0 && !__atomic_load_n(&w->done, __ATOMIC_SEQ_CST))
    bail("waiter thread %d vanished", (int)w->tid);
#if !defined(_WIN32) && defined(PF_HAVE_EMU)
  if (emu)
    pft_wait_parked(w);
#endif
}

long
pft_waiter_join(struct pft_waiter *w)
{
  pthread_join(w->thread, NULL);
  return w->ret;
}

int
pft_count_done(struct pft_waiter *ws, int n)
{
  int i, c = 0;
  for (i = 0; i < n; i++)
    c += __atomic_load_n(&ws[i].done, __ATOMIC_SEQ_CST) != 0;
  return c;
}

void
pft_wait_done(struct pft_waiter *ws, int n, int expect)
{
  while (pft_count_done(ws, n) < expect)
    usleep(100);
}

void
pft_timespec_add_ns(struct timespec *ts, long long ns)
{
  long long t = (long long)ts->tv_nsec + ns;
  ts->tv_sec += (time_t)(t / 1000000000LL);
  ts->tv_nsec = (long)(t % 1000000000LL);
  if (ts->tv_nsec < 0) {
    ts->tv_nsec += 1000000000L;
    ts->tv_sec--;
  }
}

long long
pft_elapsed_ns(const struct timespec *a, const struct timespec *b)
{
  return (long long)(b->tv_sec - a->tv_sec) * 1000000000LL + (b->tv_nsec - a->tv_nsec);
}

int
pft_have_waitv(void)
{
  static uint32_t word;
  struct pfutex_waitv v;
  memset(&v, 0, sizeof v);
  v.uaddr = (uintptr_t)&word;
  v.val = 1;                                /* a mismatch: EAGAIN at once */
  v.flags = PFUTEX2_SIZE_U32 | PFUTEX2_PRIVATE;
  errno = 0;
  return pfutex_waitv(&v, 1, 0, NULL, PFUTEX_CLOCK_MONOTONIC) == -1 && errno == EAGAIN;
}
