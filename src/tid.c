/* tid.c - src/os.h's thread ids for PI and robust futex words
 * (pfutex_tid) and their liveness.  Windows has its own in ports/win32/os.c.
 *
 * - Linux: gettid(), as the kernel writes it; alive unless kill(tid, 0)
 *   answers ESRCH (kill takes any thread's id) or /proc says zombie;
 * - elsewhere: the pid's low bits beside a slot of the process, unique
 *   among live threads system-wide (below); alive unless the process is
 *   gone, or, in this process, the slot was given back. */
#include "os.h"

#ifndef _WIN32
#include <errno.h>
#include <signal.h>
#include <unistd.h>
#if defined(__linux__) && !defined(PF_TID_GENERIC)
# include <fcntl.h>
# include <stdio.h>
# include <string.h>
# include <sys/syscall.h>

pid_t
pf_os_tid(void)
{
  return (pid_t)syscall(SYS_gettid);
}

/* kill(tid, 0) finds a zombie too (a process killed, not yet reaped; a
 * main thread that called pthread_exit): the kernel counts those as gone
 * for PI, so /proc/<tid>/stat's state is read as well (Z, X: gone). */
int
pf_os_tid_alive(uint32_t tid)
{
  char path[48], buf[256], *p;
  int saved = errno, fd, r;
  ssize_t n;
  if (kill((pid_t)tid, 0) != 0 && errno == ESRCH) {
    errno = saved;
    return 0;
  }
  r = 1;
  snprintf(path, sizeof path, "/proc/%u/stat", (unsigned)tid);
  if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
    if ((n = read(fd, buf, sizeof buf - 1)) > 0) {
      buf[n] = 0;
      if ((p = strrchr(buf, ')')) != NULL && (p[1] == ' ') && (p[2] == 'Z' || p[2] == 'X'))
        r = 0;
    }
    close(fd);
  } else if (errno == ENOENT) {
    r = 0;                                  /* gone meanwhile */
  }
  errno = saved;
  return r;
}
#else
/* Elsewhere (and in tests/tid_generic, which compiles this part under
 * other names on Linux): the pid's low PF_TID_PID_BITS bits (every pid the
 * OS hands out fits: PID_MAX 99999 on FreeBSD, OpenBSD and macOS, 30000 on
 * NetBSD; 999999 on DragonFly) beside a slot of this process, taken from
 * a bitmap when a thread first asks and given back when it exits (a
 * thread-specific data destructor).  Pids are unique among live processes
 * and slots among a process's live threads, so ids are unique among live
 * threads of the whole system, as the contract asks of every process
 * sharing a region.  Beyond PF_TID_SLOTS - 1 live threads asking in one
 * process, slots are shared (the one documented limit).
 *
 * Alive: a process the OS says is gone (kill(pid, 0): ESRCH) has no
 * threads; in this process, a slot given back is a thread gone; a thread
 * of another live process counts as alive (the OS gives no way to ask),
 * so a PI locker of a dead thread of a live process waits, never takes
 * the lock from the living. */
#ifndef PF_TID_PID_BITS
# if defined(__DragonFly__)
#  define PF_TID_PID_BITS 20
# else
#  define PF_TID_PID_BITS 17
# endif
#endif
#define PF_TID_SLOT_BITS (30 - PF_TID_PID_BITS)
#define PF_TID_SLOTS (1u << PF_TID_SLOT_BITS)
#define PF_TID_WORDS ((PF_TID_SLOTS + 31) / 32)

#include <pthread.h>

static volatile unsigned int pf_tid_used[PF_TID_WORDS];   /* bit s: slot s taken (0: never) */
static volatile AO_t pf_tid_hint;
static pthread_once_t pf_tid_once = PTHREAD_ONCE_INIT;
static pthread_key_t pf_tid_key;
static __thread pid_t pf_tid_mine, pf_tid_pid;
static __thread uint32_t pf_tid_slot;

static void
pf_tid_give(uint32_t slot)
{
  volatile unsigned int *w = &pf_tid_used[slot / 32];
  unsigned int bit = 1u << (slot % 32), old;
  do
    old = AO_int_load(w);
  while (!AO_int_compare_and_swap_full(w, old, old & ~bit));
}

/* The thread exits: its slot back (the value is slot + 1). */
static void
pf_tid_exit(void *arg)
{
  uintptr_t v = (uintptr_t)arg;
  if (v > 1 && v <= PF_TID_SLOTS)
    pf_tid_give((uint32_t)(v - 1));
}

/* fork(): the child has one thread; the others' slots are free there. */
static void
pf_tid_atfork_child(void)
{
  unsigned int i;
  for (i = 0; i < PF_TID_WORDS; i++)
    AO_int_store(&pf_tid_used[i], 0);
  if (pf_tid_slot)
    AO_int_store(&pf_tid_used[pf_tid_slot / 32], 1u << (pf_tid_slot % 32));
  pf_tid_pid = 0;                           /* the next call names it anew (same slot) */
}

static void
pf_tid_init(void)
{
  (void)pthread_key_create(&pf_tid_key, pf_tid_exit);
  (void)pthread_atfork(NULL, NULL, pf_tid_atfork_child);
  AO_int_store(&pf_tid_used[0], 1u);        /* slot 0: never (an id is never pid << n alone) */
}

/* A free slot (1 .. PF_TID_SLOTS - 1), or a shared one when none is. */
static uint32_t
pf_tid_take(void)
{
  uint32_t start = (uint32_t)AO_fetch_and_add1(&pf_tid_hint), k;
  for (k = 0; k < PF_TID_SLOTS; k++) {
    uint32_t s = (start + k) % PF_TID_SLOTS;
    volatile unsigned int *w = &pf_tid_used[s / 32];
    unsigned int bit = 1u << (s % 32), old = AO_int_load(w);
    if (s == 0 || (old & bit))
      continue;
    if (AO_int_compare_and_swap_full(w, old, old | bit))
      return s;
    k--;                                    /* the word changed: this slot again */
  }
  return start % (PF_TID_SLOTS - 1) + 1;    /* every slot live: shared */
}

pid_t
pf_os_tid(void)
{
  pid_t pid = getpid();
  if (PF_UNLIKELY(pf_tid_pid != pid)) {
    pthread_once(&pf_tid_once, pf_tid_init);
    if (!pf_tid_slot) {
      pf_tid_slot = pf_tid_take();
      (void)pthread_setspecific(pf_tid_key, (void *)(uintptr_t)(pf_tid_slot + 1));
    }
    pf_tid_mine = (pid_t)((((uint32_t)pid & ((1u << PF_TID_PID_BITS) - 1)) << PF_TID_SLOT_BITS)
                          | pf_tid_slot);
    pf_tid_pid = pid;
  }
  return pf_tid_mine;
}

int
pf_os_tid_alive(uint32_t tid)
{
  uint32_t pidpart = (tid & 0x3fffffffu) >> PF_TID_SLOT_BITS, slot = tid & (PF_TID_SLOTS - 1);
  pid_t me = getpid();
  int saved = errno, r;
  if (pidpart == ((uint32_t)me & ((1u << PF_TID_PID_BITS) - 1)))
    return slot != 0 && (AO_int_load(&pf_tid_used[slot / 32]) & (1u << (slot % 32))) != 0;
  r = !(kill((pid_t)pidpart, 0) != 0 && errno == ESRCH);
  errno = saved;
  return r;
}
#endif
#endif
