/* os.c - the Windows OS layer: what src/ asks of POSIX, answered with
 * Win32 calls (declarations: ports/win32/posix.h, ports/win32/include/
 * sys/mman.h, src/os.h).
 *
 *   kill(pid, 0)        OpenProcess + WaitForSingleObject(h, 0) (src/os.h's
 *                       pf_os_pid_alive is the same test)
 *   kill(self, SIGKILL) TerminateProcess (the crash points)
 *   sysconf             GetSystemInfo: dwPageSize, dwNumberOfProcessors
 *   mmap (anonymous)    CreateFileMapping(INVALID_HANDLE_VALUE) +
 *                       MapViewOfFile; munmap: UnmapViewOfFile
 *   src/os.h's memory  pf_os_copy_in: VirtualQuery of the pages, then
 *   answers             ReadProcessMemory on this process (FALSE, no
 *                       exception, for an unreadable source: -EFAULT);
 *                       pf_os_probe_write: VirtualQuery's
 *                       protection of the page; pf_os_shared_key_check: the
 *                       page must be committed and readable (Windows keys
 *                       nothing by page: regions key by offset)
 *   regions' objects    pf_win32_shm_map: named pagefile-backed mappings
 *                       "Local\pfutex-region-<name>", whose handle stays
 *                       open until munmap (see src/region/object.c's
 *                       Windows block for the lifetime this gives)
 */
#include "os.h"

#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <windows.h>

/* The protection of the page holding p: 0 when it is committed and not a
 * guard or no-access page; *prot set, and *end the end of that run of
 * pages. */
static int
pf_w32_page_end(const void *p, DWORD *prot, uintptr_t *end)
{
  MEMORY_BASIC_INFORMATION mi;
  if (VirtualQuery(p, &mi, sizeof mi) != sizeof mi || mi.State != MEM_COMMIT
      || (mi.Protect & (PAGE_GUARD | PAGE_NOACCESS)) || mi.Protect == 0)
    return -EFAULT;
  *prot = mi.Protect & 0xff;
  *end = (uintptr_t)mi.BaseAddress + mi.RegionSize;
  return 0;
}

static int
pf_w32_page(const void *p, DWORD *prot)
{
  uintptr_t end;
  return pf_w32_page_end(p, prot, &end);
}

/* Every page of [src, src + n) committed and readable (VirtualQuery: wine's
 * ReadProcessMemory on its own process reads through no-access pages), then
 * ReadProcessMemory, which fails instead of faulting should a page go
 * meanwhile. */
int
pf_os_copy_in(void *dst, const void *src, size_t n)
{
  uintptr_t p = (uintptr_t)src, last = (uintptr_t)src + (n ? n - 1 : 0), end;
  SIZE_T got = 0;
  DWORD prot;
  if (pf_addr_unreadable(src) || last < p)
    return -EFAULT;
  for (;;) {
    if (pf_w32_page_end((const void *)p, &prot, &end) < 0)
      return -EFAULT;
    if (end > last)
      break;
    p = end;
  }
  if (!ReadProcessMemory(GetCurrentProcess(), src, dst, n, &got) || got != n)
    return -EFAULT;
  return 0;
}

int
pf_os_probe_write(const void *p)
{
  DWORD prot;
  if (pf_addr_unreadable(p) || pf_w32_page(p, &prot) < 0)
    return -EFAULT;
  return prot == PAGE_READWRITE || prot == PAGE_WRITECOPY || prot == PAGE_EXECUTE_READWRITE
         || prot == PAGE_EXECUTE_WRITECOPY ? 0 : -EFAULT;
}

int
pf_os_shared_key_check(const void *p)
{
  DWORD prot;
  if (pf_addr_unreadable(p) || pf_w32_page(p, &prot) < 0)
    return -EFAULT;
  return 0;
}

/* A plain load: no guard without a handler for the access violation (a
 * bad word faults in the caller, as before; README, limits). */
