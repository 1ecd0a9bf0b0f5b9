/* region_abi: a region's layout is the same in every ABI (invariant 7).
 *
 * 1. The header a region carries is checked byte by byte at fixed offsets
 *    (magic, layout version, byte order, the sizes of the header, a node, a
 *    bucket and a process entry, the table's offsets): the numbers every
 *    build must agree on (src/region/region.h also asserts them at compile time,
 *    so a build for another ABI whose layout differs does not compile).
 * 2. A process of the other ABI (an i386 build's tests/region_abi named by
 *    PFUTEX_PEER, e.g. in .ci/run) opens the same named region and they wait
 *    for and wake each other both ways, and requeue between two words.
 *    Without PFUTEX_PEER, or where the kernel cannot run that binary (no
 *    IA32 emulation), this part skips and says why.
 * 3. A process running another backend family (linux vs an emulated port,
 *    or another port: they park differently and would miss each other's
 *    wakes) is refused with EPROTO.
 * Peer mode: region_abi --peer NAME (exit status 0 when its part passed);
 * region_abi --probe NAME: exit with the errno of opening NAME (0: opened). */
#ifdef _WIN32
/* _WIN32: skipped (no Windows equivalent of what it tests). */
#include "basic.h"
int
main(void)
{
  skip_all("Windows: needs fork() and exec of 32-bit/64-bit peers sharing a mapping");
  return 0;
}
#else
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pft.h"
#include "pfutex/linux.h"

static uint32_t
rd32(const unsigned char *p, size_t off)
{
  uint32_t v;
  memcpy(&v, p + off, 4);
  return v;
}

static uint64_t
rd64(const unsigned char *p, size_t off)
{
  uint64_t v;
  memcpy(&v, p + off, 8);
  return v;
}

/* Wait while *w == v (shared), bounded by the watchdog. */
static int
wait_while(uint32_t *w, uint32_t v)
{
  while (__atomic_load_n(w, __ATOMIC_SEQ_CST) == v)
    if (pfutex(w, FUTEX_WAIT, v, NULL, NULL, 0) != 0 && errno != EAGAIN && errno != EINTR)
      return -1;
  return 0;
}

/* The peer: words[0] handshake, words[1] the peer waits on, words[2] the
 * test waits on, words[3] requeue source, words[4] requeue target. */
static int
peer(const char *name)
{
  pfutex_region_t *r;
  uint32_t *w;
  alarm(20);
  if (!(r = pfutex_region_open(name, 0, O_RDWR, 0)))
    return 10;
  w = pfutex_region_addr(r);
  /* 1: wait on w[1] until the test wakes us */
  __atomic_store_n(&w[0], 1, __ATOMIC_SEQ_CST);
  pfutex(&w[0], FUTEX_WAKE, 1, NULL, NULL, 0);
  if (pfutex(&w[1], FUTEX_WAIT, 0, NULL, NULL, 0) != 0 && !(errno == EAGAIN && w[1] != 0))
    return 11;
  /* 2: wake the test, which waits on w[2] while it is 0 (the store first:
   * a wait that starts after it sees 1) */
  __atomic_store_n(&w[2], 1, __ATOMIC_SEQ_CST);
  if (pfutex(&w[2], FUTEX_WAKE, 1, NULL, NULL, 0) < 0)
    return 12;
  /* 3: the test waits on w[3]; move it to w[4] and wake it there */
  while (pfutex(&w[3], FUTEX_CMP_REQUEUE, 0, (const struct timespec *)(uintptr_t)1, &w[4], 0) != 1)
    usleep(1000);
  __atomic_store_n(&w[4], 1, __ATOMIC_SEQ_CST);
  if (pfutex(&w[4], FUTEX_WAKE, 1, NULL, NULL, 0) != 1)
    return 13;
  pfutex_region_close(r);
  return 0;
}

