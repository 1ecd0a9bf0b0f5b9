/* park.c - the SysV semaphore park port: the fallback for any POSIX system.
 *
 * Each thread owns one semaphore (a slot in a set of PF_SYSV_SET_SIZE),
 * taken from a static pool at its first wait and returned when it exits;
 * unpark posts 1 to it, park takes 1.  The engine's protocol (wait.c (D))
 * guarantees exactly one post per park that is woken, and that the waiter
 * consumes it, so no token is ever left over for a later wait.
 *
 * Timed parks use semtimedop where configure found it (re-armed with the
 * time left, so a CLOCK_REALTIME deadline follows clock changes at each
 * wakeup), else a portable path: IPC_NOWAIT polls with a sleep that grows
 * from 50us to 1ms, signals let in only during the sleep (pselect).
 *
 * Signals: semop is never restarted after a handler (SA_RESTART or not), but
 * futex(2) restarts an untimed wait under SA_RESTART.  On EINTR we cannot
 * ask which signal ran, so an untimed park restarts when every installed
 * handler has SA_RESTART and fails with EINTR otherwise (handlers of fault
 * signals, which cannot interrupt a sleeping thread, are not counted):
 * exact whenever the process's handlers agree, a possible early EINTR when
 * they are mixed.
 *
 * Sets are removed at exit (atexit) by the process that made them.  A
 * process killed by a signal leaks its sets (ipcs shows them); the shared
 * regions issue adds reclamation.  fork(): the child makes its own sets.
 */
#include "emu.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define PF_SYSV_SET_SIZE 32     /* below every system's default SEMMSL */
#define PF_SYSV_MAX_SETS 512    /* 16384 concurrent threads */
#define PF_SYSV_NSLOTS (PF_SYSV_SET_SIZE * PF_SYSV_MAX_SETS)

static pthread_mutex_t pf_sysv_mu = PTHREAD_MUTEX_INITIALIZER;
static int pf_sysv_ids[PF_SYSV_MAX_SETS];       /* pf_sysv_mu */
static pid_t pf_sysv_owner;                     /* pid that made the sets; pf_sysv_mu */
static int pf_sysv_nsets;                       /* pf_sysv_mu */
static int pf_sysv_free[PF_SYSV_NSLOTS];        /* stack of free slots; pf_sysv_mu */
static int pf_sysv_nfree;                       /* pf_sysv_mu */
static unsigned int pf_sysv_gen = 1;            /* bumped in a fork child */
static pthread_key_t pf_sysv_key;

static __thread int pf_sysv_slot = -1;
static __thread unsigned int pf_sysv_slot_gen;

static void
pf_sysv_cleanup(void)
{
  int i;
  pthread_mutex_lock(&pf_sysv_mu);
  if (pf_sysv_owner == getpid())
    for (i = 0; i < pf_sysv_nsets; i++)
      semctl(pf_sysv_ids[i], 0, IPC_RMID);
  pf_sysv_nsets = 0;
  pf_sysv_nfree = 0;
  pthread_mutex_unlock(&pf_sysv_mu);
}

static void
pf_sysv_thread_exit(void *v)
{
  int slot = (int)(intptr_t)v - 1;
  if (slot < 0 || pf_sysv_slot_gen != pf_sysv_gen)
    return;
  pthread_mutex_lock(&pf_sysv_mu);
  pf_sysv_free[pf_sysv_nfree++] = slot;
  pthread_mutex_unlock(&pf_sysv_mu);
}

static void
pf_sysv_atfork_prepare(void)
{
  pthread_mutex_lock(&pf_sysv_mu);
}

static void
pf_sysv_atfork_parent(void)
{
  pthread_mutex_unlock(&pf_sysv_mu);
}

static void
pf_sysv_atfork_child(void)
{
  /* The parent's sets stay the parent's. */
  pf_sysv_nsets = 0;
  pf_sysv_nfree = 0;
  pf_sysv_owner = getpid();
  pf_sysv_gen++;
  pthread_mutex_unlock(&pf_sysv_mu);
}

static int
pf_sysv_init(void)
{
  if (pthread_key_create(&pf_sysv_key, pf_sysv_thread_exit) != 0)
    return -EAGAIN;
  if (pthread_atfork(pf_sysv_atfork_prepare, pf_sysv_atfork_parent, pf_sysv_atfork_child) != 0)
    return -ENOMEM;
  pf_sysv_owner = getpid();
  atexit(pf_sysv_cleanup);
  return 0;
}

/* Slow path, once per thread: a slot from the pool, growing it by one set. */
static int
pf_sysv_slot_get(void)
{
  int slot, i, id;
  pthread_mutex_lock(&pf_sysv_mu);
  if (pf_sysv_nfree == 0) {
    if (pf_sysv_nsets == PF_SYSV_MAX_SETS) {
      pthread_mutex_unlock(&pf_sysv_mu);
      return -EAGAIN;
    }
    id = semget(IPC_PRIVATE, PF_SYSV_SET_SIZE, IPC_CREAT | 0600);
    if (id < 0) {
      int e = errno;
      pthread_mutex_unlock(&pf_sysv_mu);
      return e == ENOSPC ? -EAGAIN : -e;
    }
    pf_sysv_ids[pf_sysv_nsets] = id;
    for (i = PF_SYSV_SET_SIZE - 1; i >= 0; i--)
      pf_sysv_free[pf_sysv_nfree++] = pf_sysv_nsets * PF_SYSV_SET_SIZE + i;
    pf_sysv_nsets++;
  }
  slot = pf_sysv_free[--pf_sysv_nfree];
  pthread_mutex_unlock(&pf_sysv_mu);
  pf_sysv_slot = slot;
  pf_sysv_slot_gen = pf_sysv_gen;
  pthread_setspecific(pf_sysv_key, (void *)(intptr_t)(slot + 1));
  return slot;
}

