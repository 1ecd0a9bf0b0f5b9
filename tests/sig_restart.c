/* sig_restart: an SA_RESTART handler runs while its own thread sleeps in an
 * untimed wait.
 *   - The handler changes the futex word (a plain store, no wake): Linux
 *     restarts the wait, the restart re-reads the word, and the wait fails
 *     with -1/EAGAIN.
 *   - The control: the handler leaves the word alone: the wait goes back to
 *     sleep, a wake then counts it (1) and it returns 0.
 * For pfutex() FUTEX_WAIT, FUTEX_WAIT_BITSET, FUTEX_WAIT_BITSET |
 * FUTEX_CLOCK_REALTIME (NULL timeout) and pfutex_wait (NULL deadline, on
 * either clock), each private and shared.  Linux is the reference.
 *
 * Optional argument: a case number (1..20) to run only that case. */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs POSIX signals (SA_RESTART restarts)");
  return 0;
}
#else
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pft.h"
#include <pfutex/linux.h>

enum { API_WAIT, API_WAIT_BITSET, API_WAIT_BITSET_RT, API_CLEAN_MONO, API_CLEAN_RT, API_N };
static const char *const api_name[API_N] = {
  "FUTEX_WAIT", "FUTEX_WAIT_BITSET", "FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME",
  "pfutex_wait(MONOTONIC, no deadline)", "pfutex_wait(REALTIME, no deadline)"
};

struct waiter {
  pthread_t thread;
  uint32_t *word;
  int api, shared;
  pid_t tid;
  int started, done;          /* __atomic */
  long ret;
  int err;
};

static uint32_t *volatile h_word;      /* the word the handler may change */
static volatile sig_atomic_t h_change;  /* 1: store 1 into *h_word */
static volatile sig_atomic_t h_hits;

static void
on_sig(int sig)
{
  int e = errno;
  (void)sig;
  if (h_change)
    __atomic_store_n(h_word, 1u, __ATOMIC_SEQ_CST);
  h_hits++;
  errno = e;
}

static long
do_wait(uint32_t *w, int api, int shared)
{
  int priv = shared ? 0 : FUTEX_PRIVATE_FLAG;
  unsigned pflags = shared ? PFUTEX_SHARED : PFUTEX_PRIVATE;
  switch (api) {
  case API_WAIT:
    return pfutex(w, FUTEX_WAIT | priv, 0, NULL, NULL, 0);
  case API_WAIT_BITSET:
    return pfutex(w, FUTEX_WAIT_BITSET | priv, 0, NULL, NULL, FUTEX_BITSET_MATCH_ANY);
  case API_WAIT_BITSET_RT:
    return pfutex(w, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME | priv, 0, NULL, NULL,
                  FUTEX_BITSET_MATCH_ANY);
  case API_CLEAN_MONO:
    return pfutex_wait(w, 0, PFUTEX_BITSET_MATCH_ANY, pflags, NULL, PFUTEX_CLOCK_MONOTONIC);
  default:
    return pfutex_wait(w, 0, PFUTEX_BITSET_MATCH_ANY, pflags, NULL, PFUTEX_CLOCK_REALTIME);
  }
}

