/* Saving primitive states in .mlxfn files: for each cmlx primitive the
 * MLX primitive it is (its factory name, and the state MLX's state()
 * returns, serialised in order), with the bridges of export_impl.h where
 * the two differ.  The loaders that read states back are export_load.c.
 *
 * Ops cmlx has as one primitive where MLX composes several (isnan,
 * reciprocal, round with decimals, ...) are saved under names that start
 * with "Cmlx": cmlx reads them back, MLX reports it cannot deserialise
 * them. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/conv.h"
#include "ops/fast.h"
#include "ops/fft.h"
#include "ops/hadamard.h"
#include "ops/ops.h"
#include "ops/random.h"
#include "primitives/binary.h"
#include "primitives/conv.h"
#include "primitives/count.h"
#include "primitives/creation.h"
#include "primitives/custom_kernel.h"
#include "primitives/divmod.h"
#include "primitives/fast.h"
#include "primitives/fft.h"
#include "primitives/gather_mm.h"
#include "primitives/hadamard.h"
#include "primitives/indexing.h"
#include "primitives/layout.h"
#include "primitives/linalg.h"
#include "primitives/matmul.h"
#include "primitives/quantized.h"
#include "primitives/random.h"
#include "primitives/reduce.h"
#include "primitives/scan.h"
#include "primitives/shape.h"
#include "primitives/sort.h"
#include "primitives/ternary.h"
#include "primitives/unary.h"
#include "transforms/export_impl.h"

#define P(T, a) ((const T *)(a)->params)

int cm_export_unsupported(const cm_array *a) {
  char buf[64];
  return cm_error(CM_ERR_VALUE, "[export_function] Unable to serialize primitive %s",
                  cm_export_display_name(a, buf, sizeof buf));
}

/* ---- op codes <-> MLX enums ---- */

/* MLX's unary primitives that have no state, by cmlx code. */
static const char *mlx_unary(cm_unary_op op) {
  switch (op) {
  case CM_UNARY_ABS: return "Abs";
  case CM_UNARY_NEGATIVE: return "Negative";
  case CM_UNARY_SIGN: return "Sign";
  case CM_UNARY_SQUARE: return "Square";
  case CM_UNARY_EXP: return "Exp";
  case CM_UNARY_EXPM1: return "Expm1";
  case CM_UNARY_LOG1P: return "Log1p";
  case CM_UNARY_SIN: return "Sin";
  case CM_UNARY_COS: return "Cos";
  case CM_UNARY_TAN: return "Tan";
  case CM_UNARY_ARCSIN: return "ArcSin";
  case CM_UNARY_ARCCOS: return "ArcCos";
  case CM_UNARY_ARCTAN: return "ArcTan";
  case CM_UNARY_SINH: return "Sinh";
  case CM_UNARY_COSH: return "Cosh";
  case CM_UNARY_TANH: return "Tanh";
  case CM_UNARY_ARCSINH: return "ArcSinh";
  case CM_UNARY_ARCCOSH: return "ArcCosh";
  case CM_UNARY_ARCTANH: return "ArcTanh";
  case CM_UNARY_SIGMOID: return "Sigmoid";
  case CM_UNARY_ERF: return "Erf";
  case CM_UNARY_ERFINV: return "ErfInv";
  case CM_UNARY_FLOOR: return "Floor";
  case CM_UNARY_CEIL: return "Ceil";
  case CM_UNARY_ROUND: return "Round";
  case CM_UNARY_LOGICAL_NOT: return "LogicalNot";
  case CM_UNARY_REAL: return "Real";
  case CM_UNARY_IMAG: return "Imag";
  case CM_UNARY_CONJ: return "Conjugate";
  default: return NULL;
  }
}

