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
 * The strategy (sched_choose, in explore.c) picks one of the enabled
 * choices, listed in this order: RUN of the running thread, RUN of the
 * others, TIMEOUT, SIGNAL; choice 0 is never a preemption. */
#ifndef PF_TESTS_SCHED_H
#define PF_TESTS_SCHED_H

#include <semaphore.h>
#include <stdint.h>

#define SCHED_MAXT 4
#define SCHED_MAXD 4096          /* recorded decisions (with two choices or more) */
#define SCHED_MAXSTEPS 20000     /* decisions of any kind: more is a livelock */

enum { A_RUN, A_TIMEOUT, A_SIGNAL };
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
  } d[SCHED_MAXD];
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
/* Run nth threads, thread i calling body(i), under the scheduler; returns
 * when all are done (1) or the schedule failed (0: deadlock, livelock). */
int sched_run(int nth, void (*body)(int), const int *sigable);
/* After sched_run returned 1: let the threads exit and join them. */
void sched_join(void);
/* The SIGUSR1 handler's body for thread t, set by the scenario code. */
extern void (*sched_handler)(int t);

#endif
