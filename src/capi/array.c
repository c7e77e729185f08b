/* mlx/c/array.h: array handles over cm_array.  An mlx_array is a cell
 * (handle.h) owning one reference to its node; NULL ctx is the empty
 * array.  Functions that
 * return a result through a pointer replace what it held (mlx-c's
 * mlx_array_set semantics), so `mlx_add(&x, x, y, s)` is fine. */
#include "capi/capi.h"
#include "core/format.h"
#include "transforms/eval.h"

_Static_assert(sizeof(size_t) == sizeof(int64_t), "strides are returned as size_t");
_Static_assert(sizeof(int) == sizeof(int32_t), "shapes are returned as int");
_Static_assert(sizeof(mlx_complex64_t) == sizeof(cm_complex64), "complex64 layout");

/* A result handle is reused in place when it holds an array: an op in a
 * loop (`mlx_add(&x, x, y, s)`) then costs no cell at all. */
__attribute__((noinline)) static int set_slow(mlx_array *res, cm_array *r) {
  if (!r) return capi_fail();
  if (!res->ctx) {
    mlx_array w = capi_wrap(r);
    if (!w.ctx) return 1;
    *res = w;
    return 0;
  }
  if (!capi_live(res->ctx, CAPI_H_ARRAY) &&
      capi_bad_handle("mlx_array result", res->ctx, CAPI_H_ARRAY)) {
    cm_release(r);
    return 1;
  }
  cm_array *old = capi_arr(*res);
#ifdef CMLX_MEASURE_NO_CELLS
  res->ctx = r; /* the handle is the node */
#else
  capi_obj_set(res->ctx, r);
#endif
  cm_release(old);
  return 0;
}

/* An empty result's cell is made here, inline, when the ring has one:
 * no call and no stack frame on the path of every op in a fresh loop. */
int capi_set(mlx_array *res, cm_array *r) {
  void *c;
  if (r && !res->ctx && (c = capi_cell_try_new(CAPI_H_ARRAY, r))) {
    res->ctx = c;
    return 0;
  }
  return set_slow(res, r);
}

mlx_array capi_wrap(cm_array *r) {
  if (!r) {
    capi_fail();
    return (mlx_array){NULL};
  }
  void *cell = capi_cell_new(CAPI_H_ARRAY, r);
  if (!cell) cm_release(r);
  return (mlx_array){cell};
}

int capi_dtype(const char *fn, mlx_dtype t) {
  return cm_dtype_valid((int)t) ? 0 : capi_errorf("[%s] Invalid dtype %d.", fn, (int)t);
}

static bool valid_dtype(const char *fn, mlx_dtype t) { return capi_dtype(fn, t) == 0; }

int capi_list(const char *fn, const void *p, size_t num, int *n) {
  if (capi_count_size(fn, "count", num)) return 1;
  if (num > INT32_MAX) return capi_errorf("[%s] Too many entries (%zu).", fn, num);
  if (num && !p) return capi_errorf("[%s] A list argument is NULL.", fn);
  *n = (int)num;
  return 0;
}

int capi_shape(const char *fn, const int *shape, size_t num, int *ndim) {
  if (capi_count_size(fn, "shape_num", num)) return 1;
  if (num > CM_MAX_DIMS)
    return capi_errorf("[%s] Arrays may have at most %d dimensions.", fn, CM_MAX_DIMS);
  if (num && !shape) return capi_errorf("[%s] shape is NULL.", fn);
  *ndim = (int)num;
  return 0;
}

size_t mlx_dtype_size(mlx_dtype dtype) {
  return cm_dtype_valid((int)dtype) ? cm_dtype_size((cm_dtype)dtype) : 0;
}

/* Evaluate a (reporting failures); 0 or 1. */
static int eval_arr(const char *fn, mlx_array arr) {
  if (capi_need(fn, arr)) return 1;
  return cm_eval1(capi_arr(arr)) ? capi_fail() : 0;
}

int mlx_array_tostring(mlx_string *str, const mlx_array arr) {
  if (capi_out("mlx_array_tostring", str)) return 1;
  if (eval_arr("mlx_array_tostring", arr)) return 1;
  char *s = cm_array_format(capi_arr(arr));
  if (!s) return capi_fail();
  return capi_string_adopt(str, s);
}

