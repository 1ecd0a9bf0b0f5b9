/* os.h - the few memory facts the library asks the OS, each answered
 * without a signal: copying untrusted memory in, and whether a futex word
 * could be written or keyed as shared.  Linux answers with system calls
 * (ports/linux/mem.c); elsewhere the generic versions (src/os_generic.c)
 * answer "fine" and a bad pointer faults in the caller, never while the
 * library holds a lock (see doc/internals.md, "Signals, cancellation and exit under emulation"). */
#ifndef PF_OS_H
#define PF_OS_H

#include "pf.h"

/* Copy n bytes from an untrusted pointer: 0, or -EFAULT when it cannot be
 * read. */
int pf_os_copy_in(void *dst, const void *src, size_t n);

/* The word at p can be written: 0 or -EFAULT (0 where the OS cannot tell
 * cheaply).  One system call on Linux. */
int pf_os_probe_write(const void *p);

/* Read the futex word at p as the kernel would: 0 (*v set, an acquire
 * load), or -EFAULT where the load would raise SIGSEGV or SIGBUS (nothing
 * mapped, no read permission, a file page past the file's end), never the
 * signal.  POSIX: a guarded load (ports/posix/guard.c: no system call);
 * Windows: a plain load (a bad word faults in the caller). */
int pf_os_word_read(const uint32_t *p, uint32_t *v);   /* declared in pf.h */
/* Write the word at p without changing it (an atomic add of 0), guarded
 * as pf_os_word_read: 0, or -EFAULT where the store would fault (a
 * read-only page, nothing mapped, a file page past its end).  Where no
 * guard is in place (Windows; POSIX while the handler is not installed)
 * pf_os_probe_write asks the OS first. */
int pf_os_word_touch(uint32_t *p);

/* A shared (non-PRIVATE) futex key may be made for the word at p: Linux
 * refuses a read-only private anonymous page (its page would change under
 * copy-on-write) and a page that cannot be read: 0 or -EFAULT (0 where the
 * OS cannot tell cheaply). */
int pf_os_shared_key_check(const void *p);

/* The object a shared mapping maps (issue 20: shared futexes outside
 * regions, keyed as the kernel keys them): for the word at p, the
 * object's identity, equal in every process that maps it, and p's byte
 * offset in it.  1 (*id set), 0 p lies in a private mapping (keyed by
 * address), PF_OBJID_NONE a shared mapping the OS gives no identity for
 * (Windows: a view of a section), -EFAULT no shared key can be made for
 * p (Linux: nothing mapped, no access, a read-only private anonymous
 * page, as the kernel's get_futex_key refuses them), -ENOSYS
 * the OS cannot tell, PF_OBJID_KERNEL a shared mapping the OS names no
 * object for but its own futex keys (NetBSD, OpenBSD: the port's os_futex
 * takes the op, src/port.h).  Linux: ports/linux/objid.c; Windows:
 * ports/win32/os.c; the BSDs and macOS: ports/<os>/objid.c
 * (doc/shared-futexes.md). */
#define PF_OBJID_NONE 2
#define PF_OBJID_KERNEL 3
struct pf_os_objid {
  uint64_t dev, ino, off;
};
int pf_os_object_id(const void *p, struct pf_os_objid *id);
#ifdef __linux__
/* Tests: Linux's reader of /proc/self/maps instead of PROCMAP_QUERY; the
 * reader in use (1 the ioctl, 2 the maps file, 0 not known yet). */
void pf_os_objid_force_maps(int on);
int pf_os_objid_reader(void);
#endif

/* The calling thread's id in PI and robust futex words (pfutex_tid): 1 ..
 * FUTEX_TID_MASK.  Linux: gettid(); Windows: the thread id
 * (ports/win32/os.c); elsewhere the pid beside a slot the thread keeps
 * until it exits, unique among live threads system-wide (src/tid.c). */
pid_t pf_os_tid(void);
/* Is there a thread whose id (pf_os_tid's) is tid?  0 only when the OS
 * says there is none (then FUTEX_LOCK_PI answers ESRCH, as Linux's does):
 * Linux kill(tid, 0) and /proc; Windows OpenThread; elsewhere the process
 * gone (kill(pid, 0)), or in this process the slot given back. */
int pf_os_tid_alive(uint32_t tid);
/* Is tid a live thread of another process?  1 only when the OS says so
 * (Linux tgkill(getpid(), tid, 0): ESRCH while kill(tid, 0) finds it;
 * Windows the thread's process id; elsewhere the id's pid part, another
 * live process's): a private PI op on such an owner is Linux's EPERM
 * (src/pi.c).  0 otherwise (ours, or none, or not known). */
int pf_os_tid_foreign(uint32_t tid);

/* ---- Regions: which processes are alive (src/region/live.c) -------------
 * Each process attached to a region owns one entry of the region's process
 * table, and the OS vouches for the owner: an entry is dead exactly when
 * the OS says its owner is gone, never by a guess (a pid that answers
 * kill(pid, 0) may be another process; a lock held for long may belong to
 * a stopped one).  Two mechanisms; a region records which one it uses:
 *   lock  (ports/posix/live.c): a write lock (fcntl F_SETLK) on byte e of
 *         the region's object.  The kernel drops it when the owner dies,
 *         by any route, or execs (the descriptor is close-on-exec); a fork
 *         child holds none of its parent's.  Where a shm object is a file:
 *         Linux, NetBSD, OpenBSD, DragonFly.
 *         FreeBSD and macOS refuse record locks on shm objects (EBADF):
 *         there the same locks are on a companion file ("lockfile",
 *         src/region/live.c), as under their shims on Linux.
 *   start (src/region/live.c): the owner's pid and start time, read back with the
 *         pid: a reused pid belongs to a process started later.  Windows
 *         only (Linux has a reader too, for tests/live_start).
 * The OS's half, per port: */
/* lock: take (0, -EBUSY when another process holds it, -errno), test (1
 * held by another process, 0 not), drop the lock on byte `byte` of fd. */
int pf_os_lock_claim(int fd, uint32_t byte);
int pf_os_lock_held(int fd, uint32_t byte);
/* lock: the pid of the process that holds the lock on byte `byte` of fd
 * (the OS's answer), 0 when none does, -1 when it cannot be told. */
int pf_os_lock_holder(int fd, uint32_t byte);
void pf_os_lock_release(int fd, uint32_t byte);
/* start: process pid's start time in *t (any unit, fixed per OS): 1, or 0
 * when there is no such process (or it has ended), or -1 when it exists but
 * its start time cannot be read (not ours: it counts as alive). */
int pf_os_proc_start(uint32_t pid, uint64_t *t);
/* The creator of a region's object holds the lock on this byte, of the
 * object (lock) or of its companion file (lockfile), until the layout is
 * written (src/region/object.c). */
#define PF_OS_CREATOR_BYTE 65536u

#ifdef _WIN32
/* Windows: regions' named objects (ports/win32/os.c): map the pagefile-
 * backed mapping for region name `name`, creating it (create: fails with
 * -EEXIST when it exists) or opening it (-ENOENT when none): 0, *mapp and
 * *lenp (the object's size), or -errno. */
int pf_win32_shm_map(const char *name, int create, uint64_t len, void **mapp, size_t *lenp);
/* Does the object for region name `name` exist (some process maps it)? */
int pf_win32_shm_exists(const char *name);
/* Windows: is process pid alive (OpenProcess + a zero wait)?  Only for a
 * region's creator during the few instructions of its creation. */
int pf_os_pid_alive(int pid);
#endif

#endif
