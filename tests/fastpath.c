/* fastpath: under emulation, a wait whose value does not match and a
 * private wake that finds no waiter make no system call (the fast paths in
 * wait.c and wake.c), nor does an uncontended PI lock, trylock or unlock of
 * a private word (pi.c (F)); a shared wake outside regions that finds no waiter
 * makes one, the mapping query (which object, issue 20: ports/linux/objid.c),
 * and no other.  A forked child runs them under a seccomp filter that traps every
 * system call but exit/exit_group/rt_sigreturn, and exits with the number of
 * traps.  A control child makes one raw syscall to show the filter counts. */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs seccomp and fork() (counts system calls on the fast paths)");
  return 0;
}
#else
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "pft.h"
#include "os.h"
#include "pfutex/linux.h"

#if defined(HAVE_LINUX_SECCOMP_H) && defined(HAVE_LINUX_FILTER_H) && defined(HAVE_SYS_PRCTL_H) \
    && (defined(__x86_64__) || defined(__i386__))
# include <linux/audit.h>
# include <linux/filter.h>
# include <linux/seccomp.h>
# include <sys/prctl.h>
# include <sys/syscall.h>
# define FP_HAVE_SECCOMP 1
#endif

#define FP_ITERS 10000
#define FP_BAD_RESULT 250   /* child exit: a call returned the wrong thing */

#ifdef FP_HAVE_SECCOMP
# if defined(__x86_64__) && !defined(__ILP32__)
#  define FP_ARCH AUDIT_ARCH_X86_64
# elif defined(__i386__)
#  define FP_ARCH AUDIT_ARCH_I386
# else
#  define FP_ARCH AUDIT_ARCH_X86_64   /* x32 uses the x86_64 arch value */
# endif

static volatile sig_atomic_t fp_traps;

static void
fp_on_sigsys(int sig)
{
  (void)sig;
  fp_traps++;
}

#ifdef SYS_sigreturn
# define FP_NR_SIGRETURN SYS_sigreturn
#else
# define FP_NR_SIGRETURN SYS_rt_sigreturn
#endif

/* The mapping query a shared op outside regions makes (ports/linux/objid.c:
 * the PROCMAP_QUERY ioctl on /proc/self/maps), let through by the filter
 * of the shared-wake child. */
#define FP_PROCMAP_QUERY 0xC0686611u
static int fp_allow_query;

/* Install the SIGSYS handler, then the filter; returns 0 or -1 (errno). */
static int
fp_install_filter(void)
{
  struct sock_filter f[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FP_ARCH, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit_group, 7, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_exit, 6, 0),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rt_sigreturn, 5, 0),
    /* i386 returns from a plain (non-SA_SIGINFO) handler with sigreturn */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FP_NR_SIGRETURN, 4, 0),
    /* the shared-wake child: ioctl(fd, PROCMAP_QUERY, ...) */
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, fp_allow_query ? SYS_ioctl : 0xffffffffu, 0, 2),
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FP_PROCMAP_QUERY, 1, 0),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog;
  struct sigaction sa;

  memset(&sa, 0, sizeof sa);
  sa.sa_handler = fp_on_sigsys;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSYS, &sa, NULL) != 0)
    return -1;
  prog.len = (unsigned short)(sizeof f / sizeof f[0]);
  prog.filter = f;
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
    return -1;
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
    return -1;
  return 0;
}

static void
fp_exit_count(int bad)
{
  sig_atomic_t n = fp_traps;
  if (bad)
    _exit(FP_BAD_RESULT);
  _exit(n > 249 ? 249 : (int)n);
}

