/* shim_openbsd: the OpenBSD futex(2) behaviour tests/shims/openbsd/shim.c
 * claims, call by call, each check naming the statement of futex.2
 * (openbsd/src lib/libc/sys/futex.2) or sys_futex.c it models.  Tests the
 * shim directly, not through pfutex; runs once (backend emu:openbsd-shim). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/wait.h>
#include <unistd.h>
#include "pft.h"
#include "os.h"
#include "pfutex.h"
#include "shim.h"
#include "../objtest.h"

struct waiter {
  volatile uint32_t *word;
  int op;
  const struct timespec *ts;
  pthread_t th;
  volatile pid_t tid;
  int ret, err;
};

static void *
waiter_main(void *arg)
{
  struct waiter *w = arg;
  w->tid = pft_gettid();
  errno = 0;
  w->ret = futex(w->word, w->op, 0, w->ts, NULL);
  w->err = errno;
  return NULL;
}

static void
waiter_start(struct waiter *w)
{
  w->tid = 0;
  if (pthread_create(&w->th, NULL, waiter_main, w) != 0)
    bail("pthread_create");
  while (!w->tid)
    sched_yield();
  pft_wait_asleep(w->tid);
}

static volatile sig_atomic_t hits;
static void on_sig(int sig) { (void)sig; hits++; }

int
main(void)
{
  static volatile uint32_t word;
  const char *be = getenv("PFUTEX_BACKEND");
  struct timespec ts, t0, t1;
  struct waiter w;
  volatile uint32_t *shared;
  int r, e, st;
  pid_t pid;

  if (!be || strcmp(be, "emu:openbsd-shim") != 0)
    skip_all("the shim's own test runs once, under emu:openbsd-shim");
  PFT_SKIP_UNDER_TSAN();
  plan(24 + 27);
  pft_watchdog(60);
  pf_shim_openbsd_set_spurious(0);

  /* <sys/futex.h> */
  ok(FUTEX_WAIT == 1 && FUTEX_WAKE == 2 && FUTEX_REQUEUE == 3 && FUTEX_PRIVATE_FLAG == 128,
     "sys/futex.h: FUTEX_WAIT 1, FUTEX_WAKE 2, FUTEX_REQUEUE 3, FUTEX_PRIVATE_FLAG 128");

  /* futex.2 ERRORS: [EAGAIN] the value pointed to by uaddr is not val */
  word = 5;
  errno = 0;
  r = futex(&word, FUTEX_WAIT_PRIVATE, 4, NULL, NULL);
  ok(r == -1 && errno == EAGAIN, "EAGAIN: *uaddr != val (got %d, %s)", r, pft_errname(errno));

  /* futex.2: blocked "until timeout expires"; the timeout is relative */
  word = 0;
  ts.tv_sec = 0;
  ts.tv_nsec = 30000000;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  errno = 0;
  r = futex(&word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL);
  e = errno;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  ok(r == -1 && e == ETIMEDOUT, "ETIMEDOUT: the timeout expired (got %d, %s)", r, pft_errname(e));
  ok(pft_elapsed_ns(&t0, &t1) >= 30000000, "the timeout is relative: slept %lld ns of 30 ms",
     pft_elapsed_ns(&t0, &t1));

  /* futex.2 ERRORS: [EINVAL] a second value less than zero, or a
   * nanosecond value less than zero or >= 1000 million */
  ts.tv_sec = -1;
  ts.tv_nsec = 0;
  errno = 0;
  r = futex(&word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL);
  ok(r == -1 && errno == EINVAL, "EINVAL: tv_sec < 0");
  ts.tv_sec = 0;
  ts.tv_nsec = 1000000000L;
  errno = 0;
  r = futex(&word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL);
  ok(r == -1 && errno == EINVAL, "EINVAL: tv_nsec >= 1000 million");

  /* futex.2 ERRORS: [ENOSYS] the op argument is invalid */
  errno = 0;
  r = futex(&word, 9, 0, NULL, NULL);
  ok(r == -1 && errno == ENOSYS, "ENOSYS: an op OpenBSD does not have (9, Linux's WAIT_BITSET)");

  /* futex.2 RETURN VALUES: FUTEX_WAKE returns the number of woken threads;
   * FUTEX_WAIT returns zero if woken by a matching FUTEX_WAKE */
  is_int(0, futex(&word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL), "FUTEX_WAKE with nobody waiting: 0");
  memset(&w, 0, sizeof w);
  w.word = &word;
  w.op = FUTEX_WAIT_PRIVATE;
  waiter_start(&w);
  is_int(1, futex(&word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL), "FUTEX_WAKE: 1 woken");
  pthread_join(w.th, NULL);
  ok(w.ret == 0, "FUTEX_WAIT woken by FUTEX_WAKE: 0 (got %d, %s)", w.ret, pft_errname(w.err));

  /* futex.2 ERRORS: [EINTR] a signal arrived; [ECANCELED] a signal arrived
   * and SA_RESTART was set -- untimed and timed alike (sys_futex.c maps the
   * sleep's ERESTART to ECANCELED: never restarted) */
  pft_install(SIGUSR1, on_sig, 0);
  memset(&w, 0, sizeof w);
  w.word = &word;
  w.op = FUTEX_WAIT_PRIVATE;
  waiter_start(&w);
  pthread_kill(w.th, SIGUSR1);
  pthread_join(w.th, NULL);
  ok(w.ret == -1 && w.err == EINTR, "EINTR: untimed, handler without SA_RESTART (got %d, %s)",
     w.ret, pft_errname(w.err));
  pft_install(SIGUSR1, on_sig, SA_RESTART);
  memset(&w, 0, sizeof w);
  w.word = &word;
  w.op = FUTEX_WAIT_PRIVATE;
  waiter_start(&w);
  pthread_kill(w.th, SIGUSR1);
  pthread_join(w.th, NULL);
  ok(w.ret == -1 && w.err == ECANCELED, "ECANCELED: untimed, handler with SA_RESTART (got %d, %s)",
     w.ret, pft_errname(w.err));
  ts.tv_sec = 30;
  ts.tv_nsec = 0;
  memset(&w, 0, sizeof w);
  w.word = &word;
  w.op = FUTEX_WAIT;
  w.ts = &ts;
  waiter_start(&w);
  pthread_kill(w.th, SIGUSR1);
  pthread_join(w.th, NULL);
  ok(w.ret == -1 && w.err == ECANCELED, "ECANCELED: timed, handler with SA_RESTART (got %d, %s)",
     w.ret, pft_errname(w.err));
  is_int(3, hits, "the handlers ran");
  signal(SIGUSR1, SIG_DFL);

  /* futex.2 up to 2019 (and sys_futex.c rev 1.1-1.9): "an error number is
   * returned"; today -1 and errno */
  pf_shim_openbsd_set_oldret(1);
  word = 5;
  errno = 0;
  r = futex(&word, FUTEX_WAIT_PRIVATE, 4, NULL, NULL);
  ok(r == EAGAIN && errno == 0, "old convention: EAGAIN as the return value (got %d)", r);
  ts.tv_sec = 0;
  ts.tv_nsec = 1000000;
  word = 0;
  r = futex(&word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL);
  ok(r == ETIMEDOUT, "old convention: ETIMEDOUT as the return value (got %d)", r);
  pf_shim_openbsd_set_oldret(0);

  /* Spurious wakeups (futex.2 promises none; the port must survive them,
   * as pthread code on OpenBSD does): the shim's knob */
  pf_shim_openbsd_set_spurious(1);
  ts.tv_sec = 5;
  ts.tv_nsec = 0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  r = futex(&word, FUTEX_WAIT_PRIVATE, 0, &ts, NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  ok(r == 0 && pft_elapsed_ns(&t0, &t1) < 1000000000LL, "spurious wakeup injected: 0 at once");
  pf_shim_openbsd_set_spurious(0);

  /* Process-shared futexes (sys_futex.c futex_get, since 2018-06-03): a
   * futex without FUTEX_PRIVATE_FLAG on shared memory is keyed by (object,
   * offset): another process's FUTEX_WAKE finds the waiter.  With the flag,
   * it is keyed in the waiter's own process: the other's wake finds none. */
  shared = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shared == MAP_FAILED)
    sysbail("mmap");
  for (st = 0; st < 2; st++) {
    int op = st ? FUTEX_PRIVATE_FLAG : 0, woken = 0, status;
    shared[0] = 0;
    shared[1] = 0;
    fflush(stdout);
    pft_settle_threads();
    if ((pid = fork()) < 0)
      sysbail("fork");
    if (pid == 0) {
      struct timespec to = { 3, 0 };
      pf_shim_openbsd_set_spurious(0);
      shared[1] = 1;
      r = futex(&shared[0], FUTEX_WAIT | op, 0, &to, NULL);
      _exit(r == 0 ? 0 : errno == ETIMEDOUT ? 2 : 3);
    }
    while (!shared[1])
      sched_yield();
    while (pft_task_state(pid, 0) != 'S' && pft_task_state(pid, 0) != -1)
      usleep(1000);
    for (r = 0; r < 50 && !woken; r++) {
      woken = futex(&shared[0], FUTEX_WAKE | op, 1, NULL, NULL);
      if (!woken && !st)
        usleep(10000);
      if (st)
        break;
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
  /* a shared waiter is not woken by a private wake of the same word */
  memset(&w, 0, sizeof w);
  w.word = &word;
  w.op = FUTEX_WAIT;
  waiter_start(&w);
  is_int(0, futex(&word, FUTEX_WAKE_PRIVATE, 1, NULL, NULL), "a private wake misses a shared waiter");
  is_int(1, futex(&word, FUTEX_WAKE, 1, NULL, NULL), "a shared wake finds it");
  pthread_join(w.th, NULL);
  ok(w.ret == 0, "and it returned 0");
  /* -- the map query and the port's answer (ports/openbsd/objid.c) ------- */
  {
    long pg = sysconf(_SC_PAGESIZE);
    int mib[4] = { CTL_KERN, KERN_PROC_VMMAP, (int)getpid(), 0 };
    char *sh = mmap(NULL, (size_t)(3 * pg), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char *pv = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *ro = mmap(NULL, (size_t)pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *none = mmap(NULL, (size_t)pg, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *many, *filesh, *filepv, *seg, *gone;
    char path[] = "/tmp/pfutex-shimobsd-XXXXXX";
    struct kinfo_vmentry k[4];
    struct pf_os_objid id;
    struct timespec rel = { 0, 20 * 1000 * 1000 };
    size_t len;
    unsigned long q0;
    int fd, i, nmaps = 1800;
    if (sh == MAP_FAILED || pv == MAP_FAILED || ro == MAP_FAILED || none == MAP_FAILED)
      sysbail("mmap");
    sh[0] = pv[0] = 1;
    len = 0;
    ok(sysctl(mib, 3, NULL, &len, NULL, 0) == 0 && len == 64 * 1024,
       "KERN_PROC_VMMAP with no buffer: the largest length, VMMAP_MAXLEN (kern_sysctl.c sysctl_proc_vmmap)");
    len = sizeof k[0] + 1;
    errno = 0;
    ok(sysctl(mib, 3, k, &len, NULL, 0) == -1 && errno == EINVAL, "a length not a multiple of the record: EINVAL");
    len = sizeof k;
    errno = 0;
    ok(sysctl(mib, 4, k, &len, NULL, 0) == -1 && errno == ENOTDIR, "a name of 4 ints: ENOTDIR");
    mib[2] = (int)getpid() + 1;
    errno = 0;
    ok(sysctl(mib, 3, k, &len, NULL, 0) == -1 && errno == EPERM, "another process's map: refused (root only)");
    mib[2] = (int)getpid();
    memset(k, 0, sizeof k);
    k[0].kve_start = (unsigned long)(uintptr_t)sh;
    len = sizeof k;
    ok(sysctl(mib, 3, k, &len, NULL, 0) == 0 && len >= sizeof k[0] && k[0].kve_start == (uintptr_t)sh
           && k[0].kve_end == (uintptr_t)sh + 3 * (uintptr_t)pg && k[0].kve_inheritance == 0
           && !(k[0].kve_etype & KVE_ET_COPYONWRITE)
           && k[0].kve_protection == (KVE_PROT_READ | KVE_PROT_WRITE),
       "starting at a MAP_SHARED mapping's start: that entry first, MAP_INHERIT_SHARE, not copy-on-write");
    memset(k, 0, sizeof k);
    k[0].kve_start = (unsigned long)(uintptr_t)sh + (unsigned long)pg;
    len = sizeof k;
    ok(sysctl(mib, 3, k, &len, NULL, 0) == 0 && (len == 0 || k[0].kve_start > (uintptr_t)sh + (uintptr_t)pg),
       "starting inside an entry: the entry holding the address is skipped (uvm_map_fill_vmmap: start >= ...)");
    memset(k, 0, sizeof k);
    k[0].kve_start = (unsigned long)(uintptr_t)pv;
    len = sizeof k;
    ok(sysctl(mib, 3, k, &len, NULL, 0) == 0 && k[0].kve_start == (uintptr_t)pv && k[0].kve_inheritance == 1
           && (k[0].kve_etype & KVE_ET_COPYONWRITE) && !(k[0].kve_etype & KVE_ET_OBJ),
       "a private anonymous mapping: copy-on-write, MAP_INHERIT_COPY, no object");
    memset(k, 0, sizeof k);
    len = 2 * sizeof k[0];
    ok(sysctl(mib, 3, k, &len, NULL, 0) == 0 && len == 2 * sizeof k[0] && k[0].kve_start < k[1].kve_start,
       "start 0, room for 2: the first 2 entries in order, and a full buffer is no error");

    {
      /* the answer for entries the model cannot make (minherit(2)) */
      struct kinfo_vmentry ke;
      int rw = KVE_PROT_READ | KVE_PROT_WRITE, cow = KVE_ET_COPYONWRITE | KVE_ET_NEEDSCOPY, good = 1;
#define CLS(etype, prot, inh, want)                                                              \
      do {                                                                                       \
        memset(&ke, 0, sizeof ke);                                                                 \
        ke.kve_etype = (etype), ke.kve_protection = (prot), ke.kve_inheritance = (inh);             \
        if (pf_openbsd_shim_classify(&ke) != (want)) {                                            \
          diag("classify(etype %#x, prot %d, inheritance %d) = %d, not %d", (unsigned)(etype),  \
               (prot), (inh), pf_openbsd_shim_classify(&ke), (want));                             \
          good = 0;                                                                              \
        }                                                                                        \
      } while (0)
      CLS(cow, rw, 1, 0);                                  /* private anonymous */
      CLS(cow, KVE_PROT_READ, 1, -EFAULT);                 /* read-only private anonymous */
      CLS(cow | KVE_ET_OBJ, KVE_PROT_READ, 1, 0);          /* read-only private file */
      CLS(cow, rw, 0, PF_OBJID_KERNEL);                    /* private, minherit SHARE */
      CLS(0, rw, 0, PF_OBJID_KERNEL);                      /* MAP_SHARED anonymous */
      CLS(KVE_ET_OBJ, rw, 0, PF_OBJID_KERNEL);             /* MAP_SHARED file, SysV */
      CLS(KVE_ET_OBJ, rw, 1, PF_OBJID_NONE);               /* MAP_SHARED, minherit COPY */
      CLS(0, rw, 2, PF_OBJID_NONE);                        /* MAP_SHARED, minherit NONE */
      CLS(0, KVE_PROT_NONE, 0, -EFAULT);                   /* no access */
#undef CLS
      ok(good, "objid.c: each kind of entry: private 0, read-only anonymous EFAULT, inherited shared KERNEL "
         "(futex(2) keys it by object), shared but minherit(2)ed otherwise NONE (futex(2) would key the "
         "bare address across processes)");
    }
    ok(pf_openbsd_shim_object_id(pv + 8, &id) == 0, "objid.c: a private mapping's word: keyed by address (0)");
    ok(pf_openbsd_shim_object_id(ro, &id) == -EFAULT,
       "objid.c: read-only private anonymous memory: -EFAULT (Linux's get_futex_key)");
    ok(pf_openbsd_shim_object_id(sh + pg + 8, &id) == PF_OBJID_KERNEL,
       "objid.c: a word inside a MAP_SHARED|MAP_ANON mapping, past its first page: shared, no identity: "
       "the OS's futex keys it (KERNEL)");
    ok(pf_openbsd_shim_object_id(none, &id) == -EFAULT, "objid.c: a PROT_NONE page: -EFAULT");
    gone = objtest_unmapped(pg);
    ok(pf_openbsd_shim_object_id(gone, &id) == -EFAULT, "objid.c: nothing mapped: -EFAULT");
    if ((fd = mkstemp(path)) < 0 || ftruncate(fd, 2 * pg) != 0)
      sysbail("mkstemp");
    unlink(path);
    filesh = mmap(NULL, (size_t)(2 * pg), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    filepv = mmap(NULL, (size_t)pg, PROT_READ, MAP_PRIVATE, fd, pg);
    close(fd);
    if (filesh == MAP_FAILED || filepv == MAP_FAILED)
      sysbail("mmap");
    ok(pf_openbsd_shim_object_id(filesh + pg + 4, &id) == PF_OBJID_KERNEL,
       "objid.c: a MAP_SHARED file's word: KERNEL (no inode in kinfo_vmentry)");
    ok(pf_openbsd_shim_object_id(filepv + 4, &id) == 0,
       "objid.c: a read-only MAP_PRIVATE file's word: private, keyed by address (a file, not anonymous)");
    seg = objtest_segment(pg);
    ok(pf_openbsd_shim_object_id(seg + 4, &id) == PF_OBJID_KERNEL, "objid.c: a SysV segment's word: KERNEL");
    /* more entries than one buffer holds (64 KiB / record): the walk goes on
     * from the last entry's start + 1 */
    many = mmap(NULL, (size_t)nmaps * (size_t)pg, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (many == MAP_FAILED)
      sysbail("mmap");
    for (i = 0; i < nmaps; i += 2)
      if (mprotect(many + (size_t)i * (size_t)pg, (size_t)pg, PROT_READ) != 0)
        sysbail("mprotect");
    q0 = pf_shim_openbsd_sysctls();
    i = pf_openbsd_shim_object_id(many + (size_t)(nmaps - 1) * (size_t)pg + 8, &id);
    q0 = pf_shim_openbsd_sysctls() - q0;
    ok(nmaps > (int)(64 * 1024 / sizeof k[0]) && i == PF_OBJID_KERNEL && q0 >= 3,
       "objid.c: a word past the first buffer's worth of entries is still found (%lu queries)", q0);

    /* the engine on this port, with OpenBSD's answer (the real port's build) */
    pf_shim_openbsd_set_identity(1);
    pf_shim_openbsd_set_spurious(0);
    *(volatile uint32_t *)sh = 0;
    q0 = pf_shim_openbsd_sysctls();
    pid = objtest_fork_waiter((uint32_t *)sh);
    {
      long woken = objtest_wake_until((uint32_t *)sh);
      ok(objtest_child_ok(pid) && woken == 1 && pf_shim_openbsd_sysctls() > q0,
         "pfutex: MAP_SHARED|MAP_ANON before fork: the child's shared wait, on OpenBSD's own futex(2), "
         "is woken by the parent's shared wake, count %ld (1)", woken);
    }
    errno = 0;
    ok(pfutex((uint32_t *)sh, 0 /* FUTEX_WAIT */, 0, &rel, NULL, 0) == -1 && errno == ETIMEDOUT,
       "pfutex: a shared FUTEX_WAIT there times out (futex(2)'s relative timeout)");
    errno = 0;
    ok(pfutex((uint32_t *)sh, 4 /* FUTEX_CMP_REQUEUE */, 1, (const struct timespec *)1, (uint32_t *)sh + 1, 0)
           == -1 && errno == ENOSYS,
       "pfutex: FUTEX_CMP_REQUEUE there: ENOSYS, loudly (futex(2) cannot compare)");
    {
      long moved = 0, woken = 0;
      int tries;
      ((volatile uint32_t *)sh)[0] = 0;
      ((volatile uint32_t *)sh)[1] = 0;
      pid = objtest_fork_waiter((uint32_t *)sh);
      for (tries = 0; tries < 500 && moved == 0; tries++) {
        moved = pfutex((uint32_t *)sh, 3 /* FUTEX_REQUEUE */, 0, (const struct timespec *)1, (uint32_t *)sh + 1,
                       0);
        if (moved == 0)
          usleep(10000);
      }
      woken = pfutex((uint32_t *)sh + 1, 1 /* FUTEX_WAKE */, 1, NULL, NULL, 0);
      ok(objtest_child_ok(pid) && moved == 1 && woken == 1,
         "pfutex: a plain FUTEX_REQUEUE there moves a fork child's waiter (%ld), a wake of the target "
         "wakes it (%ld): futex(2)'s own", moved, woken);
    }
    errno = 0;
    ok(pfutex((uint32_t *)sh, 10 /* FUTEX_WAKE_BITSET */, 1, NULL, NULL, 2) == -1 && errno == ENOSYS,
       "pfutex: FUTEX_WAKE_BITSET of one bit there: ENOSYS (futex(2) has no bitsets)");
    errno = 0;
    ok(pfutex((uint32_t *)sh, 0 | 128, 0, &rel, NULL, 0) == -1 && errno == ETIMEDOUT,
       "pfutex: FUTEX_WAIT_PRIVATE on the same word: keyed in the process, times out");
    objtest_private_words((uint32_t *)pv, (uint32_t *)ro);
    pf_shim_openbsd_set_identity(0);
    ok(pfutex((uint32_t *)sh, 4 /* FUTEX_CMP_REQUEUE */, 1, (const struct timespec *)1, (uint32_t *)sh + 1, 0)
           == 0,
       "with the shim's default (Linux's identity) the same cmp_requeue is the engine's: 0");
    munmap(many, (size_t)nmaps * (size_t)pg);
    shmdt(seg);
    munmap(filesh, (size_t)(2 * pg));
    munmap(filepv, (size_t)pg);
    munmap(sh, (size_t)(3 * pg));
    munmap(pv, (size_t)pg);
    munmap(ro, (size_t)pg);
    munmap(none, (size_t)pg);
  }
  return 0;
}
