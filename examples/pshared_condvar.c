/* pshared_condvar: examples/pshared_sync.h's process-shared mutex and
 * condition variable, between fork()ed processes.
 *
 * Everything shared lives in one anonymous region (pfutex_region_anon),
 * which fork() children inherit; every futex op is a shared one (no
 * FUTEX_PRIVATE_FLAG).  Three phases, each with 4 new worker processes
 * that meet at a start gate (a futex word they count on) and then run
 * together:
 *   1. mutex: each adds 1 to a plain (non-atomic) counter N times under the
 *      mutex; the total must be exactly 4 * N and no two processes may be
 *      in the critical section at once;
 *   2. bounded buffer: 2 producers and 2 consumers, two condvars (signal,
 *      and broadcast, which requeues waiters onto the mutex word); every
 *      item must be consumed exactly once;
 *   3. barrier: R rounds of a mutex + condvar barrier (the last to arrive
 *      broadcasts: one sleeping waiter woken, the others requeued onto the
 *      mutex word); nobody may leave a round before all 4 arrived, and
 *      the arrivals must add up.
 * Then: every worker exited 0, no futex call failed unexpectedly (and no
 * broadcast fell back on EINVAL: the condvar and the mutex are in one
 * region), and the region is unlocked and closes.  A lost wakeup is a hang:
 * the parent's watchdog, and an alarm() in every worker, catch it.
 *
 * Sizes are fixed and small enough for every backend (a few seconds under
 * emulation on a loaded machine). */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork() (the example shares an anonymous region with forked children)");
  return 0;
}
#else
#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "basic.h"
#include "pft.h"
#include "pshared_sync.h"

#define PC_PROCS 4

#define PC_COUNT_ITERS 50000

#define PC_PRODUCERS 2
#define PC_CONSUMERS 2
#define PC_ITEMS_EACH 20000
#define PC_TOTAL (PC_PRODUCERS * PC_ITEMS_EACH)
#define PC_RING 8

#define PC_ROUNDS 5000

#define PC_CHILD_ALARM 45         /* seconds: a worker that hangs dies */

struct pc_shared {
  struct ps_gate gate[3];         /* one start gate per phase */

  /* phase 1 */
  struct ps_mutex count_mu;
  unsigned long counter;          /* plain: only the mutex protects it */
  uint32_t in_cs, overlap;

  /* phase 2: all under buf_mu */
  struct ps_mutex buf_mu;
  struct ps_cond not_empty, not_full;
  int ring[PC_RING];
  unsigned int head, count;
  int taken;                      /* items removed so far */
  int bad_item;
  unsigned char seen[PC_TOTAL];   /* consumptions per item */

  /* phase 3: under bar_mu */
  struct ps_mutex bar_mu;
  struct ps_cond bar_cv;
  uint32_t arrived, generation;
  uint32_t early;                 /* left a round before everyone arrived */
  uint32_t arrivals[PC_ROUNDS];   /* per round (atomic) */
};

static struct pc_shared *sh;
static struct ps_gate *pc_gate;   /* in the region: one per phase */
static unsigned int pc_alarm_secs = PC_CHILD_ALARM;

static void
pc_phase_count(int id)
{
  int i;
  (void)id;
  for (i = 0; i < PC_COUNT_ITERS; i++) {
    ps_mutex_lock(&sh->count_mu);
    if (__atomic_add_fetch(&sh->in_cs, 1, __ATOMIC_RELAXED) != 1)
      sh->overlap = 1;
    sh->counter++;
    __atomic_sub_fetch(&sh->in_cs, 1, __ATOMIC_RELAXED);
    ps_mutex_unlock(&sh->count_mu);
  }
}

static void
pc_producer(int id)
{
  int i;
  for (i = 0; i < PC_ITEMS_EACH; i++) {
    ps_mutex_lock(&sh->buf_mu);
    while (sh->count == PC_RING)
      ps_cond_wait(&sh->not_full, &sh->buf_mu);
    sh->ring[(sh->head + sh->count) % PC_RING] = id * PC_ITEMS_EACH + i;
    sh->count++;
    if (i % 16 == 0)
      ps_cond_broadcast(&sh->not_empty, &sh->buf_mu);
    else
      ps_cond_signal(&sh->not_empty);
    ps_mutex_unlock(&sh->buf_mu);
  }
}

