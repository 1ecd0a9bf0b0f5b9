/* region_sem_foreign: emu:sysv, a region's slot names the semaphore a
 * waker posts (set id, number: struct pf_park, src/port.h), and a slot is
 * untrusted.  A slot scribbled to name a semaphore set that pfutex did not
 * make (another program's, of the same user) is never posted: the waker
 * checks the set is one of the port's (its tag, ports/sysv/park.c) before
 * it posts (issue 18).
 *
 * White-box (src/region/internal.h: the handle locates the slots).  One child
 * process waits on a word of an anonymous region, three times; each time,
 * once its slot is QUEUED and it sleeps, the main process (the waker)
 * optionally rewrites the slot's park.id/num and wakes one waiter:
 *   1. the slot names a foreign set of 1 semaphore (semget IPC_PRIVATE,
 *      value 0), number 0;
 *   2. the slot is left alone: the wake still posts the waiter's own
 *      semaphore (its consumption counter moves: the token came);
 *   3. the slot names a foreign set shaped like pfutex's (67 semaphores,
 *      all 0: no tag), number 0;
 *   4. the same set with its 65th semaphore (where pfutex's tag is) one
 *      above the tag's magic.
 * Checked: each wake counts the waiter; the foreign semaphores stay 0 (the
 * unfixed port posted them: 1); the waiter's wait returns 0 each time (a
 * misdirected token: woken wins at the end of its 1 s park slice, wait.c
 * (R)), within the child's 10 s timeout and its watchdog; the region ends
 * consistent with nothing queued.  The foreign sets are removed at exit.
 * Other backends park no SysV semaphore: skipped there. */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: no SysV semaphores (the sysv port is POSIX only)");
  return 0;
}
#else
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include "../ports/sysv/semun.h"
#include "region/internal.h"
#include "pft.h"
#include "region_util.h"
#include "pfutex/linux.h"

#define RS_ROUNDS 4
#define RS_NSEMS 67                 /* a pfutex set: 32 parkers, 32 counters, a 3-value tag */
#define RS_CNT(num) (32 + (num))    /* a parker's consumption counter */
#define RS_TAG 64                   /* the tag: the magic, the creator's pid */
#define RS_TAG_MAGIC 0x5046
#define RS_TMO_S 10                 /* the waiter's timeout: a backstop, never reached */

enum { RS_FOREIGN_1, RS_LEGIT, RS_FOREIGN_67, RS_FOREIGN_TAG };

struct rs_shared {
  volatile int go[RS_ROUNDS], started[RS_ROUNDS], done[RS_ROUNDS];
  long ret[RS_ROUNDS];
  int err[RS_ROUNDS];
  long long ns[RS_ROUNDS];
};

static int rs_foreign1 = -1, rs_foreign67 = -1;

static void
rs_cleanup(void)
{
  if (rs_foreign1 >= 0)
    semctl(rs_foreign1, 0, IPC_RMID);
  if (rs_foreign67 >= 0)
    semctl(rs_foreign67, 0, IPC_RMID);
  rs_foreign1 = rs_foreign67 = -1;
}

/* The sum of a set's values (-1: unreadable). */
static long
rs_sem_sum(int id, int nsems)
{
  unsigned short vals[RS_NSEMS];
  union semun arg;
  long sum = 0;
  int i;
  arg.array = vals;
  if (semctl(id, 0, GETALL, arg) != 0)
    return -1;
  for (i = 0; i < nsems; i++)
    sum += vals[i];
  return sum;
}

/* The QUEUED slot of the region (the child's), or NULL after ~15 s. */
static struct pf_node *
rs_queued_slot(pfutex_region_t *rg)
{
  long tries;
  uint32_t i;
  for (tries = 0; tries < 150000; tries++) {
    for (i = 0; i < rg->att->tab.nslots; i++)
      if (__atomic_load_n(&rg->att->tab.slots[i].state, __ATOMIC_SEQ_CST) == PF_W_QUEUED)
        return &rg->att->tab.slots[i];
    usleep(100);
  }
  return NULL;
}

static void
rs_child(struct rs_shared *sh, uint32_t *word)
{
  int r;
  ru_child_alarm(60);
  for (r = 0; r < RS_ROUNDS; r++) {
    struct timespec tmo = { RS_TMO_S, 0 };
    long long t0;
    if (ru_wait_flag(&sh->go[r], 1) != 0)
      _exit(2);
    t0 = pft_now_ns();
    __atomic_store_n(&sh->started[r], 1, __ATOMIC_SEQ_CST);
    errno = 0;
    sh->ret[r] = pfutex(word, FUTEX_WAIT, 0, &tmo, NULL, 0);
    sh->err[r] = errno;
    sh->ns[r] = pft_now_ns() - t0;
    __atomic_store_n(&sh->done[r], 1, __ATOMIC_SEQ_CST);
  }
  _exit(0);
}

