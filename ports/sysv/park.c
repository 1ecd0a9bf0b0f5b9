/* park.c - the SysV semaphore park port: the fallback for any POSIX system.
 *
 * Each parker (one per waiter node of a thread record, src/thread.c) owns
 * one semaphore, taken from this process's sets the first time the parker
 * is armed and kept for the life of the process: records are recycled with
 * their parkers, so no semaphore ever changes hands between two threads
 * that might both still wait (a thread's last key destructor may wait), and
 * nested waits (a handler waiting inside a wait) each have their own.
 * unpark posts 1, park takes 1.  The engine's protocol guarantees exactly
 * one post per token and that the token is consumed, so a semaphore is
 * always 0 between waits.
 *
 * Consumption counter.  A semaphore forgets who took a token: if an
 * asynchronous cancellation or a siglongjmp strikes right after semop took
 * it, the engine cannot tell "taken" from "still coming" and would wait for
 * a second token forever.  So each parker has a second semaphore, a
 * counter, that every park changes in the same semop as it takes the token
 * (sem_ops apply atomically): from p->cnt to p->cnt_next, both recorded
 * before the semop.  collect() reads the counter: if it moved since the
 * wait was armed (prepare records it), a park of this wait took the token,
 * whether or not that park lived to record it.  The counter wraps at 30000
 * (values stop at 32767).
 *
 * Timed parks use semtimedop where configure found it (re-armed with the
 * time left, so a CLOCK_REALTIME deadline follows clock changes at each
 * wakeup), else a portable path: IPC_NOWAIT polls with a sleep that grows
 * from 50us to 1ms, signals let in only during the sleep (pselect).
 *
 * Signals: semop ends with EINTR after any handler; so does park (the
 * engine decides about restarts, wait.c (F)).
 *
 * Regions: a slot records the waiter's semaphore (set id, number), and a
 * waker in another process posts it: the sets are created 0600, so the
 * processes sharing a region under this port must run as one user.  The
 * slot is untrusted, and that user may own other programs' sets: a
 * scribbled id must not post one of those (issue 18).  So a region's post
 * is guarded by the set's tag (below), in the same semop: subtract the
 * magic from the tag semaphore, wait for zero, add it back, then post,
 * all IPC_NOWAIT but the post (four operations: within every system's
 * SEMOPM, macOS's 5 included).  Operations of one semop apply in order
 * and atomically, or none does: the post lands only if the tag held the
 * magic exactly, and a set with fewer semaphores than the tag's index
 * fails whole (EFBIG); a number out of range is not posted.  The check
 * and the post being one system call, no id can be removed and reused
 * in between, and nothing is remembered: no cache of verified ids to go
 * stale, no lock.  (Checking by IPC_STAT and GETVAL first costs two
 * system calls per wake: a region ping-pong ran 12% slower; a cache of
 * verified ids would trust an id after its set was removed and the
 * number reused.)  What still passes: any set of pfutex's of this user
 * (the slot then wakes some other waiter spuriously, which the engine
 * absorbs, wait.c (R)), and a foreign set of 65 semaphores or more whose
 * 65th holds exactly PF_SYSV_TAG_MAGIC: a deliberate look-alike, and a
 * program of the same user can post our semaphores itself anyway.  A
 * private unpark posts plainly: its ids come from this process.
 *
 * Lifetime of the sets.  Nothing is removed while the process runs, nor at
 * exit (an atexit handler would pull them from under threads still waiting,
 * and from later atexit handlers): a process's sets are removed by the next
 * process that starts this port, once their creator is gone, whatever the
 * route (exit, _exit, exec, abort, SIGKILL).  Each set carries a tag after
 * its parkers (semaphore values: a magic, the creator's pid in two halves),
 * so a scan (Linux: SEM_INFO/SEM_STAT) can find pfutex's sets and test
 * their creator with kill(pid, 0).  Sets of a pid that is alive again (pid
 * reuse, another pid namespace) stay until it dies.  By hand: `ipcrm`
 * (doc/internals.md, "Process exit").  A fork child makes sets of its own.
 *
 * A process killed between semget and the SETALL that writes the tag
 * would leave a set nobody recognises.  So each set is also created under
 * an IPC key that names its creator (PF_SYSV_KEY: bit 31, the set's index
 * in the process, the pid), with IPC_EXCL; the scan reads the key of a set
 * without a tag (glibc: sem_perm.__key) and removes it when that pid is
 * gone and the set was never operated on.  A key already taken (another
 * program's, or a dead process's not yet reclaimed) falls back to
 * IPC_PRIVATE, tag only.
 *
 * Exhaustion (the system's limits, or this port's own PF_SYSV_MAX_SETS) is
 * ENOMEM, never EAGAIN.
 */
