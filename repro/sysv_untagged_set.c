/* sysv_untagged_set: emu:sysv leaks a SysV semaphore set for good when a
 * process is SIGKILLed between semget() and the semctl(SETALL) that writes
 * the set's tag (ports/sysv/park.c, pf_sysv_set_new).  pf_sysv_reclaim only
 * removes sets whose tag names a dead creator; an untagged set (all values
 * 0) is never removed by anyone (only ipcrm).
 *
 * In a private IPC namespace (root: unshare(CLONE_NEWIPC)), 3000 children
 * each do one 1 ms timed wait (the first park of a process creates its
 * set); the parent SIGKILLs each after a random 0-300 us.  Then one more
 * process starts the port (which reclaims the dead processes' sets) and the
 * namespace's sets are counted.
 *
 * Build (in a configured build tree _b of the branch):
 *   cd _b && gcc -g -DHAVE_CONFIG_H -I. -I../include -I../src -I../ports/linux \
 *     -o sysv_untagged_set ../repro/sysv_untagged_set.c .libs/libpfutex_core.a -pthread
 *   PFUTEX_BACKEND=emu:sysv ./sysv_untagged_set
 * Expected: 0 sets left.  Got: a few (e.g. "3 sets left, 3 untagged"). */
#define _GNU_SOURCE 1
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sem.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "pfutex.h"

static uint32_t word;

int
main(int argc, char **argv)
{
  int i, status, left = 0, untagged = 0, maxidx;
  struct seminfo si;
  pid_t pid;

  if (argc == 2) {                      /* the last process: start the port */
    (void)pfutex_backend();
    return 0;
  }
  if (unshare(CLONE_NEWIPC) != 0) {
    perror("unshare(CLONE_NEWIPC) (needs root)");
    return 2;
  }
  printf("backend %s\n", pfutex_backend());
  srand((unsigned)getpid());
  for (i = 0; i < 3000; i++) {
    if ((pid = fork()) == 0) {
      struct timespec ms = { 0, 1000000 };
      for (;;)
        (void)pfutex(&word, 128 /* FUTEX_WAIT_PRIVATE */, 0, &ms, NULL, 0);
    }
    {
      struct timespec d = { 0, (long)(rand() % 300) * 1000L };
      nanosleep(&d, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
  }
  if ((pid = fork()) == 0) {
    execl("/proc/self/exe", argv[0], "--reclaim", (char *)NULL);
    _exit(127);
  }
  waitpid(pid, &status, 0);
  maxidx = semctl(0, 0, SEM_INFO, (struct seminfo *)&si);
  for (i = 0; i <= maxidx; i++) {
    struct semid_ds ds;
    int id = semctl(i, 0, SEM_STAT, &ds);
    if (id < 0)
      continue;
    left++;
    if (semctl(id, (int)ds.sem_nsems - 3, GETVAL) == 0)
      untagged++;
  }
  printf("%d sets left, %d untagged (expected 0)\n", left, untagged);
  return left != 0;
}
