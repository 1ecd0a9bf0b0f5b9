/* replay.c - a fuzz target as a plain TAP test: every file of its corpus
 * (PF_FUZZ_CORPUS, a directory; or the directories and files named on the
 * command line) goes through the same LLVMFuzzerTestOneInput that libFuzzer
 * drives (.ci/fuzz), one TAP line per file.  A finding (fz_fail: a
 * divergence, an invalid result) fails that line; a crash or a hang (the
 * watchdog) fails the program. */
#ifdef HAVE_CONFIG_H
# include "config.h"
#endif
/* readdir with 64-bit offsets: a 32-bit program under qemu-user gets the
 * host's 64-bit directory cookies (ext4's hashes), which the 32-bit
 * readdir refuses (EOVERFLOW: no files). */
#ifndef _FILE_OFFSET_BITS
# define _FILE_OFFSET_BITS 64
#endif
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "pft.h"
#include "fuzz.h"

const int fz_replay = 1;
static int fz_failures;

void
fz_fail(const char *fmt, ...)
{
  char buf[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  diag("%s", buf);
  fz_failures++;
}

#define FZ_MAX_FILES 4096
#define FZ_MAX_INPUT (1 << 20)

static char *files[FZ_MAX_FILES];
static int nfiles;

static int
cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void
add_path(const char *path)
{
  struct stat st;
  DIR *d;
  struct dirent *e;
  if (stat(path, &st) != 0)
    sysbail("%s", path);
  if (!S_ISDIR(st.st_mode)) {
    if (nfiles < FZ_MAX_FILES)
      files[nfiles++] = strdup(path);
    return;
  }
  if (!(d = opendir(path)))
    sysbail("opendir %s", path);
  for (;;) {
    errno = 0;
    if ((e = readdir(d)) == NULL) {
      if (errno != 0)
        sysbail("readdir %s", path);
      break;
    }
    char *p;
    if (e->d_name[0] == '.')
      continue;
    if (!(p = malloc(strlen(path) + strlen(e->d_name) + 2)))
      bail("out of memory");
    sprintf(p, "%s/%s", path, e->d_name);
    if (nfiles < FZ_MAX_FILES)
      files[nfiles++] = p;
    else
      free(p);
  }
  closedir(d);
}

int
main(int argc, char **argv)
{
  static uint8_t buf[FZ_MAX_INPUT];
  const char *why = fz_unsupported();
  int i;

  if (why)
    skip_all("%s", why);
  pft_watchdog(300);
  if (argc > 1)
    for (i = 1; i < argc; i++)
      add_path(argv[i]);
  else
    add_path(PF_FUZZ_CORPUS);
  qsort(files, (size_t)nfiles, sizeof files[0], cmp_str);
  if (nfiles == 0)
    bail("no corpus files");
  LLVMFuzzerInitialize(&argc, &argv);
  plan((unsigned long)nfiles);
  for (i = 0; i < nfiles; i++) {
    FILE *f = fopen(files[i], "rb");
    size_t n;
    const char *base = strrchr(files[i], '/');
    if (!f)
      sysbail("%s", files[i]);
    n = fread(buf, 1, sizeof buf, f);
    fclose(f);
    fz_failures = 0;
    LLVMFuzzerTestOneInput(buf, n);
    ok(fz_failures == 0, "%s (%zu bytes)", base ? base + 1 : files[i], n);
  }
  return 0;
}
