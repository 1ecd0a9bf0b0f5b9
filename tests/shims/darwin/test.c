/* shim_darwin: the macOS behaviour tests/shims/darwin/shim.c claims, call
 * by call, against the shim directly (not through pfutex), each check
 * naming its source: XNU bsd/kern/sys_ulock.c (sys_ulock_wait2,
 * ulock_wake) and bsd/sys/ulock.h, or Apple's documentation of the os_sync
 * calls.  Then the port's run-time choice: under each
 * PFUTEX_DARWIN_SHIM_API the port (pf_port_darwin_shim) parks through the
 * newest API the "system" has.  Then the Mach VM queries the port's
 * object identity uses (XNU osfmk/mach/vm_region.h, osfmk/vm/vm_map.c) and
 * the identity itself (ports/darwin/objid.c).  Runs once, under
 * emu:darwin-shim. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pft.h"
#include "emu.h"
#include "os.h"
#include "shim.h"

#define OP_P (UL_COMPARE_AND_WAIT | ULF_NO_ERRNO)
#define OP_S (UL_COMPARE_AND_WAIT_SHARED | ULF_NO_ERRNO)

/* A sleeper thread: one call, chosen by kind. */
struct sleeper {
  pthread_t th;
  volatile pid_t tid;
  uint32_t *word;
  int kind;                     /* 0 ulock private, 1 ulock shared, 2 os_sync private, 3 os_sync shared,
                                   4 ulock private timed 10 s, 5 ulock2 private timed 10 s */
  volatile int done;
  int ret, err;
};

