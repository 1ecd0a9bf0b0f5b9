/* posix.h - the POSIX names the library's sources use, on Windows
 * (mingw-w64 + winpthreads).  Included by src/pf.h when _WIN32 is defined;
 * the implementations that need <windows.h> are in ports/win32/os.c, so
 * this header never pulls <windows.h> into the engine.
 *
 * What Windows has instead of POSIX signals: nothing that interrupts a
 * thread.  The C runtime's signal() handlers (SIGINT, SIGBREAK) run on a
 * thread of their own, never on a thread asleep in a park, so no park ever
 * ends with EINTR (the win32 port never returns -EINTR) and no pfutex call
 * ever runs "inside a handler" on a waiting thread.  Hence:
 *   - signal sets are plain bit masks, and blocking them is a no-op
 *     (winpthreads' pthread_sigmask is already a macro for 0);
 *   - sigaction() reports every signal as having no handler (ENOSYS), so
 *     src/thread.c's pf_sig_handler_possible() is 0 and
 *     pf_sig_restartable() is 1;
 *   - there is no fork: pthread_atfork is winpthreads' macro for 0.
 */
#ifndef PF_WIN32_POSIX_H
#define PF_WIN32_POSIX_H

#include <errno.h>
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

/* Signal numbers mingw-w64's <signal.h> lacks (Linux's values; only ever
 * put in or taken out of a mask here). */
#ifndef SIGTRAP
# define SIGTRAP 5
#endif
#ifndef SIGBUS
# define SIGBUS 7
#endif
#ifndef SIGKILL
# define SIGKILL 9
#endif
#ifndef SIGSYS
# define SIGSYS 12
#endif
#ifndef SIGSTOP
# define SIGSTOP 19
#endif
#ifndef SIG_BLOCK
# define SIG_BLOCK 0
# define SIG_UNBLOCK 1
# define SIG_SETMASK 2
#endif
#ifndef SA_RESTART
# define SA_RESTART 0x10000000
# define SA_SIGINFO 0x00000004
#endif

/* sigset_t: mingw-w64's _sigset_t (an integer of at least 32 bits), which
 * <sys/types.h> names sigset_t only under _POSIX. */
#ifndef _POSIX
typedef _sigset_t sigset_t;
#endif
static inline int pf_w32_sigbit_ok(int s) { return s > 0 && s <= 32; }
static inline int sigemptyset(sigset_t *s) { *s = 0; return 0; }
static inline int sigfillset(sigset_t *s) { *s = (sigset_t)0xffffffffu; return 0; }
static inline int
sigaddset(sigset_t *s, int sig)
{
  if (!pf_w32_sigbit_ok(sig)) { errno = EINVAL; return -1; }
  *s |= (sigset_t)1 << (sig - 1);
  return 0;
}
static inline int
sigdelset(sigset_t *s, int sig)
{
  if (!pf_w32_sigbit_ok(sig)) { errno = EINVAL; return -1; }
  *s &= ~((sigset_t)1 << (sig - 1));
  return 0;
}
static inline int
sigismember(const sigset_t *s, int sig)
{
  if (!pf_w32_sigbit_ok(sig)) { errno = EINVAL; return -1; }
  return (*s >> (sig - 1)) & 1;
}

/* No handler can interrupt a thread (see above): sigaction answers ENOSYS,
 * which src/thread.c reads as "no handler". */
struct sigaction {
  void (*sa_handler)(int);
  sigset_t sa_mask;
  int sa_flags;
};
static inline int
sigaction(int sig, const struct sigaction *sa, struct sigaction *old)
{
  (void)sig; (void)sa; (void)old;
  errno = ENOSYS;
  return -1;
}

/* Signal masks: nothing to block; the old mask reads as empty (winpthreads'
 * own pthread_sigmask is a macro for 0 that leaves it unset). */
#include <pthread.h>
/* No fork: winpthreads' pthread_atfork is a macro for 0 that drops its
 * arguments; this one uses them (no "defined but not used" handlers). */
#undef pthread_atfork
#define pthread_atfork(p, a, c) ((void)(p), (void)(a), (void)(c), 0)
#undef pthread_sigmask
static inline int
pthread_sigmask(int how, const sigset_t *set, sigset_t *old)
{
  (void)how; (void)set;
  if (old)
    *old = 0;
  return 0;
}

/* No alternate signal stacks either: sigaltstack says so (ENOSYS), and a
 * caller then knows it is not on one. */
#ifndef SS_ONSTACK
# define SS_ONSTACK 1
# define SS_DISABLE 2
typedef struct { void *ss_sp; int ss_flags; size_t ss_size; } stack_t;
#endif
static inline int
sigaltstack(const stack_t *ss, stack_t *old)
{
  (void)ss;
  if (old) { old->ss_sp = NULL; old->ss_flags = SS_DISABLE; old->ss_size = 0; }
  errno = ENOSYS;
  return -1;
}

/* posix_memalign: _aligned_malloc (the library never frees what it takes
 * this way; a caller that did would need _aligned_free). */
#include <malloc.h>
static inline int
pf_win32_posix_memalign(void **p, size_t align, size_t n)
{
  void *m = _aligned_malloc(n ? n : 1, align);
  if (!m)
    return ENOMEM;
  *p = m;
  return 0;
}
#define posix_memalign pf_win32_posix_memalign

/* kill(): sig 0 asks whether pid is alive (OpenProcess + GetExitCodeProcess),
 * SIGKILL ends a process (TerminateProcess; the crash points kill their
 * own process this way); anything else: EINVAL.  ports/win32/os.c. */
int pf_win32_kill(int pid, int sig);
#define kill(p, s) pf_win32_kill((int)(p), (s))

/* sysconf(): the page size (the allocation granularity: a view of a file
 * mapping starts at a multiple of it) and the CPU count. */
#define _SC_PAGESIZE 30
#define _SC_NPROCESSORS_CONF 83
#define _SC_NPROCESSORS_ONLN 84
long pf_win32_sysconf(int name);
#define sysconf(n) pf_win32_sysconf(n)

#endif
