/* waitv_storm: futex_waitv under load, with exact counts.  PF_WS_WAITERS
 * threads loop on a futex_waitv of the PF_WS_WORDS words (each with the
 * word's current value, a timeout of 1 s); PF_WS_WAKERS threads loop:
 * pick a word, add 1 to it, wake 1 waiter of it.  Some waits are timed
 * out short (0-300 us) to race the wakes.  PFUTEX_STORM_SECONDS (default
 * 2, at least 2.5: a wait stuck by a lost wakeup must run into its 1 s
 * timeout meanwhile) of it five times: private words; private words with signals
 * (SIGUSR1 every 5 ms, a handler, SA_RESTART: a detached wait restarts,
 * which would hide a lost ring from the timeout check, so the plain runs
 * come first); shared words; shared words in a region; a region's words
 * and private words in each call; the words of two regions and of a plain
 * shared mapping in each call (three shared tables under emulation: the
 * first table's parker sleeps, the others' are looked at after each
 * slice); not on Windows: its regions are tested elsewhere.  Checks:
 *   - every waitv returned an index, EAGAIN or ETIMEDOUT (nothing else);
 *   - under emulation, exactly: the wakes' counts add up to the members
 *     the waits found woken at their ends (src/waitv.c pf_vx_woken_total:
 *     Linux counts every woken entry, and so does the emulation), and
 *     every wait that ended with a member woken had had its parker rung
 *     (src/waitv.c pf_vx_unrung_total: a lost ring, told by a count, not
 *     by how long the wait took, which a loaded machine stretches: the
 *     waits that ran into their 1 s timeout are a diagnostic); on the
 *     native backend the kernel's counts cannot be seen: the waits that
 *     returned an index are at most the wakes' count;
 *   - at the end every waiter returns (the words moved, a final wake of
 *     each). */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifndef _WIN32
# include <sys/mman.h>
#endif
#include "pft.h"
#ifdef PF_HAVE_EMU
# include "emu.h"
#endif

#define PF_WS_WORDS 4
#define PF_WS_WAITERS 4
#define PF_WS_WAKERS 2

static uint32_t words_mem[PF_WS_WORDS];
static uint32_t *words = words_mem;      /* or a region's (the last runs) */
static unsigned int ws_flags;             /* PFUTEX2_PRIVATE or 0 */
static int ws_mixed;                     /* 1: odd words private, in words_mem;
                                            2: word 1 in a second region, word 3
                                            in a plain shared mapping */
static uint32_t *words_b, *words_m;       /* (ws_mixed 2) */

/* Word i of this run and its flags (PFUTEX2_PRIVATE or 0). */
static uint32_t *
ws_word(int i)
{
  if (ws_mixed == 2 && (i & 1))
    return i == 1 ? &words_b[1] : &words_m[3];
  return ws_mixed && (i & 1) ? &words_mem[i] : &words[i];
}

static unsigned int
ws_wflags(int i)
{
  return ws_mixed == 1 && (i & 1) ? PFUTEX2_PRIVATE : ws_flags;
}
static volatile int ws_stop;
static volatile int ws_out[PF_WS_WAITERS + 1];     /* a waiter has left its loop */
static volatile long ws_idx, ws_again, ws_timedout, ws_long_timeouts, ws_other, ws_wakes;
static volatile long ws_signals;
static int ws_last_errno;

/* A small generator of our own (rand_r is not everywhere). */
static unsigned int
ws_rand(unsigned int *s)
{
  *s ^= *s << 13;
  *s ^= *s >> 17;
  *s ^= *s << 5;
  return *s >> 1;
}

static void
ws_handler(int sig)
{
  (void)sig;
  __atomic_fetch_add(&ws_signals, 1, __ATOMIC_RELAXED);
}