int
main(int argc, char **argv)
{
  char name[64];
  pfutex_region_t *r;
  const unsigned char *h;
  const char *other = getenv("PFUTEX_PEER");
  int fd;
  struct stat st;

  if (argc == 3 && strcmp(argv[1], "--peer") == 0)
    return peer(argv[2]);
  if (argc == 3 && strcmp(argv[1], "--probe") == 0) {
    pfutex_region_t *p = pfutex_region_open(argv[2], 0, O_RDWR, 0);
    return p ? 0 : errno;
  }
  pft_watchdog(30);
  plan(19);
  snprintf(name, sizeof name, "/pft-abi-%d", (int)getpid());
  shm_unlink(name);   /* a killed earlier run with this pid */
  r = pfutex_region_open(name, 4096, O_RDWR | O_CREAT | O_EXCL, 0600);
  if (!r)
    sysbail("pfutex_region_open");

  /* 1. the header, read as bytes from the object itself */
  fd = shm_open(name, O_RDONLY, 0);
  if (fd < 0 || fstat(fd, &st) != 0)
    sysbail("shm_open");
  h = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
  if (h == MAP_FAILED)
    sysbail("mmap");
  /* fd stays open while r is: closing a descriptor of the object would drop
   * this process's record locks on it, its life in the region's eyes
   * (src/os.h, doc/regions.md). */
  is_int(0x47524650, rd32(h, 0), "magic at offset 0");
  is_int(2, rd32(h, 4), "layout version 2 at offset 4");
  is_int(0x01020304, rd32(h, 8), "byte-order mark at offset 8");
  is_int(128, rd32(h, 12), "header: 128 bytes");
  is_int(80, rd32(h, 16), "node (slot): 80 bytes");
  is_int(64, rd32(h, 20), "bucket: 64 bytes");
  is_int(64, rd32(h, 24), "process entry: 64 bytes");
  is_int(PFUTEX_REGION_DEFAULT_BUCKETS, rd32(h, 32), "default buckets at offset 32");
  is_int(PFUTEX_REGION_DEFAULT_SLOTS, rd32(h, 36), "default slots at offset 36");
  is_int(PFUTEX_REGION_DEFAULT_PROCS, rd32(h, 40), "default process entries at offset 40");
  ok(rd64(h, 48) == (uint64_t)st.st_size, "total size at offset 48 (%llu)",
     (unsigned long long)rd64(h, 48));
  ok(rd64(h, 56) == 128 && rd64(h, 64) == 128 + 64 * (uint64_t)PFUTEX_REGION_DEFAULT_PROCS
         && rd64(h, 72) == rd64(h, 64) + 64 * (uint64_t)PFUTEX_REGION_DEFAULT_BUCKETS,
     "table offsets: procs 128, buckets after %u entries, slots after the buckets",
     PFUTEX_REGION_DEFAULT_PROCS);
  ok(rd64(h, 80) % 4096 == 0 && rd64(h, 80) >= rd64(h, 72) + 80 * (uint64_t)PFUTEX_REGION_DEFAULT_SLOTS,
     "user area page aligned after the slots (offset %llu)", (unsigned long long)rd64(h, 80));
  is_int(4096, (long)rd64(h, 88), "user size at offset 88");
  munmap((void *)(uintptr_t)h, (size_t)st.st_size);

  /* 2. a process of the other ABI */
  if (!other || !*other) {
    skip("no PFUTEX_PEER (a build for the other ABI) named: the cross-ABI pair is not run");
    skip("(cross-ABI pair)");
    skip("(cross-ABI pair)");
  } else {
    uint32_t *w = pfutex_region_addr(r);
    int status;
    pid_t pid = fork();
    if (pid == 0) {
      execl(other, other, "--peer", name, (char *)NULL);
      _exit(127);
    }
    /* the peer announces itself on w[0]; if it cannot run, it exits 127 */
    while (__atomic_load_n(&w[0], __ATOMIC_SEQ_CST) == 0) {
      if (waitpid(pid, &status, WNOHANG) == pid)
        break;
      usleep(1000);
    }
    if (__atomic_load_n(&w[0], __ATOMIC_SEQ_CST) == 0) {
      skip("the peer %s could not run here (exit %d): this kernel cannot run that ABI", other,
           WIFEXITED(status) ? WEXITSTATUS(status) : -1);
      skip("(cross-ABI pair)");
      skip("(cross-ABI pair)");
    } else {
      int n = 0, i;
      /* the word stays 0 until the wake finds the peer asleep (a 1 set
       * first would turn a late wait into EAGAIN) */
      for (i = 0; i < 10000 && n == 0; i++) {
        n = (int)pfutex(&w[1], FUTEX_WAKE, 1, NULL, NULL, 0);
        if (!n)
          usleep(1000);
      }
      __atomic_store_n(&w[1], 1, __ATOMIC_SEQ_CST);
      ok(n == 1, "the other ABI's process waited on a region word and this one woke it");
      ok(wait_while(&w[2], 0) == 0, "this process waited and the other ABI's woke it");
      {
        long ret;
        int reaped;
        do
          ret = pfutex(&w[3], FUTEX_WAIT, 0, NULL, NULL, 0);
        while (ret != 0 && errno == EINTR);
        reaped = waitpid(pid, &status, 0) == pid;
        ok(ret == 0 && __atomic_load_n(&w[4], __ATOMIC_SEQ_CST) == 1 && reaped
             && WIFEXITED(status) && WEXITSTATUS(status) == 0,
         "the other ABI's process requeued this one's wait and woke it (exit %d)",
         WIFEXITED(status) ? WEXITSTATUS(status) : -1);
      }
    }
  }
  /* 3. other backend families */
  {
    const char *const *b;
    const char *mine = pfutex_backend(), *same = NULL, *foreign = NULL;
    int mine_linux = strncmp(mine, "linux", 5) == 0;
    for (b = pfutex_backends(); *b; b++) {
      int is_linux = strncmp(*b, "linux", 5) == 0;
      if (mine_linux ? is_linux : strcmp(*b, mine) == 0)
        same = *b;
      else if (!foreign)
        foreign = *b;
    }
    for (int k = 0; k < 2; k++) {
      const char *be = k == 0 ? same : foreign;
      int status = -1, want = k == 0 ? 0 : EPROTO;
      pid_t pid;
      if (!be) {
        skip("no other backend family compiled");
        continue;
      }
      fflush(stdout);
      if ((pid = fork()) == 0) {
        setenv("PFUTEX_BACKEND", be, 1);
        execl(argv[0], argv[0], "--probe", name, (char *)NULL);
        _exit(127);
      }
      waitpid(pid, &status, 0);
      ok(WIFEXITED(status) && WEXITSTATUS(status) == want,
         "a process under %s opening a region made under %s: %s (want %s)", be, mine,
         WIFEXITED(status) ? pft_errname(WEXITSTATUS(status)) : "killed", pft_errname(want));
    }
  }
  pfutex_region_close(r);
  close(fd);
  pfutex_region_unlink(name);
  return 0;
}
#endif /* !_WIN32 */
