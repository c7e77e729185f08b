/* The array methods that are ops (x.abs(), x.sum(axis=0), x.reshape(2, 3),
 * ...): rows of the same signature table as the module functions, with
 * `self` as a positional-only first parameter.  CPython hands a method the
 * instance, not a table row, so each row gets a small trampoline generated
 * from one X-macro list. */
#include "argparse.h"
#include "init.h"
#include "ops_lists.h" /* pa_impl_scan, pa_impl_split */

/* ---- families ---------------------------------------------------------- */

/* fn(a, axes, keepdims, s): sum, prod, max, min, all, any, mean,
 * logsumexp, argmax, argmin. */
static PyObject *impl_reduce(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  if (op->compiled.p[1].type == PA_INT && !v[1].none) /* argmax/argmin: one axis */
    return pycm_wrap(op->fn.reduce(v[0].arr, CM_AXIS((int)v[1].i), v[2].b, pa_stream(op, c)));
  return pycm_wrap(op->fn.reduce(v[0].arr, PA_AXES_OF(&v[1]), v[2].b, pa_stream(op, c)));
}

/* var/std(axis=None, keepdims=False, ddof=0, *, correction=None): a given
 * correction replaces ddof (the array API's name for it). */
static PyObject *impl_moment(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  int ddof = v[4].none ? (int)v[3].i : (int)v[4].i;
  return pycm_wrap(op->fn.moment(v[0].arr, PA_AXES_OF(&v[1]), v[2].b, ddof, pa_stream(op, c)));
}

static PyObject *impl_round(const pycm_op *op, pa_call *c) {
  return pycm_wrap(cm_round(c->v[0].arr, (int)c->v[1].i, pa_stream(op, c)));
}

static PyObject *impl_squeeze(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  if (v[1].none) return pycm_wrap(cm_squeeze_all(v[0].arr, pa_stream(op, c)));
  return pycm_wrap(cm_squeeze(v[0].arr, v[1].ndim, (const int *)v[1].shape, pa_stream(op, c)));
}

/* fn(a, int, int, s): swapaxes, moveaxis, flatten. */
static PyObject *impl_int2(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  return pycm_wrap(op->fn.int2(v[0].arr, (int)v[1].i, (int)v[2].i, pa_stream(op, c)));
}

static PyObject *impl_diagonal(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  return pycm_wrap(cm_diagonal(v[0].arr, (int)v[1].i, (int)v[2].i, (int)v[3].i, pa_stream(op, c)));
}

static PyObject *impl_diag(const pycm_op *op, pa_call *c) {
  return pycm_wrap(cm_diag(c->v[0].arr, (int)c->v[1].i, pa_stream(op, c)));
}

static PyObject *impl_view(const pycm_op *op, pa_call *c) {
  return pycm_wrap(cm_view(c->v[0].arr, c->v[1].dtype, pa_stream(op, c)));
}

/* Ints from an int or a sequence of ints; -1 with a TypeError naming what. */
static int int_list(PyObject *o, const char *what, int32_t *out, int *n) {
  PyObject *seq = PyLong_Check(o) ? NULL : PySequence_Fast(o, what);
  Py_ssize_t len = seq ? PySequence_Fast_GET_SIZE(seq) : 1;
  if (!seq && !PyLong_Check(o)) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s must be an int or a sequence of ints, not %s.", what,
                 pa_type_name(o));
    return -1;
  }
  int rc = 0;
  if (len > CM_MAX_DIMS) {
    PyErr_Format(PyExc_ValueError, "%s: at most %d entries are supported.", what, CM_MAX_DIMS);
    rc = -1;
  }
  for (Py_ssize_t i = 0; !rc && i < len; i++) {
    PyObject *x = seq ? PySequence_Fast_GET_ITEM(seq, i) : o;
    long long v = -1;
    if (PyFloat_Check(x) || (!PyLong_Check(x) && !PyIndex_Check(x))) {
      PyErr_Format(PyExc_TypeError, "%s must be an int or a sequence of ints, not %s.", what,
                   pa_type_name(x));
      rc = -1;
    } else {
      PyObject *ix = PyNumber_Index(x);
      v = ix ? PyLong_AsLongLong(ix) : -1;
      Py_XDECREF(ix);
      if (v == -1 && PyErr_Occurred()) rc = -1;
      else if (v < INT32_MIN || v > INT32_MAX) {
        PyErr_Format(PyExc_OverflowError, "Integer value %lld is outside the supported range "
                                          "[-2147483648, 2147483647].", v);
        rc = -1;
      }
    }
    out[i] = (int32_t)v;
  }
  Py_XDECREF(seq);
  *n = (int)len;
  return rc;
}

