/* park.c - the NetBSD park port: one __futex per waiter node (its park
 * word), "sleep while the word is 0", like ports/linux/park.c, with
 * NetBSD's system call (sources: NetBSD/src sys/kern/sys_futex.c rev 1.18,
 * sys/sys/futex.h rev 1.6, kern/kern_sleepq.c):
 *
 *   syscall(SYS___futex, int *uaddr, int op, int val,
 *           const struct timespec *timeout, int *uaddr2, int val2, int val3)
 *
 * Linux's op numbers and flags; -1 and errno; EAGAIN when the word is not
 * val.  Quirks normalised here:
 *   - Deadlines: FUTEX_WAIT_BITSET takes an ABSOLUTE deadline on
 *     CLOCK_MONOTONIC, or CLOCK_REALTIME with FUTEX_CLOCK_REALTIME
 *     (do_futex: TIMER_ABSTIME), so the engine's deadline goes in as it is
 *     (FUTEX_WAIT's timeout is relative; not used).
 *   - Restarts: the sleep (cv_timedwait_sig) gives ERESTART when the
 *     signal's handler has SA_RESTART (sleepq_sigtoerror), and futex_wait
 *     passes it on: the kernel restarts the call after the handler, timed
 *     or not, and the port would never learn that a handler ran.  The
 *     engine must learn it (src/wait.c (F): a handler may have changed the
 *     futex word; a timed legacy wait must fail with EINTR).  So the port
 *     sleeps with signals blocked (all but the synchronous faults), in
 *     slices that grow from PF_NBSD_NAP_MIN to PF_NBSD_NAP_MAX, and between
 *     slices looks for a signal pending that this thread had not blocked:
 *     if one has a handler, it lets it in (unblocking runs the handler
 *     here) and returns -EINTR, as Linux ends a timed wait; a pending
 *     signal without a handler is let in (its default action happens) and
 *     the park goes on.  Cost: a signal reaches a parked thread up to one
 *     slice late; a parked thread wakes once a slice.  (Asynchronous
 *     cancellation does not use a signal on NetBSD: pthread_cancel wakes
 *     the sleep with _lwp_wakeup, which the port sees as EINTR; glibc's
 *     SIGCANCEL, in the shim, is never blocked.  Not confirmed on NetBSD.)
 *   - EINTR from the sleep itself (an unblockable wakeup): -EINTR, which
 *     the contract allows spuriously.
 *   - Spurious returns and EAGAIN: loop and re-check the word.
 *
 * Process-shared futexes: without FUTEX_PRIVATE_FLAG a futex is keyed by
 * its uvm_voaddr (the object and offset, futex_key_init / futex_tab.oa), so
 * a waker in another process finds the waiter: regions park here without
 * the flag.  The system call exists since NetBSD 10 (__futex, 2020; not
 * confirmed for 9.x): <sys/syscall.h> must define SYS___futex.
 */
#include "port.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#ifdef PF_SHIM
# include "shim.h"             /* tests/shims/netbsd: the call, modelled on Linux */
# define PF_PORT_VAR  pf_port_netbsd_shim
# define PF_PORT_NAME "netbsd-shim"
#else
# include <sys/futex.h>
# include <sys/syscall.h>
# define PF_PORT_VAR  pf_port_netbsd
# define PF_PORT_NAME "netbsd"
#endif

#ifndef SYS___futex
# error "this NetBSD has no __futex system call (NetBSD 10 or later); configure --with-ports=sysv"
#endif

#define PF_NBSD_NAP_MIN 1000000L         /* ns: the first slice */
#define PF_NBSD_NAP_MAX 32000000L        /* ns: the longest */

/* The deliberate mistakes (-DPF_PORT_WRONG, tests only): 1 (the default):
 * a region's park and unpark use FUTEX_PRIVATE_FLAG; 2: sleep with
 * signals open, trusting the kernel to report every handler. */