int
pf_os_word_read(const uint32_t *p, uint32_t *v)
{
  if (pf_addr_unreadable(p))
    return -EFAULT;
  *v = AO_int_load_acquire((const volatile unsigned int *)p);
  return 0;
}

/* 0, read from a volatile: clang lowers an atomic add of a constant 0 to
 * a fenced load, and a touch must be a write (ports/posix/guard.c). */
static volatile unsigned int pf_touch_zero;

int
pf_os_word_touch(uint32_t *p)
{
  int ret;
  if ((ret = pf_os_probe_write(p)) < 0)          /* unguarded: VirtualQuery first */
    return ret;
  (void)AO_int_fetch_and_add_full((volatile unsigned int *)p, pf_touch_zero);
  return 0;
}

int
pf_os_pid_alive(int pid)
{
  HANDLE h;
  DWORD r;
  int alive;
  if (pid <= 0)
    return 0;
  if ((DWORD)pid == GetCurrentProcessId())
    return 1;
  h = OpenProcess(SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION, FALSE, (DWORD)pid);
  if (!h)
    /* ERROR_ACCESS_DENIED: it exists but is not ours to open (kill(2)'s
     * EPERM); ERROR_INVALID_PARAMETER: no such process. */
    return GetLastError() == ERROR_ACCESS_DENIED;
  /* A process that has exited but whose object is still held by a handle
   * somewhere is signalled: gone.  (GetExitCodeProcess's STILL_ACTIVE
   * would misread a process that exited with status 259.) */
  r = WaitForSingleObject(h, 0);
  alive = r == WAIT_TIMEOUT;
  CloseHandle(h);
  return alive;
}

/* A process's start time (src/os.h, the "start" liveness of regions:
 * Windows has no record lock on a pagefile-backed mapping): its creation
 * time, GetProcessTimes, in 100 ns units.  A process that has exited (its
 * object signalled) is gone, though a handle may keep its pid from reuse. */
int
pf_os_proc_start(uint32_t pid, uint64_t *t)
{
  HANDLE h = OpenProcess(SYNCHRONIZE | PROCESS_QUERY_LIMITED_INFORMATION, FALSE, (DWORD)pid);
  FILETIME c, x, k, u;
  int ret = 1;
  if (!h)
    return GetLastError() == ERROR_ACCESS_DENIED ? -1 : 0;
  if (WaitForSingleObject(h, 0) != WAIT_TIMEOUT)
    ret = 0;
  else if (GetProcessTimes(h, &c, &x, &k, &u))
    *t = ((uint64_t)c.dwHighDateTime << 32) | c.dwLowDateTime;
  else
    ret = -1;
  CloseHandle(h);
  return ret;
}

int
pf_win32_kill(int pid, int sig)
{
  if (sig == 0) {
    if (pf_os_pid_alive(pid))
      return 0;
    errno = ESRCH;
    return -1;
  }
  if (sig == SIGKILL) {
    HANDLE h = (DWORD)pid == GetCurrentProcessId() ? GetCurrentProcess()
               : OpenProcess(PROCESS_TERMINATE, FALSE, (DWORD)pid);
    if (!h || !TerminateProcess(h, 128 + SIGKILL)) {
      errno = h ? EPERM : ESRCH;
      return -1;
    }
    return 0;
  }
  errno = EINVAL;
  return -1;
}

long
pf_win32_sysconf(int name)
{
  SYSTEM_INFO si;
  GetSystemInfo(&si);
  switch (name) {
  case _SC_PAGESIZE:
    return (long)si.dwPageSize;
  case _SC_NPROCESSORS_CONF:
  case _SC_NPROCESSORS_ONLN:
    return (long)si.dwNumberOfProcessors;
  }
  errno = EINVAL;
  return -1;
}

/* A named object's name lasts only while a HANDLE to it is open (a view
 * keeps the memory, not the name): the handles of the named regions' views
 * are kept here, closed by munmap.  (pfutex allows 64 regions per process;
 * a region may be open more than once.) */
