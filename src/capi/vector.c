/* mlx/c/vector.h: growable vectors of arrays, of vectors of arrays, of
 * ints and of strings.  Each is a value type as in mlx-c: _set copies the
 * contents, _get hands out a copy (arrays: a new reference), and the
 * handle of a new vector is always non-empty so _append can fill it.
 * ctx is a cell (handle.h) holding the vec; every function checks it. */
#include <stdlib.h>
#include <string.h>

#include "capi/capi.h"

typedef struct vec {
  void *items;
  size_t len, cap;
} vec;

/* Room for `need` elements of `size` bytes; -1 when out of memory. */
static int reserve(vec *v, size_t need, size_t size) {
  if (need <= v->cap) return 0;
  if (need < v->len || need > SIZE_MAX / 2 / size) return -1; /* the doubling would overflow */
  size_t ncap = v->cap ? v->cap : 4;
  while (ncap < need) ncap *= 2;
  void *ni = realloc(v->items, ncap * size);
  if (!ni) return -1;
  v->items = ni;
  v->cap = ncap;
  return 0;
}

static vec *vec_alloc(const char *fn) {
  vec *v = calloc(1, sizeof *v);
  if (!v) capi_errorf("[%s] Out of memory.", fn);
  return v;
}

/* Destroy a vec (NULL fine) after clearing its items with clear. */
static void vec_destroy(vec *v, void (*clear)(vec *)) {
  if (!v) return;
  if (clear) clear(v);
  free(v->items);
  free(v);
}

/* A new handle of type t holding an empty vec (NULL after reporting). */
static void *vec_cell(const char *fn, capi_htype t) {
  vec *v = vec_alloc(fn);
  if (!v) return NULL;
  void *c = capi_cell_new(t, v);
  if (!c) free(v);
  return c;
}

/* Free a handle of type t: reported (1) when freed or of another type. */
static int vec_free_h(const char *fn, void *ctx, capi_htype t, void (*clear)(vec *)) {
  void *o;
  if (capi_cell_free(fn, ctx, t, &o)) return 1;
  vec_destroy(o, clear);
  return 0;
}

/* Make *res (checked: empty or live) hold nv, which it takes: a live
 * handle keeps its cell, an empty one gets a new one.  0 or 1. */
static int vec_put(void **res, capi_htype t, vec *nv, void (*clear)(vec *)) {
  if (*res) {
    vec *old = capi_obj(*res);
    capi_obj_set(*res, nv);
    vec_destroy(old, clear);
    return 0;
  }
  void *c = capi_cell_new(t, nv);
  if (!c) {
    vec_destroy(nv, clear);
    return 1;
  }
  *res = c;
  return 0;
}

static int oom(const char *fn) { return capi_errorf("[%s] Out of memory.", fn); }

/* A (data, size) argument: a "negative" size or NULL data with entries
 * would make mlx-c read out of bounds; reported here.  0 or 1. */
static int data_arg(const char *fn, const void *data, size_t size) {
  if (capi_count_size(fn, "size", size)) return 1;
  return size && !data ? capi_errorf("[%s] data is NULL.", fn) : 0;
}

static int bad_index(const char *fn, size_t idx, size_t len) {
  return capi_errorf("[%s] Index %zu is out of range for a vector of size %zu.", fn, idx, len);
}

/* ======================= vector of arrays ======================= */

#define T_VA CAPI_H_VECTOR_ARRAY

static void va_clear(vec *v) {
  cm_array **a = v->items;
  for (size_t i = 0; i < v->len; i++) cm_release(a[i]);
  v->len = 0;
}

/* Append n arrays (retained); arrays must be non-empty. */
static int va_append(const char *fn, vec *v, cm_array *const *arrays, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!arrays[i]) return capi_errorf("[%s] expected a non-empty mlx_array", fn);
  if (reserve(v, v->len + n, sizeof(cm_array *))) return oom(fn);
  cm_array **a = v->items;
  for (size_t i = 0; i < n; i++) a[v->len++] = cm_retain(arrays[i]);
  return 0;
}

/* A new vec holding arrays[0..n) (retained); NULL after reporting. */
static vec *va_of(const char *fn, cm_array *const *arrays, size_t n) {
  vec *v = vec_alloc(fn);
  if (v && va_append(fn, v, arrays, n)) {
    vec_destroy(v, va_clear);
    v = NULL;
  }
  return v;
}

