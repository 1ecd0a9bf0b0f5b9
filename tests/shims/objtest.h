/* objtest.h - what the shims' own tests (tests/shims/<os>/test.c) need to
 * check a port's object identity through the engine: shared memory made
 * in the ways the ports tell apart, and a shared wait in a fork child
 * woken from here.  Ops by Linux's numbers through pfutex() (the shims'
 * headers define their OS's own FUTEX_* names). */
#ifndef PF_SHIM_OBJTEST_H
#define PF_SHIM_OBJTEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "basic.h"
#include "pfutex.h"

/* A POSIX shared memory object of pg bytes, mapped twice (its name
 * removed at once): *m1, *m2. */
static inline void
objtest_shm_twice(const char *tag, long pg, char **m1, char **m2)
{
  char name[64];
  int fd;
  snprintf(name, sizeof name, "/pfutex-%s-%d", tag, (int)getpid());
  fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
  shm_unlink(name);
  if (fd < 0 || ftruncate(fd, pg) != 0)
    sysbail("shm_open");
  *m1 = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  *m2 = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (*m1 == MAP_FAILED || *m2 == MAP_FAILED)
    sysbail("mmap");
}

/* An address where nothing is mapped (a page mapped, then unmapped). */
static inline char *
objtest_unmapped(long pg)
{
  char *p = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    sysbail("mmap");
  munmap(p, (size_t)pg);
  return p;
}

/* A SysV segment of pg bytes, attached (and marked for removal). */
static inline char *
objtest_segment(long pg)
{
  int id = shmget(IPC_PRIVATE, (size_t)pg, IPC_CREAT | 0600);
  char *seg = id >= 0 ? shmat(id, NULL, 0) : (char *)-1;
  if (id >= 0)
    shmctl(id, IPC_RMID, NULL);
  if (seg == (char *)-1)
    sysbail("shmget");
  return seg;
}

/* A fork child whose shared FUTEX_WAIT on *w (expecting 0, 5 s at most)
 * exits 0 when it returns 0. */
static inline pid_t
objtest_fork_waiter(uint32_t *w)
{
  pid_t pid;
  fflush(stdout);
  if ((pid = fork()) < 0)
    sysbail("fork");
  if (pid == 0) {
    struct timespec t5 = { 5, 0 };
    _exit(pfutex(w, 0 /* FUTEX_WAIT */, 0, &t5, NULL, 0) == 0 ? 0 : 1);
  }
  return pid;
}

/* Shared FUTEX_WAKE(1) of *w until someone is woken (5 s at most): the
 * count. */
static inline long
objtest_wake_until(uint32_t *w)
{
  long woken = 0;
  int i;
  for (i = 0; i < 500 && woken == 0; i++) {
    woken = pfutex(w, 1 /* FUTEX_WAKE */, 1, NULL, NULL, 0);
    if (woken == 0)
      usleep(10000);
  }
  return woken;
}

/* Two checks of the engine with the port's answer on: shared ops on a
 * private mapping's word (pv, writable) keep the address key, and a shared
 * wake on read-only private anonymous memory (ro) answers EFAULT. */
static inline void
objtest_private_words(uint32_t *pv, uint32_t *ro)
{
  struct timespec rel = { 0, 20 * 1000 * 1000 };
  *(volatile uint32_t *)pv = 0;
  errno = 0;
  ok(pfutex(pv, 0 /* FUTEX_WAIT */, 0, &rel, NULL, 0) == -1 && errno == ETIMEDOUT
         && pfutex(pv, 1 /* FUTEX_WAKE */, 1, NULL, NULL, 0) == 0,
     "pfutex: shared ops on a private mapping's word keep the address key (wait times out, wake 0)");
  errno = 0;
  ok(pfutex(ro, 1 /* FUTEX_WAKE */, 1, NULL, NULL, 0) == -1 && errno == EFAULT,
     "pfutex: a shared FUTEX_WAKE on read-only private anonymous memory: EFAULT, as Linux");
}

/* Did the child exit 0? (reaped here) */
static inline int
objtest_child_ok(pid_t pid)
{
  int st;
  return waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

#endif
