/* mem.c - src/os.h on Linux: each answer is one system call, so the
 * library never takes a signal on an untrusted pointer where the kernel
 * would answer EFAULT.  Used on slow paths only (see README).
 *
 * - copy in: process_vm_readv on ourselves (EFAULT for an unreadable
 *   source; protections are honoured, unlike /proc/self/mem);
 * - write probe: madvise(MADV_POPULATE_WRITE) on the word's page (Linux
 *   5.14+): it faults the page in writable as a store would, without
 *   storing; EINVAL for a mapping without write permission, ENOMEM for no
 *   mapping, EFAULT where a store would raise SIGBUS.  A kernel without it
 *   answers EINVAL for a writable page too: probed once, and then the probe
 *   answers 0 (as the generic version);
 * - shared key: when the write probe fails, /proc/self/maps tells whether
 *   the page is private anonymous (the kernel: EFAULT) or a file or shared
 *   mapping (the kernel keys it by inode: fine). */
#include "os.h"

#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
# define MADV_POPULATE_WRITE 23
#endif

/* Facts learnt once, racily but idempotently (every thread learns the
 * same), through atomic loads and stores. */
static unsigned int pf_mem_vm_broken;       /* process_vm_readv refused: plain copies */
static unsigned int pf_mem_populate_state; /* MADV_POPULATE_WRITE: 0 unknown, 1 no, 2 yes */
static AO_t pf_mem_pagesize;

int
pf_os_copy_in(void *dst, const void *src, size_t n)
{
  struct iovec local, remote;
  ssize_t got;

  if (pf_addr_unreadable(src))
    return -EFAULT;
  if (AO_int_load(&pf_mem_vm_broken)) {
    memcpy(dst, src, n);
    return 0;
  }
  local.iov_base = dst;
  local.iov_len = n;
  remote.iov_base = (void *)(uintptr_t)src;
  remote.iov_len = n;
  got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
  if (got == (ssize_t)n)
    return 0;
  if (got >= 0 || errno == EFAULT)
    return -EFAULT;     /* short: the object straddles into an unreadable page */
  /* ENOSYS (an emulator), EPERM (a seccomp policy): plain copies from now on. */
  AO_int_store(&pf_mem_vm_broken, 1);
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

static int
pf_mem_populate_known(void)
{
  unsigned int v = AO_int_load(&pf_mem_populate_state);
  if (v == 0) {
    static uint32_t probe_word;
    int saved = errno;
    v = madvise((void *)pf_mem_page(&probe_word), 1, MADV_POPULATE_WRITE) == 0 ? 2 : 1;
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

int
pf_os_probe_write(const void *p)
{
  if (pf_addr_unreadable(p))
    return -EFAULT;
  if (!pf_mem_populate_known())
    return 0;
  return pf_mem_populate(p) == 0 ? 0 : -EFAULT;
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

/* Read /proc/self/maps for the mapping holding p: 1 when it is readable and
 * either shared or backed by a file, 0 otherwise (private anonymous or not
 * readable), -1 when it cannot be told. */
static int
pf_mem_mapping_keyable(uintptr_t a)
{
  char buf[4096];
  size_t len = 0;
  int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC), ret = -1;
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
      const char *q = line, *perms;
      unsigned long lo, hi;
      int field;
      *nl = '\0';
      lo = pf_mem_hex(&q);
      if (*q++ != '-')
        continue;
      hi = pf_mem_hex(&q);
      if (*q++ != ' ' || a < lo || a >= hi)
        continue;
      perms = q;
      for (field = 0; field < 3 && *q; q++)   /* past perms, offset, dev */
        field += *q == ' ';
      ret = perms[0] == 'r' && (perms[3] == 's' || (*q && *q != '0'));
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
  int r;
  if (pf_addr_unreadable(p))
    return -EFAULT;
  if (!pf_mem_populate_known())
    return 0;
  r = pf_mem_populate(p);
  if (r == 0)
    return 0;
  if (r == -ENOMEM || r == -EFAULT)
    return -EFAULT;
  /* Not writable: readable file or shared mappings are keyed by the kernel. */
  return pf_mem_mapping_keyable((uintptr_t)p) == 0 ? -EFAULT : 0;
}
