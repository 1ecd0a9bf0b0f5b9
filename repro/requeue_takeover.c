/* requeue_takeover: a requeue whose target bucket's lock it takes over from
 * a dead holder leaves that bucket's waiter count one too low.
 *
 * pf_emu_requeue raises waiters(B2) before it takes the locks ((C) in
 * wait.c) and lowers it again at the end.  If it takes B2's lock over from
 * a dead holder, pf_bucket_rebuild_locked stores waiters(B2) = the queued
 * nodes it finds, wiping the requeue's own pending +1; the requeue's final
 * -1 then leaves waiters(B2) = queue length - 1.  With one waiter queued on
 * B the count is 0: the next wake of B takes the fast path (no lock) and
 * returns 0, and the waiter is never woken (a lost wakeup).  The same
 * happens when any other process rebuilds B2 while a requeue waits for the
 * locks with its +1 pending.
 *
 * Build (in a configured build tree _b of the branch):
 *   cd _b && gcc -g -DHAVE_CONFIG_H -I. -I../include -I../src -I../ports/linux \
 *     -o requeue_takeover ../repro/requeue_takeover.c .libs/libpfutex_core.a -pthread
 *   PFUTEX_BACKEND=emu:futex ./requeue_takeover   (or emu:sysv)
 * Expected: "wake(B, 1) = 1", the waiter exits 0, check 0.
 * Got:      waiters(B) 0 with 1 queued, check -131, "wake(B, 1) = 0", the
 *           waiter times out (ETIMEDOUT) after 3 s. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "region.h"

static uint32_t
bucket_of(pfutex_region_t *rg, uint32_t *w)
{
  struct pf_key k;
  struct pf_table *tab;
  pf_region_key(rg, w, &k, &tab);
  return pf_key_bucket(tab, &k);
}

int
main(void)
{
  pfutex_region_t *rg = pfutex_region_anon(4096);
  uint32_t *U = pfutex_region_addr(rg), *A = &U[0], *B = &U[1], ib;
  struct pf_region_stats st;
  const char *why = "";
  pid_t h, p;
  int status, j, r;

  printf("backend %s\n", pfutex_backend());
  for (j = 1; bucket_of(rg, &U[j]) == bucket_of(rg, A); j++)
    ;
  B = &U[j];
  ib = bucket_of(rg, B);

  /* H waits on B (3 s timeout so the repro ends) */
  if ((h = fork()) == 0) {
    struct timespec dl;
    clock_gettime(CLOCK_MONOTONIC, &dl);
    dl.tv_sec += 3;
    r = pfutex_wait(B, 0, PFUTEX_BITSET_MATCH_ANY, 0, &dl, PFUTEX_CLOCK_MONOTONIC);
    _exit(r == 0 ? 0 : errno);
  }
  while (AO_int_load(&rg->tab.buckets[ib].waiters) == 0)
    usleep(1000);
  usleep(100000);                                 /* H asleep */

  /* P takes B's bucket lock and dies holding it */
  if ((p = fork()) == 0) {
    pf_bucket_lock(&rg->tab, ib);
    kill(getpid(), SIGKILL);
    _exit(1);
  }
  waitpid(p, &status, 0);
  printf("lock holder died (signal %d); waiters(B) = %d\n", WTERMSIG(status),
         (int)rg->tab.buckets[ib].waiters);

  r = pfutex_requeue(A, B, 0, 1, 0);                /* A has no waiters: moves none */
  printf("requeue(A, B, 0, 1) = %d; waiters(B) = %d\n", r, (int)rg->tab.buckets[ib].waiters);
  r = pf_region_check(rg, &st, &why);
  printf("pf_region_check = %d (%s), queued %u\n", r, why, st.queued);
  r = pfutex_wake(B, PFUTEX_BITSET_MATCH_ANY, 1, 0);
  printf("wake(B, 1) = %d (expected 1)\n", r);
  waitpid(h, &status, 0);
  printf("waiter on B: exit %d (%s)\n", WEXITSTATUS(status),
         WEXITSTATUS(status) ? strerror(WEXITSTATUS(status)) : "woken");
  return 0;
}