static void *
ws_waiter(void *arg)
{
  struct pfutex_waitv v[PF_WS_WORDS];
  unsigned int seed = (unsigned int)(uintptr_t)arg * 2654435761u + 1;
  while (!__atomic_load_n(&ws_stop, __ATOMIC_ACQUIRE)) {
    struct timespec t;
    int i, shortt = ws_rand(&seed) % 4 == 0;
    long r;
    for (i = 0; i < PF_WS_WORDS; i++) {
      v[i].uaddr = (uintptr_t)ws_word(i);
      v[i].val = __atomic_load_n(ws_word(i), __ATOMIC_ACQUIRE);
      v[i].flags = PFUTEX2_SIZE_U32 | ws_wflags(i);
      v[i].__reserved = 0;
    }
    clock_gettime(CLOCK_MONOTONIC, &t);
    pft_timespec_add_ns(&t, shortt ? (long long)(ws_rand(&seed) % 300) * 1000 : 1000000000LL);
    r = pfutex_waitv(v, PF_WS_WORDS, 0, &t, PFUTEX_CLOCK_MONOTONIC);
    if (r >= 0 && r < PF_WS_WORDS) {
      struct timespec now;
      __atomic_fetch_add(&ws_idx, 1, __ATOMIC_RELAXED);
      clock_gettime(CLOCK_MONOTONIC, &now);
      /* woken, but back only at its 1 s deadline: its wake did not wake it
       * (woken wins at the end: the index, late) */
      if (!shortt && !__atomic_load_n(&ws_stop, __ATOMIC_ACQUIRE) && pft_elapsed_ns(&t, &now) >= 0)
        __atomic_fetch_add(&ws_long_timeouts, 1, __ATOMIC_RELAXED);
    }
    else if (r == -1 && errno == EAGAIN)
      __atomic_fetch_add(&ws_again, 1, __ATOMIC_RELAXED);
    else if (r == -1 && errno == ETIMEDOUT) {
      __atomic_fetch_add(&ws_timedout, 1, __ATOMIC_RELAXED);
      if (!shortt && !__atomic_load_n(&ws_stop, __ATOMIC_ACQUIRE))
        __atomic_fetch_add(&ws_long_timeouts, 1, __ATOMIC_RELAXED);
    } else {
      ws_last_errno = errno;
      __atomic_fetch_add(&ws_other, 1, __ATOMIC_RELAXED);
    }
  }
  __atomic_store_n(&ws_out[(uintptr_t)arg], 1, __ATOMIC_RELEASE);
  return NULL;
}

static void *
ws_waker(void *arg)
{
  unsigned int seed = (unsigned int)(uintptr_t)arg * 40503u + 7;
  while (!__atomic_load_n(&ws_stop, __ATOMIC_ACQUIRE)) {
    int i = ws_rand(&seed) % PF_WS_WORDS, n;
    __atomic_fetch_add(ws_word(i), 1, __ATOMIC_RELEASE);
    n = pfutex_wake(ws_word(i), PFUTEX_BITSET_MATCH_ANY, 1,
                    (ws_wflags(i) & PFUTEX2_PRIVATE) ? PFUTEX_PRIVATE : 0);
    if (n > 0)
      __atomic_fetch_add(&ws_wakes, n, __ATOMIC_RELAXED);
    if (ws_rand(&seed) % 64 == 0)
      sched_yield();
  }
  return NULL;
}

