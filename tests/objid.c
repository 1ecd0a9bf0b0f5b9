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
 * the other object at once (no stale identity).  Every check runs twice:
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

#if !defined(__linux__)
int
main(void)
{
  skip_all("pf_os_object_id is Linux's only for now");
  return 0;
}
#else
#include <errno.h>
#include <fcntl.h>
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

#define OBJ_SIZE (64 * 1024)
#define WORD_OFF (3 * 4096 + 40)          /* the word's byte offset in the object */

static const char *kinds[] = { "anon", "posix", "file", "sysv", "memfd" };

struct obj {
  int kind;
  int fd;                                 /* posix, file, memfd */
  int shmid;                              /* sysv */
  char name[128];                         /* posix: shm name; file: path */
};

static int
obj_make(struct obj *o, int kind)
{
  memset(o, 0, sizeof *o);
  o->kind = kind;
  o->fd = -1;
  o->shmid = -1;
  switch (kind) {
  case 0:
    return 0;
  case 1:
    snprintf(o->name, sizeof o->name, "/pfutex-objid-%ld", (long)getpid());
    shm_unlink(o->name);
    if ((o->fd = shm_open(o->name, O_RDWR | O_CREAT | O_EXCL, 0600)) < 0)
      return -1;
    break;
  case 2: {
    const char *dir = getenv("TMPDIR");
    snprintf(o->name, sizeof o->name, "%s/pfutex-objid-%ld", dir ? dir : "/tmp", (long)getpid());
    if ((o->fd = open(o->name, O_RDWR | O_CREAT | O_TRUNC, 0600)) < 0)
      return -1;
    break;
  }
  case 3:
    if ((o->shmid = shmget(IPC_PRIVATE, OBJ_SIZE, IPC_CREAT | 0600)) < 0)
      return -1;
    return 0;
  case 4:
#ifdef SYS_memfd_create
    if ((o->fd = (int)syscall(SYS_memfd_create, "pfutex-objid", 0)) < 0)
      return -1;
    break;
#else
    errno = ENOSYS;
    return -1;
#endif
  }
  return ftruncate(o->fd, OBJ_SIZE);
}

static void
obj_drop(struct obj *o)
{
  if (o->fd >= 0)
    close(o->fd);
  if (o->kind == 1)
    shm_unlink(o->name);
  if (o->kind == 2)
    unlink(o->name);
  if (o->shmid >= 0)
    shmctl(o->shmid, IPC_RMID, NULL);
}

/* Map the object from byte `from` (a page multiple) for len bytes; anon:
 * a fresh anonymous shared mapping (only the first map of it). */
static char *
obj_map(const struct obj *o, off_t from, size_t len)
{
  void *p;
  if (o->kind == 0)
    p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  else if (o->kind == 3)
    return (p = shmat(o->shmid, NULL, 0)) == (void *)-1 ? NULL : (char *)p + from;
  else
    p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, o->fd, from);
  return p == MAP_FAILED ? NULL : p;
}

