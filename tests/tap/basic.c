/* basic.c - a tiny TAP producer.  Thread-safe: output is serialised. */
#include "basic.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _WIN32
# include <fcntl.h>
# include <io.h>
/* Windows: TAP lines end in "\n", not the C runtime's text-mode "\r\n"
 * (the TAP driver would not see the plan), and stdout is unbuffered
 * (msvcrt has no line buffering: _IOLBF is full buffering there). */
__attribute__((constructor)) static void
tap_w32_stdout(void)
{
  _setmode(_fileno(stdout), _O_BINARY);
  setvbuf(stdout, NULL, _IONBF, 0);
}
#endif

static pthread_mutex_t tap_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned long tap_planned, tap_run, tap_fails;
static int tap_lazy;
static pid_t tap_pid;

static void
tap_finish(void)
{
  if (getpid() != tap_pid)
    return;                      /* a forked child's exit says nothing */
  pthread_mutex_lock(&tap_mu);
  if (tap_lazy)
    printf("1..%lu\n", tap_run);
  else if (tap_planned != tap_run)
    printf("# planned %lu tests but ran %lu\n", tap_planned, tap_run);
  if (tap_fails)
    printf("# failed %lu of %lu tests\n", tap_fails, tap_run);
  fflush(stdout);
  pthread_mutex_unlock(&tap_mu);
}

static void
tap_start(void)
{
#ifndef _WIN32
  setvbuf(stdout, NULL, _IOLBF, 0);
#endif
  tap_pid = getpid();
  atexit(tap_finish);
}

void
plan(unsigned long n)
{
  tap_start();
  tap_planned = n;
  printf("1..%lu\n", n);
}

void
plan_lazy(void)
{
  tap_start();
  tap_lazy = 1;
}

static int
tap_vreport(int success, const char *fmt, va_list ap)
{
  pthread_mutex_lock(&tap_mu);
  tap_run++;
  if (!success)
    tap_fails++;
  printf("%sok %lu", success ? "" : "not ", tap_run);
  if (fmt && *fmt) {
    printf(" - ");
    vprintf(fmt, ap);
  }
  printf("\n");
  fflush(stdout);
  pthread_mutex_unlock(&tap_mu);
  return success;
}

int
ok(int success, const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  success = tap_vreport(success != 0, fmt, ap);
  va_end(ap);
  return success;
}

int
is_int(long expected, long got, const char *fmt, ...)
{
  va_list ap;
  int success = expected == got;
  va_start(ap, fmt);
  tap_vreport(success, fmt, ap);
  va_end(ap);
  if (!success)
    diag("    wanted: %ld\n      seen: %ld", expected, got);
  return success;
}

int
is_string(const char *expected, const char *got, const char *fmt, ...)
{
  va_list ap;
  int success;
  if (!expected || !got)
    success = expected == got;
  else
    success = strcmp(expected, got) == 0;
  va_start(ap, fmt);
  tap_vreport(success, fmt, ap);
  va_end(ap);
  if (!success)
    diag("    wanted: %s\n      seen: %s", expected ? expected : "(null)", got ? got : "(null)");
  return success;
}

void
skip(const char *reason, ...)
{
  va_list ap;
  pthread_mutex_lock(&tap_mu);
  tap_run++;
  printf("ok %lu # skip ", tap_run);
  va_start(ap, reason);
  vprintf(reason, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
  pthread_mutex_unlock(&tap_mu);
}

void
diag(const char *fmt, ...)
{
  va_list ap;
  char buf[2048], *line, *save = NULL;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  pthread_mutex_lock(&tap_mu);
  for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
    printf("# %s\n", line);
  fflush(stdout);
  pthread_mutex_unlock(&tap_mu);
}

void
skip_all(const char *fmt, ...)
{
  va_list ap;
  printf("1..0 # SKIP ");
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
  _exit(0);
}

static void
tap_vbail(const char *fmt, va_list ap, int err)
{
  pthread_mutex_lock(&tap_mu);
  printf("Bail out! ");
  vprintf(fmt, ap);
  if (err)
    printf(": %s", strerror(err));
  printf("\n");
  fflush(stdout);
  _exit(255);
}

void
bail(const char *fmt, ...)
{
  va_list ap;
  va_start(ap, fmt);
  tap_vbail(fmt, ap, 0);
  va_end(ap);
  _exit(255);
}

void
sysbail(const char *fmt, ...)
{
  int err = errno;
  va_list ap;
  va_start(ap, fmt);
  tap_vbail(fmt, ap, err);
  va_end(ap);
  _exit(255);
}

unsigned long
tap_failed(void)
{
  return tap_fails;
}