#define PF_W32_NAMED_MAX 256
static struct { void *addr; HANDLE h; } pf_w32_named[PF_W32_NAMED_MAX];
static SRWLOCK pf_w32_named_lock = SRWLOCK_INIT;

static int
pf_w32_named_add(void *addr, HANDLE h)
{
  int i, ret = -EMFILE;
  AcquireSRWLockExclusive(&pf_w32_named_lock);
  for (i = 0; i < PF_W32_NAMED_MAX; i++)
    if (!pf_w32_named[i].addr) {
      pf_w32_named[i].addr = addr;
      pf_w32_named[i].h = h;
      ret = 0;
      break;
    }
  ReleaseSRWLockExclusive(&pf_w32_named_lock);
  return ret;
}

static HANDLE
pf_w32_named_take(void *addr)
{
  HANDLE h = NULL;
  int i;
  AcquireSRWLockExclusive(&pf_w32_named_lock);
  for (i = 0; i < PF_W32_NAMED_MAX; i++)
    if (pf_w32_named[i].addr == addr) {
      h = pf_w32_named[i].h;
      pf_w32_named[i].addr = NULL;
      pf_w32_named[i].h = NULL;
      break;
    }
  ReleaseSRWLockExclusive(&pf_w32_named_lock);
  return h;
}

/* A view of a new pagefile-backed mapping (named: create it, failing with
 * EEXIST if it exists, and keep its handle for munmap to close). */
static void *
pf_win32_map_new(const char *name, uint64_t len, int *err)
{
  HANDLE h = CreateFileMappingA(INVALID_HANDLE_VALUE, NULL, PAGE_READWRITE,
                                (DWORD)(len >> 32), (DWORD)len, name);
  void *p;
  if (!h) {
    *err = GetLastError() == ERROR_INVALID_NAME ? EINVAL : ENOMEM;
    return NULL;
  }
  if (name && GetLastError() == ERROR_ALREADY_EXISTS) {
    CloseHandle(h);
    *err = EEXIST;
    return NULL;
  }
  p = MapViewOfFile(h, FILE_MAP_ALL_ACCESS, 0, 0, (SIZE_T)len);
  if (!p) {
    CloseHandle(h);
    *err = ENOMEM;
    return NULL;
  }
  if (!name) {
    CloseHandle(h);                 /* anonymous: the view keeps the memory */
  } else if (pf_w32_named_add(p, h) < 0) {
    UnmapViewOfFile(p);
    CloseHandle(h);
    *err = EMFILE;
    return NULL;
  }
  return p;
}

void *
pf_win32_mmap(void *addr, size_t len, int prot, int flags, int fd, long long off)
{
  void *p;
  int err = 0;
  (void)addr; (void)prot;
  if (!(flags & MAP_ANONYMOUS) || fd != -1 || off != 0 || len == 0) {
    errno = ENOSYS;                 /* files are never mapped on Windows */
    return MAP_FAILED;
  }
  if (!(p = pf_win32_map_new(NULL, len, &err))) {
    errno = err;
    return MAP_FAILED;
  }
  return p;
}

int
pf_win32_munmap(void *addr, size_t len)
{
  HANDLE h;
  (void)len;
  if (!UnmapViewOfFile(addr)) {
    errno = EINVAL;
    return -1;
  }
  if ((h = pf_w32_named_take(addr)) != NULL)
    CloseHandle(h);                 /* the last one removes the name */
  return 0;
}

/* The object name for a region name: "Local\pfutex-region-" + the name,
 * backslashes (the namespace separator) replaced by '_'. */
static int
pf_win32_region_name(const char *name, char *buf, size_t n)
{
  size_t i, pre;
  int w = snprintf(buf, n, "Local\\pfutex-region-");
  if (w < 0)
    return -EINVAL;
  pre = (size_t)w;
  if (strlen(name) + pre + 1 > n || strlen(name) + pre + 1 > MAX_PATH)
    return -ENAMETOOLONG;
  for (i = 0; name[i]; i++)
    buf[pre + i] = name[i] == '\\' ? '_' : name[i];
  buf[pre + i] = 0;
  return 0;
}

