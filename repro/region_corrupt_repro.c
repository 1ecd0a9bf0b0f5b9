/* region_corrupt_repro MODE: minimal reproductions of what tests/region_corrupt
 * finds (white-box: links the static core).  Each mode prints what happens;
 * alarm(10) turns a hang into "Alarm clock" (exit by SIGALRM).
 *
 *   wrap      a named region whose header says procs_off = 2^64 - 64: the
 *             layout check's sums wrap, the open succeeds (or crashes while
 *             claiming a process entry at map - 64).  Same with buckets_off
 *             or slots_off (modes wrap-buckets, wrap-slots: the open
 *             succeeds and the table lies before the mapping).
 *   entry     a thread waits 200 ms on a region word; the process table
 *             entry of this process gets a dead pid (a 4-byte scribble);
 *             a wake by another process (a fork child) takes the waiter's
 *             slot for a dead process's and frees it; the waiter's 200 ms
 *             wait never returns (it waits in collect for a token nobody
 *             will give: the state is IDLE, not WAKING).
 *   state     the same with the waiter's slot state set to IDLE directly.
 *   parkword  emu:futex: the waiter's slot park word set to 1 while it is
 *             QUEUED: its 200 ms wait spins forever (park returns 0 at once,
 *             the state is still QUEUED, park again), never returning.
 *   bucket    the waiter's slot `bucket` field set to 19 (>= nbuckets) while
 *             it is QUEUED: at its timeout, pf_waiter_dequeue clamps the index
 *             to 0, locks bucket 0, sees n->bucket (19) != 0, unlocks and
 *             retries, forever (with every signal blocked).
 *   lockid    a bucket's lock word set to this process's own lock id: any op
 *             on a word of that bucket spins forever, with every signal
 *             blocked (SIGTERM, SIGALRM do not end it; only SIGKILL).
 *   noentry   a region with room for 1 process: a fork child gets no process
 *             entry (its lock id is 0) and takes a bucket lock: the lock
 *             word stays 0 ("free"), so the lock excludes nobody, and the
 *             child's wakes/requeues run their queue changes unlocked
 *             against everyone else's.
 *
 * Each mode runs in a child process that is SIGKILLed after 10 s ("HANG").
 *
 * Build (from a configured build dir _b):
 *   gcc -I../include -I../src -I../ports/linux -I. -o region_corrupt_repro \
 *       ../repro/region_corrupt_repro.c .libs/libpfutex_core.a -pthread
 * Run: PFUTEX_BACKEND=emu:futex ./region_corrupt_repro MODE */
#include "config.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "region.h"
#include "pfutex/linux.h"

static struct pfutex_region *rg;
static uint32_t *word;
static volatile int waiting;

static void *
waiter(void *arg)
{
  struct timespec dl;
  long r;
  (void)arg;
  clock_gettime(CLOCK_MONOTONIC, &dl);
  dl.tv_nsec += 200 * 1000000;
  if (dl.tv_nsec >= 1000000000) { dl.tv_nsec -= 1000000000; dl.tv_sec++; }
  waiting = 1;
  errno = 0;
  r = pfutex_wait(word, 0, PFUTEX_BITSET_MATCH_ANY, PFUTEX_SHARED, &dl, PFUTEX_CLOCK_MONOTONIC);
  printf("the 200 ms wait returned %ld, errno %d (%s)\n", r, errno, strerror(errno));
  return NULL;
}

/* The slot our waiter queued. */
static struct pf_node *
queued_slot(void)
{
  int tries, s;
  for (tries = 0; tries < 10000; tries++) {
    for (s = 0; s < (int)rg->tab.nslots; s++) {
      struct pf_node *n = &rg->tab.slots[s];
      if (__atomic_load_n(&n->owner, __ATOMIC_SEQ_CST) == rg->me
          && __atomic_load_n(&n->state, __ATOMIC_SEQ_CST) == PF_W_QUEUED && n->pushed)
        return n;
    }
    usleep(100);
  }
  return NULL;
}

static int
wrap(uint32_t off)
{
  char name[64];
  pfutex_region_attr_t a = { 16, 4, 8, { 0 } };
  pfutex_region_t *r;
  int fd;
  unsigned char *m;
  uint64_t v = ~(uint64_t)63;
  snprintf(name, sizeof name, "/pfrepro-%d", (int)getpid());
  if (fork() == 0) {   /* created by another process, as in real use */
    r = pfutex_region_open_attr(name, 4096, O_RDWR | O_CREAT | O_EXCL, 0600, &a);
    _exit(r ? 0 : 1);
  }
  wait(NULL);
  fd = shm_open(name, O_RDWR, 0);
  m = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  memcpy(m + off, &v, 8);
  printf("header offset %u set to 2^64 - 64; opening (a crash would end here)\n", off);
  fflush(stdout);
  errno = 0;
  r = pfutex_region_open(name, 0, O_RDWR, 0);
  pfutex_region_unlink(name);
  if (r) {
    printf("BUG: the open succeeded: procs %p, buckets %p, slots %p, mapping %p..%p\n",
           (void *)r->procs, (void *)r->tab.buckets, (void *)r->tab.slots, (void *)r->map,
           (void *)(r->map + r->map_len));
    return 1;
  }
  printf("open failed with errno %d (%s)\n", errno, strerror(errno));
  return 0;
}

