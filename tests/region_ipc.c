/* region_ipc: emu:sysv, the SysV semaphore sets of processes killed while
 * they waited in a shared region are reclaimed by the next process that
 * opens the region (opening starts the backend, and the sysv port removes
 * the sets of dead processes when it starts: ports/sysv/park.c), and the
 * region still works afterwards.
 *
 * In a private IPC namespace when possible (unshare(CLONE_NEWIPC): root;
 * then every set with 67 semaphores, pfutex's, is counted, as .ci/run
 * does), else in the shared one, counting only the sets whose tag names
 * one of this test's processes.  The main process makes no pfutex call
 * until the end, so the port it starts then cannot be what reclaimed:
 *   - a child creates a named region and exits;
 *   - RI_CHILDREN children open it and wait (untimed) on word 0; once
 *     each is asleep, each holds a set of its own (count >= RI_CHILDREN);
 *   - all are SIGKILLed while they wait: their sets stay (nothing removes
 *     a set at death), count still >= RI_CHILDREN;
 *   - a new process opens the region: the sets of the dead are gone, at
 *     most the live processes' are left (its own, once it waits: 1);
 *   - the region works: it waits on word 0 (where the dead children's
 *     slots are still queued), and our wake counts 1 and wakes it;
 *   - no SysV shared memory segment is ever made (regions are POSIX shm).
 * Other backends make no SysV set: skipped there. */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork(), /proc and POSIX shm objects (fd-based attach)");
  return 0;
}
#else
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/sem.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
# include <sys/prctl.h>
#endif

#include "pft.h"
#include "pfutex/linux.h"

#define RI_CHILDREN 30
#define RI_NSEMS 67                 /* a pfutex set: 32 parkers, 32 counters, a 3-value tag */
#define RI_TAG 64
#define RI_TAG_MAGIC 0x5046

static int ri_ns;                   /* in a private IPC namespace */
static pid_t ri_pids[RI_CHILDREN + 8];
static int ri_npids;

static int
ri_ours(pid_t pid)
{
  int i;
  for (i = 0; i < ri_npids; i++)
    if (ri_pids[i] == pid)
      return 1;
  return 0;
}

/* pfutex's sets: every 67-semaphore set in our namespace, or (shared
 * namespace) those tagged with one of our processes' pids. */
static int
ri_count_sets(void)
{
  char line[512];
  FILE *f = fopen("/proc/sysvipc/sem", "r");
  int n = 0, first = 1;
  if (!f)
    return -1;
  while (fgets(line, sizeof line, f)) {
    long key, semid, perms, nsems;
    if (first) {
      first = 0;
      continue;
    }
    if (sscanf(line, "%ld %ld %lo %ld", &key, &semid, &perms, &nsems) != 4 || nsems != RI_NSEMS)
      continue;
    if (!ri_ns) {
      int v0 = semctl((int)semid, RI_TAG, GETVAL), v1 = semctl((int)semid, RI_TAG + 1, GETVAL),
          v2 = semctl((int)semid, RI_TAG + 2, GETVAL);
      if (v0 != RI_TAG_MAGIC || v1 < 0 || v2 < 0 || !ri_ours((pid_t)(v1 | (v2 << 15))))
        continue;
    }
    n++;
  }
  fclose(f);
  return n;
}

/* SysV shared memory segments: all of the namespace's, or (shared
 * namespace) those one of our processes created. */
static int
ri_count_segments(void)
{
  char line[512];
  FILE *f = fopen("/proc/sysvipc/shm", "r");
  int n = 0, first = 1;
  if (!f)
    return -1;
  while (fgets(line, sizeof line, f)) {
    long key, shmid, perms, cpid;
    unsigned long size;
    if (first) {
      first = 0;
      continue;
    }
    if (sscanf(line, "%ld %ld %lo %lu %ld", &key, &shmid, &perms, &size, &cpid) != 5)
      continue;
    if (ri_ns || ri_ours((pid_t)cpid))
      n++;
  }
  fclose(f);
  return n;
}

