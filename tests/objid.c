/* objid: src/os.h's pf_os_object_id, the identity a shared futex word gets
 * from the object its mapping maps (issue 20), checked on the five kinds
 * of shared memory NPTL-style programs put process-shared words in:
 *   anon   mmap(MAP_SHARED | MAP_ANONYMOUS) before fork()
 *   posix  shm_open + mmap
 *   file   a regular file, mmap(MAP_SHARED)
 *   sysv   shmget + shmat
 *   memfd  memfd_create, its descriptor passed on (fork, exec)
 * For each: two mappings of the object at different addresses in one
 * process (anon: mremap with old_size 0) give one identity (and the word's offset in the object, each
 * mapping's file offset included); a fork()ed child, and for the four
 * kinds another process can reach, an exec'd program mapping it afresh,
 * compute the same; the identity is the object's as fstat(2) gives it
 * where there is a descriptor.  Then: a private mapping (anonymous, and a
 * MAP_PRIVATE file mapping after its copy-on-write) is 0, nothing mapped
 * -EFAULT, and a munmap + mmap of another object at the same address gives
 * the other object at once (no stale identity).  SysV segments in IPC
 * namespaces of their own (check_sysv_ns: shmid 0, two namespaces, a
 * shmid equal to another shmem file's inode number).  Every check runs twice:
 * through PROCMAP_QUERY (Linux 6.11+; where the kernel lacks it, both runs
 * use the maps reader and the first says so) and through /proc/self/maps.
 * Linux only: elsewhere pf_os_object_id answers ENOSYS for now. */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1 /* mremap */
#endif
#include "basic.h"

#if defined(_WIN32)
/* Windows names no object for a view of a section: a shared op on a word
 * there answers ENOSYS (never a key by address that would silently not
 * reach other processes); private and image memory keep address keys. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <windows.h>
#include <pfutex.h>
#include <pfutex/linux.h>

#include "os.h"

static uint32_t image_word;

int
main(void)
{
  HANDLE h;
  uint32_t *view, *heap;
  struct pf_os_objid id;
  long r;
  int e;
  plan_lazy();
  h = CreateFileMappingW(INVALID_HANDLE_VALUE, NULL, PAGE_READWRITE, 0, 65536, NULL);
  if (!h || !(view = MapViewOfFile(h, FILE_MAP_ALL_ACCESS, 0, 0, 65536)))
    bail("CreateFileMapping/MapViewOfFile: %lu", (unsigned long)GetLastError());
  heap = malloc(64);
  if (!heap)
    bail("malloc");
  ok(pf_os_object_id(view + 10, &id) == PF_OBJID_NONE && pf_os_object_id(heap, &id) == 0
         && pf_os_object_id(&image_word, &id) == 0,
     "a view of a section: no identity; heap and image memory: private");
  if (pfutex_backend() && strncmp(pfutex_backend(), "emu", 3) == 0) {
    view[10] = 0;
    r = pfutex(view + 10, FUTEX_WAKE, 1, NULL, NULL, 0);
    e = errno;
    ok(r == -1 && e == ENOSYS, "a shared wake on a view's word: %ld %s (ENOSYS)", r,
       r ? strerror(e) : "");
    r = pfutex(view + 10, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    ok(r == 0, "a private wake there: %ld", r);
    heap[0] = 0;
    r = pfutex(heap, FUTEX_WAKE, 1, NULL, NULL, 0);
    ok(r == 0, "a shared wake on a heap word: %ld (keyed by address)", r);
  } else {
    skip("backend %s: not the emulation", pfutex_backend() ? pfutex_backend() : "none");
  }
  UnmapViewOfFile(view);
  CloseHandle(h);
  free(heap);
  return 0;
}
#elif !defined(__linux__)
int
main(void)
{
  skip_all("pf_os_object_id is Linux's and Windows' only for now");
  return 0;
}
#else
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "os.h"
#include "pft.h"

#include "shm_obj.h"

#define OBJ_SIZE SO_SIZE
#define WORD_OFF (3 * 4096 + 40)          /* the word's byte offset in the object */

static int
id_eq(const struct pf_os_objid *a, const struct pf_os_objid *b)
{
  return a->dev == b->dev && a->ino == b->ino && a->off == b->off;
}

/* The child side of the exec checks: map the object named on the command
 * line, print the identity of the word at WORD_OFF. */
static int
child_main(char **argv)
{
  struct so_obj o;
  struct pf_os_objid id;
  char *p;
  int r;
  if (atoi(argv[4]))
    pf_os_objid_force_maps(1);
  if (so_from_arg(&o, atoi(argv[2]), argv[3]) != 0)
    return 3;
  if (!(p = so_map(&o, 0)))
    return 4;
  r = pf_os_object_id(p + WORD_OFF, &id);
  printf("%d %llu %llu %llu\n", r, (unsigned long long)id.dev, (unsigned long long)id.ino,
         (unsigned long long)id.off);
  return 0;
}

