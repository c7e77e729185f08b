/* .mlxfn states of the reductions, scans and sorts (reduce.c, scan.c,
 * sort.c; the contract is export_desc.h).  MLX's reductions keep the
 * reduced axes: a node without keepdims is written with MLX's shape and
 * the writer's Squeeze bridge drops them. */
#include <math.h>
#include <string.h>

#include "ops/binary.h"
#include "ops/ops.h"
#include "ops/reduce.h"
#include "ops/shape.h"
#include "ops/sort.h"
#include "ops/ternary.h"
#include "primitives/export_desc.h"
#include "primitives/reduce.h"
#include "primitives/rules_util.h"
#include "primitives/scan.h"
#include "primitives/sort.h"

/* MLX's Reduce::ReduceType: And, Or, Sum, Prod, Min, Max. */
static const cm_reduce_op reduce_ops[6] = {CM_REDUCE_AND,  CM_REDUCE_OR,  CM_REDUCE_SUM,
                                           CM_REDUCE_PROD, CM_REDUCE_MIN, CM_REDUCE_MAX};
/* MLX's Scan::ReduceType: Max, Min, Sum, Prod, LogAddExp. */
static const int scan_ops[5] = {CM_SCAN_MAX, CM_SCAN_MIN, CM_SCAN_SUM, CM_SCAN_PROD,
                                CM_SCAN_LOGADDEXP};

/* MLX's node keeps the reduced axes: record its shape, squeeze them after. */
static int keep_axes(const cm_array *a, uint64_t mask, bool keepdims, xsave *sv) {
  if (keepdims) return 0;
  const cm_array *in = a->in[0];
  sv->reshape = true, sv->squeeze = mask;
  sv->mlx_ndim = in->ndim;
  for (int i = 0; i < in->ndim; i++) sv->mlx_shape[i] = (mask >> i & 1) ? 1 : in->shape[i];
  return 0;
}

static int save_reduce(const cm_array *a, xw *w, xsave *sv) {
  const cm_reduce_params *r = cm_reduce_params_of(a);
  int32_t v[CM_MAX_DIMS];
  int k = CM_XINDEX_OF(reduce_ops, r->op);
  if (k < 0) return cm_export_unsupported(a);
  xw_i32(w, k);
  xw_ints(w, cm_export_mask_axes(r->axes, a->in[0]->ndim, v), v);
  sv->name = "Reduce";
  return keep_axes(a, r->axes, r->keepdims, sv);
}
CM_XLOAD(load_reduce) {
  int32_t k = xr_i32(r), ax[CM_MAX_DIMS];
  int n = xr_ints(r, ax, CM_MAX_DIMS);
  if (k < 0 || k >= CM_XCOUNT(reduce_ops)) xr_bad(r, "an invalid reduction");
  CM_XMEASURE;
  CM_XINPUTS(1, 1);
  if (cm_xload_check_axes(n, ax, in[0]->ndim)) return -1;
  uint64_t mask = 0;
  for (int i = 0; i < n; i++) mask |= (uint64_t)1 << ax[i];
  return cm_xload_one(cm_reduce_mask(reduce_ops[k], in[0], mask, true, s), o, outs);
}
const cm_export_desc cm_export_reduce = {.save = save_reduce,
                                         CM_EXPORT_NAMES({"Reduce", load_reduce, 0})};

/* MLX's ArgReduce: (ArgMin 0 / ArgMax 1, axis). */
static int save_arg_reduce(const cm_array *a, xw *w, xsave *sv) {
  const cm_reduce_params *r = cm_reduce_params_of(a);
  int32_t v[CM_MAX_DIMS];
  int ax = cm_export_mask_axes(r->axes, a->in[0]->ndim, v) == 1 ? v[0] : 0;
  xw_i32(w, r->op == CM_REDUCE_ARGMAX ? 1 : 0), xw_i32(w, ax);
  sv->name = "ArgReduce";
  return keep_axes(a, r->axes, r->keepdims, sv);
}
CM_XLOAD(load_arg_reduce) {
  int32_t k = xr_i32(r), ax = xr_i32(r);
  if (k < 0 || k > 1) xr_bad(r, "an invalid ArgReduce");
  CM_XMEASURE;
  CM_XINPUTS(1, 1);
  return cm_xload_one(
      cm_reduce(k ? CM_REDUCE_ARGMAX : CM_REDUCE_ARGMIN, in[0], CM_AXIS(ax), true, s), o, outs);
}
const cm_export_desc cm_export_arg_reduce = {.save = save_arg_reduce,
                                             CM_EXPORT_NAMES({"ArgReduce", load_arg_reduce, 0})};

