/* abort.c - fz_fail for the libFuzzer builds (.ci/fuzz): print the finding
 * and abort, so libFuzzer saves the input as a crash artifact. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include "fuzz.h"

const int fz_replay = 0;

void
fz_fail(const char *fmt, ...)
{
  va_list ap;
  fputs("FINDING: ", stderr);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  abort();
}
