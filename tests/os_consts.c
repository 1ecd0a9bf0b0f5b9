/* os_consts.c - every OS constant, struct size and field offset and call
 * signature that the BSD and macOS ports and their shims spell themselves
 * (tests/os_consts_<os>.c lists them, compiled with the shim's and the
 * port's headers), compared with an independent table: the Rust libc
 * crate (Debian: librust-libc-dev, /usr/share/cargo/registry/libc-*; or
 * $PFUTEX_RUST_LIBC, the crate's directory).  A value that differs fails;
 * a name the crate lacks is a SKIP line that names it (never a guess).
 *
 * The crate is read as text: `pub const NAME: TYPE = EXPR;` (EXPR: numbers,
 * other constants, | & ^ << >> + - ! and casts), `pub struct NAME { pub
 * field: TYPE, ... }` (fields under #[cfg(...)] kept or dropped by a small
 * evaluator: FreeBSD 14's ABI, this host's pointer width and CPU;
 * #[repr(packed(N))] honoured) laid out with C's rules and this host's
 * type sizes, and `pub fn NAME(params) -> RET;` reduced to its types.  The
 * files of one OS are searched most specific first (FreeBSD: freebsd14/,
 * then freebsd/, freebsdlike/, bsd/, unix/): the first definition wins.
 * Layouts are compared on 64-bit hosts only (the shims' structs model the
 * 64-bit systems the cross builds target).
 *
 * Before the real comparison, the checker is shown to fail: a copy of one
 * entry with its value changed by one must be reported as a difference
 * (PFUTEX_OS_CONSTS_WRONG=NAME does the same to NAME in the real tables,
 * by hand). */
#define _GNU_SOURCE 1
#include <ctype.h>
#include <errno.h>
#include <glob.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "os_consts.h"

static int tap_n, tap_failed;

