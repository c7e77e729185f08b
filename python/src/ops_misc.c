/* where, clip and the dtype questions (result_type, can_cast, isdtype).
 * issubdtype lives with the dtype objects (dtype.c). */
#include "argparse.h"
#include "ops_tables.h"
#include "ops/dtype_query.h"

/* where(condition, x, y, /, *, stream): x and y weak against each other. */
static PyObject *impl_where(const pycm_op *op, pa_call *c) {
  cm_array *cond = pa_to_array(c->v[0].obj, -1);
  if (!cond) return NULL;
  cm_array *x, *y;
  if (pa_binary_operands(c->v[1].obj, c->v[2].obj, &x, &y)) {
    cm_release(cond);
    return NULL;
  }
  cm_array *r = cm_where(cond, x, y, pa_stream(op, c));
  cm_release(cond);
  cm_release(x);
  cm_release(y);
  return pycm_wrap(r);
}

/* A clip bound: None is unbounded, scalars are weak against a. */
static int clip_bound(const pa_value *v, const cm_array *a, cm_array **out) {
  *out = NULL;
  if (v->none) return 0;
  if (!pa_is_array_operand(v->obj)) {
    pa_to_array(v->obj, -1); /* raises MLX's "Invalid type" ValueError */
    return -1;
  }
  *out = pycm_to_array_weak(v->obj, a);
  return *out ? 0 : -1;
}

/* clip(a, /, a_min, a_max, *, stream) */
static PyObject *impl_clip(const pycm_op *op, pa_call *c) {
  cm_array *a = c->v[0].arr, *lo, *hi;
  if (clip_bound(&c->v[1], a, &lo)) return NULL;
  if (clip_bound(&c->v[2], a, &hi)) {
    cm_release(lo);
    return NULL;
  }
  cm_array *r = cm_clip(a, lo, hi, pa_stream(op, c));
  if (lo) cm_release(lo);
  if (hi) cm_release(hi);
  return pycm_wrap(r);
}

/* An array's or a Dtype's dtype; 1 when o is neither. */
static int dtype_of(PyObject *o, cm_dtype *out) {
  if (PyCmArray_Check(o)) {
    *out = ((PyCmArray *)o)->arr->dtype;
    return 0;
  }
  if (PyObject_TypeCheck(o, &PyCmDtype_Type)) return pycm_dtype_arg(o, out) ? -1 : 0;
  return 1;
}

/* result_type(*arrays_and_dtypes) -> Dtype */
static PyObject *impl_result_type(const pycm_op *op, pa_call *c) {
  (void)op;
  cm_dtype stack[16], *ts = stack;
  if (c->nvarargs > 16 && !(ts = PyMem_Malloc(sizeof(cm_dtype) * (size_t)c->nvarargs)))
    return PyErr_NoMemory();
  PyObject *res = NULL;
  for (Py_ssize_t i = 0; i < c->nvarargs; i++) {
    int r = dtype_of(c->varargs[i], &ts[i]);
    if (r > 0) PyErr_SetString(PyExc_ValueError, "[result_type] Inputs must be arrays or dtypes.");
    if (r) goto done;
  }
  cm_dtype out;
  if (cm_result_type((int)c->nvarargs, ts, &out)) {
    pycm_raise();
    goto done;
  }
  res = pa_dtype_object(out);
done:
  if (ts != stack) PyMem_Free(ts);
  return res;
}

/* can_cast(from_, to) -> bool */
static PyObject *impl_can_cast(const pycm_op *op, pa_call *c) {
  (void)op;
  cm_dtype from;
  int r = dtype_of(c->v[0].obj, &from);
  if (r > 0)
    PyErr_SetString(PyExc_ValueError, "[can_cast] `from_` must be an array or a dtype.");
  if (r) return NULL;
  return PyBool_FromLong(cm_can_cast(from, c->v[1].dtype));
}

static PyObject *isdtype_kind_error(void) {
  PyErr_SetString(PyExc_ValueError, "[isdtype] `kind` must be a dtype, a string, or a tuple of "
                                    "dtypes and strings.");
  return NULL;
}

/* One entry of isdtype's kind: 1 match, 0 no match, -1 error. */
static int isdtype_one(cm_dtype t, PyObject *k) {
  cm_isdtype_arg arg = {0};
  if (PyUnicode_Check(k)) {
    arg.is_name = true;
    arg.name = PyUnicode_AsUTF8(k);
    if (!arg.name) return -1;
  } else if (PyObject_TypeCheck(k, &PyCmDtype_Type)) {
    if (pycm_dtype_arg(k, &arg.dtype)) return -1;
  } else {
    isdtype_kind_error();
    return -1;
  }
  bool out;
  if (cm_isdtype(t, &arg, 1, &out)) {
    pycm_raise();
    return -1;
  }
  return out;
}

/* isdtype(dtype, kind) -> bool; a tuple matches at its first matching
 * entry, so later entries are not checked (as in MLX). */
static PyObject *impl_isdtype(const pycm_op *op, pa_call *c) {
  (void)op;
  cm_dtype t = c->v[0].dtype;
  PyObject *k = c->v[1].obj;
  if (!PyTuple_Check(k)) {
    int r = isdtype_one(t, k);
    return r < 0 ? NULL : PyBool_FromLong(r);
  }
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(k); i++) {
    int r = isdtype_one(t, PyTuple_GET_ITEM(k, i));
    if (r) return r < 0 ? NULL : PyBool_FromLong(1);
  }
  return PyBool_FromLong(0);
}

pycm_op pycm_ops_misc[] = {
    PYCM_CALL("where",
              "condition: arraylike, x: arraylike, y: arraylike, /, *, stream: Stream = None",
              "(condition: scalar | array, x: scalar | array, y: scalar | array, /, *, stream: "
              "StreamOrDevice = None) -> array",
              impl_where),
    PYCM_CALL(
        "clip",
        "a: array, /, a_min: arraylike | None, a_max: arraylike | None, *, stream: Stream = None",
        "(a: array, /, a_min: scalar | array | None, a_max: scalar | array | None, *, stream: "
        "StreamOrDevice = None) -> array",
        impl_clip),
    PYCM_CALL("result_type", "*arrays_and_dtypes: object",
              "(*arrays_and_dtypes: array | Dtype) -> Dtype", impl_result_type),
    PYCM_CALL("can_cast", "from_: object, to: Dtype", "(from_: array | Dtype, to: Dtype) -> bool",
              impl_can_cast),
    PYCM_CALL("isdtype", "dtype: Dtype, kind: object",
              "(dtype: Dtype, kind: Dtype | str | tuple[Dtype | str, ...]) -> bool", impl_isdtype),
};
const int pycm_ops_misc_count = sizeof pycm_ops_misc / sizeof pycm_ops_misc[0];