static void *
sleeper_main(void *arg)
{
  struct sleeper *s = arg;
  s->tid = pft_gettid();
  errno = 0;
  switch (s->kind) {
  case 0: s->ret = __ulock_wait(OP_P, s->word, 0, 0); break;
  case 1: s->ret = __ulock_wait(OP_S, s->word, 0, 0); break;
  case 2: s->ret = os_sync_wait_on_address(s->word, 0, 4, OS_SYNC_WAIT_ON_ADDRESS_NONE); break;
  case 3: s->ret = os_sync_wait_on_address(s->word, 0, 4, OS_SYNC_WAIT_ON_ADDRESS_SHARED); break;
  case 4: s->ret = __ulock_wait(OP_P, s->word, 0, 10000000u); break;
  case 5: s->ret = __ulock_wait2(OP_P, s->word, 0, 10000000000ull, 0); break;
  }
  s->err = errno;
  __atomic_store_n(&s->done, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

static void
sleeper_start(struct sleeper *s, uint32_t *word, int kind)
{
  memset(s, 0, sizeof *s);
  s->word = word;
  s->kind = kind;
  if (pthread_create(&s->th, NULL, sleeper_main, s) != 0)
    sysbail("pthread_create");
  while (!__atomic_load_n(&s->tid, __ATOMIC_SEQ_CST))
    sched_yield();
  if (pft_wait_asleep(s->tid) != 0)
    bail("sleeper never slept");
}

static void
sleeper_join(struct sleeper *s)
{
  pthread_join(s->th, NULL);
}

static long long
ms_since(long long t0)
{
  return (pft_now_ns() - t0) / 1000000;
}

static void
on_usr1(int sig)
{
  (void)sig;
}

/* The port under one API: a timed park that times out, then an unpark and
 * a park that takes the token.  Exit 0 when only the expected API's calls
 * moved, else a code saying what went wrong. */
static int
child_port(const char *api)
{
  const struct pf_port *pt = &pf_port_darwin_shim;
  struct pf_parker p;
  struct pf_park k;
  struct pf_deadline dl;
  static const struct timespec ms20 = { 0, 20000000 };
  int want_os = strcmp(api, "os_sync") == 0, want2 = strcmp(api, "ulock2") == 0;
  unsigned long c[PF_SHIM_DARWIN_NCOUNT];
  int i;

  if ((os_sync_wait_on_address != NULL) != want_os || (os_sync_wake_by_address_any != NULL) != want_os)
    return 2;                                          /* os_sync hidden wrongly */
  if ((__ulock_wait2 != NULL) != (want_os || want2))
    return 3;                                          /* __ulock_wait2 hidden wrongly */
  memset(&p, 0, sizeof p);
  if (pt->init() != 0 || pt->prepare(&p, &k) != 0)
    return 4;
  for (i = 0; i < PF_SHIM_DARWIN_NCOUNT; i++)
    c[i] = pf_shim_darwin_count(i);
  pf_deadline_from_rel(&dl, &ms20);
  if (pt->park(&p, &k, 0, &dl) != -ETIMEDOUT)
    return 5;
  pt->unpark(&k, 0);
  if (pt->park(&p, &k, 0, NULL) != 0)
    return 6;
  pt->prepare(&p, &k);
  pf_deadline_from_rel(&dl, &ms20);
  if (pt->park(&p, &k, 1, &dl) != -ETIMEDOUT)          /* a region's park, shared */
    return 7;
  pt->unpark(&k, 1);
  if ((pf_shim_darwin_count(PF_SHIM_DARWIN_OS_SYNC_WAIT) > c[PF_SHIM_DARWIN_OS_SYNC_WAIT]) != want_os
      || (pf_shim_darwin_count(PF_SHIM_DARWIN_OS_SYNC_WAKE) > c[PF_SHIM_DARWIN_OS_SYNC_WAKE]) != want_os)
    return 8;
  if ((pf_shim_darwin_count(PF_SHIM_DARWIN_ULOCK_WAIT2) > c[PF_SHIM_DARWIN_ULOCK_WAIT2]) != want2)
    return 9;
  if ((pf_shim_darwin_count(PF_SHIM_DARWIN_ULOCK_WAIT) > c[PF_SHIM_DARWIN_ULOCK_WAIT]) != (!want_os && !want2))
    return 10;
  if ((pf_shim_darwin_count(PF_SHIM_DARWIN_ULOCK_WAKE) > c[PF_SHIM_DARWIN_ULOCK_WAKE]) != !want_os)
    return 11;
  return 0;
}

int
main(int argc, char **argv)
{
  static uint32_t w, w2;
  const char *be = getenv("PFUTEX_BACKEND");
  struct sleeper s, s2;
  long long t0;
  int r, i;
  uint32_t *unmapped, *shm;
  pid_t pid;

  if (argc == 3 && strcmp(argv[1], "port") == 0)
    return child_port(argv[2]);
  if (!be || strcmp(be, "emu:darwin-shim") != 0)
    skip_all("the darwin shim's own test runs once, under emu:darwin-shim (backend %s)",
             be ? be : "unset");
  plan_lazy();
  pft_watchdog(60);
  pf_shim_darwin_inject(0, 0);                         /* exact checks first */

  /* ---- __ulock_wait / __ulock_wait2 ---- */
  w = 1;
  is_int(0, __ulock_wait(OP_P, &w, 0, 0),
         "mismatch returns >= 0 at once, untimed (sys_ulock_wait2: value != args->value -> ret 0)");
  w = 0;
  is_int(0, __ulock_wait(OP_P, &w, (uint64_t)1 << 32, 0),
         "a 32-bit op compares the zero-extended word with the 64-bit value: high bits never match");
  t0 = pft_now_ns();
  is_int(-ETIMEDOUT, __ulock_wait(OP_P, &w, 0, 30000),
         "__ulock_wait: microseconds timeout, ETIMEDOUT (THREAD_TIMED_OUT)");
  ok(ms_since(t0) >= 30, "... after at least 30 ms (%lld ms)", ms_since(t0));
  t0 = pft_now_ns();
  is_int(-ETIMEDOUT, __ulock_wait2(OP_P, &w, 0, 30000000ull, 0), "__ulock_wait2: nanoseconds timeout");
  ok(ms_since(t0) >= 30, "... after at least 30 ms (%lld ms)", ms_since(t0));
  errno = 0;
  r = __ulock_wait(UL_COMPARE_AND_WAIT, &w, 0, 1000);
  ok(r == -1 && errno == ETIMEDOUT, "without ULF_NO_ERRNO: -1 and errno (%d, %s)", r, pft_errname(errno));
  is_int(-EINVAL, __ulock_wait(OP_P, NULL, 0, 1000), "address 0: EINVAL");
  is_int(-EINVAL, __ulock_wait(OP_P, (char *)&w + 2, 0, 1000), "misaligned address: EINVAL");
  is_int(-EINVAL, __ulock_wait(OP_P | ULF_WAKE_ALL, &w, 0, 1000), "a flag outside ULF_WAIT_MASK: EINVAL");
  is_int(-EINVAL, __ulock_wait(7 | ULF_NO_ERRNO, &w, 0, 1000), "an unknown opcode: EINVAL");
  unmapped = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (unmapped == MAP_FAILED)
    sysbail("mmap");
  munmap(unmapped, 4096);
  is_int(-EFAULT, __ulock_wait(OP_P, unmapped, 0, 1000), "private op, unmapped word: EFAULT (copyin)");
  is_int(-EINVAL, __ulock_wait(OP_S, unmapped, 0, 1000),
         "shared op, unmapped word: EINVAL (uaddr_findobj fails)");

  is_int(-ENOENT, __ulock_wake(OP_P, &w, 0), "wake, nobody waiting: ENOENT (ull_get ULL_MUST_EXIST)");
  is_int(-ENOENT, __ulock_wake(OP_S, &w, 0), "shared wake, nobody waiting: ENOENT");
  is_int(-ENOENT, __ulock_wake(OP_P, unmapped, 0), "private wake reads no memory: unmapped is ENOENT");
  is_int(-EINVAL, __ulock_wake(OP_S, unmapped, 0), "shared wake of an unmapped word: EINVAL");
  is_int(-EINVAL, __ulock_wake(OP_P, NULL, 0), "wake of address 0: EINVAL");
  is_int(-EINVAL, __ulock_wake(OP_P | ULF_WAIT_CANCEL_POINT, &w, 0), "wake flag outside ULF_WAKE_MASK: EINVAL");
  errno = 0;
  r = __ulock_wake(UL_COMPARE_AND_WAIT, &w, 0);
  ok(r == -1 && errno == ENOENT, "wake without ULF_NO_ERRNO: -1, errno ENOENT");

  w = 0;
  sleeper_start(&s, &w, 0);
  is_int(0, __ulock_wake(OP_P, &w, 0), "wake of a sleeper: 0 (no count)");
  sleeper_join(&s);
  is_int(0, s.ret, "the sleeper returned >= 0 (waiters left: 0)");
  sleeper_start(&s, &w, 0);
  sleeper_start(&s2, &w, 0);
  is_int(0, __ulock_wake(OP_P, &w, 0), "without ULF_WAKE_ALL one is woken (waitq_wakeup64_one)");
  for (i = 0; i < 2000 && !s.done && !s2.done; i++)
    usleep(1000);
  usleep(50000);
  is_int(1, s.done + s2.done, "... exactly one of two returned");
  is_int(0, __ulock_wake(OP_P | ULF_WAKE_ALL, &w, 0), "ULF_WAKE_ALL wakes the rest");
  sleeper_join(&s);
  sleeper_join(&s2);
  is_int(-ENOENT, __ulock_wake(OP_P | ULF_WAKE_ALL, &w, 0), "... then nobody is left: ENOENT");

  sleeper_start(&s, &w, 1);
  is_int(-ENOENT, __ulock_wake(OP_P, &w, 0),
         "a private wake does not reach a shared waiter (ULK_UADDR vs ULK_XPROC keys)");
  usleep(20000);
  ok(!s.done, "... which still sleeps");
  is_int(0, __ulock_wake(OP_S, &w, 0), "a shared wake does");
  sleeper_join(&s);

  /* Signals: EINTR, never restarted (EINTR, not ERESTART), SA_RESTART or not. */
  pft_install(SIGUSR1, on_usr1, SA_RESTART);
  sleeper_start(&s, &w, 0);
  pthread_kill(s.th, SIGUSR1);
  sleeper_join(&s);
  is_int(-EINTR, s.ret, "untimed __ulock_wait after an SA_RESTART handler: EINTR");
  sleeper_start(&s, &w, 4);
  pthread_kill(s.th, SIGUSR1);
  sleeper_join(&s);
  is_int(-EINTR, s.ret, "timed __ulock_wait after a handler: EINTR");
  sleeper_start(&s, &w, 5);
  pthread_kill(s.th, SIGUSR1);
  sleeper_join(&s);
  is_int(-EINTR, s.ret, "timed __ulock_wait2 after a handler: EINTR");

  /* Across processes: the shared op keys by VM object and offset. */
  shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (shm == MAP_FAILED)
    sysbail("mmap shared");
  *shm = 0;
  fflush(stdout);
  pid = fork();
  if (pid == 0) {
    int rr = __ulock_wait(OP_S, shm, 0, 20000000u);
    _exit(rr == 0 && *shm == 1 ? 0 : 1);
  }
  while (pft_task_state(pid, 0) != 'S')
    usleep(1000);
  usleep(20000);
  is_int(-ENOENT, __ulock_wake(OP_P, shm, 0), "another process's private wake does not reach it");
  *shm = 1;
  is_int(0, __ulock_wake(OP_S, shm, 0), "another process's shared wake does");
  waitpid(pid, &r, 0);
  ok(WIFEXITED(r) && WEXITSTATUS(r) == 0, "... and the waiter in the child returned >= 0");

  /* ---- os_sync ---- */
  w = 1;
  is_int(0, os_sync_wait_on_address(&w, 0, 4, OS_SYNC_WAIT_ON_ADDRESS_NONE),
         "os_sync: mismatch returns >= 0 (\"the number of outstanding waiters\")");
  w = 0;
  errno = 0;
  t0 = pft_now_ns();
  r = os_sync_wait_on_address_with_timeout(&w, 0, 4, OS_SYNC_WAIT_ON_ADDRESS_NONE,
                                           OS_CLOCK_MACH_ABSOLUTE_TIME, 30000000ull);
  ok(r == -1 && errno == ETIMEDOUT && ms_since(t0) >= 30,
     "_with_timeout: relative ns, -1/ETIMEDOUT after it (%d %s, %lld ms)", r, pft_errname(errno), ms_since(t0));
  errno = 0;
  r = os_sync_wait_on_address_with_deadline(&w, 0, 4, OS_SYNC_WAIT_ON_ADDRESS_NONE,
                                            OS_CLOCK_MACH_ABSOLUTE_TIME,
                                            pf_shim_darwin_mach_absolute_time() + 30000000ull);
  ok(r == -1 && errno == ETIMEDOUT, "_with_deadline: absolute mach time, ETIMEDOUT");
  w = 1;
  is_int(0, os_sync_wait_on_address_with_deadline(&w, 0, 4, OS_SYNC_WAIT_ON_ADDRESS_NONE,
                                                  OS_CLOCK_MACH_ABSOLUTE_TIME, 1),
         "_with_deadline: a mismatch wins over a passed deadline (compare, then block)");
  w = 0;
  errno = 0;
  r = os_sync_wait_on_address_with_timeout(&w, 0, 4, OS_SYNC_WAIT_ON_ADDRESS_NONE, 0, 1000);
  ok(r == -1 && errno == EINVAL, "a clockid other than OS_CLOCK_MACH_ABSOLUTE_TIME: EINVAL");
  errno = 0;
  r = os_sync_wait_on_address(&w, 0, 4, 2);
  ok(r == -1 && errno == EINVAL, "unknown flags: EINVAL");
  errno = 0;
  r = os_sync_wait_on_address((char *)&w + 2, 0, 4, OS_SYNC_WAIT_ON_ADDRESS_NONE);
  ok(r == -1 && errno == EINVAL, "an address not aligned to size: EINVAL");
  errno = 0;
  r = os_sync_wake_by_address_any(&w, 4, OS_SYNC_WAKE_BY_ADDRESS_NONE);
  ok(r == -1 && errno == ENOENT, "wake_any, nobody waiting: -1/ENOENT");
  sleeper_start(&s, &w, 2);
  is_int(0, os_sync_wake_by_address_any(&w, 4, OS_SYNC_WAKE_BY_ADDRESS_NONE), "wake_any wakes a sleeper: 0");
  sleeper_join(&s);
  is_int(0, s.ret, "... which returned >= 0");
  sleeper_start(&s, &w, 3);
  sleeper_start(&s2, &w2, 3);
  errno = 0;
  r = os_sync_wake_by_address_any(&w, 4, OS_SYNC_WAKE_BY_ADDRESS_NONE);
  ok(r == -1 && errno == ENOENT, "a NONE wake does not reach a SHARED waiter");
  is_int(0, os_sync_wake_by_address_all(&w, 4, OS_SYNC_WAKE_BY_ADDRESS_SHARED), "a SHARED wake_all does");
  sleeper_join(&s);
  is_int(0, os_sync_wake_by_address_all(&w2, 4, OS_SYNC_WAKE_BY_ADDRESS_SHARED), "(and the other word's)");
  sleeper_join(&s2);
  sleeper_start(&s, &w, 2);
  pthread_kill(s.th, SIGUSR1);
  sleeper_join(&s);
  ok(s.ret == -1 && s.err == EINTR, "untimed os_sync_wait_on_address after an SA_RESTART handler: -1/EINTR");

  /* ---- Injections ---- */
  pf_shim_darwin_inject(1, 0);
  t0 = pft_now_ns();
  is_int(0, __ulock_wait(OP_P, &w, 0, 5000000u),
         "injected stale wake: >= 0 at once while the word is unchanged");
  ok(ms_since(t0) < 1000, "... without sleeping (%lld ms)", ms_since(t0));
  pf_shim_darwin_inject(0, 1);
  is_int(-EFAULT, __ulock_wait(OP_P, &w, 0, 5000000u), "injected EFAULT (copyin of a non-resident page)");
  pf_shim_darwin_inject(0, 0);

  /* ---- Mach VM queries (ports/darwin/objid.c), then the port's use ---- */
  {
    long pg = sysconf(_SC_PAGESIZE);
    mach_vm_address_t a;
    mach_vm_size_t sz;
    vm_region_basic_info_data_64_t bi;
    vm_region_extended_info_data_t ei;
    vm_page_info_basic_data_t pi, pi2;
    mach_msg_type_number_t cnt;
    mach_port_t on;
    char *sh = mmap(NULL, (size_t)(2 * pg), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char *pv = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *ro = mmap(NULL, (size_t)pg, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *hole = mmap(NULL, (size_t)(3 * pg), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    char *alias;
    unsigned long n_region, n_page;
    struct pf_os_objid id, id2;
    if (sh == MAP_FAILED || pv == MAP_FAILED || ro == MAP_FAILED || hole == MAP_FAILED)
      sysbail("mmap");
    munmap(hole + pg, (size_t)pg);                     /* a hole between two pages */
    a = (mach_vm_address_t)(uintptr_t)(sh + pg + 8);
    cnt = VM_REGION_BASIC_INFO_COUNT_64;
    on = 7;
    ok(mach_vm_region(mach_task_self(), &a, &sz, VM_REGION_BASIC_INFO_64, (vm_region_info_t)&bi, &cnt, &on)
           == KERN_SUCCESS && a == (uintptr_t)sh && sz == (mach_vm_size_t)(2 * pg)
           && bi.inheritance == VM_INHERIT_SHARE && bi.protection == (VM_PROT_READ | VM_PROT_WRITE)
           && on == MACH_PORT_NULL,
       "mach_vm_region: the region holding the address, its start and size; MAP_SHARED is "
       "VM_INHERIT_SHARE (kern_mman.c)");
    a = (mach_vm_address_t)(uintptr_t)pv;
    cnt = VM_REGION_BASIC_INFO_COUNT_64;
    ok(mach_vm_region(mach_task_self(), &a, &sz, VM_REGION_BASIC_INFO_64, (vm_region_info_t)&bi, &cnt, NULL)
           == KERN_SUCCESS && bi.inheritance == VM_INHERIT_COPY,
       "mach_vm_region: a private mapping is VM_INHERIT_COPY (the default)");
    a = (mach_vm_address_t)(uintptr_t)(hole + pg);
    cnt = VM_REGION_BASIC_INFO_COUNT_64;
    ok(mach_vm_region(mach_task_self(), &a, &sz, VM_REGION_BASIC_INFO_64, (vm_region_info_t)&bi, &cnt, NULL)
           == KERN_SUCCESS && a == (uintptr_t)(hole + 2 * pg),
       "mach_vm_region in a hole: the next region (vm_map_region: vme_next)");
    cnt = VM_REGION_BASIC_INFO_COUNT_64 - 1;
    ok(mach_vm_region(mach_task_self(), &a, &sz, VM_REGION_BASIC_INFO_64, (vm_region_info_t)&bi, &cnt, NULL)
           == KERN_INVALID_ARGUMENT, "mach_vm_region with a short count: KERN_INVALID_ARGUMENT");
    a = (mach_vm_address_t)(uintptr_t)ro;
    cnt = VM_REGION_EXTENDED_INFO_COUNT;
    ok(mach_vm_region(mach_task_self(), &a, &sz, VM_REGION_EXTENDED_INFO, (vm_region_info_t)&ei, &cnt, NULL)
           == KERN_SUCCESS && ei.protection == VM_PROT_READ && ei.external_pager == 0,
       "VM_REGION_EXTENDED_INFO: anonymous memory has no external pager");
    cnt = VM_PAGE_INFO_BASIC_COUNT;
    memset(&pi, 0x55, sizeof pi);
    ok(mach_vm_page_info(mach_task_self(), (uintptr_t)(hole + pg), VM_PAGE_INFO_BASIC, (vm_page_info_t)&pi,
                         &cnt) == KERN_SUCCESS && pi.object_id == 0 && pi.offset == 0 && pi.disposition == 0,
       "mach_vm_page_info on an unmapped address: KERN_SUCCESS and zeroes (vm_map_page_range_info_internal)");
    ok(pf_port_darwin_shim.object_id(hole + pg, &id) == -EFAULT, "the port: a hole: -EFAULT");
    ok(pf_port_darwin_shim.object_id(hole, &id) == -EFAULT, "the port: a PROT_NONE page: -EFAULT");
    /* one object through two mappings (memfd-like: a shared file), and in a child */
    {
      char path[] = "/tmp/pfutex-shimdarwin-XXXXXX";
      int fd = mkstemp(path);
      if (fd < 0 || ftruncate(fd, 2 * pg) != 0)
        sysbail("mkstemp");
      unlink(path);
      alias = mmap(NULL, (size_t)(2 * pg), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      shm = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_SHARED, fd, pg);
      close(fd);
      if (alias == MAP_FAILED || (void *)shm == MAP_FAILED)
        sysbail("mmap");
    }
    cnt = VM_PAGE_INFO_BASIC_COUNT;
    mach_vm_page_info(mach_task_self(), (uintptr_t)(alias + pg + 12), VM_PAGE_INFO_BASIC, (vm_page_info_t)&pi, &cnt);
    cnt = VM_PAGE_INFO_BASIC_COUNT;
    mach_vm_page_info(mach_task_self(), (uintptr_t)shm + 12, VM_PAGE_INFO_BASIC, (vm_page_info_t)&pi2, &cnt);
    ok(pi.object_id != 0 && pi.object_id == pi2.object_id && pi.offset == (uint64_t)pg + 12
           && pi2.offset == pi.offset && pi.depth == 0,
       "mach_vm_page_info: one object through two mappings at different addresses, the byte offset in it");
    /* the port's identity, through the shim's calls */
    n_region = pf_shim_darwin_count(PF_SHIM_DARWIN_VM_REGION);
    n_page = pf_shim_darwin_count(PF_SHIM_DARWIN_PAGE_INFO);
    ok(pf_port_darwin_shim.object_id != NULL
           && pf_port_darwin_shim.object_id(alias + pg + 12, &id) == 1
           && pf_port_darwin_shim.object_id((char *)shm + 12, &id2) == 1 && id.ino == id2.ino
           && id.dev == id2.dev && id.off == id2.off && id.off == (uint64_t)pg + 12,
       "the port: one key for one word through two mappings (object_id, offset)");
    ok(pf_shim_darwin_count(PF_SHIM_DARWIN_VM_REGION) == n_region + 2
           && pf_shim_darwin_count(PF_SHIM_DARWIN_PAGE_INFO) == n_page + 2,
       "... asked with mach_vm_region and mach_vm_page_info, once each per word");
    ok(pf_port_darwin_shim.object_id(pv, &id) == 0, "the port: a private mapping is keyed by address (0)");
    ok(pf_port_darwin_shim.object_id(ro, &id) == -EFAULT,
       "the port: read-only private anonymous memory: -EFAULT (Linux's get_futex_key)");
    /* a shared anonymous mapping inherited by a child: the same key there */
    if (pf_port_darwin_shim.object_id(sh + 4, &id) != 1)
      id.ino = 0;
    fflush(stdout);
    pid = fork();
    if (pid == 0)
      _exit(pf_port_darwin_shim.object_id(sh + 4, &id2) == 1 && id2.ino == id.ino && id2.off == id.off
                ? 0 : 1);
    waitpid(pid, &r, 0);
    ok(id.ino != 0 && WIFEXITED(r) && WEXITSTATUS(r) == 0,
       "the port: MAP_SHARED|MAP_ANONYMOUS after fork: the child gets the parent's key");
  }

  /* ---- The port's run-time choice, one process per "system" ---- */
  {
    static const char *apis[] = { "os_sync", "ulock2", "ulock" };
    for (i = 0; i < 3; i++) {
      char *args[4];
      fflush(stdout);
      pid = fork();
      if (pid == 0) {
        setenv("PFUTEX_DARWIN_SHIM_API", apis[i], 1);
        args[0] = argv[0];
        args[1] = (char *)"port";
        args[2] = (char *)apis[i];
        args[3] = NULL;
        execv("/proc/self/exe", args);
        _exit(127);
      }
      waitpid(pid, &r, 0);
      ok(WIFEXITED(r) && WEXITSTATUS(r) == 0,
         "PFUTEX_DARWIN_SHIM_API=%s: the port parks and unparks through it alone (exit %d)", apis[i],
         WIFEXITED(r) ? WEXITSTATUS(r) : -1);
    }
  }
  return 0;
}