static void
pc_consumer(void)
{
  int n = 0;
  for (;;) {
    int item;
    ps_mutex_lock(&sh->buf_mu);
    while (sh->count == 0 && sh->taken < PC_TOTAL)
      ps_cond_wait(&sh->not_empty, &sh->buf_mu);
    if (sh->count == 0) {                   /* everything taken */
      ps_mutex_unlock(&sh->buf_mu);
      break;
    }
    item = sh->ring[sh->head];
    sh->head = (sh->head + 1) % PC_RING;
    sh->count--;
    sh->taken++;
    if (item < 0 || item >= PC_TOTAL)
      sh->bad_item = 1;
    else if (sh->seen[item] < 255)
      sh->seen[item]++;
    if (sh->taken == PC_TOTAL)              /* release the other consumer */
      ps_cond_broadcast(&sh->not_empty, &sh->buf_mu);
    if (++n % 7 == 0)
      ps_cond_broadcast(&sh->not_full, &sh->buf_mu);
    else
      ps_cond_signal(&sh->not_full);
    ps_mutex_unlock(&sh->buf_mu);
  }
}

static void
pc_phase_buffer(int id)
{
  if (id < PC_PRODUCERS)
    pc_producer(id);
  else
    pc_consumer();
}

static void
pc_phase_barrier(int id)
{
  uint32_t r;
  (void)id;
  for (r = 0; r < PC_ROUNDS; r++) {
    __atomic_add_fetch(&sh->arrivals[r], 1, __ATOMIC_RELAXED);
    ps_mutex_lock(&sh->bar_mu);
    if (++sh->arrived == PC_PROCS) {
      sh->arrived = 0;
      sh->generation++;
      ps_cond_broadcast(&sh->bar_cv, &sh->bar_mu);
    } else {
      uint32_t gen = sh->generation;
      while (sh->generation == gen)
        ps_cond_wait(&sh->bar_cv, &sh->bar_mu);
    }
    /* Released from round r: round r+1 cannot be over before we arrive. */
    if (sh->generation != r + 1 || __atomic_load_n(&sh->arrivals[r], __ATOMIC_RELAXED) != PC_PROCS)
      sh->early++;
    ps_mutex_unlock(&sh->bar_mu);
  }
}

/* Run phase fn in PC_PROCS new processes and reap them: the number that
 * exited 0. */
static int
pc_run(const char *what, void (*fn)(int))
{
  pid_t pids[PC_PROCS];
  int i, good = 0;
  fflush(stdout);
  for (i = 0; i < PC_PROCS; i++) {
    pids[i] = fork();
    if (pids[i] < 0)
      sysbail("fork");
    if (pids[i] == 0) {
      alarm(pc_alarm_secs);
      ps_gate_pass(pc_gate, PC_PROCS);      /* all 4 run at once */
      fn(i);
      _exit(0);
    }
  }
  for (i = 0; i < PC_PROCS; i++) {
    int st;
    if (waitpid(pids[i], &st, 0) != pids[i])
      sysbail("waitpid");
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
      good++;
    else if (WIFSIGNALED(st))
      diag("%s: worker %d killed by signal %d", what, i, WTERMSIG(st));
    else
      diag("%s: worker %d exited %d", what, i, WEXITSTATUS(st));
  }
  return good;
}

static uint32_t
pc_errors(const char **which, uint32_t *last)
{
  struct { const char *name; uint32_t *errors, *last; } objs[] = {
    { "count_mu", &sh->count_mu.errors, &sh->count_mu.last_errno },
    { "buf_mu", &sh->buf_mu.errors, &sh->buf_mu.last_errno },
    { "not_empty", &sh->not_empty.errors, &sh->not_empty.last_errno },
    { "not_full", &sh->not_full.errors, &sh->not_full.last_errno },
    { "bar_mu", &sh->bar_mu.errors, &sh->bar_mu.last_errno },
    { "bar_cv", &sh->bar_cv.errors, &sh->bar_cv.last_errno },
    { "gate 1", &sh->gate[0].errors, &sh->gate[0].last_errno },
    { "gate 2", &sh->gate[1].errors, &sh->gate[1].last_errno },
    { "gate 3", &sh->gate[2].errors, &sh->gate[2].last_errno },
  };
  uint32_t n = 0;
  size_t i;
  for (i = 0; i < sizeof objs / sizeof objs[0]; i++)
    if (*objs[i].errors) {
      n += *objs[i].errors;
      *which = objs[i].name;
      *last = *objs[i].last;
    }
  return n;
}

