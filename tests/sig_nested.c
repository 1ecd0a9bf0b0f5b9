/* sig_nested: waits nested in signal handlers.
 *
 * Thread T waits on w[0]; main signals it, and the handler waits on w[1];
 * for depth 3 and 4 a second (third) signal's handler interrupts that wait
 * and waits on w[2] (w[3]).  As on Linux, which takes a waiter off its
 * queue before it runs a handler:
 *   - while a handler runs, a wake of any interrupted word counts nobody
 *     (returns 0);
 *   - the innermost wait is woken by exactly one wake (1) and returns 0;
 *   - then the wait it interrupted, untimed with SA_RESTART handlers, is
 *     restarted (T asleep again, the words below still count nobody) until
 *     its own wake (1, returns 0); without SA_RESTART it and every wait
 *     below it return -1/EINTR; a timed outer wait returns -1/EINTR (but
 *     pfutex_wait with a deadline under SA_RESTART restarts on linux:futex2
 *     and under emulation, as futex_wait(2) does: pfutex_wait(3)).
 * Finally a wake(INT_MAX) of every word returns 0.
 * pfutex() and pfutex_wait, private and shared.  Linux is the reference.
 *
 * Optional argument: a case number, to run only that case. */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs POSIX signals (waits nested in handlers)");
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

#define MAXD 4

enum { API_LEGACY, API_CLEAN };
enum { UNTIMED, TIMED_REL, TIMED_ABS_MONO, TIMED_ABS_RT };

struct ncase {
  int depth;      /* 2..4: number of nested waits */
  int api;        /* API_* for every level */
  int shared;
  int restart;    /* the handlers have SA_RESTART */
  int timed;      /* the outer wait's timeout: UNTIMED, TIMED_* */
};

