/* redirect.h - force-included (cc -include) into the Linux kernel's futex
 * selftests (tools/testing/selftests/futex/functional) so that their
 * futex(2) and futex_waitv(2) system calls go through pfutex instead: the
 * suite then tests whichever backend PFUTEX_BACKEND selects.  Every other
 * system call passes through.  Used by .ci/kselftest. */
#ifndef PF_KSELFTEST_REDIRECT_H
#define PF_KSELFTEST_REDIRECT_H
#include <unistd.h>
#include <sys/syscall.h>
long pf_kselftest_syscall(long nr, ...);
#define syscall pf_kselftest_syscall
#endif
