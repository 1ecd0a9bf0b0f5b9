/* shim_netbsd: the NetBSD __futex behaviour tests/shims/netbsd/shim.c
 * claims, call by call, each check naming what of NetBSD's sys_futex.c
 * (rev 1.18) / sys/futex.h / kern_sleepq.c it models.  Tests the shim
 * directly, not through pfutex; runs once (backend emu:netbsd-shim). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pft.h"
#include "os.h"
#include "pfutex.h"
#include "shim.h"
#include "../objtest.h"

#define FUTEX(u, op, v, ts, v3) syscall(SYS___futex, (int *)(u), (op), (v), (ts), NULL, 0, (v3))

struct waiter {
  volatile uint32_t *word;
  int op;
  const struct timespec *ts;
  pthread_t th;
  volatile pid_t tid;
  long ret;
  int err;
  long long ns;
};

static void *
waiter_main(void *arg)
{
  struct waiter *w = arg;
  long long t0;
  w->tid = pft_gettid();
  t0 = pft_now_ns();
  errno = 0;
  w->ret = FUTEX(w->word, w->op, 0, w->ts, FUTEX_BITSET_MATCH_ANY);
  w->err = errno;
  w->ns = pft_now_ns() - t0;
  return NULL;
}

static void
waiter_start(struct waiter *w, volatile uint32_t *word, int op, const struct timespec *ts)
{
  memset(w, 0, sizeof *w);
  w->word = word;
  w->op = op;
  w->ts = ts;
  if (pthread_create(&w->th, NULL, waiter_main, w) != 0)
    bail("pthread_create");
  while (!w->tid)
    sched_yield();
  pft_wait_asleep(w->tid);
}

static volatile sig_atomic_t hits;
static volatile uint32_t *change_word;
static void on_sig(int sig) { (void)sig; hits++; }
static void on_change(int sig) { (void)sig; hits++; if (change_word) *change_word = 7; }

static int
timed_out(long r, int e, const char *what)
{
  return ok(r == -1 && e == ETIMEDOUT, "%s: ETIMEDOUT (got %ld, %s)", what, r, pft_errname(e));
}

/* A thread's shared FUTEX_WAIT through pfutex (the engine on this port). */
struct nb_waiter {
  uint32_t *word;
  long ret;
  int err;
};

static void *
nb_wait_main(void *arg)
{
  struct nb_waiter *w = arg;
  struct timespec ts = { 5, 0 };
  errno = 0;
  w->ret = pfutex(w->word, FUTEX_WAIT, 0, &ts, NULL, 0);
  w->err = errno;
  return NULL;
}

