/* redirect.c - the other half of redirect.h: SYS_futex goes to pfutex(),
 * futex_waitv to pfutex_waitv(), anything else to the real syscall(2).
 * At exit it prints how many calls it took and the backend that answered
 * them, so that .ci/kselftest can check the suite really ran through
 * pfutex, on the backend it asked for. */
#ifndef _GNU_SOURCE
# define _GNU_SOURCE 1
#endif
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <atomic_ops.h>
#include <pfutex.h>

#ifndef __NR_futex_waitv
# define __NR_futex_waitv 449 /* the same on every Linux architecture */
#endif

static volatile AO_t pf_ks_futex_calls, pf_ks_waitv_calls;

static void
pf_ks_report(void)
{
  fprintf(stderr, "# pfutex redirect: %lu futex calls, %lu futex_waitv calls, backend %s\n",
          (unsigned long)AO_load(&pf_ks_futex_calls),
          (unsigned long)AO_load(&pf_ks_waitv_calls), pfutex_backend());
}

__attribute__((constructor)) static void
pf_ks_init(void)
{
  atexit(pf_ks_report);
}

long
pf_kselftest_syscall(long nr, ...)
{
  va_list ap;
  long a[6];
  int i;

  va_start(ap, nr);
  for (i = 0; i < 6; i++)
    a[i] = va_arg(ap, long);
  va_end(ap);
  if (nr == SYS_futex) {
    AO_fetch_and_add1(&pf_ks_futex_calls);
    return pfutex((uint32_t *)a[0], (int)a[1], (uint32_t)a[2], (const struct timespec *)a[3],
                  (uint32_t *)a[4], (uint32_t)a[5]);
  }
  if (nr == __NR_futex_waitv) {
    AO_fetch_and_add1(&pf_ks_waitv_calls);
    return pfutex_waitv((struct pfutex_waitv *)a[0], (unsigned int)a[1], (unsigned int)a[2],
                        (const struct timespec *)a[3], (int)a[4]);
  }
  return syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