static const struct ncase cases[] = {
  { 2, API_LEGACY, 0, 1, UNTIMED },
  { 2, API_LEGACY, 1, 1, UNTIMED },
  { 2, API_CLEAN, 0, 1, UNTIMED },
  { 2, API_CLEAN, 1, 1, UNTIMED },
  { 3, API_CLEAN, 0, 1, UNTIMED },
  { 3, API_LEGACY, 1, 1, UNTIMED },
  { 4, API_CLEAN, 1, 1, UNTIMED },
  { 2, API_LEGACY, 0, 0, UNTIMED },
  { 2, API_CLEAN, 1, 0, UNTIMED },
  { 3, API_CLEAN, 0, 0, UNTIMED },
  { 2, API_LEGACY, 0, 1, TIMED_REL },
  { 2, API_LEGACY, 1, 1, TIMED_ABS_MONO },
  { 3, API_LEGACY, 0, 1, TIMED_ABS_RT },
  { 2, API_CLEAN, 1, 0, TIMED_ABS_MONO },
  /* pfutex_wait with a deadline under SA_RESTART: linux:futex2 and the
   * emulation restart it, as futex_wait(2) does; linux:futex (the old call)
   * fails it with EINTR, as futex(2) does (pfutex_wait(3), NOTES). */
  { 2, API_CLEAN, 0, 1, TIMED_ABS_RT },
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static const int sigs[MAXD - 1] = { SIGUSR1, SIGUSR2, SIGURG };

struct level {
  uint32_t *word;
  int entered, done;     /* __atomic */
  long ret;
  int err;
};

static const struct ncase *cur;
static struct level lv[MAXD];
static uint32_t words[NCASES][MAXD];
static pid_t t_tid;
static int t_started;   /* __atomic */

static long
level_wait(int i)
{
  struct level *l = &lv[i];
  int priv = cur->shared ? 0 : FUTEX_PRIVATE_FLAG;
  unsigned pflags = cur->shared ? PFUTEX_SHARED : PFUTEX_PRIVATE;
  int timed = i == 0 ? cur->timed : UNTIMED;
  struct timespec ts;

  if (cur->api == API_LEGACY) {
    if (timed == UNTIMED)
      return pfutex(l->word, FUTEX_WAIT | priv, 0, NULL, NULL, 0);
    if (timed == TIMED_REL) {
      ts.tv_sec = 30;
      ts.tv_nsec = 0;
      return pfutex(l->word, FUTEX_WAIT | priv, 0, &ts, NULL, 0);
    }
    clock_gettime(timed == TIMED_ABS_RT ? CLOCK_REALTIME : CLOCK_MONOTONIC, &ts);
    ts.tv_sec += 30;
    return pfutex(l->word, FUTEX_WAIT_BITSET | priv | (timed == TIMED_ABS_RT ? FUTEX_CLOCK_REALTIME : 0),
                  0, &ts, NULL, FUTEX_BITSET_MATCH_ANY);
  }
  if (timed == UNTIMED)
    return pfutex_wait(l->word, 0, PFUTEX_BITSET_MATCH_ANY, pflags, NULL, PFUTEX_CLOCK_MONOTONIC);
  clock_gettime(timed == TIMED_ABS_RT ? CLOCK_REALTIME : CLOCK_MONOTONIC, &ts);
  ts.tv_sec += 30;
  return pfutex_wait(l->word, 0, PFUTEX_BITSET_MATCH_ANY, pflags, &ts,
                     timed == TIMED_ABS_RT ? PFUTEX_CLOCK_REALTIME : PFUTEX_CLOCK_MONOTONIC);
}

static void
run_level(int i)
{
  int e = errno;
  long r;
  __atomic_store_n(&lv[i].entered, 1, __ATOMIC_SEQ_CST);
  errno = 0;
  r = level_wait(i);
  lv[i].err = errno;
  lv[i].ret = r;
  __atomic_store_n(&lv[i].done, 1, __ATOMIC_SEQ_CST);
  errno = e;
}

static void
on_sig(int sig)
{
  int i;
  for (i = 0; i < MAXD - 1; i++)
    if (sigs[i] == sig)
      run_level(i + 1);
}

static void *
t_main(void *arg)
{
  (void)arg;
  t_tid = pft_gettid();
  __atomic_store_n(&t_started, 1, __ATOMIC_SEQ_CST);
  run_level(0);
  return NULL;
}

static int
flag(int *p)
{
  return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}


/* Level i should return now: 1 once it did; 0 if T instead sleeps (200
 * consecutive samples, ~0.2 s, with level i not done): it is stuck.  A
 * detector for the broken behaviour, never a synchronisation by sleep. */
static int
settle(int i)
{
  int run = 0;
  while (!flag(&lv[i].done)) {
    int st = pft_task_state(0, t_tid);
    if ((st == 'S' || st == 'D') && !flag(&lv[i].done)) {
      if (++run >= 200)
        return 0;
    } else {
      run = 0;
    }
    usleep(1000);
  }
  return 1;
}

static int
wake(int i, int nr)
{
  return pfutex_wake(lv[i].word, PFUTEX_BITSET_MATCH_ANY, nr,
                     cur->shared ? PFUTEX_SHARED : PFUTEX_PRIVATE);
}

/* Something went wrong: wake every word until T is done (the remaining
 * cases still run), or bail if even that does not end it. */
static void
rescue(void)
{
  int k, i;
  for (k = 0; k < 3000 && !flag(&lv[0].done); k++) {
    for (i = 0; i < cur->depth; i++)
      wake(i, INT_MAX);
    usleep(1000);
  }
  if (!flag(&lv[0].done))
    bail("thread T stays asleep even after wakes of every word");
}

static void
check_ret(int i, long want, int want_err, const char *tag)
{
  char what[200];
  snprintf(what, sizeof what, "%s: level %d wait returns", tag, i);
  pft_is_ret(lv[i].ret, lv[i].err, want, want_err, what);
}

/* Expect level i to return (want, want_err); 0 if it was stuck instead. */
static int
expect_return(int i, long want, int want_err, const char *tag)
{
  if (!settle(i)) {
    ok(0, "%s: level %d wait returns (still asleep)", tag, i);
    return 0;
  }
  check_ret(i, want, want_err, tag);
  return 1;
}

/* T should be asleep in the restarted wait of level i, levels below i still
 * off their queues. */
static int
expect_restarted(int i, const char *tag)
{
  int j;
  pft_wait_asleep(t_tid);
  if (!ok(!flag(&lv[i].done), "%s: level %d wait restarted after the handler (asleep)", tag, i)) {
    diag("    it returned %ld (%s)", lv[i].ret, lv[i].ret == -1 ? strerror(lv[i].err) : "-");
    return 0;
  }
  for (j = 0; j < i; j++)
    is_int(0, wake(j, 1), "%s: the handler runs again: wake of level %d's word counts nobody",
           tag, j);
  return 1;
}

/* Is the outer wait restarted after its handler returns? */
static int
outer_restarts(const struct ncase *c)
{
  const char *b = pfutex_backend();
  if (!c->restart)
    return 0;
  if (c->timed == UNTIMED)
    return 1;
  return c->api == API_CLEAN && b
         && (strcmp(b, "linux:futex2") == 0 || strncmp(b, "emu:", 4) == 0);
}

static void
run_case(int n)
{
  const struct ncase *c = &cases[n];
  char tag[160];
  pthread_t t;
  int i, j, good = 1;
  static const char *const tname[] = { "untimed", "timed (relative)", "timed (MONOTONIC deadline)",
                                       "timed (REALTIME deadline)" };

  snprintf(tag, sizeof tag, "case %d (depth %d, %s, %s, %s, outer %s)", n + 1, c->depth,
           c->api == API_LEGACY ? "pfutex()" : "pfutex_wait", c->shared ? "shared" : "private",
           c->restart ? "SA_RESTART" : "no SA_RESTART", tname[c->timed]);
  diag("%s; %s: the outer wait is %s after its handler", tag, pfutex_backend(),
       outer_restarts(c) ? "restarted" : "interrupted (EINTR)");
  cur = c;
  memset(lv, 0, sizeof lv);
  for (i = 0; i < MAXD; i++) {
    lv[i].word = &words[n][i];
    *lv[i].word = 0;
  }
  for (i = 0; i < c->depth - 1; i++)
    pft_install(sigs[i], on_sig, c->restart ? SA_RESTART : 0);
  t_started = 0;
  if (pthread_create(&t, NULL, t_main, NULL) != 0)
    sysbail("pthread_create");
  while (!flag(&t_started) || !flag(&lv[0].entered))
    sched_yield();
  pft_wait_asleep(t_tid);
  if (!ok(!flag(&lv[0].done), "%s: level 0 asleep", tag)) {
    diag("    it returned %ld (%s)", lv[0].ret, strerror(lv[0].err));
    pthread_join(t, NULL);
    goto out;
  }

  /* Down: each level's handler interrupts the wait above it and waits. */
  for (i = 1; i < c->depth; i++) {
    pthread_kill(t, sigs[i - 1]);
    while (!flag(&lv[i].entered) && !flag(&lv[0].done))
      sched_yield();
    pft_wait_asleep(t_tid);
    if (!ok(flag(&lv[i].entered) && !flag(&lv[i].done), "%s: level %d handler waits", tag, i)) {
      good = 0;
      break;
    }
    for (j = 0; j < i; j++)
      is_int(0, wake(j, 1),
             "%s: while level %d waits, a wake of level %d's word counts nobody", tag, i, j);
    /* Nobody woke level i's word: it must still wait (on old emu:sysv a
     * token meant for an interrupted wait ended it). */
    pft_wait_asleep(t_tid);
    if (!ok(!flag(&lv[i].done), "%s: level %d still waits after those wakes", tag, i)) {
      diag("    it returned %ld (%s)", lv[i].ret, lv[i].ret == -1 ? strerror(lv[i].err) : "-");
      good = 0;
      break;
    }
  }

  /* Up: wake the innermost wait; then the one it interrupted restarts (or
   * everything below fails with EINTR). */
  for (i = c->depth - 1; good && i >= 1; i--) {
    is_int(1, wake(i, 1), "%s: a wake of level %d's word counts its waiter", tag, i);
    if (!expect_return(i, 0, 0, tag)) {
      good = 0;
      break;
    }
    if (!c->restart) {
      /* Every wait below was interrupted by a handler without SA_RESTART. */
      for (j = i - 1; j >= 0; j--)
        if (!expect_return(j, -1, EINTR, tag)) {
          good = 0;
          break;
        }
      break;
    }
    if (i - 1 == 0 && !outer_restarts(c)) {
      if (!expect_return(0, -1, EINTR, tag))
        good = 0;
      break;
    }
    if (!expect_restarted(i - 1, tag)) {
      good = 0;
      break;
    }
    if (i - 1 == 0) {
      is_int(1, wake(0, 1), "%s: a wake of level 0's word counts the restarted outer waiter",
             tag);
      if (!expect_return(0, 0, 0, tag))
        good = 0;
    }
  }
  if (!good)
    rescue();
  pthread_join(t, NULL);
  for (i = 0; i < c->depth; i++)
    is_int(0, wake(i, INT_MAX), "%s: at the end a wake(INT_MAX) of level %d's word counts nobody",
           tag, i);
out:
  for (i = 0; i < c->depth - 1; i++)
    signal(sigs[i], SIG_DFL);
}

int
main(int argc, char **argv)
{
  int only = argc > 1 ? atoi(argv[1]) : 0, n;

  PFT_SKIP_UNDER_TSAN();
  plan_lazy();
  pft_watchdog(60);
  for (n = 0; n < NCASES; n++)
    if (!only || only == n + 1)
      run_case(n);
  return 0;
}
#endif /* !_WIN32 */