int capi_vector_arrays(const char *fn, mlx_vector_array v, cm_array *const **items, size_t *n) {
  *items = NULL;
  *n = 0;
  if (capi_check(fn, v.ctx, T_VA)) return 1;
  vec *x = capi_obj(v.ctx);
  if (x) {
    *items = (cm_array *const *)x->items;
    *n = x->len;
  }
  return 0;
}

static int va_set(const char *fn, mlx_vector_array *res, cm_array *const *arrays, size_t n) {
  if (capi_check(fn, res->ctx, T_VA)) return 1;
  vec *nv = va_of(fn, arrays, n);
  return nv ? vec_put(&res->ctx, T_VA, nv, va_clear) : 1;
}

int capi_vector_set_arrays(mlx_vector_array *res, cm_array *const *arrays, size_t n) {
  return va_set("mlx_vector_array_set", res, arrays, n);
}

mlx_vector_array mlx_vector_array_new(void) {
  return (mlx_vector_array){vec_cell("mlx_vector_array_new", T_VA)};
}

int mlx_vector_array_set(mlx_vector_array *vec_, const mlx_vector_array src) {
  const char *fn = "mlx_vector_array_set";
  if (capi_out(fn, vec_) || capi_check(fn, vec_->ctx, T_VA)) return 1;
  if (vec_->ctx == src.ctx) return 0;
  size_t n;
  cm_array *const *items;
  if (capi_vector_arrays(fn, src, &items, &n)) return 1;
  return va_set(fn, vec_, items, n);
}

int mlx_vector_array_free(mlx_vector_array vec_) {
  return vec_free_h("mlx_vector_array_free", vec_.ctx, T_VA, va_clear);
}

/* The nodes of data[0..size), each checked non-empty (borrowed, in a
 * malloc'd list the caller frees); NULL after reporting. */
static cm_array **va_nodes(const char *fn, const mlx_array *data, size_t size) {
  if (data_arg(fn, data, size)) return NULL;
  cm_array **l = malloc(sizeof *l * (size ? size : 1));
  if (!l) {
    oom(fn);
    return NULL;
  }
  for (size_t i = 0; i < size; i++) {
    if (capi_need(fn, data[i])) {
      free(l);
      return NULL;
    }
    l[i] = capi_arr(data[i]);
  }
  return l;
}

mlx_vector_array mlx_vector_array_new_data(const mlx_array *data, size_t size) {
  const char *fn = "mlx_vector_array_new_data";
  mlx_vector_array v = {NULL};
  cm_array **l = va_nodes(fn, data, size);
  if (l && va_set(fn, &v, l, size)) v.ctx = NULL;
  free(l);
  return v;
}

mlx_vector_array mlx_vector_array_new_value(const mlx_array val) {
  return mlx_vector_array_new_data(&val, 1);
}

int mlx_vector_array_set_data(mlx_vector_array *vec_, const mlx_array *data, size_t size) {
  const char *fn = "mlx_vector_array_set_data";
  if (capi_out(fn, vec_) || capi_check(fn, vec_->ctx, T_VA)) return 1;
  cm_array **l = va_nodes(fn, data, size);
  int rc = l ? va_set(fn, vec_, l, size) : 1;
  free(l);
  return rc;
}

int mlx_vector_array_set_value(mlx_vector_array *vec_, const mlx_array val) {
  if (capi_out("mlx_vector_array_set_value", vec_)) return 1;
  return mlx_vector_array_set_data(vec_, &val, 1);
}

int mlx_vector_array_append_data(mlx_vector_array vec_, const mlx_array *data, size_t size) {
  const char *fn = "mlx_vector_array_append_data";
  if (capi_need_h(fn, vec_.ctx, T_VA)) return 1;
  cm_array **l = va_nodes(fn, data, size);
  int rc = l ? va_append(fn, capi_obj(vec_.ctx), l, size) : 1;
  free(l);
  return rc;
}

int mlx_vector_array_append_value(mlx_vector_array vec_, const mlx_array val) {
  return mlx_vector_array_append_data(vec_, &val, 1);
}

/* The vec of a checked handle of type t (NULL: empty, or reported bad). */
static vec *vec_of(const char *fn, const void *ctx, capi_htype t) {
  return capi_check(fn, ctx, t) ? NULL : capi_obj(ctx);
}

size_t mlx_vector_array_size(mlx_vector_array vec_) {
  vec *v = vec_of("mlx_vector_array_size", vec_.ctx, T_VA);
  return v ? v->len : 0;
}

