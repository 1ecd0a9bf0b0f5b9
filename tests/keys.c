/* keys: private and shared futexes on the same word are different futexes.
 * A private waiter is not woken by a shared wake and a shared waiter is not
 * woken by a private one; each is woken by its own kind. */
#include <errno.h>
#include "pft.h"

int
main(void)
{
  static uint32_t word;
  struct pft_waiter p = { .uaddr = &word, .val = 0, .op_flags = 128 };
  struct pft_waiter s = { .uaddr = &word, .val = 0, .op_flags = 0 };

  plan(8);
  pft_watchdog(60);

  pft_waiter_start(&p);
  is_int(0, pfutex(&word, 1, 1, NULL, NULL, 0), "shared WAKE does not wake a private waiter");
  pft_wait_asleep(p.tid);
  ok(!__atomic_load_n(&p.done, __ATOMIC_SEQ_CST), "private waiter still waiting");
  is_int(1, pfutex(&word, 1 | 128, 1, NULL, NULL, 0), "private WAKE wakes it");
  pft_waiter_join(&p);
  is_int(0, p.ret, "private waiter returned 0");

  pft_waiter_start(&s);
  is_int(0, pfutex(&word, 1 | 128, 1, NULL, NULL, 0), "private WAKE does not wake a shared waiter");
  pft_wait_asleep(s.tid);
  ok(!__atomic_load_n(&s.done, __ATOMIC_SEQ_CST), "shared waiter still waiting");
  is_int(1, pfutex(&word, 1, 1, NULL, NULL, 0), "shared WAKE wakes it");
  pft_waiter_join(&s);
  is_int(0, s.ret, "shared waiter returned 0");
  return 0;
}