/* The ints of *args: reshape(2, 3) or reshape((2, 3)). */
static int varargs_ints(const pa_call *c, const char *what, int32_t *out, int *n) {
  if (c->nvarargs == 1 && !PyLong_Check(c->varargs[0]) && PySequence_Check(c->varargs[0]))
    return int_list(c->varargs[0], what, out, n);
  if (c->nvarargs > CM_MAX_DIMS) {
    PyErr_Format(PyExc_ValueError, "%s: at most %d entries are supported.", what, CM_MAX_DIMS);
    return -1;
  }
  for (Py_ssize_t i = 0; i < c->nvarargs; i++) {
    int one;
    if (int_list(c->varargs[i], what, &out[i], &one)) return -1;
    if (one != 1) {
      PyErr_Format(PyExc_TypeError, "%s must be ints or one sequence of ints.", what);
      return -1;
    }
  }
  *n = (int)c->nvarargs;
  return 0;
}

static PyObject *impl_reshape(const pycm_op *op, pa_call *c) {
  int32_t shape[CM_MAX_DIMS];
  int n;
  if (varargs_ints(c, "shape", shape, &n)) return NULL;
  return pycm_wrap(cm_reshape(c->v[0].arr, n, shape, pa_stream(op, c)));
}

/* transpose() reverses the axes; transpose(1, 0, 2) / transpose((1, 0, 2)). */
static PyObject *impl_transpose(const pycm_op *op, pa_call *c) {
  int32_t axes[CM_MAX_DIMS];
  int n;
  if (c->nvarargs == 0) return pycm_wrap(cm_transpose(c->v[0].arr, 0, NULL, pa_stream(op, c)));
  if (varargs_ints(c, "axes", axes, &n)) return NULL;
  return pycm_wrap(cm_transpose(c->v[0].arr, n, (const int *)axes, pa_stream(op, c)));
}

/* ---- the rows ------------------------------------------------------------ */

#define KW_S "*, stream: Stream = None"
#define SIG_S "*, stream: StreamOrDevice = None) -> array"
#define M_SPEC "self: array, /, " KW_S
#define M_SIG "(self, " SIG_S
#define R_SPEC "self: array, /, axis: axes | None = None, keepdims: bool = False, " KW_S
#define R_SIG "(self, axis: int | Sequence[int] | None = None, keepdims: bool = False, " SIG_S
#define ARG_SPEC "self: array, /, axis: int | None = None, keepdims: bool = False, " KW_S
#define ARG_SIG "(self, axis: int | None = None, keepdims: bool = False, " SIG_S
#define SCAN_SPEC                                                                             \
  "self: array, /, axis: int | None = None, *, reverse: bool = False, inclusive: bool = True, " \
  "stream: Stream = None"
#define SCAN_SIG                                                                              \
  "(self, axis: int | None = None, *, reverse: bool = False, inclusive: bool = True, "        \
  "stream: StreamOrDevice = None) -> array"
#define MOM_SPEC                                                                              \
  "self: array, /, axis: axes | None = None, keepdims: bool = False, ddof: int = 0, "        \
  "*, correction: int | None = None, stream: Stream = None"
