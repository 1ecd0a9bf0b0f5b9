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

/* gettid() once per thread: the id cached in thread-local storage, as
 * NPTL caches it in its thread descriptor (a PI op's id costs no system
 * call).  fork()'s child has a new id: pthread_atfork's child handler
 * forgets the forking thread's cached one (the child's only thread); a
 * child made without fork() (a raw clone or vfork) must not use PI or
 * robust ops before exec, as it must not use glibc's PI mutexes. */
#include <pthread.h>

static __thread pid_t pf_tid_cached;
static pthread_once_t pf_tid_once = PTHREAD_ONCE_INIT;

static void
pf_tid_atfork_child(void)
{
  pf_tid_cached = 0;
}

static void
pf_tid_init(void)
{
  (void)pthread_atfork(NULL, NULL, pf_tid_atfork_child);
}

pid_t
pf_os_tid(void)
{
  pid_t tid = pf_tid_cached;
  if (PF_UNLIKELY(tid == 0)) {
    pthread_once(&pf_tid_once, pf_tid_init);
    tid = (pid_t)syscall(SYS_gettid);
    pf_tid_cached = tid;
  }
  return tid;
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

int
pf_os_tid_foreign(uint32_t tid)
{
  int saved = errno, r = 0;
  if (syscall(SYS_tgkill, (long)getpid(), (long)tid, 0L) != 0 && errno == ESRCH)
    r = kill((pid_t)tid, 0) == 0 || errno == EPERM;         /* there, but not ours */
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
 * The bitmap is published for other processes (T): a file
 * "/tmp/pfutex-t<pid>" per process, made (O_EXCL, mode 0644) before
 * the process's first id is handed out, holding a copy of the bitmap, and
 * write-locked (fcntl, byte 0) by its maker for as long as the process
 * lives (a record lock belongs to its process and dies with it: the OS's
 * word, as regions' liveness, ports/posix/live.c).  A slot's bit is set
 * there before its id is handed out and cleared when its thread exits.
 *
 * Alive: a process the OS says is gone (kill(pid, 0): ESRCH) has no
 * threads; in this process, a slot given back is a thread gone; in another
 * process, a slot whose bit is clear in an object whose lock the OS says
 * is held by that very pid (F_GETLK's l_pid) is a thread gone, and so is
 * every slot of an object of our own user that no process holds locked
 * (its maker died: a zombie, or a pid reused by a process that has handed
 * out no id yet).  Anything else counts as alive (no object: a process
 * that could not publish; an unlocked object of another user; one others
 * could write): a PI locker then waits, and never takes the lock from the
 * living. */
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
#define PF_TID_PUB_SIZE (PF_TID_WORDS * sizeof(unsigned int))

#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>

static volatile unsigned int pf_tid_used[PF_TID_WORDS];   /* bit s: slot s taken (0: never) */
static volatile AO_t pf_tid_hint;
static pthread_once_t pf_tid_once = PTHREAD_ONCE_INIT;
static pthread_key_t pf_tid_key;
static __thread pid_t pf_tid_mine;
static __thread uint32_t pf_tid_slot;
/* (T) the published copy: its mapping, descriptor and pid (0: none yet in
 * this process; -1: could not be made), under pf_tid_lock, as are the
 * slots' bits there. */
static pthread_mutex_t pf_tid_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned int *pf_tid_pub;
static int pf_tid_pub_fd = -1;
static pid_t pf_tid_pub_pid;

/* The object: a regular file, since FreeBSD and macOS refuse record locks
 * on POSIX shared memory objects (configure.ac, the regions' "lockfile");
 * in /tmp, whose sticky bit keeps one user's file from being removed by
 * another. */
static void
pf_tid_pub_name(char *buf, size_t n, uint32_t pid)
{
  snprintf(buf, n, "/tmp/pfutex-t%u", (unsigned)pid);
}

static int
pf_tid_pub_open(uint32_t pid, int flags)
{
  char name[40];
  pf_tid_pub_name(name, sizeof name, pid);
  return open(name, flags | O_NOFOLLOW | O_CLOEXEC, 0644);
}

static void
pf_tid_pub_remove(uint32_t pid)
{
  char name[40];
  pf_tid_pub_name(name, sizeof name, pid);
  (void)unlink(name);
}

/* (T) Make this process's object, pf_tid_lock held: an old one of the
 * same name is a dead process's (pids are unique among the living), so it
 * is removed first; made exclusively, so no other process's bytes are
 * ever taken for ours.  Failing, the process publishes nothing (its
 * threads count as alive to others). */
static void
pf_tid_publish(void)
{
  void *m = MAP_FAILED;
  pid_t pid = getpid();
  int fd, saved = errno;
  uint32_t i;
  pf_tid_pub_pid = -1;
  pf_tid_pub_remove((uint32_t)pid);
  fd = pf_tid_pub_open((uint32_t)pid, O_RDWR | O_CREAT | O_EXCL);
  if (fd >= 0 && (fchmod(fd, 0644) != 0 || ftruncate(fd, (off_t)PF_TID_PUB_SIZE) != 0
                  || pf_os_lock_claim(fd, 0) != 0
                  || (m = mmap(NULL, PF_TID_PUB_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0))
                         == MAP_FAILED)) {
    pf_tid_pub_remove((uint32_t)pid);
    close(fd);
    fd = -1;
  }
  if (fd >= 0) {
    pf_tid_pub = m;
    for (i = 0; i < PF_TID_WORDS; i++)
      AO_int_store(&pf_tid_pub[i], AO_int_load(&pf_tid_used[i]));
    pf_tid_pub_fd = fd;
    pf_tid_pub_pid = pid;
  }
  errno = saved;
}

/* The slot's bit in the published copy (set: 1), pf_tid_lock held. */
static void
pf_tid_pub_mark(uint32_t slot, int set)
{
  volatile unsigned int *w;
  unsigned int bit = 1u << (slot % 32), old;
  if (!pf_tid_pub)
    return;
  w = &pf_tid_pub[slot / 32];
  do
    old = AO_int_load(w);
  while (!AO_int_compare_and_swap_full(w, old, set ? old | bit : old & ~bit));
}

static void
pf_tid_give(uint32_t slot)
{
  volatile unsigned int *w = &pf_tid_used[slot / 32];
  unsigned int bit = 1u << (slot % 32), old;
  sigset_t all, mask;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &mask);
  pthread_mutex_lock(&pf_tid_lock);
  pf_tid_pub_mark(slot, 0);                 /* gone to others first */
  do
    old = AO_int_load(w);
  while (!AO_int_compare_and_swap_full(w, old, old & ~bit));
  pthread_mutex_unlock(&pf_tid_lock);
  pthread_sigmask(SIG_SETMASK, &mask, NULL);
}

/* The thread exits: its slot back (the value is slot + 1). */
static void
pf_tid_exit(void *arg)
{
  uintptr_t v = (uintptr_t)arg;
  if (v > 1 && v <= PF_TID_SLOTS)
    pf_tid_give((uint32_t)(v - 1));
}

/* fork(): the child has one thread; the others' slots are free there.  The
 * parent's object is the parent's: the child lets go of its mapping and
 * descriptor (it holds no lock on it: record locks are not inherited) and
 * publishes its own at its next id.  pf_tid_lock is made anew: another
 * thread of the parent may have held it (no prepare handler takes it,
 * which another fork handler asking its first id would deadlock on);
 * whatever that thread was doing is the parent's and is dropped here. */
static void
pf_tid_atfork_child(void)
{
  unsigned int i;
  for (i = 0; i < PF_TID_WORDS; i++)
    AO_int_store(&pf_tid_used[i], 0);
  if (pf_tid_slot)
    AO_int_store(&pf_tid_used[pf_tid_slot / 32], 1u << (pf_tid_slot % 32));
  if (pf_tid_pub)
    (void)munmap((void *)(uintptr_t)pf_tid_pub, PF_TID_PUB_SIZE);
  if (pf_tid_pub_fd >= 0)
    close(pf_tid_pub_fd);
  pf_tid_pub = NULL;
  pf_tid_pub_fd = -1;
  pf_tid_pub_pid = 0;
  pf_tid_mine = 0;                          /* the next call names it anew (same slot) */
  (void)pthread_mutex_init(&pf_tid_lock, NULL);
}

/* The process ends (exit, or the library unloaded): its object goes. */
__attribute__((destructor)) static void
pf_tid_unpublish(void)
{
  if (pf_tid_pub_pid > 0 && pf_tid_pub_pid == getpid())
    pf_tid_pub_remove((uint32_t)pf_tid_pub_pid);
}

static void
pf_tid_init(void)
{
  (void)pthread_key_create(&pf_tid_key, pf_tid_exit);
  (void)pthread_atfork(NULL, NULL, pf_tid_atfork_child);
  AO_int_store(&pf_tid_used[0], 1u);        /* slot 0: never (an id is never pid << n alone) */
}

/* A free slot (1 .. PF_TID_SLOTS - 1), or a shared one when none is
 * (*shared set: never given back, so a thread that shares it never counts
 * as gone while another lives). */
static uint32_t
pf_tid_take(int *shared)
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
  *shared = 1;
  return start % (PF_TID_SLOTS - 1) + 1;    /* every slot live: shared */
}

pid_t
pf_os_tid(void)
{
  if (PF_UNLIKELY(pf_tid_mine == 0)) {      /* first call, or fork()'s child (atfork) */
    sigset_t all, old;
    pthread_once(&pf_tid_once, pf_tid_init);
    sigfillset(&all);                       /* a handler's first id must not meet our lock */
    pthread_sigmask(SIG_BLOCK, &all, &old);
    pthread_mutex_lock(&pf_tid_lock);
    if (pf_tid_pub_pid == 0)
      pf_tid_publish();                     /* (T) before the first id is out */
    if (!pf_tid_slot) {
      int shared = 0;
      pf_tid_slot = pf_tid_take(&shared);
      if (!shared)
        (void)pthread_setspecific(pf_tid_key, (void *)(uintptr_t)(pf_tid_slot + 1));
    }
    pf_tid_pub_mark(pf_tid_slot, 1);        /* (T) published before it is used */
    pthread_mutex_unlock(&pf_tid_lock);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    pf_tid_mine = (pid_t)((((uint32_t)getpid() & ((1u << PF_TID_PID_BITS) - 1))
                           << PF_TID_SLOT_BITS) | pf_tid_slot);
  }
  return pf_tid_mine;
}

/* (T) Slot `slot` of process pid, which the OS says exists: 0 when pid
 * itself holds its object's lock (l_pid) and the slot's bit is clear
 * there, or when the object is our own user's and no process holds its
 * lock (its maker is dead: a pid reused since, or a zombie, has no thread
 * of that id out: an id is out only once its process's object is locked);
 * else 1.  An object others could write is nobody's publication: 1. */
static int
pf_tid_pub_alive(uint32_t pid, uint32_t slot)
{
  struct stat st;
  void *m;
  int fd, r = 1, holder;
  if ((fd = pf_tid_pub_open(pid, O_RDONLY)) < 0)
    return 1;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (st.st_mode & 022) != 0
      || (holder = pf_os_lock_holder(fd, 0)) < 0)
    r = 1;
  else if (holder == 0)
    r = st.st_uid != geteuid();
  else if ((uint32_t)holder == pid && (uintmax_t)st.st_size >= PF_TID_PUB_SIZE
           && (m = mmap(NULL, PF_TID_PUB_SIZE, PROT_READ, MAP_SHARED, fd, 0)) != MAP_FAILED) {
    r = (AO_int_load(&((volatile unsigned int *)m)[slot / 32]) >> (slot % 32)) & 1;
    (void)munmap(m, PF_TID_PUB_SIZE);
  }
  close(fd);
  return r;
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
  if (r && slot != 0)
    r = pf_tid_pub_alive(pidpart, slot);
  errno = saved;
  return r;
}

int
pf_os_tid_foreign(uint32_t tid)
{
  uint32_t pidpart = (tid & 0x3fffffffu) >> PF_TID_SLOT_BITS;
  if (pidpart == ((uint32_t)getpid() & ((1u << PF_TID_PID_BITS) - 1)))
    return 0;
  return pf_os_tid_alive(tid);
}
#endif
#endif