int
main(void)
{
  pfutex_region_t *rgn;
  const struct ps_cond *cvs[3];
  const char *which = "";
  uint32_t err, last = 0, requeues = 0, moved = 0, eagain = 0, einval = 0;
  int good = 0, i, once = 0, never = 0, twice = 0;
  long arrivals = 0;

  plan(9);
  pft_watchdog(60);
  if (getenv("PFUTEX_TEST_TIMEOUT_SCALE") && atoi(getenv("PFUTEX_TEST_TIMEOUT_SCALE")) > 0)
    pc_alarm_secs *= (unsigned int)atoi(getenv("PFUTEX_TEST_TIMEOUT_SCALE"));  /* as the watchdog */
  diag("backend %s", pfutex_backend() ? pfutex_backend() : "none");

  rgn = pfutex_region_anon(sizeof *sh);
  if (!rgn)
    sysbail("pfutex_region_anon");
  sh = pfutex_region_addr(rgn);
  /* A new region is zeroed: the mutexes are unlocked, the condvars new. */

  pc_gate = &sh->gate[0];
  good += pc_run("mutex", pc_phase_count);
  is_int((long)PC_PROCS * PC_COUNT_ITERS, (long)sh->counter,
         "mutex: %d processes x %d increments, exact total", PC_PROCS, PC_COUNT_ITERS);
  ok(!sh->overlap, "mutex: never two processes in the critical section");

  pc_gate = &sh->gate[1];
  good += pc_run("buffer", pc_phase_buffer);
  for (i = 0; i < PC_TOTAL; i++) {
    if (sh->seen[i] == 1)
      once++;
    else if (sh->seen[i] == 0)
      never++;
    else
      twice++;
  }
  if (never || twice)
    diag("items never consumed %d, consumed more than once %d", never, twice);
  is_int(PC_TOTAL, sh->taken, "buffer: %d producers, %d consumers: %d items taken",
         PC_PRODUCERS, PC_CONSUMERS, PC_TOTAL);
  ok(once == PC_TOTAL && !sh->bad_item && sh->count == 0,
     "buffer: every item consumed exactly once, buffer empty at the end");

  pc_gate = &sh->gate[2];
  good += pc_run("barrier", pc_phase_barrier);
  for (i = 0; i < PC_ROUNDS; i++)
    arrivals += sh->arrivals[i];
  is_int((long)PC_PROCS * PC_ROUNDS, arrivals, "barrier: %d processes x %d rounds, exact arrivals",
         PC_PROCS, PC_ROUNDS);
  ok(sh->early == 0 && sh->generation == PC_ROUNDS && sh->arrived == 0,
     "barrier: nobody left a round before all arrived (%u early, %u generations)",
     (unsigned)sh->early, (unsigned)sh->generation);

  is_int(3 * PC_PROCS, good, "every worker process exited 0");

  cvs[0] = &sh->not_empty;
  cvs[1] = &sh->not_full;
  cvs[2] = &sh->bar_cv;
  for (i = 0; i < 3; i++) {
    requeues += cvs[i]->requeues;
    moved += cvs[i]->moved;
    eagain += cvs[i]->fallback_eagain;
    einval += cvs[i]->fallback_einval;
  }
  diag("broadcasts: %u requeued (%u waiters woken or moved), %u fell back on EAGAIN, "
       "%u on EINVAL", (unsigned)requeues, (unsigned)moved, (unsigned)eagain, (unsigned)einval);
  err = pc_errors(&which, &last);
  if (err)
    diag("%u unexpected futex errors, the last on %s: %s", (unsigned)err, which,
         pft_errname((int)last));
  ok(err == 0 && einval == 0,
     "no unexpected futex error, no CMP_REQUEUE refused with EINVAL within one region");

  ok(sh->count_mu.word == 0 && sh->buf_mu.word == 0 && sh->bar_mu.word == 0
     && pfutex_region_close(rgn) == 0,
     "mutexes unlocked at the end, region closes");
  return 0;
}
#endif /* !_WIN32 */
