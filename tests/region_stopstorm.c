/* region_stopstorm: a SIGSTOP/SIGCONT storm on a region (issue 18).  A
 * process stopped anywhere, for as long as anyone likes, makes others wait
 * and corrupts nothing (DESIGN.md, invariant 7): the kernel's futexes
 * survive it, so must a region's.
 *
 * RS_WORKERS worker processes share a named region (one bucket, so every
 * op meets every other on one bucket lock) and loop: take a futex mutex on
 * a region word (Drepper's three-state mutex: untimed waits), add one to a
 * shared counter and to their own count inside it (and check nobody else
 * is inside; every 16th time yield the CPU inside, for contention),
 * release it (wake(1) when contended); one round in 16 broadcast on a
 * sequence word (increment, wake(INT_MAX)), another one in 16 wait on it
 * (untimed, like a condition variable).  A broadcaster process broadcasts
 * every 10 ms.
 *
 * For PFUTEX_STOPSTORM_SECONDS (a decimal, default 3) the supervisor (this
 * process, which makes no futex call: it must never wait behind a worker
 * it stopped) keeps workers stopped, then SIGCONTs them, at most
 * RS_WORKERS - 2 at once (a stop beyond that is ended at once):
 *   - workers it stops itself with SIGSTOP for 0.2-3 s, one every 0.5-1 s,
 *     at random (not the one inside the user's mutex, if any: that one
 *     would only stall everyone, on the kernel too);
 *   - workers that stopped themselves inside a bucket's critical section,
 *     for 1.2-3 s (longer than the second after which the engine on main
 *     took a lock over): with --enable-crash-points each worker arms a
 *     random crash point of the wait and wake paths (wake_locked,
 *     drain_taken, append_half, wake_marked, rebuild_mid, lock_takeover;
 *     and half the time unlink_half, a waker half way through unlinking a
 *     waiter) for a random k-th pass (1..8), and this program's kill() (as
 *     in tests/region_sound) turns the crash point's SIGKILL of itself
 *     into SIGSTOP; the worker arms another once continued.  So stopped
 *     lock holders are the common case rather than a rare one.  Under the
 *     native backend the crash points are never reached: random stops
 *     only.
 * At the end the workers are told to stop and continued (again, as long
 * as any stops itself on the way out) until they exit.
 *
 * Checked, exactly:
 *   - every worker exits 0 within 5 s of the end: no crash, no hang (a lost
 *     wakeup on the mutex leaves a waiter asleep on a free mutex);
 *   - the counter equals the sum of the workers' own increments, and no
 *     worker ever found another inside the mutex;
 *   - on the mutex word, the wakes' counts equal the waits that returned 0;
 *     on the sequence word too (the broadcaster's included): a
 *     double count or a wake counted on nobody is a mismatch;
 *   - no call failed other than EAGAIN/EINTR of a wait. */
#ifdef _WIN32
#include "basic.h"
int
main(void)
{
  skip_all("Windows: no SIGSTOP");
  return 0;
}
#else
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
# include <sys/prctl.h>
#endif

#include "region/internal.h"   /* white-box: the crash points */
#include "pft.h"
#include "region_util.h"

#ifdef __linux__
# include <sys/syscall.h>
#endif

#define ANY PFUTEX_BITSET_MATCH_ANY
#define RS_WORKERS 6
#define RS_SEC (1000LL * 1000 * 1000)

static int is_linux;
#if defined(PF_CRASH_POINTS) && defined(__linux__)
# define RS_HAVE_STOP 1
static volatile int rs_stop_at_crash;
/* A crash point's SIGKILL of this process becomes SIGSTOP in a worker
 * (tests/region_sound.c has the same); every other kill() is passed on. */
