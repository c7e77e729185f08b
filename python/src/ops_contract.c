/* Contractions as module functions (ops/contract.h): tensordot, einsum,
 * einsum_path, gather_mm, segmented_mm and block_masked_mm.  Arrays only,
 * as in MLX. */
#include "ops/contract.h"
#include "ops_tables.h"
#include "ops_lists.h"

/* axes: an int, or two sequences of ints (a tuple or list of them). */
static PyObject *impl_tensordot(const pycm_op *op, pa_call *c) {
  cm_array *a = c->v[0].arr, *b = c->v[1].arr;
  cm_stream s = pa_stream(op, c);
  PyObject *axes = c->v[2].obj;
  if (!c->v[2].given) return pycm_wrap(cm_tensordot_axis(a, b, 2, s));
  if (PyLong_Check(axes)) {
    int overflow = 0;
    long v = PyLong_AsLongAndOverflow(axes, &overflow);
    if (overflow || v < INT32_MIN || v > INT32_MAX) return pa_value_type_error(op, c);
    if (v == -1 && PyErr_Occurred()) return NULL;
    return pycm_wrap(cm_tensordot_axis(a, b, (int)v, s));
  }
  if (!PyList_Check(axes) && !PyTuple_Check(axes)) return pa_value_type_error(op, c);
  Py_ssize_t n = PySequence_Size(axes);
  int32_t *lists[2] = {NULL, NULL};
  int counts[2] = {0, 0};
  for (Py_ssize_t i = 0; i < n && i < 2; i++) {
    PyObject *item = PySequence_GetItem(axes, i);
    if (!item) return NULL;
    int r = pa_is_seq(item) ? pa_seq_ints32(item, &lists[i], &counts[i]) : 1;
    Py_DECREF(item);
    if (r) {
      PyMem_Free(lists[0]), PyMem_Free(lists[1]);
      return r > 0 ? pa_value_type_error(op, c) : NULL;
    }
  }
  PyObject *res = NULL;
  if (n != 2) {
    PyErr_SetString(PyExc_ValueError, "[tensordot] axes must be a list of two lists.");
  } else if (counts[0] != counts[1]) {
    PyErr_SetString(PyExc_ValueError, "[tensordot] axes must have the same size.");
  } else {
    res = pycm_wrap(cm_tensordot(a, b, counts[0], lists[0], lists[1], s));
  }
  PyMem_Free(lists[0]), PyMem_Free(lists[1]);
  return res;
}

/* The subscripts (a str) and the operands (arrays) of einsum(_path). */
static int einsum_args(const pycm_op *op, pa_call *c, const char **subs, cm_array ***ins,
                       Py_ssize_t *n) {
  if (!PyUnicode_Check(c->v[0].obj)) return pa_value_type_error(op, c), -1;
  *subs = PyUnicode_AsUTF8(c->v[0].obj);
  if (!*subs) return -1;
  int r = pa_varargs_arrays(c, ins, n);
  if (r > 0) pa_value_type_error(op, c);
  return r ? -1 : 0;
}

static PyObject *impl_einsum(const pycm_op *op, pa_call *c) {
  const char *subs;
  cm_array **ins;
  Py_ssize_t n;
  if (einsum_args(op, c, &subs, &ins, &n)) return NULL;
  PyObject *r = pycm_wrap(cm_einsum(subs, ins, (int)n, pa_stream(op, c)));
  pa_release_arrays(ins, n);
  return r;
}

/* einsum_path -> (list of tuples of positions, summary str) */
static PyObject *impl_einsum_path(const pycm_op *op, pa_call *c) {
  const char *subs;
  cm_array **ins;
  Py_ssize_t n;
  if (einsum_args(op, c, &subs, &ins, &n)) return NULL;
  cm_einsum_path p;
  int rc = cm_einsum_path_compute(subs, ins, (int)n, &p);
  pa_release_arrays(ins, n);
  if (rc) return pycm_raise();
  PyObject *steps = PyList_New(p.nsteps);
  for (int i = 0; steps && i < p.nsteps; i++) {
    PyObject *t = PyTuple_New(p.npos[i]);
    for (int k = 0; t && k < p.npos[i]; k++) {
      PyObject *v = PyLong_FromLong(p.pos[i][k]);
      if (!v) Py_CLEAR(t);
      else PyTuple_SET_ITEM(t, k, v);
    }
    if (!t) Py_CLEAR(steps);
    else PyList_SET_ITEM(steps, i, t);
  }
  PyObject *res = steps ? Py_BuildValue("(Ns)", steps, p.info) : NULL;
  cm_einsum_path_free(&p);
  return res;
}

#define OPT_ARR(v) ((v).none ? NULL : (v).arr)

static PyObject *impl_gather_mm(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  return pycm_wrap(
      cm_gather_mm(v[0].arr, v[1].arr, OPT_ARR(v[2]), OPT_ARR(v[3]), v[4].b, pa_stream(op, c)));
}

static PyObject *impl_segmented_mm(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  return pycm_wrap(cm_segmented_mm(v[0].arr, v[1].arr, v[2].arr, pa_stream(op, c)));
}

static PyObject *impl_block_masked_mm(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  return pycm_wrap(cm_block_masked_mm(v[0].arr, v[1].arr, (int)v[2].i, OPT_ARR(v[3]), OPT_ARR(v[4]),
                                      OPT_ARR(v[5]), pa_stream(op, c)));
}

pycm_op pycm_ops_contract[] = {
    PYCM_CALL("tensordot",
              "a: array, b: array, /, axes: object | None = None, *, stream: Stream = None",
              "(a: array, b: array, /, axes: int | list[Sequence[int]] = 2, *, stream: "
              "StreamOrDevice = None) -> array",
              impl_tensordot),
    PYCM_CALL("einsum", "subscripts: object, *operands: object, stream: Stream = None",
              "(subscripts: str, *operands, stream: StreamOrDevice = None) -> array", impl_einsum),
    PYCM_CALL("einsum_path", "subscripts: object, *operands: object",
              "(subscripts: str, *operands)", impl_einsum_path),
    PYCM_CALL("gather_mm",
              "a: array, b: array, /, lhs_indices: array | None = None, rhs_indices: array | None "
              "= None, *, sorted_indices: bool = False, stream: Stream = None",
              "(a: array, b: array, /, lhs_indices: array | None = None, rhs_indices: array | "
              "None = None, *, sorted_indices: bool = False, stream: StreamOrDevice = None) -> "
              "array",
              impl_gather_mm),
    PYCM_CALL("segmented_mm", "a: array, b: array, /, segments: array, *, stream: Stream = None",
              "(a: array, b: array, /, segments: array, *, stream: StreamOrDevice = None) -> "
              "array",
              impl_segmented_mm),
    PYCM_CALL("block_masked_mm",
              "a: array, b: array, /, block_size: int = 64, mask_out: array | None = None, "
              "mask_lhs: array | None = None, mask_rhs: array | None = None, *, stream: Stream = "
              "None",
              "(a: array, b: array, /, block_size: int = 64, mask_out: array | None = None, "
              "mask_lhs: array | None = None, mask_rhs: array | None = None, *, stream: "
              "StreamOrDevice = None) -> array",
              impl_block_masked_mm),
};
const int pycm_ops_contract_count = sizeof pycm_ops_contract / sizeof pycm_ops_contract[0];