static void
tap(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void
tap(int ok, const char *fmt, ...)
{
  va_list ap;
  printf("%sok %d - ", ok ? "" : "not ", ++tap_n);
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  putchar('\n');
  tap_failed |= !ok;
}

/* ---- The crate's text ------------------------------------------------------------- */
struct os_src {
  const char *os;
  const struct pft_oc *table;
  const char *files[12];      /* under src/unix/, most specific first */
  const char *cfg_true[8];    /* identifiers #[cfg(...)] takes as true */
};

static const struct os_src oses[] = {
  { "freebsd", pft_oc_freebsd,
    { "bsd/freebsdlike/freebsd/freebsd14/mod.rs", "bsd/freebsdlike/freebsd/freebsd14/b64.rs",
      "bsd/freebsdlike/freebsd/freebsd14/x86_64.rs", "bsd/freebsdlike/freebsd/mod.rs",
      "bsd/freebsdlike/freebsd/x86_64/mod.rs", "bsd/freebsdlike/mod.rs", "bsd/mod.rs", "mod.rs" },
    { "freebsd14" } },
  { "dragonfly", pft_oc_dragonfly,
    { "bsd/freebsdlike/dragonfly/mod.rs", "bsd/freebsdlike/mod.rs", "bsd/mod.rs", "mod.rs" }, { 0 } },
  { "openbsd", pft_oc_openbsd,
    { "bsd/netbsdlike/openbsd/mod.rs", "bsd/netbsdlike/openbsd/x86_64.rs", "bsd/netbsdlike/mod.rs",
      "bsd/mod.rs", "mod.rs" }, { 0 } },
  { "netbsd", pft_oc_netbsd,
    { "bsd/netbsdlike/netbsd/mod.rs", "bsd/netbsdlike/netbsd/x86_64.rs", "bsd/netbsdlike/mod.rs",
      "bsd/mod.rs", "mod.rs" }, { 0 } },
  { "darwin", pft_oc_darwin,
    { "bsd/apple/mod.rs", "bsd/apple/b64/mod.rs", "bsd/apple/b64/x86_64/mod.rs", "bsd/mod.rs",
      "mod.rs" }, { "libc_packedN" } },
  { "darwin", pft_oc_darwin_port,
    { "bsd/apple/mod.rs", "bsd/apple/b64/mod.rs", "bsd/apple/b64/x86_64/mod.rs", "bsd/mod.rs",
      "mod.rs" }, { "libc_packedN" } },
};

static char *texts[12];        /* the current OS's files, as read */
static const struct os_src *cur;
static char crate_unix[4200];

static char *
slurp(const char *path)
{
  FILE *f = fopen(path, "r");
  char *buf = NULL;
  size_t len = 0, cap = 0, n;
  if (!f)
    return NULL;
  do {
    if (len + 65536 + 1 > cap && !(buf = realloc(buf, cap = 2 * cap + 65536 + 1)))
      abort();
    n = fread(buf + len, 1, 65536, f);
    len += n;
  } while (n > 0);
  fclose(f);
  buf[len] = 0;
  /* Comments out (line comments only: the crate has no block comments in
   * definitions), so a commented-out constant is not one. */
  {
    char *p = buf;
    while ((p = strstr(p, "//")) != NULL) {
      while (*p && *p != '\n')
        *p++ = ' ';
    }
  }
  return buf;
}

static void
os_load(const struct os_src *o)
{
  int i;
  for (i = 0; i < 12; i++) {
    free(texts[i]);
    texts[i] = NULL;
  }
  cur = o;
  for (i = 0; i < 12 && o->files[i]; i++) {
    char path[8192];
    snprintf(path, sizeof path, "%s/%s", crate_unix, o->files[i]);
    texts[i] = slurp(path);
  }
}

/* ---- #[cfg(...)] ------------------------------------------------------------------- */
static int
cfg_ident_true(const char *id, size_t n)
{
  int i;
  for (i = 0; i < 8 && cur->cfg_true[i]; i++)
    if (strlen(cur->cfg_true[i]) == n && strncmp(cur->cfg_true[i], id, n) == 0)
      return 1;
  return 0;
}

static const char *
skip_ws(const char *p)
{
  while (isspace((unsigned char)*p))
    p++;
  return p;
}

/* One predicate at *pp; its truth (-1: not understood, taken as false). */
static int
cfg_eval(const char **pp)
{
  const char *p = skip_ws(*pp), *id = p;
  size_t n;
  int v;
  while (isalnum((unsigned char)*p) || *p == '_')
    p++;
  n = (size_t)(p - id);
  p = skip_ws(p);
  if (*p == '(' && (n == 3 || n == 4)) {          /* not( ), any( ), all( ) */
    int is_not = strncmp(id, "not", 3) == 0 && n == 3, is_any = strncmp(id, "any", 3) == 0 && n == 3;
    int acc = is_any ? 0 : 1, first = 1;
    p++;
    for (;;) {
      p = skip_ws(p);
      if (*p == ')') { p++; break; }
      if (*p == ',') { p++; continue; }
      v = cfg_eval(&p);
      if (is_not)
        acc = !v;
      else if (is_any)
        acc = acc || v;
      else
        acc = acc && v;
      first = 0;
    }
    (void)first;
    *pp = p;
    return acc;
  }
  if (*p == '=') {                                /* key = "value" */
    const char *val, *end;
    char key[64], vbuf[64];
    p = skip_ws(p + 1);
    if (*p != '"') { *pp = p; return 0; }
    val = ++p;
    end = strchr(val, '"');
    if (!end) { *pp = p; return 0; }
    *pp = end + 1;
    snprintf(key, sizeof key, "%.*s", (int)n, id);
    snprintf(vbuf, sizeof vbuf, "%.*s", (int)(end - val), val);
    if (strcmp(key, "target_pointer_width") == 0)
      return atoi(vbuf) == (int)(8 * sizeof(void *));
    if (strcmp(key, "target_arch") == 0)
#if defined(__x86_64__)
      return strcmp(vbuf, "x86_64") == 0;
#elif defined(__aarch64__)
      return strcmp(vbuf, "aarch64") == 0;
#else
      return 0;
#endif
    return 0;
  }
  *pp = p;
  return cfg_ident_true(id, n);
}

/* ---- Constants -------------------------------------------------------------------- */
/* Find `pub const NAME:` in the current OS's files: its type and the text of
 * its expression (up to ';').  0 when absent. */
static int find_const(const char *name, char *type, size_t tcap, char *expr, size_t ecap);

static long long eval_expr(const char **pp, int *ok, int depth);

static long long
eval_primary(const char **pp, int *ok, int depth)
{
  const char *p = skip_ws(*pp);
  long long v = 0;
  if (*p == '(') {
    p++;
    v = eval_expr(&p, ok, depth);
    p = skip_ws(p);
    if (*p == ')')
      p++;
    else
      *ok = 0;
  } else if (*p == '!') {
    p++;
    v = ~eval_primary(&p, ok, depth);
  } else if (*p == '-') {
    p++;
    v = -eval_primary(&p, ok, depth);
  } else if (isdigit((unsigned char)*p)) {
    char num[64];
    size_t n = 0;
    int base = 10;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) { base = 16; p += 2; }
    else if (p[0] == '0' && p[1] == 'o') { base = 8; p += 2; }
    else if (p[0] == '0' && p[1] == 'b') { base = 2; p += 2; }
    while (isxdigit((unsigned char)*p) || *p == '_') {
      if (*p != '_' && n < sizeof num - 1)
        num[n++] = *p;
      p++;
    }
    num[n] = 0;
    v = (long long)strtoull(num, NULL, base);
    while (isalnum((unsigned char)*p) || *p == '_')     /* a suffix: u32, i64 ... */
      p++;
  } else if (isalpha((unsigned char)*p) || *p == '_' || *p == ':') {
    char id[128], type[64], expr[512];
    size_t n = 0;
    while (isalnum((unsigned char)*p) || *p == '_' || *p == ':') {
      if (*p != ':' && n < sizeof id - 1)
        id[n++] = *p;
      else if (*p == ':')
        n = 0;                  /* ::libc::NAME: the last segment */
      p++;
    }
    id[n] = 0;
    if (depth > 8 || !find_const(id, type, sizeof type, expr, sizeof expr)) {
      *ok = 0;
    } else {
      const char *e = expr;
      v = eval_expr(&e, ok, depth + 1);
    }
  } else {
    *ok = 0;
  }
  p = skip_ws(p);
  while (strncmp(p, "as", 2) == 0 && isspace((unsigned char)p[2])) {      /* a cast */
    p = skip_ws(p + 2);
    while (isalnum((unsigned char)*p) || *p == '_' || *p == ':')
      p++;
    p = skip_ws(p);
  }
  *pp = p;
  return v;
}

