/* backend.c - pick the backend once per process.
 *
 * PFUTEX_BACKEND (read once, at the first call) names a compiled backend;
 * unset or empty means the configure default.  A name no compiled backend
 * accepts, or a backend whose init fails (e.g. "linux:futex2" on a kernel
 * without the futex2 syscalls), leaves no backend: pfutex_backend() returns
 * NULL and every call fails with ENOSYS, never silently using another one. */
#include "pf.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static const struct pf_backend *const pf_backend_table[] = {
#ifdef PF_HAVE_NATIVE_LINUX
  &pf_backend_linux,
#endif
#ifdef PF_HAVE_PORT_FUTEX
  &pf_backend_emu_futex,
#endif
#ifdef PF_HAVE_PORT_SYSV
  &pf_backend_emu_sysv,
#endif
#ifdef PF_HAVE_PORT_FREEBSD
  &pf_backend_emu_freebsd,
#endif
#ifdef PF_HAVE_PORT_DRAGONFLY
  &pf_backend_emu_dragonfly,
#endif
#ifdef PF_HAVE_PORT_OPENBSD
  &pf_backend_emu_openbsd,
#endif
#ifdef PF_HAVE_PORT_NETBSD
  &pf_backend_emu_netbsd,
#endif
#ifdef PF_HAVE_PORT_DARWIN
  &pf_backend_emu_darwin,
#endif
#ifdef PF_HAVE_PORT_WIN32
  &pf_backend_emu_win32,
#endif
#ifdef PF_HAVE_SHIM_FREEBSD
  &pf_backend_emu_freebsd_shim,
#endif
#ifdef PF_HAVE_SHIM_DRAGONFLY
  &pf_backend_emu_dragonfly_shim,
#endif
#ifdef PF_HAVE_SHIM_OPENBSD
  &pf_backend_emu_openbsd_shim,
#endif
#ifdef PF_HAVE_SHIM_NETBSD
  &pf_backend_emu_netbsd_shim,
#endif
#ifdef PF_HAVE_SHIM_DARWIN
  &pf_backend_emu_darwin_shim,
#endif
#ifdef PF_SCHED_POINTS
  &pf_backend_emu_sched,      /* last: tests/sched's controlled scheduler (src/schedpt.h) */
#endif
};
#define PF_NBACKENDS (sizeof pf_backend_table / sizeof pf_backend_table[0])

static pthread_once_t pf_backend_once = PTHREAD_ONCE_INIT;
const struct pf_backend *pf_active;          /* written once, under pf_backend_once */
static const char *pf_active_name;

/* "linux" also accepts the sub-names "linux:futex2", "linux:futex" and
 * "linux:futex_time64", which force one syscall family. */
static int
pf_backend_accepts(const struct pf_backend *b, const char *want)
{
  size_t n = strlen(b->name);
  if (strcmp(want, b->name) == 0)
    return 1;
  return strncmp(want, b->name, n) == 0 && want[n] == ':' && strchr(b->name, ':') == NULL;
}

static void
pf_backend_select(void)
{
  const char *want = getenv("PFUTEX_BACKEND");
  size_t i;

  if (!want || !*want)
    want = PF_DEFAULT_BACKEND;
  for (i = 0; i < PF_NBACKENDS; i++) {
    const struct pf_backend *b = pf_backend_table[i];
    const char *name = b->name;
    if (!pf_backend_accepts(b, want))
      continue;
    if (b->init(b, want, &name) == 0) {
      pf_active_name = name;
      pf_active = b;
    }
    return;
  }
}

AO_t pf_backend_state_word;     /* see pf_backend_state() in pf.h */

static void
pf_backend_select_once(void)
{
  pf_backend_select();
  AO_store_release(&pf_backend_state_word, PF_BE_SELECTED | (pf_active ? pf_active->caps : 0));
}

const struct pf_backend *
pf_backend_get_slow(void)
{
  pthread_once(&pf_backend_once, pf_backend_select_once);
  return pf_active;
}

const char *
pfutex_backend(void)
{
  return pf_backend_get() ? pf_active_name : NULL;
}

static const char *pf_backend_names[PF_NBACKENDS + 1];
static pthread_once_t pf_backend_names_once = PTHREAD_ONCE_INIT;

/* The default first, then the others in table order. */
static void
pf_backend_names_fill(void)
{
  size_t i, n = 0;
  for (i = 0; i < PF_NBACKENDS; i++)
    if (strcmp(pf_backend_table[i]->name, PF_DEFAULT_BACKEND) == 0)
      pf_backend_names[n++] = pf_backend_table[i]->name;
  for (i = 0; i < PF_NBACKENDS; i++)
    if (strcmp(pf_backend_table[i]->name, PF_DEFAULT_BACKEND) != 0)
      pf_backend_names[n++] = pf_backend_table[i]->name;
  pf_backend_names[n] = NULL;
}

const char *const *
pfutex_backends(void)
{
  pthread_once(&pf_backend_names_once, pf_backend_names_fill);
  return pf_backend_names;
}

/* The shared key spaces (src/emu.h): here, built in every configuration,
 * as regions are; the engine reads them, the region layer writes them. */
volatile AO_t pf_keyspaces[65];            /* PF_KEYSPACES_MAX */
volatile AO_t pf_keyspaces_n;