int
pf_win32_shm_map(const char *name, int create, uint64_t len, void **mapp, size_t *lenp)
{
  char obj[MAX_PATH + 1];
  int ret, err = 0;
  if ((ret = pf_win32_region_name(name, obj, sizeof obj)) < 0)
    return ret;
  if (create) {
    if (!(*mapp = pf_win32_map_new(obj, len, &err)))
      return -err;
    *lenp = (size_t)len;
    return 0;
  } else {
    MEMORY_BASIC_INFORMATION mi;
    HANDLE h = OpenFileMappingA(FILE_MAP_ALL_ACCESS, FALSE, obj);
    void *p;
    if (!h) {
      DWORD e = GetLastError();
      return e == ERROR_FILE_NOT_FOUND ? -ENOENT : e == ERROR_ACCESS_DENIED ? -EACCES : -EINVAL;
    }
    p = MapViewOfFile(h, FILE_MAP_ALL_ACCESS, 0, 0, 0);
    if (!p) {
      CloseHandle(h);
      return -ENOMEM;
    }
    if (pf_w32_named_add(p, h) < 0) {
      UnmapViewOfFile(p);
      CloseHandle(h);
      return -EMFILE;
    }
    /* The object's size: the view's (a multiple of the page size, as every
     * region's total is; src/region/layout.c checks it against the header). */
    if (VirtualQuery(p, &mi, sizeof mi) != sizeof mi) {
      pf_win32_munmap(p, 0);
      return -EINVAL;
    }
    *mapp = p;
    *lenp = (size_t)mi.RegionSize;
    return 0;
  }
}

int
pf_win32_shm_exists(const char *name)
{
  char obj[MAX_PATH + 1];
  HANDLE h;
  if (pf_win32_region_name(name, obj, sizeof obj) < 0)
    return 0;
  if (!(h = OpenFileMappingA(FILE_MAP_READ, FALSE, obj)))
    return GetLastError() == ERROR_ACCESS_DENIED;
  CloseHandle(h);
  return 1;
}

pid_t
pf_os_tid(void)
{
  DWORD id = GetCurrentThreadId() & 0x3fffffffu;
  return (pid_t)(id ? id : 1);
}

int
pf_os_tid_alive(uint32_t tid)
{
  HANDLE h = OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, (DWORD)tid);
  DWORD code = 0;
  int r;
  if (!h)
    return GetLastError() != ERROR_INVALID_PARAMETER;   /* none: that id names no thread */
  r = !GetExitCodeThread(h, &code) || code == STILL_ACTIVE;
  CloseHandle(h);
  return r;
}

int
pf_os_tid_foreign(uint32_t tid)
{
  HANDLE h = OpenThread(THREAD_QUERY_LIMITED_INFORMATION, FALSE, (DWORD)tid);
  DWORD code = 0, pid;
  int r = 0;
  if (!h)
    return 0;
  pid = GetProcessIdOfThread(h);
  if (pid != 0 && pid != GetCurrentProcessId())
    r = !GetExitCodeThread(h, &code) || code == STILL_ACTIVE;
  CloseHandle(h);
  return r;
}

/* Windows: a view of a section (MEM_MAPPED) names no object another
 * process could name, and not its offset in the section (VirtualQuery's
 * MEMORY_BASIC_INFORMATION): PF_OBJID_NONE, which the engine answers with
 * ENOSYS, never a key by address that would silently not reach the other
 * processes.  Private and image pages: 0, keyed by address. */
int
pf_os_object_id(const void *p, struct pf_os_objid *id)
{
  MEMORY_BASIC_INFORMATION mi;
  memset(id, 0, sizeof *id);
  if (VirtualQuery(p, &mi, sizeof mi) != sizeof mi || mi.State != MEM_COMMIT)
    return -EFAULT;
  return mi.Type == MEM_MAPPED ? PF_OBJID_NONE : 0;
}