#if defined(PF_PORT_WRONG) && (PF_PORT_WRONG + 0) == 0
# undef PF_PORT_WRONG
# define PF_PORT_WRONG 1
#endif
#if defined(PF_PORT_WRONG) && PF_PORT_WRONG == 1
# define PF_NBSD_PRIV(shared) FUTEX_PRIVATE_FLAG
#else
# define PF_NBSD_PRIV(shared) ((shared) ? 0 : FUTEX_PRIVATE_FLAG)
#endif

/* 0, or the error number of FUTEX_WAIT_BITSET until the absolute `abs`. */
static int
pf_nbsd_wait(uint32_t *word, int op, const struct timespec *abs)
{
  if (syscall(SYS___futex, (int *)word, op | FUTEX_WAIT_BITSET, 0, abs, NULL, 0,
              FUTEX_BITSET_MATCH_ANY) == -1)
    return errno;
  return 0;
}

/* A signal pending that `open` (the thread's own mask) lets in: 2 when one
 * has a handler, 1 when only signals without one, 0 when none. */
static int
pf_nbsd_pending(const sigset_t *open)
{
  sigset_t pend;
  int sig, ret = 0;
  if (sigpending(&pend) != 0)
    return 0;
  for (sig = 1; sig < NSIG; sig++) {
    struct sigaction sa;
    if (sigismember(&pend, sig) != 1 || sigismember(open, sig) == 1)
      continue;
    ret = 1;
    if (sigaction(sig, NULL, &sa) == 0
        && ((sa.sa_flags & SA_SIGINFO) || (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN)))
      return 2;
  }
  return ret;
}

static int
pf_nbsd_park(struct pf_parker *p, struct pf_park *k, int shared, const struct pf_deadline *dl)
{
  int op = PF_NBSD_PRIV(shared), saved = errno, ret;
  int clock = dl ? dl->clock : PFUTEX_CLOCK_MONOTONIC;
  long nap = PF_NBSD_NAP_MIN;
  sigset_t orig;
  (void)p;
  if (clock == PFUTEX_CLOCK_REALTIME)
    op |= FUTEX_CLOCK_REALTIME;
#if defined(PF_PORT_WRONG) && PF_PORT_WRONG == 2
  for (;;) {
    int e;
    if (AO_int_load_acquire(&k->word))
      return 0;
    e = pf_nbsd_wait(&k->word, op, dl ? &dl->abs : NULL);
    if (AO_int_load_acquire(&k->word))
      return 0;
    if (e == EINTR || e == ETIMEDOUT)
      return -e;
  }
#endif
  pthread_sigmask(SIG_BLOCK, &pf_sig_nonfault, &orig);
  for (;;) {
    struct timespec end;
    int e, pend;
    if (AO_int_load_acquire(&k->word)) {
      ret = 0;
      break;
    }
    if ((pend = pf_nbsd_pending(&orig)) != 0) {
      /* Let it in: unblocking runs a handler here and now. */
      pthread_sigmask(SIG_SETMASK, &orig, NULL);
      if (pend == 2) {
        errno = saved;
        return AO_int_load_acquire(&k->word) ? 0 : -EINTR;
      }
      pthread_sigmask(SIG_BLOCK, &pf_sig_nonfault, NULL);
      continue;
    }
    /* This slice: until now + nap, or the deadline if sooner. */
    if ((ret = pf_clock_now(clock, &end)) < 0)
      break;
    if (dl && (end.tv_sec > dl->abs.tv_sec
               || (end.tv_sec == dl->abs.tv_sec && end.tv_nsec >= dl->abs.tv_nsec))) {
      ret = -ETIMEDOUT;
      break;
    }
    end.tv_nsec += nap;
    if (end.tv_nsec >= 1000000000L) {
      end.tv_nsec -= 1000000000L;
      end.tv_sec++;
    }
    if (dl && (end.tv_sec > dl->abs.tv_sec
               || (end.tv_sec == dl->abs.tv_sec && end.tv_nsec > dl->abs.tv_nsec)))
      end = dl->abs;
    e = pf_nbsd_wait(&k->word, op, &end);
    if (AO_int_load_acquire(&k->word)) {
      ret = 0;
      break;
    }
    if (e == EINTR) {
      ret = -EINTR;                      /* not a handler of ours: spurious, allowed */
      break;
    }
    if (e != 0 && e != EAGAIN && e != ETIMEDOUT) {
      ret = -e;
      break;
    }
    if (nap < PF_NBSD_NAP_MAX)
      nap = nap * 2 > PF_NBSD_NAP_MAX ? PF_NBSD_NAP_MAX : nap * 2;
  }
  pthread_sigmask(SIG_SETMASK, &orig, NULL);
  errno = saved;
  return ret;
}

