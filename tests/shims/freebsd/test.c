/* shim_freebsd: the FreeBSD _umtx_op shim (tests/shims/freebsd/shim.c)
 * does what FreeBSD documents, call by call, so the emu:freebsd-shim
 * suite run tests the port against FreeBSD's behaviour, not the shim's
 * fancy.  Each check names its source: _umtx_op.2 (lib/libc/sys) or
 * kern_umtx.c (sys/kern) of freebsd/freebsd-src.  Calls the shim directly,
 * not through pfutex; runs once, under emu:freebsd-shim.  Then the object
 * identity calls (sysctl KERN_PROC_VMMAP, UMTX_OP_SHM: kern_proc.c,
 * kern_umtx.c) and the port's keys from them (ports/freebsd/objid.c). */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>
#include <sys/stat.h>

#include "pft.h"
#include "pfutex.h"
#include "emu.h"
#include "os.h"
#include "shim.h"
#include "../objtest.h"


struct sleeper {
  pthread_t thread;
  volatile pid_t tid;
  uint32_t *word;
  unsigned long val;
  int op;
  void *uaddr, *uaddr2;
  volatile int done;
  int ret, err;
};

static void *
sleeper_main(void *arg)
{
  struct sleeper *s = arg;
  int r;
  s->tid = pft_gettid();
  r = _umtx_op(s->word, s->op, s->val, s->uaddr, s->uaddr2);
  s->err = r < 0 ? errno : 0;
  s->ret = r;
  __atomic_store_n(&s->done, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

/* Start s and return once it sleeps in the kernel. */
static void
sleeper_start(struct sleeper *s)
{
  s->done = 0;
  s->tid = 0;
  if (pthread_create(&s->thread, NULL, sleeper_main, s) != 0)
    bail("pthread_create");
  while (!s->tid)
    sched_yield();
  if (pft_wait_asleep(s->tid) != 0 && !s->done)
    bail("sleeper never slept");
}

static void
sleeper_join(struct sleeper *s)
{
  pthread_join(s->thread, NULL);
}

/* How many of n sleepers still sleep (the others were woken: a wake
 * makes its sleepers runnable before the call returns). */
static int
count_asleep(struct sleeper *s, int n)
{
  int i, c = 0;
  for (i = 0; i < n; i++) {
    int st = s[i].done ? -1 : pft_task_state(0, s[i].tid);
    c += st == 'S' || st == 'D';
  }
  return c;
}

static long long
clock_ns(clockid_t c)
{
  struct timespec ts;
  clock_gettime(c, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static struct timespec
ns_ts(long long ns)
{
  struct timespec ts;
  ts.tv_sec = (time_t)(ns / 1000000000LL);
  ts.tv_nsec = (long)(ns % 1000000000LL);
  return ts;
}

static void
on_usr1(int sig)
{
  (void)sig;
}

/* Fork a child that runs one wait on *word (shared memory) and exits with
 * 0 for a 0 result, else 100 + errno; once it sleeps, run wake(word) here.
 * Returns the child's exit status. */
static int
child_wait(uint32_t *word, int wait_op, const struct timespec *rel, void (*wake)(uint32_t *))
{
  pid_t pid;
  int status, seen = 0;
  fflush(stdout);
  pid = fork();
  if (pid < 0)
    sysbail("fork");
  if (pid == 0) {
    struct timespec t = *rel;
    alarm(20);
    if (_umtx_op(word, wait_op, 0, (void *)(uintptr_t)sizeof t, &t) == 0)
      _exit(0);
    _exit(100 + errno);
  }
  while (seen < 2) {          /* asleep in two samples in a row */
    int st = pft_task_state(pid, 0);
    seen = st == 'S' ? seen + 1 : 0;
    if (st < 0 || st == 'Z')
      break;
    usleep(200);
  }
  wake(word);
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR)
      sysbail("waitpid");
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void
wake_shared(uint32_t *w)
{
  _umtx_op(w, UMTX_OP_WAKE, INT_MAX, NULL, NULL);
}

static void
wake_both(uint32_t *w)
{
  _umtx_op(w, UMTX_OP_WAKE_PRIVATE, INT_MAX, NULL, NULL);
  _umtx_op(w, UMTX_OP_WAKE, INT_MAX, NULL, NULL);
}

/* A thread's shared FUTEX_WAIT through pfutex (the engine on this port). */
struct fb_waiter {
  uint32_t *word;
  long ret;
};

static void *
fb_wait_main(void *arg)
{
  struct fb_waiter *w = arg;
  struct timespec ts = { 5, 0 };
  w->ret = pfutex(w->word, 0 /* FUTEX_WAIT */, 0, &ts, NULL, 0);
  return NULL;
}

int
main(void)
{
  static uint32_t word;
  const char *be = getenv("PFUTEX_BACKEND");
  struct sleeper s[3];
  struct _umtx_time t;
  struct timespec ts;
  long long t0;
  uint32_t *shm;
  int i;

  if (!be || strcmp(be, "emu:freebsd-shim") != 0)
    skip_all("tests the FreeBSD shim itself: runs under emu:freebsd-shim only");
  plan_lazy();
  pft_watchdog(60);
  pf_shim_freebsd_spurious(0);
  memset(s, 0, sizeof s);

  /* -- the compare ------------------------------------------------------ */
  word = 1;
  PFT_IS(_umtx_op(&word, UMTX_OP_WAIT_UINT_PRIVATE, 0, NULL, NULL), 0, 0,
         "kern_umtx.c do_wait: a mismatch is not an error: WAIT_UINT_PRIVATE returns 0");
  PFT_IS(_umtx_op(&word, UMTX_OP_WAIT_UINT, 0, NULL, NULL), 0, 0,
         "kern_umtx.c do_wait: WAIT_UINT on a mismatch returns 0");
  word = 0;
#if ULONG_MAX > 0xffffffffUL
  PFT_IS(_umtx_op(&word, UMTX_OP_WAIT_UINT_PRIVATE, 1UL << 32, NULL, NULL), 0, 0,
         "kern_umtx.c do_wait: the u_int word is widened, so val 2^32 never matches 0");
#endif
  PFT_IS(_umtx_op(&word, 999, 0, NULL, NULL), -1, EINVAL,
         "_umtx_op.2 ERRORS: an invalid op is EINVAL");

  /* -- wakes: no counts ------------------------------------------------- */
  PFT_IS(_umtx_op(&word, UMTX_OP_WAKE_PRIVATE, 1, NULL, NULL), 0, 0,
         "_umtx_op.2 RETURN VALUES: WAKE_PRIVATE with nobody asleep returns 0");
  PFT_IS(_umtx_op(&word, UMTX_OP_WAKE, 1, NULL, NULL), 0, 0,
         "_umtx_op.2 RETURN VALUES: WAKE with nobody asleep returns 0");
  s[0].word = &word;
  s[0].op = UMTX_OP_WAIT_UINT_PRIVATE;
  sleeper_start(&s[0]);
  ok(!s[0].done, "_umtx_op.2 UMTX_OP_WAIT: a matching word sleeps");
  PFT_IS(_umtx_op(&word, UMTX_OP_WAKE_PRIVATE, 1, NULL, NULL), 0, 0,
         "kern_umtx_wake: a wake that woke one returns 0, not a count");
  sleeper_join(&s[0]);
  ok(s[0].ret == 0 && word == 0,
     "_umtx_op.2: the woken waiter returns 0 though the word never changed (got %d %s)",
     s[0].ret, pft_errname(s[0].err));

  for (i = 0; i < 3; i++) {
    s[i].word = &word;
    s[i].op = UMTX_OP_WAIT_UINT_PRIVATE;
    sleeper_start(&s[i]);
  }
  _umtx_op(&word, UMTX_OP_WAKE_PRIVATE, 1, NULL, NULL);
  is_int(2, count_asleep(s, 3), "_umtx_op.2 UMTX_OP_WAKE: \"Up to val threads are woken\": val 1 woke one");
  _umtx_op(&word, UMTX_OP_WAKE_PRIVATE, 0, NULL, NULL);
  is_int(1, count_asleep(s, 3), "kern_umtx.c umtxq_signal_queue: val 0 still wakes one");
  _umtx_op(&word, UMTX_OP_WAKE_PRIVATE, INT_MAX, NULL, NULL);
  for (i = 0; i < 3; i++)
    sleeper_join(&s[i]);
  ok(s[0].ret == 0 && s[1].ret == 0 && s[2].ret == 0, "_umtx_op.2: INT_MAX wakes all, each returns 0");

  /* -- keys: private and shared (on a shared mapping; on a private one
   * FreeBSD's WAIT_UINT takes the private queue: not modelled) ----------- */
  shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shm == MAP_FAILED)
    sysbail("mmap");
  *shm = 0;
  s[0].word = shm;
  s[0].op = UMTX_OP_WAIT_UINT;
  sleeper_start(&s[0]);
  _umtx_op(shm, UMTX_OP_WAKE_PRIVATE, INT_MAX, NULL, NULL);
  is_int(1, count_asleep(s, 1),
         "_umtx_op.2 SLEEP QUEUES: a WAIT_UINT sleeper on shared memory is not on the private queue WAKE_PRIVATE walks");
  _umtx_op(shm, UMTX_OP_WAKE, 1, NULL, NULL);
  sleeper_join(&s[0]);
  is_int(0, s[0].ret, "UMTX_OP_WAKE wakes it");
  s[0].op = UMTX_OP_WAIT_UINT_PRIVATE;
  sleeper_start(&s[0]);
  _umtx_op(shm, UMTX_OP_WAKE, INT_MAX, NULL, NULL);
  is_int(1, count_asleep(s, 1),
         "_umtx_op.2 WAIT_UINT_PRIVATE: a private sleeper is not on the shared queue WAKE walks");
  _umtx_op(shm, UMTX_OP_WAKE_PRIVATE, 1, NULL, NULL);
  sleeper_join(&s[0]);
  is_int(0, s[0].ret, "UMTX_OP_WAKE_PRIVATE wakes it");
  s[0].word = &word;

  /* -- timeouts --------------------------------------------------------- */
  t._flags = UMTX_ABSTIME;
  t._clockid = CLOCK_MONOTONIC;
  t0 = clock_ns(CLOCK_MONOTONIC);
  t._timeout = ns_ts(t0 + 50000000LL);
  PFT_IS(_umtx_op(&word, UMTX_OP_WAIT_UINT_PRIVATE, 0, (void *)(uintptr_t)sizeof t, &t), -1, ETIMEDOUT,
         "_umtx_op.2 UMTX_ABSTIME: a CLOCK_MONOTONIC deadline ends the wait with ETIMEDOUT");
  ok(clock_ns(CLOCK_MONOTONIC) >= t0 + 50000000LL, "... not before the deadline");
  t._clockid = CLOCK_REALTIME;
  t0 = clock_ns(CLOCK_REALTIME);
  t._timeout = ns_ts(t0 + 50000000LL);
  PFT_IS(_umtx_op(&word, UMTX_OP_WAIT_UINT, 0, (void *)(uintptr_t)sizeof t, &t), -1, ETIMEDOUT,
         "_umtx_op.2 _clockid: a CLOCK_REALTIME deadline ends the shared wait with ETIMEDOUT");
  ok(clock_ns(CLOCK_REALTIME) >= t0 + 50000000LL, "... not before the deadline on that clock");
  t._clockid = CLOCK_MONOTONIC;
  t._timeout.tv_sec = 0;
  t._timeout.tv_nsec = 0;
  PFT_IS(_umtx_op(&word, UMTX_OP_WAIT_UINT_PRIVATE, 0, (void *)(uintptr_t)sizeof t, &t), -1, ETIMEDOUT,
         "_umtx_op.2 UMTX_ABSTIME: a deadline already passed is ETIMEDOUT at once");
  t._flags = 0;
  t._timeout = ns_ts(50000000LL);
  t0 = clock_ns(CLOCK_MONOTONIC);
  PFT_IS(_umtx_op(&word, UMTX_OP_WAIT_UINT_PRIVATE, 0, (void *)(uintptr_t)sizeof t, &t), -1, ETIMEDOUT,
         "_umtx_op.2: without UMTX_ABSTIME the timeout is relative");
  ok(clock_ns(CLOCK_MONOTONIC) - t0 >= 50000000LL, "... and lasts at least that long");
  ts = ns_ts(50000000LL);
  t0 = clock_ns(CLOCK_MONOTONIC);
  PFT_IS(_umtx_op(&word, UMTX_OP_WAIT_UINT_PRIVATE, 0, (void *)(uintptr_t)sizeof ts, &ts), -1, ETIMEDOUT,
         "_umtx_op.2: uaddr = sizeof(struct timespec) makes uaddr2 a bare relative timespec");
  ok(clock_ns(CLOCK_MONOTONIC) - t0 >= 50000000LL, "... and lasts at least that long");
  t._flags = UMTX_ABSTIME;
  t._timeout.tv_sec = 0;
  t._timeout.tv_nsec = 1000000000L;
  PFT_IS(_umtx_op(&word, UMTX_OP_WAIT_UINT_PRIVATE, 0, (void *)(uintptr_t)sizeof t, &t), -1, EINVAL,
         "_umtx_op.2 ERRORS: tv_nsec of 1000000000 is EINVAL");
  t._timeout.tv_nsec = -1;
  PFT_IS(_umtx_op(&word, UMTX_OP_WAIT_UINT_PRIVATE, 0, (void *)(uintptr_t)sizeof t, &t), -1, EINVAL,
         "_umtx_op.2 ERRORS: a negative tv_nsec is EINVAL");
  t._timeout.tv_sec = -1;
  t._timeout.tv_nsec = 0;
  PFT_IS(_umtx_op(&word, UMTX_OP_WAIT_UINT_PRIVATE, 0, (void *)(uintptr_t)sizeof t, &t), -1, EINVAL,
         "_umtx_op.2 ERRORS: a negative tv_sec is EINVAL");

  /* -- signals: never restarted ----------------------------------------- */
  pft_install(SIGUSR1, on_usr1, SA_RESTART);
  s[0].op = UMTX_OP_WAIT_UINT_PRIVATE;
  s[0].uaddr = s[0].uaddr2 = NULL;
  sleeper_start(&s[0]);
  pthread_kill(s[0].thread, SIGUSR1);
  sleeper_join(&s[0]);
  ok(s[0].ret == -1 && s[0].err == EINTR,
     "_umtx_op.2 UMTX_OP_WAIT: \"not restartable\": an untimed wait ends with EINTR after an SA_RESTART handler (got %d %s)",
     s[0].ret, pft_errname(s[0].err));
  t._flags = UMTX_ABSTIME;
  t._clockid = CLOCK_MONOTONIC;
  t._timeout = ns_ts(clock_ns(CLOCK_MONOTONIC) + 20000000000LL);
  s[0].op = UMTX_OP_WAIT_UINT;
  s[0].uaddr = (void *)(uintptr_t)sizeof t;
  s[0].uaddr2 = &t;
  sleeper_start(&s[0]);
  pthread_kill(s[0].thread, SIGUSR1);
  sleeper_join(&s[0]);
  ok(s[0].ret == -1 && s[0].err == EINTR,
     "_umtx_op.2: a timed wait ends with EINTR after an SA_RESTART handler (got %d %s)",
     s[0].ret, pft_errname(s[0].err));

  /* -- early returns ----------------------------------------------------- */
  pf_shim_freebsd_spurious(1);
  ts = ns_ts(5000000000LL);
  PFT_IS(_umtx_op(&word, UMTX_OP_WAIT_UINT_PRIVATE, 0, (void *)(uintptr_t)sizeof ts, &ts), 0, 0,
         "shim: an injected early return (a stale wake for an earlier sleeper) is 0");
  is_int(0, (long)word, "... with the word unchanged");
  pf_shim_freebsd_spurious(0);

  /* -- processes sharing memory ----------------------------------------- */
  pft_settle_threads();
  ts = ns_ts(10000000000LL);
  is_int(0, child_wait(shm, UMTX_OP_WAIT_UINT, &ts, wake_shared),
         "_umtx_op.2 SLEEP QUEUES: WAIT_UINT on shared memory is woken by WAKE from another process");
  ts = ns_ts(300000000LL);
  is_int(100 + ETIMEDOUT, child_wait(shm, UMTX_OP_WAIT_UINT_PRIVATE, &ts, wake_both),
         "_umtx_op.2 WAIT_UINT_PRIVATE: \"unconditionally select the process-private sleep queue\": no wake from another process");
  munmap(shm, 4096);

  /* -- the object identity calls (ports/freebsd/objid.c) ----------------- */
  {
    long pg = sysconf(_SC_PAGESIZE);
    int mib[4] = { CTL_KERN, KERN_PROC, KERN_PROC_VMMAP, (int)getpid() };
    char *sh = mmap(NULL, (size_t)(2 * pg), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char *pv = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *ro = mmap(NULL, (size_t)pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *file, *file2, *m1, *m2, *buf;
    char path[] = "/tmp/pfutex-shimfbsd-XXXXXX";
    size_t len = 0, off;
    int fd, seen = 0, packed = 1, fd1, fd2;
    unsigned long n_vm, n_shm;
    struct stat st1, st2;
    struct pf_os_objid id, id2;
    pid_t pid;
    if (sh == MAP_FAILED || pv == MAP_FAILED || ro == MAP_FAILED)
      sysbail("mmap");
    sh[0] = 1;
    ok(sysctl(mib, 4, NULL, &len, NULL, 0) == 0 && len > 0,
       "sysctl KERN_PROC_VMMAP: the size of the caller's map (kern_proc.c sysctl_kern_proc_vmmap)");
    buf = malloc(len + 65536);
    len += 65536;
    if (!buf || sysctl(mib, 4, buf, &len, NULL, 0) != 0)
      sysbail("sysctl");
    for (off = 0; off < len;) {
      const struct kinfo_vmentry *k = (const void *)(buf + off);
      if (k->kve_structsize % 8 || (size_t)k->kve_structsize > sizeof *k)
        packed = 0;
      if (k->kve_start == (uintptr_t)sh && k->kve_end == (uintptr_t)sh + 2 * (uintptr_t)pg
          && !(k->kve_flags & KVME_FLAG_COW) && k->kve_obj != 0
          && k->kve_protection == (KVME_PROT_READ | KVME_PROT_WRITE))
        seen |= 1;
      if (k->kve_start == (uintptr_t)pv && (k->kve_flags & KVME_FLAG_COW))
        seen |= 2;
      off += (size_t)k->kve_structsize;
    }
    free(buf);
    ok(packed && seen == 3, "kinfo_vmentry records packed to kve_structsize (a multiple of 8); "
       "MAP_SHARED|MAP_ANON: an OBJ_ANON object (kve_obj), no COW; private: KVME_FLAG_COW");
    mib[3] = (int)getpid() + 1;
    len = 0;
    ok(sysctl(mib, 4, NULL, &len, NULL, 0) == -1, "the model answers for the caller's own map only");
    mib[3] = (int)getpid();
    len = 16;
    buf = malloc(16);
    ok(sysctl(mib, 4, buf, &len, NULL, 0) == -1 && errno == ENOMEM,
       "a buffer too small: ENOMEM (the kernel's sysctl)");
    free(buf);
    /* UMTX_OP_SHM: one registry page per (object, offset) */
    m1 = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (m1 == MAP_FAILED)
      sysbail("mmap");
    fd1 = _umtx_op(NULL, UMTX_OP_SHM, UMTX_SHM_CREAT, m1 + 8, NULL);
    fd2 = _umtx_op(NULL, UMTX_OP_SHM, UMTX_SHM_LOOKUP, m1 + 8, NULL);
    ok(fd1 >= 0 && fd2 >= 0 && fstat(fd1, &st1) == 0 && fstat(fd2, &st2) == 0 && st1.st_ino == st2.st_ino,
       "UMTX_OP_SHM: CREAT, then LOOKUP of the same word: one registry page (kern_umtx.c umtx_shm)");
    if (fd2 >= 0)
      close(fd2);
    fd2 = _umtx_op(NULL, UMTX_OP_SHM, UMTX_SHM_CREAT, m1 + 12, NULL);
    ok(fd2 >= 0 && fstat(fd2, &st2) == 0 && st1.st_ino != st2.st_ino,
       "UMTX_OP_SHM: another word of the object, another page");
    if (fd1 >= 0)
      close(fd1);
    if (fd2 >= 0)
      close(fd2);
    ok(_umtx_op(NULL, UMTX_OP_SHM, UMTX_SHM_CREAT | UMTX_SHM_LOOKUP, m1, NULL) == -1 && errno == EINVAL,
       "UMTX_OP_SHM with two flags: EINVAL");
    ok(_umtx_op(NULL, UMTX_OP_SHM, UMTX_SHM_DESTROY, m1 + 8, NULL) == 0
           && _umtx_op(NULL, UMTX_OP_SHM, UMTX_SHM_LOOKUP, m1 + 8, NULL) == -1 && errno == ESRCH,
       "UMTX_OP_SHM: after DESTROY, LOOKUP answers ESRCH");
    _umtx_op(NULL, UMTX_OP_SHM, UMTX_SHM_DESTROY, m1 + 12, NULL);
    munmap(m1, (size_t)pg);
    /* the port's keys */
    if ((fd = mkstemp(path)) < 0 || ftruncate(fd, 2 * pg) != 0)
      sysbail("mkstemp");
    unlink(path);
    file = mmap(NULL, (size_t)(2 * pg), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    file2 = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, pg);
    close(fd);
    if (file == MAP_FAILED || file2 == MAP_FAILED)
      sysbail("mmap");
    n_vm = pf_shim_freebsd_count(PF_SHIM_FBSD_VMMAP);
    ok(pf_freebsd_shim_object_id(file + pg + 4, &id) == 1
           && pf_freebsd_shim_object_id(file2 + 4, &id2) == 1 && id.dev == id2.dev && id.ino == id2.ino
           && id.off == id2.off && id.off == (uint64_t)pg + 4,
       "ports/freebsd/objid.c: a file's word through two mappings: one key (fsid, fileid, byte offset)");
    ok(pf_shim_freebsd_count(PF_SHIM_FBSD_VMMAP) > n_vm, "... asked with sysctl KERN_PROC_VMMAP");
    ok(pf_freebsd_shim_object_id(pv, &id) == 0, "ports/freebsd/objid.c: a private (COW) mapping: keyed by address");
    ok(pf_freebsd_shim_object_id(ro, &id) == -EFAULT,
       "ports/freebsd/objid.c: read-only private anonymous memory: -EFAULT (Linux's get_futex_key)");
    ok(pf_freebsd_shim_object_id(sh + pg + 8, &id) == 1 && id.off == (uint64_t)pg + 8,
       "ports/freebsd/objid.c: MAP_SHARED|MAP_ANON: its object (kve_obj) and the byte offset");
    fflush(stdout);
    pid = fork();
    if (pid == 0)
      _exit(pf_freebsd_shim_object_id(sh + pg + 8, &id2) == 1 && id2.ino == id.ino && id2.dev == id.dev
                ? 0 : 1);
    waitpid(pid, &i, 0);
    ok(WIFEXITED(i) && WEXITSTATUS(i) == 0, "... the same key in a fork child");
    objtest_shm_twice("shimfbsd", pg, &m1, &m2);
    n_shm = pf_shim_freebsd_count(PF_SHIM_FBSD_UMTX_SHM);
    ok(pf_freebsd_shim_object_id(m1 + 16, &id) == 1 && pf_freebsd_shim_object_id(m2 + 16, &id2) == 1
           && id.ino == id2.ino && id.dev == id2.dev
           && pf_shim_freebsd_count(PF_SHIM_FBSD_UMTX_SHM) == n_shm + 2,
       "ports/freebsd/objid.c: POSIX shm (no kve_obj): the word's UMTX_OP_SHM page names it, through two mappings");
    ok(pf_freebsd_shim_object_id(m1 + 20, &id2) == 1 && id2.ino != id.ino,
       "... and another word another page");
    _umtx_op(NULL, UMTX_OP_SHM, UMTX_SHM_DESTROY, m1 + 16, NULL);
    _umtx_op(NULL, UMTX_OP_SHM, UMTX_SHM_DESTROY, m1 + 20, NULL);
    munmap(m1, (size_t)pg);
    munmap(m2, (size_t)pg);
  }
  /* -- the engine on this port with FreeBSD's answer (the real port's build) */
  {
    long pg = sysconf(_SC_PAGESIZE);
    char *sh = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char *pv = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *ro = mmap(NULL, (size_t)pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *m1, *m2;
    struct fb_waiter fw;
    pthread_t th;
    unsigned long n_vm;
    long woken;
    pid_t pid;
    if (sh == MAP_FAILED || pv == MAP_FAILED || ro == MAP_FAILED)
      sysbail("mmap");
    objtest_shm_twice("shimfbsd2", pg, &m1, &m2);
    pf_shim_freebsd_set_identity(1);
    *(volatile uint32_t *)(sh + 8) = 0;
    n_vm = pf_shim_freebsd_count(PF_SHIM_FBSD_VMMAP);
    pid = objtest_fork_waiter((uint32_t *)(sh + 8));
    woken = objtest_wake_until((uint32_t *)(sh + 8));
    ok(objtest_child_ok(pid) && woken == 1 && pf_shim_freebsd_count(PF_SHIM_FBSD_VMMAP) > n_vm,
       "pfutex: MAP_SHARED|MAP_ANON shared before fork: the child's shared wait is woken by the parent, count 1 "
       "(FreeBSD's identity, sysctl KERN_PROC_VMMAP)");
    fw.word = (uint32_t *)(m1 + 16);
    *fw.word = 0;
    if (pthread_create(&th, NULL, fb_wait_main, &fw) != 0)
      sysbail("pthread_create");
    woken = objtest_wake_until((uint32_t *)(m2 + 16));
    pthread_join(th, NULL);
    ok(woken == 1 && fw.ret == 0,
       "pfutex: POSIX shm mapped twice: a wait on one mapping woken through the other, count 1 (UMTX_OP_SHM)");
    objtest_private_words((uint32_t *)pv, (uint32_t *)ro);
    pf_shim_freebsd_set_identity(0);
    _umtx_op(NULL, UMTX_OP_SHM, UMTX_SHM_DESTROY, m1 + 16, NULL);
    _umtx_op(NULL, UMTX_OP_SHM, UMTX_SHM_DESTROY, sh + 8, NULL);
    munmap(m1, (size_t)pg);
    munmap(m2, (size_t)pg);
    munmap(sh, (size_t)pg);
    munmap(pv, (size_t)pg);
    munmap(ro, (size_t)pg);
  }
  return 0;
}
