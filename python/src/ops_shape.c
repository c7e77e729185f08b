/* Shape and view ops, part 1: reshaping, axis order, broadcasting, views
 * and dynamic slicing.  (Joining, splitting, padding, the diagonal family
 * and windows are in ops_shape_join.c.)
 *
 * The specs follow what MLX 0.32 accepts, which is sometimes stricter than
 * the parser's types: a `Sequence[int]` parameter (reshape's shape,
 * transpose's axes, ...) refuses a bare int, so those families check
 * pa_is_seq and raise the same TypeError the parser would. */
#include "ops_lists.h"
#include "ops_tables.h"

/* ---- families ------------------------------------------------------------ */

/* fn(a, int, int, s): flatten, swapaxes, moveaxis. */
static PyObject *impl_int2(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  return pycm_wrap(op->fn.int2(v[0].arr, (int)v[1].i, (int)v[2].i, pa_stream(op, c)));
}
#define INT2_ROW(name, spec, sig, fn) PYCM_ROW(name, spec, sig, impl_int2, int2, fn)

/* reshape(a, /, shape): shape must be a sequence (reshape(a, 6) is a
 * TypeError in MLX; the method form takes ints). */
static PyObject *impl_reshape(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  if (!pa_is_seq(v[1].obj)) return pa_value_type_error(op, c);
  return pycm_wrap(cm_reshape(v[0].arr, v[1].ndim, v[1].shape, pa_stream(op, c)));
}

static PyObject *impl_unflatten(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  if (!pa_is_seq(v[2].obj)) return pa_value_type_error(op, c);
  return pycm_wrap(cm_unflatten(v[0].arr, (int)v[1].i, v[2].ndim, v[2].shape, pa_stream(op, c)));
}

static PyObject *impl_squeeze(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  if (v[1].none) return pycm_wrap(cm_squeeze_all(v[0].arr, pa_stream(op, c)));
  return pycm_wrap(cm_squeeze(v[0].arr, v[1].ndim, (const int *)v[1].shape, pa_stream(op, c)));
}

static PyObject *impl_expand_dims(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  return pycm_wrap(
      cm_expand_dims(v[0].arr, v[1].ndim, (const int *)v[1].shape, pa_stream(op, c)));
}

/* transpose / permute_dims(a, /, axes=None): None reverses the axes. */
static PyObject *impl_transpose(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  if (v[1].none) return pycm_wrap(op->fn.ints(v[0].arr, 0, NULL, pa_stream(op, c)));
  if (!pa_is_seq(v[1].obj)) return pa_value_type_error(op, c);
  return pycm_wrap(op->fn.ints(v[0].arr, v[1].ndim, (const int *)v[1].shape, pa_stream(op, c)));
}
#define TRANSPOSE_ROW(name, spec, sig, fn) PYCM_ROW(name, spec, sig, impl_transpose, ints, fn)

/* broadcast_to(a: scalar | array, /, shape) */
static PyObject *impl_broadcast_to(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  if (!pa_is_seq(v[1].obj)) return pa_value_type_error(op, c);
  cm_array *a = pa_to_array(v[0].obj, -1);
  if (!a) return NULL;
  cm_array *r = cm_broadcast_to(a, v[1].ndim, v[1].shape, pa_stream(op, c));
  cm_release(a);
  return pycm_wrap(r);
}

/* broadcast_arrays(*arrays) -> list */
static PyObject *impl_broadcast_arrays(const pycm_op *op, pa_call *c) {
  cm_array **ins;
  Py_ssize_t n;
  int r = pa_varargs_arrays(c, &ins, &n);
  if (r) return r > 0 ? pa_value_type_error(op, c) : NULL;
  PyObject *res = NULL;
  cm_array **outs = PyMem_Calloc((size_t)(n ? n : 1), sizeof(cm_array *));
  if (!outs) {
    PyErr_NoMemory();
  } else if (n == 0) {
    res = PyList_New(0);
  } else if (cm_broadcast_arrays(ins, (int)n, outs, pa_stream(op, c))) {
    pycm_raise();
  } else {
    res = pa_wrap_arrays(outs, (int)n, false);
  }
  PyMem_Free(outs);
  pa_release_arrays(ins, n);
  return res;
}