#define MOM_SIG                                                                               \
  "(self, axis: int | Sequence[int] | None = None, keepdims: bool = False, ddof: int = 0, "   \
  "*, correction: int | None = None, stream: StreamOrDevice = None) -> array"

/* X(python name, spec, sig, family, core function or, for CALL, the impl):
 * the family picks the row macro, which pairs impl and fn's member. */
#define ARRAY_OP_METHODS(X)                                                                      \
  X(abs, M_SPEC, M_SIG, UNARY, cm_abs)                                                           \
  X(conj, M_SPEC, M_SIG, UNARY, cm_conjugate)                                                    \
  X(cos, M_SPEC, M_SIG, UNARY, cm_cos)                                                           \
  X(exp, M_SPEC, M_SIG, UNARY, cm_exp)                                                           \
  X(log, M_SPEC, M_SIG, UNARY, cm_log)                                                           \
  X(log10, M_SPEC, M_SIG, UNARY, cm_log10)                                                       \
  X(log1p, M_SPEC, M_SIG, UNARY, cm_log1p)                                                       \
  X(log2, M_SPEC, M_SIG, UNARY, cm_log2)                                                         \
  X(reciprocal, M_SPEC, M_SIG, UNARY, cm_reciprocal)                                             \
  X(round, "self: array, /, decimals: int = 0, " KW_S, "(self, decimals: int = 0, " SIG_S, CALL, \
    impl_round)                                                                                  \
  X(rsqrt, M_SPEC, M_SIG, UNARY, cm_rsqrt)                                                       \
  X(sin, M_SPEC, M_SIG, UNARY, cm_sin)                                                           \
  X(sqrt, M_SPEC, M_SIG, UNARY, cm_sqrt)                                                         \
  X(square, M_SPEC, M_SIG, UNARY, cm_square)                                                     \
  X(all, R_SPEC, R_SIG, REDUCE, cm_all)                                                          \
  X(any, R_SPEC, R_SIG, REDUCE, cm_any)                                                          \
  X(max, R_SPEC, R_SIG, REDUCE, cm_max)                                                          \
  X(min, R_SPEC, R_SIG, REDUCE, cm_min)                                                          \
  X(prod, R_SPEC, R_SIG, REDUCE, cm_prod)                                                        \
  X(sum, R_SPEC, R_SIG, REDUCE, cm_sum)                                                          \
  X(mean, R_SPEC, R_SIG, REDUCE, cm_mean)                                                        \
  X(logsumexp, R_SPEC, R_SIG, REDUCE, cm_logsumexp)                                              \
  X(argmax, ARG_SPEC, ARG_SIG, REDUCE, cm_argmax)                                                \
  X(argmin, ARG_SPEC, ARG_SIG, REDUCE, cm_argmin)                                                \
  X(cumsum, SCAN_SPEC, SCAN_SIG, SCAN, cumsum)                                                   \
  X(cumprod, SCAN_SPEC, SCAN_SIG, SCAN, cumprod)                                                 \
  X(cummax, SCAN_SPEC, SCAN_SIG, SCAN, cummax)                                                   \
  X(cummin, SCAN_SPEC, SCAN_SIG, SCAN, cummin)                                                   \
  X(logcumsumexp, SCAN_SPEC, SCAN_SIG, SCAN, logcumsumexp)                                       \
  X(var, MOM_SPEC, MOM_SIG, MOMENT, cm_var)                                                      \
  X(std, MOM_SPEC, MOM_SIG, MOMENT, cm_std)                                                      \
  X(squeeze, "self: array, /, axis: axes | None = None, " KW_S,                                  \
    "(self, axis: int | Sequence[int] | None = None, " SIG_S, CALL, impl_squeeze)                \
  X(swapaxes, "self: array, /, axis1: int, axis2: int, " KW_S,                                   \
    "(self, axis1: int, axis2: int, " SIG_S, INT2, cm_swapaxes)                                  \
  X(moveaxis, "self: array, /, source: int, destination: int, " KW_S,                            \
    "(self, source: int, destination: int, " SIG_S, INT2, cm_moveaxis)                           \
  X(flatten, "self: array, /, start_axis: int = 0, end_axis: int = -1, " KW_S,                   \
    "(self, start_axis: int = 0, end_axis: int = -1, " SIG_S, INT2, cm_flatten)                  \
  X(diagonal,                                                                                    \
    "self: array, /, offset: int = 0, axis1: int = 0, axis2: int = 1, stream: Stream = None",    \
    "(self, offset: int = 0, axis1: int = 0, axis2: int = 1, stream: StreamOrDevice = None) "    \
    "-> array",                                                                                  \
    CALL, impl_diagonal)                                                                         \
  X(diag, "self: array, /, k: int = 0, " KW_S, "(self, k: int = 0, " SIG_S, CALL, impl_diag)     \
  X(split, "self: array, /, indices_or_sections: object, axis: int = 0, " KW_S,                  \
    "(self, indices_or_sections: int | tuple[int, ...], axis: int = 0, *, stream: "              \
    "StreamOrDevice = None) -> list[array]",                                                     \
    CALL, pa_impl_split)                                                                         \
  X(view, "self: array, /, dtype: Dtype, " KW_S, "(self, dtype: Dtype, " SIG_S, CALL, impl_view) \
  X(reshape, "self: array, /, *shape: object, stream: Stream = None",                            \
    "(self, *shape, stream: StreamOrDevice = None) -> array", CALL, impl_reshape)                \
  X(transpose, "self: array, /, *axes: object, stream: Stream = None",                           \
    "(self, *axes, stream: StreamOrDevice = None) -> array", CALL, impl_transpose)

