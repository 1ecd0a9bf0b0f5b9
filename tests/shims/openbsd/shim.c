/* shim.c - a model of OpenBSD's futex(2) on Linux futexes, for testing the
 * openbsd port on Linux (configure --enable-test-shims=openbsd).
 *
 * What it models (futex.2, sys_futex.c; see shim.h), and how:
 *   - FUTEX_WAIT: EAGAIN if *uaddr != val; else sleep until a FUTEX_WAKE of
 *     the same futex, the RELATIVE timeout (CLOCK_MONOTONIC here; the
 *     kernel counts ticks), or a signal.  EINVAL for a timeout with
 *     tv_sec < 0 or tv_nsec outside [0, 1e9) (futex.2 since 2019).
 *   - Signals: OpenBSD never restarts the wait: a handler ends it with
 *     EINTR, or ECANCELED when the handler had SA_RESTART.  The shim sleeps
 *     in a Linux wait that always has a timeout (so Linux ends it with
 *     EINTR after any handler, instead of restarting an untimed one), and
 *     then must guess which handler ran: Linux does not say.  It answers
 *     ECANCELED when every handler that could have run in this thread
 *     (an unblocked signal with a handler, the synchronous fault signals
 *     excepted) has SA_RESTART, else EINTR.  That is exact when the
 *     process's handlers agree, which the suite's tests arrange (the engine
 *     decides restarts the same way, src/thread.c pf_sig_restartable).
 *   - FUTEX_WAKE: wakes up to val waiters, returns how many.
 *   - FUTEX_REQUEUE: wakes val, moves up to (uint32_t)(uintptr_t)timeout to
 *     uaddr2, returns the number woken and moved (sys_futex.c
 *     futex_requeue's count, as Linux's FUTEX_REQUEUE; the port's
 *     os_futex sends it for words of shared mappings).
 *   - Other ops: ENOSYS.
 *   - Keys: FUTEX_PRIVATE_FLAG -> a Linux private futex (keyed in this
 *     process); without it -> a Linux shared futex, which on MAP_SHARED
 *     memory is keyed by the object and offset, as OpenBSD 6.4+ keys a
 *     futex on a shared UVM object (sys_futex.c futex_get), so waits and
 *     wakes meet across fork and exec.
 *   - Return convention: -1 and errno (current futex.2), or, with
 *     pf_shim_openbsd_set_oldret(1), the error number as the return value
 *     (futex.2 up to 2019; sys_futex.c rev 1.1-1.9 set *retval = error).
 *   - Spurious wakeups: every nth wait that would sleep returns 0 at once.
 */
#include "pf.h"
#include "sys.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include "shim.h"
#include "../procmaps.h"
#include "os.h"

#include <string.h>
#include <unistd.h>

static AO_t pf_shim_spurious_n = 4;
static AO_t pf_shim_count;
static AO_t pf_shim_oldret;
static AO_t pf_shim_eintr, pf_shim_ecanceled;
static pthread_once_t pf_shim_once = PTHREAD_ONCE_INIT;

static void
pf_shim_env(void)
{
  const char *s = getenv("PF_SHIM_SPURIOUS");
  if (s && *s)
    AO_store(&pf_shim_spurious_n, (AO_t)strtoul(s, NULL, 10));
  s = getenv("PF_SHIM_OPENBSD_OLDRET");
  if (s && *s == '1')
    AO_store(&pf_shim_oldret, 1);
  pf_linux_sys_init();
}

void
pf_shim_openbsd_set_spurious(unsigned int n)
{
  pthread_once(&pf_shim_once, pf_shim_env);
  AO_store(&pf_shim_spurious_n, n);
}

void
pf_shim_openbsd_set_oldret(int on)
{
  pthread_once(&pf_shim_once, pf_shim_env);
  AO_store(&pf_shim_oldret, on != 0);
}

unsigned long
pf_shim_openbsd_interrupts(int ecanceled)
{
  return (unsigned long)AO_load(ecanceled ? &pf_shim_ecanceled : &pf_shim_eintr);
}

/* Would OpenBSD have said ECANCELED?  (header comment) */
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
pf_shim_ret(int err)
{
  if (err == 0)
    return 0;
  if (AO_load(&pf_shim_oldret))
    return err;
  errno = err;
  return -1;
}

static int
pf_shim_wait(uint32_t *uaddr, int lop, uint32_t val, const struct timespec *timeout)
{
  /* Timed always: Linux then ends the wait with EINTR after any handler. */
  static const struct timespec never = { 0x3fffffff, 0 };
  struct timespec ts;
  unsigned long n;
  long r;
  if (AO_int_load((volatile unsigned int *)uaddr) != val)
    return EAGAIN;
  if (timeout) {
    ts = *timeout;
    if (ts.tv_sec < 0 || ts.tv_nsec < 0 || ts.tv_nsec >= 1000000000L)
      return EINVAL;
  } else {
    ts = never;
  }
  n = (unsigned long)AO_load(&pf_shim_spurious_n);
  if (n && (unsigned long)AO_fetch_and_add1(&pf_shim_count) % n == n - 1)
    return 0;                            /* a spurious wakeup */
  r = pf_linux_futex(uaddr, lop | PF_OP_WAIT, val, &ts, 0, NULL, 0);
  if (r == 0)
    return 0;
  if (r == -EINTR) {
    if (pf_shim_restartable()) {
      AO_fetch_and_add1(&pf_shim_ecanceled);
      return ECANCELED;
    }
    AO_fetch_and_add1(&pf_shim_eintr);
    return EINTR;
  }
  if (r == -EAGAIN)
    return EAGAIN;
  return (int)-r;                        /* ETIMEDOUT, EFAULT */
}