int
main(void)
{
  static volatile uint32_t word;
  const char *be = getenv("PFUTEX_BACKEND");
  struct timespec ts, dl;
  struct waiter w;
  volatile uint32_t *shared;
  long long t0, el;
  unsigned long restarts;
  long r;
  int e, st;
  pid_t pid;

  if (!be || strcmp(be, "emu:netbsd-shim") != 0)
    skip_all("the shim's own test runs once, under emu:netbsd-shim");
  PFT_SKIP_UNDER_TSAN();
  plan(31 + 25);
  pft_watchdog(60);
  pf_shim_netbsd_set_spurious(0);

  /* sys/futex.h: "ABI-compatible with the Linux futex(2) system call" */
  ok(FUTEX_WAIT == 0 && FUTEX_WAKE == 1 && FUTEX_WAIT_BITSET == 9 && FUTEX_WAKE_BITSET == 10
     && FUTEX_PRIVATE_FLAG == 128 && FUTEX_CLOCK_REALTIME == 256 && FUTEX_BITSET_MATCH_ANY == -1,
     "sys/futex.h: Linux's numbers and flags");

  /* futex_func_wait: "Optimistically test before anything else": EAGAIN */
  word = 5;
  errno = 0;
  r = FUTEX(&word, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 4, NULL, 0);
  ok(r == -1 && errno == EAGAIN, "FUTEX_WAIT: EAGAIN when *uaddr != val");
  errno = 0;
  r = FUTEX(&word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 4, NULL, FUTEX_BITSET_MATCH_ANY);
  ok(r == -1 && errno == EAGAIN, "FUTEX_WAIT_BITSET: EAGAIN when *uaddr != val");
  /* val3 == 0: "nobody will ever wake us": EINVAL */
  word = 0;
  errno = 0;
  r = FUTEX(&word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 0, NULL, 0);
  ok(r == -1 && errno == EINVAL, "FUTEX_WAIT_BITSET with bitset 0: EINVAL");

  /* do_futex: FUTEX_WAIT is TIMER_RELTIME, FUTEX_WAIT_BITSET TIMER_ABSTIME */
  ts.tv_sec = 0;
  ts.tv_nsec = 30000000;
  t0 = pft_now_ns();
  errno = 0;
  r = FUTEX(&word, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 0, &ts, 0);
  e = errno;
  el = pft_now_ns() - t0;
  timed_out(r, e, "FUTEX_WAIT, 30 ms relative");
  ok(el >= 30000000, "FUTEX_WAIT's timeout is relative (slept %lld ns)", el);
  clock_gettime(CLOCK_MONOTONIC, &dl);
  pft_timespec_add_ns(&dl, 30000000);
  errno = 0;
  r = FUTEX(&word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 0, &dl, FUTEX_BITSET_MATCH_ANY);
  e = errno;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  timed_out(r, e, "FUTEX_WAIT_BITSET, absolute CLOCK_MONOTONIC deadline");
  ok(pft_elapsed_ns(&dl, &ts) >= 0, "FUTEX_WAIT_BITSET returned at or after its absolute deadline");
  ts.tv_sec = 1;
  ts.tv_nsec = 0;
  t0 = pft_now_ns();
  errno = 0;
  r = FUTEX(&word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, 0, &ts, FUTEX_BITSET_MATCH_ANY);
  e = errno;
  timed_out(r, e, "FUTEX_WAIT_BITSET, a deadline long past (1 s after boot)");
  ok(pft_now_ns() - t0 < 500000000LL, "a past absolute deadline does not sleep");
  /* do_futex: FUTEX_CLOCK_REALTIME selects the clock, for either op */
  clock_gettime(CLOCK_REALTIME, &dl);
  pft_timespec_add_ns(&dl, 20000000);
  errno = 0;
  r = FUTEX(&word, FUTEX_WAIT_BITSET | FUTEX_CLOCK_REALTIME | FUTEX_PRIVATE_FLAG, 0, &dl,
            FUTEX_BITSET_MATCH_ANY);
  e = errno;
  clock_gettime(CLOCK_REALTIME, &ts);
  timed_out(r, e, "FUTEX_WAIT_BITSET|FUTEX_CLOCK_REALTIME, absolute CLOCK_REALTIME deadline");
  ok(pft_elapsed_ns(&dl, &ts) >= 0, "... returned at or after the CLOCK_REALTIME deadline");
  ts.tv_sec = 0;
  ts.tv_nsec = 10000000;
  errno = 0;
  r = FUTEX(&word, FUTEX_WAIT | FUTEX_CLOCK_REALTIME | FUTEX_PRIVATE_FLAG, 0, &ts, 0);
  e = errno;
  timed_out(r, e, "FUTEX_WAIT|FUTEX_CLOCK_REALTIME is accepted (Linux: ENOSYS)");

  /* futex_func_wake: negative count EINVAL; returns the number woken */
  errno = 0;
  r = FUTEX(&word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, -1, NULL, 0);
  ok(r == -1 && errno == EINVAL, "FUTEX_WAKE with val < 0: EINVAL");
  is_int(0, FUTEX(&word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, 0), "FUTEX_WAKE, nobody waiting: 0");
  waiter_start(&w, &word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, NULL);
  is_int(1, FUTEX(&word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, 0), "FUTEX_WAKE: 1 woken");
  pthread_join(w.th, NULL);
  ok(w.ret == 0, "the woken FUTEX_WAIT_BITSET returned 0");
  errno = 0;
  r = FUTEX(&word, 2, 0, NULL, 0);
  ok(r == -1 && errno == ENOSYS, "FUTEX_FD: ENOSYS");

  /* Signals (kern_sleepq.c sleepq_sigtoerror: EINTR without SA_RESTART,
   * ERESTART with it, which sys_futex.c passes on: the call restarts) */
  pft_install(SIGUSR1, on_sig, 0);
  waiter_start(&w, &word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, NULL);
  pthread_kill(w.th, SIGUSR1);
  pthread_join(w.th, NULL);
  ok(w.ret == -1 && w.err == EINTR, "a handler without SA_RESTART: EINTR (got %ld, %s)", w.ret,
     pft_errname(w.err));
  pft_install(SIGUSR1, on_sig, SA_RESTART);
  restarts = pf_shim_netbsd_restarts();
  waiter_start(&w, &word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, NULL);
  pthread_kill(w.th, SIGUSR1);
  while (pf_shim_netbsd_restarts() == restarts)
    usleep(1000);
  pft_wait_asleep(w.tid);
  is_int(1, FUTEX(&word, FUTEX_WAKE | FUTEX_PRIVATE_FLAG, 1, NULL, 0),
         "a handler with SA_RESTART: the untimed wait was restarted, a wake finds it asleep");
  pthread_join(w.th, NULL);
  ok(w.ret == 0, "... and it returns 0");
  clock_gettime(CLOCK_MONOTONIC, &dl);
  pft_timespec_add_ns(&dl, 300000000);
  restarts = pf_shim_netbsd_restarts();
  waiter_start(&w, &word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, &dl);
  pthread_kill(w.th, SIGUSR1);
  pthread_join(w.th, NULL);
  clock_gettime(CLOCK_MONOTONIC, &ts);
  ok(w.ret == -1 && w.err == ETIMEDOUT && pf_shim_netbsd_restarts() == restarts + 1,
     "a timed wait is restarted too, and ends at its deadline (got %ld, %s)", w.ret,
     pft_errname(w.err));
  ok(pft_elapsed_ns(&dl, &ts) >= 0 && pft_elapsed_ns(&dl, &ts) < 200000000LL,
     "... the absolute deadline kept across the restart");
  ts.tv_sec = 0;
  ts.tv_nsec = 200000000;
  waiter_start(&w, &word, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, &ts);
  usleep(100000);
  pthread_kill(w.th, SIGUSR1);
  pthread_join(w.th, NULL);
  ok(w.ret == -1 && w.err == ETIMEDOUT && w.ns >= 300000000LL,
     "FUTEX_WAIT restarted: its relative timeout starts again (slept %lld ns of 200 ms)", w.ns);
  pft_install(SIGUSR2, on_change, SA_RESTART);
  change_word = &word;
  waiter_start(&w, &word, FUTEX_WAIT_BITSET | FUTEX_PRIVATE_FLAG, NULL);
  pthread_kill(w.th, SIGUSR2);
  pthread_join(w.th, NULL);
  ok(w.ret == -1 && w.err == EAGAIN, "the restart tests the word again: EAGAIN when a handler changed it");
  change_word = NULL;
  word = 0;
  signal(SIGUSR1, SIG_DFL);
  signal(SIGUSR2, SIG_DFL);

  /* Spurious wakeups: the shim's knob (the port must survive them) */
  pf_shim_netbsd_set_spurious(1);
  ts.tv_sec = 5;
  ts.tv_nsec = 0;
  t0 = pft_now_ns();
  r = FUTEX(&word, FUTEX_WAIT | FUTEX_PRIVATE_FLAG, 0, &ts, 0);
  ok(r == 0 && pft_now_ns() - t0 < 1000000000LL, "spurious wakeup injected: 0 at once");
  pf_shim_netbsd_set_spurious(0);
  errno = 0;
  r = syscall(1, 0);
  ok(r == -1 && errno == ENOSYS, "another system call number: ENOSYS (the shim has only __futex)");

  /* Keys (futex_key_init): shared = uvm_voaddr (object, offset), across
   * processes; private = (vmspace, va), this process only */
  shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED)
    sysbail("mmap");
  for (st = 0; st < 2; st++) {
    int op = st ? FUTEX_PRIVATE_FLAG : 0, status, woken = 0, i;
    shared[0] = 0;
    shared[1] = 0;
    fflush(stdout);
    pft_settle_threads();
    if ((pid = fork()) < 0)
      sysbail("fork");
    if (pid == 0) {
      struct timespec to = { 3, 0 };
      pf_shim_netbsd_set_spurious(0);
      shared[1] = 1;
      r = FUTEX(&shared[0], FUTEX_WAIT | op, 0, &to, 0);
      _exit(r == 0 ? 0 : errno == ETIMEDOUT ? 2 : 3);
    }
    while (!shared[1])
      sched_yield();
    while (pft_task_state(pid, 0) != 'S' && pft_task_state(pid, 0) != -1)
      usleep(1000);
    for (i = 0; i < 50 && !woken; i++) {
      woken = (int)FUTEX(&shared[0], FUTEX_WAKE | op, 1, NULL, 0);
      if (st)
        break;
      if (!woken)
        usleep(10000);
    }
    waitpid(pid, &status, 0);
    if (!st) {
      is_int(1, woken, "shared: another process's FUTEX_WAKE wakes the waiter");
      is_int(0, WEXITSTATUS(status), "shared: the waiter returned 0");
    } else {
      is_int(0, woken, "private: another process's FUTEX_WAKE finds no waiter");
      is_int(2, WEXITSTATUS(status), "private: the waiter timed out");
    }
  }
  /* -- the map query and the port's keys (ports/netbsd/objid.c) ---------- */
  {
    long pg = sysconf(_SC_PAGESIZE);
    int mib[5] = { CTL_VM, VM_PROC, VM_PROC_MAP, -1, (int)sizeof(struct kinfo_vmentry) };
    char *sh = mmap(NULL, (size_t)(2 * pg), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char *pv = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *ro = mmap(NULL, (size_t)pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *none = mmap(NULL, (size_t)pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *filesh, *file2, *filepv, *seg, *gone, *m1, *m2;
    char path[] = "/tmp/pfutex-shimnbsd-XXXXXX";
    struct kinfo_vmentry *kv, one;
    struct pf_os_objid id, id2;
    struct nb_waiter nw;
    pthread_t th;
    size_t len, i;
    unsigned long q0;
    int fd, seen = 0, status;
    long woken;
    if (sh == MAP_FAILED || pv == MAP_FAILED || ro == MAP_FAILED || none == MAP_FAILED)
      sysbail("mmap");
    sh[0] = pv[0] = 1;
    len = 0;
    ok(sysctl(mib, 5, NULL, &len, NULL, 0) == 0 && len > 0 && len % sizeof *kv == 0,
       "VM_PROC_MAP with no buffer: the length needed, a whole number of records (uvm_map.c sysctl_vmproc)");
    mib[4] = 0;
    errno = 0;
    ok(sysctl(mib, 5, NULL, &len, NULL, 0) == -1 && errno == EINVAL, "elem_size 0: EINVAL");
    mib[4] = (int)sizeof *kv;
    errno = 0;
    ok(sysctl(mib, 4, NULL, &len, NULL, 0) == -1 && errno == EINVAL, "a name of 4 ints: EINVAL");
    len = sizeof one;
    errno = 0;
    ok(sysctl(mib, 5, &one, &len, NULL, 0) == -1 && errno == ENOSPC && len > sizeof one,
       "room for one record: ENOSPC and the length needed");
    len = 0;
    sysctl(mib, 5, NULL, &len, NULL, 0);
    len += 16 * sizeof *kv;
    kv = malloc(len);
    if (!kv || sysctl(mib, 5, kv, &len, NULL, 0) != 0)
      sysbail("sysctl");
    for (i = 0; i < len / sizeof *kv; i++) {
      if (kv[i].kve_start == (uintptr_t)sh && kv[i].kve_inheritance == 0 && !(kv[i].kve_flags & KVME_FLAG_COW)
          && kv[i].kve_type != KVME_TYPE_VNODE)
        seen |= 1;
      if (kv[i].kve_start == (uintptr_t)pv && kv[i].kve_inheritance == 1 && (kv[i].kve_flags & KVME_FLAG_COW))
        seen |= 2;
    }
    free(kv);
    ok(seen == 3, "pid -1 (the caller): MAP_SHARED|MAP_ANON shows MAP_INHERIT_SHARE, no COW, no file; "
       "a private mapping KVME_FLAG_COW, MAP_INHERIT_COPY");

    ok(pf_netbsd_shim_object_id(pv + 8, &id) == 0, "objid.c: a private mapping's word: keyed by address (0)");
    ok(pf_netbsd_shim_object_id(ro, &id) == -EFAULT,
       "objid.c: read-only private anonymous memory: -EFAULT (Linux's get_futex_key)");
    ok(pf_netbsd_shim_object_id(sh + pg + 8, &id) == PF_OBJID_KERNEL,
       "objid.c: MAP_SHARED|MAP_ANON: shared, no object NetBSD names: its own futex keys it (KERNEL)");
    if ((fd = mkstemp(path)) < 0 || ftruncate(fd, 2 * pg) != 0)
      sysbail("mkstemp");
    unlink(path);
    filesh = mmap(NULL, (size_t)(2 * pg), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    file2 = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, pg);
    filepv = mmap(NULL, (size_t)pg, PROT_READ, MAP_PRIVATE, fd, pg);
    close(fd);
    if (filesh == MAP_FAILED || file2 == MAP_FAILED || filepv == MAP_FAILED)
      sysbail("mmap");
    q0 = pf_shim_netbsd_sysctls();
    ok(pf_netbsd_shim_object_id(filesh + pg + 4, &id) == 1 && pf_netbsd_shim_object_id(file2 + 4, &id2) == 1
           && id.dev == id2.dev && id.ino == id2.ino && id.off == id2.off && id.off == (uint64_t)pg + 4
           && pf_shim_netbsd_sysctls() > q0,
       "objid.c: a file's word through two mappings: one key (kve_vn_fsid, kve_vn_fileid, byte offset)");
    ok(pf_netbsd_shim_object_id(filepv + 4, &id2) == 0,
       "objid.c: a read-only MAP_PRIVATE mapping of the file: private, keyed by address");
    seg = objtest_segment(pg);
    ok(pf_netbsd_shim_object_id(seg + 4, &id2) == PF_OBJID_KERNEL, "objid.c: a SysV segment's word: KERNEL");
    objtest_shm_twice("shimnbsd", pg, &m1, &m2);
    {
      struct pf_os_objid a, b;
      ok(pf_netbsd_shim_object_id(m1 + 16, &a) == 1 && pf_netbsd_shim_object_id(m2 + 16, &b) == 1
             && a.dev == b.dev && a.ino == b.ino && a.off == b.off && a.off == 16,
         "objid.c: POSIX shm (a tmpfs file on NetBSD): one key through two mappings");
    }
    ok(pf_netbsd_shim_object_id(none, &id2) == -EFAULT, "objid.c: a PROT_NONE page: -EFAULT");
    gone = objtest_unmapped(pg);
    ok(pf_netbsd_shim_object_id(gone, &id2) == -EFAULT, "objid.c: nothing mapped: -EFAULT");
    fflush(stdout);
    pid = fork();
    if (pid == 0)
      _exit(pf_netbsd_shim_object_id(file2 + 4, &id2) == 1 && id2.dev == id.dev && id2.ino == id.ino
                    && id2.off == id.off ? 0 : 1);
    waitpid(pid, &status, 0);
    ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "objid.c: the same key in a fork child");

    /* the engine on this port, with NetBSD's answer (the real port's build) */
    pf_shim_netbsd_set_identity(1);
    pf_shim_netbsd_set_spurious(0);
    *(volatile uint32_t *)sh = 0;
    pid = objtest_fork_waiter((uint32_t *)sh);
    woken = objtest_wake_until((uint32_t *)sh);
    ok(objtest_child_ok(pid) && woken == 1,
       "pfutex: anonymous shared memory: a fork child's shared wait, on NetBSD's own __futex, woken by the "
       "parent, count %ld (1)", woken);
    {
      struct pfutex_waitv wv = { 0, (uint64_t)(uintptr_t)sh, 0x02, 0 };
      struct timespec abs;
      clock_gettime(CLOCK_MONOTONIC, &abs);
      abs.tv_sec += 1;
      errno = 0;
      ok(pfutex_waitv(&wv, 1, 0, &abs, CLOCK_MONOTONIC) == -1 && errno == ENOSYS,
         "pfutex_waitv on such a word: ENOSYS (NetBSD has no waitv)");
      errno = 0;
      ok(pfutex((uint32_t *)sh, 6 /* FUTEX_LOCK_PI */, 0, NULL, NULL, 0) == -1 && errno == ENOSYS,
         "FUTEX_LOCK_PI on such a word: ENOSYS");
      errno = 0;
      ok(pfutex((uint32_t *)sh, FUTEX_CMP_REQUEUE, 1, (const struct timespec *)1, (uint32_t *)(filesh + 64), 0)
             == -1 && errno == EINVAL,
         "cmp_requeue from such a word to a file's word (the engine's): EINVAL");
      errno = 0;
      ok(pfutex((uint32_t *)sh, FUTEX_CMP_REQUEUE, 1, (const struct timespec *)1, (uint32_t *)sh + 1, 0) == -1
             && errno == ENOSYS,
         "cmp_requeue between two such words: ENOSYS (__futex's requeue is not Linux's: no compare without "
         "waiters, no moved count)");
    }
    *(volatile uint32_t *)(filesh + pg + 4) = 0;
    pid = objtest_fork_waiter((uint32_t *)(filesh + pg + 4));
    woken = objtest_wake_until((uint32_t *)(file2 + 4));
    ok(objtest_child_ok(pid) && woken == 1,
       "pfutex: a file's word: a fork child's shared wait is woken through another mapping, count 1 (%ld)", woken);
    *(volatile uint32_t *)m1 = 0;
    nw.word = (uint32_t *)(m1 + 16);
    *nw.word = 0;
    if (pthread_create(&th, NULL, nb_wait_main, &nw) != 0)
      sysbail("pthread_create");
    woken = objtest_wake_until((uint32_t *)(m2 + 16));
    pthread_join(th, NULL);
    ok(woken == 1 && nw.ret == 0, "pfutex: POSIX shm mapped twice in one process: a wait on one mapping, "
       "woken through the other, count 1");
    objtest_private_words((uint32_t *)pv, (uint32_t *)ro);
    pf_shim_netbsd_set_identity(0);
    ok(pfutex((uint32_t *)sh, FUTEX_WAKE, 1, NULL, NULL, 0) == 0,
       "with the shim's default (Linux's identity) the anonymous word is keyed: 0");
    shmdt(seg);
    munmap(m1, (size_t)pg);
    munmap(m2, (size_t)pg);
    munmap(filesh, (size_t)(2 * pg));
    munmap(file2, (size_t)pg);
    munmap(filepv, (size_t)pg);
    munmap(sh, (size_t)(2 * pg));
    munmap(pv, (size_t)pg);
    munmap(ro, (size_t)pg);
    munmap(none, (size_t)pg);
  }
  return 0;
}
