/* robust_wait: a process sleeps in FUTEX_WAIT on a robust (non-PI) lock's
 * word while the lock's owner, another process, is killed (SIGKILL) holding
 * it; nobody has a signal handler.  Linux walks the dead owner's robust list
 * at its exit: the word becomes FUTEX_WAITERS | FUTEX_OWNER_DIED and the
 * waiter is woken: its wait returns 0.  Under emulation a surviving process
 * of the region walks the list, and the waiter itself may be that survivor
 * (its wait's slice, wait.c (R)): the walk's wake of its own word must wake
 * it as the kernel's does (issue 32, item 1: it ended the wait with EINTR,
 * timed, or EAGAIN, untimed, as if a handler had called pfutex).  Both
 * waits, each twice; the native backend is the reference (its answers are
 * the kernel's).  The region holds the words and the owner's list
 * (examples/robust_mutex.h's rm_thread: a list there is what a survivor
 * can walk). */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include "basic.h"

#ifdef _WIN32
int
main(void)
{
  skip_all("Windows: needs fork() and SIGKILL");
  return 0;
}
#else
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <pfutex.h>
#include <pfutex/linux.h>
#include "pft.h"
#include "../examples/robust_mutex.h"

struct shared {
  rm_thread_t owner_list;        /* the owner's robust list, in the region */
  rm_mutex_t m;
  volatile int owner_tid, held, waiting, init_err;
};

/* The owner: its list in the region, the lock taken, then nothing until
 * it is killed. */
static void
owner_main(struct shared *s)
{
  int e;
  if ((e = rm_thread_init(&s->owner_list)) != 0) {
    s->init_err = e;                /* (qemu-user refuses robust lists: ENOSYS) */
    __atomic_store_n(&s->held, -1, __ATOMIC_SEQ_CST);
    _exit(10);
  }
  if (rm_mutex_lock(&s->owner_list, &s->m) != 0)
    _exit(11);
  s->owner_tid = (int)pfutex_tid();
  __atomic_store_n(&s->held, 1, __ATOMIC_SEQ_CST);
  for (;;)
    pause();
}

/* The waiter: FUTEX_WAITERS set, then one wait on the owner's word, timed
 * (a backstop of 30 s) or not; exit status 0 for a return of 0, 1 EAGAIN,
 * 2 EINTR, 3 ETIMEDOUT, 4 other. */
static void
waiter_main(struct shared *s, int timed)
{
  uint32_t v = __atomic_load_n(&s->m.word, __ATOMIC_SEQ_CST) | FUTEX_WAITERS;
  struct timespec t = { 30, 0 };
  long r;
  __atomic_store_n(&s->m.word, v, __ATOMIC_SEQ_CST);
  __atomic_store_n(&s->waiting, 1, __ATOMIC_SEQ_CST);
  r = pfutex(&s->m.word, FUTEX_WAIT, v, timed ? &t : NULL, NULL, 0);
  if (r == 0)
    _exit(0);
  _exit(errno == EAGAIN ? 1 : errno == EINTR ? 2 : errno == ETIMEDOUT ? 3 : 4);
}

static int
reap(pid_t p)
{
  int st;
  while (waitpid(p, &st, 0) < 0)
    if (errno != EINTR)
      return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 100 + (WIFSIGNALED(st) ? WTERMSIG(st) : 0);
}

static void
one(int timed, int round)
{
  static const char *const what[] = { "0", "EAGAIN", "EINTR", "ETIMEDOUT", "another error" };
  pfutex_region_t *rg = pfutex_region_anon(65536);
  struct shared *s;
  pid_t owner, waiter;
  int st, w;
  uint32_t word;
  if (!rg)
    sysbail("pfutex_region_anon");
  s = pfutex_region_addr(rg);
  memset(s, 0, sizeof *s);
  fflush(stdout);
  if ((owner = fork()) < 0)
    sysbail("fork");
  if (owner == 0)
    owner_main(s);
  while (!__atomic_load_n(&s->held, __ATOMIC_SEQ_CST))
    usleep(1000);
  if (s->held < 0) {
    (void)reap(owner);
    skip("%s wait, round %d: pfutex_set_robust_list answers %s here%s", timed ? "a timed" : "an untimed",
         round, strerror(s->init_err), pft_emulator() ? " (qemu-user does not pass robust lists to the kernel)" : "");
    pfutex_region_close(rg);
    return;
  }
  if ((waiter = fork()) < 0)
    sysbail("fork");
  if (waiter == 0)
    waiter_main(s, timed);
  /* asleep in its wait: it said so just before, then two samples of
   * its state asleep */
  {
    int seen = 0, n;
    while (!__atomic_load_n(&s->waiting, __ATOMIC_SEQ_CST))
      usleep(1000);
    for (n = 0; n < 50000 && seen < 2; n++) {
      int stt = pft_task_state(waiter, waiter);
      seen = stt == 'S' ? seen + 1 : 0;
      usleep(200);
    }
  }
  kill(owner, SIGKILL);
  (void)reap(owner);
  st = reap(waiter);
  word = __atomic_load_n(&s->m.word, __ATOMIC_SEQ_CST);
  w = st >= 0 && st <= 4 ? st : 4;
  ok(st == 0 && word == (FUTEX_WAITERS | FUTEX_OWNER_DIED),
     "%s wait, round %d: the owner killed holding the lock: the wait returns %s (0), the word "
     "%#x (FUTEX_WAITERS|FUTEX_OWNER_DIED)", timed ? "a timed" : "an untimed", round,
     st > 4 ? "(killed)" : what[w], (unsigned)word);
  pfutex_region_close(rg);
}

int
main(void)
{
  int round;
  plan(4);
  pft_watchdog(150);
  if (!pfutex_backend())
    skip_all("no backend");
  for (round = 1; round <= 2; round++) {
    one(1, round);
    one(0, round);
  }
  return 0;
}
#endif