/* broadcast_shapes(*shapes) -> tuple of ints */
static PyObject *impl_broadcast_shapes(const pycm_op *op, pa_call *c) {
  (void)op;
  if (c->nvarargs == 0) {
    PyErr_SetString(PyExc_ValueError, "[broadcast_shapes] Must provide at least one shape.");
    return NULL;
  }
  int32_t acc[CM_MAX_DIMS], next[CM_MAX_DIMS];
  int nacc = 0;
  for (Py_ssize_t i = 0; i < c->nvarargs; i++) {
    PyObject *o = c->varargs[i];
    int32_t *shape = NULL;
    int n = 0;
    /* MLX takes any sequence of ints (NumPy arrays too), but not its own arrays */
    int r = pa_is_seq(o) && !PyCmArray_Check(o) ? pa_seq_ints32(o, &shape, &n) : 1;
    if (r < 0) return NULL;
    if (r > 0 || n > CM_MAX_DIMS) {
      PyMem_Free(shape);
      PyErr_SetString(PyExc_ValueError,
                      "[broadcast_shapes] Expects a sequence of shapes (tuple or list of ints).");
      return NULL;
    }
    int nnext;
    if (i == 0) {
      for (int k = 0; k < n; k++) next[k] = shape[k];
      nnext = n;
    } else if (cm_broadcast_shapes(nacc, acc, n, shape, &nnext, next)) {
      PyMem_Free(shape);
      return pycm_raise();
    }
    PyMem_Free(shape);
    for (int k = 0; k < nnext; k++) acc[k] = next[k];
    nacc = nnext;
  }
  PyObject *t = PyTuple_New(nacc);
  for (int k = 0; t && k < nacc; k++) {
    PyObject *d = PyLong_FromLong(acc[k]);
    if (!d) {
      Py_CLEAR(t);
      break;
    }
    PyTuple_SET_ITEM(t, k, d);
  }
  return t;
}

/* atleast_Nd(*arys): one array in, one out; otherwise a list. */
static PyObject *impl_atleast(const pycm_op *op, pa_call *c) {
  cm_array **ins;
  Py_ssize_t n;
  int r = pa_varargs_arrays(c, &ins, &n);
  if (r) return r > 0 ? pa_value_type_error(op, c) : NULL;
  cm_stream s = pa_stream(op, c);
  PyObject *res = NULL;
  if (n == 1) {
    res = pycm_wrap(op->fn.unary(ins[0], s));
  } else {
    cm_array **outs = PyMem_Calloc((size_t)(n ? n : 1), sizeof(cm_array *));
    Py_ssize_t i = 0;
    if (!outs) PyErr_NoMemory();
    for (; outs && i < n; i++)
      if (!(outs[i] = op->fn.unary(ins[i], s))) break;
    if (outs && i == n) {
      res = pa_wrap_arrays(outs, (int)n, false);
    } else if (outs) {
      pycm_raise();
      for (Py_ssize_t j = 0; j < i; j++) cm_release(outs[j]);
    }
    PyMem_Free(outs);
  }
  pa_release_arrays(ins, n);
  return res;
}
#define ATLEAST_ROW(name, spec, sig, fn) PYCM_ROW(name, spec, sig, impl_atleast, unary, fn)

/* as_strided(a, /, shape=None, strides=None, offset=0): shape defaults to
 * a's, strides to the row-major strides of shape. */
static PyObject *impl_as_strided(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_array *a = v[0].arr;
  const int32_t *shape = a->shape;
  int ndim = a->ndim;
  if (!v[1].none) {
    if (!pa_is_seq(v[1].obj)) return pa_value_type_error(op, c);
    shape = v[1].shape;
    ndim = v[1].ndim;
  }
  if (v[3].i < 0) return pa_value_type_error(op, c); /* MLX: size_t */
  int64_t *strides = NULL, rowmajor[CM_MAX_DIMS];
  Py_ssize_t nstrides;
  if (v[2].none) {
    int64_t st = 1;
    for (int k = ndim - 1; k >= 0; k--) {
      rowmajor[k] = st;
      st *= shape[k];
    }
    nstrides = ndim;
  } else {
    int r = pa_seq_ints64(v[2].obj, INT64_MIN, INT64_MAX, &strides, &nstrides);
    if (r) return r > 0 ? pa_value_type_error(op, c) : NULL;
    if (nstrides > INT32_MAX) {
      PyMem_Free(strides);
      PyErr_SetString(PyExc_ValueError, "[as_strided] Too many strides.");
      return NULL;
    }
  }
  cm_array *res = cm_as_strided(a, ndim, shape, (int)nstrides, strides ? strides : rowmajor,
                                v[3].i, pa_stream(op, c));
  PyMem_Free(strides);
  return pycm_wrap(res);
}

/* view(a: scalar | array, dtype) */
static PyObject *impl_view(const pycm_op *op, pa_call *c) {
  cm_array *a = pa_to_array(c->v[0].obj, -1);
  if (!a) return NULL;
  cm_array *r = cm_view(a, c->v[1].dtype, pa_stream(op, c));
  cm_release(a);
  return pycm_wrap(r);
}

static PyObject *impl_contiguous(const pycm_op *op, pa_call *c) {
  return pycm_wrap(cm_contiguous(c->v[0].arr, c->v[1].b, pa_stream(op, c)));
}

/* slice(a, start_indices, axes, slice_size): a window read at eval time. */
static PyObject *impl_slice(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  if (!pa_is_seq(v[2].obj) || !pa_is_seq(v[3].obj)) return pa_value_type_error(op, c);
  return pycm_wrap(cm_slice_dynamic(v[0].arr, v[1].arr, v[2].ndim, (const int *)v[2].shape,
                                    v[3].ndim, v[3].shape, pa_stream(op, c)));
}

