/* ctl.h - the controlled scheduler of the schedule explorer (tests/sched/).
 *
 * One process runs one schedule: 2-4 threads, exactly one running at a
 * time (hand-offs through per-thread semaphores).  At each scheduling point
 * of the engine (src/schedpt.h) the running thread asks the scheduler what
 * happens next; the choices are
 *   RUN t      t runs (the running thread, or another: a preemption when
 *              the running one could have gone on);
 *   TIMEOUT t  t is parked in a timed park: its timeout fires (time is
 *              virtual: a timed wait may expire at any point);
 *   SIGNAL t   t (flagged in the scenario; once per schedule) gets SIGUSR1:
 *              raised by t itself, from inside its hook (the handler runs at
 *              once if the signal is unblocked in t, else when the engine
 *              unblocks it), or, if t is parked, t wakes and raises it.
 *   KILL t     t's process (flagged in the scenario; once per schedule) dies
 *              at t's current point: t raises SIGKILL in its own hook.
 * The strategy (sched_choose, in explore.c) picks one of the enabled
 * choices, listed in this order: RUN of the running thread, RUN of the
 * others, TIMEOUT, SIGNAL, KILL; choice 0 is never a preemption.
 *
 * The scheduler's state lives in shared memory (MAP_SHARED, made before
 * any fork), so the threads it runs may belong to several processes
 * (sched_run_procs): a schedule then runs in a root process that forks
 * one process per participant and does nothing but reap them, so a
 * killed participant is reaped (kill(pid, 0) then says it is gone, as
 * the region code detects death) before the root hands the run on. */
#ifndef PF_TESTS_SCHED_H
#define PF_TESTS_SCHED_H

#include <semaphore.h>
#include <stdint.h>
#include <time.h>

#define SCHED_MAXT 4
#define SCHED_MAXP 4             /* processes of a multi-process schedule */
#define SCHED_MAXD 4096          /* recorded decisions (with two choices or more) */
#define SCHED_MAXSTEPS 20000     /* decisions of any kind: more is a livelock */

enum { A_RUN, A_TIMEOUT, A_SIGNAL, A_KILL };
struct sched_action {
  int kind, t;
};

/* What a schedule reports to the parent (shared memory). */
struct sched_trace {
  int n;                         /* recorded decisions */
  int steps;                     /* decisions of any kind */
  struct {
    uint16_t nopts, chosen;
    uint8_t cur_en;              /* the running thread could go on: choice != 0 preempts */
    uint8_t killopt;             /* the last choice was a KILL (no preemption) */
  } d[SCHED_MAXD];
  int pct_prio[SCHED_MAXT];      /* the strategy's state, shared by the processes */
  int kills_offered;             /* decisions that offered a KILL so far */
  int failed;
  char verdict[1024];
};

/* The strategy: choose among the n (>= 1) actions of decision `step`
 * (every decision counted); cur is the running thread (-1 at the start). */
int sched_choose(const struct sched_action *a, int n, int cur, int cur_en, int step);

/* The scheduler's side, for the scenario code. */
extern __thread int sched_me;                  /* this thread's index, -1: not controlled */
extern struct sched_trace *sched_tr;
void sched_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Is thread t parked (in the port's park) on the token word *w == 0? */
int sched_parked_on(int t, const volatile unsigned int **w);
int sched_signaled(int t);
/* How many timeouts (slices included) the scheduler fired for thread t
 * (each while it slept: a timeout is offered only on a token word of 0). */
int sched_fired(int t);
/* Run nth threads, thread i calling body(i), under the scheduler; returns
 * when all are done (1) or the schedule failed (0: deadlock, livelock). */
int sched_run(int nth, void (*body)(int), const int *sigable);
/* After sched_run returned 1: let the threads exit and join them. */
void sched_join(void);
/* Run nth threads in nproc processes (thread t in process proc[t], forked
 * from the caller, which only reaps them), thread t calling body(t) under
 * the scheduler; sigable[t]: t may be signalled, as sched_run's;
 * killable[t]: the scheduler may kill t's process at one of t's points.
 * In each process, pinit(p) runs first (uncontrolled) and pend(p) after
 * its threads are done; on_death(p) runs in the caller
 * after it reaped the killed process, before anyone else runs.  Returns 1
 * when every thread is done (or dead), 0 when the schedule failed. */
int sched_run_procs(int nth, const int *proc, int nproc, void (*body)(int), const int *sigable,
                    const int *killable, void (*pinit)(int), void (*pend)(int),
                    void (*on_death)(int));
/* Multi-process schedules: p's region lock id (from pinit), so that a
 * lock waiter spinning on a dead process's lock is let run; is p dead? */
void sched_set_lockid(int p, uint32_t id);
/* The same for a second region (a two-region scenario). */
void sched_set_lockid2(int p, uint32_t id);
int sched_proc_dead(int p);
int sched_thread_dead(int t);
/* The virtual time controlled threads see (pf_clock_now). */
void sched_vnow(struct timespec *ts);
/* The SIGUSR1 handler's body for thread t, set by the scenario code. */
extern void (*sched_handler)(int t);

#endif
