/* nptl_stress: stress examples/nptl_sync.h's mutex and condition variable.
 *   1. 6 threads each add 1 to a shared counter N times under the mutex;
 *      the total must be exactly 6 * N (mutual exclusion, no lost unlock).
 *   2. A bounded buffer: 3 producers and 3 consumers with two condvars
 *      (signal and broadcast, broadcast requeueing onto the mutex); every
 *      item must be consumed exactly once, and nobody may hang.
 * PFUTEX_STRESS_MS scales nothing here; sizes are fixed and small enough
 * for every backend.  The watchdog catches a lost wakeup. */
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include "basic.h"
#include "pft.h"
#include "nptl_sync.h"

#define NS_COUNT_THREADS 6
#define NS_COUNT_ITERS 50000

#define NS_PRODUCERS 3
#define NS_CONSUMERS 3
#define NS_ITEMS_EACH 20000
#define NS_TOTAL (NS_PRODUCERS * NS_ITEMS_EACH)
#define NS_RING 8

static struct nptl_mutex ns_mu = NPTL_MUTEX_INIT;
static unsigned long ns_counter;
static volatile int ns_in_cs, ns_overlap;

static void *
ns_counter_main(void *arg)
{
  int i;
  (void)arg;
  for (i = 0; i < NS_COUNT_ITERS; i++) {
    nptl_mutex_lock(&ns_mu);
    if (__atomic_add_fetch(&ns_in_cs, 1, __ATOMIC_RELAXED) != 1)
      ns_overlap = 1;
    ns_counter++;
    __atomic_sub_fetch(&ns_in_cs, 1, __ATOMIC_RELAXED);
    nptl_mutex_unlock(&ns_mu);
  }
  return NULL;
}

/* The bounded buffer: all under pc_mu. */
static struct nptl_mutex pc_mu = NPTL_MUTEX_INIT;
static struct nptl_cond pc_not_empty = NPTL_COND_INIT, pc_not_full = NPTL_COND_INIT;
static int pc_ring[NS_RING];
static unsigned int pc_head, pc_count;
static int pc_taken;                        /* items removed so far */
static unsigned char pc_seen[NS_TOTAL];     /* consumptions per item */
static int pc_bad_item;

static void *
pc_producer(void *arg)
{
  int id = (int)(intptr_t)arg, i;
  for (i = 0; i < NS_ITEMS_EACH; i++) {
    nptl_mutex_lock(&pc_mu);
    while (pc_count == NS_RING)
      nptl_cond_wait(&pc_not_full, &pc_mu);
    pc_ring[(pc_head + pc_count) % NS_RING] = id * NS_ITEMS_EACH + i;
    pc_count++;
    if (i % 16 == 0)
      nptl_cond_broadcast(&pc_not_empty, &pc_mu);
    else
      nptl_cond_signal(&pc_not_empty);
    nptl_mutex_unlock(&pc_mu);
  }
  return NULL;
}

static void *
pc_consumer(void *arg)
{
  int n = 0;
  (void)arg;
  for (;;) {
    int item;
    nptl_mutex_lock(&pc_mu);
    while (pc_count == 0 && pc_taken < NS_TOTAL)
      nptl_cond_wait(&pc_not_empty, &pc_mu);
    if (pc_count == 0) {                    /* everything taken */
      nptl_mutex_unlock(&pc_mu);
      break;
    }
    item = pc_ring[pc_head];
    pc_head = (pc_head + 1) % NS_RING;
    pc_count--;
    pc_taken++;
    if (item < 0 || item >= NS_TOTAL)
      pc_bad_item = 1;
    else if (pc_seen[item] < 255)
      pc_seen[item]++;
    if (pc_taken == NS_TOTAL)               /* release the other consumers */
      nptl_cond_broadcast(&pc_not_empty, &pc_mu);
    if (++n % 7 == 0)
      nptl_cond_broadcast(&pc_not_full, &pc_mu);
    else
      nptl_cond_signal(&pc_not_full);
    nptl_mutex_unlock(&pc_mu);
  }
  return NULL;
}

int
main(void)
{
  pthread_t t[NS_COUNT_THREADS > NS_PRODUCERS + NS_CONSUMERS ? NS_COUNT_THREADS
                                                            : NS_PRODUCERS + NS_CONSUMERS];
  int i, once = 0, twice = 0, never = 0;

  plan(6);
  pft_watchdog(60);
  diag("backend %s", pfutex_backend() ? pfutex_backend() : "none");

  for (i = 0; i < NS_COUNT_THREADS; i++)
    if (pthread_create(&t[i], NULL, ns_counter_main, NULL) != 0)
      sysbail("pthread_create");
  for (i = 0; i < NS_COUNT_THREADS; i++)
    pthread_join(t[i], NULL);
  is_int((long)NS_COUNT_THREADS * NS_COUNT_ITERS, (long)ns_counter,
         "mutex: %d threads x %d increments, exact total", NS_COUNT_THREADS, NS_COUNT_ITERS);
  ok(!ns_overlap, "mutex: no two threads in the critical section at once");
  is_int(0, (long)ns_mu.word, "mutex: unlocked at the end");

  for (i = 0; i < NS_PRODUCERS; i++)
    if (pthread_create(&t[i], NULL, pc_producer, (void *)(intptr_t)i) != 0)
      sysbail("pthread_create");
  for (i = 0; i < NS_CONSUMERS; i++)
    if (pthread_create(&t[NS_PRODUCERS + i], NULL, pc_consumer, NULL) != 0)
      sysbail("pthread_create");
  for (i = 0; i < NS_PRODUCERS + NS_CONSUMERS; i++)
    pthread_join(t[i], NULL);
  for (i = 0; i < NS_TOTAL; i++) {
    if (pc_seen[i] == 1)
      once++;
    else if (pc_seen[i] == 0)
      never++;
    else
      twice++;
  }
  if (never || twice)
    diag("items never consumed %d, consumed more than once %d", never, twice);
  is_int(NS_TOTAL, pc_taken, "condvar: %d items taken", NS_TOTAL);
  is_int(NS_TOTAL, once, "condvar: every item consumed exactly once");
  ok(!pc_bad_item && pc_count == 0, "condvar: no bogus item, buffer empty at the end");
  return 0;
}
