/* sig_longjmp: siglongjmp out of a handler that interrupted an untimed wait.
 *
 * Thread X calls sigsetjmp, then waits on w (untimed, one call deeper);
 * main signals it, and the handler siglongjmps back.  The wait's frame is
 * gone, and X reuses that stack.  As with the kernel (whose waiter leaves
 * the queue before the handler runs):
 *   simple: X's own wake(w) right after the longjmp counts nobody (0);
 *   full:   (a) X writes a known pattern over 64 KiB of its stack below the
 *           longjmp target (recursion with a big local array: it covers the
 *           abandoned wait's frame) and keeps those frames live;
 *           (b) main wakes w (its count is logged, not checked: until X's
 *           next call the emulation may still count the abandoned waiter);
 *           (c) X checks its pattern intact (no write landed in the stack);
 *           (d) X waits on w again and exactly one wake counts it (1), the
 *           wait returns 0;
 *   both:   finally wake(w, INT_MAX) counts nobody (0).
 * pfutex_wait and pfutex(), private and shared.  Under ASan a write into
 * the reused stack is a failure too.
 *
 * Optional argument: a case number, to run only that case. */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs POSIX signals (siglongjmp out of a wait)");
  return 0;
}
#else
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "pft.h"
#include <pfutex/linux.h>

#define LEVELS 16
#define CHUNK 4096

struct lcase {
  int full;      /* 0 simple, 1 full */
  int legacy;    /* pfutex() rather than pfutex_wait */
  int shared;
};

static const struct lcase cases[] = {
  { 0, 0, 0 }, { 0, 1, 1 }, { 1, 0, 0 }, { 1, 1, 1 }, { 1, 1, 0 }, { 1, 0, 1 },
};
#define NCASES ((int)(sizeof cases / sizeof cases[0]))

static const struct lcase *cur;
static uint32_t words[NCASES];
static uint32_t *w;
static sigjmp_buf jb;

/* X <-> main handshake: plain atomics, never pfutex (X must make no pfutex
 * call between the longjmp and the step under test). */
static int x_tid_set, phase, go_on;   /* __atomic */
static pid_t x_tid;
static volatile sig_atomic_t jumped;

/* X's results */
static long x_wake_ret, x_wait_ret;
static int x_wait_err, x_bad_bytes, x_first_bad_level;

static int
ld(int *p)
{
  return __atomic_load_n(p, __ATOMIC_SEQ_CST);
}

static void
st(int *p, int v)
{
  __atomic_store_n(p, v, __ATOMIC_SEQ_CST);
}

static unsigned
pflags(void)
{
  return cur->shared ? PFUTEX_SHARED : PFUTEX_PRIVATE;
}

static long
wait_w(void)
{
  if (cur->legacy)
    return pfutex(w, FUTEX_WAIT | (cur->shared ? 0 : FUTEX_PRIVATE_FLAG), 0, NULL, NULL, 0);
  return pfutex_wait(w, 0, PFUTEX_BITSET_MATCH_ANY, pflags(), NULL, PFUTEX_CLOCK_MONOTONIC);
}

static long
wake_w(int nr)
{
  if (cur->legacy)
    return pfutex(w, FUTEX_WAKE | (cur->shared ? 0 : FUTEX_PRIVATE_FLAG), (uint32_t)nr, NULL,
                  NULL, 0);
  return pfutex_wake(w, PFUTEX_BITSET_MATCH_ANY, nr, pflags());
}

static void
on_sig(int sig)
{
  (void)sig;
  jumped = 1;
  siglongjmp(jb, 1);
}

/* The wait that the handler leaves: one frame below the sigsetjmp. */
static __attribute__((noinline)) long
abandoned_wait(void)
{
  volatile char pad[256];
  long r;
  pad[0] = 1;
  st(&phase, 1);
  r = wait_w();
  (void)pad[0];
  return r;
}

static unsigned char
pat(int level, int i)
{
  return (unsigned char)(0xa5 ^ (level * 29) ^ (i * 7));
}

/* (a) fill LEVELS frames of CHUNK bytes each, (b) at the bottom let main
 * wake w, (c) check every frame on the way back up. */
static __attribute__((noinline)) void
scribble(int level)
{
  volatile unsigned char buf[CHUNK];
  int i, bad = 0;
  for (i = 0; i < CHUNK; i++)
    buf[i] = pat(level, i);
  if (level + 1 < LEVELS) {
    scribble(level + 1);
  } else {
    st(&phase, 2);                 /* scribbled: main may wake now */
    while (!ld(&go_on))
      sched_yield();
  }
  for (i = 0; i < CHUNK; i++)
    if (buf[i] != pat(level, i))
      bad++;
  if (bad) {
    x_bad_bytes += bad;
    x_first_bad_level = level;
  }
}

