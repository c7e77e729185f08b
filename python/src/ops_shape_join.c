/* Shape ops, part 2: joining and splitting (concatenate, stack, unstack,
 * split, tile, repeat), padding, rolling, meshgrid, the diagonal family
 * (diag, diagonal, trace, tril, triu), kron/outer/inner/diff and the
 * window functions.
 *
 * MLX's list arguments are strict: `arrays: list[array]` takes cmlx arrays
 * only (no scalars or NumPy arrays: a TypeError), while the *arrays of
 * meshgrid must be arrays too (MLX leaks a C++ std::bad_cast there; cmlx
 * raises the TypeError). */
#include "ops_lists.h"
#include "ops_tables.h"

#include <stdlib.h>

/* An int argument held as an object (int | Sequence[int] parameters): 0
 * and *out when it is an int (or __index__, not a sequence); 1 otherwise. */
static int object_int(PyObject *o, int64_t *out) {
  if (pa_is_seq(o)) return 1;
  return pa_int_in_range(o, INT32_MIN, INT32_MAX, out);
}

/* ---- joining and splitting ---------------------------------------------- */

/* concatenate / concat(arrays, /, axis=0); axis None joins flattened. */
static PyObject *impl_concatenate(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_array **arrs;
  Py_ssize_t n;
  int r = pa_seq_arrays(v[0].obj, &arrs, &n);
  if (r) return r > 0 ? pa_value_type_error(op, c) : NULL;
  cm_stream s = pa_stream(op, c);
  cm_array *res = v[1].none ? cm_concatenate_flat(arrs, (int)n, s)
                            : cm_concatenate(arrs, (int)n, (int)v[1].i, s);
  pa_release_arrays(arrs, n);
  return pycm_wrap(res);
}

/* stack(arrays, /, axis=0); MLX's axis None is axis 0. */
static PyObject *impl_stack(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_array **arrs;
  Py_ssize_t n;
  int r = pa_seq_arrays(v[0].obj, &arrs, &n);
  if (r) return r > 0 ? pa_value_type_error(op, c) : NULL;
  cm_array *res = cm_stack(arrs, (int)n, v[1].none ? 0 : (int)v[1].i, pa_stream(op, c));
  pa_release_arrays(arrs, n);
  return pycm_wrap(res);
}

/* A core-allocated result list (malloc'd) as a Python list or tuple. */
static PyObject *core_list(int rc, cm_array **outs, int n, bool tuple) {
  if (rc) return pycm_raise();
  PyObject *res = pa_wrap_arrays(outs, n, tuple);
  free(outs);
  return res;
}

/* unstack(x, /, *, axis=0) -> tuple (MLX's actual result type) */
static PyObject *impl_unstack(const pycm_op *op, pa_call *c) {
  cm_array **outs = NULL;
  int n = 0;
  int rc = cm_unstack(c->v[0].arr, (int)c->v[1].i, &outs, &n, pa_stream(op, c));
  return core_list(rc, outs, n, true);
}

/* split(a, /, indices_or_sections, axis=0) -> list: an int splits into
 * equal parts, a sequence at the given indices. */
PyObject *pa_impl_split(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_array **outs = NULL;
  int n = 0, rc;
  int64_t k;
  if (!object_int(v[1].obj, &k)) {
    rc = cm_split(v[0].arr, (int)k, (int)v[2].i, &outs, &n, pa_stream(op, c));
  } else {
    int32_t *idx;
    int nidx;
    int r = pa_seq_ints32(v[1].obj, &idx, &nidx);
    if (r) return r > 0 ? pa_value_type_error(op, c) : NULL;
    rc = cm_split_indices(v[0].arr, nidx, idx, (int)v[2].i, &outs, &n, pa_stream(op, c));
    PyMem_Free(idx);
  }
  return core_list(rc, outs, n, false);
}

/* tile(a, reps, /): reps an int or a sequence (the parser's shape type). */
static PyObject *impl_tile(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  return pycm_wrap(cm_tile(v[0].arr, v[1].ndim, v[1].shape, pa_stream(op, c)));
}

/* repeat(array, /, repeats, axis=None); None repeats the flattened array. */
static PyObject *impl_repeat(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  if (v[2].none) return pycm_wrap(cm_repeat_flat(v[0].arr, (int)v[1].i, pa_stream(op, c)));
  return pycm_wrap(cm_repeat(v[0].arr, (int)v[1].i, (int)v[2].i, pa_stream(op, c)));
}