/* Is process pid asleep (S or D), twice in a row?  Bounded. */
static int
ri_wait_asleep(pid_t pid)
{
  char path[64], buf[512], *p;
  int seen = 0, polls;
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  for (polls = 0; polls < 50000; polls++) {
    FILE *f = fopen(path, "r");
    size_t n;
    if (!f)
      return -1;
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    p = strrchr(buf, ')');
    if (p && p[1] == ' ' && (p[2] == 'S' || p[2] == 'D')) {
      if (++seen >= 2)
        return 0;
    } else {
      seen = 0;
    }
    usleep(200);
  }
  return -1;
}

static void
ri_reap(pid_t pid, int *st)
{
  while (waitpid(pid, st, 0) < 0)
    if (errno != EINTR)
      sysbail("waitpid");
}

static void
ri_pdeath(void)
{
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGKILL);
#endif
}

int
main(void)
{
  char name[64], backend[64];
  volatile int *ready;
  pfutex_region_t *r;
  pid_t pid, newp;
  int fds[2], st, i, n, before, during, killed, after, seg_before, seg_after;
  long woken;
  char c;

  PFT_SKIP_UNDER_TSAN();
#ifdef CLONE_NEWIPC
  ri_ns = unshare(CLONE_NEWIPC) == 0;
#endif
  if (ri_count_sets() < 0)
    skip_all("cannot read /proc/sysvipc/sem: %s", strerror(errno));

  /* The backend, asked by a child: this process starts no port yet. */
  if (pipe(fds) != 0)
    sysbail("pipe");
  fflush(stdout);
  if ((pid = fork()) < 0)
    sysbail("fork");
  if (pid == 0) {
    const char *b = pfutex_backend();
    snprintf(backend, sizeof backend, "%s", b ? b : "(none)");
    _exit(write(fds[1], backend, sizeof backend) == (ssize_t)sizeof backend ? 0 : 1);
  }
  close(fds[1]);
  if (read(fds[0], backend, sizeof backend) != (ssize_t)sizeof backend)
    bail("the backend probe did not report");
  close(fds[0]);
  ri_reap(pid, &st);
  if (strcmp(backend, "emu:sysv") != 0)
    skip_all("emu:sysv only: backend %s makes no SysV semaphore set", backend);

  plan(6);
  pft_watchdog(60);
  diag("%s", ri_ns ? "in a private IPC namespace: counting every pfutex set"
                   : "no private IPC namespace (not root?): counting the sets tagged with "
                     "this test's pids");
  ri_pids[ri_npids++] = getpid();
  ready = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (ready == MAP_FAILED)
    sysbail("mmap");
  snprintf(name, sizeof name, "/pft-ipc-%d", (int)getpid());
  shm_unlink(name);   /* a killed earlier run with this pid */

  /* The region, made by a child. */
  fflush(stdout);
  if ((pid = fork()) < 0)
    sysbail("fork");
  if (pid == 0) {
    r = pfutex_region_open(name, 4096, O_RDWR | O_CREAT | O_EXCL, 0600);
    _exit(r && pfutex_region_close(r) == 0 ? 0 : 1);
  }
  ri_reap(pid, &st);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
    pfutex_region_unlink(name);
    bail("could not create the region %s", name);
  }
  before = ri_count_sets();
  seg_before = ri_count_segments();

  /* RI_CHILDREN waiters. */
  for (i = 0; i < RI_CHILDREN; i++) {
    fflush(stdout);
    if ((pid = fork()) < 0)
      sysbail("fork");
    if (pid == 0) {
      ri_pdeath();
      alarm(30);
      r = pfutex_region_open(name, 0, O_RDWR, 0);
      if (!r)
        _exit(2);
      __atomic_fetch_add(ready, 1, __ATOMIC_SEQ_CST);
      pfutex((uint32_t *)pfutex_region_addr(r), FUTEX_WAIT, 0, NULL, NULL, 0);
      _exit(3);                               /* woken: wrong */
    }
    ri_pids[ri_npids++] = pid;
  }
  for (n = 0; n < 50000 && __atomic_load_n(ready, __ATOMIC_SEQ_CST) < RI_CHILDREN; n++)
    usleep(200);
  if (__atomic_load_n(ready, __ATOMIC_SEQ_CST) < RI_CHILDREN)
    diag("only %d of %d children opened the region", *ready, RI_CHILDREN);
  for (i = 1; i < ri_npids; i++)
    if (ri_wait_asleep(ri_pids[i]) != 0)
      diag("child %d never slept", (int)ri_pids[i]);
  during = ri_count_sets();
  if (!ok(during - before >= RI_CHILDREN, "%d children asleep in the region: a set each",
          RI_CHILDREN))
    diag("    %d sets before, %d now", before, during);

  for (i = 1; i < ri_npids; i++)
    kill(ri_pids[i], SIGKILL);
  n = 0;
  for (i = 1; i < ri_npids; i++) {
    ri_reap(ri_pids[i], &st);
    n += WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
  }
  killed = ri_count_sets();
  if (!ok(n == RI_CHILDREN && killed - before >= RI_CHILDREN,
          "all SIGKILLed while they waited: their sets are still there"))
    diag("    %d of %d killed while waiting; %d sets", n, RI_CHILDREN, killed);

  /* A new process opens the region: its port reclaims. */
  if (pipe(fds) != 0)
    sysbail("pipe");
  fflush(stdout);
  if ((newp = fork()) < 0)
    sysbail("fork");
  if (newp == 0) {
    struct timespec ten = { 10, 0 };
    long ret;
    ri_pdeath();
    alarm(30);
    close(fds[0]);
    r = pfutex_region_open(name, 0, O_RDWR, 0);
    if (!r)
      _exit(2);
    if (write(fds[1], "o", 1) != 1)
      _exit(2);
    errno = 0;
    ret = pfutex((uint32_t *)pfutex_region_addr(r), FUTEX_WAIT, 0, &ten, NULL, 0);
    _exit(ret == 0 ? 0 : errno == ETIMEDOUT ? 4 : 5);
  }
  ri_pids[ri_npids++] = newp;
  close(fds[1]);
  if (read(fds[0], &c, 1) != 1)
    bail("the new process could not open the region");
  close(fds[0]);
  ri_wait_asleep(newp);
  after = ri_count_sets();
  diag("pfutex sets: %d before, %d while %d children waited, %d once they were killed, "
       "%d once a new process opened the region and waits", before, during, RI_CHILDREN, killed,
       after);
  if (!ok(after - before <= 1,
          "a new process opened the region: the dead children's sets are reclaimed (at most "
          "the new process's own is left)"))
    diag("    %d sets left", after - before);

  /* The region works: our wake finds the new process among the dead. */
  if (!(r = pfutex_region_open(name, 0, O_RDWR, 0)))
    sysbail("pfutex_region_open");
  woken = 0;
  for (n = 0; n < 5000 && woken == 0; n++) {   /* the count is the state */
    woken = pfutex_wake((uint32_t *)pfutex_region_addr(r), PFUTEX_BITSET_MATCH_ANY, INT_MAX,
                        PFUTEX_SHARED);
    if (woken == 0)
      usleep(1000);
  }
  ri_reap(newp, &st);
  is_int(1, woken, "the region works: a wake counts the new process only, not the killed ones");
  if (!ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the new process's wait returned 0"))
    diag("    it ended with %s %d (4: timed out)", WIFSIGNALED(st) ? "signal" : "status",
         WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
  seg_after = ri_count_segments();
  if (!ok(seg_before >= 0 && seg_after == seg_before,
          "no SysV shared memory segment was made (%d before, %d after)", seg_before, seg_after))
    diag("    /proc/sysvipc/shm unreadable or changed");
  diag("pfutex sets at the end: %d (the new process's, dead now: the next process to start "
       "the port removes it; by hand: ipcrm)", ri_count_sets());
  /* Not closed: pfutex_region_close keeps the handle allocated (src/region/handle.c),
   * which LeakSanitizer reports; the mapping goes at exit. */
  pfutex_region_unlink(name);
  return 0;
}
#endif /* !_WIN32 */
