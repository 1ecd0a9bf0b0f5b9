/* ctl.c - the controlled scheduler (see ctl.h): the engine's hooks
 * (src/schedpt.h) for the threads it runs. */
#include "emu.h"
#include "ctl.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { T_RUN, T_PARK, T_SPIN, T_DONE };
enum { R_RUN, R_TIMEOUT, R_SIGNAL };

struct sched_thread {
  pthread_t pt;
  sem_t go;
  int state;
  const volatile unsigned int *word;   /* T_PARK: the token word */
  int timed;                            /* T_PARK: a timed park */
  int reason;                           /* why it was resumed (R_*) */
  unsigned long spin_mark;              /* T_SPIN: progress when it spun */
  const volatile unsigned int *last;    /* the word of its last point (the lock it spins on) */
  unsigned int spin_val;                /* T_SPIN: what the lock word held */
  int sigable, signaled;
  const char *file;                     /* where it is (for the trace) */
  int line;
};
static int tracing = -1;                /* $SCHED_TRACE: print every decision */

static struct sched_thread th[SCHED_MAXT];
static int nth;
static unsigned long progress;          /* points passed that were no spin */
static sem_t main_done, release;
static void (*body_fn)(int);
__thread int sched_me = -1;
struct sched_trace *sched_tr;
void (*sched_handler)(int t);

void
sched_fail(const char *fmt, ...)
{
  va_list ap;
  size_t len = strlen(sched_tr->verdict);
  if (len + 4 >= sizeof sched_tr->verdict)
    return;
  if (len)
    strcat(sched_tr->verdict, "; ");
  len = strlen(sched_tr->verdict);
  va_start(ap, fmt);
  vsnprintf(sched_tr->verdict + len, sizeof sched_tr->verdict - len, fmt, ap);
  va_end(ap);
  sched_tr->failed = 1;
}

static void
sem_wait_intr(sem_t *s)
{
  while (sem_wait(s) != 0 && errno == EINTR)
    ;
}

static int
runnable(int t)
{
  switch (th[t].state) {
  case T_RUN:
    return 1;
  case T_PARK:
    return *th[t].word != 0;
  case T_SPIN:                         /* until the lock word changes */
    return th[t].last ? *th[t].last != th[t].spin_val : progress > th[t].spin_mark;
  default:
    return 0;
  }
}

int
sched_parked_on(int t, const volatile unsigned int **w)
{
  if (th[t].state != T_PARK || *th[t].word != 0)
    return 0;
  *w = th[t].word;
  return 1;
}

int
sched_signaled(int t)
{
  return th[t].signaled;
}

static const char *
state_name(int t)
{
  static const char *names[] = { "running", "parked", "spinning", "done" };
  return names[th[t].state];
}

/* The schedule is over (all done, or failed): main reads the verdict.  A
 * failed schedule's caller never runs again (main _exits the process). */
static void
finish(int me)
{
  sem_post(&main_done);
  if (me >= 0 && th[me].state != T_DONE)
    for (;;)
      sem_wait_intr(&th[me].go);
}

/* The running thread (sched_me, or the starter: -1) is at a decision; its
 * own state says whether it could go on.  Returns 1 when the choice is to
 * signal the caller itself. */
static int
decide(void)
{
  struct sched_action a[3 * SCHED_MAXT + 1];
  int n = 0, t, me = sched_me, cur_en = me >= 0 && th[me].state == T_RUN, c, step;

  if (cur_en)
    a[n++] = (struct sched_action){ A_RUN, me };
  for (t = 0; t < nth; t++)
    if (t != me && runnable(t))
      a[n++] = (struct sched_action){ A_RUN, t };
  for (t = 0; t < nth; t++)
    if (th[t].state == T_PARK && th[t].timed && *th[t].word == 0)
      a[n++] = (struct sched_action){ A_TIMEOUT, t };
  for (t = 0; t < nth; t++)
    if (th[t].sigable && !th[t].signaled
        && ((t == me && cur_en) || (th[t].state == T_PARK && *th[t].word == 0)))
      a[n++] = (struct sched_action){ A_SIGNAL, t };
  if (n == 0) {
    char buf[256] = "";
    for (t = 0; t < nth; t++)
      if (th[t].state != T_DONE)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), " T%d %s%s", t, state_name(t),
                 th[t].state == T_PARK ? (th[t].timed ? " (timed, fired)" : " (untimed)") : "");
    if (buf[0])
      sched_fail("deadlock: no thread can run and no timeout is left to fire:%s", buf);
    finish(me);
    return 0;
  }
  step = sched_tr->steps++;
  if (step >= SCHED_MAXSTEPS) {
    sched_fail("livelock: %d decisions", step);
    finish(me);
    return 0;
  }
  c = sched_choose(a, n, me, cur_en, step);
  if (tracing < 0)
    tracing = getenv("SCHED_TRACE") != NULL;
  if (tracing && c >= 0 && c < n)
    fprintf(stderr, "[%d%s] T%d %s %s:%d -> %s T%d\n", step, n > 1 ? "*" : "", me,
            me >= 0 ? state_name(me) : "-", me >= 0 && th[me].file ? th[me].file : "", me >= 0 ? th[me].line : 0,
            a[c].kind == A_RUN ? "run" : a[c].kind == A_TIMEOUT ? "timeout" : "signal", a[c].t);
  if (c < 0 || c >= n) {
    sched_fail("replay diverged at decision %d (choice %d of %d)", sched_tr->n, c, n);
    finish(me);
    return 0;
  }
  if (n > 1 && sched_tr->n < SCHED_MAXD) {
    sched_tr->d[sched_tr->n].nopts = (uint16_t)n;
    sched_tr->d[sched_tr->n].chosen = (uint16_t)c;
    sched_tr->d[sched_tr->n].cur_en = (uint8_t)cur_en;
    sched_tr->n++;
  }
  t = a[c].t;
  if (a[c].kind == A_SIGNAL) {
    th[t].signaled = 1;
    if (t == me)
      return 1;
    th[t].reason = R_SIGNAL;
  } else {
    th[t].reason = a[c].kind == A_TIMEOUT ? R_TIMEOUT : R_RUN;
  }
  if (t == me)
    return 0;
  sem_post(&th[t].go);
  if (me >= 0 && th[me].state != T_DONE)
    sem_wait_intr(&th[me].go);
  return 0;
}

