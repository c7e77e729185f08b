/* Array creation: zeros, ones, full and their _like forms, arange (MLX's two
 * overloads), linspace, eye, identity, tri.  Dtype defaults and inference
 * follow MLX's Python bindings. */
#include "argparse.h"
#include "ops_tables.h"

/* "dtype: Dtype | None = X": None means the default X (float32 for most). */
static cm_dtype dtype_or(const pa_value *v, cm_dtype dflt) { return v->none ? dflt : v->dtype; }

/* zeros(shape, dtype=float32, *, stream) / ones(...) */
static PyObject *impl_fill(const pycm_op *op, pa_call *c) {
  return pycm_wrap(op->fn.shape_dtype(c->v[0].ndim, c->v[0].shape, dtype_or(&c->v[1], CM_FLOAT32),
                                      pa_stream(op, c)));
}
#define FILL_ROW(name, spec, sig, fn) PYCM_ROW(name, spec, sig, impl_fill, shape_dtype, fn)

/* vals as MLX converts it: with a dtype, a Python or NumPy scalar is weak
 * against that dtype (an int becomes float16 for float16; a float stays
 * float32 for int32), arrays are left alone; without one, the defaults. */
static cm_array *vals_arg(const pa_value *v, int dtype) {
  if (dtype < 0) return pa_to_array(v->obj, -1);
  if (!pa_is_array_operand(v->obj)) return pa_to_array(v->obj, -1); /* raises */
  cm_array *like = cm_array_scalar_double(0.0, (cm_dtype)dtype);
  if (!like) return (cm_array *)pycm_raise();
  cm_array *r = pycm_to_array_weak(v->obj, like);
  cm_release(like);
  return r;
}

/* full(shape, vals, dtype=None, *, stream).  As in MLX 0.32 the dtype only
 * steers the conversion of a scalar vals: the result has vals' dtype, so
 * full(3, 2.5, int32) is float32 and full(3, 2, float16) is float16. */
static PyObject *impl_full(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_array *vals = vals_arg(&v[1], v[2].none ? -1 : (int)v[2].dtype);
  if (!vals) return NULL;
  cm_array *r = cm_full(v[0].ndim, v[0].shape, vals, vals->dtype, pa_stream(op, c));
  cm_release(vals);
  return pycm_wrap(r);
}

/* zeros_like(a, /, dtype=None, *, stream) / ones_like: None keeps a's dtype. */
static PyObject *impl_fill_like(const pycm_op *op, pa_call *c) {
  cm_array *a = c->v[0].arr;
  double v = op->fn.shape_dtype == cm_ones ? 1.0 : 0.0; /* the row names its filler */
  return pycm_wrap(cm_fill_like(a, v, dtype_or(&c->v[1], a->dtype), pa_stream(op, c)));
}
#define FILL_LIKE_ROW(name, spec, sig, fn) \
  PYCM_ROW(name, spec, sig, impl_fill_like, shape_dtype, fn)

/* full_like(a, /, vals, dtype=None, *, stream) */
static PyObject *impl_full_like(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_dtype dt = dtype_or(&v[2], v[0].arr->dtype);
  cm_array *vals = vals_arg(&v[1], (int)dt);
  if (!vals) return NULL;
  cm_array *r = cm_full_like(v[0].arr, vals, dt, pa_stream(op, c));
  cm_release(vals);
  return pycm_wrap(r);
}

/* arange's dtype when none is given: float32 if any given bound is a float,
 * else int32 (int64 if an int does not fit int32), else (only bools) bool,
 * which the core rejects as MLX does. */
static cm_dtype arange_dtype(const pa_value *const *given, int n) {
  cm_dtype t = CM_BOOL;
  for (int i = 0; i < n; i++) {
    if (!given[i]) continue;
    if (given[i]->kind == PA_KIND_FLOAT) return CM_FLOAT32;
    if (given[i]->kind == PA_KIND_INT) {
      bool wide = given[i]->i < INT32_MIN || given[i]->i > INT32_MAX;
      if (wide) t = CM_INT64;
      else if (t == CM_BOOL) t = CM_INT32;
    }
  }
  return t;
}

static PyObject *arange_call(const pa_value *start, const pa_value *stop, const pa_value *step,
                             const pa_value *dtype, cm_stream s) {
  const pa_value *given[3] = {start, stop, step && !step->none ? step : NULL};
  cm_dtype dt = dtype->none ? arange_dtype(given, 3) : dtype->dtype;
  double b = start ? start->f : 0.0;
  double e = stop->f;
  double d = given[2] ? step->f : 1.0;
  return pycm_wrap(cm_arange(b, e, d, dt, s));
}

/* arange(start, stop, step=None, dtype=None, *, stream); stop=None makes
 * start the stop, as MLX does. */
static PyObject *impl_arange3(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  if (v[1].none) return arange_call(NULL, &v[0], &v[2], &v[3], pa_stream(op, c));
  return arange_call(&v[0], &v[1], &v[2], &v[3], pa_stream(op, c));
}

