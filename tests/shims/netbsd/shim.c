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
 *     were woken.  REQUEUE, CMP_REQUEUE, WAKE_OP: passed to Linux (the
 *     port's os_futex sends them for shared words NetBSD names no object
 *     for); others ENOSYS.
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
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"
#include "../procmaps.h"
#include "os.h"

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

/* ---- The map query: sysctl {CTL_VM, VM_PROC, VM_PROC_MAP, pid, size} ------ */

static volatile AO_t pf_shim_nbsd_sysctls;
static volatile AO_t pf_shim_nbsd_identity = (AO_t)-1;   /* -1: not read yet */

unsigned long
pf_shim_netbsd_sysctls(void)
{
  return (unsigned long)AO_load(&pf_shim_nbsd_sysctls);
}

/* How NetBSD would show a Linux mapping (shim.h). */
static void
pf_shim_nbsd_record(const struct pf_shim_map *m, struct kinfo_vmentry *k)
{
  int file = m->ino != 0 && m->dev != 1;
  memset(k, 0, sizeof *k);
  k->kve_start = m->lo;
  k->kve_end = m->hi;
  k->kve_offset = m->off;
  k->kve_protection = pf_shim_maps_prot(m);
  k->kve_max_protection = KVME_PROT_READ | KVME_PROT_WRITE | KVME_PROT_EXEC;
  if (m->perms[3] == 's') {
    k->kve_inheritance = 0;               /* MAP_INHERIT_SHARE */
  } else {
    k->kve_inheritance = 1;               /* MAP_INHERIT_COPY */
    k->kve_flags = KVME_FLAG_COW | KVME_FLAG_NEEDS_COPY;
  }
  if (file) {
    k->kve_type = KVME_TYPE_VNODE;
    k->kve_vn_fileid = m->ino;
    k->kve_vn_fsid = m->dev;
  } else {
    k->kve_type = m->ino ? KVME_TYPE_ANON : KVME_TYPE_UNKNOWN;
  }
}

int
sysctl(const int *name, unsigned int namelen, void *oldp, size_t *oldlenp, const void *newp, size_t newlen)
{
  struct pf_shim_map m;
  size_t elem, count = 0, n = 0, rec;
  uint64_t at;
  int r;

  AO_fetch_and_add1(&pf_shim_nbsd_sysctls);
  if (namelen < 3 || name[0] != CTL_VM || name[1] != VM_PROC || name[2] != VM_PROC_MAP) {
    errno = EOPNOTSUPP;                   /* not modelled */
    return -1;
  }
  if (namelen != 5 || newp || newlen || !oldlenp) {
    errno = EINVAL;
    return -1;
  }
  if (name[3] != -1 && name[3] != (int)getpid()) {
    errno = ESRCH;                        /* the model answers for the caller only */
    return -1;
  }
  if (name[4] <= 0 || (size_t)name[4] > 2 * sizeof(struct kinfo_vmentry)) {
    errno = EINVAL;
    return -1;
  }
  elem = (size_t)name[4];
  rec = elem < sizeof(struct kinfo_vmentry) ? elem : sizeof(struct kinfo_vmentry);
  if (oldp) {
    if (*oldlenp > 10UL * 1024UL * 1024UL) {
      errno = E2BIG;
      return -1;
    }
    count = *oldlenp / elem;
    if (count == 0) {
      errno = ENOMEM;
      return -1;
    }
  }
  for (at = 0; (r = pf_shim_maps_at(at, &m)) == 1; at = m.hi) {
    if (oldp && n < count) {
      struct kinfo_vmentry k;
      pf_shim_nbsd_record(&m, &k);
      memcpy((char *)oldp + n * elem, &k, rec);
    }
    n++;
  }
  if (r < 0) {
    errno = EIO;
    return -1;
  }
  if (oldp && n > count) {
    *oldlenp = n * elem;                  /* the length needed */
    errno = ENOSPC;
    return -1;
  }
  *oldlenp = n * elem;
  return 0;
}

void
pf_shim_netbsd_set_identity(int on)
{
  AO_store(&pf_shim_nbsd_identity, (AO_t)(on != 0));
}

int
pf_shim_netbsd_object_id(const void *p, struct pf_os_objid *id)
{
  return pf_shim_identity_on(&pf_shim_nbsd_identity, "PF_SHIM_NETBSD_IDENTITY")
             ? pf_netbsd_shim_object_id(p, id)
             : pf_os_object_id(p, id);
}
