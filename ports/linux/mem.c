/* mem.c - src/os.h on Linux: each answer is one system call, so the
 * library never takes a signal on an untrusted pointer where the kernel
 * would answer EFAULT.  Used on slow paths only (see doc/internals.md, "Bad pointers").
 *
 * - copy in: process_vm_readv on ourselves (EFAULT for an unreadable
 *   source; protections are honoured, unlike /proc/self/mem).  Where it is
 *   refused (ENOSYS: qemu-user; EPERM: a seccomp policy, e.g. a container
 *   runtime's default), through a pipe: write(2) reads the source as the
 *   kernel reads any argument (EFAULT, never a signal), read(2) brings the
 *   bytes back;
 * - write probe: madvise(MADV_POPULATE_WRITE) on the word's page (Linux
 *   5.14+): it faults the page in writable as a store would, without
 *   storing; EINVAL for a mapping without write permission, ENOMEM for no
 *   mapping, EFAULT where a store would raise SIGBUS.  Probed once, on a
 *   writable and on a read-only page: a kernel without it answers EINVAL
 *   for both, an emulator that ignores the advice (qemu-user) 0 for both;
 *   then /proc/self/maps tells whether the page is mapped writable;
 * - shared key: when the write probe fails, /proc/self/maps tells whether
 *   the page is private anonymous (the kernel: EFAULT) or a file or shared
 *   mapping (the kernel keys it by inode: fine). */
#include "os.h"

#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
# define MADV_POPULATE_WRITE 23
#endif

/* Facts learnt once, racily but idempotently (every thread learns the
 * same), through atomic loads and stores. */
static unsigned int pf_mem_vm_broken;       /* process_vm_readv refused: copies through a pipe */
static unsigned int pf_mem_populate_state; /* MADV_POPULATE_WRITE: 0 unknown, 1 no, 2 yes */
static AO_t pf_mem_pagesize;

/* The copy through a pipe: 0, -EFAULT, or 1 when it cannot be told (no
 * descriptors left: then a plain copy, as before this fallback existed).
 * Raw system calls (none is a cancellation point), and cancellation off
 * meanwhile, asynchronous included: no descriptor leaks.  A signal handler
 * that copies in meanwhile uses its own pipe. */
static int
pf_mem_copy_pipe(void *dst, const void *src, size_t n)
{
  int fds[2], state, ret = 1, saved = errno;
  long w;
  if (n > 512)                        /* within PIPE_BUF: one write, one read */
    return 1;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &state);
  if (syscall(SYS_pipe2, fds, O_CLOEXEC) == 0) {
    w = syscall(SYS_write, fds[1], src, n);
    if (w == (long)n)
      ret = syscall(SYS_read, fds[0], dst, n) == (long)n ? 0 : 1;
    else if (w >= 0 || errno == EFAULT)
      ret = -EFAULT;                  /* short: the object straddles into an unreadable page */
    syscall(SYS_close, fds[0]);
    syscall(SYS_close, fds[1]);
  }
  pthread_setcancelstate(state, NULL);
  errno = saved;
  return ret;
}

int
pf_os_copy_in(void *dst, const void *src, size_t n)
{
  struct iovec local, remote;
  ssize_t got;
  int ret;

  if (pf_addr_unreadable(src))
    return -EFAULT;
  if (!AO_int_load(&pf_mem_vm_broken)) {
    local.iov_base = dst;
    local.iov_len = n;
    remote.iov_base = (void *)(uintptr_t)src;
    remote.iov_len = n;
    got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    if (got == (ssize_t)n)
      return 0;
    if (got >= 0 || errno == EFAULT)
      return -EFAULT;   /* short: the object straddles into an unreadable page */
    /* ENOSYS (an emulator), EPERM (a seccomp policy): the pipe from now on. */
    AO_int_store(&pf_mem_vm_broken, 1);
  }
  if ((ret = pf_mem_copy_pipe(dst, src, n)) <= 0)
    return ret;
  memcpy(dst, src, n);
  return 0;
}

static uintptr_t
pf_mem_page(const void *p)
{
  AO_t size = AO_load(&pf_mem_pagesize);
  if (!size) {
    size = (AO_t)sysconf(_SC_PAGESIZE);
    AO_store(&pf_mem_pagesize, size);
  }
  return (uintptr_t)p & ~((uintptr_t)size - 1);
}

/* Whether MADV_POPULATE_WRITE tells: it must accept a writable page and
 * refuse a read-only one. */
