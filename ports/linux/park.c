/* park.c - the emulation's Linux park port: one kernel futex per waiter
 * node (its park word): private for this process's table, shared (keyed by
 * the kernel by page and offset) for a region's slot, which another process
 * unparks.  Knows nothing of futex semantics beyond
 * "sleep while this word is 0".  Every park ends with EINTR after a signal
 * handler (the engine decides about restarts); the raw system call is not
 * a cancellation point, and asynchronous cancellation interrupts it. */
#include "sys.h"
#include "emu.h"

static int
pf_fpark_init(void)
{
  pf_linux_sys_init();
  return 0;
}

static const unsigned int pf_fpark_gen = 1;   /* nothing to set up */

static int
pf_fpark_prepare(struct pf_parker *p, struct pf_park *k)
{
  p->gen = pf_fpark_gen;
  AO_int_store(&k->word, 0);
  return 0;
}

static int
pf_fpark_park(struct pf_parker *p, struct pf_park *k, int shared, const struct pf_deadline *dl)
{
  /* An untimed park sleeps with a deadline too, one no machine reaches
   * (2^31 s of CLOCK_MONOTONIC): the kernel restarts an untimed futex wait
   * after an SA_RESTART handler without returning, but ends a timed one
   * with EINTR after any handler, which is what the engine needs to
   * re-check the futex word (wait.c (F)). */
  static const struct timespec never = { 0x7fffffff, 0 };
  uint32_t *word = &k->word;
  (void)p;
  for (;;) {
    int op = PF_OP_WAIT_BITSET | (shared ? 0 : PF_OP_PRIVATE_FLAG);
    const struct timespec *abs = &never;
    long r;
    if (AO_int_load_acquire(&k->word))
      return 0;
    if (dl) {
      abs = &dl->abs;
      if (dl->clock == PFUTEX_CLOCK_REALTIME)
        op |= PF_OP_CLOCK_REALTIME;
    }
    r = pf_linux_futex(word, op, 0, abs, 0, NULL, PFUTEX_BITSET_MATCH_ANY);
    if (AO_int_load_acquire(&k->word))
      return 0;
    if (r == -EINTR || (r == -ETIMEDOUT && dl))
      return (int)r;
  }
}

/* The release store is the last access to *p; FUTEX_WAKE then only hashes
 * the address (a stale one can cause nothing worse than a spurious wakeup). */
static void
pf_fpark_unpark(struct pf_park *k, int shared)
{
  uint32_t *word = &k->word;
  AO_int_store_release(&k->word, 1);
  pf_linux_futex(word, PF_OP_WAKE | (shared ? 0 : PF_OP_PRIVATE_FLAG), 1, NULL, 0, NULL, 0);
}

/* The token is the word: taking it twice is harmless.  A region's: at
 * most a slice of a second. */
static void
pf_fpark_collect(struct pf_parker *p, struct pf_park *k, int shared)
{
  static const struct timespec second = { 1, 0 };
  for (;;) {
    struct pf_deadline d;
    const struct pf_deadline *dp = NULL;
    if (shared && pf_deadline_from_rel(&d, &second) == 0)
      dp = &d;
    if (pf_fpark_park(p, k, shared, dp) == 0)
      return;
    if (dp)
      return;                 /* a region's: a slice without the token (wait.c (R)) */
  }
}

const struct pf_port pf_port_futex = {
  .name = "futex",
  .gen = &pf_fpark_gen,
  .init = pf_fpark_init,
  .prepare = pf_fpark_prepare,
  .park = pf_fpark_park,
  .unpark = pf_fpark_unpark,
  .collect = pf_fpark_collect,
};
