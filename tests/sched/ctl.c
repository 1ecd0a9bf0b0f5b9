/* ctl.c - the controlled scheduler (see ctl.h): the engine's hooks
 * (src/schedpt.h) for the threads it runs, in one process or several. */
#include "emu.h"
#include "ctl.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

enum { T_RUN, T_PARK, T_SPIN, T_DONE, T_DEAD };
enum { R_RUN, R_TIMEOUT, R_SIGNAL };

/* All of it in shared memory (MAP_SHARED, before any fork): pointers in it
 * (token words, lock words, file names) are the same in every process of
 * a schedule, which all inherit the mappings they point into. */
struct sched_thread {
  sem_t go;
  int state;
  const volatile unsigned int *word;   /* T_PARK: the token word */
  int timed;                            /* T_PARK: 0, 1 a deadline, 2 a region's slice */
  struct pf_sched_alt alt;              /* T_PARK, a slice: what else may end it (a
                                           waitv's further tables: src/schedpt.h) */
  int reason;                           /* why it was resumed (R_*) */
  unsigned long spin_mark;              /* T_SPIN: progress when it spun */
  const volatile unsigned int *last;    /* the word of its last point (the lock it spins on) */
  unsigned int spin_val;                /* T_SPIN: what the lock word held */
  int sigable, signaled, killable;
  int fired;                            /* timeouts fired (slices included) */
  int proc;                             /* its process (sched_run_procs; else 0) */
  const char *file;                     /* where it is (for the trace) */
  int line;
};
struct sched_proc {
  pid_t pid;
  int dying, dead;
  uint32_t lockid;                      /* its region lock id (0: none) */
  uint32_t lockid2;                     /* its lock id in a second region (0: none) */
  sem_t done;                           /* the schedule is over */
  sem_t release;                        /* its threads may exit */
  sem_t ready;                          /* its threads exist */
};
struct sched_state {
  struct sched_thread th[SCHED_MAXT];
  struct sched_proc pr[SCHED_MAXP];
  int nth, nproc, multi;
  unsigned long progress;               /* points passed that were no spin */
  struct timespec vnow[2];              /* virtual time: realtime, monotonic (frozen,
                                           but for a stall: decide) */
  int time_passed;                      /* stalls that let time pass (at most 2) */
  sem_t main_done;
};
static struct sched_state *S;
#define th (S->th)
#define nth (S->nth)
#define progress (S->progress)

static int tracing = -1;                /* $SCHED_TRACE: print every decision */
static pthread_t pts[SCHED_MAXT];       /* this process's threads */
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

