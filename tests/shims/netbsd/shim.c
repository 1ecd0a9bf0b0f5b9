/* shim.c - a model of NetBSD's __futex system call on Linux futexes, for
 * testing the netbsd port on Linux (configure --enable-test-shims=netbsd).
 *
 * What it models (NetBSD/src sys/kern/sys_futex.c rev 1.18, sys/sys/futex.h
 * rev 1.6), and how:
 *   - Seven arguments; Linux's op numbers and flags (shim.h).  -1/errno.
 *   - FUTEX_WAIT: EAGAIN if *uaddr != val (futex_func_wait tests first);
 *     the timeout is RELATIVE (TIMER_RELTIME), on CLOCK_MONOTONIC, or on
 *     CLOCK_REALTIME with FUTEX_CLOCK_REALTIME (do_futex takes the flag for
 *     every op, unlike Linux, where FUTEX_WAIT|FUTEX_CLOCK_REALTIME is
 *     ENOSYS).  An invalid relative timeout is EINVAL (itimespecfix).
 *   - FUTEX_WAIT_BITSET: the timeout is an ABSOLUTE deadline on that clock
 *     (TIMER_ABSTIME); bitset (val3) 0 is EINVAL.
 *   - Signals: the wait sleeps in cv_timedwait_sig / cv_wait_sig, which
 *     give ERESTART when the signal's handler has SA_RESTART
 *     (kern_sleepq.c sleepq_sigtoerror) and EINTR otherwise; futex_wait
 *     passes ERESTART on, so the system call is RESTARTED after the
 *     handler, timed or not: FUTEX_WAIT recomputes its relative timeout
 *     from the restart (the whole timeout again), FUTEX_WAIT_BITSET keeps
 *     its deadline; the restart tests the word again (EAGAIN if it
 *     changed).  The shim sleeps in a Linux wait that always has a
 *     deadline, so Linux ends it with EINTR after any handler, and then
 *     guesses whether the handler had SA_RESTART: yes when every handler
 *     that could have run in this thread (unblocked, with a handler, the
 *     synchronous fault signals excepted) has SA_RESTART.  Exact when the
 *     process's handlers agree, which the suite's tests arrange.
 *   - FUTEX_WAKE / FUTEX_WAKE_BITSET: val < 0 is EINVAL; returns how many
 *     were woken.  REQUEUE, CMP_REQUEUE, WAKE_OP: passed to Linux (unused
 *     by the port); others ENOSYS.
 *   - Keys: FUTEX_PRIVATE_FLAG -> a Linux private futex (NetBSD keys it by
 *     vmspace and address); without it -> a Linux shared futex (NetBSD:
 *     uvm_voaddr, the object and offset), so waits and wakes meet across
 *     fork and exec.
 *   - Spurious wakeups: every nth wait that would sleep returns 0 at once.
 */
#include "pf.h"
#include "sys.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <time.h>

#include "shim.h"

static AO_t pf_shim_spurious_n = 4;
static AO_t pf_shim_count;
static AO_t pf_shim_restart_count;
static pthread_once_t pf_shim_once = PTHREAD_ONCE_INIT;

static void
pf_shim_env(void)
{
  const char *s = getenv("PF_SHIM_SPURIOUS");
  if (s && *s)
    AO_store(&pf_shim_spurious_n, (AO_t)strtoul(s, NULL, 10));
  pf_linux_sys_init();
}

void
pf_shim_netbsd_set_spurious(unsigned int n)
{
  pthread_once(&pf_shim_once, pf_shim_env);
  AO_store(&pf_shim_spurious_n, n);
}

unsigned long
pf_shim_netbsd_restarts(void)
{
  return (unsigned long)AO_load(&pf_shim_restart_count);
}

/* Would NetBSD have restarted the call (ERESTART)?  (header comment) */
static int
pf_shim_restartable(void)
{
  static const int faults[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS };
  sigset_t blocked;
  int sig, cs;
  size_t i;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs);
  if (pthread_sigmask(SIG_BLOCK, NULL, &blocked) != 0)
    sigemptyset(&blocked);
  for (sig = 1; sig < NSIG; sig++) {
    struct sigaction sa;
    int fault = 0;
    for (i = 0; i < sizeof faults / sizeof faults[0]; i++)
      fault |= sig == faults[i];
    if (fault || sig == SIGKILL || sig == SIGSTOP || sigismember(&blocked, sig) == 1
        || sigaction(sig, NULL, &sa) != 0)
      continue;
    if (((sa.sa_flags & SA_SIGINFO) || (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN))
        && !(sa.sa_flags & SA_RESTART)) {
      pthread_setcancelstate(cs, NULL);
      return 0;
    }
  }
  pthread_setcancelstate(cs, NULL);
  return 1;
}

static int
pf_shim_valid(const struct timespec *ts)
{
  return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < 1000000000L;
}