static int rs_armed;                     /* index in rs_points of the armed point */
static long *rs_stopped_at;              /* shared: stops per point */
int
kill(pid_t pid, int sig)
{
  if (sig == SIGKILL && rs_stop_at_crash && pid == (pid_t)syscall(SYS_getpid)) {
    int r = (int)syscall(SYS_kill, pid, SIGSTOP);
    if (rs_stopped_at)
      __atomic_add_fetch(&rs_stopped_at[rs_armed], 1, __ATOMIC_SEQ_CST);
    return r;
  }
  return (int)syscall(SYS_kill, pid, sig);
}
static const char *const rs_points[] = {     /* unlink_half half the time: the worst */
  "wake_locked", "drain_taken", "append_half", "wake_marked", "rebuild_mid", "lock_takeover",
  "unlink_half", "unlink_half", "unlink_half", "unlink_half", "unlink_half", "unlink_half"
};
# define RS_NPOINTS ((int)(sizeof rs_points / sizeof rs_points[0]))
#else
# define RS_HAVE_STOP 0
#endif

struct rs_worker {
  long incs, mwake, mwait0, swake, swait0, viol, bad, eintr;
  int last_bad;
};

static struct rs_worker *ws;
static uint32_t *U;
#define W_MUTEX (&U[0])
#define W_SEQ (&U[16])
#define W_COUNT (&U[32])
#define W_OWNER (&U[48])
#define W_STOP (&U[64])
#define W_BSTOP (&U[80])                 /* the broadcaster's stop */

