/* park_word.c - what every "sleep while the park word is 0" port shares
 * (Linux futex, FreeBSD umtx, DragonFly umtx_sleep, OpenBSD and NetBSD
 * futex, macOS ulock, Windows WaitOnAddress): the word is the token, 0
 * armed and 1 given, so arming needs no set-up and collecting is parking
 * until the word says so.  Each port keeps its own park and unpark. */
#include "port.h"

const unsigned int pf_park_word_gen = 1;      /* nothing to set up */

int
pf_park_word_init(void)
{
  return 0;
}

int
pf_park_word_prepare(struct pf_parker *p, struct pf_park *k)
{
  p->gen = pf_park_word_gen;
  AO_int_store(&k->word, 0);
  return 0;
}

/* The token is the word: taking it twice is harmless.  A region's: at
 * most a slice of a second (wait.c (R): its unparker died, or a corrupt
 * slot sent the token elsewhere). */
void
pf_park_word_collect(int (*park)(struct pf_parker *, struct pf_park *, int, const struct pf_deadline *),
                     struct pf_parker *p, struct pf_park *k, int shared)
{
  static const struct timespec second = { 1, 0 };
  for (;;) {
    struct pf_deadline d;
    const struct pf_deadline *dp = NULL;
    if (shared && pf_deadline_from_rel(&d, &second) == 0)
      dp = &d;
    if (park(p, k, shared, dp) == 0)
      return;
    if (dp)
      return;                 /* a region's: a slice without the token */
  }
}