/* ---- construction ---- */

mlx_array mlx_array_new(void) { return (mlx_array){NULL}; }

__attribute__((noinline)) static int array_free_slow(mlx_array arr) {
  void *a;
  if (capi_cell_free("mlx_array_free", arr.ctx, CAPI_H_ARRAY, &a)) return 1;
  cm_release(a);
  return 0;
}

int mlx_array_free(mlx_array arr) {
  void *a = capi_cell_take(arr.ctx, CAPI_H_ARRAY);
  if (a == CAPI_TAKE_SLOW) return array_free_slow(arr);
  cm_release(a);
  return 0;
}

static mlx_array wrap_new(cm_array *a) { return capi_wrap(a); }

static mlx_array scalar(const void *v, cm_dtype t) { return wrap_new(cm_array_scalar(v, t, t)); }

mlx_array mlx_array_new_bool(bool val) { return scalar(&val, CM_BOOL); }
mlx_array mlx_array_new_int(int val) {
  int32_t v = val;
  return scalar(&v, CM_INT32);
}
mlx_array mlx_array_new_float32(float val) { return scalar(&val, CM_FLOAT32); }
mlx_array mlx_array_new_float(float val) { return scalar(&val, CM_FLOAT32); }
mlx_array mlx_array_new_float64(double val) { return scalar(&val, CM_FLOAT64); }
mlx_array mlx_array_new_double(double val) { return scalar(&val, CM_FLOAT64); }
mlx_array mlx_array_new_complex(float real_val, float imag_val) {
  cm_complex64 c = {real_val, imag_val};
  return scalar(&c, CM_COMPLEX64);
}

/* The (data, shape, dim, dtype) arguments of mlx_array_new_data and the
 * managed forms; sets *nbytes.  0, or 1 after reporting.  mlx-c copies
 * from data (or wraps it), so a NULL data with elements would crash there;
 * here it is an error, not zeros.  NULL data is fine for no elements. */
static int data_args(const char *fn, const void *data, const int *shape, int dim, mlx_dtype dtype,
                     size_t *nbytes) {
  if (capi_count(fn, "dim", dim)) return 1;
  if (dim > 0 && !shape) return capi_errorf("[%s] shape is NULL.", fn);
  if (!valid_dtype(fn, dtype)) return 1;
  if (cm_check_shape("array", dim, (const int32_t *)shape)) return capi_fail();
  *nbytes = (size_t)cm_shape_size(dim, (const int32_t *)shape) * cm_dtype_size((cm_dtype)dtype);
  if (!data && *nbytes) return capi_errorf("[%s] data is NULL.", fn);
  return 0;
}

mlx_array mlx_array_new_data(const void *data, const int *shape, int dim, mlx_dtype dtype) {
  size_t nbytes;
  if (data_args("mlx_array_new_data", data, shape, dim, dtype, &nbytes)) return mlx_array_new();
  return wrap_new(cm_array_from_data(data, dim, (const int32_t *)shape, (cm_dtype)dtype));
}

/* Wrap caller memory without copying; dtor(payload) runs when the last
 * array (or view) using it is freed.  On failure dtor is not called: the
 * caller still owns the memory. */
static mlx_array new_managed(const char *fn, void *data, const int *shape, int dim,
                             mlx_dtype dtype, void *payload, void (*dtor)(void *)) {
  size_t nbytes;
  if (data_args(fn, data, shape, dim, dtype, &nbytes)) return mlx_array_new();
  cm_buffer *buf = cm_buffer_wrap(data, nbytes, dtor, payload);
  if (!buf) return wrap_new(NULL);
  cm_array *a = cm_array_from_buffer(buf, 0, dim, (const int32_t *)shape, NULL, (cm_dtype)dtype);
  if (!a) buf->dtor = NULL;
  cm_buffer_release(buf);
  return wrap_new(a);
}

mlx_array mlx_array_new_data_managed(void *data, const int *shape, int dim, mlx_dtype dtype,
                                     void (*dtor)(void *)) {
  return new_managed("mlx_array_new_data_managed", data, shape, dim, dtype, data, dtor);
}

