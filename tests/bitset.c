/* bitset: FUTEX_WAKE_BITSET wakes only the waiters whose FUTEX_WAIT_BITSET
 * bitset shares a bit with its mask; plain FUTEX_WAKE (match any) wakes the
 * rest, and a plain FUTEX_WAIT waiter matches every mask. */
#include <errno.h>
#include <limits.h>
#include <pfutex/linux.h>
#include "pft.h"

static uint32_t word;
static struct pft_waiter ws[4];
static const uint32_t bits[3] = { 0x1, 0x2, 0x3 };

/* Start waiters with bitsets 0x1, 0x2, 0x3 (and, if plain, a FUTEX_WAIT
 * one as ws[3]). */
static int
start(int plain)
{
  int i, n = plain ? 4 : 3;
  for (i = 0; i < n; i++) {
    ws[i].uaddr = &word;
    ws[i].val = 0;
    ws[i].bitset = i < 3 ? bits[i] : 0;
    ws[i].op_flags = FUTEX_PRIVATE_FLAG;
    pft_waiter_start(&ws[i]);
  }
  return n;
}

/* Those and only those in `mask_done` (bit i = ws[i]) have returned 0; the
 * others are asleep. */
static int
state(int n, unsigned mask_done)
{
  int i, good = 1;
  for (i = 0; i < n; i++) {
    int want = (mask_done >> i) & 1;
    if (!want && (pft_wait_asleep(ws[i].tid) != 0 || ws[i].done)) {
      diag("waiter %d (bitset %#x) was woken", i, ws[i].bitset);
      good = 0;
    }
    if (want && (!ws[i].done || ws[i].ret != 0)) {
      diag("waiter %d (bitset %#x): done %d ret %ld errno %d", i, ws[i].bitset,
           ws[i].done, ws[i].ret, ws[i].err);
      good = 0;
    }
  }
  return good;
}

static void
join(int n)
{
  int i;
  for (i = 0; i < n; i++)
    pft_waiter_join(&ws[i]);
}

int
main(void)
{
  int n;

  plan(18);
  pft_watchdog(60);

  n = start(0);
  is_int(0, pfutex(&word, FUTEX_WAKE_BITSET_PRIVATE, INT_MAX, NULL, NULL, 0x4),
         "WAKE_BITSET 0x4 wakes none of 0x1 0x2 0x3");
  is_int(2, pfutex(&word, FUTEX_WAKE_BITSET_PRIVATE, INT_MAX, NULL, NULL, 0x1),
         "WAKE_BITSET 0x1 wakes 2");
  pft_wait_done(ws, n, 2);
  ok(state(n, 0x5), "0x1 and 0x3 returned 0, 0x2 asleep");
  is_int(1, pfutex(&word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0),
         "plain WAKE wakes the 0x2 waiter");
  pft_wait_done(ws, n, 3);
  ok(state(n, 0x7), "all returned 0");
  join(n);

  n = start(0);
  is_int(2, pfutex_wake(&word, 0x2, INT_MAX, PFUTEX_PRIVATE), "pfutex_wake mask 0x2 wakes 2");
  pft_wait_done(ws, n, 2);
  ok(state(n, 0x6), "0x2 and 0x3 returned 0, 0x1 asleep");
  is_int(1, pfutex_wake(&word, 0x1, INT_MAX, PFUTEX_PRIVATE), "pfutex_wake mask 0x1 wakes the 0x1 waiter");
  pft_wait_done(ws, n, 3);
  ok(state(n, 0x7), "all returned 0");
  join(n);

  n = start(1);
  is_int(1, pfutex(&word, FUTEX_WAKE_BITSET_PRIVATE, INT_MAX, NULL, NULL, 0x4),
         "WAKE_BITSET 0x4 wakes the plain FUTEX_WAIT waiter");
  pft_wait_done(ws, n, 1);
  ok(state(n, 0x8), "only the plain waiter returned");
  is_int(1, pfutex(&word, FUTEX_WAKE_BITSET_PRIVATE, 1, NULL, NULL, 0x2),
         "WAKE_BITSET 0x2 nr 1 wakes one");
  pft_wait_done(ws, n, 2);
  ok((ws[1].done ^ ws[2].done) && state(n, 0x8 | (ws[1].done ? 0x2 : 0x4)),
     "it is one of 0x2 and 0x3; 0x1 is asleep");
  is_int(0, pfutex(&word, FUTEX_WAKE_BITSET_PRIVATE, INT_MAX, NULL, NULL, 0x4),
         "WAKE_BITSET 0x4 now wakes none");
  ok(state(n, 0x8 | (ws[1].done ? 0x2 : 0x4)), "nobody else returned");
  is_int(2, pfutex(&word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0),
         "plain WAKE wakes the last 2");
  pft_wait_done(ws, n, 4);
  ok(state(n, 0xf), "all returned 0");
  join(n);
  is_int(0, pfutex(&word, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0), "nobody is left");
  return 0;
}
