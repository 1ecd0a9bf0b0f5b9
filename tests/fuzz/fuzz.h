/* fuzz.h - what the fuzz targets (tests/fuzz/fuzz_*.c) share with their two
 * drivers: libFuzzer (.ci/fuzz: clang -fsanitize=fuzzer,address,undefined,
 * tests/fuzz/abort.c) and the corpus replay that `make check` runs as a TAP
 * test (tests/fuzz/replay.c).  A target reports a finding with fz_fail:
 * under libFuzzer it prints and aborts (a crash artifact); in the replay it
 * fails the corpus file's TAP line. */
#ifndef PF_FUZZ_H
#define PF_FUZZ_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__)
# define FZ_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
# define FZ_PRINTF(a, b)
#endif

/* A finding: a divergence, an invalid result, a broken invariant. */
void fz_fail(const char *fmt, ...) FZ_PRINTF(1, 2);

/* 1 in the replay (the TAP test), 0 under libFuzzer. */
extern const int fz_replay;

/* The input, read from the front; past its end every read gives zeros, so
 * any input (the empty one too) decodes to a valid case. */
struct fz_in {
  const uint8_t *p;
  size_t n;
};

static inline uint8_t
fz_u8(struct fz_in *in)
{
  uint8_t b = 0;
  if (in->n) {
    b = *in->p++;
    in->n--;
  }
  return b;
}

static inline uint16_t
fz_u16(struct fz_in *in)
{
  uint16_t v = fz_u8(in);
  return (uint16_t)(v | (uint16_t)fz_u8(in) << 8);
}

static inline uint32_t
fz_u32(struct fz_in *in)
{
  uint32_t v = fz_u16(in);
  return v | (uint32_t)fz_u16(in) << 16;
}

static inline uint64_t
fz_u64(struct fz_in *in)
{
  uint64_t v = fz_u32(in);
  return v | (uint64_t)fz_u32(in) << 32;
}

/* NULL, or why the replay skips here. */
const char *fz_unsupported(void);

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Where a target cannot run (fz_unsupported says why): entry points that
 * do nothing. */
#define FZ_NO_TARGET                                                     \
  int LLVMFuzzerInitialize(int *argc, char ***argv)                      \
  {                                                                      \
    (void)argc;                                                          \
    (void)argv;                                                          \
    return 0;                                                            \
  }                                                                      \
  int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)           \
  {                                                                      \
    (void)data;                                                          \
    (void)size;                                                          \
    return 0;                                                            \
  }

#endif
