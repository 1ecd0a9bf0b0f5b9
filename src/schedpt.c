/* schedpt.c - the scheduling points' hooks and the test-only park port
 * emu:sched (configure --enable-sched-points; see src/schedpt.h).
 *
 * The port's word is its token, as in the futex port: prepare arms it (0),
 * unpark stores 1 (a release store, so a scheduling point: the scheduler
 * sees the waiter runnable from the next point on), and park asks the
 * scheduler to block the thread until the word is 1 or it fires the
 * timeout.  Without a scheduler (no hooks, or a thread it does not
 * control) the port polls the word, yielding, and honours the deadline on
 * the real clock: a slow but correct backend. */
#include "port.h"

#include <sched.h>

const struct pf_sched_hooks *volatile pf_sched_hooks;
__thread int pf_sched_slice;
__thread int pf_sched_poll;
__thread struct pf_sched_alt pf_sched_alt;

void
pf_sched_point(const char *file, int line, const volatile void *addr)
{
  const struct pf_sched_hooks *h = pf_sched_hooks;
  if (h)
    h->point(file, line, addr);
}

void
pf_sched_spin(const char *file, int line)
{
  const struct pf_sched_hooks *h = pf_sched_hooks;
  if (h)
    h->spin(file, line);
}

static int
pf_spark_poll(struct pf_park *k, const struct pf_deadline *dl)
{
  for (;;) {
    struct timespec now;
    if (AO_int_load_acquire(&k->word))
      return 0;
    if (dl && pf_clock_now(dl->clock, &now) == 0
        && (now.tv_sec > dl->abs.tv_sec
            || (now.tv_sec == dl->abs.tv_sec && now.tv_nsec >= dl->abs.tv_nsec)))
      return -ETIMEDOUT;
    sched_yield();
  }
}

static int
pf_spark_park(struct pf_parker *p, struct pf_park *k, int shared, const struct pf_deadline *dl)
{
  const struct pf_sched_hooks *h = pf_sched_hooks;
  (void)p;
  (void)shared;
  for (;;) {
    int r;
    if (AO_int_load_acquire(&k->word))
      return 0;
    r = h ? h->park(&k->word, dl ? (pf_sched_slice ? 2 : 1) : 0) : -ENOSYS;
    if (r == -ENOSYS)
      return pf_spark_poll(k, dl);
    if (AO_int_load_acquire(&k->word))
      return 0;
    if (r == -EINTR || (r == -ETIMEDOUT && dl))
      return r;
  }
}

static void
pf_spark_unpark(struct pf_park *k, int shared)
{
  (void)shared;
  AO_int_store_release(&k->word, 1);
}

static void
pf_spark_collect(struct pf_parker *p, struct pf_park *k, int shared)
{
  int old = pf_sched_slice;
  pf_sched_slice = shared;             /* a region's collect is bounded by a slice */
  pf_park_word_collect(pf_spark_park, p, k, shared);
  pf_sched_slice = old;
}

const struct pf_port pf_port_sched = {
  .name = "sched",
  .gen = &pf_park_word_gen,
  .init = pf_park_word_init,
  .prepare = pf_park_word_prepare,
  .park = pf_spark_park,
  .unpark = pf_spark_unpark,
  .collect = pf_spark_collect,
};
