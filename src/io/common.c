/* Containers and checks shared by the format parsers (io.h). */
#include <stdlib.h>
#include <string.h>

#include "io/io.h"
#include "ops/common.h"
#include "primitives/load.h"
#include "transforms/eval.h"

static char *dup_n(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (!d) return NULL;
  memcpy(d, s, n);
  d[n] = 0;
  return d;
}

static int grow(void **a, size_t *cap, size_t n, size_t item, void **b, size_t bitem) {
  if (n < *cap) return 0;
  size_t nc = *cap ? *cap * 2 : 8;
  void *na = realloc(*a, nc * item);
  if (!na) return -1;
  *a = na;
  void *nb = realloc(*b, nc * bitem);
  if (!nb) return -1;
  *b = nb;
  *cap = nc;
  return 0;
}

static ptrdiff_t find_key(char *const *keys, size_t n, const char *key, size_t len) {
  for (size_t i = 0; i < n; i++)
    if (strlen(keys[i]) == len && memcmp(keys[i], key, len) == 0) return (ptrdiff_t)i;
  return -1;
}

int cm_named_arrays_put(cm_named_arrays *m, const char *key, size_t keylen, cm_array *a,
                        bool replace, const char *fn) {
  ptrdiff_t i = find_key(m->keys, m->n, key, keylen);
  if (i >= 0) {
    if (!replace) {
      cm_release(a);
      return cm_error(CM_ERR_RUNTIME, "[%s] Duplicate parameter name %.*s.", fn, (int)keylen, key);
    }
    cm_release(m->arrs[i]);
    m->arrs[i] = a;
    return 0;
  }
  char *k = dup_n(key, keylen);
  if (!k || grow((void **)&m->keys, &m->cap, m->n, sizeof(char *), (void **)&m->arrs,
                 sizeof(cm_array *))) {
    free(k);
    cm_release(a);
    return cm_error(CM_ERR_MEMORY, "[%s] Out of memory.", fn);
  }
  m->keys[m->n] = k;
  m->arrs[m->n++] = a;
  return 0;
}

cm_array *cm_named_arrays_get(const cm_named_arrays *m, const char *key) {
  ptrdiff_t i = find_key(m->keys, m->n, key, strlen(key));
  return i < 0 ? NULL : m->arrs[i];
}

void cm_named_arrays_clear(cm_named_arrays *m) {
  for (size_t i = 0; i < m->n; i++) {
    free(m->keys[i]);
    cm_release(m->arrs[i]);
  }
  free(m->keys);
  free(m->arrs);
  *m = (cm_named_arrays){0};
}

static void meta_value_free(cm_meta_value *v) {
  free(v->str);
  if (v->arr) cm_release(v->arr);
  for (size_t i = 0; i < v->nstrs; i++) free(v->strs[i]);
  free(v->strs);
  free(v->lens);
  *v = (cm_meta_value){0};
}

/* The slot for key (existing, emptied; or new): NULL on out of memory. */
static cm_meta_value *meta_slot(cm_metadata *m, const char *key) {
  ptrdiff_t i = find_key(m->keys, m->n, key, strlen(key));
  if (i >= 0) {
    meta_value_free(&m->vals[i]);
    return &m->vals[i];
  }
  char *k = dup_n(key, strlen(key));
  if (!k || grow((void **)&m->keys, &m->cap, m->n, sizeof(char *), (void **)&m->vals,
                 sizeof(cm_meta_value))) {
    free(k);
    return NULL;
  }
  m->keys[m->n] = k;
  m->vals[m->n] = (cm_meta_value){0};
  return &m->vals[m->n++];
}

int cm_metadata_set_string(cm_metadata *m, const char *key, const char *s, size_t len) {
  char *c = dup_n(s, len);
  cm_meta_value *v = c ? meta_slot(m, key) : NULL;
  if (!v) {
    free(c);
    return cm_error(CM_ERR_MEMORY, "[metadata] Out of memory.");
  }
  *v = (cm_meta_value){.kind = CM_META_STRING, .str = c, .len = len};
  return 0;
}