static void
state_new(void)
{
  if (!S) {
    S = mmap(NULL, sizeof *S, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (S == MAP_FAILED) {
      perror("mmap");
      _exit(3);
    }
  }
  memset(S, 0, sizeof *S);
  clock_gettime(CLOCK_REALTIME, &S->vnow[0]);
  clock_gettime(CLOCK_MONOTONIC, &S->vnow[1]);
}

void
sched_vnow(struct timespec *ts)
{
  *ts = S->vnow[1];
}

void
sched_set_lockid(int p, uint32_t id)
{
  S->pr[p].lockid = id;
}

void
sched_set_lockid2(int p, uint32_t id)
{
  S->pr[p].lockid2 = id;
}

int
sched_proc_dead(int p)
{
  return S->pr[p].dead || S->pr[p].dying;
}

int
sched_thread_dead(int t)
{
  return th[t].state == T_DEAD;
}

/* Does lock word value v name a dead process's lock id? */
static int
lockid_dead(unsigned int v)
{
  int p;
  if (!S->multi || v == 0)
    return 0;
  for (p = 0; p < S->nproc; p++)
    if ((S->pr[p].lockid == v || S->pr[p].lockid2 == v) && (S->pr[p].dead || S->pr[p].dying))
      return 1;
  return 0;
}

/* A region slot's node from its token word: is it still QUEUED?  (A
 * slice fires only once its waiter was counted: (R) in wait.c.) */
static int
park_queued(const volatile unsigned int *w)
{
  const struct pf_node *n =
    (const struct pf_node *)(const void *)((const char *)w - offsetof(struct pf_node, park.word));
  return *(const volatile uint32_t *)&n->state == PF_W_QUEUED;
}

/* Would a waitv's slice end find something (src/waitv.c
 * pf_vx_any_waking: a further table's parker rung, a member WAKING, or
 * MOVED by a requeuer that died before it rang the parker)? */
static int
alt_ready(const struct pf_sched_alt *a)
{
  int i;
  for (i = 0; i < a->n && i < PF_SCHED_ALT_MAX; i++) {
    unsigned int s = *a->state[i];
    if (a->waking[i] ? s == PF_W_WAKING || s == PF_W_MOVED : s != PF_W_QUEUED)
      return 1;
  }
  return 0;
}

static int
timeout_enabled(int t)
{
  if (th[t].state != T_PARK || !th[t].timed || *th[t].word != 0)
    return 0;
  return th[t].timed == 1 || !park_queued(th[t].word) || alt_ready(&th[t].alt);
}

static int
runnable(int t)
{
  switch (th[t].state) {
  case T_RUN:
    return 1;
  case T_PARK:
    return *th[t].word != 0;
  case T_SPIN:                         /* until the lock word changes, or its holder died */
    return th[t].last ? *th[t].last != th[t].spin_val || lockid_dead(th[t].spin_val)
                      : progress > th[t].spin_mark;
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
sched_fired(int t)
{
  return th[t].fired;
}

int
sched_signaled(int t)
{
  return th[t].signaled;
}

static const char *
state_name(int t)
{
  static const char *names[] = { "running", "parked", "spinning", "done", "dead" };
  return names[th[t].state];
}

/* The schedule is over (all done, or failed): main reads the verdict.  A
 * failed schedule's caller never runs again (main _exits the process). */
static void
finish(int me)
{
  int p;
  if (S->multi) {
    for (p = 0; p < S->nproc; p++)
      if (!S->pr[p].dead && !S->pr[p].dying)
        sem_post(&S->pr[p].done);
  } else {
    sem_post(&S->main_done);
  }
  if (me >= 0 && th[me].state != T_DONE)
    for (;;)
      sem_wait_intr(&th[me].go);
}

/* The running thread (sched_me, or the starter, or the reaper: -1) is at a
 * decision; its own state says whether it could go on.  Returns 1 when the
 * choice is to signal the caller itself. */
static int
decide(void)
{
  struct sched_action a[4 * SCHED_MAXT + 1];
  int n = 0, t, me = sched_me, cur_en = me >= 0 && th[me].state == T_RUN, c, step, kill_at = -1;
  int time_pass = 0;

  if (cur_en)
    a[n++] = (struct sched_action){ A_RUN, me };
  for (t = 0; t < nth; t++)
    if (t != me && runnable(t))
      a[n++] = (struct sched_action){ A_RUN, t };
  for (t = 0; t < nth; t++)
    if (timeout_enabled(t))
      a[n++] = (struct sched_action){ A_TIMEOUT, t };
  for (t = 0; t < nth; t++)
    if (th[t].sigable && !th[t].signaled
        && ((t == me && cur_en) || (th[t].state == T_PARK && *th[t].word == 0)))
      a[n++] = (struct sched_action){ A_SIGNAL, t };
  if (cur_en && th[me].killable && S->multi) {
    int p, anydead = 0;
    for (p = 0; p < S->nproc; p++)
      anydead |= S->pr[p].dead | S->pr[p].dying;
    if (!anydead) {
      kill_at = n;
      a[n++] = (struct sched_action){ A_KILL, me };
    }
  }
  /* A stall, every thread asleep or done: with a thread asleep in a slice
   * (a timed futex_waitv moved into a further table polls in slices
   * until its deadline), time passes, 1 s, more than any slice and any
   * deadline a controlled wait takes: that slice ends.  Twice at most;
   * then, or with no slice, the stall is a deadlock. */
  if (n == 0 && S->time_passed < 2)
    for (t = 0; t < nth; t++)
      if (th[t].state == T_PARK && th[t].timed == 2 && *th[t].word == 0) {
        a[n++] = (struct sched_action){ A_TIMEOUT, t };
        time_pass = 1;
      }
  if (n == 0) {
    char buf[256] = "";
    for (t = 0; t < nth; t++)
      if (th[t].state != T_DONE && th[t].state != T_DEAD)
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf), " T%d %s%s", t, state_name(t),
                 th[t].state == T_PARK ? (th[t].timed == 1 ? " (timed, fired)"
                                          : th[t].timed ? " (sliced, still queued)" : " (untimed)") : "");
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
  if (kill_at >= 0)
    sched_tr->kills_offered++;
  c = sched_choose(a, n, me, cur_en, step);
  if (tracing < 0)
    tracing = getenv("SCHED_TRACE") != NULL;
  if (tracing && c >= 0 && c < n)
    fprintf(stderr, "[%d%s] T%d %s %s:%d -> %s T%d\n", step, n > 1 ? "*" : "", me,
            me >= 0 ? state_name(me) : "-", me >= 0 && th[me].file ? th[me].file : "", me >= 0 ? th[me].line : 0,
            a[c].kind == A_RUN ? "run" : a[c].kind == A_TIMEOUT ? (time_pass ? "1 s passes, timeout" : "timeout")
            : a[c].kind == A_SIGNAL ? "signal" : "KILL the process of", a[c].t);
  if (c < 0 || c >= n) {
    sched_fail("replay diverged at decision %d (choice %d of %d)", sched_tr->n, c, n);
    finish(me);
    return 0;
  }
  if (n > 1 && sched_tr->n < SCHED_MAXD) {
    sched_tr->d[sched_tr->n].nopts = (uint16_t)n;
    sched_tr->d[sched_tr->n].chosen = (uint16_t)c;
    sched_tr->d[sched_tr->n].cur_en = (uint8_t)cur_en;
    sched_tr->d[sched_tr->n].killopt = (uint8_t)(kill_at >= 0);
    sched_tr->n++;
  }
  t = a[c].t;
  if (a[c].kind == A_KILL) {
    /* Die here: the reaper hands the run on once it reaped us. */
    int p = th[me].proc, u;
    if (tracing)
      fprintf(stderr, "    (process %d dies at %s:%d)\n", p, th[me].file ? th[me].file : "", th[me].line);
    for (u = 0; u < nth; u++)
      if (th[u].proc == p)
        th[u].state = T_DEAD;
    S->pr[p].dying = 1;
    kill(getpid(), SIGKILL);
    for (;;)
      pause();
  }
  if (a[c].kind == A_SIGNAL) {
    th[t].signaled = 1;
    if (t == me)
      return 1;
    th[t].reason = R_SIGNAL;
  } else {
    th[t].reason = a[c].kind == A_TIMEOUT ? R_TIMEOUT : R_RUN;
    if (time_pass) {
      S->vnow[0].tv_sec++;
      S->vnow[1].tv_sec++;
      S->time_passed++;
    }
    th[t].fired += a[c].kind == A_TIMEOUT;
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
  /* A lock held by a dead process never changes by itself: the waiter
   * goes on at once, to find the holder dead (src/region/lock.c). */
  if (th[me].last && lockid_dead(*th[me].last))
    return;
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
    th[me].alt = pf_sched_alt;
    if (timed != 2)
      th[me].alt.n = 0;
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

/* Virtual time, frozen at the schedule's start: a region's slices and its
 * lock lease (1 s) never run out by themselves; the scheduler fires the
 * parks it chooses (hook_park), whatever their deadline says. */
static int
hook_now(int clock, struct timespec *ts)
{
  if (sched_me < 0)
    return -ENOSYS;
  *ts = S->vnow[clock == PFUTEX_CLOCK_REALTIME ? 0 : 1];
  return 0;
}

static const struct pf_sched_hooks hooks = { hook_point, hook_spin, hook_park, hook_now };

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
  sem_wait_intr(&S->pr[th[id].proc].release);
  return NULL;
}

static void
threads_init(int n, void (*body)(int), const int *sigable, const int *killable, const int *proc)
{
  struct sigaction sa;
  int t;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;           /* no SA_RESTART: an interrupted wait fails with EINTR */
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, NULL);
  state_new();
  nth = n;
  body_fn = body;
  sem_init(&S->main_done, 1, 0);
  for (t = 0; t < SCHED_MAXP; t++) {
    sem_init(&S->pr[t].done, 1, 0);
    sem_init(&S->pr[t].release, 1, 0);
    sem_init(&S->pr[t].ready, 1, 0);
  }
  for (t = 0; t < n; t++) {
    th[t].sigable = sigable ? sigable[t] : 0;
    th[t].killable = killable ? killable[t] : 0;
    th[t].proc = proc ? proc[t] : 0;
    sem_init(&th[t].go, 1, 0);
  }
}

/* Start this process's threads (those of process p). */
static int
threads_start(int p)
{
  int t;
  pf_sched_hooks = &hooks;
  for (t = 0; t < nth; t++)
    if (th[t].proc == p && pthread_create(&pts[t], NULL, thread_main, (void *)(intptr_t)t) != 0) {
      sched_fail("pthread_create failed");
      return 0;
    }
  return 1;
}

static void
threads_join(int p)
{
  int t;
  for (t = 0; t < nth; t++)
    if (th[t].proc == p)
      sem_post(&S->pr[p].release);
  for (t = 0; t < nth; t++)
    if (th[t].proc == p)
      pthread_join(pts[t], NULL);
}

int
sched_run(int n, void (*body)(int), const int *sigable)
{
  threads_init(n, body, sigable, NULL, NULL);
  if (!threads_start(0))
    return 0;
  decide();                          /* who starts */
  sem_wait_intr(&S->main_done);
  return !sched_tr->failed;
}

void
sched_join(void)
{
  threads_join(0);
}

int
sched_run_procs(int n, const int *proc, int nproc, void (*body)(int), const int *sigable,
                const int *killable, void (*pinit)(int), void (*pend)(int), void (*on_death)(int))
{
  int p, left;
  threads_init(n, body, sigable, killable, proc);
  S->multi = 1;
  S->nproc = nproc;
  fflush(stdout);
  fflush(stderr);
  for (p = 0; p < nproc; p++) {
    pid_t pid = fork();
    if (pid < 0) {
      sched_fail("fork: %s", strerror(errno));
      return 0;
    }
    if (pid == 0) {
      alarm(10);                       /* this process's own watchdog */
      if (pinit)
        pinit(p);
      if (!threads_start(p))
        _exit(1);
      sem_post(&S->pr[p].ready);
      sem_wait_intr(&S->pr[p].done);
      if (sched_tr->failed)
        _exit(1);                      /* its threads may be anywhere: no join */
      threads_join(p);
      pf_sched_hooks = NULL;
      if (pend)
        pend(p);
      _exit(sched_tr->failed ? 1 : 0);
    }
    S->pr[p].pid = pid;
    sem_wait_intr(&S->pr[p].ready);   /* one at a time: region entries in fork order */
  }
  decide();                          /* who starts (this process runs no thread) */
  /* Reap: a planned death hands the run on; anything else ends it. */
  for (left = nproc; left > 0;) {
    int status;
    pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR)
        continue;
      sched_fail("waitpid: %s", strerror(errno));
      break;
    }
    for (p = 0; p < nproc && S->pr[p].pid != pid; p++)
      ;
    if (p == nproc)
      continue;
    left--;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL && S->pr[p].dying && !S->pr[p].dead) {
      S->pr[p].dead = 1;               /* reaped: kill(pid, 0) fails from now on */
      if (on_death)
        on_death(p);
      decide();
      continue;
    }
    if (sched_tr->failed)
      continue;                        /* one of those killed below, or exiting after a failure */
    if (WIFSIGNALED(status)) {
      sched_fail("process %d died of signal %d%s", p, WTERMSIG(status),
                 WTERMSIG(status) == SIGALRM ? " (hang: watchdog)" : "");
    } else if (WEXITSTATUS(status) != 0 && !sched_tr->failed) {
      sched_fail("process %d exited with %d", p, WEXITSTATUS(status));
    } else {
      continue;
    }
    /* one failed: the others may wait for it forever */
    {
      int q;
      for (q = 0; q < nproc; q++)
        if (q != p && !S->pr[q].dead)
          kill(S->pr[q].pid, SIGKILL);
    }
  }
  return !sched_tr->failed;
}