#include "port.h"

#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/select.h>
#include <sys/sem.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "semun.h"

#define PF_SYSV_SET_SIZE 32             /* parkers per set */
#define PF_SYSV_TAG_MAGIC 0x5046        /* "PF"; semaphore values stop at 32767 */
/* Per set: the parkers' semaphores, their counters, then the tag: magic,
 * pid low 15 bits, pid high bits. */
#define PF_SYSV_CNT(num) (PF_SYSV_SET_SIZE + (num))
#define PF_SYSV_TAG (2 * PF_SYSV_SET_SIZE)
#define PF_SYSV_NSEMS (2 * PF_SYSV_SET_SIZE + 3)
#define PF_SYSV_CNT_WRAP 30000
#define PF_SYSV_MAX_SETS 512            /* 16384 parkers */
/* The IPC key of a process's n-th set (pids below 2^22: Linux's limit). */
#define PF_SYSV_KEY(pid, n) ((key_t)(int32_t)(0x80000000u | ((uint32_t)(n) & 0x1ffu) << 22 \
                                              | ((uint32_t)(pid) & 0x3fffffu)))

/* The number of sets this process may make (<= PF_SYSV_MAX_SETS); white-box
 * tests lower it to reach the library's own limit. */
int pf_sysv_max_sets = PF_SYSV_MAX_SETS;

/* Taken only inside the engine's critical sections (signals blocked), so a
 * handler never meets it held; never held across anything but semget. */
static AO_t pf_sysv_lock;
static int pf_sysv_ids[PF_SYSV_MAX_SETS];       /* pf_sysv_lock */
static int pf_sysv_nsets;                       /* pf_sysv_lock */
static int pf_sysv_used;                        /* parkers handed out in the last set */
static unsigned int pf_sysv_gen = 1;            /* bumped in a fork child */

/* Remove the sets of processes that are gone.  At init, any set tagged
 * with our own pid was left by an earlier image of this process (exec). */
static void
pf_sysv_reclaim(int at_init)
{
#ifdef PF_SYSV_HAVE_SEM_SCAN
  struct seminfo si;
  union semun arg;
  int maxidx, i, j, saved = errno;
  pid_t self = getpid();

  arg.buf = (struct semid_ds *)(void *)&si;
  if ((maxidx = semctl(0, 0, SEM_INFO, arg)) < 0)
    goto out;
  for (i = 0; i <= maxidx; i++) {
    struct semid_ds ds;
    int id, v0, v1, v2, mine = 0;
    pid_t pid;
    arg.buf = &ds;
    if ((id = semctl(i, 0, SEM_STAT, arg)) < 0 || ds.sem_nsems != PF_SYSV_NSEMS)
      continue;
    if ((v0 = semctl(id, PF_SYSV_TAG, GETVAL)) != PF_SYSV_TAG_MAGIC
        || (v1 = semctl(id, PF_SYSV_TAG + 1, GETVAL)) < 0
        || (v2 = semctl(id, PF_SYSV_TAG + 2, GETVAL)) < 0) {
# ifdef __GLIBC__
      /* No tag: a creator killed before SETALL?  Its key names it. */
      uint32_t key = (uint32_t)ds.sem_perm.__key;
      pid = (pid_t)(key & 0x3fffffu);
      if (v0 == 0 && ds.sem_otime == 0 && (key & 0x80000000u) && pid > 0
          && PF_SYSV_KEY(pid, key >> 22) == (key_t)(int32_t)key && pid != self
          && kill(pid, 0) != 0 && errno == ESRCH)
        semctl(id, 0, IPC_RMID);
# endif
      continue;
    }
    pid = (pid_t)(v1 | (v2 << 15));
    if (pid == self) {
      for (j = 0; j < pf_sysv_nsets; j++)
        mine |= pf_sysv_ids[j] == id;
      if (mine || !at_init)
        continue;
    } else if (pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH) {
      continue;
    }
    semctl(id, 0, IPC_RMID);
  }
out:
  errno = saved;
#else
  (void)at_init;
#endif
}