static int
pf_shim_wait(uint32_t *uaddr, int op, uint32_t val, const struct timespec *timeout,
             uint32_t bitset, int absolute)
{
  /* No timeout: still a Linux deadline, so a handler always ends it. */
  static const struct timespec never = { 0x3fffffff, 0 };
  int lflags = (op & FUTEX_PRIVATE_FLAG) ? PF_OP_PRIVATE_FLAG : 0;
  clockid_t clk = (op & FUTEX_CLOCK_REALTIME) ? CLOCK_REALTIME : CLOCK_MONOTONIC;
  struct timespec dl;
  unsigned long n;
  long r;

  if (bitset == 0)
    return EINVAL;
  if (AO_int_load((volatile unsigned int *)uaddr) != val)
    return EAGAIN;
  if (timeout && !pf_shim_valid(timeout))
    return EINVAL;
  n = (unsigned long)AO_load(&pf_shim_spurious_n);
  if (n && (unsigned long)AO_fetch_and_add1(&pf_shim_count) % n == n - 1)
    return 0;                            /* a spurious wakeup */
  for (;;) {                             /* once per (re)start of the call */
    if (!timeout) {
      dl = never;
      clk = CLOCK_MONOTONIC;
    } else if (absolute) {
      dl = *timeout;
    } else {
      struct timespec now;
      clock_gettime(clk, &now);
      dl.tv_sec = now.tv_sec + timeout->tv_sec;
      dl.tv_nsec = now.tv_nsec + timeout->tv_nsec;
      if (dl.tv_nsec >= 1000000000L) {
        dl.tv_nsec -= 1000000000L;
        dl.tv_sec++;
      }
    }
    r = pf_linux_futex(uaddr, lflags | PF_OP_WAIT_BITSET
                              | (clk == CLOCK_REALTIME ? PF_OP_CLOCK_REALTIME : 0),
                       val, &dl, 0, NULL, bitset);
    if (r != -EINTR)
      break;
    if (!pf_shim_restartable())
      return EINTR;
    /* ERESTART: the system call starts over, testing the word first. */
    AO_fetch_and_add1(&pf_shim_restart_count);
    if (AO_int_load((volatile unsigned int *)uaddr) != val)
      return EAGAIN;
  }
  if (r == 0)
    return 0;
  return (int)-r;                        /* EAGAIN, ETIMEDOUT, EFAULT */
}

static long
pf_shim_futex(int *uaddr, int op, int val, const struct timespec *timeout, int *uaddr2,
              int val2, int val3)
{
  int lflags = (op & FUTEX_PRIVATE_FLAG) ? PF_OP_PRIVATE_FLAG : 0;
  long r;
  switch (op & FUTEX_CMD_MASK) {
  case FUTEX_WAIT:
    return -pf_shim_wait((uint32_t *)uaddr, op, (uint32_t)val, timeout, 0xffffffffu, 0);
  case FUTEX_WAIT_BITSET:
    return -pf_shim_wait((uint32_t *)uaddr, op, (uint32_t)val, timeout, (uint32_t)val3, 1);
  case FUTEX_WAKE:
    val3 = FUTEX_BITSET_MATCH_ANY;
    /* FALLTHROUGH */
  case FUTEX_WAKE_BITSET:
    if (val < 0)
      return -EINVAL;
    r = pf_linux_futex((uint32_t *)uaddr, lflags | PF_OP_WAKE_BITSET, (uint32_t)val, NULL, 0, NULL,
                       (uint32_t)val3);
    return r;
  case FUTEX_REQUEUE:
  case FUTEX_CMP_REQUEUE:
    if (val < 0 || val2 < 0)
      return -EINVAL;
    return pf_linux_futex((uint32_t *)uaddr,
                          lflags | ((op & FUTEX_CMD_MASK) == FUTEX_REQUEUE ? PF_OP_REQUEUE
                                                                           : PF_OP_CMP_REQUEUE),
                          (uint32_t)val, NULL, (uintptr_t)val2, (uint32_t *)uaddr2, (uint32_t)val3);
  case FUTEX_WAKE_OP:
    if (val < 0 || val2 < 0)
      return -EINVAL;
    return pf_linux_futex((uint32_t *)uaddr, lflags | PF_OP_WAKE_OP, (uint32_t)val, NULL,
                          (uintptr_t)val2, (uint32_t *)uaddr2, (uint32_t)val3);
  default:
    return -ENOSYS;
  }
}

long
pf_shim_netbsd_syscall(long number, ...)
{
  va_list ap;
  int *uaddr, *uaddr2, op, val, val2, val3;
  const struct timespec *timeout;
  long r;
  pthread_once(&pf_shim_once, pf_shim_env);
  if (number != SYS___futex) {
    errno = ENOSYS;
    return -1;
  }
  va_start(ap, number);
  uaddr = va_arg(ap, int *);
  op = va_arg(ap, int);
  val = va_arg(ap, int);
  timeout = va_arg(ap, const struct timespec *);
  uaddr2 = va_arg(ap, int *);
  val2 = va_arg(ap, int);
  val3 = va_arg(ap, int);
  va_end(ap);
  r = pf_shim_futex(uaddr, op, val, timeout, uaddr2, val2, val3);
  if (r < 0) {
    errno = (int)-r;
    return -1;
  }
  return r;
}
