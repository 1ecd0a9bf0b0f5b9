/* requeue_timeout: a timed waiter that was requeued, then timed out, removes
 * itself from the queue it is on now (invariant 3): it returns ETIMEDOUT,
 * and afterwards neither word has a waiter left (a node left queued on a
 * dead stack frame would be "woken" here, or crash the wake). */
#include <errno.h>
#include <string.h>
#include "pft.h"

#define N 4

int
main(void)
{
  static uint32_t a[64], b[64];   /* far apart: different buckets, most likely */
  struct pft_waiter w[N];
  struct timespec rel = { 0, 300 * 1000 * 1000 };
  int i, timedout = 0, round, moved = -1;

  plan(7);
  pft_watchdog(180);
  memset(w, 0, sizeof w);
  /* The waiters must still be waiting when the requeue comes: on a loaded
   * machine starting them can take longer than their timeout.  A round
   * whose requeue found fewer than N (some timed out first: counted, and
   * nobody may be left on either word) runs again with the timeout
   * doubled (0.3 s up to 38 s): how long the machine took decides only
   * how many rounds run, never the result. */
  for (round = 0; round < 8; round++) {
    for (i = 0; i < N; i++) {
      w[i].uaddr = &a[0];
      w[i].val = 0;
      w[i].op_flags = 128;
      w[i].timeout = &rel;
      pft_waiter_start(&w[i]);
    }
    moved = (int)pfutex(&a[0], 3 | 128, 0, (const struct timespec *)(uintptr_t)N, &b[0], 0);
    if (moved == N)
      break;
    pft_wait_done(w, N, N);
    for (i = 0, timedout = 0; i < N; i++) {
      pft_waiter_join(&w[i]);
      timedout += w[i].ret == -1 && w[i].err == ETIMEDOUT;
    }
    diag("round %d: the requeue moved %d of %d waiters (%d.%03d s timeouts; the others timed out "
         "first: %d of %d timed out in all); nobody left: %d on a, %d on b", round, moved, N,
         (int)rel.tv_sec, (int)(rel.tv_nsec / 1000000), timedout, N,
         (int)pfutex(&a[0], 1 | 128, 0x7fffffff, NULL, NULL, 0),
         (int)pfutex(&b[0], 1 | 128, 0x7fffffff, NULL, NULL, 0));
    if (timedout != N)
      break;                      /* a waiter that neither was moved nor timed out: fail below */
    rel.tv_sec = rel.tv_sec * 2 + (rel.tv_nsec * 2) / 1000000000L;
    rel.tv_nsec = (rel.tv_nsec * 2) % 1000000000L;
  }
  timedout = 0;
  if (moved != N)                 /* (its waiters joined above) */
    bail("REQUEUE moved %d of %d timed waiters in every round (the last: %d.%03d s timeouts)", moved,
         N, (int)rel.tv_sec, (int)(rel.tv_nsec / 1000000));
  is_int(N, moved, "REQUEUE moved all %d timed waiters from a to b", N);
  is_int(0, pfutex(&a[0], 1 | 128, 0x7fffffff, NULL, NULL, 0), "nobody is left on a");
  pft_wait_done(w, N, N);
  for (i = 0; i < N; i++) {
    pft_waiter_join(&w[i]);
    timedout += w[i].ret == -1 && w[i].err == ETIMEDOUT;
  }
  is_int(N, timedout, "every requeued waiter timed out");
  is_int(0, pfutex(&b[0], 1 | 128, 0x7fffffff, NULL, NULL, 0), "and left b's queue: nobody on b");
  is_int(0, pfutex(&a[0], 1 | 128, 0x7fffffff, NULL, NULL, 0), "nor on a");

  /* The same with one requeued back again before the timeout. */
  w[0].uaddr = &a[0];
  pft_waiter_start(&w[0]);
  pfutex(&a[0], 3 | 128, 0, (const struct timespec *)(uintptr_t)1, &b[0], 0);
  pfutex(&b[0], 3 | 128, 0, (const struct timespec *)(uintptr_t)1, &a[0], 0);
  pft_waiter_join(&w[0]);
  ok(w[0].ret == -1 && w[0].err == ETIMEDOUT, "requeued twice, still times out");
  is_int(0, pfutex(&a[0], 1 | 128, 0x7fffffff, NULL, NULL, 0) + pfutex(&b[0], 1 | 128, 0x7fffffff, NULL, NULL, 0),
         "and is on neither queue afterwards");
  return 0;
}