static void *
waiter_main(void *arg)
{
  struct waiter *w = arg;
  long r;
  w->tid = pft_gettid();
  __atomic_store_n(&w->started, 1, __ATOMIC_SEQ_CST);
  errno = 0;
  r = do_wait(w->word, w->api, w->shared);
  w->err = errno;
  w->ret = r;
  __atomic_store_n(&w->done, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

static int
is_done(struct waiter *w)
{
  return __atomic_load_n(&w->done, __ATOMIC_SEQ_CST);
}

/* The waiter should be on its way out of the wait: 1 once it returned, 0 if
 * it is asleep (not done) for 200 consecutive samples (about 0.2 s): it went
 * back to sleep, which the kernel never does here.  Polls state, never
 * sleeps as synchronisation. */
static int
settle(struct waiter *w)
{
  int asleep_run = 0;
  while (!is_done(w)) {
    char path[64], buf[512], *p;
    FILE *f;
    snprintf(path, sizeof path, "/proc/self/task/%d/stat", (int)w->tid);
    f = fopen(path, "r");
    if (f) {
      size_t n = fread(buf, 1, sizeof buf - 1, f);
      fclose(f);
      buf[n] = 0;
      p = strrchr(buf, ')');
      if (p && p[1] == ' ' && (p[2] == 'S' || p[2] == 'D') && !is_done(w)) {
        if (++asleep_run >= 200)
          return 0;
      } else {
        asleep_run = 0;
      }
    }
    usleep(1000);
  }
  return 1;
}

/* A wait that should have ended sleeps on: get it out (a wake of its word),
 * so the remaining cases still run.  Bounded by the watchdog. */
static void
rescue(struct waiter *w)
{
  unsigned pflags = w->shared ? PFUTEX_SHARED : PFUTEX_PRIVATE;
  int i, r;
  for (i = 0; i < 2000 && !is_done(w); i++) {
    r = pfutex_wake(w->word, PFUTEX_BITSET_MATCH_ANY, INT_MAX, pflags);
    if (r != 0)
      diag("    rescue: wake of the word returned %d", r);
    usleep(1000);
  }
  if (!is_done(w))
    bail("the waiter of case %s stays asleep even after wakes", api_name[w->api]);
}

static void
run_case(int api, int shared, int change)
{
  static uint32_t words[2 * API_N * 2];
  static int nword;
  struct waiter w;
  const char *kind = shared ? "shared" : "private";
  unsigned pflags = shared ? PFUTEX_SHARED : PFUTEX_PRIVATE;
  char what[200];
  int r;

  memset(&w, 0, sizeof w);
  w.word = &words[nword++];
  *w.word = 0;
  w.api = api;
  w.shared = shared;
  h_word = w.word;
  h_change = change;
  h_hits = 0;

  if (pthread_create(&w.thread, NULL, waiter_main, &w) != 0)
    sysbail("pthread_create");
  while (!__atomic_load_n(&w.started, __ATOMIC_SEQ_CST))
    sched_yield();
  pft_wait_asleep(w.tid);
  if (is_done(&w)) {
    ok(0, "%s %s: the wait returned before any signal (%ld, %s)", api_name[api], kind, w.ret,
       strerror(w.err));
    pthread_join(w.thread, NULL);
    return;
  }
  pthread_kill(w.thread, SIGUSR1);
  while (h_hits == 0 && !is_done(&w))
    sched_yield();
  is_int(1, h_hits, "%s %s, handler %s the word: the handler ran once", api_name[api], kind,
         change ? "changes" : "keeps");

  if (change) {
    snprintf(what, sizeof what, "%s %s: the word changed by the SA_RESTART handler: wait",
             api_name[api], kind);
    if (!settle(&w)) {
      ok(0, "%s: -1/EAGAIN (still asleep after the handler: the restart did not re-check the "
            "word)", what);
      rescue(&w);
      diag("    after a rescue wake the wait returned %ld (%s)", w.ret,
           w.ret == -1 ? strerror(w.err) : "-");
    } else {
      pft_is_ret(w.ret, w.err, -1, EAGAIN, what);
    }
    pthread_join(w.thread, NULL);
  } else {
    pft_wait_asleep(w.tid);
    if (!ok(!is_done(&w), "%s %s: unchanged word: asleep again after the SA_RESTART handler",
            api_name[api], kind))
      diag("    the wait returned %ld (%s)", w.ret, w.ret == -1 ? strerror(w.err) : "-");
    r = pfutex_wake(w.word, PFUTEX_BITSET_MATCH_ANY, 1, pflags);
    is_int(1, r, "%s %s: the wake counts the restarted waiter",
           api_name[api], kind);
    if (!settle(&w)) {
      ok(0, "%s %s: the woken wait returned (still asleep)", api_name[api], kind);
      rescue(&w);
    } else {
      snprintf(what, sizeof what, "%s %s: the woken wait", api_name[api], kind);
      pft_is_ret(w.ret, w.err, 0, 0, what);
    }
    pthread_join(w.thread, NULL);
  }
  r = pfutex_wake(w.word, PFUTEX_BITSET_MATCH_ANY, INT_MAX, pflags);
  is_int(0, r, "%s %s: nothing left queued on the word (wake INT_MAX)", api_name[api], kind);
}

int
main(int argc, char **argv)
{
  int only = argc > 1 ? atoi(argv[1]) : 0;
  int n = 0, api, shared, change;

  PFT_SKIP_UNDER_TSAN();
  if (only)
    plan_lazy();
  else
    plan(2 * API_N * (3 + 5));
  pft_watchdog(60);
  /* The process's only handler has SA_RESTART (the emulation decides
   * restarts from the handlers installed). */
  pft_install(SIGUSR1, on_sig, SA_RESTART);
  for (change = 1; change >= 0; change--)
    for (shared = 0; shared <= 1; shared++)
      for (api = 0; api < API_N; api++) {
        n++;
        if (only && n != only)
          continue;
        diag("case %d: %s, %s, handler %s the word", n, api_name[api],
             shared ? "shared" : "private", change ? "changes" : "keeps");
        run_case(api, shared, change);
      }
  return 0;
}
#endif /* !_WIN32 */
