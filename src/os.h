/* os.h - the few memory facts the library asks the OS, each answered
 * without a signal: copying untrusted memory in, and whether a futex word
 * could be written or keyed as shared.  Linux answers with system calls
 * (ports/linux/mem.c); elsewhere the generic versions (src/os_generic.c)
 * answer "fine" and a bad pointer faults in the caller, never while the
 * library holds a lock (see README, "Signals, cancellation and exit"). */
#ifndef PF_OS_H
#define PF_OS_H

#include "pf.h"

/* Copy n bytes from an untrusted pointer: 0, or -EFAULT when it cannot be
 * read. */
int pf_os_copy_in(void *dst, const void *src, size_t n);

/* The word at p can be written: 0 or -EFAULT (0 where the OS cannot tell
 * cheaply).  One system call on Linux. */
int pf_os_probe_write(const void *p);

/* A shared (non-PRIVATE) futex key may be made for the word at p: Linux
 * refuses a read-only private anonymous page (its page would change under
 * copy-on-write) and a page that cannot be read: 0 or -EFAULT (0 where the
 * OS cannot tell cheaply). */
int pf_os_shared_key_check(const void *p);

/* Is process pid alive?  Region liveness (src/shm.c): 1 alive (or not
 * ours to signal), 0 gone.  POSIX: kill(pid, 0), on every host so far (a
 * port whose OS needs another answer replaces this one). */
#ifdef _WIN32
/* Windows: OpenProcess + a zero wait on the process (ports/win32/os.c). */
int pf_os_pid_alive(int pid);
/* Windows: regions' named objects (ports/win32/os.c): map the pagefile-
 * backed mapping for region name `name`, creating it (create: fails with
 * -EEXIST when it exists) or opening it (-ENOENT when none): 0, *mapp and
 * *lenp (the object's size), or -errno. */
int pf_win32_shm_map(const char *name, int create, uint64_t len, void **mapp, size_t *lenp);
/* Does the object for region name `name` exist (some process maps it)? */
int pf_win32_shm_exists(const char *name);
#else
#include <signal.h>
static inline int
pf_os_pid_alive(int pid)
{
  int saved = errno, alive;
  if (pid <= 0)
    return 0;
  alive = kill((pid_t)pid, 0) == 0 || errno == EPERM;
  errno = saved;
  return alive;
}
#endif

#endif