/* ---- pad ------------------------------------------------------------------ */

/* pad_width: int | tuple[int] | tuple[int, int] | list[tuple[int, int]],
 * as nanobind matches them in that order: an int or a one-int sequence
 * pads every axis by it on both sides, two ints are (before, after) for
 * every axis, a sequence of pairs gives each axis its own (a single pair
 * applies to every axis).  Fills low/high (PyMem_Malloc'd) with *n entries;
 * *all says one entry stands for every axis.  0 / 1 (no fit) / -1. */
static int pad_widths(PyObject *o, int32_t **low, int32_t **high, int *n, bool *all) {
  int64_t w;
  *low = *high = NULL;
  *n = 0;
  *all = true;
  if (!object_int(o, &w)) {
    if (!(*low = PyMem_Malloc(sizeof(int32_t))) || !(*high = PyMem_Malloc(sizeof(int32_t)))) {
      PyMem_Free(*low);
      PyErr_NoMemory();
      return -1;
    }
    **low = **high = (int32_t)w;
    *n = 1;
    return 0;
  }
  if (!pa_is_seq(o)) return 1;
  PyObject *seq = PySequence_Fast(o, "pad_width");
  if (!seq) {
    PyErr_Clear();
    return 1;
  }
  Py_ssize_t len = PySequence_Fast_GET_SIZE(seq);
  PyObject **items = PySequence_Fast_ITEMS(seq);
  int r = 0;
  int32_t *lo = PyMem_Malloc(sizeof(int32_t) * (size_t)(len ? len : 1));
  int32_t *hi = PyMem_Malloc(sizeof(int32_t) * (size_t)(len ? len : 1));
  if (!lo || !hi || len > INT32_MAX) {
    PyErr_NoMemory();
    r = -1;
    goto done;
  }
  int64_t a, b;
  if (len >= 1 && len <= 2 && !object_int(items[0], &a) &&
      (len == 1 || !object_int(items[1], &b))) {
    /* tuple[int] or tuple[int, int] */
    lo[0] = (int32_t)a;
    hi[0] = (int32_t)(len == 2 ? b : a);
    *n = 1;
    goto done;
  }
  /* list[tuple[int, int]] */
  for (Py_ssize_t i = 0; !r && i < len; i++) {
    int32_t *pair;
    int np;
    r = pa_seq_ints32(items[i], &pair, &np);
    if (!r && np != 2) r = 1;
    if (!r) {
      lo[i] = pair[0];
      hi[i] = pair[1];
    }
    PyMem_Free(pair);
  }
  *n = (int)len;
  *all = len == 1;
done:
  Py_DECREF(seq);
  if (r) {
    PyMem_Free(lo);
    PyMem_Free(hi);
    return r;
  }
  *low = lo;
  *high = hi;
  return 0;
}

/* pad(a, /, pad_width, mode='constant', constant_values=0) */
static PyObject *impl_pad(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_array *a = v[0].arr;
  const char *mode;
  int r = pa_str_arg(&v[2], "constant", &mode);
  if (r) return r > 0 ? pa_value_type_error(op, c) : NULL;
  if (v[3].given && v[3].none) return pa_value_type_error(op, c);
  int32_t *lo, *hi;
  int n;
  bool all;
  r = pad_widths(v[1].obj, &lo, &hi, &n, &all);
  if (r) return r > 0 ? pa_value_type_error(op, c) : NULL;
  cm_array *value = NULL;
  /* a scalar pad value is weak against a (0.1 stays exact for float64) */
  if (v[3].given && !(value = pa_is_array_operand(v[3].obj) ? pycm_to_array_weak(v[3].obj, a)
                                                             : pa_to_array(v[3].obj, -1))) {
    PyMem_Free(lo);
    PyMem_Free(hi);
    return NULL;
  }
  int axes[CM_MAX_DIMS];
  int32_t alo[CM_MAX_DIMS], ahi[CM_MAX_DIMS];
  for (int i = 0; i < a->ndim; i++) {
    axes[i] = i;
    alo[i] = all ? lo[0] : 0;
    ahi[i] = all ? hi[0] : 0;
  }
  cm_array *res = all ? cm_pad(a, a->ndim, axes, a->ndim, alo, a->ndim, ahi, value, mode,
                               pa_stream(op, c))
                      : cm_pad(a, a->ndim, axes, n, lo, n, hi, value, mode, pa_stream(op, c));
  PyMem_Free(lo);
  PyMem_Free(hi);
  if (value) cm_release(value);
  return pycm_wrap(res);
}

