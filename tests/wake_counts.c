/* wake_counts: FUTEX_WAKE wakes exactly the number asked for, and reports
 * it.  val 0 wakes one (Linux quirk); INT_MAX wakes all.  The clean
 * pfutex_wake with nr 0 wakes none. */
#include <errno.h>
#include <limits.h>
#include <pfutex/linux.h>
#include "pft.h"

#define N 8

static uint32_t word;
static struct pft_waiter ws[N];

/* Every waiter that has not returned is still asleep. */
static int
rest_asleep(void)
{
  int i;
  for (i = 0; i < N; i++)
    if (!ws[i].done && (pft_wait_asleep(ws[i].tid) != 0 || ws[i].done))
      return 0;
  return 1;
}

static int
done_ret0(void)
{
  int i;
  for (i = 0; i < N; i++)
    if (ws[i].done && (ws[i].ret != 0)) {
      diag("waiter %d returned %ld, errno %d", i, ws[i].ret, ws[i].err);
      return 0;
    }
  return 1;
}

int
main(void)
{
  int i;

  plan(16);
  pft_watchdog(60);

  for (i = 0; i < N; i++) {
    ws[i].uaddr = &word;
    ws[i].val = 0;
    ws[i].op_flags = FUTEX_PRIVATE_FLAG;
    pft_waiter_start(&ws[i]);
  }
  is_int(0, pft_count_done(ws, N), "all %d waiters asleep", N);

  is_int(3, pfutex(&word, FUTEX_WAKE_PRIVATE, 3, NULL, NULL, 0), "WAKE 3 reports 3");
  pft_wait_done(ws, N, 3);
  ok(rest_asleep(), "the other 5 are still asleep");
  is_int(3, pft_count_done(ws, N), "exactly 3 returned");
  ok(done_ret0(), "the woken waiters returned 0");

  is_int(1, pfutex(&word, FUTEX_WAKE_PRIVATE, 0, NULL, NULL, 0), "WAKE 0 wakes one");
  pft_wait_done(ws, N, 4);
  ok(rest_asleep(), "the other 4 are still asleep");
  is_int(4, pft_count_done(ws, N), "exactly 4 returned");

  is_int(0, pfutex_wake(&word, PFUTEX_BITSET_MATCH_ANY, 0, PFUTEX_PRIVATE), "pfutex_wake nr 0 wakes none");
  ok(rest_asleep() && pft_count_done(ws, N) == 4, "still 4 asleep");

  is_int(2, pfutex_wake(&word, PFUTEX_BITSET_MATCH_ANY, 2, PFUTEX_PRIVATE), "pfutex_wake nr 2 wakes 2");
  pft_wait_done(ws, N, 6);
  ok(rest_asleep(), "the other 2 are still asleep");
  is_int(6, pft_count_done(ws, N), "exactly 6 returned");

  is_int(2, pfutex(&word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0), "WAKE INT_MAX wakes the last 2");
  for (i = 0; i < N; i++)
    pft_waiter_join(&ws[i]);
  ok(done_ret0(), "every waiter returned 0");
  is_int(0, pfutex(&word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0), "nobody is left");
  return 0;
}
