/* cmp_requeue: FUTEX_CMP_REQUEUE checks *A == val3 first: EAGAIN and
 * nothing done when it differs; otherwise it is FUTEX_REQUEUE.  Counts
 * 0 and 0 do nothing and report 0.  The same for pfutex_cmp_requeue. */
#include <errno.h>
#include <limits.h>
#include <pfutex/linux.h>
#include "pft.h"

#define N 6
#define VAL 5u

static uint32_t A = VAL, B;
static struct pft_waiter ws[N];

#define NR2(n) ((const struct timespec *)(uintptr_t)(n))

static void
start_n(int n)
{
  int i;
  for (i = 0; i < n; i++) {
    ws[i].uaddr = &A;
    ws[i].val = VAL;
    ws[i].op_flags = FUTEX_PRIVATE_FLAG;
    pft_waiter_start(&ws[i]);
  }
}

static int
join_ret0(int n)
{
  int i, good = 1;
  for (i = 0; i < n; i++)
    if (pft_waiter_join(&ws[i]) != 0) {
      diag("waiter %d returned %ld, errno %d", i, ws[i].ret, ws[i].err);
      good = 0;
    }
  return good;
}

static long
wake_legacy(uint32_t *u)
{
  return pfutex(u, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static long
wake_clean(uint32_t *u)
{
  return pfutex_wake(u, PFUTEX_BITSET_MATCH_ANY, INT_MAX, PFUTEX_PRIVATE);
}

int
main(void)
{
  plan(34);
  pft_watchdog(60);

  /* ---- FUTEX_CMP_REQUEUE ---- */
  start_n(N);
  PFT_IS(pfutex(&A, FUTEX_CMP_REQUEUE_PRIVATE, 1, NR2(2), &B, VAL + 1), -1, EAGAIN,
         "CMP_REQUEUE with *A != val3");
  is_int(VAL, A, "*A unchanged");
  is_int(0, pft_count_done(ws, N), "nobody was woken");
  is_int(0, wake_legacy(&B), "nobody was moved to B");
  is_int(N, wake_legacy(&A), "all %d are still on A", N);
  ok(join_ret0(N), "every waiter returned 0");

  start_n(N);
  is_int(3, pfutex(&A, FUTEX_CMP_REQUEUE_PRIVATE, 1, NR2(2), &B, VAL),
         "CMP_REQUEUE 1+2 with *A == val3 reports 3");
  pft_wait_done(ws, N, 1);
  is_int(1, pft_count_done(ws, N), "one waiter returned");
  is_int(2, wake_legacy(&B), "two were moved to B");
  pft_wait_done(ws, N, 3);
  is_int(3, wake_legacy(&A), "three stayed on A");
  ok(join_ret0(N), "every waiter returned 0");
  is_int(0, wake_legacy(&A) + wake_legacy(&B), "A and B are empty");

  start_n(2);
  is_int(0, pfutex(&A, FUTEX_CMP_REQUEUE_PRIVATE, 0, NR2(0), &B, VAL), "CMP_REQUEUE 0+0 reports 0");
  is_int(0, pft_count_done(ws, 2), "nobody was woken");
  is_int(0, wake_legacy(&B), "nobody was moved");
  is_int(2, wake_legacy(&A), "both are still on A");
  ok(join_ret0(2), "both returned 0");

  /* ---- pfutex_cmp_requeue ---- */
  start_n(N);
  PFT_IS(pfutex_cmp_requeue(&A, VAL + 1, &B, 1, 2, PFUTEX_PRIVATE), -1, EAGAIN,
         "pfutex_cmp_requeue with *A != val");
  is_int(VAL, A, "*A unchanged");
  is_int(0, pft_count_done(ws, N), "nobody was woken");
  is_int(0, wake_clean(&B), "nobody was moved to B");
  is_int(N, wake_clean(&A), "all %d are still on A", N);
  ok(join_ret0(N), "every waiter returned 0");

  start_n(N);
  is_int(3, pfutex_cmp_requeue(&A, VAL, &B, 1, 2, PFUTEX_PRIVATE),
         "pfutex_cmp_requeue 1+2 with *A == val reports 3");
  pft_wait_done(ws, N, 1);
  is_int(1, pft_count_done(ws, N), "one waiter returned");
  is_int(2, wake_clean(&B), "two were moved to B");
  pft_wait_done(ws, N, 3);
  is_int(3, wake_clean(&A), "three stayed on A");
  ok(join_ret0(N), "every waiter returned 0");
  is_int(0, wake_clean(&A) + wake_clean(&B), "A and B are empty");

  start_n(2);
  is_int(0, pfutex_cmp_requeue(&A, VAL, &B, 0, 0, PFUTEX_PRIVATE), "pfutex_cmp_requeue 0+0 reports 0");
  is_int(0, pft_count_done(ws, 2), "nobody was woken");
  is_int(0, wake_clean(&B), "nobody was moved");
  is_int(2, wake_clean(&A), "both are still on A");
  ok(join_ret0(2), "both returned 0");
  return 0;
}