static int
pf_sysv_set_new(void)
{
  unsigned short vals[PF_SYSV_NSEMS] = { 0 };
  union semun arg;
  pid_t pid = getpid();
  int id, tries;

  for (tries = 0; tries < 2; tries++) {
    if (pid < (1 << 22)) {
      key_t key = PF_SYSV_KEY(pid, pf_sysv_nsets);
      if ((id = semget(key, PF_SYSV_NSEMS, IPC_CREAT | IPC_EXCL | 0600)) >= 0)
        break;
      if (errno == EEXIST) {
        /* Our key, not our set: an earlier process with our pid (pids
         * wrap; or our image before an exec) left it.  It is dead. */
        int old = semget(key, 0, 0), j, mine = 0;
        for (j = 0; j < pf_sysv_nsets; j++)
          mine |= pf_sysv_ids[j] == old;
        if (old >= 0 && !mine) {
          semctl(old, 0, IPC_RMID);
          if ((id = semget(key, PF_SYSV_NSEMS, IPC_CREAT | IPC_EXCL | 0600)) >= 0)
            break;
        }
      }
    }
    if ((id = semget(IPC_PRIVATE, PF_SYSV_NSEMS, IPC_CREAT | 0600)) >= 0)
      break;
    if (tries == 0 && (errno == ENOSPC || errno == ENOMEM))
      pf_sysv_reclaim(0);     /* the system's limit: dead processes' sets first */
  }
  if (id < 0)
    return -ENOMEM;
  vals[PF_SYSV_TAG] = PF_SYSV_TAG_MAGIC;
  vals[PF_SYSV_TAG + 1] = (unsigned short)(pid & 0x7fff);
  vals[PF_SYSV_TAG + 2] = (unsigned short)((pid >> 15) & 0x7fff);
  arg.array = vals;
  if (semctl(id, 0, SETALL, arg) != 0) {
    semctl(id, 0, IPC_RMID);
    return -ENOMEM;
  }
  return id;
}

static void
pf_sysv_atfork_child(void)
{
  /* The parent's sets stay the parent's: every parker sets up anew. */
  pf_sysv_lock = 0;
  pf_sysv_nsets = 0;
  pf_sysv_used = PF_SYSV_SET_SIZE;
  pf_sysv_gen++;
}

static int
pf_sysv_init(void)
{
  if (pthread_atfork(NULL, NULL, pf_sysv_atfork_child) != 0)
    return -ENOMEM;
  pf_sysv_used = PF_SYSV_SET_SIZE;
  pf_sysv_reclaim(1);
  return 0;
}

/* Once per parker (and per fork generation): a semaphore of its own. */
static int
pf_sysv_setup(struct pf_parker *p)
{
  int ret = 0;
  pf_spin_lock(&pf_sysv_lock);
  if (pf_sysv_used == PF_SYSV_SET_SIZE) {
    int max = pf_sysv_max_sets < PF_SYSV_MAX_SETS ? pf_sysv_max_sets : PF_SYSV_MAX_SETS;
    if (pf_sysv_nsets >= max) {
      ret = -ENOMEM;
    } else if ((ret = pf_sysv_set_new()) >= 0) {
      pf_sysv_ids[pf_sysv_nsets++] = ret;
      pf_sysv_used = 0;
      ret = 0;
    }
  }
  if (ret == 0) {
    p->id = pf_sysv_ids[pf_sysv_nsets - 1];
    p->num = pf_sysv_used++;
    p->gen = pf_sysv_gen;
    p->cnt = p->cnt_next = 0;
  }
  pf_spin_unlock(&pf_sysv_lock);
  return ret;
}

static int
pf_sysv_prepare(struct pf_parker *p, struct pf_park *k)
{
  int ret;
  if (PF_UNLIKELY(p->gen != pf_sysv_gen) && (ret = pf_sysv_setup(p)) < 0)
    return ret;
  k->id = p->id;
  k->num = p->num;
  p->cnt_armed = p->cnt;
  AO_int_store(&k->word, 0);
  return 0;
}

static int pf_sysv_park_sem(struct pf_parker *p, const struct pf_deadline *dl);

static int
pf_sysv_park(struct pf_parker *p, struct pf_park *k, int shared, const struct pf_deadline *dl)
{
  int ret = pf_sysv_park_sem(p, dl);
  (void)shared;
  if (ret == 0) {
    p->cnt = p->cnt_next;
    (void)AO_int_load_acquire(&k->word);   /* pairs with unpark's release */
  }
  return ret;
}

/* A region's slot (whose unparker may die): at most a slice of a second. */
static void
pf_sysv_collect(struct pf_parker *p, struct pf_park *k, int shared)
{
  static const struct timespec second = { 1, 0 };
  int v = semctl(p->id, PF_SYSV_CNT(p->num), GETVAL);
  if (v >= 0 && v != p->cnt_armed) {
    /* A park of this wait took it (and was maybe cut short before it could
     * record so: an asynchronous cancellation or a siglongjmp right after
     * the semop, or right after). */
    p->cnt = v;
    (void)AO_int_load_acquire(&k->word);
    return;
  }
  for (;;) {
    struct pf_deadline d;
    const struct pf_deadline *dp = NULL;
    if (shared && pf_deadline_from_rel(&d, &second) == 0)
      dp = &d;
    if (pf_sysv_park(p, k, shared, dp) == 0)
      return;
    if (dp)
      return;                 /* a region's: a slice without the token (wait.c (R)) */
  }
}