int
pf_shim_openbsd_futex(volatile uint32_t *uaddr, int op, int val,
                      const struct timespec *timeout, volatile uint32_t *uaddr2)
{
  int lop = (op & FUTEX_PRIVATE_FLAG) ? PF_OP_PRIVATE_FLAG : 0;
  long r;
  pthread_once(&pf_shim_once, pf_shim_env);
  switch (op & ~FUTEX_PRIVATE_FLAG) {
  case FUTEX_WAIT:
    return pf_shim_ret(pf_shim_wait((uint32_t *)uaddr, lop, (uint32_t)val, timeout));
  case FUTEX_WAKE:
    /* val is a count of threads (the kernel reads it unsigned) */
    r = pf_linux_futex((uint32_t *)uaddr, lop | PF_OP_WAKE, val < 0 ? INT_MAX : val, NULL, 0, NULL, 0);
    return r < 0 ? pf_shim_ret((int)-r) : (int)r;
  case FUTEX_REQUEUE:
    r = pf_linux_futex((uint32_t *)uaddr, lop | PF_OP_REQUEUE, val < 0 ? INT_MAX : val, NULL,
                       (uintptr_t)timeout > INT_MAX ? INT_MAX : (uintptr_t)timeout,
                       (uint32_t *)uaddr2, 0);
    return r < 0 ? pf_shim_ret((int)-r) : (int)r;
  default:
    return pf_shim_ret(ENOSYS);
  }
}

/* ---- The map query: sysctl {CTL_KERN, KERN_PROC_VMMAP, pid} (shim.h) ----- */

#define PF_SHIM_OBSD_VMMAP_MAXLEN (64 * 1024)

static volatile AO_t pf_shim_obsd_sysctls;
static volatile AO_t pf_shim_obsd_identity = (AO_t)-1;   /* -1: not read yet */

unsigned long
pf_shim_openbsd_sysctls(void)
{
  return (unsigned long)AO_load(&pf_shim_obsd_sysctls);
}

/* How OpenBSD would show a Linux mapping (shim.h). */
static void
pf_shim_obsd_record(const struct pf_shim_map *m, struct kinfo_vmentry *k)
{
  int object = m->ino != 0;              /* a file, a SysV segment, a memfd: an inode */
  memset(k, 0, sizeof *k);
  k->kve_start = (unsigned long)m->lo;
  k->kve_end = (unsigned long)m->hi;
  k->kve_offset = m->off;
  k->kve_protection = pf_shim_maps_prot(m);
  k->kve_max_protection = KVE_PROT_READ | KVE_PROT_WRITE | KVE_PROT_EXEC;
  if (m->perms[3] == 's') {
    k->kve_inheritance = 0;               /* MAP_INHERIT_SHARE */
    /* anonymous shared memory is an amap (no object); the model cannot
     * tell /dev/zero's inode from a segment's, and says "object" for both */
    k->kve_etype = object ? KVE_ET_OBJ : 0;
  } else {
    k->kve_inheritance = 1;               /* MAP_INHERIT_COPY */
    k->kve_etype = KVE_ET_COPYONWRITE | KVE_ET_NEEDSCOPY | (object ? KVE_ET_OBJ : 0);
  }
}

int
sysctl(const int *name, unsigned int namelen, void *oldp, size_t *oldlenp, void *newp, size_t newlen)
{
  struct kinfo_vmentry *out = (struct kinfo_vmentry *)oldp;
  struct pf_shim_map m;
  uint64_t start, at;
  size_t max, n = 0;
  int r;

  AO_fetch_and_add1(&pf_shim_obsd_sysctls);
  if (namelen < 2 || name[0] != CTL_KERN || name[1] != KERN_PROC_VMMAP) {
    errno = EOPNOTSUPP;                   /* not modelled */
    return -1;
  }
  if (namelen > 3) {
    errno = ENOTDIR;
    return -1;
  }
  if (namelen < 3 || newp || newlen) {
    errno = EINVAL;
    return -1;
  }
  if (!oldp) {
    if (!oldlenp) {
      errno = EINVAL;
      return -1;
    }
    *oldlenp = PF_SHIM_OBSD_VMMAP_MAXLEN;
    return 0;
  }
  if (name[2] != (int)getpid()) {
    errno = EPERM;                        /* another process's map: root only */
    return -1;
  }
  if (!oldlenp || *oldlenp == 0 || *oldlenp % sizeof *out != 0 || *oldlenp > PF_SHIM_OBSD_VMMAP_MAXLEN) {
    errno = EINVAL;
    return -1;
  }
  max = *oldlenp / sizeof *out;
  start = out[0].kve_start;
  /* uvm_map_fill_vmmap: every entry, in order, skipping those that start
   * below start (start 0: none skipped) */
  for (at = start; n < max && (r = pf_shim_maps_at(at, &m)) == 1; at = m.hi) {
    if (start != 0 && m.lo < start)
      continue;
    pf_shim_obsd_record(&m, &out[n++]);
  }
  *oldlenp = n * sizeof *out;
  return 0;
}

void
pf_shim_openbsd_set_identity(int on)
{
  AO_store(&pf_shim_obsd_identity, (AO_t)(on != 0));
}

int
pf_shim_openbsd_object_id(const void *p, struct pf_os_objid *id)
{
  return pf_shim_identity_on(&pf_shim_obsd_identity, "PF_SHIM_OPENBSD_IDENTITY")
             ? pf_openbsd_shim_object_id(p, id)
             : pf_os_object_id(p, id);
}