static int
pf_sysv_prepare(struct pf_parker *p)
{
  int slot = pf_sysv_slot;
  if (PF_UNLIKELY(slot < 0 || pf_sysv_slot_gen != pf_sysv_gen))
    if ((slot = pf_sysv_slot_get()) < 0)
      return slot;
  p->id = pf_sysv_ids[slot / PF_SYSV_SET_SIZE];
  p->num = slot % PF_SYSV_SET_SIZE;
  AO_int_store(&p->word, 0);
  return 0;
}

/* Would futex(2) restart here?  See the header comment. */
static int
pf_sysv_restartable(void)
{
  int sig;
  for (sig = 1; sig < NSIG; sig++) {
    struct sigaction sa;
    /* Fault signals are raised by the faulting thread itself, which is
     * asleep in semop: their handlers (a sanitizer's, say) do not count. */
    if (sig == SIGKILL || sig == SIGSTOP || sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE
        || sig == SIGILL || sig == SIGTRAP || sig == SIGSYS || sigaction(sig, NULL, &sa) != 0)
      continue;
    if ((sa.sa_flags & SA_SIGINFO) || (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN))
      if (!(sa.sa_flags & SA_RESTART))
        return 0;
  }
  return 1;
}

static int pf_sysv_park_sem(struct pf_parker *p, const struct pf_deadline *dl);

static int
pf_sysv_park(struct pf_parker *p, const struct pf_deadline *dl)
{
  int ret = pf_sysv_park_sem(p, dl);
  if (ret == 0)
    (void)AO_int_load_acquire(&p->word);   /* pairs with unpark's release */
  return ret;
}

static int
pf_sysv_park_sem(struct pf_parker *p, const struct pf_deadline *dl)
{
  struct sembuf op;
  op.sem_num = (unsigned short)p->num;
  op.sem_op = -1;
  op.sem_flg = 0;

  if (!dl) {
    for (;;) {
      if (semop(p->id, &op, 1) == 0)
        return 0;
      if (errno != EINTR)
        return -errno;
      if (!pf_sysv_restartable())
        return -EINTR;
    }
  }
#ifdef PF_SYSV_USE_SEMTIMEDOP
  for (;;) {
    struct timespec left;
    int ret = pf_deadline_left(dl, &left);
    if (ret < 0)
      return ret;
    if (semtimedop(p->id, &op, 1, &left) == 0)
      return 0;
    if (errno == EINTR)
      return -EINTR;
    if (errno != EAGAIN)
      return -errno;
  }
#else
  {
    /* Signals stay blocked while this thread polls in user space and are
     * let in only inside pselect, atomically with the nap: a handler that
     * runs during the park always ends it with EINTR, as it ends a timed
     * futex(2) wait, and never runs unnoticed between two naps.  The
     * synchronous fault signals stay open (blocked, a fault would kill the
     * process instead of reaching its handler). */
    static const int faults[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS };
    long nap = 50000;
    sigset_t all, orig;
    size_t i;
    int ret;

    sigfillset(&all);
    for (i = 0; i < sizeof faults / sizeof faults[0]; i++)
      sigdelset(&all, faults[i]);
    pthread_sigmask(SIG_BLOCK, &all, &orig);
    op.sem_flg = IPC_NOWAIT;
    for (;;) {
      struct timespec left, ts;
      if (semop(p->id, &op, 1) == 0) {
        ret = 0;
        break;
      }
      if (errno != EAGAIN && errno != EINTR) {
        ret = -errno;
        break;
      }
      if ((ret = pf_deadline_left(dl, &left)) < 0)
        break;
      ts.tv_sec = 0;
      ts.tv_nsec = nap;
      if (left.tv_sec == 0 && left.tv_nsec < nap)
        ts = left;
      if (pselect(0, NULL, NULL, NULL, &ts, &orig) != 0 && errno == EINTR) {
        ret = semop(p->id, &op, 1) == 0 ? 0 : -EINTR;
        break;
      }
      if (nap < 1000000)
        nap *= 2;
    }
    pthread_sigmask(SIG_SETMASK, &orig, NULL);
    return ret;
  }
#endif
}

static void
pf_sysv_unpark(struct pf_parker *p)
{
  struct sembuf op;
  int id = p->id;             /* read the parker before the token: last touch */
  op.sem_num = (unsigned short)p->num;
  /* Publish the waker's writes with a release store the waiter pairs with
   * an acquire load after semop: the memory model (and ThreadSanitizer)
   * cannot see the semaphore as synchronisation. */
  AO_int_store_release(&p->word, 1);
  op.sem_op = 1;
  op.sem_flg = 0;
  while (semop(id, &op, 1) != 0 && errno == EINTR)
    ;
}

const struct pf_port pf_port_sysv = {
  .name = "sysv",
  .init = pf_sysv_init,
  .prepare = pf_sysv_prepare,
  .park = pf_sysv_park,
  .unpark = pf_sysv_unpark,
};
