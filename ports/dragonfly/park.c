/* park.c - the emulation's DragonFly park port: umtx_sleep(2) and
 * umtx_wakeup(2) on the park word.  "Sleep while this word is 0", like
 * ports/linux/park.c.  DragonFly keys both calls by the physical memory
 * behind the address (umtx.2), so one pair of calls serves private parks
 * and a region's slots alike: a waker in another process that maps the
 * region finds the sleeper.
 *
 * DragonFly's quirks, normalised here (sources: lib/libc/sys/umtx.2 of
 * 2005 and 2015, sys/kern/kern_umtx.c of 2007, 2010 and 2017):
 *   - The timeout is relative, in microseconds, an int; 0 means none.
 *     Kernels up to 2.x refused more than 1000000 with EINVAL ("limited to
 *     the range 0-1000000 microseconds"); since 2017 every sleep, untimed
 *     ones included, is cut at kern.umtx_timeout_max and ends with
 *     EWOULDBLOCK, "the caller is expected to retry".  So each sleep is at
 *     most one second, untimed parks too, and the port loops: the time left
 *     is recomputed on the deadline's own clock before every sleep, rounded
 *     up to a whole microsecond and never 0 (0 would mean "no timeout").
 *   - Expiry is EWOULDBLOCK (umtx.2 of 2015; the 2005 manual says
 *     ETIMEDOUT): either only ends one sleep.  The sleep is counted in
 *     ticks, "accurate to within ~2 ticks", so it may end a little early:
 *     the deadline decides, never the sleep.
 *   - A mismatch is EBUSY; a sleep may return 0 "prematurely, with the
 *     contents of the mutex unchanged" (umtx.2 of 2015).  Both re-read
 *     the word; only a nonzero word is the token.
 *   - umtx_sleep "does not restart in case of a signal, even if the signal
 *     specifies that system calls should restart": EINTR after every
 *     handler, which is what the engine needs (wait.c (F)).
 *   - umtx_wakeup(ptr, 1) may wake more than one sleeper; the port has one
 *     per word.  It returns 0, no count.
 *   - Errors come as -1/errno; errno is kept as the caller had it (parks
 *     run in signal handlers too).  EINVAL and EFAULT are not expected for
 *     a word of ours and are passed on.
 * Could not confirm: which release dropped the 1000000 limit (the 2010
 * kernel has only the negative check), nor kern.umtx_timeout_max's real
 * default (the 2017 source: "default 1 second" in a comment, 2000000 us
 * in the code); the port's one-second sleeps fit all of them.
 *
 * -DPF_PORT_WRONG (the deliberately wrong variant, for the shim's suite
 * run): the whole time left goes to one umtx_sleep, uncapped (as the 2015
 * manual allows), which kernels with the 1000000 limit refuse. */
#include "port.h"

#ifdef PF_SHIM
# include "shim.h"                 /* tests/shims/dragonfly: umtx on Linux */
# define PF_PORT_VAR  pf_port_dragonfly_shim
# define PF_PORT_NAME "dragonfly-shim"
#else
# include <unistd.h>
# define PF_PORT_VAR  pf_port_dragonfly
# define PF_PORT_NAME "dragonfly"
#endif

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <time.h>

#define PF_DFLY_SLEEP_MAX 1000000          /* microseconds per umtx_sleep */

/* *us: the microseconds for the next umtx_sleep, 1 to PF_DFLY_SLEEP_MAX,
 * from the time left on dl's own clock.  0, or -ETIMEDOUT once dl passed. */
static int
pf_dfly_timeout(const struct pf_deadline *dl, int *us)
{
  struct timespec left;
  int ret;
  if (!dl) {
#ifdef PF_PORT_WRONG
    *us = 0;                  /* "indefinite" */
#else
    *us = PF_DFLY_SLEEP_MAX;  /* untimed parks sleep in slices too */
#endif
    return 0;
  }
  if ((ret = pf_deadline_left(dl, &left)) < 0)
    return ret;
#ifdef PF_PORT_WRONG
  if (left.tv_sec >= INT_MAX / 1000000 - 1)
    *us = INT_MAX;
  else
    *us = (int)left.tv_sec * 1000000 + (int)((left.tv_nsec + 999) / 1000);
#else
  if (left.tv_sec >= 1)
    *us = PF_DFLY_SLEEP_MAX;
  else
    *us = (int)((left.tv_nsec + 999) / 1000);
#endif
  if (*us < 1)
    *us = 1;
  return 0;
}

static int
pf_dfly_park(struct pf_parker *p, struct pf_park *k, int shared, const struct pf_deadline *dl)
{
  volatile const int *word = (volatile const int *)(void *)&k->word;
  int saved = errno, ret;
  (void)p;
  (void)shared;               /* one kind of sleep: keyed by physical memory */
  for (;;) {
    int us, e;
    if (AO_int_load_acquire(&k->word)) {
      ret = 0;
      break;
    }
    if ((ret = pf_dfly_timeout(dl, &us)) < 0)
      break;                  /* -ETIMEDOUT */
    if (umtx_sleep(word, 0, us) == 0)
      continue;               /* woken, or early: re-read */
    e = errno;
    if (AO_int_load_acquire(&k->word)) {
      ret = 0;                /* the token came meanwhile: woken wins */
      break;
    }
    if (e == EBUSY || e == EWOULDBLOCK || e == ETIMEDOUT)
      continue;               /* the word moved, or one sleep ran out: the
                                 deadline is checked at the top */
    ret = -e;                 /* -EINTR: a handler ran, the engine decides;
                                 EINVAL, EFAULT: passed on */
    break;
  }
  errno = saved;
  return ret;
}

/* The release store is the last access to *k; the wakeup then only looks
 * the address up (a stale one causes at worst an early return, which every
 * park absorbs). */
static void
pf_dfly_unpark(struct pf_park *k, int shared)
{
  int saved = errno;
  volatile const int *word = (volatile const int *)(void *)&k->word;
  (void)shared;
  AO_int_store_release(&k->word, 1);
  (void)umtx_wakeup(word, 1);
  errno = saved;
}

static void
pf_dfly_collect(struct pf_parker *p, struct pf_park *k, int shared)
{
  pf_park_word_collect(pf_dfly_park, p, k, shared);
}

const struct pf_port PF_PORT_VAR = {
  .name = PF_PORT_NAME,
  .gen = &pf_park_word_gen,
  .init = pf_park_word_init,
  .prepare = pf_park_word_prepare,
  .park = pf_dfly_park,
  .unpark = pf_dfly_unpark,
  .collect = pf_dfly_collect,
};