static const char *mlx_binary(cm_binary_op op) {
  switch (op) {
  case CM_BINARY_ADD: return "Add";
  case CM_BINARY_SUBTRACT: return "Subtract";
  case CM_BINARY_MULTIPLY: return "Multiply";
  case CM_BINARY_DIVIDE: return "Divide";
  case CM_BINARY_REMAINDER: return "Remainder";
  case CM_BINARY_POWER: return "Power";
  case CM_BINARY_MAXIMUM: return "Maximum";
  case CM_BINARY_MINIMUM: return "Minimum";
  case CM_BINARY_ARCTAN2: return "ArcTan2";
  case CM_BINARY_LOGADDEXP: return "LogAddExp";
  case CM_BINARY_NOT_EQUAL: return "NotEqual";
  case CM_BINARY_LESS: return "Less";
  case CM_BINARY_LESS_EQUAL: return "LessEqual";
  case CM_BINARY_GREATER: return "Greater";
  case CM_BINARY_GREATER_EQUAL: return "GreaterEqual";
  case CM_BINARY_LOGICAL_AND: return "LogicalAnd";
  case CM_BINARY_LOGICAL_OR: return "LogicalOr";
  default: return NULL;
  }
}

/* MLX's BitwiseBinary::Op: And, Or, Xor, LeftShift, RightShift. */
const cm_binary_op cm_export_bitwise_ops[5] = {CM_BINARY_BITWISE_AND, CM_BINARY_BITWISE_OR,
                                               CM_BINARY_BITWISE_XOR, CM_BINARY_LEFT_SHIFT,
                                               CM_BINARY_RIGHT_SHIFT};
/* MLX's Reduce::ReduceType: And, Or, Sum, Prod, Min, Max. */
const cm_reduce_op cm_export_reduce_ops[6] = {CM_REDUCE_AND,  CM_REDUCE_OR,  CM_REDUCE_SUM,
                                              CM_REDUCE_PROD, CM_REDUCE_MIN, CM_REDUCE_MAX};
/* MLX's Scan::ReduceType: Max, Min, Sum, Prod, LogAddExp. */
const int cm_export_scan_ops[5] = {CM_SCAN_MAX, CM_SCAN_MIN, CM_SCAN_SUM, CM_SCAN_PROD,
                                   CM_SCAN_LOGADDEXP};
/* MLX's Scatter::ReduceType: Max, Min, Sum, Prod, None. */
const cm_scatter_op cm_export_scatter_ops[5] = {CM_SCATTER_MAX, CM_SCATTER_MIN, CM_SCATTER_SUM,
                                                CM_SCATTER_PROD, CM_SCATTER_NONE};
const char *const cm_export_qmodes[4] = {"affine", "mxfp4", "mxfp8", "nvfp4"};

static int index_of(const int *table, int n, int v) {
  for (int i = 0; i < n; i++)
    if (table[i] == v) return i;
  return -1;
}
#define INDEX_OF(t, v) index_of((const int *)(t), (int)(sizeof(t) / sizeof(t)[0]), (int)(v))
#define COUNT(t) ((int)(sizeof(t) / sizeof(t)[0]))

static int mask_axes(uint64_t mask, int ndim, int32_t *axes) {
  int n = 0;
  for (int i = 0; i < ndim && i < 64; i++)
    if (mask >> i & 1) axes[n++] = i;
  return n;
}

/* ---- saving --------------------------------------------------------------- */

static int save_reduce_like(const cm_array *a, uint64_t mask, bool keepdims, xsave *sv) {
  if (keepdims) return 0;
  const cm_array *in = a->in[0];
  sv->reshape = true, sv->squeeze = mask;
  sv->mlx_ndim = in->ndim;
  for (int i = 0; i < in->ndim; i++) sv->mlx_shape[i] = (mask >> i & 1) ? 1 : in->shape[i];
  return 0;
}