static void
mutex_lock(struct rs_worker *me)
{
  uint32_t c = 0;
  if (__atomic_compare_exchange_n(W_MUTEX, &c, 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
    return;
  if (c != 2)
    c = __atomic_exchange_n(W_MUTEX, 2, __ATOMIC_SEQ_CST);
  while (c != 0) {
    if (pfutex_wait(W_MUTEX, 2, ANY, 0, NULL, PFUTEX_CLOCK_MONOTONIC) == 0) {
      me->mwait0++;
    } else if (errno == EINTR) {
      me->eintr++;
    } else if (errno != EAGAIN) {
      me->bad++;
      me->last_bad = errno;
    }
    c = __atomic_exchange_n(W_MUTEX, 2, __ATOMIC_SEQ_CST);
  }
}

static void
mutex_unlock(struct rs_worker *me)
{
  if (__atomic_fetch_sub(W_MUTEX, 1, __ATOMIC_SEQ_CST) != 1) {
    int r;
    __atomic_store_n(W_MUTEX, 0, __ATOMIC_SEQ_CST);
    r = pfutex_wake(W_MUTEX, ANY, 1, 0);
    if (r > 0) {
      me->mwake += r;
    } else if (r < 0) {
      me->bad++;
      me->last_bad = errno;
    }
  }
}

static void
worker(int k)
{
  struct rs_worker *me = &ws[k];
  uint32_t s = (uint32_t)getpid() * 2654435761u;
  while (!__atomic_load_n(W_STOP, __ATOMIC_SEQ_CST)) {
#if RS_HAVE_STOP
    if (!is_linux && pf_crash_left <= 0) {  /* (again) a stop inside, later */
      s = s * 1103515245u + 12345u;
      rs_armed = (int)((s >> 8) % RS_NPOINTS);
      pf_crash_name = rs_points[rs_armed];
      pf_crash_left = 1 + (long)((s >> 16) % 8);
      rs_stop_at_crash = 1;
    }
#endif
    mutex_lock(me);
    if (__atomic_load_n(W_OWNER, __ATOMIC_SEQ_CST) != 0)
      me->viol++;
    __atomic_store_n(W_OWNER, (uint32_t)k + 1, __ATOMIC_SEQ_CST);
    *(volatile uint32_t *)W_COUNT += 1;
    me->incs++;
    if ((me->incs & 15) == 0)
      sched_yield();                    /* hold it a while: contention, waits, wakes */
    if (__atomic_load_n(W_OWNER, __ATOMIC_SEQ_CST) != (uint32_t)k + 1)
      me->viol++;
    __atomic_store_n(W_OWNER, 0, __ATOMIC_SEQ_CST);
    mutex_unlock(me);
    s = s * 1103515245u + 12345u;
    if (((s >> 16) & 63) < 4) {
      int r;
      __atomic_add_fetch(W_SEQ, 1, __ATOMIC_SEQ_CST);
      r = pfutex_wake(W_SEQ, ANY, INT_MAX, 0);
      if (r > 0) {
        me->swake += r;
      } else if (r < 0) {
        me->bad++;
        me->last_bad = errno;
      }
    } else if (((s >> 16) & 63) < 8) {
      uint32_t v = __atomic_load_n(W_SEQ, __ATOMIC_SEQ_CST);
      if (__atomic_load_n(W_STOP, __ATOMIC_SEQ_CST))
        break;
      if (pfutex_wait(W_SEQ, v, ANY, 0, NULL, PFUTEX_CLOCK_MONOTONIC) == 0) {
        me->swait0++;
      } else if (errno == EINTR) {
        me->eintr++;
      } else if (errno != EAGAIN) {
        me->bad++;
        me->last_bad = errno;
      }
    }
  }
}

/* The broadcaster: a process of its own, since a broadcast may have to
 * wait while a worker is stopped holding the bucket lock (it must: the
 * supervisor, which continues the workers, never makes a futex call). */
static void
broadcaster(struct rs_worker *me)
{
  while (!__atomic_load_n(W_BSTOP, __ATOMIC_SEQ_CST)) {
    int r;
    __atomic_add_fetch(W_SEQ, 1, __ATOMIC_SEQ_CST);
    r = pfutex_wake(W_SEQ, ANY, INT_MAX, 0);
    if (r > 0) {
      me->swake += r;
    } else if (r < 0) {
      me->bad++;
      me->last_bad = errno;
    }
    usleep(__atomic_load_n(W_STOP, __ATOMIC_SEQ_CST) ? 1000 : 10 * 1000);
  }
}

/* Stop worker pid; 1 when it is stopped, 0 when it ended (*st). */
static int
stop_one(pid_t pid, int *st)
{
  pid_t r;
  kill(pid, SIGSTOP);
  while ((r = waitpid(pid, st, WUNTRACED)) < 0 && errno == EINTR)
    ;
  return r == pid && WIFSTOPPED(*st);
}

int
main(void)
{
  char name[64];
  pfutex_region_attr_t a;
  pfutex_region_t *rg;
  pid_t pids[RS_WORKERS], bpid;
  long long stop_until[RS_WORKERS], t0, seconds_ns, next_stop;
  int done[RS_WORKERS], status[RS_WORKERS], early[RS_WORKERS];
  const char *env = getenv("PFUTEX_STOPSTORM_SECONDS");
  double secs = env && atof(env) > 0 ? atof(env) : 3.0;
  long incs = 0, mwake = 0, mwait0 = 0, swake, swait0 = 0, viol = 0, bad = 0, eintr = 0;
  long stops = 0, selfstops = 0, long_stops = 0;
  uint32_t seed = (uint32_t)pft_now_ns();
  int i, left, hung = 0, crashed = 0, last_bad = 0;
  char why[256] = "";

  PFT_SKIP_UNDER_TSAN();
  plan(6);
  pft_watchdog((unsigned int)secs + 40);
  if (!pfutex_backend())
    skip_all("no backend");
  seconds_ns = (long long)(secs * 1e9);
  is_linux = ru_backend_is_linux();
  diag("backend %s, %d workers, %.1f s", pfutex_backend(), RS_WORKERS, secs);

  ru_name(name, sizeof name, "stopstorm");
  memset(&a, 0, sizeof a);
  a.slots = 64;
  a.buckets = 1;
  a.procs = 32;
  if (!(rg = pfutex_region_open_attr(name, 4096, O_RDWR | O_CREAT | O_EXCL, 0600, &a)))
    sysbail("pfutex_region_open_attr %s", name);
  U = pfutex_region_addr(rg);
  pfutex_region_unlink(name);        /* every process has it open already */
  ws = ru_shared_alloc(sizeof *ws * (RS_WORKERS + 1));   /* + the broadcaster */
#if RS_HAVE_STOP
  rs_stopped_at = ru_shared_alloc(sizeof *rs_stopped_at * RS_NPOINTS);
#endif

  for (i = 0; i < RS_WORKERS; i++) {
    fflush(stdout);
    if ((pids[i] = fork()) < 0)
      sysbail("fork");
    if (pids[i] == 0) {
#ifdef PR_SET_PDEATHSIG
      prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
#endif
      ru_child_alarm((unsigned int)secs + 30);
      worker(i);
      _exit(0);
    }
    stop_until[i] = 0;
    done[i] = early[i] = 0;
    status[i] = 0;
  }

  fflush(stdout);
  if ((bpid = fork()) < 0)
    sysbail("fork");
  if (bpid == 0) {
#ifdef PR_SET_PDEATHSIG
    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
#endif
    ru_child_alarm((unsigned int)secs + 30);
    broadcaster(&ws[RS_WORKERS]);
    _exit(0);
  }

  t0 = pft_now_ns();
  next_stop = t0;
  while (pft_now_ns() - t0 < seconds_ns) {
    long long now = pft_now_ns();
    int nstopped = 0, st;
    for (i = 0; i < RS_WORKERS; i++) {
      pid_t r;
      if (done[i])
        continue;
      r = waitpid(pids[i], &st, WNOHANG | WUNTRACED);
      if (r == pids[i] && WIFSTOPPED(st) && !stop_until[i]) {
        /* stopped itself at a crash point, inside the critical section */
        seed = seed * 1103515245u + 12345u;
        stop_until[i] = now + 1200LL * 1000 * 1000 + (long long)((seed >> 8) % 1800) * 1000 * 1000;
        selfstops++;
        long_stops += stop_until[i] - now > RS_SEC;
      } else if (r == pids[i] && !WIFSTOPPED(st)) {
        done[i] = early[i] = 1;           /* it ended: a crash, reported below */
        status[i] = st;
        stop_until[i] = 0;
      }
    }
    for (i = 0; i < RS_WORKERS; i++)
      nstopped += stop_until[i] != 0;
    for (i = 0; i < RS_WORKERS; i++) {
      if (stop_until[i] && (now >= stop_until[i] || nstopped > RS_WORKERS - 2)) {
        kill(pids[i], SIGCONT);
        stop_until[i] = 0;
        nstopped--;
      }
    }
    if (now >= next_stop && nstopped < RS_WORKERS - 2) {
      int k;
      seed = seed * 1103515245u + 12345u;
      k = (int)((seed >> 8) % RS_WORKERS);
      /* not the user mutex's holder: stopping it would only stall
       * everyone, as on the kernel, and leave nothing to test */
      if (!stop_until[k] && !done[k]
          && __atomic_load_n(W_OWNER, __ATOMIC_SEQ_CST) != (uint32_t)k + 1) {
        if (!stop_one(pids[k], &st)) {
          done[k] = early[k] = 1;
          status[k] = st;
        } else {
          seed = seed * 1103515245u + 12345u;
          stop_until[k] = now + 200LL * 1000 * 1000 + (long long)((seed >> 8) % 2800) * 1000 * 1000;
          stops++;
          long_stops += stop_until[k] - now > RS_SEC;
        }
      }
      seed = seed * 1103515245u + 12345u;
      next_stop = now + 500LL * 1000 * 1000 + (long long)((seed >> 8) % 500) * 1000 * 1000;
    }
    usleep(10 * 1000);
  }
  /* The end: told to stop, everyone continued (also those that stop
   * themselves again on the way out), broadcast to (by the broadcaster)
   * until out. */
  __atomic_store_n(W_STOP, 1, __ATOMIC_SEQ_CST);
  t0 = pft_now_ns();
  for (;;) {
    left = 0;
    for (i = 0; i < RS_WORKERS; i++) {
      if (!done[i]) {
        int st;
        pid_t r = waitpid(pids[i], &st, WNOHANG | WUNTRACED);
        if (r == pids[i] && !WIFSTOPPED(st)) {
          done[i] = 1;
          status[i] = st;
        } else {
          kill(pids[i], SIGCONT);
          left++;
        }
      }
    }
    if (!left || pft_now_ns() - t0 > 5 * RS_SEC)
      break;
    usleep(1000);
  }
  for (i = 0; i < RS_WORKERS; i++) {
    if (!done[i]) {
      char wchan[64] = "?";
      char path[64];
      FILE *f;
      snprintf(path, sizeof path, "/proc/%d/wchan", (int)pids[i]);
      if ((f = fopen(path, "r")) != NULL) {
        if (!fgets(wchan, sizeof wchan, f))
          strcpy(wchan, "?");
        fclose(f);
      }
      hung++;
      if (!why[0])
        snprintf(why, sizeof why,
                 "worker %d still running 5 s after the end (in %s; mutex word %u)", i, wchan,
                 *W_MUTEX);
      kill(pids[i], SIGKILL);
      waitpid(pids[i], &status[i], 0);
    } else if (!WIFEXITED(status[i]) || WEXITSTATUS(status[i]) != 0) {
      crashed++;
      if (!why[0])
        snprintf(why, sizeof why, "worker %d: %s %d%s", i,
                 WIFSIGNALED(status[i]) ? "killed by signal" : "exit",
                 WIFSIGNALED(status[i]) ? WTERMSIG(status[i]) : WEXITSTATUS(status[i]),
                 early[i] ? " (during the storm)" : "");
    }
  }
  __atomic_store_n(W_BSTOP, 1, __ATOMIC_SEQ_CST);
  {
    int st;
    long long end = pft_now_ns() + 3 * RS_SEC;
    pid_t r;
    while ((r = waitpid(bpid, &st, WNOHANG)) == 0 && pft_now_ns() < end)
      usleep(1000);
    if (r != bpid) {
      hung++;
      if (!why[0])
        snprintf(why, sizeof why, "the broadcaster still running 3 s after the end");
      kill(bpid, SIGKILL);
      waitpid(bpid, &st, 0);
    } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
      crashed++;
      if (!why[0])
        snprintf(why, sizeof why, "the broadcaster: status %#x", st);
    }
  }
  swake = 0;
  for (i = 0; i <= RS_WORKERS; i++) {
    incs += ws[i].incs;
    mwake += ws[i].mwake;
    mwait0 += ws[i].mwait0;
    swake += ws[i].swake;
    swait0 += ws[i].swait0;
    viol += ws[i].viol;
    bad += ws[i].bad;
    eintr += ws[i].eintr;
    if (ws[i].bad)
      last_bad = ws[i].last_bad;
  }
  diag("%ld random stops, %ld stops inside (crash points), %ld of them > 1 s; %ld increments, "
       "mutex: %ld wakes counted / %ld waits returned 0, seq: %ld / %ld, %ld EINTR",
       stops, selfstops, long_stops, incs, mwake, mwait0, swake, swait0, eintr);
#if RS_HAVE_STOP
  {
    char line[256];
    size_t len = 0;
    int j, any = 0;
    line[0] = 0;
    for (i = 0; i < RS_NPOINTS; i++) {
      long c = 0;
      for (j = 0; j < RS_NPOINTS; j++)
        if (strcmp(rs_points[j], rs_points[i]) == 0) {
          if (j < i)
            break;
          c += rs_stopped_at[j];
        }
      if (j == RS_NPOINTS && c && len < sizeof line) {
        len += (size_t)snprintf(line + len, sizeof line - len, " %s %ld", rs_points[i], c);
        any = 1;
      }
    }
    if (any)
      diag("stops inside, by crash point:%s", line);
  }
#endif
  ok(hung == 0 && crashed == 0, "every worker exits 0: no crash, no hang (%d hung, %d failed)%s%s",
     hung, crashed, why[0] ? ": " : "", why);
  ok(*W_COUNT == (uint32_t)incs, "the counter (%u) equals the workers' own increments (%ld)",
     *W_COUNT, incs);
  ok(viol == 0, "nobody found another inside the mutex (%ld times)", viol);
  ok(mwake == mwait0, "mutex word: the wakes counted (%ld) exactly the waits that returned 0 (%ld)",
     mwake, mwait0);
  ok(swake == swait0, "sequence word: the broadcasts counted (%ld) exactly the waits that returned "
     "0 (%ld)", swake, swait0);
  ok(bad == 0, "no call failed (%ld; last errno %s)", bad, pft_errname(last_bad));
  pfutex_region_close(rg);
  return 0;
}
#endif /* !_WIN32 */