/* Run `cmd` and read the identity it prints. */
static int
read_id(const char *cmd, int *r, struct pf_os_objid *id)
{
  FILE *f = popen(cmd, "r");
  unsigned long long d, i, off;
  int got;
  if (!f)
    return -1;
  got = fscanf(f, "%d %llu %llu %llu", r, &d, &i, &off);
  if (pclose(f) != 0 || got != 4)
    return -1;
  id->dev = d;
  id->ino = i;
  id->off = off;
  return 0;
}

static void
check_kind(int kind, int maps, const char *self)
{
  const char *how = maps ? "maps" : "query";
  struct so_obj o;
  struct pf_os_objid a, b, c, f;
  char *p1, *p2, cmd[512];
  int r1, r2, rf = -9, pfd[2], st, rc;
  pid_t k;

  if (so_make(&o, kind, "objid") != 0) {
    skip("%s (%s): cannot make the object: %s", so_kinds[kind], how, strerror(errno));
    return;
  }
  /* two mappings: the whole object, and (not anon: its second mapping
   * would be another object) from its second page */
  if (!(p1 = so_map(&o, 0)))
    sysbail("map %s", so_kinds[kind]);
  r1 = pf_os_object_id(p1 + WORD_OFF, &a);
  if (kind == 0 || kind == 3) {
    /* shmat twice; anon: mremap(old_size 0) maps the same shared
     * anonymous object a second time */
    p2 = so_map2(&o, p1);
    if (!p2 && kind == 0) {
      /* qemu-user refuses mremap(old_size 0): one mapping */
      diag("anon (%s): no second mapping here (%s): the check has one", how, strerror(errno));
      p2 = p1;
    } else if (!p2) {
      sysbail("a second mapping of %s", so_kinds[kind]);
    }
    r2 = pf_os_object_id(p2 + WORD_OFF, &b);
  } else {
    if (!(p2 = so_map(&o, 4096)))
      sysbail("map %s at 4096", so_kinds[kind]);
    r2 = pf_os_object_id(p2 + WORD_OFF - 4096, &b);
  }
  ok(r1 == 1 && r2 == 1 && id_eq(&a, &b) && a.off == WORD_OFF && (a.dev | a.ino) != 0,
     "%s (%s): two mappings at %p and %p: %d, %d; dev %llu ino %llu off %llu / dev %llu ino "
     "%llu off %llu",
     so_kinds[kind], how, (void *)p1, (void *)p2, r1, r2, (unsigned long long)a.dev,
     (unsigned long long)a.ino, (unsigned long long)a.off, (unsigned long long)b.dev,
     (unsigned long long)b.ino, (unsigned long long)b.off);
  if (o.fd >= 0) {
    struct stat sb;
    if (fstat(o.fd, &sb) != 0)
      sysbail("fstat");
    ok((uint64_t)sb.st_dev == a.dev && (uint64_t)sb.st_ino == a.ino,
       "%s (%s): the identity is the object's (fstat: dev %llu ino %llu)", so_kinds[kind], how,
       (unsigned long long)sb.st_dev, (unsigned long long)sb.st_ino);
  }
  /* a fork()ed child (its own mapping for every kind but anon) */
  if (pipe(pfd) != 0)
    sysbail("pipe");
  fflush(stdout);
  if ((k = fork()) < 0)
    sysbail("fork");
  if (k == 0) {
    char *q = kind == 0 ? p1 : so_map(&o, 0);
    struct pf_os_objid x;
    int rx = q ? pf_os_object_id(q + WORD_OFF, &x) : -100;
    if (write(pfd[1], &rx, sizeof rx) != (ssize_t)sizeof rx
        || write(pfd[1], &x, sizeof x) != (ssize_t)sizeof x)
      _exit(1);
    _exit(0);
  }
  close(pfd[1]);
  if (read(pfd[0], &rf, sizeof rf) != (ssize_t)sizeof rf || read(pfd[0], &f, sizeof f) != (ssize_t)sizeof f)
    rf = -99;
  close(pfd[0]);
  while (waitpid(k, &st, 0) < 0)
    ;
  ok(rf == 1 && id_eq(&a, &f), "%s (%s): a fork()ed child%s: %d, the same identity", so_kinds[kind],
     how, kind == 0 ? " (the inherited mapping)" : " (a mapping of its own)", rf);
  /* an exec'd program mapping it afresh */
  if (kind != 0) {
    so_keep_on_exec(&o);
    snprintf(cmd, sizeof cmd, "%s%s%s --child %d %s %d", pft_emulator() ? pft_emulator() : "",
             pft_emulator() ? " " : "", self, kind,
             o.arg,
             maps);
    rc = read_id(cmd, &rf, &c);
    ok(rc == 0 && rf == 1 && id_eq(&a, &c), "%s (%s): an exec'd process mapping it: %s %d",
       so_kinds[kind], how, rc == 0 ? "answered" : "FAILED to answer", rf);
  }
  so_unmap(&o, p1, 0);
  if (p2 && p2 != p1)
    so_unmap(&o, p2, kind == 0 || kind == 3 ? 0 : 4096);
  so_drop(&o);
}

