/* region_util.h - helpers shared by the region tests (tests/region_*.c):
 * "is that thread of that process asleep", memory shared with fork
 * children, unique shm names.  Static functions only: each test program
 * lists this header in its sources. */
#ifndef PF_REGION_UTIL_H
#define PF_REGION_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pft.h"

#if defined(__GNUC__)
# define RU_FN static __attribute__((unused))
#else
# define RU_FN static
#endif

/* Wait until thread tid of process pid sleeps (state S or D on two samples
 * in a row), after *started (when given) is set.  0 when it does; -1 when
 * *done (when given) is set first, the thread is gone or a zombie, or after
 * about 15 s of polling (the watchdogs fire before that). */
RU_FN int
ru_wait_asleep(pid_t pid, pid_t tid, volatile int *started, volatile int *done)
{
  long tries;
  int seen = 0;
  for (tries = 0; tries < 60000; tries++) {
    int st;
    if (done && __atomic_load_n(done, __ATOMIC_SEQ_CST))
      return -1;
    if (started && !__atomic_load_n(started, __ATOMIC_SEQ_CST)) {
      usleep(100);
      continue;
    }
    st = pft_task_state(pid, tid);
    if (st < 0 || st == 'Z' || st == 'X')
      return -1;
    if (st == 'S' || st == 'D') {
      if (++seen >= 2)
        return 0;
    } else {
      seen = 0;
    }
    sched_yield();
    usleep(200);
  }
  return -1;
}

/* Zeroed memory shared with the fork children made after this call. */
RU_FN void *
ru_shared_alloc(size_t len)
{
  void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    sysbail("mmap shared");
  return p;
}

/* A unique shm name: "/pft-<tag>-<pid>".  An object already there can only
 * be a leftover of a killed earlier run whose pid this process now has: it
 * is removed. */
RU_FN void
ru_name(char *buf, size_t len, const char *tag)
{
  snprintf(buf, len, "/pft-%s-%d", tag, (int)getpid());
  shm_unlink(buf);
}

/* Reap child pid: its exit status (0..255), or 256 + signal when it was
 * killed, or -1. */
RU_FN int
ru_reap(pid_t pid)
{
  int status;
  pid_t r;
  while ((r = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
    ;
  if (r != pid)
    return -1;
  if (WIFEXITED(status))
    return WEXITSTATUS(status);
  if (WIFSIGNALED(status))
    return 256 + WTERMSIG(status);
  return -1;
}

/* Poll (bounded, ~15 s) until *flag reaches at least want. */
RU_FN int
ru_wait_flag(volatile int *flag, int want)
{
  long tries;
  for (tries = 0; tries < 150000; tries++) {
    if (__atomic_load_n(flag, __ATOMIC_SEQ_CST) >= want)
      return 0;
    usleep(100);
  }
  return -1;
}

RU_FN int
ru_backend_is_linux(void)
{
  const char *b = pfutex_backend();
  return b && strncmp(b, "linux", 5) == 0;
}

/* A child's own guard: SIGALRM (default action: it dies) after `seconds`
 * times $PFUTEX_TEST_TIMEOUT_SCALE, so a child stuck in a wait does not
 * outlive its test. */
RU_FN void
ru_child_alarm(unsigned int seconds)
{
  const char *scale = getenv("PFUTEX_TEST_TIMEOUT_SCALE");
  if (scale && atoi(scale) > 0)
    seconds *= (unsigned int)atoi(scale);
  signal(SIGALRM, SIG_DFL);
  alarm(seconds);
}

#endif
