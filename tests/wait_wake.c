/* wait_wake: the success path.  A waiter that is asleep on a word is woken
 * by one WAKE, which reports 1; the waiter returns 0.
 *
 * "Asleep" is the thread's state (pft_waiter_start), which a thread also
 * shows in a page fault or a lock on its way to the queue: a wake that
 * finds nobody, followed by the waiter's own EAGAIN (the word it then
 * read had changed), is that race, and the round is run again (a few
 * times at most).  A lost wakeup instead leaves the waiter asleep on a
 * changed word: the watchdog ends the test. */
#include <errno.h>
#include "pft.h"

static uint32_t word;

/* One round: a waiter (op_flags: 128 private, 0 shared) started and
 * asleep, the word changed, one wake: the wake's count; *w the waiter. */
static long
round_once(struct pft_waiter *w, int op_flags)
{
  long r;
  int tries;
  for (tries = 0;; tries++) {
    __atomic_store_n(&word, 0, __ATOMIC_SEQ_CST);
    w->uaddr = &word;
    w->val = 0;
    w->op_flags = op_flags;
    pft_waiter_start(w);
    __atomic_store_n(&word, 1, __ATOMIC_SEQ_CST);
    r = pfutex(&word, 1 | op_flags, 1, NULL, NULL, 0);
    pft_waiter_join(w);
    if (r == 0 && w->ret == -1 && w->err == EAGAIN && tries < 5) {
      diag("round %d: the waiter was not queued yet when the wake came (it then read the "
           "changed word: EAGAIN); again", tries);
      continue;
    }
    return r;
  }
}

int
main(void)
{
  struct pft_waiter w = { 0 }, s = { 0 };
  long r;

  plan(5);
  pft_watchdog(30);

  r = round_once(&w, 128);
  is_int(1, r, "FUTEX_WAKE_PRIVATE woke one");
  is_int(0, w.ret, "waiter returned 0");

  r = round_once(&s, 0);
  is_int(1, r, "shared FUTEX_WAKE woke one");
  is_int(0, s.ret, "shared waiter returned 0");
  is_int(0, pfutex(&word, 1 | 128, 1, NULL, NULL, 0), "a second wake finds nobody");
  return 0;
}