static void
ws_run(const char *what, double secs, int signals)
{
  pthread_t w[PF_WS_WAITERS], k[PF_WS_WAKERS];
  long long end;
  int i;
  long before = 0, members = 0, unrung = 0;
  memset(words, 0, PF_WS_WORDS * sizeof words[0]);
  memset(words_mem, 0, sizeof words_mem);
  memset((void *)ws_out, 0, sizeof ws_out);
  ws_stop = 0;
  ws_idx = ws_again = ws_timedout = ws_long_timeouts = ws_other = ws_wakes = ws_signals = 0;
#ifdef PF_HAVE_EMU
  before = (long)AO_load(&pf_vx_woken_total);
  unrung = (long)AO_load(&pf_vx_unrung_total);
#endif
  for (i = 0; i < PF_WS_WAITERS; i++)
    if (pthread_create(&w[i], NULL, ws_waiter, (void *)(intptr_t)(i + 1)) != 0)
      sysbail("pthread_create");
  for (i = 0; i < PF_WS_WAKERS; i++)
    if (pthread_create(&k[i], NULL, ws_waker, (void *)(intptr_t)(i + 1)) != 0)
      sysbail("pthread_create");
  if (secs < 2.5)
    secs = 2.5;                             /* longer than the 1 s timeout: a stuck wait shows */
  end = pft_now_ns() + (long long)(secs * 1e9);
  while (pft_now_ns() < end) {
    usleep(5000);
#ifdef SIGUSR1
    if (signals)
      pthread_kill(w[rand() % PF_WS_WAITERS], SIGUSR1);
#endif
  }
  for (i = 0; i < PF_WS_WAKERS; i++) {
    if (i == 0)
      __atomic_store_n(&ws_stop, 1, __ATOMIC_RELEASE);
    pthread_join(k[i], NULL);
  }
  /* the waiters: move every word and wake them all until they are out */
  for (i = 0; i < PF_WS_WAITERS; i++) {
    for (;;) {
      int j, n;
      struct timespec ts;
      if (__atomic_load_n(&ws_out[i + 1], __ATOMIC_ACQUIRE)) {
        pthread_join(w[i], NULL);
        break;
      }
      for (j = 0; j < PF_WS_WORDS; j++) {
        __atomic_fetch_add(ws_word(j), 1, __ATOMIC_RELEASE);
        n = pfutex_wake(ws_word(j), PFUTEX_BITSET_MATCH_ANY, PF_WS_WAITERS,
                        (ws_wflags(j) & PFUTEX2_PRIVATE) ? PFUTEX_PRIVATE : 0);
        if (n > 0)
          __atomic_fetch_add(&ws_wakes, n, __ATOMIC_RELAXED);
      }
      ts.tv_sec = 0;
      ts.tv_nsec = 1000000;
      nanosleep(&ts, NULL);
    }
  }
  ok(ws_other == 0, "%s: every waitv returned an index, EAGAIN or ETIMEDOUT (%ld others, last %s)",
     what, ws_other, ws_other ? pft_errname(ws_last_errno) : "-");
  /* How long a wait took is the machine's business (a loaded one delays
   * a woken thread by seconds): a diagnostic.  A lost wake or a lost ring
   * is told by counts. */
  diag("%s: %ld returned an index, %ld EAGAIN, %ld timed out (short timeouts), %ld signals; "
       "%ld ran into their 1 s timeout while the wakers ran (timed out, or woken and back only "
       "then: a late wake, or a lost ring, which the counts below tell apart)", what, ws_idx,
       ws_again, ws_timedout, ws_signals, ws_long_timeouts);
#ifdef PF_HAVE_EMU
  if (pft_backend_is_emu()) {
    members = (long)AO_load(&pf_vx_woken_total) - before;
    ok(members == ws_wakes,
       "%s: the wakes counted %ld waiters; the waits found %ld members woken", what, ws_wakes,
       members);
    unrung = (long)AO_load(&pf_vx_unrung_total) - unrung;
    ok(unrung == 0, "%s: every wait that ended with a member woken had had its parker rung "
       "(%ld not: a lost ring)", what, unrung);
    return;
  }
#endif
  (void)members;
  (void)before;
  (void)unrung;
  ok(ws_idx <= ws_wakes, "%s: %ld waits returned an index, the kernel's wakes counted %ld", what,
     ws_idx, ws_wakes);
}

int
main(void)
{
  const char *s = getenv("PFUTEX_STORM_SECONDS");
  double secs = s ? atof(s) : 2.0;
  struct pfutex_waitv v = { 1, 0, PFUTEX2_SIZE_U32 | PFUTEX2_PRIVATE, 0 };
  uint32_t probe = 0;
  plan_lazy();
  pft_watchdog((unsigned int)(secs * 2 + 60));
  if (!pfutex_backend())
    skip_all("no backend");
  v.uaddr = (uintptr_t)&probe;
  if (pfutex_waitv(&v, 1, 0, NULL, 0) == -1 && errno == ENOSYS)
    skip_all("futex_waitv answers ENOSYS here (%s: %s)", pfutex_backend(),
             pft_emulator() ? pft_emulator() : "the kernel lacks it");
  ws_flags = PFUTEX2_PRIVATE;
  ws_run("private", secs, 0);
#ifdef SIGUSR1
  pft_install(SIGUSR1, ws_handler, SA_RESTART);
  ws_run("private, signals", secs, 1);
#else
  (void)ws_handler;
#endif
  ws_flags = 0;
  ws_run("shared", secs, 0);
#ifndef _WIN32
  {
    /* shared words of a region: under emulation the parker and the
     * members are region slots (src/waitv.c pf_vx_once_region) */
    pfutex_region_t *rg = pfutex_region_anon(4096);
    if (!rg)
      sysbail("pfutex_region_anon");
    words = pfutex_region_addr(rg);
    ws_run("region", secs, 0);
    ws_mixed = 1;                           /* a region's words and private ones */
    ws_run("region and private", secs, 0);
    {
      /* three shared tables in each call: two regions' words and a plain
       * shared mapping's (the user's shared table under emulation) */
      pfutex_region_t *rg2 = pfutex_region_anon(4096);
      if (!rg2)
        sysbail("pfutex_region_anon");
      words_b = pfutex_region_addr(rg2);
      words_m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
      if (words_m == MAP_FAILED)
        sysbail("mmap");
      ws_mixed = 2;
      ws_run("two regions and a shared mapping", secs, 0);
      ok(pfutex_region_close(rg2) == 0, "two regions: the second closes");
      munmap(words_m, 4096);
    }
    ws_mixed = 0;
    words = words_mem;
    ok(pfutex_region_close(rg) == 0, "region: closes");
  }
#endif
  return 0;
}
