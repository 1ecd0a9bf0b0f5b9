/* shm_obj.h - the five kinds of shared memory NPTL-style programs put
 * process-shared futex words in (tests/objid, tests/shm_futex):
 *   0 anon   mmap(MAP_SHARED | MAP_ANONYMOUS) before fork()
 *   1 posix  shm_open + mmap
 *   2 file   a regular file, mmap(MAP_SHARED)
 *   3 sysv   shmget + shmat
 *   4 memfd  memfd_create, its descriptor passed on (fork, exec)
 * Made, mapped (again, elsewhere: so_map2), named for an exec'd process
 * (so_arg / so_from_arg) and removed.  POSIX hosts with fork(); memfd
 * where the system call exists. */
#ifndef PF_TEST_SHM_OBJ_H
#define PF_TEST_SHM_OBJ_H

#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1 /* mremap */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef __linux__
# include <sys/syscall.h>
#endif

#define SO_SIZE (64 * 1024)
#define SO_KINDS 5

static const char *const so_kinds[SO_KINDS] = { "anon", "posix", "file", "sysv", "memfd" };

struct so_obj {
  int kind;
  int fd;                                 /* posix, file, memfd */
  int shmid;                              /* sysv */
  char name[128];                         /* posix: shm name; file: path */
  char arg[128];                          /* for an exec'd process */
};

/* 0, or -1 with errno. */
static inline int
so_make(struct so_obj *o, int kind, const char *tag)
{
  memset(o, 0, sizeof *o);
  o->kind = kind;
  o->fd = -1;
  o->shmid = -1;
  switch (kind) {
  case 0:
    return 0;
  case 1:
    snprintf(o->name, sizeof o->name, "/pfutex-%s-%ld", tag, (long)getpid());
    shm_unlink(o->name);
    if ((o->fd = shm_open(o->name, O_RDWR | O_CREAT | O_EXCL, 0600)) < 0)
      return -1;
    snprintf(o->arg, sizeof o->arg, "%s", o->name);
    break;
  case 2: {
    const char *dir = getenv("TMPDIR");
    snprintf(o->name, sizeof o->name, "%s/pfutex-%s-%ld", dir && *dir ? dir : "/tmp", tag,
             (long)getpid());
    if ((o->fd = open(o->name, O_RDWR | O_CREAT | O_TRUNC, 0600)) < 0)
      return -1;
    snprintf(o->arg, sizeof o->arg, "%s", o->name);
    break;
  }
  case 3:
    if ((o->shmid = shmget(IPC_PRIVATE, SO_SIZE, IPC_CREAT | 0600)) < 0)
      return -1;
    snprintf(o->arg, sizeof o->arg, "%d", o->shmid);
    return 0;
  case 4:
#if defined(__linux__) && defined(SYS_memfd_create)
    if ((o->fd = (int)syscall(SYS_memfd_create, "pfutex-test", 0)) < 0)
      return -1;
    snprintf(o->arg, sizeof o->arg, "%d", o->fd);   /* inherited across exec */
    break;
#else
    errno = ENOSYS;
    return -1;
#endif
  default:
    errno = EINVAL;
    return -1;
  }
  return ftruncate(o->fd, SO_SIZE);
}

/* An exec'd process's view of the object named by so_make's arg: 0 or -1. */
static inline int
so_from_arg(struct so_obj *o, int kind, const char *arg)
{
  memset(o, 0, sizeof *o);
  o->kind = kind;
  o->fd = -1;
  o->shmid = -1;
  switch (kind) {
  case 1:
    o->fd = shm_open(arg, O_RDWR, 0);
    break;
  case 2:
    o->fd = open(arg, O_RDWR);
    break;
  case 3:
    o->shmid = atoi(arg);
    return 0;
  case 4:
    o->fd = atoi(arg);
    break;
  default:
    errno = EINVAL;
    return -1;
  }
  return o->fd < 0 ? -1 : 0;
}

/* Let the descriptor through an exec (memfd's). */
static inline void
so_keep_on_exec(const struct so_obj *o)
{
  if (o->fd >= 0)
    fcntl(o->fd, F_SETFD, fcntl(o->fd, F_GETFD) & ~FD_CLOEXEC);
}

/* Map the object (whole; from byte `from`, a page multiple, for the kinds
 * with a descriptor); anon: a fresh object, so only once (then so_map2). */
static inline char *
so_map(const struct so_obj *o, off_t from)
{
  void *p;
  if (o->kind == 0)
    p = mmap(NULL, SO_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  else if (o->kind == 3)
    return (p = shmat(o->shmid, NULL, 0)) == (void *)-1 ? NULL : (char *)p + from;
  else
    p = mmap(NULL, SO_SIZE - (size_t)from, PROT_READ | PROT_WRITE, MAP_SHARED, o->fd, from);
  return p == MAP_FAILED ? NULL : p;
}

/* The object mapped a second time, at another address, given a first
 * mapping p of it from byte 0 (anon: mremap with old_size 0, which maps a
 * shared mapping's object again; NULL where that is refused: qemu-user
 * answers ENOMEM, so_anon_twice tells). */
static inline char *
so_map2(const struct so_obj *o, char *p)
{
#ifdef __linux__
  if (o->kind == 0) {
    void *q = mremap(p, 0, SO_SIZE, MREMAP_MAYMOVE);
    return q == MAP_FAILED ? NULL : q;
  }
#else
  if (o->kind == 0)
    return p;
#endif
  return so_map(o, 0);
}

/* Can this system map an anonymous shared mapping's object twice (mremap
 * with old_size 0)?  1, or 0 (errno: why). */
static inline int
so_anon_twice(void)
{
#ifdef __linux__
  struct so_obj o;
  char *p, *q;
  int saved;
  memset(&o, 0, sizeof o);
  o.fd = o.shmid = -1;
  if (!(p = so_map(&o, 0)))
    return 0;
  q = so_map2(&o, p);
  saved = errno;
  if (q)
    munmap(q, SO_SIZE);
  munmap(p, SO_SIZE);
  errno = saved;
  return q != NULL;
#else
  errno = ENOSYS;
  return 0;
#endif
}

static inline void
so_unmap(const struct so_obj *o, char *p, off_t from)
{
  if (o->kind == 3)
    shmdt(p - from);
  else
    munmap(p, SO_SIZE - (o->kind == 0 ? 0 : (size_t)from));
}

static inline void
so_drop(struct so_obj *o)
{
  if (o->fd >= 0)
    close(o->fd);
  if (o->kind == 1)
    shm_unlink(o->name);
  if (o->kind == 2)
    unlink(o->name);
  if (o->shmid >= 0)
    shmctl(o->shmid, IPC_RMID, NULL);
  o->fd = -1;
  o->shmid = -1;
}

#endif
