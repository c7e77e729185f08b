/* take, take_along_axis, put_along_axis: the indexing ops' table rows,
 * and pycm_init_indexing, which adds them and the ArrayAt type
 * (indexing_at.c) to the module. */
#include "argparse.h"
#include "init.h"

/* The nanobind-style TypeError from the values that were given. */
static PyObject *given_type_error(const pycm_op *op, const pa_call *c, int n) {
  PyObject *args[PA_MAX_PARAMS];
  int k = 0;
  for (int i = 0; i < n; i++)
    if (c->v[i].given && c->v[i].obj) args[k++] = c->v[i].obj;
  return pa_type_error(op, args, k, NULL);
}

/* take(a, /, indices: int | array, axis: int | None = None, *, stream) */
static PyObject *impl_take(const pycm_op *op, pa_call *c) {
  cm_array *a = c->v[0].arr;
  PyObject *ind = c->v[1].obj;
  bool flat = c->v[2].none;
  int axis = (int)c->v[2].i;
  cm_stream s = pa_stream(op, c);
  if (PyCmArray_Check(ind)) {
    cm_array *idx = ((PyCmArray *)ind)->arr;
    return pycm_wrap(flat ? cm_take_flat(a, idx, s) : cm_take(a, idx, axis, s));
  }
  if (PyFloat_Check(ind) || !PyIndex_Check(ind)) return given_type_error(op, c, 3);
  Py_ssize_t i = PyNumber_AsSsize_t(ind, PyExc_IndexError);
  if (i == -1 && PyErr_Occurred()) return NULL;
  return pycm_wrap(flat ? cm_take_index_flat(a, i, s) : cm_take_index(a, i, axis, s));
}

/* take_along_axis(a, /, indices, axis: int | None = -1, *, stream) */
static PyObject *impl_take_along_axis(const pycm_op *op, pa_call *c) {
  cm_array *a = c->v[0].arr, *idx = c->v[1].arr;
  cm_stream s = pa_stream(op, c);
  if (c->v[2].none) return pycm_wrap(cm_take_along_axis_flat(a, idx, s));
  return pycm_wrap(cm_take_along_axis(a, idx, (int)c->v[2].i, s));
}

/* put_along_axis(a, /, indices, values, axis: int | None = None, *, stream) */
static PyObject *impl_put_along_axis(const pycm_op *op, pa_call *c) {
  cm_array *a = c->v[0].arr, *idx = c->v[1].arr, *vals = c->v[2].arr;
  cm_stream s = pa_stream(op, c);
  if (c->v[3].none) return pycm_wrap(cm_put_along_axis_flat(a, idx, vals, s));
  return pycm_wrap(cm_put_along_axis(a, idx, vals, (int)c->v[3].i, s));
}

static pycm_op pycm_ops_indexing[] = {
    PYCM_CALL(
        "take", "a: array, /, indices: object, axis: int | None = None, *, stream: Stream = None",
        "(a: array, /, indices: int | array, axis: int | None = None, *, stream: StreamOrDevice = "
        "None) -> array",
        impl_take),
    PYCM_CALL(
        "take_along_axis",
        "a: array, /, indices: array, axis: int | None = -1, *, stream: Stream = None",
        "(a: array, /, indices: array, axis: int | None = -1, *, stream: StreamOrDevice = None) "
        "-> array",
        impl_take_along_axis),
    PYCM_CALL(
        "put_along_axis",
        "a: array, /, indices: array, values: array, axis: int | None = None, *, stream: Stream = "
        "None",
        "(a: array, /, indices: array, values: array, axis: int | None = None, *, stream: "
        "StreamOrDevice = None) -> array",
        impl_put_along_axis),
};

int pycm_init_indexing(PyObject *m) {
  int n = (int)(sizeof pycm_ops_indexing / sizeof pycm_ops_indexing[0]);
  if (pa_add_functions(m, pycm_ops_indexing, n)) return -1;
  return pycm_init_array_at(m);
}
