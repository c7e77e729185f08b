/* The valid-file half of the format targets: the fuzz input also chooses
 * one to three arrays (dtype, shape with 0-d and empty, layout, bytes),
 * which are saved in the target's format into memory and loaded back.
 * The load must succeed and give exactly what was saved: the same names,
 * dtypes, shapes and bytes.  Anything else aborts, which libFuzzer reports
 * as a crash (the hostile half only asks for "no crash").
 *
 * Input, read from the start (missing bytes read as 0): dtype, ndim, one
 * byte per dim, layout, member count and a flag (deflate, for npz); the
 * rest is the data pattern, repeated to fill each array (zeros if empty).
 * Layouts: contiguous, axes reversed (column-major, .npy's fortran_order),
 * every axis stepped by 2 (a strided view), broadcast along axis 0. */
#ifndef CMLX_FUZZ_ROUNDTRIP_H
#define CMLX_FUZZ_ROUNDTRIP_H

#include <stdio.h>

#include "fuzz_common.h"
#include "ops/common.h"
#include "ops/shape.h"

typedef struct fuzz_format {
  const char *name;
  uint32_t dtypes; /* bit d: the format holds dtype d */
  bool nonempty;   /* GGUF: at least one axis and one element */
  bool single;     /* .npy: one array, unnamed */
  int (*save)(cm_writer *w, const cm_named_arrays *arrays, bool flag);
  int (*load)(cm_reader *r, cm_stream s, cm_named_arrays *out);
} fuzz_format;

#define FUZZ_ALL_DTYPES ((1u << CM_NUM_DTYPES) - 1)

typedef struct fuzz_in {
  const uint8_t *p;
  size_t n, at;
} fuzz_in;

static uint8_t fuzz_take(fuzz_in *in) { return in->at < in->n ? in->p[in->at++] : 0; }

typedef struct fuzz_sink {
  unsigned char *p;
  size_t n, cap;
} fuzz_sink;

static int fuzz_sink_write(void *ctx, const void *src, size_t n) {
  fuzz_sink *b = ctx;
  if (b->cap - b->n < n) {
    size_t cap = (b->cap ? b->cap * 2 : 4096) + n;
    unsigned char *p = realloc(b->p, cap);
    if (!p) return cm_error(CM_ERR_MEMORY, "[fuzz] Out of memory.");
    b->p = p, b->cap = cap;
  }
  memcpy(b->p + b->n, src, n);
  b->n += n;
  return 0;
}

static void fuzz_fail(const fuzz_format *f, const char *what, const char *key) {
  fprintf(stderr, "fuzz %s round trip: %s (%s): %s\n", f->name, what, key ? key : "-",
          cm_error_message());
  abort();
}

/* The array the input asks for (a new reference), NULL when it has no
 * bytes left to describe one. */