/* The fast paths.  errno is thread-local memory: setting it is no syscall. */
static void
fp_child_fastpaths(uint32_t *word)
{
  int i, bad = 0;
  uint32_t v = *word + 1;            /* never matches */

  for (i = 0; i < FP_ITERS; i++) {
    if (pfutex(word, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0) != -1 || errno != EAGAIN)
      bad = 1;
    if (pfutex(word, FUTEX_WAIT, v, NULL, NULL, 0) != -1 || errno != EAGAIN)
      bad = 1;
    if (pfutex_wait(word, v, PFUTEX_BITSET_MATCH_ANY, PFUTEX_PRIVATE, NULL,
                    PFUTEX_CLOCK_MONOTONIC) != -1 || errno != EAGAIN)
      bad = 1;
    if (pfutex_wait(word, v, PFUTEX_BITSET_MATCH_ANY, PFUTEX_SHARED, NULL,
                    PFUTEX_CLOCK_MONOTONIC) != -1 || errno != EAGAIN)
      bad = 1;
  }
  for (i = 0; i < FP_ITERS; i++) {
    if (pfutex(word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0) != 0)
      bad = 1;
    if (pfutex(word, FUTEX_WAKE_BITSET_PRIVATE, 0x7fffffff, NULL, NULL, 1) != 0)
      bad = 1;
    if (pfutex_wake(word, PFUTEX_BITSET_MATCH_ANY, 1, PFUTEX_PRIVATE) != 0)
      bad = 1;
  }
  fp_exit_count(bad);
}

/* Shared empty wakes outside regions: the word's mapping must be asked
 * (private, or which object: issue 20), one PROCMAP_QUERY ioctl, which the
 * filter lets through; nothing else.  The first wake, before the filter,
 * opens the descriptor. */
static void
fp_child_shared_wakes(uint32_t *word)
{
  int i, bad = 0;
  for (i = 0; i < FP_ITERS; i++) {
    if (pfutex(word, FUTEX_WAKE, 1, NULL, NULL, 0) != 0)
      bad = 1;
    if (pfutex_wake(word, PFUTEX_BITSET_MATCH_ANY, 0x7fffffff, PFUTEX_SHARED) != 0)
      bad = 1;
  }
  fp_exit_count(bad);
}

/* Uncontended PI ops on a private word (pi.c (F)): lock, trylock, lock2
 * and unlock each take or free a free word with no system call (the
 * caller's id is cached; the word's write check is the guarded touch).
 * The word must read our id after each lock and 0 after each unlock. */
static void
fp_child_pi(uint32_t *word)
{
  int i, bad = 0;
  uint32_t me = (uint32_t)pfutex_tid();
  *word = 0;
  for (i = 0; i < FP_ITERS; i++) {
    if (pfutex(word, FUTEX_LOCK_PI_PRIVATE, 0, NULL, NULL, 0) != 0 || *word != me)
      bad = 1;
    if (pfutex(word, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0) != 0 || *word != 0)
      bad = 1;
    if (pfutex(word, FUTEX_TRYLOCK_PI_PRIVATE, 0, NULL, NULL, 0) != 0 || *word != me)
      bad = 1;
    if (pfutex(word, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0) != 0 || *word != 0)
      bad = 1;
    if (pfutex(word, FUTEX_LOCK_PI2 | FUTEX_PRIVATE_FLAG, 0, NULL, NULL, 0) != 0 || *word != me)
      bad = 1;
    if (pfutex(word, FUTEX_UNLOCK_PI_PRIVATE, 0, NULL, NULL, 0) != 0 || *word != 0)
      bad = 1;
  }
  fp_exit_count(bad);
}

/* Runs `body` in a filtered child; returns its wait status. */
static int
fp_run_child(void (*body)(uint32_t *), uint32_t *word)
{
  int status;
  pid_t pid = fork();
  if (pid < 0)
    sysbail("fork");
  if (pid == 0) {
    alarm(20);                       /* our own watchdog, set before the filter */
    if (fp_allow_query)
      (void)pfutex(word, FUTEX_WAKE, 1, NULL, NULL, 0);   /* the query's descriptor */
    (void)pfutex_tid();              /* the child's id, asked once (then cached) */
    if (fp_install_filter() != 0)
      _exit(251);
    body(word);
    _exit(252);
  }
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      sysbail("waitpid");
  return status;
}

