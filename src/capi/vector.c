/* mlx/c/vector.h: growable vectors of arrays, of vectors of arrays, of
 * ints and of strings.  Each is a value type as in mlx-c: _set copies the
 * contents, _get hands out a copy (arrays: a new reference), and the
 * handle of a new vector is always non-empty so _append can fill it. */
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

#define VA(v) ((cm_array **)((vec *)(v).ctx)->items)

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

cm_array *const *capi_vector_items(mlx_vector_array v, size_t *n) {
  vec *x = v.ctx;
  *n = x ? x->len : 0;
  return x ? (cm_array *const *)x->items : NULL;
}

/* Make *res a vector holding exactly arrays[0..n). */
int capi_vector_set_arrays(mlx_vector_array *res, cm_array *const *arrays, size_t n) {
  const char *fn = "mlx_vector_array_set";
  if (!res->ctx && !(res->ctx = vec_alloc(fn))) return 1;
  vec tmp = {0};
  if (va_append(fn, &tmp, arrays, n)) {
    va_clear(&tmp);
    free(tmp.items);
    return 1;
  }
  vec *v = res->ctx;
  va_clear(v);
  free(v->items);
  *v = tmp;
  return 0;
}

mlx_vector_array mlx_vector_array_new(void) {
  return (mlx_vector_array){vec_alloc("mlx_vector_array_new")};
}

int mlx_vector_array_set(mlx_vector_array *vec_, const mlx_vector_array src) {
  if (capi_out("mlx_vector_array_set", vec_)) return 1;
  if (vec_->ctx == src.ctx) return 0;
  size_t n;
  cm_array *const *items = capi_vector_items(src, &n);
  return capi_vector_set_arrays(vec_, items, n);
}

int mlx_vector_array_free(mlx_vector_array vec_) {
  vec *v = vec_.ctx;
  if (!v) return 0;
  va_clear(v);
  free(v->items);
  free(v);
  return 0;
}

mlx_vector_array mlx_vector_array_new_data(const mlx_array *data, size_t size) {
  mlx_vector_array v = mlx_vector_array_new();
  if (v.ctx && mlx_vector_array_append_data(v, data, size)) {
    mlx_vector_array_free(v);
    v.ctx = NULL;
  }
  return v;
}

mlx_vector_array mlx_vector_array_new_value(const mlx_array val) {
  return mlx_vector_array_new_data(&val, 1);
}

int mlx_vector_array_set_data(mlx_vector_array *vec_, const mlx_array *data, size_t size) {
  if (capi_out("mlx_vector_array_set_data", vec_)) return 1;
  mlx_vector_array n = mlx_vector_array_new_data(data, size);
  if (!n.ctx) return 1;
  mlx_vector_array_free(*vec_);
  *vec_ = n;
  return 0;
}

int mlx_vector_array_set_value(mlx_vector_array *vec_, const mlx_array val) {
  if (capi_out("mlx_vector_array_set_value", vec_)) return 1;
  return mlx_vector_array_set_data(vec_, &val, 1);
}

int mlx_vector_array_append_data(mlx_vector_array vec_, const mlx_array *data, size_t size) {
  const char *fn = "mlx_vector_array_append_data";
  if (!vec_.ctx) return capi_errorf("[%s] expected a non-empty mlx_vector_array", fn);
  if (data_arg(fn, data, size)) return 1;
  for (size_t i = 0; i < size; i++) {
    if (capi_need(fn, data[i])) return 1;
    cm_array *a = capi_arr(data[i]);
    if (va_append(fn, vec_.ctx, &a, 1)) return 1;
  }
  return 0;
}

int mlx_vector_array_append_value(mlx_vector_array vec_, const mlx_array val) {
  return mlx_vector_array_append_data(vec_, &val, 1);
}

size_t mlx_vector_array_size(mlx_vector_array vec_) {
  return vec_.ctx ? ((vec *)vec_.ctx)->len : 0;
}

int mlx_vector_array_get(mlx_array *res, const mlx_vector_array vec_, size_t idx) {
  if (capi_out("mlx_vector_array_get", res)) return 1;
  size_t n = mlx_vector_array_size(vec_);
  if (idx >= n) return bad_index("mlx_vector_array_get", idx, n);
  return capi_set(res, cm_retain(VA(vec_)[idx]));
}

/* =================== vector of vectors of arrays =================== */
/* Items are owned mlx_vector_array handles (each a private copy). */

static void vv_clear(vec *v) {
  mlx_vector_array *a = v->items;
  for (size_t i = 0; i < v->len; i++) mlx_vector_array_free(a[i]);
  v->len = 0;
}

mlx_vector_vector_array mlx_vector_vector_array_new(void) {
  return (mlx_vector_vector_array){vec_alloc("mlx_vector_vector_array_new")};
}

int mlx_vector_vector_array_free(mlx_vector_vector_array vec_) {
  vec *v = vec_.ctx;
  if (!v) return 0;
  vv_clear(v);
  free(v->items);
  free(v);
  return 0;
}