static cm_array *fuzz_array(fuzz_in *in, const fuzz_format *f, const uint8_t *pat, size_t npat) {
  cm_dtype held[CM_NUM_DTYPES];
  int nheld = 0;
  for (int d = 0; d < CM_NUM_DTYPES; d++)
    if (f->dtypes >> d & 1) held[nheld++] = (cm_dtype)d;
  cm_dtype dt = held[fuzz_take(in) % nheld];
  int ndim = fuzz_take(in) % 5, layout;
  if (f->nonempty && ndim == 0) ndim = 1;
  int32_t shape[4], base[4];
  for (int i = 0; i < ndim; i++) {
    shape[i] = fuzz_take(in) % 7;
    if (f->nonempty && shape[i] == 0) shape[i] = 1;
  }
  layout = ndim ? fuzz_take(in) % 4 : 0;
  int64_t count = 1;
  for (int i = 0; i < ndim; i++) {
    base[i] = layout == 2 ? 2 * shape[i] : layout == 3 && i == 0 ? 1 : shape[i];
    count *= base[i];
  }
  size_t item = cm_dtype_size(dt), nbytes = (size_t)count * item;
  unsigned char *bytes = calloc(nbytes ? nbytes : 1, 1);
  if (!bytes) return NULL;
  for (size_t i = 0; npat && i < nbytes; i++) bytes[i] = pat[(i + in->at) % npat];
  if (dt == CM_BOOL)
    for (size_t i = 0; i < nbytes; i++) bytes[i] &= 1;
  cm_stream s = fuzz_stream();
  int32_t rev[4];
  for (int i = 0; i < ndim; i++) rev[i] = base[ndim - 1 - i];
  /* a column-major array is the transpose of row-major data of the
   * reversed shape */
  cm_array *a = cm_array_from_data(bytes, ndim, layout == 1 ? rev : base, dt), *v = NULL;
  free(bytes);
  if (!a) return NULL;
  int32_t zero[4] = {0}, two[4] = {2, 2, 2, 2};
  if (layout == 1) v = cm_transpose(a, 0, NULL, s);
  else if (layout == 2) v = cm_slice(a, ndim, zero, ndim, base, ndim, two, s);
  else if (layout == 3) v = cm_broadcast_to(a, ndim, shape, s);
  else v = cm_retain(a);
  cm_release(a);
  return v;
}

static void fuzz_expect_same(const fuzz_format *f, const char *key, cm_array *want, cm_array *got) {
  cm_stream s = fuzz_stream();
  if (!got) fuzz_fail(f, "a saved array is missing", key);
  cm_array *w = cm_contiguous(want, false, s), *g = cm_contiguous(got, false, s);
  if (!w || !g || cm_eval1(w) || cm_eval1(g)) fuzz_fail(f, "evaluation failed", key);
  bool same = w->dtype == g->dtype && w->ndim == g->ndim &&
              !memcmp(w->shape, g->shape, sizeof(int32_t) * (size_t)w->ndim) &&
              (!cm_nbytes(w) || !memcmp(cm_data(w), cm_data(g), cm_nbytes(w)));
  if (!same) fuzz_fail(f, "loaded array differs from the saved one", key);
  cm_release(w), cm_release(g);
}

static void fuzz_round_trip(const uint8_t *data, size_t size, const fuzz_format *f) {
  fuzz_in in = {data, size, 0};
  cm_named_arrays saved = {0};
  int n = f->single ? 1 : 1 + fuzz_take(&in) % 3;
  bool flag = fuzz_take(&in) & 1;
  size_t head = 2 + 7 * (size_t)n; /* at most: the pattern starts after */
  const uint8_t *pat = size > head ? data + head : NULL;
  size_t npat = size > head ? size - head : 0;
  for (int i = 0; i < n; i++) {
    cm_array *a = fuzz_array(&in, f, pat, npat);
    char key[8];
    snprintf(key, sizeof key, "a%d", i);
    if (!a || cm_named_arrays_put(&saved, key, strlen(key), a, false, "fuzz"))
      fuzz_fail(f, "cannot make the array", key);
  }
  fuzz_sink file = {0};
  cm_writer w = {fuzz_sink_write, &file, 0, "fuzz sink"};
  if (f->save(&w, &saved, flag)) fuzz_fail(f, "save failed", NULL);
  cm_reader *r = cm_reader_memory(file.p, file.n, free, "fuzz round trip");
  cm_named_arrays loaded = {0};
  if (!r || f->load(r, fuzz_stream(), &loaded)) fuzz_fail(f, "a valid file does not load", NULL);
  if (loaded.n != saved.n) fuzz_fail(f, "member count differs", NULL);
  for (size_t i = 0; i < saved.n; i++) {
    cm_array *got = f->single ? loaded.arrs[0] : cm_named_arrays_get(&loaded, saved.keys[i]);
    fuzz_expect_same(f, saved.keys[i], saved.arrs[i], got);
  }
  cm_named_arrays_clear(&loaded);
  cm_named_arrays_clear(&saved);
  cm_reader_release(r);
  cm_error_clear();
}

#endif
