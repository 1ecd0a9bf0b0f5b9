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
#ifndef _WIN32
#include <sys/wait.h>
#endif
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
#ifdef _WIN32
/* Windows (tests/region_exec and tests/region_peer): processes are started
 * with _spawnv(_P_NOWAIT), whose "pid" is the process handle; reaped with
 * _cwait.  Another process's thread cannot be seen asleep (no /proc): it
 * counts as asleep once a waiter is queued in the region ru_w32_region (the
 * white-box pf_region_check), where any wake finds it. */
#include <process.h>
#include "region/internal.h"
static pfutex_region_t *ru_w32_region __attribute__((unused));
static pid_t ru_w32_self __attribute__((unused));        /* this process's own id for ru_wait_asleep */

RU_FN int
ru_wait_asleep(pid_t pid, pid_t tid, volatile int *started, volatile int *done)
{
  /* Bounded by time, not by a count of polls: starting a process under
   * wine takes seconds on a loaded machine, and its sleeps are coarse. */
  long long end = pft_now_ns() + 30000000000LL;
  int seen = 0;
  while (pft_now_ns() < end) {
    if (done && __atomic_load_n(done, __ATOMIC_SEQ_CST))
      return -1;
    if (started && !__atomic_load_n(started, __ATOMIC_SEQ_CST)) {
      usleep(100);
      continue;
    }
    if (pid == 0 || pid == ru_w32_self) {
      if (pft_task_state(0, tid) == 'S')
        seen++;
      else
        seen = 0;
    } else {
      struct pf_region_stats st;
      const char *why;
      if (ru_w32_region && pf_region_check(ru_w32_region, &st, &why) == 0 && st.queued > 0)
        seen++;
      else
        seen = 0;
    }
    if (seen >= 2)
      return 0;
    sched_yield();
    usleep(200);
  }
  return -1;
}

/* Start PATH with ARGV (NULL-terminated): a handle usable as a pid here. */
RU_FN pid_t
ru_spawn(const char *path, char *const *argv)
{
  intptr_t h;
  fflush(stdout);
  h = _spawnv(_P_NOWAIT, path, (const char *const *)argv);
  return h == -1 ? (pid_t)-1 : (pid_t)h;
}

RU_FN int
ru_reap(pid_t pid)
{
  int status;
  if (_cwait(&status, (intptr_t)pid, 0) == -1)
    return -1;
  return status & 0xff;
}

/* The child's guard: a thread that ends the process after `seconds`. */
RU_FN void *
ru_w32_alarm_main(void *arg)
{
  struct timespec ts = { (time_t)(uintptr_t)arg, 0 };
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
    ;
  _exit(128 + 14);
  return NULL;
}

RU_FN void
ru_child_alarm(unsigned int seconds)
{
  const char *scale = getenv("PFUTEX_TEST_TIMEOUT_SCALE");
  pthread_t t;
  if (scale && atoi(scale) > 0)
    seconds *= (unsigned int)atoi(scale);
  if (pthread_create(&t, NULL, ru_w32_alarm_main, (void *)(uintptr_t)seconds) == 0)
    pthread_detach(t);
}

RU_FN pid_t
ru_parent_pid(void)
{
  return (pid_t)-1;               /* another process: see ru_wait_asleep */
}

RU_FN void
ru_name(char *buf, size_t len, const char *tag)
{
  snprintf(buf, len, "/pft-%s-%d", tag, (int)getpid());
  ru_w32_self = (pid_t)getpid();
}

RU_FN void *
ru_shared_alloc(size_t len)
{
  void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    sysbail("mmap shared");
  return p;
}
#else
RU_FN pid_t
ru_spawn(const char *path, char *const *argv)
{
  pid_t pid;
  fflush(stdout);
  if ((pid = fork()) == 0) {
    execv(path, argv);
    _exit(127);
  }
  return pid;
}

RU_FN pid_t
ru_parent_pid(void)
{
  return getppid();
}

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

#endif /* !_WIN32 */

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

#ifndef _WIN32
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

#endif /* !_WIN32 */

#endif
