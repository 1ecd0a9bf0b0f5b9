/* timeout: FUTEX_WAIT's relative timeout, WAIT_BITSET's absolute deadline on
 * CLOCK_MONOTONIC and (with FUTEX_CLOCK_REALTIME) CLOCK_REALTIME, past and
 * zero timeouts, value-before-timeout ordering, the clean pfutex_wait's
 * deadlines, and a timed waiter woken before its deadline.  The elapsed-time
 * checks are lower bounds (a wait must never end early), not speed tests. */
#include <errno.h>
#include <time.h>
#include "pft.h"

#define MS 1000000LL

static void
check_timedout(long r, int e, const char *what)
{
  if (!ok(r == -1 && e == ETIMEDOUT, "%s: -1/ETIMEDOUT", what))
    diag("    got %ld, errno %d", r, e);
}

int
main(void)
{
  static uint32_t word;
  struct timespec t0, t1, dl;
  const struct timespec rel20 = { 0, 20 * MS }, zero = { 0, 0 };
  const struct timespec rel30s = { 30, 0 };
  struct pft_waiter w = { .uaddr = &word, .val = 0, .op_flags = 128 };
  long r;
  int e;

  plan(17);
  pft_watchdog(60);

  /* relative FUTEX_WAIT_PRIVATE */
  clock_gettime(CLOCK_MONOTONIC, &t0);
  errno = 0;
  r = pfutex(&word, 0 | 128, 0, &rel20, NULL, 0);
  e = errno;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  check_timedout(r, e, "FUTEX_WAIT_PRIVATE 20 ms");
  ok(pft_elapsed_ns(&t0, &t1) >= 20 * MS, "relative wait lasted >= 20 ms (%lld ns)",
     pft_elapsed_ns(&t0, &t1));

  PFT_IS(pfutex(&word, 0 | 128, 0, &zero, NULL, 0), -1, ETIMEDOUT, "FUTEX_WAIT zero timeout");

  /* absolute WAIT_BITSET on CLOCK_MONOTONIC */
  clock_gettime(CLOCK_MONOTONIC, &dl);
  pft_timespec_add_ns(&dl, 20 * MS);
  errno = 0;
  r = pfutex(&word, 9 | 128, 0, &dl, NULL, ~0u);
  e = errno;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  check_timedout(r, e, "WAIT_BITSET monotonic deadline now+20 ms");
  ok(pft_elapsed_ns(&dl, &t1) >= 0, "returned at or after the monotonic deadline");

  /* absolute WAIT_BITSET | FUTEX_CLOCK_REALTIME on CLOCK_REALTIME */
  clock_gettime(CLOCK_REALTIME, &dl);
  pft_timespec_add_ns(&dl, 20 * MS);
  errno = 0;
  r = pfutex(&word, 9 | 128 | 256, 0, &dl, NULL, ~0u);
  e = errno;
  clock_gettime(CLOCK_REALTIME, &t1);
  check_timedout(r, e, "WAIT_BITSET|CLOCK_REALTIME deadline now+20 ms");
  ok(pft_elapsed_ns(&dl, &t1) >= 0, "returned at or after the realtime deadline");

  /* past deadlines; the value is checked first */
  clock_gettime(CLOCK_MONOTONIC, &dl);
  pft_timespec_add_ns(&dl, -1000 * MS);
  PFT_IS(pfutex(&word, 9 | 128, 0, &dl, NULL, ~0u), -1, ETIMEDOUT, "WAIT_BITSET past deadline");
  PFT_IS(pfutex(&word, 9 | 128, 1, &dl, NULL, ~0u), -1, EAGAIN,
         "WAIT_BITSET mismatch with past deadline");

  /* clean pfutex_wait deadlines */
  clock_gettime(CLOCK_MONOTONIC, &dl);
  pft_timespec_add_ns(&dl, 20 * MS);
  errno = 0;
  r = pfutex_wait(&word, 0, PFUTEX_BITSET_MATCH_ANY, PFUTEX_PRIVATE, &dl, PFUTEX_CLOCK_MONOTONIC);
  e = errno;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  check_timedout(r, e, "pfutex_wait CLOCK_MONOTONIC deadline");
  ok(pft_elapsed_ns(&dl, &t1) >= 0, "pfutex_wait returned at or after the monotonic deadline");

  clock_gettime(CLOCK_REALTIME, &dl);
  pft_timespec_add_ns(&dl, 20 * MS);
  errno = 0;
  r = pfutex_wait(&word, 0, PFUTEX_BITSET_MATCH_ANY, 0, &dl, PFUTEX_CLOCK_REALTIME);
  e = errno;
  clock_gettime(CLOCK_REALTIME, &t1);
  check_timedout(r, e, "pfutex_wait CLOCK_REALTIME deadline");
  ok(pft_elapsed_ns(&dl, &t1) >= 0, "pfutex_wait returned at or after the realtime deadline");

  clock_gettime(CLOCK_REALTIME, &dl);
  pft_timespec_add_ns(&dl, -1000 * MS);
  PFT_IS(pfutex_wait(&word, 1, PFUTEX_BITSET_MATCH_ANY, 0, &dl, PFUTEX_CLOCK_REALTIME), -1, EAGAIN,
         "pfutex_wait mismatch with past deadline");

  /* a timed waiter woken before its deadline */
  w.timeout = &rel30s;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pft_waiter_start(&w);
  ok(!w.done, "timed waiter is asleep");
  is_int(1, pfutex(&word, 1 | 128, 1, NULL, NULL, 0), "WAKE woke the timed waiter");
  pft_waiter_join(&w);
  if (!is_int(0, w.ret, "timed waiter returned 0"))
    diag("    errno %d", w.err);
  return 0;
}