/* SysV segments in IPC namespaces of their own (root's unshare, else
 * skipped).  A segment's inode number is its shmid, and a new namespace
 * numbers from 0: its first segment must still be an object (a number of
 * 0 once read as "no file": its words were keyed by address, and other
 * processes' wakes never met them); the first segments of two namespaces
 * are two objects; a segment whose shmid is the inode number of an
 * anonymous shared mapping (the same shmem device) is another object.
 * The child reports through a pipe. */
struct sysv_res {
  int made, r0, r0b, same0, rb, other_ns, collide_n, rc, ra, collide_differs;
  unsigned long long ino0, anon_ino;
};

static void
sysv_ns_child(int fd)
{
  struct sysv_res x;
  struct pf_os_objid i0, i0b, ib, ia, ic;
  char *p0, *p0b, *pb, *pa, *pc;
  int id, n;
  memset(&x, 0, sizeof x);
  x.collide_n = -1;
  if (unshare(CLONE_NEWIPC) != 0)
    goto out;
  if ((id = shmget(IPC_PRIVATE, OBJ_SIZE, IPC_CREAT | 0600)) < 0)
    goto out;
  x.made = id == 0 ? 1 : -id;
  if ((p0 = shmat(id, NULL, 0)) == (void *)-1 || (p0b = shmat(id, NULL, 0)) == (void *)-1)
    goto out;
  x.r0 = pf_os_object_id(p0 + WORD_OFF, &i0);
  x.r0b = pf_os_object_id(p0b + WORD_OFF, &i0b);
  x.same0 = id_eq(&i0, &i0b);
  x.ino0 = (unsigned long long)i0.ino;
  /* an anonymous shared mapping, then a segment whose shmid is its inode
   * number: asked of shm_next_id (the namespace's, CONFIG_CHECKPOINT_RESTORE),
   * else segments made until one has it (where that number is small) */
  pa = mmap(NULL, OBJ_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (pa == MAP_FAILED)
    goto out;
  pa[0] = 1;
  x.ra = pf_os_object_id(pa + WORD_OFF, &ia);
  x.anon_ino = (unsigned long long)ia.ino;
  id = -1;
  if (x.ra == 1 && ia.ino > 0 && ia.ino < 0x7fffffff) {
    char num[32];
    int nfd = open("/proc/sys/kernel/shm_next_id", O_WRONLY);
    n = snprintf(num, sizeof num, "%llu", (unsigned long long)ia.ino);
    if (nfd >= 0 && write(nfd, num, (size_t)n) == (ssize_t)n)
      id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
    if (nfd >= 0)
      close(nfd);
    for (n = 1; id != (int)ia.ino && ia.ino < 2048 && n <= (int)ia.ino; n++)
      if ((id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600)) < 0 || id > (int)ia.ino)
        break;
    if (id == (int)ia.ino && (pc = shmat(id, NULL, 0)) != (void *)-1) {
      x.collide_n = id;
      x.rc = pf_os_object_id(pc + WORD_OFF % 4096, &ic);
      x.collide_differs = x.rc == 1 && !(ic.dev == ia.dev && ic.ino == ia.ino);
    }
  }
  /* a second namespace's first segment */
  if (unshare(CLONE_NEWIPC) != 0 || (id = shmget(IPC_PRIVATE, OBJ_SIZE, IPC_CREAT | 0600)) != 0
      || (pb = shmat(id, NULL, 0)) == (void *)-1)
    goto out;
  x.rb = pf_os_object_id(pb + WORD_OFF, &ib);
  x.other_ns = x.rb == 1 && !id_eq(&i0, &ib) ? 1 : 2;
out:
  if (write(fd, &x, sizeof x) != (ssize_t)sizeof x)
    _exit(1);
  _exit(0);
}