static void *
x_main(void *arg)
{
  (void)arg;
  x_tid = pft_gettid();
  st(&x_tid_set, 1);
  if (sigsetjmp(jb, 1) == 0) {
    long r = abandoned_wait();
    /* only on failure: the wait returned although nobody woke it */
    x_wait_ret = r;
    st(&phase, 99);
    return NULL;
  }
  /* Back from the handler; the wait's frame is abandoned. */
  if (!cur->full) {
    x_wake_ret = wake_w(INT_MAX);
    st(&phase, 3);
    return NULL;
  }
  x_bad_bytes = 0;
  x_first_bad_level = -1;
  scribble(0);
  st(&phase, 4);
  errno = 0;
  x_wait_ret = wait_w();
  x_wait_err = errno;
  st(&phase, 5);
  return NULL;
}

static void
run_case(int n)
{
  char tag[120], what[200];
  pthread_t x;
  long r;
  int k;

  cur = &cases[n];
  w = &words[n];
  *w = 0;
  snprintf(tag, sizeof tag, "case %d (%s, %s, %s)", n + 1, cur->full ? "full" : "simple",
           cur->legacy ? "pfutex()" : "pfutex_wait", cur->shared ? "shared" : "private");
  diag("%s", tag);
  st(&x_tid_set, 0);
  st(&phase, 0);
  st(&go_on, 0);
  jumped = 0;
  x_wake_ret = x_wait_ret = -2;

  if (pthread_create(&x, NULL, x_main, NULL) != 0)
    sysbail("pthread_create");
  while (!ld(&x_tid_set) || ld(&phase) < 1)
    sched_yield();
  pft_wait_asleep(x_tid);
  if (!ok(ld(&phase) == 1, "%s: X asleep in the wait", tag)) {
    pthread_join(x, NULL);
    diag("    the wait returned %ld", x_wait_ret);
    return;
  }
  pthread_kill(x, SIGUSR1);

  if (!cur->full) {
    while (ld(&phase) < 3)
      sched_yield();
    ok(jumped, "%s: the handler ran and jumped", tag);
    is_int(0, x_wake_ret, "%s: X's own wake(w) after the longjmp counts nobody", tag);
    pthread_join(x, NULL);
  } else {
    while (ld(&phase) < 2)
      sched_yield();
    ok(jumped, "%s: the handler ran and jumped", tag);
    diag("    main: wake(w, 1) while X's stack is scribbled (a crash here: the waker walked "
         "a node in X's reused stack)");
    r = wake_w(1);
    diag("    main's wake(w, 1) returned %ld (not checked)", r);
    st(&go_on, 1);
    while (ld(&phase) < 4)
      sched_yield();
    if (!is_int(0, x_bad_bytes, "%s: X's reused stack is intact after main's wake", tag))
      diag("    bytes changed, deepest bad frame %d of %d", x_first_bad_level, LEVELS);
    pft_wait_asleep(x_tid);
    if (!ok(ld(&phase) == 4, "%s: X asleep in its second wait", tag))
      diag("    it returned %ld (%s)", x_wait_ret, strerror(x_wait_err));
    r = wake_w(1);
    is_int(1, r, "%s: one wake counts X's second wait", tag);
    for (k = 0; k < 3000 && ld(&phase) < 5; k++)
      usleep(1000);
    if (ld(&phase) < 5) {
      ok(0, "%s: X's second wait returns (still asleep 3 s after the wake)", tag);
      for (k = 0; k < 3000 && ld(&phase) < 5; k++) {
        r = wake_w(INT_MAX);
        if (r)
          diag("    rescue wake returned %ld", r);
        usleep(1000);
      }
      if (ld(&phase) < 5)
        bail("%s: X stays asleep", tag);
    } else {
      snprintf(what, sizeof what, "%s: X's second wait", tag);
      pft_is_ret(x_wait_ret, x_wait_err, 0, 0, what);
    }
    pthread_join(x, NULL);
  }
  is_int(0, wake_w(INT_MAX), "%s: at the end wake(w, INT_MAX) counts nobody", tag);
}

int
main(int argc, char **argv)
{
  int only = argc > 1 ? atoi(argv[1]) : 0, n;

  PFT_SKIP_UNDER_TSAN();
  plan_lazy();
  pft_watchdog(60);
  pft_install(SIGUSR1, on_sig, 0);
  for (n = 0; n < NCASES; n++)
    if (!only || only == n + 1)
      run_case(n);
  return 0;
}
#endif /* !_WIN32 */
