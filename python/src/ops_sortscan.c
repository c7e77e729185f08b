/* Sorting, selection and cumulative scans: sort, argsort, partition,
 * argpartition, topk, searchsorted, cumsum, cumprod, cummax, cummin,
 * logcumsumexp.
 *
 * axis=None is MLX's "flatten first": the core has a _flat variant of each
 * op, found from the row's axis function through the small tables below
 * (so the array-method rows, which only name the axis function, share the
 * families). */
#include "ops_lists.h"

typedef struct fn_pair {
  pycm_fn axis, flat;
} fn_pair;

static pycm_fn flat_of(const fn_pair *pairs, int n, pycm_fn axis) {
  for (int i = 0; i < n; i++)
    if (pairs[i].axis == axis) return pairs[i].flat;
  return NULL;
}

/* ---- sort and selection --------------------------------------------------- */

static const fn_pair sort_pairs[] = {
    {PYCM_FN(cm_sort), PYCM_FN(cm_sort_flat)},
    {PYCM_FN(cm_argsort), PYCM_FN(cm_argsort_flat)},
    {PYCM_FN(cm_partition), PYCM_FN(cm_partition_flat)},
    {PYCM_FN(cm_argpartition), PYCM_FN(cm_argpartition_flat)},
    {PYCM_FN(cm_topk), PYCM_FN(cm_topk_flat)},
};
#define NSORT ((int)(sizeof sort_pairs / sizeof sort_pairs[0]))

/* sort / argsort(a, /, axis=-1) */
static PyObject *impl_sort(const pycm_op *op, pa_call *c) {
  typedef cm_array *(*axis_t)(cm_array *, int, cm_stream);
  typedef cm_array *(*flat_t)(cm_array *, cm_stream);
  const pa_value *v = c->v;
  cm_stream s = pa_stream(op, c);
  if (v[1].none) return pycm_wrap(((flat_t)flat_of(sort_pairs, NSORT, op->fn))(v[0].arr, s));
  return pycm_wrap(((axis_t)op->fn)(v[0].arr, (int)v[1].i, s));
}

/* partition / argpartition(a, /, kth, axis=-1), topk(a, /, k, axis=-1) */
static PyObject *impl_select(const pycm_op *op, pa_call *c) {
  typedef cm_array *(*axis_t)(cm_array *, int, int, cm_stream);
  typedef cm_array *(*flat_t)(cm_array *, int, cm_stream);
  const pa_value *v = c->v;
  cm_stream s = pa_stream(op, c);
  if (v[2].none)
    return pycm_wrap(((flat_t)flat_of(sort_pairs, NSORT, op->fn))(v[0].arr, (int)v[1].i, s));
  return pycm_wrap(((axis_t)op->fn)(v[0].arr, (int)v[1].i, (int)v[2].i, s));
}

/* searchsorted(sorted_sequence, values, /, side='left') */
static PyObject *impl_searchsorted(const pycm_op *op, pa_call *c) {
  const char *side;
  int r = pa_str_arg(&c->v[2], "left", &side);
  if (r) return r > 0 ? pa_value_type_error(op, c) : NULL;
  return pycm_wrap(cm_searchsorted(c->v[0].arr, c->v[1].arr, side, pa_stream(op, c)));
}

/* ---- scans ---------------------------------------------------------------- */

static const fn_pair scan_pairs[] = {
    {PYCM_FN(cm_cumsum), PYCM_FN(cm_cumsum_flat)},
    {PYCM_FN(cm_cumprod), PYCM_FN(cm_cumprod_flat)},
    {PYCM_FN(cm_cummax), PYCM_FN(cm_cummax_flat)},
    {PYCM_FN(cm_cummin), PYCM_FN(cm_cummin_flat)},
    {PYCM_FN(cm_logcumsumexp), PYCM_FN(cm_logcumsumexp_flat)},
};
#define NSCAN ((int)(sizeof scan_pairs / sizeof scan_pairs[0]))

/* (a, /, axis=None, *, reverse=False, inclusive=True[, dtype=None],
 * stream=None): the module's cumsum/cumprod take dtype (a cast before the
 * scan); the methods and the other scans do not. */
PyObject *pa_impl_scan(const pycm_op *op, pa_call *c) {
  typedef cm_array *(*axis_t)(cm_array *, int, bool, bool, cm_stream);
  typedef cm_array *(*flat_t)(cm_array *, bool, bool, cm_stream);
  const pa_value *v = c->v;
  cm_stream s = pa_stream(op, c);
  bool has_dtype = op->compiled.n > 4 && op->compiled.p[4].type == PA_DTYPE;
  cm_array *a = cm_retain(v[0].arr);
  if (has_dtype && !v[4].none) {
    cm_array *cast = cm_astype(a, v[4].dtype, s);
    cm_release(a);
    if (!(a = cast)) return pycm_raise();
  }
  cm_array *r = v[1].none
                    ? ((flat_t)flat_of(scan_pairs, NSCAN, op->fn))(a, v[2].b, v[3].b, s)
                    : ((axis_t)op->fn)(a, (int)v[1].i, v[2].b, v[3].b, s);
  cm_release(a);
  return pycm_wrap(r);
}

/* ---- the rows ------------------------------------------------------------ */

#define KW_S "*, stream: Stream = None"
#define SIG_S "*, stream: StreamOrDevice = None) -> array"
#define SORT(name)                                                                           \
  PYCM_OP(#name, "a: array, /, axis: int | None = -1, " KW_S,                                \
          "(a: array, /, axis: None | int = -1, " SIG_S, impl_sort, cm_##name)
#define SELECT(name, k)                                                                      \
  PYCM_OP(#name, "a: array, /, " k ": int, axis: int | None = -1, " KW_S,                    \
          "(a: array, /, " k ": int, axis: None | int = -1, " SIG_S, impl_select, cm_##name)
#define SCAN_KW "*, reverse: bool = False, inclusive: bool = True, "
#define SCAN_DT(name)                                                                        \
  PYCM_OP(#name,                                                                             \
          "a: array, /, axis: int | None = None, " SCAN_KW                                   \
          "dtype: Dtype | None = None, stream: Stream = None",                               \
          "(a: array, /, axis: int | None = None, " SCAN_KW                                  \
          "dtype: Dtype | None = None, stream: StreamOrDevice = None) -> array",             \
          pa_impl_scan, cm_##name)
#define SCAN(name)                                                                           \
  PYCM_OP(#name, "a: array, /, axis: int | None = None, " SCAN_KW "stream: Stream = None",   \
          "(a: array, /, axis: int | None = None, " SCAN_KW                                  \
          "stream: StreamOrDevice = None) -> array",                                         \
          pa_impl_scan, cm_##name)

pycm_op pycm_ops_sortscan[] = {
    SORT(sort),
    SORT(argsort),
    SELECT(partition, "kth"),
    SELECT(argpartition, "kth"),
    SELECT(topk, "k"),
    PYCM_OP("searchsorted",
            "sorted_sequence: array, values: array, /, side: object | None = None, " KW_S,
            "(sorted_sequence: array, values: array, /, side: str = 'left', " SIG_S,
            impl_searchsorted, 0),
    SCAN_DT(cumsum),
    SCAN_DT(cumprod),
    SCAN(cummax),
    SCAN(cummin),
    SCAN(logcumsumexp),
};
const int pycm_ops_sortscan_count = sizeof pycm_ops_sortscan / sizeof pycm_ops_sortscan[0];
