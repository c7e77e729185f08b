/* The names MLX 0.32 adds for the Python array API standard (trunc, flip,
 * matrix_transpose, vecdot, minmax, and the aliases acos, pow, empty, ...),
 * and depends.  The ops are composed in the core (ops/array_api.h); here
 * are their signature rows, and the aliases, which are the same function
 * objects under a second name, as in MLX. */
#include "ops_lists.h"
#include "init.h"
#include "ops_tables.h"

/* flip(a, /, axis=None, *, stream): None flips every axis. */
static PyObject *impl_flip(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  int n = v[1].none ? -1 : v[1].ndim;
  return pycm_wrap(cm_flip(v[0].arr, n, (const int *)v[1].shape, pa_stream(op, c)));
}

/* vecdot(a, b, /, *, axis=-1, stream) */
static PyObject *impl_vecdot(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  return pycm_wrap(cm_vecdot(v[0].arr, v[1].arr, (int)v[2].i, pa_stream(op, c)));
}

/* minmax(a, /, axis=None, keepdims=False, *, stream) -> (min, max) */
static PyObject *impl_minmax(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_array *outs[2];
  if (cm_minmax(v[0].arr, PA_AXES_OF(&v[1]), v[2].b, &outs[0], &outs[1], pa_stream(op, c)))
    return pycm_raise();
  return pa_wrap_arrays(outs, 2, true);
}

/* One argument of depends: an array (*single set) or a sequence of arrays
 * (a new vector; 1 when it is neither). */
static int depends_arg(PyObject *o, cm_array ***arrs, Py_ssize_t *n, bool *single) {
  *single = PyCmArray_Check(o);
  if (*single) {
    *arrs = PyMem_Malloc(sizeof(cm_array *));
    if (!*arrs) return PyErr_NoMemory(), -1;
    (*arrs)[0] = cm_retain(((PyCmArray *)o)->arr);
    *n = 1;
    return 0;
  }
  return pa_seq_arrays(o, arrs, n);
}

/* depends(inputs, dependencies): a list back when inputs was a sequence,
 * the one output when it was an array. */
static PyObject *impl_depends(const pycm_op *op, pa_call *c) {
  cm_array **ins = NULL, **deps = NULL;
  Py_ssize_t nin = 0, ndeps = 0;
  bool single, unused;
  PyObject *res = NULL;
  int r = depends_arg(c->v[0].obj, &ins, &nin, &single);
  if (r == 0) r = depends_arg(c->v[1].obj, &deps, &ndeps, &unused);
  if (r > 0) pa_value_type_error(op, c);
  if (r) goto done;
  if (nin > INT32_MAX || ndeps > INT32_MAX) {
    PyErr_SetString(PyExc_ValueError, "[depends] Too many arrays.");
    goto done;
  }
  cm_array **outs = PyMem_Malloc(sizeof(cm_array *) * (size_t)(nin ? nin : 1));
  if (!outs) {
    PyErr_NoMemory();
    goto done;
  }
  if (cm_depends((int)nin, ins, (int)ndeps, deps, CM_STREAM_DEFAULT, outs)) pycm_raise();
  else if (single) res = pycm_wrap(outs[0]);
  else res = pa_wrap_arrays(outs, (int)nin, false);
  PyMem_Free(outs);
done:
  pa_release_arrays(ins, nin);
  pa_release_arrays(deps, ndeps);
  return res;
}

#define KW_S "*, stream: Stream = None"
#define SIG_S "*, stream: StreamOrDevice = None) -> array"

pycm_op pycm_ops_array_api[] = {
    PYCM_UNARY("trunc", "a: array, /, " KW_S, "(a: array, /, " SIG_S, cm_trunc),
    PYCM_UNARY("matrix_transpose", "a: array, /, " KW_S, "(a: array, /, " SIG_S,
               cm_matrix_transpose),
    PYCM_CALL("flip", "a: array, /, axis: axes | None = None, " KW_S,
              "(a: array, /, axis: None | int | Sequence[int] = None, " SIG_S, impl_flip),
    /* displayed keyword-only, but MLX's binding takes axis by position too */
    PYCM_CALL("vecdot", "a: array, b: array, /, axis: int = -1, *, stream: Stream = None",
              "(a: array, b: array, /, *, axis: int = -1, stream: StreamOrDevice = None) -> array",
              impl_vecdot),
    PYCM_CALL("minmax", "a: array, /, axis: axes | None = None, keepdims: bool = False, " KW_S,
              "(a: array, /, axis: None | int | Sequence[int] = None, keepdims: bool = False, "
              "*, stream: StreamOrDevice = None) -> tuple[array, array]",
              impl_minmax),
    PYCM_CALL("depends", "inputs: object, dependencies: object",
              "(inputs: array | Sequence[array], dependencies: array | Sequence[array]) -> "
              "array | Sequence[array]",
              impl_depends),
};
const int pycm_ops_array_api_count = sizeof pycm_ops_array_api / sizeof pycm_ops_array_api[0];

/* The array API's names for ops MLX already has: the same objects. */
static const char *const aliases[][2] = {
    {"acos", "arccos"},
    {"acosh", "arccosh"},
    {"asin", "arcsin"},
    {"asinh", "arcsinh"},
    {"atan", "arctan"},
    {"atan2", "arctan2"},
    {"atanh", "arctanh"},
    {"bitwise_left_shift", "left_shift"},
    {"bitwise_right_shift", "right_shift"},
    {"cumulative_prod", "cumprod"},
    {"cumulative_sum", "cumsum"},
    {"pow", "power"},
    /* arrays are never uninitialised in MLX: empty is zeros */
    {"empty", "zeros"},
    {"empty_like", "zeros_like"},
};

int pycm_add_array_api_aliases(PyObject *m) {
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++) {
    PyObject *f = PyObject_GetAttrString(m, aliases[i][1]);
    if (!f || PyModule_AddObject(m, aliases[i][0], f)) {
      Py_XDECREF(f);
      return -1;
    }
  }
  return 0;
}