int mlx_vector_vector_array_append_data(mlx_vector_vector_array vec_, const mlx_vector_array *data,
                                        size_t size) {
  const char *fn = "mlx_vector_vector_array_append_data";
  vec *v = vec_.ctx;
  if (!v) return capi_errorf("[%s] expected a non-empty mlx_vector_vector_array", fn);
  if (data_arg(fn, data, size)) return 1;
  if (reserve(v, v->len + size, sizeof(mlx_vector_array))) return oom(fn);
  for (size_t i = 0; i < size; i++) {
    mlx_vector_array copy = mlx_vector_array_new();
    if (!copy.ctx || mlx_vector_array_set(&copy, data[i])) {
      mlx_vector_array_free(copy);
      return 1;
    }
    ((mlx_vector_array *)v->items)[v->len++] = copy;
  }
  return 0;
}

int mlx_vector_vector_array_append_value(mlx_vector_vector_array vec_, const mlx_vector_array val) {
  return mlx_vector_vector_array_append_data(vec_, &val, 1);
}

mlx_vector_vector_array mlx_vector_vector_array_new_data(const mlx_vector_array *data,
                                                         size_t size) {
  mlx_vector_vector_array v = mlx_vector_vector_array_new();
  if (v.ctx && mlx_vector_vector_array_append_data(v, data, size)) {
    mlx_vector_vector_array_free(v);
    v.ctx = NULL;
  }
  return v;
}

mlx_vector_vector_array mlx_vector_vector_array_new_value(const mlx_vector_array val) {
  return mlx_vector_vector_array_new_data(&val, 1);
}

int mlx_vector_vector_array_set_data(mlx_vector_vector_array *vec_, const mlx_vector_array *data,
                                     size_t size) {
  if (capi_out("mlx_vector_vector_array_set_data", vec_)) return 1;
  mlx_vector_vector_array n = mlx_vector_vector_array_new_data(data, size);
  if (!n.ctx) return 1;
  mlx_vector_vector_array_free(*vec_);
  *vec_ = n;
  return 0;
}

int mlx_vector_vector_array_set_value(mlx_vector_vector_array *vec_, const mlx_vector_array val) {
  if (capi_out("mlx_vector_vector_array_set_value", vec_)) return 1;
  return mlx_vector_vector_array_set_data(vec_, &val, 1);
}

int mlx_vector_vector_array_set(mlx_vector_vector_array *vec_, const mlx_vector_vector_array src) {
  if (capi_out("mlx_vector_vector_array_set", vec_)) return 1;
  if (vec_->ctx == src.ctx) return 0;
  vec *s = src.ctx;
  return mlx_vector_vector_array_set_data(vec_, s ? s->items : NULL, s ? s->len : 0);
}

size_t mlx_vector_vector_array_size(mlx_vector_vector_array vec_) {
  return vec_.ctx ? ((vec *)vec_.ctx)->len : 0;
}

int mlx_vector_vector_array_get(mlx_vector_array *res, const mlx_vector_vector_array vec_,
                                size_t idx) {
  if (capi_out("mlx_vector_vector_array_get", res)) return 1;
  size_t n = mlx_vector_vector_array_size(vec_);
  if (idx >= n) return bad_index("mlx_vector_vector_array_get", idx, n);
  return mlx_vector_array_set(res, ((mlx_vector_array *)((vec *)vec_.ctx)->items)[idx]);
}

/* ========================= vector of ints ========================= */

mlx_vector_int mlx_vector_int_new(void) {
  return (mlx_vector_int){vec_alloc("mlx_vector_int_new")};
}

int mlx_vector_int_free(mlx_vector_int vec_) {
  vec *v = vec_.ctx;
  if (v) free(v->items);
  free(v);
  return 0;
}

int mlx_vector_int_append_data(mlx_vector_int vec_, int *data, size_t size) {
  const char *fn = "mlx_vector_int_append_data";
  vec *v = vec_.ctx;
  if (!v) return capi_errorf("[%s] expected a non-empty mlx_vector_int", fn);
  if (data_arg(fn, data, size)) return 1;
  if (reserve(v, v->len + size, sizeof(int))) return oom(fn);
  if (size) memcpy((int *)v->items + v->len, data, size * sizeof(int));
  v->len += size;
  return 0;
}

int mlx_vector_int_append_value(mlx_vector_int vec_, int val) {
  return mlx_vector_int_append_data(vec_, &val, 1);
}

mlx_vector_int mlx_vector_int_new_data(int *data, size_t size) {
  mlx_vector_int v = mlx_vector_int_new();
  if (v.ctx && mlx_vector_int_append_data(v, data, size)) {
    mlx_vector_int_free(v);
    v.ctx = NULL;
  }
  return v;
}

mlx_vector_int mlx_vector_int_new_value(int val) { return mlx_vector_int_new_data(&val, 1); }