static int
pf_mem_populate_known(void)
{
  unsigned int v = AO_int_load(&pf_mem_populate_state);
  if (v == 0) {
    static uint32_t probe_word;
    int saved = errno;
    void *ro;
    v = 1;
    if (madvise((void *)pf_mem_page(&probe_word), 1, MADV_POPULATE_WRITE) == 0
        && (ro = mmap(NULL, 1, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) != MAP_FAILED) {
      if (madvise(ro, 1, MADV_POPULATE_WRITE) != 0)
        v = 2;
      munmap(ro, 1);
    }
    errno = saved;
    AO_int_store(&pf_mem_populate_state, v);
  }
  return v == 2;
}

/* 0 writable, -EINVAL no write permission, -ENOMEM unmapped, -EFAULT. */
static int
pf_mem_populate(const void *p)
{
  int saved = errno, ret = 0;
  if (madvise((void *)pf_mem_page(p), 1, MADV_POPULATE_WRITE) != 0)
    ret = -errno;
  errno = saved;
  return ret;
}

static int pf_mem_mapping(uintptr_t a, char perms[4], int *file);

int
pf_os_probe_write(const void *p)
{
  char perms[4];
  int file, m;
  if (pf_addr_unreadable(p))
    return -EFAULT;
  if (pf_mem_populate_known())
    return pf_mem_populate(p) == 0 ? 0 : -EFAULT;
  if ((m = pf_mem_mapping((uintptr_t)p, perms, &file)) < 0)
    return 0;                          /* cannot be told */
  return m == 1 && perms[1] == 'w' ? 0 : -EFAULT;
}

/* A hexadecimal number at *s (no locale, no stdio: callable from a signal
 * handler); *s moves past it. */
static unsigned long
pf_mem_hex(const char **s)
{
  unsigned long v = 0;
  for (;; (*s)++) {
    char c = **s;
    if (c >= '0' && c <= '9')
      v = v * 16 + (unsigned long)(c - '0');
    else if (c >= 'a' && c <= 'f')
      v = v * 16 + (unsigned long)(c - 'a' + 10);
    else
      return v;
  }
}

/* Read /proc/self/maps for the mapping holding a: 1 when there is one
 * (perms: its "rwxp" field; *file: backed by a file), 0 when there is none,
 * -1 when it cannot be told. */
static int
pf_mem_mapping(uintptr_t a, char perms[4], int *file)
{
  char buf[4096];
  size_t len = 0;
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC), ret = 0;
  if (fd < 0)
    return -1;
  for (;;) {
    ssize_t got = read(fd, buf + len, sizeof buf - 1 - len);
    char *line, *nl;
    if (got <= 0)
      break;
    len += (size_t)got;
    buf[len] = '\0';
    for (line = buf; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
      /* "lo-hi perms offset dev inode path": fields by spaces */
      const char *q = line, *pm;
      unsigned long lo, hi;
      int field;
      *nl = '\0';
      lo = pf_mem_hex(&q);
      if (*q++ != '-')
        continue;
      hi = pf_mem_hex(&q);
      if (*q++ != ' ' || a < lo || a >= hi)
        continue;
      pm = q;
      for (field = 0; field < 3 && *q; q++)   /* past perms, offset, dev */
        field += *q == ' ';
      memcpy(perms, pm, 4);
      *file = *q && *q != '0';                /* inode */
      ret = 1;
      goto out;
    }
    len -= (size_t)(line - buf);       /* keep the unfinished line */
    memmove(buf, line, len);
    if (len == sizeof buf - 1)
      len = 0;                         /* a line longer than the buffer: drop it */
  }
out:
  close(fd);
  return ret;
}

int
pf_os_shared_key_check(const void *p)
{
  char perms[4];
  int r, file;
  if (pf_addr_unreadable(p))
    return -EFAULT;
  if (pf_mem_populate_known()) {
    r = pf_mem_populate(p);
    if (r == 0)
      return 0;
    if (r == -ENOMEM || r == -EFAULT)
      return -EFAULT;
  }
  /* Not writable (or the write probe cannot tell): readable file or shared
   * mappings are keyed by the kernel, private anonymous ones are not. */
  if ((r = pf_mem_mapping((uintptr_t)p, perms, &file)) < 0)
    return 0;
  if (r == 0)
    return -EFAULT;
  if (perms[1] == 'w')
    return 0;
  return perms[0] == 'r' && (perms[3] == 's' || file) ? 0 : -EFAULT;
}
