/* sys/mman.h for Windows (ports/win32/os.c): anonymous mappings only,
 * made from pagefile-backed file mappings (CreateFileMapping +
 * MapViewOfFile), so munmap is UnmapViewOfFile for every mapping the
 * library makes (regions map their named objects through the same views:
 * ports/win32/os.c, pf_win32_shm_map).  Only on the include path of
 * Windows builds (configure.ac). */
#ifndef PF_WIN32_SYS_MMAN_H
#define PF_WIN32_SYS_MMAN_H

#include <stddef.h>
#include <sys/types.h>

#define PROT_NONE 0
#define PROT_READ 1
#define PROT_WRITE 2
#define MAP_SHARED 0x01
#define MAP_PRIVATE 0x02
#define MAP_ANONYMOUS 0x20
#define MAP_ANON MAP_ANONYMOUS
#define MAP_FAILED ((void *)-1)

void *pf_win32_mmap(void *addr, size_t len, int prot, int flags, int fd, long long off);
int pf_win32_munmap(void *addr, size_t len);
#define mmap(a, l, p, f, d, o) pf_win32_mmap((a), (l), (p), (f), (d), (long long)(o))
#define munmap(a, l) pf_win32_munmap((a), (l))

#endif