static long long
eval_expr(const char **pp, int *ok, int depth)
{
  /* Left to right within Rust's precedence: + -, then << >>, then &, ^, |
   * (enough for the crate's constants). */
  long long v[5];
  char op[5];
  int n = 0;
  const char *p;
  v[0] = eval_primary(pp, ok, depth);
  for (;;) {
    p = skip_ws(*pp);
    if (*p == '|' || *p == '&' || *p == '^' || *p == '+' || *p == '-'
        || (p[0] == '<' && p[1] == '<') || (p[0] == '>' && p[1] == '>')) {
      char o = *p;
      long long r;
      p += (o == '<' || o == '>') ? 2 : 1;
      *pp = p;
      r = eval_primary(pp, ok, depth);
      /* apply with precedence by folding higher-precedence ops at once */
      if (o == '+' || o == '-') {
        v[n] = o == '+' ? v[n] + r : v[n] - r;
      } else if (o == '<' || o == '>') {
        v[n] = o == '<' ? (long long)((unsigned long long)v[n] << r) : v[n] >> r;
      } else {
        if (n < 4) {
          op[n] = o;
          v[++n] = r;
        } else {
          *ok = 0;
          break;
        }
      }
    } else {
      break;
    }
  }
  /* fold & first, then ^, then | */
  {
    int i, j;
    const char order[3] = { '&', '^', '|' };
    for (j = 0; j < 3; j++) {
      for (i = 0; i < n;) {
        if (op[i] == order[j]) {
          v[i] = order[j] == '&' ? v[i] & v[i + 1] : order[j] == '^' ? v[i] ^ v[i + 1] : v[i] | v[i + 1];
          memmove(&v[i + 1], &v[i + 2], (size_t)(n - i - 1) * sizeof v[0]);
          memmove(&op[i], &op[i + 1], (size_t)(n - i - 1));
          n--;
        } else {
          i++;
        }
      }
    }
  }
  return v[0];
}

/* Is the item at `at` (the start of a `pub` line) under a #[cfg] that is
 * false?  Looks at the attribute lines just above it. */
static int
cfg_excluded(const char *text, const char *at)
{
  const char *line = at;
  for (;;) {
    const char *prev, *p;
    if (line == text)
      return 0;
    prev = line - 1;                     /* the '\n' ending the line above */
    while (prev > text && prev[-1] != '\n')
      prev--;
    p = skip_ws(prev);
    if (strncmp(p, "#[cfg(", 6) == 0) {
      const char *q = p + 6;
      if (!cfg_eval(&q))
        return 1;
    } else if (strncmp(p, "#[", 2) != 0) {
      return 0;
    }
    line = prev;
  }
}