int mlx_vector_array_get(mlx_array *res, const mlx_vector_array vec_, size_t idx) {
  const char *fn = "mlx_vector_array_get";
  if (capi_out(fn, res) || capi_check(fn, vec_.ctx, T_VA)) return 1;
  vec *v = capi_obj(vec_.ctx);
  size_t n = v ? v->len : 0;
  if (idx >= n) return bad_index(fn, idx, n);
  return capi_set(res, cm_retain(((cm_array **)v->items)[idx]));
}

/* =================== vector of vectors of arrays =================== */
/* Items are owned vecs of arrays (each a private copy). */

#define T_VV CAPI_H_VECTOR_VECTOR_ARRAY

static void vv_clear(vec *v) {
  vec **a = v->items;
  for (size_t i = 0; i < v->len; i++) vec_destroy(a[i], va_clear);
  v->len = 0;
}

/* Append copies of the vectors of arrays data[0..size) (each checked). */
static int vv_append(const char *fn, vec *v, const mlx_vector_array *data, size_t size) {
  if (data_arg(fn, data, size)) return 1;
  for (size_t i = 0; i < size; i++)
    if (capi_check(fn, data[i].ctx, T_VA)) return 1;
  if (reserve(v, v->len + size, sizeof(vec *))) return oom(fn);
  for (size_t i = 0; i < size; i++) {
    vec *s = capi_obj(data[i].ctx);
    vec *c = va_of(fn, s ? s->items : NULL, s ? s->len : 0);
    if (!c) return 1;
    ((vec **)v->items)[v->len++] = c;
  }
  return 0;
}

mlx_vector_vector_array mlx_vector_vector_array_new(void) {
  return (mlx_vector_vector_array){vec_cell("mlx_vector_vector_array_new", T_VV)};
}

int mlx_vector_vector_array_free(mlx_vector_vector_array vec_) {
  return vec_free_h("mlx_vector_vector_array_free", vec_.ctx, T_VV, vv_clear);
}

int mlx_vector_vector_array_append_data(mlx_vector_vector_array vec_, const mlx_vector_array *data,
                                        size_t size) {
  const char *fn = "mlx_vector_vector_array_append_data";
  if (capi_need_h(fn, vec_.ctx, T_VV)) return 1;
  return vv_append(fn, capi_obj(vec_.ctx), data, size);
}

int mlx_vector_vector_array_append_value(mlx_vector_vector_array vec_, const mlx_vector_array val) {
  return mlx_vector_vector_array_append_data(vec_, &val, 1);
}

/* *res (checked) becomes a vector of copies of data[0..size). */
static int vv_set(const char *fn, void **res, const mlx_vector_array *data, size_t size) {
  vec *nv = vec_alloc(fn);
  if (!nv) return 1;
  if (vv_append(fn, nv, data, size)) {
    vec_destroy(nv, vv_clear);
    return 1;
  }
  return vec_put(res, T_VV, nv, vv_clear);
}

mlx_vector_vector_array mlx_vector_vector_array_new_data(const mlx_vector_array *data,
                                                         size_t size) {
  mlx_vector_vector_array v = {NULL};
  if (vv_set("mlx_vector_vector_array_new_data", &v.ctx, data, size)) v.ctx = NULL;
  return v;
}

mlx_vector_vector_array mlx_vector_vector_array_new_value(const mlx_vector_array val) {
  return mlx_vector_vector_array_new_data(&val, 1);
}

int mlx_vector_vector_array_set_data(mlx_vector_vector_array *vec_, const mlx_vector_array *data,
                                     size_t size) {
  const char *fn = "mlx_vector_vector_array_set_data";
  if (capi_out(fn, vec_) || capi_check(fn, vec_->ctx, T_VV)) return 1;
  return vv_set(fn, &vec_->ctx, data, size);
}

int mlx_vector_vector_array_set_value(mlx_vector_vector_array *vec_, const mlx_vector_array val) {
  if (capi_out("mlx_vector_vector_array_set_value", vec_)) return 1;
  return mlx_vector_vector_array_set_data(vec_, &val, 1);
}

int mlx_vector_vector_array_set(mlx_vector_vector_array *vec_, const mlx_vector_vector_array src) {
  const char *fn = "mlx_vector_vector_array_set";
  if (capi_out(fn, vec_) || capi_check(fn, vec_->ctx, T_VV) || capi_check(fn, src.ctx, T_VV))
    return 1;
  if (vec_->ctx == src.ctx) return 0;
  vec *s = capi_obj(src.ctx);
  vec *nv = vec_alloc(fn);
  if (!nv) return 1;
  for (size_t i = 0; s && i < s->len; i++) {
    vec *item = ((vec **)s->items)[i];
    vec *c = va_of(fn, item->items, item->len);
    if (!c || reserve(nv, nv->len + 1, sizeof(vec *))) {
      if (c) oom(fn);
      vec_destroy(c, va_clear);
      vec_destroy(nv, vv_clear);
      return 1;
    }
    ((vec **)nv->items)[nv->len++] = c;
  }
  return vec_put(&vec_->ctx, T_VV, nv, vv_clear);
}

