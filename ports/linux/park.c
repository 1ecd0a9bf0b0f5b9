/* park.c - the emulation's Linux park port: one kernel futex per waiter
 * node (its park word): private for this process's table, shared (keyed by
 * the kernel by page and offset) for a region's slot, which another process
 * unparks.  Knows nothing of futex semantics beyond
 * "sleep while this word is 0".  Every park ends with EINTR after a signal
 * handler (the engine decides about restarts); the raw system call is not
 * a cancellation point, and asynchronous cancellation interrupts it. */
#include "sys.h"
#include "port.h"

static int
pf_fpark_init(void)
{
  pf_linux_sys_init();
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

static void
pf_fpark_collect(struct pf_parker *p, struct pf_park *k, int shared)
{
  pf_park_word_collect(pf_fpark_park, p, k, shared);
}

const struct pf_port pf_port_futex = {
  .name = "futex",
  .gen = &pf_park_word_gen,
  .init = pf_fpark_init,
  .prepare = pf_park_word_prepare,
  .park = pf_fpark_park,
  .unpark = pf_fpark_unpark,
  .collect = pf_fpark_collect,
};