static int
find_item(const char *kw, const char *name, const char **textp, const char **at)
{
  int i;
  char pat[160];
  snprintf(pat, sizeof pat, "%s%s", kw, name);
  for (i = 0; i < 12; i++) {
    const char *t = texts[i], *p;
    if (!t)
      continue;
    for (p = t; (p = strstr(p, pat)) != NULL; p += strlen(pat)) {
      char c = p[strlen(pat)];
      const char *ls = p;
      if (isalnum((unsigned char)c) || c == '_')
        continue;
      if (p > t && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
        continue;
      while (ls > t && ls[-1] != '\n')
        ls--;
      if (cfg_excluded(t, ls))
        continue;
      *textp = t;
      *at = p + strlen(pat);
      return 1;
    }
  }
  return 0;
}

static int
find_const(const char *name, char *type, size_t tcap, char *expr, size_t ecap)
{
  const char *t, *p, *colon, *eq, *semi;
  if (!find_item("pub const ", name, &t, &p))
    return 0;
  colon = skip_ws(p);
  if (*colon != ':')
    return 0;
  eq = strchr(colon, '=');
  semi = eq ? strchr(eq, ';') : NULL;
  if (!eq || !semi)
    return 0;
  snprintf(type, tcap, "%.*s", (int)(eq - colon - 1), colon + 1);
  snprintf(expr, ecap, "%.*s", (int)(semi - eq - 1), eq + 1);
  return 1;
}

/* ---- Types and structs ------------------------------------------------------------ */
struct tinfo { long size, align; };

static int struct_layout(const char *name, const char *field, long *off, long *fsize, long *size,
                         long *align, char *why, size_t wcap, int depth);

static int
type_info(const char *ty, struct tinfo *ti, char *why, size_t wcap, int depth)
{
  static const struct { const char *n; long size, align; } prim[] = {
    { "c_char", 1, 1 }, { "c_schar", 1, 1 }, { "c_uchar", 1, 1 }, { "u8", 1, 1 }, { "i8", 1, 1 },
    { "c_short", sizeof(short), sizeof(short) }, { "c_ushort", sizeof(short), sizeof(short) },
    { "u16", 2, 2 }, { "i16", 2, 2 },
    { "c_int", sizeof(int), sizeof(int) }, { "c_uint", sizeof(int), sizeof(int) }, { "u32", 4, 4 },
    { "i32", 4, 4 }, { "c_long", sizeof(long), sizeof(long) }, { "c_ulong", sizeof(long), sizeof(long) },
    { "c_longlong", 8, sizeof(long long) }, { "c_ulonglong", 8, sizeof(long long) },
    { "u64", 8, sizeof(uint64_t) }, { "i64", 8, sizeof(uint64_t) },
    { "size_t", sizeof(size_t), sizeof(size_t) }, { "ssize_t", sizeof(size_t), sizeof(size_t) },
    { "uintptr_t", sizeof(void *), sizeof(void *) }, { "intptr_t", sizeof(void *), sizeof(void *) },
    { "timespec", sizeof(struct timespec), sizeof(time_t) },
  };
  char t[256];
  size_t i, n;
  const char *p = skip_ws(ty);
  /* strip :: and leading path */
  n = 0;
  while (*p && n < sizeof t - 1) {
    if (p[0] == ':' && p[1] == ':') {
      p += 2;
      continue;
    }
    t[n++] = *p++;
  }
  while (n > 0 && isspace((unsigned char)t[n - 1]))
    n--;
  t[n] = 0;
  if (t[0] == '*' || t[0] == '&') {
    ti->size = ti->align = sizeof(void *);
    return 1;
  }
  if (t[0] == '[') {                     /* [T; N] */
    char *semi = strrchr(t, ';');
    struct tinfo e;
    if (!semi)
      return 0;
    *semi = 0;
    if (!type_info(t + 1, &e, why, wcap, depth))
      return 0;
    ti->size = e.size * strtol(semi + 1, NULL, 10);
    ti->align = e.align;
    return 1;
  }
  for (i = 0; i < sizeof prim / sizeof prim[0]; i++) {
    if (strcmp(t, prim[i].n) == 0) {
      ti->size = prim[i].size;
      ti->align = prim[i].align;
      return 1;
    }
  }
  /* `pub type NAME = T;` */
  if (depth < 8) {
    const char *tx, *at;
    if (find_item("pub type ", t, &tx, &at)) {
      const char *eq = strchr(at, '='), *semi = eq ? strchr(eq, ';') : NULL;
      char alias[256];
      if (eq && semi) {
        snprintf(alias, sizeof alias, "%.*s", (int)(semi - eq - 1), eq + 1);
        return type_info(alias, ti, why, wcap, depth + 1);
      }
    }
    if (find_item("pub struct ", t, &tx, &at)) {
      long off, fs;
      return struct_layout(t, NULL, &off, &fs, &ti->size, &ti->align, why, wcap, depth + 1);
    }
  }
  snprintf(why, wcap, "the crate's type %s: no size known", t);
  return 0;
}

/* Lay out `pub struct NAME { ... }`: its size and alignment, and, for
 * `field`, its offset and size.  0 (why says) when it cannot. */
static int
struct_layout(const char *name, const char *field, long *off, long *fsize, long *size, long *align,
              char *why, size_t wcap, int depth)
{
  const char *t, *p, *end;
  long pos = 0, maxal = 1, pack = 0;
  int found = field == NULL;
  if (!find_item("pub struct ", name, &t, &p)) {
    snprintf(why, wcap, "the crate has no struct %s", name);
    return 0;
  }
  /* #[repr(packed(N))] or #[cfg_attr(COND, repr(packed(N)))] above it */
  {
    const char *ls = p, *prev;
    while (ls > t && ls[-1] != '\n')
      ls--;
    prev = ls;
    while (prev > t) {
      const char *q = prev - 1, *r;
      while (q > t && q[-1] != '\n')
        q--;
      r = skip_ws(q);
      if (strncmp(r, "#[", 2) != 0)
        break;
      if ((r = strstr(r, "packed(")) != NULL && r < prev) {
        const char *c = strstr(q, "cfg_attr(");
        int apply = 1;
        if (c && c < r) {
          const char *cc = c + 9;
          apply = cfg_eval(&cc);
        }
        if (apply)
          pack = strtol(r + 7, NULL, 10);
      }
      prev = q;
    }
  }
  p = strchr(p, '{');
  if (!p)
    return 0;
  end = strchr(p, '}');
  if (!end)
    return 0;
  p++;
  while (p < end) {
    const char *ls = skip_ws(p), *nl = strchr(ls, '\n');
    const char *colon, *comma;
    char fname[128], ftype[256];
    struct tinfo ti;
    if (!nl || nl > end)
      nl = end;
    if (strncmp(ls, "#[cfg(", 6) == 0) {
      const char *q = ls + 6;
      if (!cfg_eval(&q)) {               /* drop the next field */
        p = nl + 1;
        ls = skip_ws(p);
        nl = strchr(ls, '\n');
        p = nl && nl < end ? nl + 1 : end;
        continue;
      }
      p = nl + 1;
      continue;
    }
    if (*ls == '#' || ls >= end) {
      p = nl + 1;
      continue;
    }
    if (strncmp(ls, "pub ", 4) == 0)
      ls += 4;
    colon = strchr(ls, ':');
    if (!colon || colon > nl) {
      p = nl + 1;
      continue;
    }
    snprintf(fname, sizeof fname, "%.*s", (int)(colon - ls), ls);
    comma = colon + 1;
    {
      int br = 0;
      while (comma < end && (br > 0 || (*comma != ',' && *comma != '\n'))) {
        if (*comma == '[')
          br++;
        else if (*comma == ']')
          br--;
        comma++;
      }
    }
    snprintf(ftype, sizeof ftype, "%.*s", (int)(comma - colon - 1), colon + 1);
    if (!type_info(ftype, &ti, why, wcap, depth))
      return 0;
    if (pack && ti.align > pack)
      ti.align = pack;
    pos = (pos + ti.align - 1) / ti.align * ti.align;
    if (field && strcmp(fname, field) == 0) {
      *off = pos;
      *fsize = ti.size;
      found = 1;
    }
    pos += ti.size;
    if (ti.align > maxal)
      maxal = ti.align;
    p = comma < end ? comma + 1 : end;
  }
  if (!found) {
    snprintf(why, wcap, "the crate's struct %s has no field %s", name, field);
    return 0;
  }
  *size = (pos + maxal - 1) / maxal * maxal;
  *align = maxal;
  return 1;
}

/* ---- fn signatures ------------------------------------------------------------------ */
static int
find_sig(const char *name, char *sig, size_t cap)
{
  const char *t, *p, *end, *q;
  size_t n = 0;
  int depth = 0, in_name = 0;
  if (!find_item("pub fn ", name, &t, &p))
    return 0;
  end = strchr(p, ';');
  if (!end)
    return 0;
  /* "(name: T, name: T) -> R" -> "(T, T) -> R": drop names, ::, spaces
   * collapsed, trailing commas. */
  for (q = skip_ws(p); q < end && n < cap - 1; q++) {
    if (*q == '(') {
      depth++;
      sig[n++] = '(';
      in_name = depth == 1;
      continue;
    }
    if (*q == ')') {
      while (n > 0 && (sig[n - 1] == ' ' || sig[n - 1] == ','))
        n--;
      depth--;
      sig[n++] = ')';
      continue;
    }
    if (depth == 1 && in_name) {
      if (*q == ':' && q[1] != ':')
        in_name = 0;
      continue;
    }
    if (depth == 1 && *q == ',') {
      sig[n++] = ',';
      sig[n++] = ' ';
      in_name = 1;
      continue;
    }
    if (q[0] == ':' && q[1] == ':') {
      q++;
      continue;
    }
    if (isspace((unsigned char)*q)) {
      if (n > 0 && sig[n - 1] != ' ' && sig[n - 1] != '(')
        sig[n++] = ' ';
      continue;
    }
    sig[n++] = *q;
  }
  while (n > 0 && sig[n - 1] == ' ')
    n--;
  sig[n] = 0;
  return 1;
}

/* ---- One entry -------------------------------------------------------------------- */
enum { R_SAME, R_DIFF, R_ABSENT };

static int
check(const struct pft_oc *e, long long ours, char *msg, size_t cap)
{
  char type[64], expr[512], why[256] = "";
  switch (e->kind) {
  case PFT_OC_CONST: {
    int ok = 1;
    long long theirs;
    const char *x = expr;
    int bits;
    if (!find_const(e->name, type, sizeof type, expr, sizeof expr)) {
      snprintf(msg, cap, "%s: the crate has no constant %s", cur->os, e->name);
      return R_ABSENT;
    }
    theirs = eval_expr(&x, &ok, 0);
    if (!ok) {
      snprintf(msg, cap, "%s: the crate's %s = %s: not evaluated", cur->os, e->name, expr);
      return R_ABSENT;
    }
    /* compare at the crate's width when it is 32 bits or less */
    bits = strstr(type, "64") || strstr(type, "long") || strstr(type, "size_t") ? 64 : 32;
    if (bits == 32 ? (uint32_t)theirs == (uint32_t)ours : theirs == ours) {
      snprintf(msg, cap, "%s: %s = %lld (%s; the crate: %s)", cur->os, e->name, ours, e->origin, expr + (*expr == ' '));
      return R_SAME;
    }
    snprintf(msg, cap, "%s: %s is %lld in %s, %lld in the crate (%s)", cur->os, e->name, ours, e->origin,
             theirs, expr + (*expr == ' '));
    return R_DIFF;
  }
  case PFT_OC_SIZE:
  case PFT_OC_OFFSET:
  case PFT_OC_FIELD_SIZE: {
    long off = 0, fs = 0, size = 0, al = 0, theirs;
    const char *what = e->kind == PFT_OC_SIZE ? "sizeof" : e->kind == PFT_OC_OFFSET ? "offsetof" : "field size";
    if (!struct_layout(e->agg, e->kind == PFT_OC_SIZE ? NULL : e->name, &off, &fs, &size, &al, why,
                       sizeof why, 0)) {
      snprintf(msg, cap, "%s: %s struct %s%s%s: %s", cur->os, what, e->agg, e->name ? "." : "",
               e->name ? e->name : "", why);
      return R_ABSENT;
    }
    theirs = e->kind == PFT_OC_SIZE ? size : e->kind == PFT_OC_OFFSET ? off : fs;
    snprintf(msg, cap, "%s: %s struct %s%s%s is %lld in %s, %ld in the crate", cur->os, what, e->agg,
             e->name ? "." : "", e->name ? e->name : "", ours, e->origin, theirs);
    return theirs == ours ? R_SAME : R_DIFF;
  }
  case PFT_OC_SIG: {
    char sig[512];
    if (!find_sig(e->name, sig, sizeof sig)) {
      snprintf(msg, cap, "%s: the crate declares no fn %s", cur->os, e->name);
      return R_ABSENT;
    }
    snprintf(msg, cap, "%s: fn %s%s in %s, %s%s in the crate", cur->os, e->name, e->sig, e->origin,
             e->name, sig);
    return strcmp(sig, e->sig) == 0 ? R_SAME : R_DIFF;
  }
  }
  snprintf(msg, cap, "unknown entry kind %d", e->kind);
  return R_DIFF;
}

static int
version_cmp(const void *a, const void *b)
{
  return strverscmp(*(const char *const *)a, *(const char *const *)b);
}

int
main(void)
{
  const char *dir = getenv("PFUTEX_RUST_LIBC"), *wrong = getenv("PFUTEX_OS_CONSTS_WRONG");
  char crate[4096];
  size_t i;
  int same = 0, diff = 0, absent = 0;
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (dir && *dir) {
    snprintf(crate, sizeof crate, "%s", dir);
  } else {
    glob_t g;
    if (glob("/usr/share/cargo/registry/libc-0.*", 0, NULL, &g) != 0 || g.gl_pathc == 0) {
      printf("1..0 # SKIP no Rust libc crate here (Debian: apt-get install librust-libc-dev; or set PFUTEX_RUST_LIBC)\n");
      return 0;
    }
    qsort(g.gl_pathv, g.gl_pathc, sizeof *g.gl_pathv, version_cmp);
    snprintf(crate, sizeof crate, "%s", g.gl_pathv[g.gl_pathc - 1]);
    globfree(&g);
  }
  snprintf(crate_unix, sizeof crate_unix, "%s/src/unix", crate);
  printf("# the independent table: %s\n", crate);

  /* The checker fails on a wrong value: FreeBSD's UMTX_OP_WAIT, off by one. */
  {
    struct pft_oc bad = pft_oc_freebsd[0];
    char msg[1024];
    int r;
    os_load(&oses[0]);
    if (!texts[0]) {
      printf("Bail out! %s/%s: %s\n", crate_unix, oses[0].files[0], strerror(errno));
      return 1;
    }
    r = check(&bad, bad.value, msg, sizeof msg);
    if (r == R_ABSENT) {
      printf("Bail out! the crate at %s lacks %s: not a libc crate this test can read\n", crate, bad.name);
      return 1;
    }
    tap(r == R_SAME, "the checker finds the right value the same (%s)", msg);
    r = check(&bad, bad.value + 1, msg, sizeof msg);
    tap(r == R_DIFF, "the checker reports a wrong value (%s)", msg);
  }

  for (i = 0; i < sizeof oses / sizeof oses[0]; i++) {
    const struct pft_oc *e;
    os_load(&oses[i]);
    if (!texts[0]) {
      tap(0, "%s: %s/%s unreadable", oses[i].os, crate_unix, oses[i].files[0]);
      continue;
    }
    for (e = oses[i].table; e->kind; e++) {
      char msg[1024];
      long long ours = e->value;
      int r;
      if (e->kind != PFT_OC_CONST && e->kind != PFT_OC_SIG && sizeof(void *) != 8) {
        printf("ok %d # SKIP %s: struct %s%s%s: layouts are compared on 64-bit hosts only\n", ++tap_n,
               cur->os, e->agg, e->name ? "." : "", e->name ? e->name : "");
        absent++;
        continue;
      }
      if (wrong && e->name && strcmp(wrong, e->name) == 0)
        ours++;                 /* PFUTEX_OS_CONSTS_WRONG: by hand, to see it fail */
      r = check(e, ours, msg, sizeof msg);
      if (r == R_ABSENT) {
        printf("ok %d # SKIP %s\n", ++tap_n, msg);
        absent++;
      } else {
        tap(r == R_SAME, "%s", msg);
        if (r == R_SAME)
          same++;
        else
          diff++;
      }
    }
  }
  printf("# %d the same as the crate, %d different, %d not in the crate (SKIP, named above)\n", same, diff,
         absent);
  printf("1..%d\n", tap_n);
  return tap_failed;
}
