/* requeue: FUTEX_REQUEUE wakes nr_wake waiters of A, moves nr_requeue of
 * the rest to B and reports woken + moved; the moved ones are then woken
 * by a wake on B, the others stay on A.  The same for pfutex_requeue. */
#include <errno.h>
#include <limits.h>
#include <pfutex/linux.h>
#include "pft.h"

#define N 6

static uint32_t A, B;
static struct pft_waiter ws[N];

static void
start_all(void)
{
  int i;
  for (i = 0; i < N; i++) {
    ws[i].uaddr = &A;
    ws[i].val = 0;
    ws[i].op_flags = FUTEX_PRIVATE_FLAG;
    pft_waiter_start(&ws[i]);
  }
}

static int
join_all_ret0(void)
{
  int i, good = 1;
  for (i = 0; i < N; i++)
    if (pft_waiter_join(&ws[i]) != 0) {
      diag("waiter %d returned %ld, errno %d", i, ws[i].ret, ws[i].err);
      good = 0;
    }
  return good;
}

int
main(void)
{
  plan(14);
  pft_watchdog(60);

  /* The compatibility call. */
  start_all();
  is_int(3, pfutex(&A, FUTEX_REQUEUE_PRIVATE, 1, (const struct timespec *)(uintptr_t)2, &B, 0),
         "FUTEX_REQUEUE 1+2 reports 3");
  pft_wait_done(ws, N, 1);
  is_int(1, pft_count_done(ws, N), "one waiter returned");
  is_int(2, pfutex(&B, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0), "two waiters were moved to B");
  pft_wait_done(ws, N, 3);
  is_int(3, pfutex(&A, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0), "three stayed on A");
  ok(join_all_ret0(), "every waiter returned 0");
  is_int(0, pfutex(&A, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0), "A is empty");
  is_int(0, pfutex(&B, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0), "B is empty");

  /* The clean call. */
  start_all();
  is_int(3, pfutex_requeue(&A, &B, 1, 2, PFUTEX_PRIVATE), "pfutex_requeue 1+2 reports 3");
  pft_wait_done(ws, N, 1);
  is_int(1, pft_count_done(ws, N), "one waiter returned");
  is_int(2, pfutex_wake(&B, PFUTEX_BITSET_MATCH_ANY, INT_MAX, PFUTEX_PRIVATE), "two waiters were moved to B");
  pft_wait_done(ws, N, 3);
  is_int(3, pfutex_wake(&A, PFUTEX_BITSET_MATCH_ANY, INT_MAX, PFUTEX_PRIVATE), "three stayed on A");
  ok(join_all_ret0(), "every waiter returned 0");
  is_int(0, pfutex_wake(&A, PFUTEX_BITSET_MATCH_ANY, INT_MAX, PFUTEX_PRIVATE), "A is empty");
  is_int(0, pfutex_wake(&B, PFUTEX_BITSET_MATCH_ANY, INT_MAX, PFUTEX_PRIVATE), "B is empty");
  return 0;
}