mlx_array mlx_array_new_data_managed_payload(void *data, const int *shape, int dim, mlx_dtype dtype,
                                             void *payload, void (*dtor)(void *)) {
  return new_managed("mlx_array_new_data_managed_payload", data, shape, dim, dtype, payload, dtor);
}

/* ---- set ---- */

int mlx_array_set(mlx_array *arr, const mlx_array src) {
  const char *fn = "mlx_array_set";
  if (capi_out(fn, arr) || capi_opt(fn, *arr) || capi_opt(fn, src)) return 1;
  if (!src.ctx) {
    int rc = mlx_array_free(*arr);
    arr->ctx = NULL;
    return rc;
  }
  return capi_set(arr, cm_retain(capi_arr(src)));
}

static int set_new(mlx_array *arr, mlx_array v) {
  if (!v.ctx) return 1; /* already reported */
  if (capi_opt("mlx_array_set", *arr)) {
    mlx_array_free(v);
    return 1;
  }
  mlx_array_free(*arr);
  *arr = v;
  return 0;
}

/* mlx_array_set_X(arr, ...): check arr, then build the new value. */
#define SET(NAME, DECL, ...)                                \
  int mlx_array_set_##NAME(mlx_array *arr, DECL) {          \
    if (capi_out("mlx_array_set_" #NAME, arr)) return 1;    \
    return set_new(arr, mlx_array_new_##NAME(__VA_ARGS__)); \
  }
SET(bool, bool val, val)
SET(int, int val, val)
SET(float32, float val, val)
SET(float, float val, val)
SET(float64, double val, val)
SET(double, double val, val)
#undef SET

int mlx_array_set_complex(mlx_array *arr, float real_val, float imag_val) {
  if (capi_out("mlx_array_set_complex", arr)) return 1;
  return set_new(arr, mlx_array_new_complex(real_val, imag_val));
}

int mlx_array_set_data(mlx_array *arr, const void *data, const int *shape, int dim,
                       mlx_dtype dtype) {
  if (capi_out("mlx_array_set_data", arr)) return 1;
  return set_new(arr, mlx_array_new_data(data, shape, dim, dtype));
}

/* ---- queries (an empty array reads as a 0-d array of no elements; a
 * freed or invalid one is reported and reads the same) ---- */

/* The node of a query's argument: NULL when empty or after reporting. */
static cm_array *query(const char *fn, mlx_array arr) {
  return capi_opt(fn, arr) ? NULL : capi_arr(arr);
}

size_t mlx_array_itemsize(const mlx_array arr) {
  cm_array *a = query("mlx_array_itemsize", arr);
  return a ? cm_itemsize(a) : 0;
}
size_t mlx_array_size(const mlx_array arr) {
  cm_array *a = query("mlx_array_size", arr);
  return a ? (size_t)a->size : 0;
}
size_t mlx_array_nbytes(const mlx_array arr) {
  cm_array *a = query("mlx_array_nbytes", arr);
  return a ? cm_nbytes(a) : 0;
}
size_t mlx_array_ndim(const mlx_array arr) {
  cm_array *a = query("mlx_array_ndim", arr);
  return a ? (size_t)a->ndim : 0;
}
const int *mlx_array_shape(const mlx_array arr) {
  cm_array *a = query("mlx_array_shape", arr);
  return a ? (const int *)a->shape : NULL;
}
const size_t *mlx_array_strides(const mlx_array arr) {
  cm_array *a = query("mlx_array_strides", arr);
  return a ? (const size_t *)a->strides : NULL;
}
int mlx_array_dim(const mlx_array arr, int dim) {
  if (capi_need("mlx_array_dim", arr)) return 0;
  cm_array *a = capi_arr(arr);
  int d = dim < 0 ? dim + a->ndim : dim;
  if (d < 0 || d >= a->ndim) {
    capi_errorf("[mlx_array_dim] Dimension %d is out of range for an array with %d dimensions.",
                dim, a->ndim);
    return 0;
  }
  return a->shape[d];
}
mlx_dtype mlx_array_dtype(const mlx_array arr) {
  cm_array *a = query("mlx_array_dtype", arr);
  return a ? (mlx_dtype)a->dtype : MLX_BOOL;
}

int mlx_array_eval(mlx_array arr) { return eval_arr("mlx_array_eval", arr); }

/* ---- item: the single element, converted to the requested type ---- */

static int item(const char *fn, void *res, cm_dtype want, mlx_array arr) {
  if (capi_out(fn, res) || capi_need(fn, arr)) return 1;
  cm_array *a = capi_arr(arr);
  if (a->size != 1) return capi_errorf("item can only be called on arrays of size 1.");
  if (cm_eval1(a)) return capi_fail();
  cm_convert_scalar(res, want, cm_data(a), a->dtype);
  return 0;
}

#define ITEM(NAME, T, DT)                                  \
  int mlx_array_item_##NAME(T *res, const mlx_array arr) { \
    return item("mlx_array_item_" #NAME, res, DT, arr);    \
  }
ITEM(bool, bool, CM_BOOL)
ITEM(uint8, uint8_t, CM_UINT8)
ITEM(uint16, uint16_t, CM_UINT16)
ITEM(uint32, uint32_t, CM_UINT32)
ITEM(uint64, uint64_t, CM_UINT64)
ITEM(int8, int8_t, CM_INT8)
ITEM(int16, int16_t, CM_INT16)
ITEM(int32, int32_t, CM_INT32)
ITEM(int64, int64_t, CM_INT64)
ITEM(float32, float, CM_FLOAT32)
ITEM(float64, double, CM_FLOAT64)
ITEM(complex64, mlx_complex64_t, CM_COMPLEX64)
#ifdef HAS_FLOAT16
ITEM(float16, float16_t, CM_FLOAT16)
#endif
#ifdef HAS_BFLOAT16
ITEM(bfloat16, bfloat16_t, CM_BFLOAT16)
#endif

/* ---- data: evaluate, then the raw pointer (element 0; use the strides) ---- */

static const void *data_ptr(const char *fn, mlx_array arr) {
  if (eval_arr(fn, arr)) return NULL;
  return cm_data(capi_arr(arr));
}

#define DATA(NAME, T)                                   \
  const T *mlx_array_data_##NAME(const mlx_array arr) { \
    return data_ptr("mlx_array_data_" #NAME, arr);      \
  }
DATA(bool, bool)
DATA(uint8, uint8_t)
DATA(uint16, uint16_t)
DATA(uint32, uint32_t)
DATA(uint64, uint64_t)
DATA(int8, int8_t)
DATA(int16, int16_t)
DATA(int32, int32_t)
DATA(int64, int64_t)
DATA(float32, float)
DATA(float64, double)
DATA(complex64, mlx_complex64_t)
#ifdef HAS_FLOAT16
DATA(float16, float16_t)
#endif
#ifdef HAS_BFLOAT16
DATA(bfloat16, bfloat16_t)
#endif

/* ---- internals ---- */

int _mlx_array_is_available(bool *res, const mlx_array arr) {
  if (capi_out("_mlx_array_is_available", res)) return 1;
  if (capi_need("_mlx_array_is_available", arr)) return 1;
  *res = cm_is_evaluated(capi_arr(arr));
  return 0;
}

int _mlx_array_wait(const mlx_array arr) {
  /* a node nobody scheduled yet would never finish: evaluate it instead */
  return eval_arr("_mlx_array_wait", arr);
}

static int flag(const char *fn, bool *res, mlx_array arr, int which) {
  if (capi_out(fn, res) || capi_need(fn, arr)) return 1;
  *res = (capi_arr(arr)->flags & which) != 0;
  return 0;
}

int _mlx_array_is_contiguous(bool *res, const mlx_array arr) {
  return flag("_mlx_array_is_contiguous", res, arr, CM_FLAG_CONTIGUOUS);
}
int _mlx_array_is_row_contiguous(bool *res, const mlx_array arr) {
  return flag("_mlx_array_is_row_contiguous", res, arr, CM_FLAG_ROW_CONTIGUOUS);
}
int _mlx_array_is_col_contiguous(bool *res, const mlx_array arr) {
  return flag("_mlx_array_is_col_contiguous", res, arr, CM_FLAG_COL_CONTIGUOUS);
}