enum {
#define X(name, spec, sig, family, fn) M_##name,
  ARRAY_OP_METHODS(X)
#undef X
      M_COUNT
};

#define M_ROW_UNARY PYCM_UNARY
#define M_ROW_REDUCE(name, spec, sig, fn) PYCM_ROW(name, spec, sig, impl_reduce, reduce, fn)
#define M_ROW_MOMENT(name, spec, sig, fn) PYCM_ROW(name, spec, sig, impl_moment, moment, fn)
#define M_ROW_INT2(name, spec, sig, fn) PYCM_ROW(name, spec, sig, impl_int2, int2, fn)
#define M_ROW_SCAN PYCM_SCAN
#define M_ROW_CALL PYCM_CALL
static pycm_op method_rows[] = {
#define X(name, spec, sig, family, fn) M_ROW_##family(#name, spec, sig, fn),
    ARRAY_OP_METHODS(X)
#undef X
};

/* The array type may be readied before pycm_init_ops runs, so the rows
 * compile on first use as well as at init. */
static int methods_compiled;

static int compile_methods(void) {
  if (methods_compiled) return 0;
  if (pa_compile_table(method_rows, M_COUNT)) return -1;
  methods_compiled = 1;
  return 0;
}

static PyObject *method_call(int i, PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames) {
  if (compile_methods()) return NULL;
  return pa_dispatch_method(&method_rows[i], self, args, nargs, kwnames);
}

#define X(name, spec, sig, family, fn)                                                    \
  static PyObject *method_##name(PyObject *self, PyObject *const *args, Py_ssize_t nargs, \
                                 PyObject *kwnames) {                                     \
    return method_call(M_##name, self, args, nargs, kwnames);                             \
  }
ARRAY_OP_METHODS(X)
#undef X

PyMethodDef pycm_array_op_methods[] = {
#define X(name, spec, sig, family, fn) {#name, PYCM_METH_FAST_KW(method_##name), #name sig},
    ARRAY_OP_METHODS(X)
#undef X
        {NULL, NULL, 0, NULL},
};

int pycm_init_array_op_methods(PyObject *m) {
  if (compile_methods()) return -1;
  return pa_register_signatures(m, method_rows, M_COUNT, "array.");
}