size_t mlx_vector_vector_array_size(mlx_vector_vector_array vec_) {
  vec *v = vec_of("mlx_vector_vector_array_size", vec_.ctx, T_VV);
  return v ? v->len : 0;
}

int mlx_vector_vector_array_get(mlx_vector_array *res, const mlx_vector_vector_array vec_,
                                size_t idx) {
  const char *fn = "mlx_vector_vector_array_get";
  if (capi_out(fn, res) || capi_check(fn, vec_.ctx, T_VV) || capi_check(fn, res->ctx, T_VA))
    return 1;
  vec *v = capi_obj(vec_.ctx);
  size_t n = v ? v->len : 0;
  if (idx >= n) return bad_index(fn, idx, n);
  vec *item = ((vec **)v->items)[idx];
  return va_set(fn, res, item->items, item->len);
}

/* ========================= vector of ints ========================= */

#define T_VI CAPI_H_VECTOR_INT

static int vi_append(const char *fn, vec *v, const int *data, size_t size) {
  if (data_arg(fn, data, size)) return 1;
  if (reserve(v, v->len + size, sizeof(int))) return oom(fn);
  if (size) memcpy((int *)v->items + v->len, data, size * sizeof(int));
  v->len += size;
  return 0;
}

/* *res (checked) becomes a vector of data[0..size). */
static int vi_set(const char *fn, void **res, const int *data, size_t size) {
  vec *nv = vec_alloc(fn);
  if (!nv) return 1;
  if (vi_append(fn, nv, data, size)) {
    vec_destroy(nv, NULL);
    return 1;
  }
  return vec_put(res, T_VI, nv, NULL);
}

mlx_vector_int mlx_vector_int_new(void) {
  return (mlx_vector_int){vec_cell("mlx_vector_int_new", T_VI)};
}

int mlx_vector_int_free(mlx_vector_int vec_) {
  return vec_free_h("mlx_vector_int_free", vec_.ctx, T_VI, NULL);
}

int mlx_vector_int_append_data(mlx_vector_int vec_, int *data, size_t size) {
  const char *fn = "mlx_vector_int_append_data";
  if (capi_need_h(fn, vec_.ctx, T_VI)) return 1;
  return vi_append(fn, capi_obj(vec_.ctx), data, size);
}

int mlx_vector_int_append_value(mlx_vector_int vec_, int val) {
  return mlx_vector_int_append_data(vec_, &val, 1);
}

mlx_vector_int mlx_vector_int_new_data(int *data, size_t size) {
  mlx_vector_int v = {NULL};
  if (vi_set("mlx_vector_int_new_data", &v.ctx, data, size)) v.ctx = NULL;
  return v;
}

mlx_vector_int mlx_vector_int_new_value(int val) { return mlx_vector_int_new_data(&val, 1); }

int mlx_vector_int_set_data(mlx_vector_int *vec_, int *data, size_t size) {
  const char *fn = "mlx_vector_int_set_data";
  if (capi_out(fn, vec_) || capi_check(fn, vec_->ctx, T_VI)) return 1;
  return vi_set(fn, &vec_->ctx, data, size);
}

int mlx_vector_int_set_value(mlx_vector_int *vec_, int val) {
  if (capi_out("mlx_vector_int_set_value", vec_)) return 1;
  return mlx_vector_int_set_data(vec_, &val, 1);
}

int mlx_vector_int_set(mlx_vector_int *vec_, const mlx_vector_int src) {
  const char *fn = "mlx_vector_int_set";
  if (capi_out(fn, vec_) || capi_check(fn, vec_->ctx, T_VI) || capi_check(fn, src.ctx, T_VI))
    return 1;
  if (vec_->ctx == src.ctx) return 0;
  vec *s = capi_obj(src.ctx);
  return vi_set(fn, &vec_->ctx, s ? s->items : NULL, s ? s->len : 0);
}

size_t mlx_vector_int_size(mlx_vector_int vec_) {
  vec *v = vec_of("mlx_vector_int_size", vec_.ctx, T_VI);
  return v ? v->len : 0;
}

