/* basic.h - a tiny TAP producer (after C TAP Harness's API). */
#ifndef PF_TAP_BASIC_H
#define PF_TAP_BASIC_H

#include <stdarg.h>

#if defined(__GNUC__)
# ifdef _WIN32   /* mingw-w64's C99 printf (__USE_MINGW_ANSI_STDIO): %zu, %lld */
#  define TAP_PRINTF(f, a) __attribute__((format(gnu_printf, f, a)))
# else
#  define TAP_PRINTF(f, a) __attribute__((format(printf, f, a)))
# endif
# define TAP_NORETURN __attribute__((noreturn))
#else
# define TAP_PRINTF(f, a)
# define TAP_NORETURN
#endif

/* Declare n tests (prints "1..n"); plan_lazy() prints the plan at exit. */
void plan(unsigned long n);
void plan_lazy(void);
/* Each returns its verdict (1 ok, 0 not ok). */
int ok(int success, const char *fmt, ...) TAP_PRINTF(2, 3);
int is_int(long expected, long got, const char *fmt, ...) TAP_PRINTF(3, 4);
int is_string(const char *expected, const char *got, const char *fmt, ...) TAP_PRINTF(3, 4);
void skip(const char *reason, ...) TAP_PRINTF(1, 2);
void diag(const char *fmt, ...) TAP_PRINTF(1, 2);
void skip_all(const char *fmt, ...) TAP_PRINTF(1, 2) TAP_NORETURN;
void bail(const char *fmt, ...) TAP_PRINTF(1, 2) TAP_NORETURN;
/* bail with strerror(errno) appended. */
void sysbail(const char *fmt, ...) TAP_PRINTF(1, 2) TAP_NORETURN;
/* Number of failed tests so far. */
unsigned long tap_failed(void);

#endif
