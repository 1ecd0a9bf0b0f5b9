/* pshared_sem: a counting semaphore between unrelated processes, on a
 * named pfutex region.
 *
 * Run with no argument, the program creates a named region
 * ("/pft-pshared_sem-<pid>", O_CREAT|O_EXCL, mode 0600) holding two
 * semaphores of examples/pshared_sync.h and some counters, then starts
 * SM_WORKERS workers: each is a fork() + exec() of this same program
 * (found through /proc/self/exe, else argv[0]) as
 *     pshared_sem --worker NAME INDEX
 * so each worker is a new process image, unrelated to the region, that
 * opens it by name itself (pfutex_region_open, O_RDWR) and maps it at an
 * address of its own.  The workers meet at a start gate (a futex word
 * they count on), then each does SM_ROUNDS times:
 *     P(slots)           slots starts at SM_SLOTS: at most that many inside
 *       inside++         must never exceed SM_SLOTS
 *       P(mutex)         mutex starts at 1: a binary semaphore
 *         total++        a plain (non-atomic) increment
 *       V(mutex)
 *       inside--
 *     V(slots)
 * As soon as all workers have passed the gate the parent unlinks the name:
 * they keep the region open, as with shm_unlink(3), and nothing is left
 * behind however the test ends after that.  It checks that every worker
 * exited 0, that the total is exactly SM_WORKERS * SM_ROUNDS, that neither
 * bound was ever exceeded, that both semaphores are back to their initial
 * values with no waiter, that no futex call failed unexpectedly, and that
 * an open of the name now fails with ENOENT; then it closes the region.
 *
 * Every futex op is a shared one (FUTEX_WAIT and FUTEX_WAKE without
 * FUTEX_PRIVATE_FLAG), as it must be for the processes to see each
 * other's waits.  The workers inherit the environment, so they run on the
 * parent's backend (PFUTEX_BACKEND). */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork() + exec of itself (the example's workers)");
  return 0;
}
#else
#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1
#endif
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic.h"
#include "pft.h"
#include "pshared_sync.h"

#define SM_WORKERS 4
#define SM_ROUNDS 50000
#define SM_SLOTS 2                /* the counting semaphore's initial value */

/* Worker exit codes. */
enum { SM_ST_OPEN = 3, SM_ST_SIZE = 4, SM_ST_ARGS = 5, SM_ST_EXEC = 6 };

struct sm_shared {
  struct ps_sem slots;            /* counting: SM_SLOTS */
  struct ps_sem mutex;            /* binary: 1 */
  uint32_t inside, max_inside;    /* holders of slots */
  uint32_t in_mutex, mutex_overlap;
  unsigned long total;            /* plain: only mutex protects it */
  uint32_t started;               /* workers that opened the region */
  struct ps_gate gate;            /* all start together */
  uint64_t addr[SM_WORKERS];      /* where each worker mapped it (diag) */
  int32_t pid[SM_WORKERS];
};

static char sm_name[64];

