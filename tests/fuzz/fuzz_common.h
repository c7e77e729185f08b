/* Shared part of the libFuzzer targets for the file parsers (src/io): the
 * fuzz input becomes an in-memory reader, the parser runs on it, every
 * array it returns is evaluated (lazy loads read their bytes then), and
 * everything is released.  A parser may reject the input with an error; it
 * must never crash, read out of bounds, leak or allocate without bound. */
#ifndef CMLX_FUZZ_COMMON_H
#define CMLX_FUZZ_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/io.h"
#include "transforms/eval.h"

static cm_stream fuzz_stream(void) {
  cm_stream s = CM_STREAM_DEFAULT;
  cm_stream_resolve(s, &s);
  return s;
}

/* A reader over a private copy of the input (the reader frees it). */
static cm_reader *fuzz_reader(const uint8_t *data, size_t size) {
  void *copy = malloc(size ? size : 1);
  if (!copy) return NULL;
  if (size) memcpy(copy, data, size);
  return cm_reader_memory(copy, size, free, "fuzz input");
}

/* Evaluates each array on its own, so one failing load does not hide the others. */
static void fuzz_eval_named(cm_named_arrays *m) {
  for (size_t i = 0; i < m->n; i++) {
    if (cm_eval(&m->arrs[i], 1)) cm_error_clear();
  }
}

typedef int (*fuzz_named_loader)(cm_reader *, cm_stream, cm_named_arrays *, cm_metadata *);

/* The shared body of the targets whose loader returns a name -> array map. */
static inline int fuzz_named(const uint8_t *data, size_t size, fuzz_named_loader load) {
  cm_reader *r = fuzz_reader(data, size);
  if (!r) {
    cm_error_clear();
    return 0;
  }
  cm_named_arrays arrays = {0};
  cm_metadata meta = {0};
  if (load(r, fuzz_stream(), &arrays, &meta) == 0) fuzz_eval_named(&arrays);
  cm_error_clear();
  cm_named_arrays_clear(&arrays);
  cm_metadata_clear(&meta);
  cm_reader_release(r);
  return 0;
}

#ifdef CMLX_FUZZ_MAIN
#include <stdio.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Without libFuzzer (CTest builds each format target so, as
 * test_fuzz_<format>): every file named on the command line, its prefixes
 * and byte flips of its head, then inputs from a fixed-seed generator, on
 * which the round-trip half makes arrays of many dtypes, shapes, layouts. */
int main(int argc, char **argv) {
  size_t runs = 0;
  for (int i = 1; i < argc; i++) {
    FILE *fp = fopen(argv[i], "rb");
    unsigned char *buf = malloc(1 << 20);
    size_t n = fp && buf ? fread(buf, 1, 1 << 20, fp) : 0;
    if (fp) fclose(fp);
    if (!fp || !buf) {
      fprintf(stderr, "%s: cannot read %s\n", argv[0], argv[i]);
      return 1;
    }
    LLVMFuzzerTestOneInput(buf, n);
    for (size_t k = 0; k < n && k < 256; k++, runs += 2) {
      LLVMFuzzerTestOneInput(buf, k);
      buf[k] ^= 0x5a;
      LLVMFuzzerTestOneInput(buf, n);
      buf[k] ^= 0x5a;
    }
    free(buf);
    runs++;
  }
  uint64_t x = 0x9E3779B97F4A7C15u;
  unsigned char in[384];
  for (int t = 0; t < 3000; t++, runs++) {
    size_t n = (size_t)t % sizeof in;
    for (size_t k = 0; k < n; k++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      in[k] = (unsigned char)(x >> 24);
    }
    LLVMFuzzerTestOneInput(in, n);
  }
  printf("%s: %zu inputs, no failure\n", argv[0], runs);
  return 0;
}
#endif

#endif
