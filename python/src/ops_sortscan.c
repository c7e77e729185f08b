/* Sorting, selection and cumulative scans: sort, argsort, partition,
 * argpartition, topk, searchsorted, cumsum, cumprod, cummax, cummin,
 * logcumsumexp.
 *
 * axis=None is MLX's "flatten first": the core has a _flat variant of each
 * op, and a row holds both (its fn.sort / fn.select / fn.scan pair). */
#include "ops_lists.h"
#include "ops_tables.h"

/* sort / argsort(a, /, axis=-1) */
static PyObject *impl_sort(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_stream s = pa_stream(op, c);
  if (v[1].none) return pycm_wrap(op->fn.sort.flat(v[0].arr, s));
  return pycm_wrap(op->fn.sort.axis(v[0].arr, (int)v[1].i, s));
}

/* partition / argpartition(a, /, kth, axis=-1), topk(a, /, k, axis=-1) */
static PyObject *impl_select(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_stream s = pa_stream(op, c);
  if (v[2].none) return pycm_wrap(op->fn.select.flat(v[0].arr, (int)v[1].i, s));
  return pycm_wrap(op->fn.select.axis(v[0].arr, (int)v[1].i, (int)v[2].i, s));
}

/* searchsorted(sorted_sequence, values, /, side='left') */
static PyObject *impl_searchsorted(const pycm_op *op, pa_call *c) {
  const char *side;
  int r = pa_str_arg(&c->v[2], "left", &side);
  if (r) return r > 0 ? pa_value_type_error(op, c) : NULL;
  return pycm_wrap(cm_searchsorted(c->v[0].arr, c->v[1].arr, side, pa_stream(op, c)));
}

/* unique(a, /, size, return_index=False, return_inverse=False,
 * return_counts=False, fill_value=None): the values alone, or a tuple of
 * the values and the asked-for arrays in that order.  A scalar fill_value
 * is weak (it takes a's dtype, and must fit an integer one). */
static PyObject *impl_unique(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_array *a = v[0].arr, *fill = NULL, *out[4];
  if (!v[5].none && !(fill = pycm_to_array_weak(v[5].obj, a))) return NULL;
  int rc = cm_unique(a, (int)v[1].i, fill, out, pa_stream(op, c));
  cm_release(fill);
  if (rc) return pycm_raise();
  bool want[4] = {true, v[2].b, v[3].b, v[4].b};
  int n = want[1] + want[2] + want[3];
  if (!n) {
    for (int i = 1; i < 4; i++) cm_release(out[i]);
    return pycm_wrap(out[0]);
  }
  PyObject *res = PyTuple_New(n + 1);
  for (int i = 0, k = 0; i < 4; i++) {
    if (!want[i] || !res) {
      cm_release(out[i]);
      continue;
    }
    PyObject *o = pycm_wrap(out[i]); /* takes the reference */
    if (o) PyTuple_SET_ITEM(res, k++, o);
    else Py_CLEAR(res);
  }
  return res;
}

/* ---- scans ---------------------------------------------------------------- */

/* (a, /, axis=None, *, reverse=False, inclusive=True[, dtype=None],
 * stream=None): the module's cumsum/cumprod take dtype (a cast before the
 * scan); the methods and the other scans do not. */
PyObject *pa_impl_scan(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_stream s = pa_stream(op, c);
  bool has_dtype = op->compiled.n > 4 && op->compiled.p[4].type == PA_DTYPE;
  cm_array *a = cm_retain(v[0].arr);
  if (has_dtype && !v[4].none) {
    cm_array *cast = cm_astype(a, v[4].dtype, s);
    cm_release(a);
    if (!(a = cast)) return pycm_raise();
  }
  cm_array *r = v[1].none ? op->fn.scan.flat(a, v[2].b, v[3].b, s)
                          : op->fn.scan.axis(a, (int)v[1].i, v[2].b, v[3].b, s);
  cm_release(a);
  return pycm_wrap(r);
}

/* ---- the rows ------------------------------------------------------------ */

#define KW_S "*, stream: Stream = None"
#define SIG_S "*, stream: StreamOrDevice = None) -> array"
#define SORT(name)                                                         \
  PYCM_ROW(#name, "a: array, /, axis: int | None = -1, " KW_S,             \
           "(a: array, /, axis: None | int = -1, " SIG_S, impl_sort, sort, \
           {cm_##name, cm_##name##_flat})
#define SELECT(name, k)                                                                    \
  PYCM_ROW(#name, "a: array, /, " k ": int, axis: int | None = -1, " KW_S,                 \
           "(a: array, /, " k ": int, axis: None | int = -1, " SIG_S, impl_select, select, \
           {cm_##name, cm_##name##_flat})
#define SCAN_KW "*, reverse: bool = False, inclusive: bool = True, "
#define SCAN_ROW_DTYPE(name)                                                       \
  PYCM_SCAN(#name,                                                                 \
            "a: array, /, axis: int | None = None, " SCAN_KW                       \
            "dtype: Dtype | None = None, stream: Stream = None",                   \
            "(a: array, /, axis: int | None = None, " SCAN_KW                      \
            "dtype: Dtype | None = None, stream: StreamOrDevice = None) -> array", \
            name)
#define SCAN_ROW_PLAIN(name)                                                                 \
  PYCM_SCAN(#name, "a: array, /, axis: int | None = None, " SCAN_KW "stream: Stream = None", \
            "(a: array, /, axis: int | None = None, " SCAN_KW                                \
            "stream: StreamOrDevice = None) -> array",                                       \
            name)

pycm_op pycm_ops_sortscan[] = {
#define SORT_ROW_AXIS(name) SORT(name),
#define SORT_ROW_KTH(name) SELECT(name, "kth"),
#define SORT_ROW_OWN(name)
#define CM_X(CODE, name, Name, form, out, mlxc, py) SORT_ROW_##py(name)
    CM_SORT_OPS(CM_X) /* the rows of ops/sort_ops.h */
#undef CM_X
    SELECT(topk, "k"),
    PYCM_CALL("searchsorted",
              "sorted_sequence: array, values: array, /, side: object | None = None, " KW_S,
              "(sorted_sequence: array, values: array, /, side: str = 'left', " SIG_S,
              impl_searchsorted),
    PYCM_CALL("unique",
              "a: array, /, size: int, return_index: bool = False, return_inverse: bool = False, "
              "return_counts: bool = False, fill_value: arraylike | None = None, " KW_S,
              "(a: array, /, size: int, return_index: bool = False, return_inverse: bool = "
              "False, return_counts: bool = False, fill_value: scalar | array | None = None, *, "
              "stream: StreamOrDevice = None) -> array | tuple[array, ...]",
              impl_unique),
#define CM_X(CODE, name, Name, dtype, mlxc, py) SCAN_ROW_##py(name),
    CM_SCAN_OPS(CM_X) /* the rows of ops/scan_ops.h */
#undef CM_X
};
const int pycm_ops_sortscan_count = sizeof pycm_ops_sortscan / sizeof pycm_ops_sortscan[0];
