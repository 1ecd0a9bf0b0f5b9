/* objid.c - src/os.h's pf_os_object_id on Linux: which object a shared
 * mapping maps, and where in it an address lies, as the kernel keys a
 * shared futex (kernel/futex/core.c get_futex_key: a page of a file or of
 * shmem is keyed by its inode and page index, whatever address each
 * process maps it at; anonymous shared memory, SysV segments and memfds
 * are shmem files too).  Here the identity is the device and inode number
 * the mapping shows (unique among live objects: a word's waiter keeps its
 * object mapped, so a number reused after the object is gone meets no
 * waiter of the old one) and the byte offset of the address in the object
 * (the mapping's file offset plus the distance from its start).
 *
 * Two readers, one answer:
 *   query  the PROCMAP_QUERY ioctl on /proc/self/maps (Linux 6.11,
 *          include/uapi/linux/fs.h struct procmap_query): the mapping
 *          covering one address, looked up by the kernel, one call;
 *   maps   reading /proc/self/maps to the line holding the address (a
 *          walk of every mapping): kernels without the ioctl (ENOTTY,
 *          EINVAL) and emulators.
 * Neither is cached: each call asks the kernel about the mapping as it is
 * now, so a munmap and an mmap of another object at the same address are
 * seen at once (a cache needs a validation the kernel does not offer
 * unprivileged; doc/shared-futexes.md).  The query's descriptor is kept
 * (one ioctl a call); the maps reader opens the file each time. */
#include "os.h"

#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procmap.h"

/* 0 unknown, 1 the ioctl answers, 2 it does not (the maps reader);
 * tests may set 2 (pf_os_objid_force_maps). */
static unsigned int pf_objid_query_state;

void
pf_os_objid_force_maps(int on)
{
  AO_int_store(&pf_objid_query_state, on ? 2u : 0u);
}

/* Linux's dev_t of major:minor, as stat(2) would give it (glibc's
 * makedev), so identities from both readers compare. */
static uint64_t
pf_objid_dev(uint64_t major, uint64_t minor)
{
  return ((major & 0xfffff000ull) << 32) | ((major & 0xfffull) << 8)
         | ((minor & 0xffffff00ull) << 12) | (minor & 0xffull);
}

int
pf_os_objid_reader(void)
{
  return (int)AO_int_load(&pf_objid_query_state);
}

/* 1 answered (*fl: the mapping's PF_PROCMAP_VMA_* bits), 0 no mapping, -1
 * the ioctl is not there. */
static int
pf_objid_query(int fd, uintptr_t a, struct pf_os_objid *id, unsigned int *fl)
{
  struct pf_procmap_query q;
  char name[64];                               /* the name tells a SysV segment (procmap.h) */
  int e;
  memset(&q, 0, sizeof q);
  q.size = sizeof q;
  q.query_addr = a;
  if ((e = pf_procmap_query_named(fd, &q, name, sizeof name)) != 0)
    return e == ENOENT ? 0 : -1;
  if (a < q.vma_start || a >= q.vma_end)
    return 0;                                  /* (never without the covering-or-next flag) */
  *fl = (unsigned int)q.vma_flags;
  id->dev = pf_objid_dev(q.dev_major, q.dev_minor);
  id->ino = pf_procmap_ino(q.inode, name);
  id->off = q.vma_offset + (a - q.vma_start);
  return 1;
}

static uint64_t
pf_objid_num(const char **s, unsigned int base)
{
  uint64_t v = 0;
  for (;; (*s)++) {
    char c = **s;
    unsigned int d;
    if (c >= '0' && c <= '9')
      d = (unsigned int)(c - '0');
    else if (base == 16 && c >= 'a' && c <= 'f')
      d = (unsigned int)(c - 'a' + 10);
    else
      return v;
    v = v * base + d;
  }
}

/* /proc/self/maps: "lo-hi perms offset major:minor inode path"; 1, 0 no
 * mapping, -1 not readable. */
