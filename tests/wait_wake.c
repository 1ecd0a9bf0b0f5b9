/* wait_wake: the success path.  A waiter that is asleep on a word is woken
 * by one WAKE, which reports 1; the waiter returns 0. */
#include <errno.h>
#include "pft.h"

int
main(void)
{
  static uint32_t word;
  struct pft_waiter w = { .uaddr = &word, .val = 0, .op_flags = 128 };
  struct pft_waiter s = { .uaddr = &word, .val = 0, .op_flags = 0 };

  plan(6);
  pft_watchdog(30);

  pft_waiter_start(&w);
  ok(!w.done, "private waiter is asleep");
  __atomic_store_n(&word, 1, __ATOMIC_SEQ_CST);
  is_int(1, pfutex(&word, 1 | 128, 1, NULL, NULL, 0), "FUTEX_WAKE_PRIVATE woke one");
  pft_waiter_join(&w);
  is_int(0, w.ret, "waiter returned 0");

  __atomic_store_n(&word, 0, __ATOMIC_SEQ_CST);
  pft_waiter_start(&s);
  __atomic_store_n(&word, 1, __ATOMIC_SEQ_CST);
  is_int(1, pfutex(&word, 1, 1, NULL, NULL, 0), "shared FUTEX_WAKE woke one");
  pft_waiter_join(&s);
  is_int(0, s.ret, "shared waiter returned 0");
  is_int(0, pfutex(&word, 1 | 128, 1, NULL, NULL, 0), "a second wake finds nobody");
  return 0;
}