static void
obj_unmap(const struct obj *o, char *p, off_t from, size_t len)
{
  if (o->kind == 3)
    shmdt(p - from);
  else
    munmap(p, len);
}

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
  struct obj o;
  struct pf_os_objid id;
  char *p;
  int r;
  memset(&o, 0, sizeof o);
  o.kind = atoi(argv[2]);
  o.fd = -1;
  o.shmid = -1;
  if (atoi(argv[4]))
    pf_os_objid_force_maps(1);
  switch (o.kind) {
  case 1:
    o.fd = shm_open(argv[3], O_RDWR, 0);
    break;
  case 2:
    o.fd = open(argv[3], O_RDWR);
    break;
  case 3:
    o.shmid = atoi(argv[3]);
    break;
  case 4:
    o.fd = atoi(argv[3]);                 /* inherited across exec */
    break;
  default:
    return 2;
  }
  if (o.kind != 3 && o.fd < 0)
    return 3;
  if (!(p = obj_map(&o, 0, OBJ_SIZE)))
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
  struct obj o;
  struct pf_os_objid a, b, c, f;
  char *p1, *p2, cmd[512];
  int r1, r2, rf = -9, pfd[2], st, rc;
  pid_t k;

  if (obj_make(&o, kind) != 0) {
    skip("%s (%s): cannot make the object: %s", kinds[kind], how, strerror(errno));
    return;
  }
  /* two mappings: the whole object, and (not anon: its second mapping
   * would be another object) from its second page */
  if (!(p1 = obj_map(&o, 0, OBJ_SIZE)))
    sysbail("map %s", kinds[kind]);
  r1 = pf_os_object_id(p1 + WORD_OFF, &a);
  if (kind == 0 || kind == 3) {
    /* shmat twice; anon: mremap(old_size 0) maps the same shared
     * anonymous object a second time */
    p2 = kind == 3 ? obj_map(&o, 0, OBJ_SIZE) : mremap(p1, 0, OBJ_SIZE, MREMAP_MAYMOVE);
    if (!p2 || p2 == MAP_FAILED)
      sysbail("a second mapping of %s", kinds[kind]);
    r2 = pf_os_object_id(p2 + WORD_OFF, &b);
  } else {
    if (!(p2 = obj_map(&o, 4096, OBJ_SIZE - 4096)))
      sysbail("map %s at 4096", kinds[kind]);
    r2 = pf_os_object_id(p2 + WORD_OFF - 4096, &b);
  }
  ok(r1 == 1 && r2 == 1 && id_eq(&a, &b) && a.off == WORD_OFF && a.ino != 0,
     "%s (%s): two mappings at %p and %p: %d, %d; dev %llu ino %llu off %llu / dev %llu ino "
     "%llu off %llu",
     kinds[kind], how, (void *)p1, (void *)p2, r1, r2, (unsigned long long)a.dev,
     (unsigned long long)a.ino, (unsigned long long)a.off, (unsigned long long)b.dev,
     (unsigned long long)b.ino, (unsigned long long)b.off);
  if (o.fd >= 0) {
    struct stat sb;
    if (fstat(o.fd, &sb) != 0)
      sysbail("fstat");
    ok((uint64_t)sb.st_dev == a.dev && (uint64_t)sb.st_ino == a.ino,
       "%s (%s): the identity is the object's (fstat: dev %llu ino %llu)", kinds[kind], how,
       (unsigned long long)sb.st_dev, (unsigned long long)sb.st_ino);
  }
  /* a fork()ed child (its own mapping for every kind but anon) */
  if (pipe(pfd) != 0)
    sysbail("pipe");
  fflush(stdout);
  if ((k = fork()) < 0)
    sysbail("fork");
  if (k == 0) {
    char *q = kind == 0 ? p1 : obj_map(&o, 0, OBJ_SIZE);
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
  ok(rf == 1 && id_eq(&a, &f), "%s (%s): a fork()ed child%s: %d, the same identity", kinds[kind],
     how, kind == 0 ? " (the inherited mapping)" : " (a mapping of its own)", rf);
  /* an exec'd program mapping it afresh */
  if (kind != 0) {
    if (kind == 4) {
      int fl = fcntl(o.fd, F_GETFD);
      fcntl(o.fd, F_SETFD, fl & ~FD_CLOEXEC);
    }
    snprintf(cmd, sizeof cmd, "%s%s%s --child %d %s %d", pft_emulator() ? pft_emulator() : "",
             pft_emulator() ? " " : "", self, kind,
             kind == 3 ? (snprintf(o.name, sizeof o.name, "%d", o.shmid), o.name)
             : kind == 4 ? (snprintf(o.name, sizeof o.name, "%d", o.fd), o.name)
                         : o.name,
             maps);
    rc = read_id(cmd, &rf, &c);
    ok(rc == 0 && rf == 1 && id_eq(&a, &c), "%s (%s): an exec'd process mapping it: %s %d",
       kinds[kind], how, rc == 0 ? "answered" : "FAILED to answer", rf);
  }
  obj_unmap(&o, p1, 0, OBJ_SIZE);
  if (p2 && p2 != p1)
    obj_unmap(&o, p2, kind == 0 || kind == 3 ? 0 : 4096, kind == 0 || kind == 3 ? OBJ_SIZE : OBJ_SIZE - 4096);
  obj_drop(&o);
}

/* Private memory, nothing mapped, and a mapping replaced at its address. */
static void
check_others(int maps)
{
  const char *how = maps ? "maps" : "query";
  struct pf_os_objid a, b;
  struct obj o1, o2;
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
  ok(r == -EFAULT, "nothing mapped (%s): %d (-EFAULT %d)", how, r, -EFAULT);

  /* MAP_PRIVATE of a file, written (copy-on-write): private */
  if (obj_make(&o1, 2) != 0 || obj_make(&o2, 1) != 0)
    sysbail("objects");
  p = mmap(NULL, OBJ_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE, o1.fd, 0);
  if (p == MAP_FAILED)
    sysbail("mmap private");
  p[WORD_OFF] = 1;
  r = pf_os_object_id(p + WORD_OFF, &a);
  ok(r == 0, "MAP_PRIVATE file mapping after copy-on-write (%s): %d", how, r);
  munmap(p, OBJ_SIZE);

  /* the same address, another object: seen at once */
  p = obj_map(&o1, 0, OBJ_SIZE);
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
  obj_drop(&o1);
  obj_drop(&o2);
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
    check_others(maps);
  }
  return 0;
}
#endif
