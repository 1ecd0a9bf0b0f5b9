/* stress: 8 threads on 3 futex words, each looping over a random mix of
 * untimed and timed (1 ms) waits, wakes of one or all, and REQUEUE and
 * CMP_REQUEUE between words (legacy and clean calls).  Invariant: a wait
 * returns 0 only when a wake counted it, and every waiter a wake counts
 * returns 0 (no lost, double or spurious wakeup): the number of waits that
 * returned 0 equals the sum of what the wakes reported.  Requeues pass
 * nr_wake 0, so they wake nobody themselves.  Runs PFUTEX_STRESS_MS
 * milliseconds (default 2000), then stops every thread by waking all words
 * until all have exited.  The watchdog catches a hang. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "pft.h"
#include "pfutex/linux.h"

#define ST_THREADS 8
#define ST_WORDS 3

static uint32_t st_words[ST_WORDS];
static volatile int st_stop;
static volatile int st_exited;

struct st_thread {
  pthread_t thread;
  uint64_t rng;
  unsigned long waits, ret0, eagain, etimedout, bad;
  unsigned long wakes, woken, requeues, moved;
  int bad_errno, bad_op;
};

static struct st_thread st_t[ST_THREADS];

static uint32_t
st_rand(struct st_thread *t)
{
  /* xorshift64* */
  t->rng ^= t->rng >> 12;
  t->rng ^= t->rng << 25;
  t->rng ^= t->rng >> 27;
  return (uint32_t)((t->rng * 0x2545f4914f6cdd1dull) >> 32);
}

static void
st_bad(struct st_thread *t, int op)
{
  t->bad++;
  t->bad_errno = errno;
  t->bad_op = op;
}

static void
st_wait_result(struct st_thread *t, long r, int timed)
{
  t->waits++;
  if (r == 0)
    t->ret0++;
  else if (r == -1 && errno == EAGAIN)
    t->eagain++;
  else if (r == -1 && errno == ETIMEDOUT && timed)
    t->etimedout++;
  else
    st_bad(t, timed ? 1 : 0);
}