static int save_logsumexp(const cm_array *a, xw *w, xsave *sv) {
  (void)w;
  const cm_reduce_params *r = cm_reduce_params_of(a);
  sv->name = "LogSumExp";
  return keep_axes(a, r->axes, r->keepdims, sv);
}
CM_XLOAD(load_logsumexp) {
  CM_XMEASURE;
  CM_XINPUTS(1, 1);
  return cm_xload_one(cm_logsumexp_last(in[0], true, s), o, outs);
}
const cm_export_desc cm_export_logsumexp = {.save = save_logsumexp,
                                            CM_EXPORT_NAMES({"LogSumExp", load_logsumexp, 0})};

/* MLX's (precise): cmlx computes in float32 either way. */
static int make_softmax(const cm_xval *v, cm_array *const *in, int nin, const xout *o,
                        cm_array **outs, cm_stream s) {
  (void)nin;
  int last = -1;
  return cm_xload_one(cm_softmax(in[0], cm_axes_list(&last, 1), v[0].b, s), o, outs);
}
const cm_export_desc cm_export_softmax = {.name = "Softmax",
                                          .fields =
                                              (const cm_export_field[]){CM_XF_NODE(CM_XF_FALSE)},
                                          .nfields = 1,
                                          .nin_lo = 1,
                                          .nin_hi = 1,
                                          .make = make_softmax};

/* CmlxMedian: the axes, keepdims (read only: export_lower.c writes MLX's
 * sort composition for float inputs). */
static int save_median(const cm_array *a, xw *w, xsave *sv) {
  const cm_reduce_params *r = cm_reduce_params_of(a);
  int32_t ax[CM_MAX_DIMS];
  xw_ints(w, cm_export_mask_axes(r->axes, a->in[0]->ndim, ax), ax), xw_bool(w, r->keepdims != 0);
  return sv->name = "CmlxMedian", 0;
}
CM_XLOAD(load_median) {
  int32_t ax[CM_MAX_DIMS];
  int n = xr_ints(r, ax, CM_MAX_DIMS);
  bool keep = xr_bool(r);
  CM_XMEASURE;
  if (nin != 1) return cm_xload_bad("wrong input count");
  uint64_t mask = 0;
  for (int i = 0; i < n; i++) {
    if (ax[i] < 0 || ax[i] >= in[0]->ndim) return cm_xload_bad("CmlxMedian's axes");
    mask |= (uint64_t)1 << ax[i];
  }
  return cm_xload_one(cm_median_mask(in[0], mask, keep, s), o, outs);
}
static cm_array *scalar(cm_rt *t, double v, cm_dtype dt) {
  return RT(t, cm_array_scalar_double(v, dt));
}

/* MLX's median: the reduced axes moved last and flattened, sorted, the
 * middle element (or the mean of the middle two) sliced out, NaN where
 * the lane holds one, squeezed (expanded back with keepdims).  The node's
 * input already has the result's float dtype. */
static cm_array *lower_median(const cm_array *a) {
  if (a->nin != 1 || !cm_dtype_is_float(a->dtype)) return NULL;
  const cm_reduce_params *p = cm_reduce_params_of(a);
  cm_array *x = a->in[0];
  cm_stream s = a->stream;
  int nd = x->ndim, perm[CM_MAX_DIMS], red[CM_MAX_DIMS], nk = 0, nr = 0;
  for (int i = 0; i < nd; i++)
    if (!(p->axes >> i & 1)) perm[nk++] = i;
  for (int i = 0; i < nd; i++)
    if (p->axes >> i & 1) red[nr] = i, perm[nk + nr++] = i;
  if (!nr) return NULL;
  cm_rt t = {0};
  cm_array *tr = RT(&t, cm_transpose(x, nd, perm, s));
  cm_array *flat = t.fail ? NULL : RT(&t, cm_flatten(tr, nk, nd - 1, s));
  cm_array *sorted = t.fail ? NULL : RT(&t, cm_sort(flat, -1, s));
  if (t.fail) return cm_rt_done(&t, NULL, &tr), NULL;
  int n = flat->ndim, len = flat->shape[n - 1], mp = len / 2;
  int32_t b[CM_MAX_DIMS] = {0}, e[CM_MAX_DIMS];
  memcpy(e, flat->shape, sizeof(int32_t) * (size_t)n);
  b[n - 1] = mp, e[n - 1] = mp + 1;
  cm_array *m = RT(&t, cm_slice(sorted, n, b, n, e, 0, NULL, s));
  if (len % 2 == 0 && !t.fail) {
    b[n - 1] = mp - 1, e[n - 1] = mp;
    cm_array *lo = RT(&t, cm_slice(sorted, n, b, n, e, 0, NULL, s));
    cm_array *sum = t.fail ? NULL : RT(&t, cm_add(m, lo, s));
    cm_array *half = scalar(&t, 0.5, x->dtype);
    m = t.fail ? NULL : RT(&t, cm_multiply(sum, half, s));
  }
  cm_array *ne = t.fail ? NULL : RT(&t, cm_not_equal(flat, flat, s));
  cm_array *any = t.fail ? NULL : RT(&t, cm_reduce(CM_REDUCE_OR, ne, CM_AXIS(-1), true, s));
  cm_array *nan = scalar(&t, NAN, x->dtype);
  cm_array *w = t.fail ? NULL : RT(&t, cm_where(any, nan, m, s));
  int last = n - 1;
  cm_array *r = t.fail ? NULL : RT(&t, cm_squeeze(w, 1, &last, s)), *out;
  if (p->keepdims && !t.fail) r = RT(&t, cm_expand_dims(r, nr, red, s));
  return cm_rt_done(&t, r, &out) ? NULL : out;
}

