/* procmaps.h - what the shims' models of the BSD and macOS memory-map
 * calls (tests/shims/darwin: mach_vm_region, mach_vm_page_info;
 * tests/shims/freebsd: sysctl KERN_PROC_VMMAP, UMTX_OP_SHM) read of the
 * host: the mappings of Linux's /proc/self/maps, one at a time, with open
 * and read only (no stdio, no allocation: a signal handler's futex op may
 * get here), and a mixing function for the ids the models make up. */
#ifndef PF_SHIM_PROCMAPS_H
#define PF_SHIM_PROCMAPS_H

#include <atomic_ops.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>

#include "../../ports/linux/procmap.h"
#include <string.h>
#include <unistd.h>

/* One line: "lo-hi perms offset major:minor inode path" (dev is
 * major << 32 | minor: shmem is 1). */
struct pf_shim_map {
  uint64_t lo, hi, off, dev, ino;
  char perms[4];
  char path[256];
};

static uint64_t
pf_shim_maps_num(const char **q, unsigned int base)
{
  uint64_t v = 0;
  for (;; (*q)++) {
    char c = **q;
    if (c >= '0' && c <= '9')
      v = v * base + (uint64_t)(c - '0');
    else if (base == 16 && c >= 'a' && c <= 'f')
      v = v * base + (uint64_t)(c - 'a' + 10);
    else
      return v;
  }
}

static int
pf_shim_maps_parse(const char *q, struct pf_shim_map *m)
{
  size_t n;
  m->lo = pf_shim_maps_num(&q, 16);
  if (*q++ != '-')
    return 0;
  m->hi = pf_shim_maps_num(&q, 16);
  if (*q++ != ' ' || strlen(q) < 5)
    return 0;
  memcpy(m->perms, q, 4);
  q += 5;
  m->off = pf_shim_maps_num(&q, 16);
  q++;
  m->dev = pf_shim_maps_num(&q, 16) << 32;
  q++;
  m->dev |= pf_shim_maps_num(&q, 16);
  q++;
  m->ino = pf_shim_maps_num(&q, 10);
  while (*q == ' ')
    q++;
  n = strlen(q) < sizeof m->path - 1 ? strlen(q) : sizeof m->path - 1;
  memcpy(m->path, q, n);
  m->path[n] = '\0';
  m->ino = pf_procmap_ino(m->ino, m->path);  /* the host's identity of a segment (procmap.h) */
  return 1;
}

/* fn(m, arg) for each mapping in turn, until it returns nonzero: 0, or -1
 * when the file cannot be read. */
static int
pf_shim_maps(int (*fn)(const struct pf_shim_map *, void *), void *arg)
{
  char buf[4096];
  size_t len = 0;
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC), stop = 0;
  if (fd < 0)
    return -1;
  while (!stop) {
    ssize_t got = read(fd, buf + len, sizeof buf - 1 - len);
    char *line, *nl;
    if (got <= 0)
      break;
    len += (size_t)got;
    buf[len] = '\0';
    for (line = buf; !stop && (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
      struct pf_shim_map m;
      *nl = '\0';
      stop = pf_shim_maps_parse(line, &m) && fn(&m, arg);
    }
    len -= (size_t)(line - buf);               /* keep the unfinished line */
    memmove(buf, line, len);
    if (len == sizeof buf - 1)
      len = 0;
  }
  close(fd);
  return 0;
}

struct pf_shim_maps_above_arg {
  uint64_t a;
  struct pf_shim_map *m;
  int found;
};

static int
pf_shim_maps_above(const struct pf_shim_map *m, void *arg)
{
  struct pf_shim_maps_above_arg *f = (struct pf_shim_maps_above_arg *)arg;
  if (m->hi <= f->a)
    return 0;
  *f->m = *m;
  f->found = 1;
  return 1;
}

/* The first mapping that ends above a (the one holding it, or the next):
 * 1 with *m set (m->path: the kernel's name of it, or empty), 0 when
 * there is none, -1 when nothing can be read.  One ioctl where the kernel
 * has PROCMAP_QUERY (two for a name too long for m->path) (a
 * model called on every shared futex op must not read the text of every
 * mapping: under load that costs milliseconds); the walk elsewhere.
 * errno is kept. */
static int
pf_shim_maps_at(uint64_t a, struct pf_shim_map *m)
{
  static int no_query;                 /* the ioctl answered ENOTTY/EINVAL */
  struct pf_procmap_query q;
  struct pf_shim_maps_above_arg f;
  int e = errno, fd, r;
  if (!__atomic_load_n(&no_query, __ATOMIC_RELAXED)) {
    fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
      errno = e;
      return -1;
    }
    memset(&q, 0, sizeof q);
    q.size = sizeof q;
    q.query_flags = PF_PROCMAP_COVERING_OR_NEXT;
    q.query_addr = a;
    r = pf_procmap_query_named(fd, &q, m->path, sizeof m->path);
    close(fd);
    if (r != 0 && r != ENOENT)
      __atomic_store_n(&no_query, 1, __ATOMIC_RELAXED);
    else {
      errno = e;
      if (r != 0)
        return 0;
      m->lo = q.vma_start;
      m->hi = q.vma_end;
      m->off = q.vma_offset;
      m->dev = (uint64_t)q.dev_major << 32 | q.dev_minor;
      m->ino = q.inode;
      m->perms[0] = (q.vma_flags & PF_PROCMAP_VMA_READABLE) ? 'r' : '-';
      m->perms[1] = (q.vma_flags & PF_PROCMAP_VMA_WRITABLE) ? 'w' : '-';
      m->perms[2] = (q.vma_flags & PF_PROCMAP_VMA_EXECUTABLE) ? 'x' : '-';
      m->perms[3] = (q.vma_flags & PF_PROCMAP_VMA_SHARED) ? 's' : 'p';
      m->ino = pf_procmap_ino(m->ino, m->path);
      return 1;
    }
  }
  f.a = a;
  f.m = m;
  f.found = 0;
  r = pf_shim_maps(pf_shim_maps_above, &f);
  errno = e;
  return r < 0 ? -1 : f.found;
}

/* The mapping's protection as the BSDs' map queries give it: read 1,
 * write 2, exec 4 (FreeBSD and NetBSD KVME_PROT_*, OpenBSD KVE_PROT_*). */
static inline int
pf_shim_maps_prot(const struct pf_shim_map *m)
{
  return (m->perms[0] == 'r' ? 1 : 0) | (m->perms[1] == 'w' ? 2 : 0) | (m->perms[2] == 'x' ? 4 : 0);
}

/* The BSD shim ports' object_id switch (their shim.h): -1 until the first
 * op or a test sets it, then 0 (the host's identity) or 1 (the OS's model).
 * No lock (a signal handler's op may be the first): the environment's
 * value env=1 is put in with a compare-and-swap from -1, so a test's
 * setting is never overwritten. */
static inline int
pf_shim_identity_on(volatile AO_t *sw, const char *env)
{
  if (AO_load(sw) == (AO_t)-1) {
    const char *s = getenv(env);
    (void)AO_compare_and_swap_full(sw, (AO_t)-1, (AO_t)(s && *s == '1'));
  }
  return AO_load(sw) == 1;
}

/* A made-up id: a 64-bit mix of x, never 0. */
static inline uint64_t
pf_shim_mix(uint64_t x)
{
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  x ^= x >> 33;
  return x ? x : 1;
}

#endif