/* ---- The engine's hooks ---------------------------------------------------- */
static void
raise_self(void)
{
  pthread_kill(pthread_self(), SIGUSR1);
}

static void
hook_point(const char *file, int line, const volatile void *addr)
{
  int me = sched_me;
  if (me < 0)
    return;
  th[me].file = file;
  th[me].line = line;
  th[me].last = addr;
  progress++;
  th[me].state = T_RUN;
  if (decide())
    raise_self();
}

static void
hook_spin(const char *file, int line)
{
  int me = sched_me;
  if (me < 0)
    return;
  th[me].file = file;
  th[me].line = line;
  th[me].state = T_SPIN;
  th[me].spin_mark = progress;
  if (th[me].last)
    th[me].spin_val = *th[me].last;
  decide();
  th[me].state = T_RUN;
}

static int
hook_park(const volatile unsigned int *word, int timed)
{
  int me = sched_me;
  if (me < 0)
    return -ENOSYS;
  for (;;) {
    th[me].state = T_PARK;
    th[me].word = word;
    th[me].timed = timed;
    decide();
    th[me].state = T_RUN;
    switch (th[me].reason) {
    case R_TIMEOUT:
      return -ETIMEDOUT;
    case R_SIGNAL: {
      sigset_t now;
      pthread_sigmask(SIG_BLOCK, NULL, &now);
      raise_self();
      if (!sigismember(&now, SIGUSR1))
        return -EINTR;                 /* the handler ran */
      break;                           /* pending: delivered when unblocked */
    }
    default:
      return 0;                        /* the token came */
    }
  }
}

static const struct pf_sched_hooks hooks = { hook_point, hook_spin, hook_park };

static void
on_usr1(int sig)
{
  int e = errno;
  (void)sig;
  if (sched_me >= 0 && sched_handler)
    sched_handler(sched_me);
  errno = e;
}

static void *
thread_main(void *arg)
{
  int id = (int)(intptr_t)arg;
  sched_me = id;
  sem_wait_intr(&th[id].go);
  th[id].state = T_RUN;
  body_fn(id);
  th[id].state = T_DONE;
  decide();
  sched_me = -1;
  sem_wait_intr(&release);
  return NULL;
}

int
sched_run(int n, void (*body)(int), const int *sigable)
{
  struct sigaction sa;
  int t;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;           /* no SA_RESTART: an interrupted wait fails with EINTR */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, NULL);
  nth = n;
  body_fn = body;
  sem_init(&main_done, 0, 0);
  sem_init(&release, 0, 0);
  for (t = 0; t < n; t++) {
    memset(&th[t], 0, sizeof th[t]);
    th[t].sigable = sigable ? sigable[t] : 0;
    sem_init(&th[t].go, 0, 0);
  }
  pf_sched_hooks = &hooks;
  for (t = 0; t < n; t++)
    if (pthread_create(&th[t].pt, NULL, thread_main, (void *)(intptr_t)t) != 0) {
      sched_fail("pthread_create failed");
      return 0;
    }
  decide();                          /* who starts */
  sem_wait_intr(&main_done);
  return !sched_tr->failed;
}

void
sched_join(void)
{
  int t;
  for (t = 0; t < nth; t++)
    sem_post(&release);
  for (t = 0; t < nth; t++)
    pthread_join(th[t].pt, NULL);
}
