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
    .caps = PF_BE_EMU,                                                            \
  };

#ifdef PF_HAVE_PORT_FUTEX
PF_EMU_BACKEND(futex, pf_port_futex, "emu:futex")
#endif
#ifdef PF_HAVE_PORT_SYSV
PF_EMU_BACKEND(sysv, pf_port_sysv, "emu:sysv")
#endif