/* arange(stop, step=None, dtype=None, *, stream) */
static PyObject *impl_arange1(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  return arange_call(NULL, &v[0], &v[1], &v[2], pa_stream(op, c));
}

/* linspace(start, stop, num=50, endpoint=True, dtype=float32, stream=None).
 * endpoint=False is the first num of num+1 points: the last point kept is
 * start + (num-1)/num of the way, which the core's kernel (double math,
 * last point exact) reproduces from that stop. */
static PyObject *impl_linspace(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  double start = v[0].f, stop = v[1].f;
  int num = (int)v[2].i;
  if (!v[3].b && num > 0) stop = start + (stop - start) * ((double)(num - 1) / (double)num);
  return pycm_wrap(cm_linspace(start, stop, num, dtype_or(&v[4], CM_FLOAT32), pa_stream(op, c)));
}

/* eye(n, m=None, k=0, dtype=float32, *, stream) and tri(n, m=None, k=0,
 * dtype=None -> float32, *, stream): m=None means n. */
static PyObject *impl_band(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  int n = (int)v[0].i;
  int m = v[1].none ? n : (int)v[1].i;
  return pycm_wrap(op->fn.eye(n, m, (int)v[2].i, dtype_or(&v[3], CM_FLOAT32), pa_stream(op, c)));
}
#define BAND_ROW(name, spec, sig, fn) PYCM_ROW(name, spec, sig, impl_band, eye, fn)

/* identity(n, dtype=float32, *, stream) */
static PyObject *impl_identity(const pycm_op *op, pa_call *c) {
  return pycm_wrap(cm_identity((int)c->v[0].i, dtype_or(&c->v[1], CM_FLOAT32), pa_stream(op, c)));
}

#define S_STREAM "*, stream: Stream = None"
#define G_STREAM "*, stream: StreamOrDevice = None) -> array"

pycm_op pycm_ops_creation[] = {
    FILL_ROW("zeros", "shape: shape, dtype: Dtype | None = float32, " S_STREAM,
             "(shape: int | Sequence[int], dtype: Dtype | None = float32, " G_STREAM, cm_zeros),
    FILL_ROW("ones", "shape: shape, dtype: Dtype | None = float32, " S_STREAM,
             "(shape: int | Sequence[int], dtype: Dtype | None = float32, " G_STREAM, cm_ones),
    PYCM_CALL(
        "full", "shape: shape, vals: arraylike, dtype: Dtype | None = None, " S_STREAM,
        "(shape: int | Sequence[int], vals: scalar | array, dtype: Dtype | None = None, " G_STREAM,
        impl_full),
    FILL_LIKE_ROW("zeros_like", "a: array, /, dtype: Dtype | None = None, " S_STREAM,
                  "(a: array, /, dtype: Dtype | None = None, " G_STREAM, cm_zeros),
    FILL_LIKE_ROW("ones_like", "a: array, /, dtype: Dtype | None = None, " S_STREAM,
                  "(a: array, /, dtype: Dtype | None = None, " G_STREAM, cm_ones),
    PYCM_CALL("full_like", "a: array, /, vals: arraylike, dtype: Dtype | None = None, " S_STREAM,
              "(a: array, vals: scalar | array, dtype: Dtype | None = None, " G_STREAM,
              impl_full_like),
    PYCM_CALL("arange",
              "start: number, stop: number | None, step: number | None = None, "
              "dtype: Dtype | None = None, " S_STREAM,
              "(start : int | float, stop : None | int | float, step : None | int | float, "
              "dtype: Dtype | None = None, " G_STREAM,
              impl_arange3),
    PYCM_CALL("arange",
              "stop: number, step: number | None = None, dtype: Dtype | None = None, " S_STREAM,
              "(stop : int | float, step : None | int | float = None, dtype: Dtype | None = "
              "None, " G_STREAM,
              impl_arange1),
    PYCM_CALL("linspace",
              "start: float, stop: float, num: int = 50, endpoint: bool = True, "
              "dtype: Dtype | None = float32, stream: Stream = None",
              "(start: scalar, stop: scalar, num: int | None = 50, endpoint: bool = True, "
              "dtype: Dtype | None = float32, stream: StreamOrDevice = None) -> array",
              impl_linspace),
    BAND_ROW("eye",
             "n: int, m: int | None = None, k: int = 0, dtype: Dtype | None = float32, " S_STREAM,
             "(n: int, m: int | None = None, k: int = 0, dtype: Dtype | None = float32, " G_STREAM,
             cm_eye),
    PYCM_CALL("identity", "n: int, dtype: Dtype | None = float32, " S_STREAM,
              "(n: int, dtype: Dtype | None = float32, " G_STREAM, impl_identity),
    BAND_ROW(
        "tri", "n: int, m: int | None = None, k: int = 0, dtype: Dtype | None = None, " S_STREAM,
        "(n: int, m: int | None = None, k: int = 0, dtype: Dtype | None = None, " G_STREAM, cm_tri),
};
const int pycm_ops_creation_count = sizeof pycm_ops_creation / sizeof pycm_ops_creation[0];