/* roll(a, shift, axis=None): an int shift with several axes rolls each by
 * it; several shifts with one axis (or none) roll by their sum. */
static PyObject *impl_roll(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_stream s = pa_stream(op, c);
  if (v[2].none) return pycm_wrap(cm_roll(v[0].arr, v[1].ndim, v[1].shape, 0, NULL, s));
  if (!pa_is_seq(v[2].obj))
    return pycm_wrap(cm_roll_axis(v[0].arr, v[1].ndim, v[1].shape, (int)v[2].shape[0], s));
  const int *axes = (const int *)v[2].shape;
  if (pa_is_seq(v[1].obj))
    return pycm_wrap(cm_roll(v[0].arr, v[1].ndim, v[1].shape, v[2].ndim, axes, s));
  int32_t shift[CM_MAX_DIMS];
  for (int i = 0; i < v[2].ndim; i++) shift[i] = v[1].shape[0];
  return pycm_wrap(cm_roll(v[0].arr, v[2].ndim, shift, v[2].ndim, axes, s));
}

/* meshgrid(*arrays, sparse=False, indexing='xy') -> tuple */
static PyObject *impl_meshgrid(const pycm_op *op, pa_call *c) {
  const char *indexing;
  int r = pa_str_arg(&c->v[1], "xy", &indexing);
  if (r) return r > 0 ? pa_value_type_error(op, c) : NULL;
  cm_array **ins;
  Py_ssize_t n;
  r = pa_varargs_arrays(c, &ins, &n);
  if (r) return r > 0 ? pa_value_type_error(op, c) : NULL;
  PyObject *res = NULL;
  cm_array **outs = PyMem_Calloc((size_t)(n ? n : 1), sizeof(cm_array *));
  if (!outs)
    PyErr_NoMemory();
  else if (n > INT32_MAX || cm_meshgrid(ins, (int)n, c->v[0].b, indexing, outs, pa_stream(op, c)))
    pycm_raise();
  else
    res = pa_wrap_arrays(outs, (int)n, true);
  PyMem_Free(outs);
  pa_release_arrays(ins, n);
  return res;
}

/* ---- the diagonal family and friends -------------------------------------- */

/* fn(a, int, s): diag, tril, triu. */
static PyObject *impl_int1(const pycm_op *op, pa_call *c) {
  return pycm_wrap(op->fn.int1(c->v[0].arr, (int)c->v[1].i, pa_stream(op, c)));
}
#define INT1_ROW(name, spec, sig, fn) PYCM_ROW(name, spec, sig, impl_int1, int1, fn)

/* fn(a, int, int, s): diff(a, n, axis). */
static PyObject *impl_int2(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  return pycm_wrap(op->fn.int2(v[0].arr, (int)v[1].i, (int)v[2].i, pa_stream(op, c)));
}
#define INT2_ROW(name, spec, sig, fn) PYCM_ROW(name, spec, sig, impl_int2, int2, fn)

static PyObject *impl_diagonal(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  return pycm_wrap(
      cm_diagonal(v[0].arr, (int)v[1].i, (int)v[2].i, (int)v[3].i, pa_stream(op, c)));
}

static PyObject *impl_trace(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  return pycm_wrap(cm_trace(v[0].arr, (int)v[1].i, (int)v[2].i, (int)v[3].i,
                            v[4].none ? -1 : (int)v[4].dtype, pa_stream(op, c)));
}

/* fn(a, b, s) on two arrays (no scalars): kron, outer, inner. */
static PyObject *impl_array2(const pycm_op *op, pa_call *c) {
  return pycm_wrap(op->fn.binary(c->v[0].arr, c->v[1].arr, pa_stream(op, c)));
}
#define ARRAY2_ROW(name, spec, sig, fn) PYCM_ROW(name, spec, sig, impl_array2, binary, fn)

/* fn(M, s): the window functions. */
static PyObject *impl_window(const pycm_op *op, pa_call *c) {
  return pycm_wrap(op->fn.window((int)c->v[0].i, pa_stream(op, c)));
}
#define WINDOW_ROW(name, spec, sig, fn) PYCM_ROW(name, spec, sig, impl_window, window, fn)

/* ---- the rows ------------------------------------------------------------ */