static void
check_sysv_ns(int maps)
{
  const char *how = maps ? "maps" : "query";
  struct sysv_res x;
  int pfd[2], st;
  pid_t k;
  if (pipe(pfd) != 0)
    sysbail("pipe");
  fflush(stdout);
  if ((k = fork()) < 0)
    sysbail("fork");
  if (k == 0) {
    close(pfd[0]);
    sysv_ns_child(pfd[1]);
  }
  close(pfd[1]);
  if (read(pfd[0], &x, sizeof x) != (ssize_t)sizeof x)
    bail("the SysV namespace child said nothing");
  close(pfd[0]);
  while (waitpid(k, &st, 0) < 0)
    ;
  if (x.made <= 0) {
    for (st = 0; st < 3; st++) {
      if (x.made == 0)
        skip("sysv (%s): no IPC namespace of our own here (unshare: root only)", how);
      else
        skip("sysv (%s): a new IPC namespace's first segment is %d here, not 0", how, -x.made);
    }
    return;
  }
  ok(x.r0 == 1 && x.r0b == 1 && x.same0,
     "sysv (%s): shmid 0 of a new IPC namespace, attached twice: %d, %d, one identity (ino %#llx)",
     how, x.r0, x.r0b, x.ino0);
  if (x.other_ns == 0)
    skip("sysv (%s): no second namespace's segment 0", how);
  else
    ok(x.other_ns == 1, "sysv (%s): shmid 0 of another namespace: %d, another object", how, x.rb);
  if (x.collide_n < 0)
    skip("sysv (%s): the anonymous mapping's inode %llu (%d) is out of the shmids' reach here",
         how, x.anon_ino, x.ra);
  else
    ok(x.collide_differs,
       "sysv (%s): shmid %d beside an anonymous shared mapping of inode %llu: %d, another object",
       how, x.collide_n, x.anon_ino, x.rc);
}

/* Private memory, nothing mapped, and a mapping replaced at its address. */
static void
check_others(int maps)
{
  const char *how = maps ? "maps" : "query";
  struct pf_os_objid a, b;
  struct so_obj o1, o2;
  char *p, *q;
  int r;
  static uint32_t bss_word;

  p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED)
    sysbail("mmap");
  p[0] = 1;
  r = pf_os_object_id(p, &a);
  ok(r == 0, "private anonymous (%s): %d (private: keyed by address)", how, r);
  r = pf_os_object_id(&bss_word, &a);
  ok(r == 0, "the program's own data (%s): %d", how, r);
  munmap(p, 4096);
  r = pf_os_object_id(p, &a);
  {
    /* Another thread (a sanitizer's) may map something into the hole
     * meanwhile: then the answer is about that mapping; try a new hole. */
    unsigned char vec;
    int tries;
    for (tries = 0; r != -EFAULT && tries < 5 && mincore(p, 4096, &vec) == 0; tries++) {
      p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED)
        sysbail("mmap");
      munmap(p, 4096);
      r = pf_os_object_id(p, &a);
    }
  }
  ok(r == -EFAULT, "nothing mapped (%s): %d (-EFAULT %d)", how, r, -EFAULT);

  /* MAP_PRIVATE of a file, written (copy-on-write): private */
  if (so_make(&o1, 2, "objid1") != 0 || so_make(&o2, 1, "objid2") != 0)
    sysbail("objects");
  p = mmap(NULL, OBJ_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, o1.fd, 0);
  if (p == MAP_FAILED)
    sysbail("mmap private");
  p[WORD_OFF] = 1;
  r = pf_os_object_id(p + WORD_OFF, &a);
  ok(r == 0, "MAP_PRIVATE file mapping after copy-on-write (%s): %d", how, r);
  munmap(p, OBJ_SIZE);

  /* the same address, another object: seen at once */
  p = so_map(&o1, 0);
  if (!p)
    sysbail("map");
  r = pf_os_object_id(p + WORD_OFF, &a);
  q = mmap(p, OBJ_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, o2.fd, 0);
  if (q == MAP_FAILED)
    sysbail("mmap fixed");
  {
    int r2 = pf_os_object_id(p + WORD_OFF, &b);
    ok(r == 1 && r2 == 1 && q == p && !(a.dev == b.dev && a.ino == b.ino),
       "munmap + mmap of another object at the same address (%s): ino %llu then %llu", how,
       (unsigned long long)a.ino, (unsigned long long)b.ino);
  }
  munmap(q, OBJ_SIZE);
  so_drop(&o1);
  so_drop(&o2);
}

int
main(int argc, char **argv)
{
  int maps, kind;
  struct pf_os_objid id;
  static uint32_t probe;

  if (argc == 5 && strcmp(argv[1], "--child") == 0)
    return child_main(argv);
  plan_lazy();
  for (maps = 0; maps < 2; maps++) {
    pf_os_objid_force_maps(maps);
    if (!maps) {
      /* which reader the first run has: the probe decides */
      (void)pf_os_object_id(&probe, &id);
      diag("first run's reader: %s", pf_os_objid_reader() == 1
                                         ? "PROCMAP_QUERY"
                                         : "/proc/self/maps (this kernel has no PROCMAP_QUERY)");
    }
    for (kind = 0; kind < 5; kind++)
      check_kind(kind, maps, argv[0]);
    check_sysv_ns(maps);
    check_others(maps);
  }
  return 0;
}
#endif