static void
sm_max(uint32_t *max, uint32_t v)
{
  uint32_t m = __atomic_load_n(max, __ATOMIC_RELAXED);
  while (v > m && !__atomic_compare_exchange_n(max, &m, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    ;
}

static int
sm_worker(const char *name, const char *index)
{
  pfutex_region_t *rgn;
  struct sm_shared *sh;
  char *end;
  long id = strtol(index, &end, 10);
  int i;

  if (*end || id < 0 || id >= SM_WORKERS)
    return SM_ST_ARGS;
  pft_watchdog(45);               /* prints "Bail out!" and exits 254 on a hang */
  rgn = pfutex_region_open(name, 0, O_RDWR, 0);
  if (!rgn) {
    fprintf(stderr, "worker %ld: pfutex_region_open %s: %s\n", id, name, strerror(errno));
    return SM_ST_OPEN;
  }
  if (pfutex_region_size(rgn) < sizeof *sh)
    return SM_ST_SIZE;
  sh = pfutex_region_addr(rgn);
  sh->addr[id] = (uint64_t)(uintptr_t)sh;
  sh->pid[id] = (int32_t)getpid();
  __atomic_add_fetch(&sh->started, 1, __ATOMIC_RELAXED);
  ps_gate_pass(&sh->gate, SM_WORKERS);

  for (i = 0; i < SM_ROUNDS; i++) {
    uint32_t n;
    ps_sem_wait(&sh->slots);
    n = __atomic_add_fetch(&sh->inside, 1, __ATOMIC_RELAXED);
    sm_max(&sh->max_inside, n);
    if (i % 4 == 0)
      sched_yield();              /* let the others find the slots taken */

    ps_sem_wait(&sh->mutex);
    if (__atomic_add_fetch(&sh->in_mutex, 1, __ATOMIC_RELAXED) != 1)
      __atomic_store_n(&sh->mutex_overlap, 1, __ATOMIC_RELAXED);
    sh->total++;
    if (i % 16 == 0)
      sched_yield();
    __atomic_sub_fetch(&sh->in_mutex, 1, __ATOMIC_RELAXED);
    ps_sem_post(&sh->mutex);

    __atomic_sub_fetch(&sh->inside, 1, __ATOMIC_RELAXED);
    ps_sem_post(&sh->slots);
  }
  return pfutex_region_close(rgn) == 0 ? 0 : 1;
}

/* Wait until all workers have passed the start gate (1), or until one of
 * them ended before that (0; its status reaped).  Polls the gate word
 * with 50 ms timed waits, to look at the workers in between. */
static int
sm_wait_gate(struct sm_shared *sh, const pid_t *pids, int *status, int *reaped)
{
  int i;
  memset(reaped, 0, SM_WORKERS * sizeof *reaped);
  for (;;) {
    struct timespec rel = { 0, 50 * 1000 * 1000 };
    uint32_t v = __atomic_load_n(&sh->gate.arrived, __ATOMIC_ACQUIRE);
    if (v >= SM_WORKERS)
      return 1;
    if (pfutex(&sh->gate.arrived, FUTEX_WAIT, v, &rel, NULL, 0) < 0 && errno != EAGAIN
        && errno != EINTR && errno != ETIMEDOUT)
      ps_error(&sh->gate.errors, &sh->gate.last_errno, errno);
    for (i = 0; i < SM_WORKERS; i++)
      if (waitpid(pids[i], &status[i], WNOHANG) == pids[i]) {
        reaped[i] = 1;
        if (__atomic_load_n(&sh->gate.arrived, __ATOMIC_ACQUIRE) < SM_WORKERS)
          return 0;
      }
  }
}

/* The path of this program, for the workers' exec. */
static void
sm_self(const char *argv0, char *buf, size_t len)
{
  ssize_t n = readlink("/proc/self/exe", buf, len - 1);
  if (n > 0) {
    buf[n] = 0;
    return;
  }
  if (strlen(argv0) >= len)
    bail("argv[0] too long");
  strcpy(buf, argv0);             /* run with a path: ./pshared_sem or /x/pshared_sem */
}

int
main(int argc, char **argv)
{
  char self[PATH_MAX], index[16];
  pfutex_region_t *rgn;
  struct sm_shared *sh;
  pid_t pids[SM_WORKERS];
  int status[SM_WORKERS], reaped[SM_WORKERS];
  int i, good = 0, err, gate_ok, unlinked;
  unsigned int distinct = 0;

  if (argc == 4 && strcmp(argv[1], "--worker") == 0)
    return sm_worker(argv[2], argv[3]);
  if (argc != 1) {
    fprintf(stderr, "usage: %s   (or %s --worker NAME INDEX, run by itself)\n", argv[0], argv[0]);
    return 2;
  }

  plan(8);
  pft_watchdog(60);
  diag("backend %s", pfutex_backend() ? pfutex_backend() : "none");
  sm_self(argv[0], self, sizeof self);
  snprintf(sm_name, sizeof sm_name, "/pft-pshared_sem-%d", (int)getpid());

  rgn = pfutex_region_open(sm_name, sizeof *sh, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (!rgn)
    sysbail("pfutex_region_open %s", sm_name);
  sh = pfutex_region_addr(rgn);
  ps_sem_init(&sh->slots, SM_SLOTS);
  ps_sem_init(&sh->mutex, 1);

  fflush(stdout);
  for (i = 0; i < SM_WORKERS; i++) {
    snprintf(index, sizeof index, "%d", i);
    pids[i] = fork();
    if (pids[i] < 0) {
      pfutex_region_unlink(sm_name);
      sysbail("fork");
    }
    if (pids[i] == 0) {
      execl(self, self, "--worker", sm_name, index, (char *)NULL);
      fprintf(stderr, "exec %s: %s\n", self, strerror(errno));
      _exit(SM_ST_EXEC);
    }
  }

  /* Once every worker has opened the region (they all reached the gate),
   * its name is no longer needed: remove it at once, so that nothing is
   * left in /dev/shm whatever happens next, and the workers go on with
   * the region open, as with shm_unlink(3).  A worker that ends before
   * the gate (it could not open the region, say) would leave the others
   * waiting there for ever: kill them. */
  gate_ok = sm_wait_gate(sh, pids, status, reaped);
  unlinked = pfutex_region_unlink(sm_name) == 0;
  if (!gate_ok)
    for (i = 0; i < SM_WORKERS; i++)
      if (!reaped[i])
        kill(pids[i], SIGKILL);
  for (i = 0; i < SM_WORKERS; i++)
    if (!reaped[i] && waitpid(pids[i], &status[i], 0) != pids[i])
      sysbail("waitpid");
  for (i = 0; i < SM_WORKERS; i++) {
    if (WIFEXITED(status[i]) && WEXITSTATUS(status[i]) == 0)
      good++;
    else if (WIFSIGNALED(status[i]))
      diag("worker %d killed by signal %d", i, WTERMSIG(status[i]));
    else
      diag("worker %d exited %d", i, WEXITSTATUS(status[i]));
  }

  for (i = 0; i < SM_WORKERS; i++) {
    int j, dup = sh->addr[i] == 0;   /* 0: never opened */
    for (j = 0; j < i; j++)
      dup |= sh->addr[j] == sh->addr[i];
    distinct += !dup;
  }
  diag("workers mapped the region at %u distinct addresses (%u workers); parent at %p",
       distinct, (unsigned)SM_WORKERS, (void *)sh);
  ok(good == SM_WORKERS && sh->started == SM_WORKERS,
     "%d exec'd workers opened the region by name and exited 0 (%d exited 0, %u opened)",
     SM_WORKERS, good, (unsigned)sh->started);
  is_int((long)SM_WORKERS * SM_ROUNDS, (long)sh->total,
         "%d workers x %d rounds: exact total", SM_WORKERS, SM_ROUNDS);
  ok(sh->max_inside <= SM_SLOTS && sh->max_inside >= 1,
     "counting semaphore: at most %d inside at once (max seen %u)", SM_SLOTS,
     (unsigned)sh->max_inside);
  ok(!sh->mutex_overlap, "binary semaphore: never two processes in the critical section");
  ok(sh->slots.value == SM_SLOTS && sh->mutex.value == 1 && sh->slots.waiters == 0
     && sh->mutex.waiters == 0 && sh->inside == 0,
     "semaphores back to %d and 1, no waiter left", SM_SLOTS);
  diag("waits that slept and were woken: slots %u, mutex %u", (unsigned)sh->slots.sleeps,
       (unsigned)sh->mutex.sleeps);
  err = (int)(sh->slots.errors + sh->mutex.errors + sh->gate.errors);
  if (err)
    diag("unexpected futex errors: slots %u (last %s), mutex %u (last %s), gate %u (last %s)",
         (unsigned)sh->slots.errors, pft_errname((int)sh->slots.last_errno),
         (unsigned)sh->mutex.errors, pft_errname((int)sh->mutex.last_errno),
         (unsigned)sh->gate.errors, pft_errname((int)sh->gate.last_errno));
  is_int(0, err, "no unexpected futex error");

  ok(unlinked, "unlink %s while the workers have it open", sm_name);
  errno = 0;
  ok(pfutex_region_open(sm_name, 0, O_RDWR, 0) == NULL && errno == ENOENT
     && pfutex_region_close(rgn) == 0,
     "the name is gone (ENOENT), the region still closes");
  return 0;
}
#endif /* !_WIN32 */