#define KW_S "*, stream: Stream = None"
#define SIG_S "*, stream: StreamOrDevice = None) -> array"
#define JOIN_SPEC "arrays: object, /, axis: int | None = 0, " KW_S
#define JOIN_SIG "(arrays: list[array], axis: int | None = 0, " SIG_S
#define WINDOW(name) WINDOW_ROW(#name, "M: int, " KW_S, "(M: int, " SIG_S, cm_##name)

pycm_op pycm_ops_shape_join[] = {
    PYCM_CALL("concatenate", JOIN_SPEC, JOIN_SIG, impl_concatenate),
    PYCM_CALL("concat", JOIN_SPEC, JOIN_SIG, impl_concatenate),
    PYCM_CALL("stack", JOIN_SPEC, JOIN_SIG, impl_stack),
    PYCM_CALL("unstack", "x: array, /, *, axis: int = 0, stream: Stream = None",
              "(x: array, /, *, axis: int = 0, stream: StreamOrDevice = None) -> list[array]",
              impl_unstack),
    PYCM_CALL("split", "a: array, /, indices_or_sections: object, axis: int = 0, " KW_S,
              "(a: array, /, indices_or_sections: int | Sequence[int], axis: int = 0, " SIG_S,
              pa_impl_split),
    PYCM_CALL("tile", "a: array, reps: shape, /, " KW_S,
              "(a: array, reps: int | Sequence[int], /, " SIG_S, impl_tile),
    PYCM_CALL("repeat", "array: array, /, repeats: int, axis: int | None = None, " KW_S,
              "(array: array, repeats: int, axis: int | None = None, " SIG_S, impl_repeat),
    PYCM_CALL("pad",
              "a: array, /, pad_width: object, mode: object | None = None, "
              "constant_values: arraylike | None = None, " KW_S,
              "(a: array, pad_width: int | tuple[int] | tuple[int, int] | list[tuple[int, int]], "
              "mode: Literal['constant', 'edge', 'reflect', 'symmetric'] = 'constant', "
              "constant_values: scalar | array = 0, " SIG_S,
              impl_pad),
    PYCM_CALL("roll", "a: array, /, shift: shape, axis: axes | None = None, " KW_S,
              "(a: array, shift: int | tuple[int], axis: None | int | tuple[int] = None, /, " SIG_S,
              impl_roll),
    PYCM_CALL("meshgrid",
              "*arrays: object, sparse: bool = False, indexing: object | None = None, "
              "stream: Stream = None",
              "(*arrays: array, sparse: bool | None = False, indexing: str | None = 'xy', stream: "
              "StreamOrDevice = None) -> tuple[array, ...]",
              impl_meshgrid),
    INT1_ROW("diag", "a: array, /, k: int = 0, " KW_S, "(a: array, /, k: int = 0, " SIG_S, cm_diag),
    PYCM_CALL("diagonal",
              "a: array, offset: int = 0, axis1: int = 0, axis2: int = 1, stream: Stream = None",
              "(a: array, offset: int = 0, axis1: int = 0, axis2: int = 1, stream: StreamOrDevice "
              "= None) -> array",
              impl_diagonal),
    PYCM_CALL("trace",
              "a: array, /, offset: int = 0, axis1: int = 0, axis2: int = 1, "
              "dtype: Dtype | None = None, " KW_S,
              "(a: array, /, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Dtype | None "
              "= None, " SIG_S,
              impl_trace),
    INT1_ROW("tril", "x: array, k: int = 0, " KW_S, "(x: array, k: int = 0, " SIG_S, cm_tril),
    INT1_ROW("triu", "x: array, k: int = 0, " KW_S, "(x: array, k: int = 0, " SIG_S, cm_triu),
    ARRAY2_ROW("kron", "a: array, b: array, " KW_S, "(a: array, b: array, " SIG_S, cm_kron),
    INT2_ROW("diff", "a: array, /, n: int = 1, axis: int = -1, " KW_S,
             "(a: array, /, n: int = 1, axis: int = -1, " SIG_S, cm_diff),
    ARRAY2_ROW("outer", "a: array, b: array, /, " KW_S, "(a: array, b: array, /, " SIG_S, cm_outer),
    ARRAY2_ROW("inner", "a: array, b: array, /, " KW_S, "(a: array, b: array, /, " SIG_S, cm_inner),
    WINDOW(bartlett),
    WINDOW(blackman),
    WINDOW(hamming),
    WINDOW(hanning),
};
const int pycm_ops_shape_join_count = sizeof pycm_ops_shape_join / sizeof pycm_ops_shape_join[0];