/* The release store is the last access to *k; the wake then only uses the
 * address (a stale one causes at most a spurious wakeup). */
static void
pf_nbsd_unpark(struct pf_park *k, int shared)
{
  int saved = errno;
  AO_int_store_release(&k->word, 1);
  (void)syscall(SYS___futex, (int *)&k->word, FUTEX_WAKE | PF_NBSD_PRIV(shared), 1, NULL, NULL,
                0, 0);
  errno = saved;
}

static void
pf_nbsd_collect(struct pf_parker *p, struct pf_park *k, int shared)
{
  pf_park_word_collect(pf_nbsd_park, p, k, shared);
}

/* The OS's own futex for the shared words NetBSD names no object for
 * (src/port.h os_futex; ports/netbsd/objid.c answers PF_OBJID_KERNEL for
 * anonymous shared memory, SysV segments and memfds): __futex keys a
 * shared futex by uvm_voaddr, the object or anon and the offset, as Linux
 * keys it, so waits and wakes go there whole: FUTEX_WAIT_BITSET with the
 * front end's absolute deadline on its clock (FUTEX_CLOCK_REALTIME for
 * realtime), FUTEX_WAKE_BITSET.  Its requeues and wake_op are not Linux's
 * (sys_futex.c rev 1.18 futex_func_requeue: a CMP_REQUEUE with nobody
 * waiting answers 0 without comparing, the count leaves out the moved;
 * futex_func_wake_op: EINVAL for a bad op, oparg not sign-extended), so
 * those answer ENOSYS, loudly.
 * Signals: NetBSD restarts the call after an SA_RESTART handler (timed
 * ones too, the deadline kept), Linux does so for untimed waits only: a
 * timed wait interrupted by such a handler goes on here where Linux would
 * answer EINTR (doc/shared-futexes.md). */
static long
pf_nbsd_os_futex(int op, const struct pf_req *r)
{
  int saved = errno, fop;
  struct timespec ts;
  long ret;
  switch (op) {
  case PF_OSF_WAIT:
    fop = FUTEX_WAIT_BITSET;
    if (r->dl) {
      ts = r->dl->abs;
      if (r->dl->clock == PFUTEX_CLOCK_REALTIME)
        fop |= FUTEX_CLOCK_REALTIME;
    }
    ret = syscall(SYS___futex, (int *)r->uaddr, fop, (int)r->val, r->dl ? &ts : NULL, NULL, 0,
                  (int)r->mask);
    break;
  case PF_OSF_WAKE:
    ret = syscall(SYS___futex, (int *)r->uaddr, FUTEX_WAKE_BITSET, r->nr, NULL, NULL, 0,
                  (int)r->mask);
    break;
  default:
    return -ENOSYS;
  }
  ret = ret < 0 ? -errno : ret;
  errno = saved;
  return ret;
}

/* Which file a shared op's word maps, if any (ports/netbsd/objid.c; the
 * shim build asks through the shim's switch, tests/shims/netbsd/shim.h). */
#ifdef PF_SHIM
# define PF_NETBSD_OBJID pf_shim_netbsd_object_id
#else
# define PF_NETBSD_OBJID pf_netbsd_object_id
int pf_netbsd_object_id(const void *p, struct pf_os_objid *id);
#endif

const struct pf_port PF_PORT_VAR = {
  .name = PF_PORT_NAME,
  .gen = &pf_park_word_gen,
  .init = pf_park_word_init,
  .prepare = pf_park_word_prepare,
  .park = pf_nbsd_park,
  .unpark = pf_nbsd_unpark,
  .collect = pf_nbsd_collect,
  .object_id = PF_NETBSD_OBJID,
  .os_futex = pf_nbsd_os_futex,
};
