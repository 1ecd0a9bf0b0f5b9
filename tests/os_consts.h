/* os_consts.h - tests/os_consts: the OS facts the ports and their shims
 * spell themselves, one table per OS (tests/os_consts_<os>.c, each
 * compiled with that OS's shim header and the port's own headers), to be
 * compared with an independent source, the Rust libc crate. */
#ifndef PFT_OS_CONSTS_H
#define PFT_OS_CONSTS_H

#include <stddef.h>

enum pft_oc_kind {
  PFT_OC_CONST = 1,     /* name: the crate's constant; value */
  PFT_OC_SIZE,          /* sizeof(struct `agg`) */
  PFT_OC_OFFSET,        /* offsetof(struct `agg`, `name`) */
  PFT_OC_FIELD_SIZE,    /* sizeof of the field `name` of struct `agg` */
  PFT_OC_SIG            /* name: the crate's fn; sig: its parameters and result,
                           in the crate's spelling (checked against the C
                           prototype by the compiler: os_consts_<os>.c) */
};

struct pft_oc {
  int kind;
  const char *name;     /* the crate's name of the constant, field or fn */
  const char *agg;      /* the struct, for sizes and offsets */
  long long value;
  const char *sig;
  const char *origin;   /* where pfutex spells it */
};

#define PFT_OC_C(name, origin)          { PFT_OC_CONST, #name, NULL, (long long)(name), NULL, origin }
#define PFT_OC_CN(cname, v, origin)     { PFT_OC_CONST, cname, NULL, (long long)(v), NULL, origin }
#define PFT_OC_SZ(s, origin)            { PFT_OC_SIZE, NULL, #s, (long long)sizeof(struct s), NULL, origin }
#define PFT_OC_OFF(s, f, origin)        { PFT_OC_OFFSET, #f, #s, (long long)offsetof(struct s, f), NULL, origin }
#define PFT_OC_FSZ(s, f, origin)        { PFT_OC_FIELD_SIZE, #f, #s, (long long)sizeof(((struct s *)0)->f), NULL, origin }
#define PFT_OC_FN(fn, sig, origin)      { PFT_OC_SIG, #fn, NULL, 0, sig, origin }
#define PFT_OC_END                      { 0, NULL, NULL, 0, NULL, NULL }

extern const struct pft_oc pft_oc_freebsd[], pft_oc_dragonfly[], pft_oc_openbsd[],
  pft_oc_netbsd[], pft_oc_darwin[], pft_oc_darwin_port[];

#endif
