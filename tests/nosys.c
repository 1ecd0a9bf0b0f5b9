/* nosys.c - an LD_PRELOAD module for tests/launch: the C library's
 * syscall() answers -1/ENOSYS for the numbers listed in PFT_NOSYS (decimal,
 * comma separated) and passes every other call on.
 *
 * tests/launch refuses the futex2 calls (and futex_time64) with a seccomp
 * filter, so the kernel itself answers ENOSYS.  Where no filter can be
 * installed (qemu-user refuses PR_SET_SECCOMP: a guest filter would see the
 * host's numbers) and the native backend makes its calls through libc's
 * syscall() (ports/linux/arch.h: PF_ARCH_SYSCALL_INSN 0), the launcher
 * preloads this instead: the library sees the same ENOSYS from the same
 * call and must take the same fallback. */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>

long syscall(long nr, ...);

static long (*pft_next_syscall)(long, ...);
static long pft_refused[16];
static int pft_nrefused;

__attribute__((constructor)) static void
pft_nosys_init(void)
{
  const char *s = getenv("PFT_NOSYS");
  pft_next_syscall = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");
  while (s && *s && pft_nrefused < 16) {
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s)
      break;
    pft_refused[pft_nrefused++] = v;
    s = *end == ',' ? end + 1 : end;
  }
}

long
syscall(long nr, ...)
{
  va_list ap;
  long a[6];
  int i;
  /* Six arguments, as the C library's own syscall() reads them. */
  va_start(ap, nr);
  for (i = 0; i < 6; i++)
    a[i] = va_arg(ap, long);
  va_end(ap);
  for (i = 0; i < pft_nrefused; i++)
    if (pft_refused[i] == nr) {
      errno = ENOSYS;
      return -1;
    }
  if (!pft_next_syscall) {
    errno = ENOSYS;
    return -1;
  }
  return pft_next_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