static int
pf_sysv_park_sem(struct pf_parker *p, const struct pf_deadline *dl)
{
  struct sembuf op[2];
  /* Take the token and move the counter, atomically (header comment). */
  p->cnt_next = p->cnt >= PF_SYSV_CNT_WRAP ? 0 : p->cnt + 1;
  op[0].sem_num = (unsigned short)p->num;
  op[0].sem_op = -1;
  op[0].sem_flg = 0;
  op[1].sem_num = (unsigned short)PF_SYSV_CNT(p->num);
  op[1].sem_op = (short)(p->cnt_next - p->cnt);
  op[1].sem_flg = 0;

  if (!dl) {
    /* semop is no cancellation point (glibc makes it a plain system call). */
    if (semop(p->id, op, 2) == 0)
      return 0;
    return -errno;            /* EINTR after a handler: the engine decides */
  }
#ifdef PF_SYSV_USE_SEMTIMEDOP
  for (;;) {
    struct timespec left;
    int ret = pf_deadline_left(dl, &left);
    if (ret < 0)
      return ret;
    if (semtimedop(p->id, op, 2, &left) == 0)
      return 0;
    /* semtimedop also ends with EINTR after a stop and continue (SIGSTOP,
     * ptrace), where futex(2) resumes: go on unless a handler may have run. */
    if (errno == EINTR) {
      if (pf_sig_handler_possible())
        return -EINTR;
      continue;
    }
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
     * process instead of reaching its handler).  pselect is a cancellation
     * point and a futex wait is not: cancellation is disabled around each
     * nap and let in between naps, where an asynchronous cancellation
     * pending meanwhile acts (the wait's cleanup handler is in place). */
    long nap = 50000;
    sigset_t orig;
    int ret;
    struct pf_cancel cancel;

    pthread_sigmask(SIG_BLOCK, &pf_sig_nonfault, &orig);
    pf_cancel_off(&cancel);
    op[0].sem_flg = op[1].sem_flg = IPC_NOWAIT;
    for (;;) {
      struct timespec left, ts;
      if (semop(p->id, op, 2) == 0) {
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
        ret = semop(p->id, op, 2) == 0 ? 0 : -EINTR;
        break;
      }
      if (nap < 1000000)
        nap *= 2;
      if (cancel.state == PTHREAD_CANCEL_ENABLE && cancel.type == PTHREAD_CANCEL_ASYNCHRONOUS) {
        /* an asynchronous cancellation that came during the nap acts here */
        pthread_sigmask(SIG_SETMASK, &orig, NULL);
        pf_cancel_restore(&cancel);
        pf_cancel_off(&cancel);
        pthread_sigmask(SIG_BLOCK, &pf_sig_nonfault, NULL);
      }
    }
    pthread_sigmask(SIG_SETMASK, &orig, NULL);
    pf_cancel_restore(&cancel);
    return ret;
  }
#endif
}

static void
pf_sysv_unpark(struct pf_park *k, int shared)
{
  struct sembuf op[4], *post = op;
  int id = k->id, num = k->num;   /* read the parker before the token: last touch */
  if (num < 0 || num >= PF_SYSV_SET_SIZE)
    return;                   /* a corrupt slot: no semaphore of ours */
  if (shared) {
    /* Post only if the set is tagged as pfutex's (header comment). */
    op[0].sem_num = PF_SYSV_TAG;
    op[0].sem_op = -PF_SYSV_TAG_MAGIC;
    op[0].sem_flg = IPC_NOWAIT;
    op[1].sem_num = PF_SYSV_TAG;
    op[1].sem_op = 0;
    op[1].sem_flg = IPC_NOWAIT;
    op[2].sem_num = PF_SYSV_TAG;
    op[2].sem_op = PF_SYSV_TAG_MAGIC;
    op[2].sem_flg = 0;
    post = &op[3];
  }
  post->sem_num = (unsigned short)num;
  post->sem_op = 1;
  post->sem_flg = 0;
  /* Publish the waker's writes with a release store the waiter pairs with
   * an acquire load after semop: the memory model (and ThreadSanitizer)
   * cannot see the semaphore as synchronisation. */
  AO_int_store_release(&k->word, 1);
  while (semop(id, op, (size_t)(post - op) + 1) != 0 && errno == EINTR)
    ;
}

const struct pf_port pf_port_sysv = {
  .name = "sysv",
  .gen = &pf_sysv_gen,
  .init = pf_sysv_init,
  .prepare = pf_sysv_prepare,
  .park = pf_sysv_park,
  .unpark = pf_sysv_unpark,
  .collect = pf_sysv_collect,
};