int cm_metadata_set_array(cm_metadata *m, const char *key, cm_array *a) {
  cm_meta_value *v = meta_slot(m, key);
  if (!v) return cm_error(CM_ERR_MEMORY, "[metadata] Out of memory.");
  *v = (cm_meta_value){.kind = CM_META_ARRAY, .arr = cm_retain(a)};
  return 0;
}

int cm_metadata_set_strings(cm_metadata *m, const char *key, const char *const *s,
                            const size_t *lens, size_t n) {
  cm_meta_value nv = {.kind = CM_META_STRINGS};
  nv.strs = calloc(n ? n : 1, sizeof(char *));
  nv.lens = calloc(n ? n : 1, sizeof(size_t));
  bool ok = nv.strs && nv.lens;
  for (size_t i = 0; ok && i < n; i++) {
    size_t l = lens ? lens[i] : strlen(s[i]);
    ok = (nv.strs[i] = dup_n(s[i], l)) != NULL;
    nv.lens[i] = l;
    nv.nstrs = i + 1;
  }
  cm_meta_value *v = ok ? meta_slot(m, key) : NULL;
  if (!v) {
    meta_value_free(&nv);
    return cm_error(CM_ERR_MEMORY, "[metadata] Out of memory.");
  }
  nv.nstrs = n;
  *v = nv;
  return 0;
}

const cm_meta_value *cm_metadata_get(const cm_metadata *m, const char *key) {
  ptrdiff_t i = find_key(m->keys, m->n, key, strlen(key));
  return i < 0 ? NULL : &m->vals[i];
}

void cm_metadata_clear(cm_metadata *m) {
  for (size_t i = 0; i < m->n; i++) {
    free(m->keys[i]);
    meta_value_free(&m->vals[i]);
  }
  free(m->keys);
  free(m->vals);
  *m = (cm_metadata){0};
}

/* ---- checks ---- */

int cm_io_read_checked(cm_reader *r, void *dst, size_t n, uint64_t off, uint64_t size,
                       const char *fn) {
  if (off > size || n > size - off)
    return cm_error(CM_ERR_RUNTIME,
                    "[%s] Unexpected end of %s: %zu bytes needed at offset %llu but it holds "
                    "%llu bytes. Perhaps an incomplete download or corrupt file?",
                    fn, r->label, n, (unsigned long long)off, (unsigned long long)size);
  return cm_reader_read(r, dst, n, off);
}

int cm_io_check_shape(const char *fn, int ndim, const int64_t *dims, size_t itemsize,
                      uint64_t *nbytes) {
  if (ndim < 0 || ndim > CM_MAX_DIMS)
    return cm_error(CM_ERR_RUNTIME, "[%s] Invalid number of dimensions %d (at most %d).", fn, ndim,
                    CM_MAX_DIMS);
  uint64_t total = itemsize;
  bool zero = false;
  for (int i = 0; i < ndim; i++) {
    if (dims[i] < 0 || dims[i] > INT32_MAX)
      return cm_error(CM_ERR_RUNTIME, "[%s] Shape dimension %lld is outside the supported range.",
                      fn, (long long)dims[i]);
    if (dims[i] == 0) zero = true;
  }
  for (int i = 0; i < ndim && !zero; i++) {
    if (dims[i] && total > (uint64_t)INT64_MAX / (uint64_t)dims[i])
      return cm_error(CM_ERR_RUNTIME, "[%s] The array's size overflows.", fn);
    total *= (uint64_t)dims[i];
  }
  *nbytes = zero ? 0 : total;
  return 0;
}

cm_array *cm_io_load_node(cm_reader *r, uint64_t offset, bool swap, cm_dtype dtype, int ndim,
                          const int32_t *shape, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  cm_load_params p = {cm_reader_retain(r), offset, swap};
  cm_array *a = cm_op_node(dtype, ndim, shape, &cm_prim_load, &p, sizeof p, NULL, 0, s);
  if (!a) cm_reader_release(r);
  return a;
}

cm_array *cm_io_row_contiguous(cm_array *a, const char *fn) {
  (void)fn;
  if (cm_eval1(a)) return NULL;
  cm_array *c = cm_contiguous(a, false, CM_STREAM_DEFAULT);
  if (c && cm_eval1(c)) {
    cm_release(c);
    return NULL;
  }
  return c;
}