static int
pf_objid_maps(int fd, uintptr_t a, struct pf_os_objid *id, unsigned int *fl)
{
  char buf[4096];
  size_t len = 0;
  for (;;) {
    ssize_t got = read(fd, buf + len, sizeof buf - 1 - len);
    char *line, *nl;
    if (got < 0 && errno == EINTR)
      continue;
    if (got < 0)
      return -1;
    if (got == 0)
      return 0;
    len += (size_t)got;
    buf[len] = '\0';
    for (line = buf; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
      const char *q = line;
      uint64_t lo, hi, off, maj, min;
      *nl = '\0';
      lo = pf_objid_num(&q, 16);
      if (*q++ != '-')
        continue;
      hi = pf_objid_num(&q, 16);
      if (*q++ != ' ' || a < lo || a >= hi)
        continue;
      if (strlen(q) < 5)
        return -1;
      *fl = (q[0] == 'r' ? PF_PROCMAP_VMA_READABLE : 0u)
            | (q[1] == 'w' ? PF_PROCMAP_VMA_WRITABLE : 0u)
            | (q[3] == 's' ? PF_PROCMAP_VMA_SHARED : 0u);
      q += 5;
      off = pf_objid_num(&q, 16);
      if (*q++ != ' ')
        return -1;
      maj = pf_objid_num(&q, 16);
      if (*q++ != ':')
        return -1;
      min = pf_objid_num(&q, 16);
      if (*q++ != ' ')
        return -1;
      id->dev = pf_objid_dev(maj, min);
      id->ino = pf_objid_num(&q, 10);
      while (*q == ' ')
        q++;
      id->ino = pf_procmap_ino(id->ino, q);
      id->off = off + (a - lo);
      return 1;
    }
    len -= (size_t)(line - buf);               /* keep the unfinished line */
    memmove(buf, line, len);
    if (len == sizeof buf - 1)
      len = 0;                                 /* a line longer than the buffer: its tail
                                                  starts no line of ours (the address first) */
  }
}

/* The query's descriptor of /proc/self/maps, kept (lock-free: a signal
 * handler's op may ask while its thread is here): published by one
 * compare-and-swap (a loser closes its own); dropped, never closed, when
 * the ioctl stops answering (a caller closed or replaced the number, which
 * may be another file's now).  A fork child's inherited one names the
 * parent's map: the atfork handler closes it if it is still the very file
 * we opened, and forgets it. */
static AO_t pf_objid_fdp1;                   /* its fd + 1; 0: none */
static AO_t pf_objid_fd_dev, pf_objid_fd_ino;   /* the winner's file (stored after its CAS) */
static pthread_once_t pf_objid_once = PTHREAD_ONCE_INIT;

static void
pf_objid_atfork_child(void)
{
  AO_t v = AO_load(&pf_objid_fdp1);
  struct stat sb;
  if (v && fstat((int)v - 1, &sb) == 0 && (AO_t)sb.st_dev == AO_load(&pf_objid_fd_dev)
      && (AO_t)sb.st_ino == AO_load(&pf_objid_fd_ino))
    close((int)v - 1);                       /* (a fork between the CAS and the stores
                                                below: not recognised, left open) */
  AO_store(&pf_objid_fdp1, 0);
}

static void
pf_objid_init(void)
{
  (void)pthread_atfork(NULL, NULL, pf_objid_atfork_child);
}

static int
pf_objid_query_fd(int *opened)
{
  AO_t v = AO_load_acquire(&pf_objid_fdp1);
  struct stat sb;
  int fd;
  *opened = 0;
  if (v)
    return (int)v - 1;
  pthread_once(&pf_objid_once, pf_objid_init);
  if ((fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)) < 0)
    return -1;
  if (!AO_compare_and_swap_full(&pf_objid_fdp1, 0, (AO_t)fd + 1)) {
    close(fd);                               /* another thread's won */
    v = AO_load_acquire(&pf_objid_fdp1);
    return v ? (int)v - 1 : -1;
  }
  if (fstat(fd, &sb) == 0) {
    AO_store(&pf_objid_fd_dev, (AO_t)sb.st_dev);
    AO_store(&pf_objid_fd_ino, (AO_t)sb.st_ino);
  }
  *opened = 1;
  return fd;
}

static void
pf_objid_forget(int fd)
{
  (void)AO_compare_and_swap_full(&pf_objid_fdp1, (AO_t)fd + 1, 0);
}