static void
fp_child_control(uint32_t *word)
{
  (void)word;
  syscall(SYS_getpid);
  fp_exit_count(0);
}

static void
fp_report(int status, const char *what)
{
  if (WIFSIGNALED(status))
    diag("%s: killed by signal %d", what, WTERMSIG(status));
  else if (WIFEXITED(status) && WEXITSTATUS(status) == FP_BAD_RESULT)
    diag("%s: a call returned a wrong result", what);
  else if (WIFEXITED(status) && WEXITSTATUS(status) == 251)
    diag("%s: could not install the seccomp filter", what);
}
#endif /* FP_HAVE_SECCOMP */

int
main(void)
{
#ifdef FP_HAVE_SECCOMP
  static uint32_t word = 7, pi_word;
  int st;
  const char *no_filter;
#endif

  if (!pft_backend_is_emu())
    skip_all("emulation only (backend %s)", pfutex_backend() ? pfutex_backend() : "none");
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  skip_all("sanitizer runtimes make system calls of their own");
#endif
#if defined(__has_feature)
# if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  skip_all("sanitizer runtimes make system calls of their own");
# endif
#endif
#ifndef FP_HAVE_SECCOMP
  skip_all("needs seccomp on x86");
#else
  if ((no_filter = pft_seccomp_unavailable()) != NULL)
    skip_all("cannot install a seccomp filter here (%s)", no_filter);
  plan(8);
  pft_watchdog(60);

  /* Warm up: the backend's one-time init makes system calls; so does the
   * first mapping query (the reader's probe). */
  pfutex(&word, FUTEX_WAIT_PRIVATE, word + 1, NULL, NULL, 0);
  pfutex(&word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
  pfutex(&word, FUTEX_WAKE, 1, NULL, NULL, 0);

  st = fp_run_child(fp_child_control, &word);
  fp_report(st, "control");
  ok(WIFEXITED(st) && WEXITSTATUS(st) != 251, "control child ran under the filter");
  ok(WIFEXITED(st) && WEXITSTATUS(st) >= 1 && WEXITSTATUS(st) < 250,
     "control: one raw getpid is trapped and counted");

  st = fp_run_child(fp_child_fastpaths, &word);
  fp_report(st, "fast paths");
  ok(WIFEXITED(st), "fast-path child exited normally");
  is_int(0, WIFEXITED(st) ? WEXITSTATUS(st) : -1,
         "%d mismatched waits (private and shared) and %d private empty wakes: no system call",
         4 * FP_ITERS, 3 * FP_ITERS);

  st = fp_run_child(fp_child_pi, &pi_word);
  fp_report(st, "PI ops");
  ok(WIFEXITED(st), "PI child exited normally");
  is_int(0, WIFEXITED(st) ? WEXITSTATUS(st) : -1,
         "%d uncontended PI lock, trylock and lock2 each with its unlock, private word: "
         "no system call", 3 * FP_ITERS);

  if (pf_os_objid_reader() != 1) {
    skip("shared empty wakes: this kernel has no PROCMAP_QUERY (the mapping is read from "
         "/proc/self/maps: several system calls a wake)");
    skip("(the same)");
  } else {
    fp_allow_query = 1;
    st = fp_run_child(fp_child_shared_wakes, &word);
    fp_report(st, "shared wakes");
    ok(WIFEXITED(st), "shared-wake child exited normally");
    is_int(0, WIFEXITED(st) ? WEXITSTATUS(st) : -1,
           "%d shared empty wakes of a private mapping's word: no system call but the mapping "
           "query (PROCMAP_QUERY)",
           2 * FP_ITERS);
  }
  return 0;
#endif
}
#endif /* !_WIN32 */