static void *
st_main(void *arg)
{
  struct st_thread *t = arg;

  while (!__atomic_load_n(&st_stop, __ATOMIC_SEQ_CST)) {
    uint32_t r = st_rand(t);
    int i = (int)(r % ST_WORDS), j = (i + 1 + (int)((r >> 4) % (ST_WORDS - 1))) % ST_WORDS;
    uint32_t *w = &st_words[i], *w2 = &st_words[j];
    int clean = (r >> 8) & 1;
    uint32_t v = __atomic_load_n(w, __ATOMIC_SEQ_CST);
    int nreq = 1 + (int)((r >> 9) % 3);
    long ret;

    switch ((r >> 12) % 8) {
    case 0: case 1:                                  /* untimed wait */
      errno = 0;
      if (clean)
        ret = pfutex_wait(w, v, PFUTEX_BITSET_MATCH_ANY, PFUTEX_PRIVATE, NULL,
                          PFUTEX_CLOCK_MONOTONIC);
      else
        ret = pfutex(w, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
      st_wait_result(t, ret, 0);
      break;
    case 2: case 3: {                                /* timed wait, 1 ms */
      struct timespec ts = { 0, 1000 * 1000 };
      errno = 0;
      if (clean) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        pft_timespec_add_ns(&ts, 1000 * 1000);
        ret = pfutex_wait(w, v, PFUTEX_BITSET_MATCH_ANY, PFUTEX_PRIVATE, &ts,
                          PFUTEX_CLOCK_MONOTONIC);
      } else {
        ret = pfutex(w, FUTEX_WAIT_PRIVATE, v, &ts, NULL, 0);
      }
      st_wait_result(t, ret, 1);
      break;
    }
    case 4: case 5: {                                /* wake one or all */
      int nr = ((r >> 16) & 1) ? INT_MAX : 1;
      __atomic_add_fetch(w, 1, __ATOMIC_SEQ_CST);
      errno = 0;
      ret = clean ? pfutex_wake(w, PFUTEX_BITSET_MATCH_ANY, nr, PFUTEX_PRIVATE)
                  : pfutex(w, FUTEX_WAKE_PRIVATE, (uint32_t)nr, NULL, NULL, 0);
      t->wakes++;
      if (ret >= 0)
        t->woken += (unsigned long)ret;
      else
        st_bad(t, 4);
      break;
    }
    case 6:                                          /* requeue, nobody woken */
      errno = 0;
      ret = clean ? pfutex_requeue(w, w2, 0, nreq, PFUTEX_PRIVATE)
                  : pfutex(w, FUTEX_REQUEUE_PRIVATE, 0,
                           (const struct timespec *)(uintptr_t)nreq, w2, 0);
      t->requeues++;
      if (ret >= 0)
        t->moved += (unsigned long)ret;
      else
        st_bad(t, 6);
      break;
    default:                                         /* cmp_requeue */
      errno = 0;
      ret = clean ? pfutex_cmp_requeue(w, v, w2, 0, nreq, PFUTEX_PRIVATE)
                  : pfutex(w, FUTEX_CMP_REQUEUE_PRIVATE, 0,
                           (const struct timespec *)(uintptr_t)nreq, w2, v);
      t->requeues++;
      if (ret >= 0)
        t->moved += (unsigned long)ret;
      else if (!(ret == -1 && errno == EAGAIN))
        st_bad(t, 7);
      break;
    }
  }
  __atomic_add_fetch(&st_exited, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

int
main(void)
{
  const char *env = getenv("PFUTEX_STRESS_MS");
  long ms = env && atol(env) > 0 ? atol(env) : 2000;
  struct timespec start, now;
  unsigned long main_woken = 0, waits = 0, ret0 = 0, eagain = 0, etimedout = 0;
  unsigned long bad = 0, woken = 0, wakes = 0, requeues = 0, moved = 0;
  uint64_t seed;
  int i;

  plan(4);
  pft_watchdog(60 + (unsigned int)(ms / 1000));

  clock_gettime(CLOCK_MONOTONIC, &start);
  seed = (uint64_t)start.tv_nsec * 2654435761u + (uint64_t)start.tv_sec;
  diag("backend %s, %ld ms, seed %llu", pfutex_backend() ? pfutex_backend() : "none", ms,
       (unsigned long long)seed);
  for (i = 0; i < ST_THREADS; i++) {
    st_t[i].rng = (seed + (uint64_t)i * 0x9e3779b97f4a7c15ull) | 1;
    if (pthread_create(&st_t[i].thread, NULL, st_main, &st_t[i]) != 0)
      sysbail("pthread_create");
  }

  /* Run for `ms`; every millisecond wake one waiter somewhere, so the run
   * goes on even when every thread is in an untimed wait. */
  for (i = 0;; i++) {
    struct timespec tick = { 0, 1000 * 1000 };
    uint32_t *w = &st_words[i % ST_WORDS];
    long r;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (pft_elapsed_ns(&start, &now) >= (long long)ms * 1000000)
      break;
    nanosleep(&tick, NULL);
    __atomic_add_fetch(w, 1, __ATOMIC_SEQ_CST);
    r = pfutex(w, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    if (r > 0)
      main_woken += (unsigned long)r;
  }

  /* Stop: change every word and wake all, until every thread has left. */
  __atomic_store_n(&st_stop, 1, __ATOMIC_SEQ_CST);
  while (__atomic_load_n(&st_exited, __ATOMIC_SEQ_CST) < ST_THREADS) {
    for (i = 0; i < ST_WORDS; i++) {
      long r;
      __atomic_add_fetch(&st_words[i], 1, __ATOMIC_SEQ_CST);
      r = pfutex(&st_words[i], FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
      if (r > 0)
        main_woken += (unsigned long)r;
    }
    sched_yield();
  }
  for (i = 0; i < ST_THREADS; i++) {
    struct st_thread *t = &st_t[i];
    pthread_join(t->thread, NULL);
    waits += t->waits;
    ret0 += t->ret0;
    eagain += t->eagain;
    etimedout += t->etimedout;
    bad += t->bad;
    wakes += t->wakes;
    woken += t->woken;
    requeues += t->requeues;
    moved += t->moved;
    if (t->bad)
      diag("thread %d: %lu unexpected results, last op %d errno %d (%s)", i, t->bad,
           t->bad_op, t->bad_errno, strerror(t->bad_errno));
  }
  /* Nobody is left waiting: a final wake finds no one. */
  for (i = 0; i < ST_WORDS; i++) {
    long r = pfutex(&st_words[i], FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    if (r > 0)
      main_woken += (unsigned long)r;
  }
  diag("waits %lu: 0 %lu, EAGAIN %lu, ETIMEDOUT %lu; wakes %lu woke %lu (+%lu by main);"
       " requeues %lu moved %lu", waits, ret0, eagain, etimedout, wakes, woken, main_woken,
       requeues, moved);

  is_int(0, (long)bad, "no call returned an unexpected result");
  ok(ret0 <= woken + main_woken, "no waiter returned 0 without a wake counting it");
  is_int((long)(woken + main_woken), (long)ret0,
         "waits that returned 0 == waiters the wakes reported");
  ok(ret0 > 0 && moved > 0, "the run exercised real wakeups and requeues");
  return 0;
}