int mlx_vector_int_set_data(mlx_vector_int *vec_, int *data, size_t size) {
  if (capi_out("mlx_vector_int_set_data", vec_)) return 1;
  mlx_vector_int n = mlx_vector_int_new_data(data, size);
  if (!n.ctx) return 1;
  mlx_vector_int_free(*vec_);
  *vec_ = n;
  return 0;
}

int mlx_vector_int_set_value(mlx_vector_int *vec_, int val) {
  if (capi_out("mlx_vector_int_set_value", vec_)) return 1;
  return mlx_vector_int_set_data(vec_, &val, 1);
}

int mlx_vector_int_set(mlx_vector_int *vec_, const mlx_vector_int src) {
  if (capi_out("mlx_vector_int_set", vec_)) return 1;
  if (vec_->ctx == src.ctx) return 0;
  vec *s = src.ctx;
  return mlx_vector_int_set_data(vec_, s ? s->items : NULL, s ? s->len : 0);
}

size_t mlx_vector_int_size(mlx_vector_int vec_) { return vec_.ctx ? ((vec *)vec_.ctx)->len : 0; }

int mlx_vector_int_get(int *res, const mlx_vector_int vec_, size_t idx) {
  if (capi_out("mlx_vector_int_get", res)) return 1;
  size_t n = mlx_vector_int_size(vec_);
  if (idx >= n) return bad_index("mlx_vector_int_get", idx, n);
  *res = ((int *)((vec *)vec_.ctx)->items)[idx];
  return 0;
}

/* ======================== vector of strings ======================== */

static void vs_clear(vec *v) {
  char **s = v->items;
  for (size_t i = 0; i < v->len; i++) free(s[i]);
  v->len = 0;
}

mlx_vector_string mlx_vector_string_new(void) {
  return (mlx_vector_string){vec_alloc("mlx_vector_string_new")};
}

int mlx_vector_string_free(mlx_vector_string vec_) {
  vec *v = vec_.ctx;
  if (!v) return 0;
  vs_clear(v);
  free(v->items);
  free(v);
  return 0;
}

int mlx_vector_string_append_data(mlx_vector_string vec_, const char **data, size_t size) {
  const char *fn = "mlx_vector_string_append_data";
  vec *v = vec_.ctx;
  if (!v) return capi_errorf("[%s] expected a non-empty mlx_vector_string", fn);
  if (data_arg(fn, data, size)) return 1;
  if (reserve(v, v->len + size, sizeof(char *))) return oom(fn);
  for (size_t i = 0; i < size; i++) {
    char *s = strdup(data[i] ? data[i] : "");
    if (!s) return oom(fn);
    ((char **)v->items)[v->len++] = s;
  }
  return 0;
}

int mlx_vector_string_append_value(mlx_vector_string vec_, const char *val) {
  return mlx_vector_string_append_data(vec_, &val, 1);
}

mlx_vector_string mlx_vector_string_new_data(const char **data, size_t size) {
  mlx_vector_string v = mlx_vector_string_new();
  if (v.ctx && mlx_vector_string_append_data(v, data, size)) {
    mlx_vector_string_free(v);
    v.ctx = NULL;
  }
  return v;
}

mlx_vector_string mlx_vector_string_new_value(const char *val) {
  return mlx_vector_string_new_data(&val, 1);
}

int mlx_vector_string_set_data(mlx_vector_string *vec_, const char **data, size_t size) {
  if (capi_out("mlx_vector_string_set_data", vec_)) return 1;
  mlx_vector_string n = mlx_vector_string_new_data(data, size);
  if (!n.ctx) return 1;
  mlx_vector_string_free(*vec_);
  *vec_ = n;
  return 0;
}

int mlx_vector_string_set_value(mlx_vector_string *vec_, const char *val) {
  if (capi_out("mlx_vector_string_set_value", vec_)) return 1;
  return mlx_vector_string_set_data(vec_, &val, 1);
}

int mlx_vector_string_set(mlx_vector_string *vec_, const mlx_vector_string src) {
  if (capi_out("mlx_vector_string_set", vec_)) return 1;
  if (vec_->ctx == src.ctx) return 0;
  vec *s = src.ctx;
  return mlx_vector_string_set_data(vec_, s ? (const char **)s->items : NULL, s ? s->len : 0);
}

size_t mlx_vector_string_size(mlx_vector_string vec_) {
  return vec_.ctx ? ((vec *)vec_.ctx)->len : 0;
}

/* The string stays owned by the vector (valid until it changes). */
int mlx_vector_string_get(char **res, const mlx_vector_string vec_, size_t idx) {
  if (capi_out("mlx_vector_string_get", res)) return 1;
  size_t n = mlx_vector_string_size(vec_);
  if (idx >= n) return bad_index("mlx_vector_string_get", idx, n);
  *res = ((char **)((vec *)vec_.ctx)->items)[idx];
  return 0;
}