/* slice_update(a, update, start_indices, axes) */
static PyObject *impl_slice_update(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  if (!pa_is_seq(v[3].obj)) return pa_value_type_error(op, c);
  return pycm_wrap(cm_slice_update_dynamic(v[0].arr, v[1].arr, v[2].arr, v[3].ndim,
                                           (const int *)v[3].shape, pa_stream(op, c)));
}

/* ---- the rows ------------------------------------------------------------ */

#define KW_S "*, stream: Stream = None"
#define SIG_S "*, stream: StreamOrDevice = None) -> array"

pycm_op pycm_ops_shape[] = {
    PYCM_CALL("reshape", "a: array, /, shape: shape, " KW_S,
              "(a: array, /, shape: Sequence[int], " SIG_S, impl_reshape),
    INT2_ROW("flatten", "a: array, /, start_axis: int = 0, end_axis: int = -1, " KW_S,
             "(a: array, /, start_axis: int = 0, end_axis: int = -1, " SIG_S, cm_flatten),
    PYCM_CALL("unflatten", "a: array, /, axis: int, shape: shape, " KW_S,
              "(a: array, /, axis: int, shape: Sequence[int], " SIG_S, impl_unflatten),
    PYCM_CALL("squeeze", "a: array, /, axis: axes | None = None, " KW_S,
              "(a: array, /, axis: None | int | Sequence[int] = None, " SIG_S, impl_squeeze),
    PYCM_CALL("expand_dims", "a: array, /, axis: axes, " KW_S,
              "(a: array, /, axis: int | Sequence[int], " SIG_S, impl_expand_dims),
    TRANSPOSE_ROW("transpose", "a: array, /, axes: axes | None = None, " KW_S,
                  "(a: array, /, axes: Sequence[int] | None = None, " SIG_S, cm_transpose),
    TRANSPOSE_ROW("permute_dims", "a: array, /, axes: axes | None = None, " KW_S,
                  "(a: array, /, axes: Sequence[int] | None = None, " SIG_S, cm_permute_dims),
    INT2_ROW("swapaxes", "a: array, /, axis1: int, axis2: int, " KW_S,
             "(a: array, /, axis1 : int, axis2: int, " SIG_S, cm_swapaxes),
    INT2_ROW("moveaxis", "a: array, /, source: int, destination: int, " KW_S,
             "(a: array, /, source: int, destination: int, " SIG_S, cm_moveaxis),
    PYCM_CALL("broadcast_to", "a: arraylike, /, shape: shape, " KW_S,
              "(a: scalar | array, /, shape: Sequence[int], " SIG_S, impl_broadcast_to),
    PYCM_CALL("broadcast_arrays", "*arrays: object, stream: Stream = None",
              "(*arrays: array, stream: StreamOrDevice = None) -> tuple[array, ...]",
              impl_broadcast_arrays),
    PYCM_CALL("broadcast_shapes", "*shapes: object", "(*shapes: Sequence[int]) -> tuple[int]",
              impl_broadcast_shapes),
    ATLEAST_ROW("atleast_1d", "*arys: object, stream: Stream = None",
                "(*arys: array, stream: StreamOrDevice = None) -> array | list[array]",
                cm_atleast_1d),
    ATLEAST_ROW("atleast_2d", "*arys: object, stream: Stream = None",
                "(*arys: array, stream: StreamOrDevice = None) -> array | list[array]",
                cm_atleast_2d),
    ATLEAST_ROW("atleast_3d", "*arys: object, stream: Stream = None",
                "(*arys: array, stream: StreamOrDevice = None) -> array | list[array]",
                cm_atleast_3d),
    PYCM_CALL("as_strided",
              "a: array, /, shape: shape | None = None, strides: object | None = None, "
              "offset: int = 0, " KW_S,
              "(a: array, /, shape: Sequence[int] | None = None, strides: Sequence[int] | None = "
              "None, offset: int = 0, " SIG_S,
              impl_as_strided),
    PYCM_CALL("view", "a: arraylike, /, dtype: Dtype, " KW_S,
              "(a: scalar | array, dtype: Dtype, stream: StreamOrDevice = None) -> array",
              impl_view),
    PYCM_CALL("contiguous", "a: array, /, allow_col_major: bool = False, " KW_S,
              "(a: array, /, allow_col_major: bool = False, " SIG_S, impl_contiguous),
    PYCM_CALL(
        "slice", "a: array, /, start_indices: array, axes: axes, slice_size: shape, " KW_S,
        "(a: array, start_indices: array, axes: Sequence[int], slice_size: Sequence[int], " SIG_S,
        impl_slice),
    PYCM_CALL("slice_update", "a: array, /, update: array, start_indices: array, axes: axes, " KW_S,
              "(a: array, update: array, start_indices: array, axes: Sequence[int], " SIG_S,
              impl_slice_update),
};
const int pycm_ops_shape_count = sizeof pycm_ops_shape / sizeof pycm_ops_shape[0];