int
main(void)
{
  static const char *const what[RS_ROUNDS] = {
    "a foreign 1-semaphore set", "the waiter's own semaphore (not scribbled)",
    "a foreign 67-semaphore set without pfutex's tag",
    "a foreign 67-semaphore set whose tag semaphore is the magic + 1"
  };
  const char *backend;
  pfutex_region_t *rg;
  struct rs_shared *sh;
  struct pf_region_stats st = { 0 };
  const char *why = "";
  uint32_t *word;
  pid_t pid;
  int r, status;

  PFT_SKIP_UNDER_TSAN();
  backend = pfutex_backend();
  if (!backend || strcmp(backend, "emu:sysv") != 0)
    skip_all("emu:sysv only: backend %s parks no SysV semaphore (a slot's park.id/num are "
             "the sysv port's)", backend ? backend : "(none)");
  plan(13);
  pft_watchdog(60);

  if ((rs_foreign1 = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600)) < 0)
    sysbail("semget 1");
  atexit(rs_cleanup);
  if ((rs_foreign67 = semget(IPC_PRIVATE, RS_NSEMS, IPC_CREAT | 0600)) < 0)
    sysbail("semget %d", RS_NSEMS);
  if (rs_sem_sum(rs_foreign1, 1) != 0 || rs_sem_sum(rs_foreign67, RS_NSEMS) != 0)
    bail("a new semaphore set is not all 0");
  if (!(rg = pfutex_region_anon(4096)))
    sysbail("pfutex_region_anon");
  word = pfutex_region_addr(rg);
  sh = ru_shared_alloc(sizeof *sh);

  fflush(stdout);
  if ((pid = fork()) < 0)
    sysbail("fork");
  if (pid == 0)
    rs_child(sh, word);

  for (r = 0; r < RS_ROUNDS; r++) {
    struct pf_node *n;
    int id, num, cnt0, cnt1 = -1, foreign = r == RS_FOREIGN_1 ? rs_foreign1 : rs_foreign67;
    long woken, sum0 = -1;

    if (r == RS_FOREIGN_TAG && semctl(rs_foreign67, RS_TAG, SETVAL, RS_TAG_MAGIC + 1) != 0)
      sysbail("semctl SETVAL");
    __atomic_store_n(&sh->go[r], 1, __ATOMIC_SEQ_CST);
    if (ru_wait_asleep(pid, pid, &sh->started[r], &sh->done[r]) != 0 || !(n = rs_queued_slot(rg)))
      bail("round %d: the waiter never queued and slept", r + 1);
    id = n->park.id;
    num = n->park.num;
    cnt0 = semctl(id, RS_CNT(num), GETVAL);
    if (r != RS_LEGIT) {
      sum0 = rs_sem_sum(foreign, r == RS_FOREIGN_1 ? 1 : RS_NSEMS);
      n->park.id = foreign;   /* the scribble */
      n->park.num = 0;
    }
    woken = pfutex(word, FUTEX_WAKE, 1, NULL, NULL, 0);
    if (ru_wait_flag(&sh->done[r], 1) != 0)
      bail("round %d: the waiter did not return", r + 1);
    if (r == RS_LEGIT)
      cnt1 = semctl(id, RS_CNT(num), GETVAL);
    is_int(1, woken, "slot -> %s: the wake counts the waiter", what[r]);
    if (r == RS_FOREIGN_1) {
      long v = rs_sem_sum(rs_foreign1, 1);
      if (!ok(sum0 == 0 && v == 0, "the foreign set's semaphore is not posted (still 0)"))
        diag("    its value is %ld (the waker posted another program's semaphore)", v);
    } else if (r == RS_FOREIGN_67 || r == RS_FOREIGN_TAG) {
      long v = rs_sem_sum(rs_foreign67, RS_NSEMS);
      if (!ok(sum0 >= 0 && v == sum0, "the foreign look-alike set is not posted (unchanged)"))
        diag("    its values sum to %ld, not %ld (the waker posted another program's semaphore)",
             v, sum0);
    } else {
      if (!ok(cnt0 >= 0 && cnt1 >= 0 && cnt1 != cnt0,
              "the waiter's own semaphore is posted: its park took the token"))
        diag("    set %d number %d: consumption counter %d before the wake, %d after", id, num,
             cnt0, cnt1);
    }
    if (!ok(sh->ret[r] == 0, "the wait returns 0 (%s)",
            r == RS_LEGIT ? "woken" : "woken wins at the end of its park slice"))
      diag("    it returned %ld, %s, after %.3f s", sh->ret[r], pft_errname(sh->err[r]),
           sh->ns[r] / 1e9);
    else
      diag("    after %.3f s", sh->ns[r] / 1e9);
  }
  status = ru_reap(pid);
  if (status != 0)
    diag("the waiter process ended with %d", status);
  if (!ok(status == 0 && pf_region_check(rg, &st, &why) == 0 && st.queued == 0
          && st.slots_live == 0,
          "the region is consistent, nothing queued, no slot held"))
    diag("    child %d; check: %s; queued %u, live slots %u", status, why, st.queued,
         st.slots_live);
  rs_cleanup();
  return 0;
}
#endif /* !_WIN32 */
