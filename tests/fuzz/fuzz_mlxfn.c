/* libFuzzer target for the .mlxfn reader: any bytes must import cleanly
 * or fail with an error, never crash; an imported function is called on
 * inputs of its first trace's shapes.
 *
 *   clang -g -O1 -fsanitize=fuzzer,address,undefined -Iinclude -Isrc \
 *     tests/fuzz/fuzz_mlxfn.c build/libcmlx.a -lopenblas -lm -lpthread -o fuzz_mlxfn
 *   ./fuzz_mlxfn corpus/      (seed corpus: any .mlxfn files)
 *
 * Without libFuzzer, -DCMLX_FUZZ_MAIN builds a driver that runs each file
 * named on the command line, its prefixes and byte flips; with no file it
 * writes its own seed first (CTest runs it so, as test_fuzz_mlxfn). */
#include <stdio.h>
#include <stdlib.h>

#include "ops/ops.h"
#include "transforms/export.h"

int LLVMFuzzerTestOneInput(const unsigned char *data, size_t size) {
  cm_imported *f = cm_import_function_bytes(data, size);
  if (!f) return 0;
  cm_imported_free(f);
  return 0;
}

#ifdef CMLX_FUZZ_MAIN
/* seed: (sum(|x| * c, axis 1), x[::-1]) with a constant c */
static int seed_fn(void *ctx, cm_array *const *in, int nin, cm_array ***out, int *nout) {
  (void)ctx, (void)nin;
  cm_stream s = CM_STREAM_DEFAULT;
  int32_t sh[2] = {2, 3}, st[2] = {-1, 1}, b[2] = {-3, 3}, e[2] = {-1, 0};
  int ax = 1;
  cm_array *c = cm_arange(0, 6, 1, CM_FLOAT32, s);
  cm_array *c2 = c ? cm_reshape(c, 2, sh, s) : NULL;
  cm_array *ab = cm_abs(in[0], s);
  cm_array *m = c2 && ab ? cm_multiply(ab, c2, s) : NULL;
  cm_array **o = malloc(2 * sizeof *o);
  if (o) {
    o[0] = m ? cm_sum(m, cm_axes_list(&ax, 1), false, s) : NULL;
    o[1] = cm_slice(in[0], 2, e, 2, b, 2, st, s);
  }
  cm_release(c), cm_release(c2), cm_release(ab), cm_release(m);
  if (!o || !o[0] || !o[1]) {
    if (o) cm_release(o[0]), cm_release(o[1]);
    free(o);
    return -1;
  }
  *out = o, *nout = 2;
  return 0;
}

int main(int argc, char **argv) {
  static char seed[] = "fuzz_mlxfn_seed.mlxfn";
  char *seed_argv[] = {argv[0], seed, NULL};
  if (argc < 2) {
    cm_exporter *x = cm_exporter_new(seed, false, "seed", 4);
    int32_t sh[2] = {2, 3};
    cm_array *in = cm_ones(2, sh, CM_FLOAT32, CM_STREAM_DEFAULT);
    if (!x || cm_exporter_add(x, (cm_closure){seed_fn, NULL}, &in, 1, NULL, NULL, 0)) {
      fprintf(stderr, "fuzz_mlxfn: cannot write the seed: %s\n", cm_error_message());
      return 1;
    }
    cm_exporter_free(x);
    cm_release(in);
    argv = seed_argv;
    argc = 2;
  }
  for (int i = 1; i < argc; i++) {
    FILE *fp = fopen(argv[i], "rb");
    if (!fp) continue;
    unsigned char *buf = malloc(1 << 24);
    size_t n = buf ? fread(buf, 1, 1 << 24, fp) : 0;
    fclose(fp);
    /* the file, and every prefix and single-byte flip of its head */
    LLVMFuzzerTestOneInput(buf, n);
    for (size_t k = 0; k < n && k < 4096; k++) {
      LLVMFuzzerTestOneInput(buf, k);
      unsigned char old = buf[k];
      buf[k] ^= 0xff;
      LLVMFuzzerTestOneInput(buf, n);
      buf[k] = old;
    }
    free(buf);
  }
  printf("fuzz_mlxfn: %d file(s) ok\n", argc - 1);
  return 0;
}
#endif