/* Is the page at a of a private file mapping an anonymous copy (written
 * once, copy-on-write) rather than the file's page?  /proc/self/pagemap
 * (Documentation/admin-guide/mm/pagemap.rst): bit 63 present, 62
 * swapped, 61 a file page or shared anonymous.  The word is read first
 * (a read fault maps the file's page where nothing is mapped yet, as the
 * kernel's key does), so the page is there: present and not a file page,
 * or swapped (only anonymous pages swap), is a copy.  Not readable, or
 * neither present nor swapped after the read (an emulator's pagemap,
 * qemu-user's for a 32-bit guest, describes other pages): not known,
 * taken as the file's (the common case: a view nobody wrote). */
static int
pf_objid_page_copied(uintptr_t a)
{
  long pg = sysconf(_SC_PAGESIZE);
  uint64_t e = 0;
  uint32_t v;
  int fd, r = 0;
  if (pf_os_word_read((const uint32_t *)a, &v) < 0)
    return 0;                                /* (the op's own read answers EFAULT) */
  if ((fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC)) < 0)
    return 0;
  if (pg > 0 && pread(fd, &e, sizeof e, (off_t)(a / (uintptr_t)pg) * (off_t)sizeof e) == (ssize_t)sizeof e)
    r = ((e >> 63) & 1) ? !((e >> 61) & 1) : (int)((e >> 62) & 1);
  close(fd);
  return r;
}

int
pf_os_object_id(const void *p, struct pf_os_objid *id)
{
  uintptr_t a = (uintptr_t)p;
  int fd, r = -1, saved = errno, opened, tries, nofile;
  unsigned int fl = 0;
  unsigned int st = AO_int_load(&pf_objid_query_state);
  memset(id, 0, sizeof *id);
  for (tries = 0; st != 2 && tries < 2; tries++) {
    if ((fd = pf_objid_query_fd(&opened)) < 0)
      break;
    if ((r = pf_objid_query(fd, a, id, &fl)) >= 0) {
      if (st == 0)
        AO_int_store(&pf_objid_query_state, 1);
      break;
    }
    if (opened) {
      /* a descriptor just opened does not answer: no ioctl here */
      if (errno == ENOTTY || errno == EINVAL || errno == ENOSYS)
        AO_int_store(&pf_objid_query_state, 2);
      break;
    }
    pf_objid_forget(fd);                     /* closed or replaced meanwhile: again */
  }
  if (r < 0) {
    if ((fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC)) < 0) {
      errno = saved;
      return -ENOSYS;
    }
    r = pf_objid_maps(fd, a, id, &fl);
    close(fd);
  }
  errno = saved;
  if (r < 0)
    return -ENOSYS;
  if (r == 0)
    return -EFAULT;
  /* The kernel's get_futex_key: the page is taken for writing, else (a
   * wait) for reading, and a read-only anonymous page is refused. */
  /* No file is device 0:0 and inode 0 (anonymous memory, the heap, the
   * stack): an inode of 0 alone is no sign of it, since a SysV segment's
   * inode is its shmid (ipc/shm.c newseg), and the first segment of an IPC
   * namespace is shmid 0 (device 0:1, shmem's). */
  nofile = id->dev == 0 && id->ino == 0;
  if (!(fl & (PF_PROCMAP_VMA_READABLE | PF_PROCMAP_VMA_WRITABLE)))
    return -EFAULT;
  if (!(fl & PF_PROCMAP_VMA_SHARED) && !(fl & PF_PROCMAP_VMA_WRITABLE) && nofile)
    return -EFAULT;                          /* a read-only private anonymous page */
  if (nofile)
    return 0;                                /* anonymous: keyed by address */
  if (!(fl & PF_PROCMAP_VMA_SHARED)) {
    /* A private mapping of a file.  Writable: the kernel takes the page
     * for writing, which copies it (copy-on-write): an anonymous page,
     * keyed by address.  Read-only: it takes the page as it is: a page
     * never copied is the file's own, keyed by inode and offset like a
     * shared mapping's; a copy (written before an mprotect) is a
     * read-only anonymous page, refused (EFAULT). */
    if (fl & PF_PROCMAP_VMA_WRITABLE)
      return 0;
    if (pf_objid_page_copied(a))
      return -EFAULT;
  }
  return 1;
}