static int run(const char *mode);

int
main(int argc, char **argv)
{
  const char *mode = argc > 1 ? argv[1] : "";
  pid_t pid;
  int st, i;
  setvbuf(stdout, NULL, _IONBF, 0);
  if ((pid = fork()) == 0)
    _exit(run(mode));
  for (i = 0; i < 1000; i++) {
    if (waitpid(pid, &st, WNOHANG) == pid) {
      if (WIFSIGNALED(st))
        printf("CRASH: killed by signal %d\n", WTERMSIG(st));
      return WIFEXITED(st) ? WEXITSTATUS(st) : 3;
    }
    usleep(10000);
  }
  kill(pid, SIGKILL);
  waitpid(pid, &st, 0);
  printf("HANG: still running after 10 s (SIGKILLed)\n");
  return 4;
}

static int
run(const char *mode)
{
  pfutex_region_attr_t a = { 16, 4, 8, { 0 } };
  pthread_t t;
  struct pf_node *n;

  if (strcmp(mode, "wrap") == 0)
    return wrap(56);
  if (strcmp(mode, "wrap-buckets") == 0)
    return wrap(64);
  if (strcmp(mode, "wrap-slots") == 0)
    return wrap(72);
  printf("backend %s\n", pfutex_backend());
  rg = pfutex_region_anon_attr(4096, &a);
  word = pfutex_region_addr(rg);
  if (strcmp(mode, "noentry") == 0) {
    pfutex_region_attr_t one = { 16, 4, 1, { 0 } };
    struct pfutex_region *r1 = pfutex_region_anon_attr(4096, &one);
    pid_t c;
    int st;
    if ((c = fork()) == 0) {
      struct pf_crit cs;
      int ret;
      pf_crit_enter(&cs);
      ret = pf_bucket_lock(&r1->tab, 0);
      printf("child without an entry (lock id 0x%08x): pf_bucket_lock %d, lock word 0x%08x%s\n",
             r1->me, ret, r1->tab.buckets[0].lock,
             ret == 0 && r1->tab.buckets[0].lock == 0 ? ": BUG, the lock excludes nobody" : "");
      if (ret == 0)
        pf_bucket_unlock(&r1->tab, 0);
      pf_crit_exit(&cs);
      _exit(0);
    }
    waitpid(c, &st, 0);
    return 0;
  }
  if (strcmp(mode, "lockid") == 0) {
    struct timespec ms = { 0, 1000000 };
    uint32_t i;
    for (i = 0; i < rg->tab.nbuckets; i++)
      rg->tab.buckets[i].lock = rg->me;           /* a 4-byte scribble each */
    printf("bucket locks set to our own lock id 0x%08x; a 1 ms wait:\n", rg->me);
    fflush(stdout);
    errno = 0;
    printf("returned %ld, errno %d\n", pfutex(word, FUTEX_WAIT, 0, &ms, NULL, 0), errno);
    return 0;
  }
  pthread_create(&t, NULL, waiter, NULL);
  if (!(n = queued_slot())) {
    printf("no queued slot found\n");
    return 2;
  }
  if (strcmp(mode, "entry") == 0) {
    uint32_t e = (rg->me & 0xffff) - 1;
    pid_t c;
    int st;
    fflush(stdout);
    if ((c = fork()) == 0) {           /* another process: an entry of its own */
      rg->procs[e].pid = 0x3ffffffe;   /* the parent's entry: a pid nobody has */
      printf("the waiter's process entry scribbled; a wake by another process: %d "
             "(its slot freed as a dead process's)\n",
             pfutex_wake(word, PFUTEX_BITSET_MATCH_ANY, INT_MAX, PFUTEX_SHARED));
      _exit(0);
    }
    waitpid(c, &st, 0);
  } else if (strcmp(mode, "state") == 0) {
    __atomic_store_n(&n->state, PF_W_IDLE, __ATOMIC_SEQ_CST);
    printf("the waiter's slot state set to IDLE\n");
  } else if (strcmp(mode, "bucket") == 0) {
    __atomic_store_n(&n->bucket, 19, __ATOMIC_SEQ_CST);
    printf("the waiter's slot bucket field set to 19 (4 buckets)\n");
  } else if (strcmp(mode, "parkword") == 0) {
    __atomic_store_n(&n->park.word, 1, __ATOMIC_SEQ_CST);
    printf("the waiter's slot park word set to 1 (state still QUEUED)\n");
  } else {
    printf("unknown mode\n");
    return 2;
  }
  fflush(stdout);
  pthread_join(t, NULL);
  printf("joined: no hang\n");
  return 0;
}
