/* emu.c - the emulated backends: the engine in src/ over one park port. */
#include "emu.h"

#include <string.h>

const struct pf_port *pf_emu_port;

static int
pf_emu_init(const struct pf_port *port)
{
  int ret;
  pf_emu_port = port;
  if ((ret = port->init()) < 0)
    return ret;
  if ((ret = pf_thread_init()) < 0)
    return ret;
  return pf_table_init();
}

#define PF_EMU_BACKEND(cname, port, label)                                        \
  static int pf_emu_init_##cname(const struct pf_backend *self, const char *want, \
                                 const char **reported)                           \
  {                                                                               \
    *reported = label;                                                            \
    return pf_emu_init(&(port));                                        \
  }                                                                               \
  const struct pf_backend pf_backend_emu_##cname = {                              \
    .name = label, .init = pf_emu_init_##cname, .wait = pf_emu_wait,              \
    .wake = pf_emu_wake, .requeue = pf_emu_requeue, .wake_op = pf_emu_wake_op,    \
    .caps = PF_BE_EMU, .pi_req = pf_emu_pi, .robust_set = pf_emu_robust_set,      \
    .robust_get = pf_emu_robust_get, .waitv = pf_emu_waitv,                       \
  };

#ifdef PF_HAVE_PORT_FUTEX
PF_EMU_BACKEND(futex, pf_port_futex, "emu:futex")
#endif
#ifdef PF_HAVE_PORT_SYSV
PF_EMU_BACKEND(sysv, pf_port_sysv, "emu:sysv")
#endif
#ifdef PF_HAVE_PORT_FREEBSD
PF_EMU_BACKEND(freebsd, pf_port_freebsd, "emu:freebsd")
#endif
#ifdef PF_HAVE_PORT_DRAGONFLY
PF_EMU_BACKEND(dragonfly, pf_port_dragonfly, "emu:dragonfly")
#endif
#ifdef PF_HAVE_PORT_OPENBSD
PF_EMU_BACKEND(openbsd, pf_port_openbsd, "emu:openbsd")
#endif
#ifdef PF_HAVE_PORT_NETBSD
PF_EMU_BACKEND(netbsd, pf_port_netbsd, "emu:netbsd")
#endif
#ifdef PF_HAVE_PORT_DARWIN
PF_EMU_BACKEND(darwin, pf_port_darwin, "emu:darwin")
#endif
#ifdef PF_HAVE_PORT_WIN32
PF_EMU_BACKEND(win32, pf_port_win32, "emu:win32")
#endif
#ifdef PF_HAVE_SHIM_FREEBSD
PF_EMU_BACKEND(freebsd_shim, pf_port_freebsd_shim, "emu:freebsd-shim")
#endif
#ifdef PF_HAVE_SHIM_DRAGONFLY
PF_EMU_BACKEND(dragonfly_shim, pf_port_dragonfly_shim, "emu:dragonfly-shim")
#endif
#ifdef PF_HAVE_SHIM_OPENBSD
PF_EMU_BACKEND(openbsd_shim, pf_port_openbsd_shim, "emu:openbsd-shim")
#endif
#ifdef PF_HAVE_SHIM_NETBSD
PF_EMU_BACKEND(netbsd_shim, pf_port_netbsd_shim, "emu:netbsd-shim")
#endif
#ifdef PF_HAVE_SHIM_DARWIN
PF_EMU_BACKEND(darwin_shim, pf_port_darwin_shim, "emu:darwin-shim")
#endif
#ifdef PF_SCHED_POINTS
PF_EMU_BACKEND(sched, pf_port_sched, "emu:sched")      /* tests/sched only */
#endif