int cm_export_save_state(const cm_array *node, xw *w, xsave *sv) {
  const cm_array *a = node->sib ? node->sib->out[0] : node;
  const cm_prim *p = a->prim;
  int32_t v[CM_MAX_DIMS] = {0};
  memset(sv, 0, sizeof *sv);
  if (p == &cm_prim_unary) {
    const cm_unary_params *u = P(cm_unary_params, a);
    sv->real = u->op == CM_UNARY_ABS && a->in[0]->dtype == CM_COMPLEX64;
    if ((sv->name = mlx_unary(u->op))) return 0;
    if (u->op == CM_UNARY_LOG || u->op == CM_UNARY_LOG2 || u->op == CM_UNARY_LOG10) {
      xw_i32(w, u->op == CM_UNARY_LOG2 ? 0 : u->op == CM_UNARY_LOG10 ? 1 : 2);
      return sv->name = "Log", 0;
    }
    if (u->op == CM_UNARY_SQRT || u->op == CM_UNARY_RSQRT) {
      xw_bool(w, u->op == CM_UNARY_RSQRT);
      return sv->name = "Sqrt", 0;
    }
    switch (u->op) { /* MLX's compositions */
    case CM_UNARY_RECIPROCAL:
      sv->scalar = sv->scalar_first = true, sv->value = 1.0;
      return sv->name = "Divide", 0;
    case CM_UNARY_DEGREES:
    case CM_UNARY_RADIANS:
      sv->scalar = true, sv->value = u->op == CM_UNARY_DEGREES ? 180.0 / M_PI : M_PI / 180.0;
      return sv->name = "Multiply", 0;
    case CM_UNARY_ISPOSINF:
    case CM_UNARY_ISNEGINF:
      if (!cm_dtype_is_float(a->in[0]->dtype)) break;
      sv->scalar = true, sv->value = u->op == CM_UNARY_ISPOSINF ? INFINITY : -INFINITY;
      xw_bool(w, false);
      return sv->name = "Equal", 0;
    case CM_UNARY_ISNAN:
      if (!cm_dtype_is_float(a->in[0]->dtype) && a->in[0]->dtype != CM_COMPLEX64) break;
      sv->self = true;
      return sv->name = "NotEqual", 0;
    default: break;
    }
    xw_i32(w, u->op);
    xw_i32(w, u->decimals);
    xw_f32(w, u->nan), xw_f32(w, u->posinf), xw_f32(w, u->neginf);
    return sv->name = "CmlxUnary", 0;
  }
  if (p == &cm_prim_binary) {
    cm_binary_op op = P(cm_binary_params, a)->op;
    if ((sv->name = mlx_binary(op))) return 0;
    if (op == CM_BINARY_EQUAL) return xw_bool(w, false), sv->name = "Equal", 0;
    int k = INDEX_OF(cm_export_bitwise_ops, op);
    if (k >= 0) return xw_i32(w, k), sv->name = "BitwiseBinary", 0;
    if (op == CM_BINARY_FLOOR_DIVIDE) return sv->name = "FloorDivide", 0;
    xw_i32(w, op);
    return sv->name = "CmlxBinary", 0;
  }
  if (p == &cm_prim_stop_gradient) return sv->name = "StopGradient", 0;
  if (p == &cm_prim_astype) return xw_dtype(w, a->dtype), sv->name = "AsType", 0;
  if (p == &cm_prim_broadcast) return xw_ints(w, a->ndim, a->shape), sv->name = "Broadcast", 0;
  if (p == &cm_prim_broadcast_axes) { /* MLX's ignore_axes: the last nignore, from the end */
    int k = P(cm_broadcast_axes_params, a)->nignore;
    for (int i = 0; i < k; i++) v[i] = i - k;
    return xw_ints(w, k, v), sv->name = "BroadcastAxes", 0;
  }
  if (p == &cm_prim_number_of_elements) {
    const cm_count_params *c = P(cm_count_params, a);
    int n = mask_axes(c->axes, a->in[0]->ndim, v);
    xw_ints(w, n, v), xw_bool(w, c->inverted), xw_dtype(w, (cm_dtype)c->dtype);
    return sv->name = "NumberOfElements", 0;
  }
  if (p == &cm_prim_full) return sv->name = "Full", 0;
  if (p == &cm_prim_copy) return sv->name = "Copy", 0;
  if (p == &cm_prim_select) return sv->name = "Select", 0;
  if (p == &cm_prim_matmul) return sv->name = "Matmul", 0;
  if (p == &cm_prim_divmod) return sv->name = "DivMod", 0;
  if (p == &cm_prim_reshape) { /* the shape asked for, -1 included, as MLX's shape_ */
    const cm_reshape_params *r = P(cm_reshape_params, a);
    return xw_ints(w, r->ndim, r->shape), sv->name = "Reshape", 0;
  }
  if (p == &cm_prim_addmm) {
    xw_f32(w, P(cm_matmul_params, a)->alpha), xw_f32(w, P(cm_matmul_params, a)->beta);
    return sv->name = "AddMM", 0;
  }
  if (p == &cm_prim_flatten) {
    xw_i32(w, P(cm_flatten_params, a)->start_axis), xw_i32(w, P(cm_flatten_params, a)->end_axis);
    return sv->name = "Flatten", 0;
  }
  if (p == &cm_prim_unflatten) {
    int ax = P(cm_unflatten_params, a)->axis, k = a->ndim - a->in[0]->ndim + 1;
    xw_i32(w, ax);
    xw_ints(w, k, a->shape + ax);
    return sv->name = "Unflatten", 0;
  }
  if (p == &cm_prim_squeeze) {
    int n = mask_axes(P(cm_axes_mask_params, a)->mask, a->in[0]->ndim, v);
    return xw_ints(w, n, v), sv->name = "Squeeze", 0;
  }
  if (p == &cm_prim_expand_dims) {
    int n = mask_axes(P(cm_axes_mask_params, a)->mask, a->ndim, v);
    return xw_ints(w, n, v), sv->name = "ExpandDims", 0;
  }
  if (p == &cm_prim_transpose) {
    for (int i = 0; i < a->ndim; i++) v[i] = P(cm_transpose_params, a)->perm[i];
    return xw_ints(w, a->ndim, v), sv->name = "Transpose", 0;
  }
  if (p == &cm_prim_slice) {
    const cm_slice_params *s = P(cm_slice_params, a);
    const cm_array *in = a->in[0];
    int32_t st[CM_MAX_DIMS], en[CM_MAX_DIMS], sd[CM_MAX_DIMS];
    for (int i = 0; i < in->ndim; i++) st[i] = 0, en[i] = in->shape[i], sd[i] = 1;
    for (int k = 0; k < s->n; k++) {
      const cm_slice_axis *x = &s->ax[k];
      st[x->axis] = x->start, sd[x->axis] = x->step;
      en[x->axis] = x->start + x->step * x->len;
    }
    xw_ints(w, in->ndim, st), xw_ints(w, in->ndim, en), xw_ints(w, in->ndim, sd);
    return sv->name = "Slice", 0;
  }
  if (p == &cm_prim_slice_update || p == &cm_prim_pad) {
    /* both are a window of the larger array (the output for Pad) */
    const cm_slice_params *q = P(cm_slice_params, a);
    const cm_array *big = p == &cm_prim_pad ? a : a->in[0];
    int32_t st[CM_MAX_DIMS], en[CM_MAX_DIMS], sd[CM_MAX_DIMS], lo[CM_MAX_DIMS], hi[CM_MAX_DIMS];
    for (int i = 0; i < big->ndim; i++) st[i] = 0, en[i] = big->shape[i], sd[i] = 1;
    for (int k = 0; k < q->n; k++) {
      const cm_slice_axis *x = &q->ax[k];
      st[x->axis] = x->start, sd[x->axis] = x->step, en[x->axis] = x->start + x->step * x->len;
    }
    if (p == &cm_prim_slice_update) {
      xw_i32(w, 4); /* MLX's SliceUpdate::None: a plain write */
      xw_ints(w, big->ndim, st), xw_ints(w, big->ndim, en), xw_ints(w, big->ndim, sd);
      return sv->name = "SliceUpdate", 0;
    }
    for (int i = 0; i < big->ndim; i++) {
      if (sd[i] != 1) return cm_export_unsupported(a);
      v[i] = i, lo[i] = st[i], hi[i] = big->shape[i] - en[i];
    }
    xw_ints(w, big->ndim, v), xw_ints(w, big->ndim, lo), xw_ints(w, big->ndim, hi);
    return sv->name = "Pad", 0;
  }
  if (p == &cm_prim_fft) {
    const cm_fft_params *f = P(cm_fft_params, a);
    int64_t ax[CM_MAX_DIMS];
    for (int i = 0; i < f->naxes; i++) ax[i] = f->axes[i];
    xw_i64s(w, f->naxes, ax); /* std::vector<size_t> */
    xw_bool(w, f->inverse), xw_bool(w, f->real), xw_bool(w, false);
    return sv->name = "FFT", 0;
  }
  if (p == &cm_prim_masked_scatter) {
    if (P(cm_masked_params, a)->batch) return sv->name = "MaskedScatter", 0;
    if (a->nin > 7 || a->ndim >= CM_MAX_DIMS) return cm_export_unsupported(a);
    sv->batch = true, sv->mlx_ndim = a->ndim + 1, sv->mlx_shape[0] = 1;
    memcpy(sv->mlx_shape + 1, a->shape, sizeof(int32_t) * (size_t)a->ndim);
    return sv->name = "MaskedScatter", 0;
  }
  if (p == &cm_prim_rms_norm || p == &cm_prim_layer_norm) { /* (fallback, eps) */
    xw_f32(w, P(cm_norm_params, a)->eps);
    return sv->name = p == &cm_prim_rms_norm ? "RMSNorm" : "LayerNorm", 0;
  }
  if (p == &cm_prim_rope) { /* (fallback, dims, traditional, base, scale, forward) */
    const cm_rope_params *q = P(cm_rope_params, a);
    xw_i32(w, q->dims), xw_bool(w, q->traditional), xw_f32(w, q->base), xw_f32(w, q->scale);
    xw_bool(w, q->forward);
    return sv->name = "RoPE", 0;
  }
  if (p == &cm_prim_dynamic_slice || p == &cm_prim_dynamic_slice_update) {
    const cm_array *start = a->in[p == &cm_prim_dynamic_slice ? 1 : 2];
    int n = (int)start->size;
    for (int i = 0; i < n && i < CM_MAX_DIMS; i++) v[i] = P(cm_dynamic_slice_params, a)->axes[i];
    xw_ints(w, n, v);
    if (p == &cm_prim_dynamic_slice_update) return sv->name = "DynamicSliceUpdate", 0;
    xw_ints(w, a->ndim, a->shape);
    return sv->name = "DynamicSlice", 0;
  }
  if (p == &cm_prim_gather_mm) {
    xw_bool(w, P(cm_gather_mm_params, a)->left_sorted);
    xw_bool(w, P(cm_gather_mm_params, a)->right_sorted);
    return sv->name = "GatherMM", 0;
  }
  if (p == &cm_prim_view) return xw_dtype(w, a->dtype), sv->name = "View", 0;
  if (p == &cm_prim_hadamard)
    return xw_f32(w, P(cm_hadamard_params, a)->scale), sv->name = "Hadamard", 0;
  if (p == &cm_prim_as_strided) {
    const cm_as_strided_params *q = P(cm_as_strided_params, a);
    xw_ints(w, a->ndim, a->shape), xw_i64s(w, q->ndim, q->strides);
    xw_u64(w, (uint64_t)q->offset);
    return sv->name = "AsStrided", 0;
  }
  if (p == &cm_prim_concatenate)
    return xw_i32(w, P(cm_concatenate_params, a)->axis), sv->name = "Concatenate", 0;
  if (p == &cm_prim_reduce || p == &cm_prim_arg_reduce || p == &cm_prim_logsumexp) {
    const cm_reduce_params *r = P(cm_reduce_params, a);
    if (p == &cm_prim_logsumexp) sv->name = "LogSumExp";
    else if (p == &cm_prim_arg_reduce) {
      int ax = mask_axes(r->axes, a->in[0]->ndim, v) == 1 ? v[0] : 0;
      xw_i32(w, r->op == CM_REDUCE_ARGMAX ? 1 : 0), xw_i32(w, ax);
      sv->name = "ArgReduce";
    } else {
      int k = INDEX_OF(cm_export_reduce_ops, r->op);
      if (k < 0) return cm_export_unsupported(a);
      xw_i32(w, k);
      xw_ints(w, mask_axes(r->axes, a->in[0]->ndim, v), v);
      sv->name = "Reduce";
    }
    return save_reduce_like(a, r->axes, r->keepdims, sv);
  }
  if (p == &cm_prim_softmax) return xw_bool(w, false), sv->name = "Softmax", 0;
  if (p == &cm_prim_scan) {
    const cm_scan_params *s = P(cm_scan_params, a);
    xw_i32(w, INDEX_OF(cm_export_scan_ops, s->op)), xw_i32(w, s->axis);
    xw_bool(w, s->reverse), xw_bool(w, s->inclusive);
    return sv->name = "Scan", 0;
  }
  if (p == &cm_prim_sort) {
    const cm_sort_params *s = P(cm_sort_params, a);
    switch (s->op) {
    case CM_SORT_SORT: return xw_i32(w, s->axis), sv->name = "Sort", 0;
    case CM_SORT_ARGSORT: return xw_i32(w, s->axis), sv->name = "ArgSort", 0;
    case CM_SORT_PARTITION: return xw_i32(w, s->kth), xw_i32(w, s->axis), sv->name = "Partition", 0;
    case CM_SORT_ARGPARTITION:
      return xw_i32(w, s->kth), xw_i32(w, s->axis), sv->name = "ArgPartition", 0;
    case CM_SORT_SEARCHSORTED: return xw_bool(w, s->right), sv->name = "SearchSorted", 0;
    default: return cm_export_unsupported(a);
    }
  }
  if (p == &cm_prim_gather) {
    const cm_gather_params *g = P(cm_gather_params, a);
    for (int i = 0; i < g->naxes; i++) v[i] = g->axes[i];
    xw_ints(w, g->naxes, v);
    xw_ints(w, a->in[0]->ndim, cm_gather_slice_sizes(a, a->in, a->nin));
    return sv->name = "Gather", 0;
  }
  if (p == &cm_prim_scatter) {
    const cm_scatter_params *g = P(cm_scatter_params, a);
    for (int i = 0; i < g->naxes; i++) v[i] = g->axes[i];
    xw_i32(w, INDEX_OF(cm_export_scatter_ops, g->op));
    xw_ints(w, g->naxes, v);
    return sv->name = "Scatter", 0;
  }
  if (p == &cm_prim_gather_axis)
    return xw_i32(w, P(cm_axis_index_params, a)->axis), sv->name = "GatherAxis", 0;
  if (p == &cm_prim_scatter_axis) {
    const cm_axis_index_params *g = P(cm_axis_index_params, a);
    xw_i32(w, g->op == CM_SCATTER_SUM ? 0 : 1), xw_i32(w, g->axis);
    return sv->name = "ScatterAxis", 0;
  }
  if (p == &cm_prim_conv) {
    const cm_conv_params *c = P(cm_conv_params, a);
    if (c->kind != CM_CONV_FORWARD) return cm_export_unsupported(a);
    int32_t l[5][CM_CONV_MAX_SPATIAL];
    for (int i = 0; i < c->ndim; i++) {
      l[0][i] = c->ax[i].stride, l[1][i] = c->ax[i].pad_lo, l[2][i] = c->ax[i].pad_hi;
      l[3][i] = c->ax[i].kdil, l[4][i] = c->ax[i].idil;
    }
    for (int k = 0; k < 5; k++) xw_ints(w, c->ndim, l[k]);
    xw_i32(w, c->groups), xw_bool(w, c->flip);
    return sv->name = "Convolution", 0;
  }
  if (p == &cm_prim_quantized_matmul) {
    const cm_quant_params *q = P(cm_quant_params, a);
    if (q->has_global) return cm_export_unsupported(a);
    xw_i32(w, q->group_size), xw_i32(w, q->bits), xw_i32(w, q->mode), xw_bool(w, q->transpose);
    return sv->name = "QuantizedMatmul", 0;
  }
  if (p == &cm_prim_gather_qmm || p == &cm_prim_quantize || p == &cm_prim_fp_quantize) {
    const cm_quant_params *q = P(cm_quant_params, a);
    if (q->has_global) return cm_export_save_extra(a, w, sv);
    xw_i32(w, q->group_size), xw_i32(w, q->bits), xw_i32(w, q->mode);
    if (p != &cm_prim_gather_qmm) return xw_bool(w, false), sv->name = "Quantize", 0;
    xw_bool(w, q->transpose), xw_bool(w, q->sorted), xw_bool(w, false);
    return sv->name = "GatherQMM", 0;
  }
  if (p == &cm_prim_svd) return xw_bool(w, P(cm_svd_params, a)->compute_uv), sv->name = "SVD", 0;
  if (p == &cm_prim_qrf) return sv->name = "QRF", 0;
  if (p == &cm_prim_cholesky)
    return xw_bool(w, P(cm_upper_params, a)->upper), sv->name = "Cholesky", 0;
  if (p == &cm_prim_inverse) {
    xw_bool(w, P(cm_inverse_params, a)->tri);
    xw_bool(w, P(cm_inverse_params, a)->tri ? P(cm_inverse_params, a)->upper : true);
    return sv->name = "Inverse", 0;
  }
  if (p == &cm_prim_eig) return xw_bool(w, P(cm_eig_params, a)->vectors), sv->name = "Eig", 0;
  if (p == &cm_prim_eigh) {
    xw_state_str(w, P(cm_eigh_params, a)->upper ? "U" : "L");
    xw_bool(w, P(cm_eigh_params, a)->vectors);
    return sv->name = "Eigh", 0;
  }
  if (p == &cm_prim_random_bits) {
    const cm_random_bits_params *r = P(cm_random_bits_params, a);
    xw_ints(w, a->ndim, a->shape), xw_i32(w, r->width);
    sv->unit = r->unit != 0, sv->upper = r->upper;
    return sv->name = "RandomBits", 0;
  }
  if (p == &cm_prim_custom_kernel) { /* MLX's CustomKernel::state() */
    const cm_custom_kernel_params *k = P(cm_custom_kernel_params, a);
    const uint8_t *infos = cm_custom_kernel_infos(k);
    xw_str(w, cm_custom_kernel_name(k), k->name_len);
    xw_str(w, cm_custom_kernel_source(k), k->source_len);
    for (int i = 0; i < 3; i++) xw_i32(w, k->grid[i]);
    for (int i = 0; i < 3; i++) xw_i32(w, k->threadgroup[i]);
    xw_u64(w, k->ninfos);
    for (size_t i = 0; i < 3 * (size_t)k->ninfos; i++) xw_u8(w, infos[i] != 0);
    xw_bool(w, k->ensure_row_contiguous);
    xw_u8(w, k->has_init);
    if (k->has_init) xw_f32(w, k->init_value);
    xw_u64(w, 0); /* scalar arguments */
    xw_bool(w, k->is_precompiled), xw_i32(w, k->shared_memory), xw_i32(w, k->compile_options);
    return sv->name = "CustomKernel", 0;
  }
  if (p == &cm_prim_arange) {
    const cm_arange_params *r = P(cm_arange_params, a);
    xw_f64(w, r->start), xw_f64(w, r->start + r->step * (double)a->shape[0]), xw_f64(w, r->step);
    return sv->name = "Arange", 0;
  }
  return cm_export_save_extra(a, w, sv);
}