const cm_export_desc cm_export_median = {
    .save = save_median, .lower = lower_median, CM_EXPORT_NAMES({"CmlxMedian", load_median, 0})};

/* ---- Scan: (op, axis, reverse, inclusive) ---- */

static int save_scan(const cm_array *a, xw *w, xsave *sv) {
  const cm_scan_params *p = cm_scan_params_of(a);
  xw_i32(w, CM_XINDEX_OF(scan_ops, p->op)), xw_i32(w, p->axis);
  xw_bool(w, p->reverse), xw_bool(w, p->inclusive);
  return sv->name = "Scan", 0;
}
CM_XLOAD(load_scan) {
  int32_t k = xr_i32(r), ax = xr_i32(r);
  bool rev = xr_bool(r), incl = xr_bool(r);
  if (k < 0 || k >= CM_XCOUNT(scan_ops)) xr_bad(r, "an invalid scan");
  CM_XMEASURE;
  CM_XINPUTS(1, 1);
  return cm_xload_one(cm_scan((cm_scan_op)scan_ops[k], in[0], ax, rev, incl, s), o, outs);
}
const cm_export_desc cm_export_scan = {.save = save_scan, CM_EXPORT_NAMES({"Scan", load_scan, 0})};

/* ---- Sort: one MLX primitive per op code, under the op table's Name ---- */

static int save_sort(const cm_array *a, xw *w, xsave *sv) {
  const cm_sort_params *p = cm_sort_params_of(a);
  switch (p->op) {
  case CM_SORT_SORT:
  case CM_SORT_ARGSORT: xw_i32(w, p->axis); break;
  case CM_SORT_PARTITION:
  case CM_SORT_ARGPARTITION: xw_i32(w, p->kth), xw_i32(w, p->axis); break;
  case CM_SORT_SEARCHSORTED: xw_bool(w, p->right); break;
  default: return cm_export_unsupported(a);
  }
  return sv->name = cm_sort_op_name(p->op), 0;
}
/* The code is the op: Sort, ArgSort (the axis), Partition, ArgPartition
 * (kth and the axis), SearchSorted (right). */
CM_XLOAD(load_sort) {
  bool part = code == CM_SORT_PARTITION || code == CM_SORT_ARGPARTITION;
  bool right = code == CM_SORT_SEARCHSORTED ? xr_bool(r) : false;
  int32_t kth = part ? xr_i32(r) : 0, ax = code != CM_SORT_SEARCHSORTED ? xr_i32(r) : 0;
  CM_XMEASURE;
  if (code == CM_SORT_SEARCHSORTED) {
    CM_XINPUTS(2, 2);
    return cm_xload_one(cm_searchsorted(in[0], in[1], right ? "right" : "left", s), o, outs);
  }
  CM_XINPUTS(1, 1);
  cm_array *y = code == CM_SORT_SORT        ? cm_sort(in[0], ax, s)
                : code == CM_SORT_ARGSORT   ? cm_argsort(in[0], ax, s)
                : code == CM_SORT_PARTITION ? cm_partition(in[0], kth, ax, s)
                                            : cm_argpartition(in[0], kth, ax, s);
  return cm_xload_one(y, o, outs);
}
static int sort_op_names(cm_export_name *out, int max) {
  int n = 0;
  for (int op = 0; op < CM_SORT_NUM_OPS && n < max; op++)
    out[n++] = (cm_export_name){cm_sort_op_name((cm_sort_op)op), load_sort, op};
  return n;
}
const cm_export_desc cm_export_sort = {.save = save_sort, .op_names = sort_op_names};