int mlx_vector_int_get(int *res, const mlx_vector_int vec_, size_t idx) {
  const char *fn = "mlx_vector_int_get";
  if (capi_out(fn, res) || capi_check(fn, vec_.ctx, T_VI)) return 1;
  vec *v = capi_obj(vec_.ctx);
  size_t n = v ? v->len : 0;
  if (idx >= n) return bad_index(fn, idx, n);
  *res = ((int *)v->items)[idx];
  return 0;
}

/* ======================== vector of strings ======================== */

#define T_VS CAPI_H_VECTOR_STRING

static void vs_clear(vec *v) {
  char **s = v->items;
  for (size_t i = 0; i < v->len; i++) free(s[i]);
  v->len = 0;
}

static int vs_append(const char *fn, vec *v, const char **data, size_t size) {
  if (data_arg(fn, data, size)) return 1;
  if (reserve(v, v->len + size, sizeof(char *))) return oom(fn);
  for (size_t i = 0; i < size; i++) {
    char *s = strdup(data[i] ? data[i] : "");
    if (!s) return oom(fn);
    ((char **)v->items)[v->len++] = s;
  }
  return 0;
}

/* *res (checked) becomes a vector of copies of data[0..size). */
static int vs_set(const char *fn, void **res, const char **data, size_t size) {
  vec *nv = vec_alloc(fn);
  if (!nv) return 1;
  if (vs_append(fn, nv, data, size)) {
    vec_destroy(nv, vs_clear);
    return 1;
  }
  return vec_put(res, T_VS, nv, vs_clear);
}

mlx_vector_string mlx_vector_string_new(void) {
  return (mlx_vector_string){vec_cell("mlx_vector_string_new", T_VS)};
}

int mlx_vector_string_free(mlx_vector_string vec_) {
  return vec_free_h("mlx_vector_string_free", vec_.ctx, T_VS, vs_clear);
}

int mlx_vector_string_append_data(mlx_vector_string vec_, const char **data, size_t size) {
  const char *fn = "mlx_vector_string_append_data";
  if (capi_need_h(fn, vec_.ctx, T_VS)) return 1;
  return vs_append(fn, capi_obj(vec_.ctx), data, size);
}

int mlx_vector_string_append_value(mlx_vector_string vec_, const char *val) {
  return mlx_vector_string_append_data(vec_, &val, 1);
}

mlx_vector_string mlx_vector_string_new_data(const char **data, size_t size) {
  mlx_vector_string v = {NULL};
  if (vs_set("mlx_vector_string_new_data", &v.ctx, data, size)) v.ctx = NULL;
  return v;
}

mlx_vector_string mlx_vector_string_new_value(const char *val) {
  return mlx_vector_string_new_data(&val, 1);
}

int mlx_vector_string_set_data(mlx_vector_string *vec_, const char **data, size_t size) {
  const char *fn = "mlx_vector_string_set_data";
  if (capi_out(fn, vec_) || capi_check(fn, vec_->ctx, T_VS)) return 1;
  return vs_set(fn, &vec_->ctx, data, size);
}

int mlx_vector_string_set_value(mlx_vector_string *vec_, const char *val) {
  if (capi_out("mlx_vector_string_set_value", vec_)) return 1;
  return mlx_vector_string_set_data(vec_, &val, 1);
}

int mlx_vector_string_set(mlx_vector_string *vec_, const mlx_vector_string src) {
  const char *fn = "mlx_vector_string_set";
  if (capi_out(fn, vec_) || capi_check(fn, vec_->ctx, T_VS) || capi_check(fn, src.ctx, T_VS))
    return 1;
  if (vec_->ctx == src.ctx) return 0;
  vec *s = capi_obj(src.ctx);
  return vs_set(fn, &vec_->ctx, s ? (const char **)s->items : NULL, s ? s->len : 0);
}

size_t mlx_vector_string_size(mlx_vector_string vec_) {
  vec *v = vec_of("mlx_vector_string_size", vec_.ctx, T_VS);
  return v ? v->len : 0;
}

/* The string stays owned by the vector (valid until it changes). */
int mlx_vector_string_get(char **res, const mlx_vector_string vec_, size_t idx) {
  const char *fn = "mlx_vector_string_get";
  if (capi_out(fn, res) || capi_check(fn, vec_.ctx, T_VS)) return 1;
  vec *v = capi_obj(vec_.ctx);
  size_t n = v ? v->len : 0;
  if (idx >= n) return bad_index(fn, idx, n);
  *res = ((char **)v->items)[idx];
  return 0;
}
