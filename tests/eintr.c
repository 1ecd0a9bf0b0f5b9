/* eintr: a signal handler interrupting a futex wait.  Without SA_RESTART an
 * untimed wait returns -1/EINTR; with SA_RESTART it goes back to sleep and
 * only a wake ends it (0); a timed wait returns -1/EINTR even with
 * SA_RESTART (Linux never restarts a timed futex wait after a handler). */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs POSIX signals (EINTR after a handler); on Windows no signal interrupts a thread and a park never ends with EINTR (ports/win32/park.c)");
  return 0;
}
#else
#include <errno.h>
#include <signal.h>
#include <string.h>
#include "pft.h"

static volatile sig_atomic_t hits_norestart, hits_restart, hits_timed;

static void on_norestart(int sig) { (void)sig; hits_norestart++; }
static void on_restart(int sig) { (void)sig; hits_restart++; }
static void on_timed(int sig) { (void)sig; hits_timed++; }

int
main(void)
{
  static uint32_t w1, w2, w3;
  const struct timespec ten = { 10, 0 };
  struct pft_waiter a = { .uaddr = &w1, .val = 0, .op_flags = 128 };
  struct pft_waiter b = { .uaddr = &w2, .val = 0, .op_flags = 128 };
  struct pft_waiter c = { .uaddr = &w3, .val = 0, .op_flags = 128, .timeout = &ten };

  PFT_SKIP_UNDER_TSAN();
  plan(8);
  pft_watchdog(60);

  /* Each case installs its handler just for itself and restores the default
   * afterwards, so the process's handlers never mix SA_RESTART and not (the
   * sysv port decides restarts process-wide, see ports/sysv/park.c). */

  /* 1: no SA_RESTART */
  pft_install(SIGUSR1, on_norestart, 0);
  pft_waiter_start(&a);
  pthread_kill(a.thread, SIGUSR1);
  pft_waiter_join(&a);
  if (!ok(a.ret == -1 && a.err == EINTR, "untimed wait, handler without SA_RESTART: -1/EINTR"))
    diag("    got %ld, errno %d", a.ret, a.err);
  is_int(1, hits_norestart, "the handler ran once");
  signal(SIGUSR1, SIG_DFL);

  /* 2: SA_RESTART, untimed: restarted */
  pft_install(SIGUSR2, on_restart, SA_RESTART);
  pft_waiter_start(&b);
  pthread_kill(b.thread, SIGUSR2);
  while (hits_restart == 0 && !__atomic_load_n(&b.done, __ATOMIC_SEQ_CST))
    sched_yield();
  is_int(1, hits_restart, "the SA_RESTART handler ran");
  pft_wait_asleep(b.tid);
  if (!ok(!__atomic_load_n(&b.done, __ATOMIC_SEQ_CST),
          "untimed wait with SA_RESTART did not return"))
    diag("    got %ld, errno %d", b.ret, b.err);
  w2 = 1;
  is_int(1, pfutex(&w2, 1 | 128, 1, NULL, NULL, 0), "WAKE woke the restarted waiter");
  pft_waiter_join(&b);
  if (!is_int(0, b.ret, "restarted waiter returned 0"))
    diag("    errno %d", b.err);
  signal(SIGUSR2, SIG_DFL);

  /* 3: SA_RESTART, timed: not restarted */
  pft_install(SIGURG, on_timed, SA_RESTART);
  pft_waiter_start(&c);
  pthread_kill(c.thread, SIGURG);
  pft_waiter_join(&c);
  if (!ok(c.ret == -1 && c.err == EINTR, "timed wait, handler with SA_RESTART: -1/EINTR"))
    diag("    got %ld, errno %d", c.ret, c.err);
  is_int(1, hits_timed, "the timed case's handler ran once");
  return 0;
}
#endif /* !_WIN32 */
