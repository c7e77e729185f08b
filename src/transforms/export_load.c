/* Loaders for .mlxfn primitive states (see export_prims.c for the
 * writer's side and export_impl.h for the contract): each reads MLX's
 * state for its name and rebuilds the node through cmlx's op
 * constructors, which check every argument (a hostile state is an
 * error, never a bad kernel call).  A loader called with o->n == 0 only
 * reads its state (the reader finds where the state ends that way) and
 * builds nothing. */
#include <stdlib.h>
#include <string.h>

#include "ops/contract.h"
#include "ops/conv.h"
#include "ops/fast.h"
#include "ops/fft.h"
#include "ops/hadamard.h"
#include "ops/linalg.h"
#include "ops/metal_kernel.h"
#include "ops/ops.h"
#include "ops/random.h"
#include "primitives/binary.h"
#include "primitives/conv.h"
#include "primitives/creation.h"
#include "primitives/custom_kernel.h"
#include "primitives/divmod.h"
#include "primitives/fast.h"
#include "primitives/fft.h"
#include "primitives/hadamard.h"
#include "primitives/indexing.h"
#include "primitives/layout.h"
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

#define COUNT(t) ((int)(sizeof(t) / sizeof(t)[0]))

/* ---- loading -------------------------------------------------------------- */

#define MEASURE                                       \
  do {                                                \
    (void)code;                                       \
    if (r->fail) return 0;                            \
    if (!o->n) return 0; /* reading the state only */ \
  } while (0)

/* One output from op result x (NULL: the op's error). */
static int one(cm_array *x, const xout *o, cm_array **outs) {
  if (!x) return -1;
  if (o->n != 1) {
    cm_release(x);
    return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: wrong output count.");
  }
  outs[0] = x;
  return 0;
}

static int need(int nin, int lo, int hi) {
  return nin < lo || nin > hi
             ? cm_error(CM_ERR_VALUE, "[import_function] Invalid file: wrong input count.")
             : 0;
}
#define INPUTS(lo, hi) \
  if (need(nin, lo, hi)) return -1

#define L(fn)                                                                                  \
  static int fn(xr *r, int code, cm_array *const *in, int nin, const xout *o, cm_array **outs, \
                cm_stream s)

static const struct {
  const char *name;
  cm_unary_op op;
} unary_names[] = {
    {"Abs", CM_UNARY_ABS},         {"Negative", CM_UNARY_NEGATIVE},
    {"Sign", CM_UNARY_SIGN},       {"Square", CM_UNARY_SQUARE},
    {"Exp", CM_UNARY_EXP},         {"Expm1", CM_UNARY_EXPM1},
    {"Log1p", CM_UNARY_LOG1P},     {"Sin", CM_UNARY_SIN},
    {"Cos", CM_UNARY_COS},         {"Tan", CM_UNARY_TAN},
    {"ArcSin", CM_UNARY_ARCSIN},   {"ArcCos", CM_UNARY_ARCCOS},
    {"ArcTan", CM_UNARY_ARCTAN},   {"Sinh", CM_UNARY_SINH},
    {"Cosh", CM_UNARY_COSH},       {"Tanh", CM_UNARY_TANH},
    {"ArcSinh", CM_UNARY_ARCSINH}, {"ArcCosh", CM_UNARY_ARCCOSH},
    {"ArcTanh", CM_UNARY_ARCTANH}, {"Sigmoid", CM_UNARY_SIGMOID},
    {"Erf", CM_UNARY_ERF},         {"ErfInv", CM_UNARY_ERFINV},
    {"Floor", CM_UNARY_FLOOR},     {"Ceil", CM_UNARY_CEIL},
    {"Round", CM_UNARY_ROUND},     {"LogicalNot", CM_UNARY_LOGICAL_NOT},
    {"Real", CM_UNARY_REAL},       {"Imag", CM_UNARY_IMAG},
    {"Conjugate", CM_UNARY_CONJ},
};
static const struct {
  const char *name;
  cm_binary_op op;
} binary_names[] = {
    {"Add", CM_BINARY_ADD},
    {"Subtract", CM_BINARY_SUBTRACT},
    {"Multiply", CM_BINARY_MULTIPLY},
    {"Divide", CM_BINARY_DIVIDE},
    {"Remainder", CM_BINARY_REMAINDER},
    {"Power", CM_BINARY_POWER},
    {"Maximum", CM_BINARY_MAXIMUM},
    {"Minimum", CM_BINARY_MINIMUM},
    {"ArcTan2", CM_BINARY_ARCTAN2},
    {"LogAddExp", CM_BINARY_LOGADDEXP},
    {"NotEqual", CM_BINARY_NOT_EQUAL},
    {"Less", CM_BINARY_LESS},
    {"LessEqual", CM_BINARY_LESS_EQUAL},
    {"Greater", CM_BINARY_GREATER},
    {"GreaterEqual", CM_BINARY_GREATER_EQUAL},
    {"LogicalAnd", CM_BINARY_LOGICAL_AND},
    {"LogicalOr", CM_BINARY_LOGICAL_OR},
    {"FloorDivide", CM_BINARY_FLOOR_DIVIDE},
};

/* The unary and binary loaders know their op from the name: the loader
 * table below dispatches on the name to these with the code. */
static int load_unary(cm_unary_op op, cm_array *const *in, int nin, const xout *o, cm_array **outs,
                      cm_stream s) {
  INPUTS(1, 1);
  return one(cm_unary(op, in[0], s), o, outs);
}
static int load_binary(cm_binary_op op, cm_array *const *in, int nin, const xout *o,
                       cm_array **outs, cm_stream s) {
  INPUTS(2, 2);
  return one(cm_binary(op, in[0], in[1], s), o, outs);
}

L(load_log) {
  int32_t base = xr_i32(r);
  if (base < 0 || base > 2) xr_bad(r, "an invalid Log base");
  MEASURE;
  return load_unary(base == 0   ? CM_UNARY_LOG2
                    : base == 1 ? CM_UNARY_LOG10
                                : CM_UNARY_LOG,
                    in, nin, o, outs, s);
}
L(load_sqrt) {
  bool recip = xr_bool(r);
  MEASURE;
  return load_unary(recip ? CM_UNARY_RSQRT : CM_UNARY_SQRT, in, nin, o, outs, s);
}
L(load_cmlx_unary) {
  int32_t op = xr_i32(r), dec = xr_i32(r);
  float nan = xr_f32(r), pinf = xr_f32(r), ninf = xr_f32(r);
  if (op < 0 || op >= CM_UNARY_NUM_OPS) xr_bad(r, "an invalid unary op");
  MEASURE;
  INPUTS(1, 1);
  if (op == CM_UNARY_ROUND_DECIMALS) return one(cm_round(in[0], dec, s), o, outs);
  if (op == CM_UNARY_NAN_TO_NUM)
    return one(cm_nan_to_num(in[0], nan, true, pinf, true, ninf, s), o, outs);
  return load_unary((cm_unary_op)op, in, nin, o, outs, s);
}
L(load_cmlx_binary) {
  int32_t op = xr_i32(r);
  if (op < 0 || op >= CM_BINARY_NUM_OPS) xr_bad(r, "an invalid binary op");
  MEASURE;
  return load_binary((cm_binary_op)op, in, nin, o, outs, s);
}
L(load_equal) {
  bool nan = xr_bool(r);
  MEASURE;
  if (nan) return cm_error(CM_ERR_VALUE, "[import_function] NaNEqual is not supported by cmlx.");
  return load_binary(CM_BINARY_EQUAL, in, nin, o, outs, s);
}
L(load_bitwise) {
  int32_t k = xr_i32(r);
  if (k < 0 || k >= COUNT(cm_export_bitwise_ops)) xr_bad(r, "an invalid bitwise op");
  MEASURE;
  return load_binary(cm_export_bitwise_ops[k], in, nin, o, outs, s);
}
L(load_stop_gradient) {
  MEASURE;
  INPUTS(1, 1);
  return one(cm_stop_gradient(in[0], s), o, outs);
}
L(load_astype) {
  cm_dtype t = xr_dtype(r);
  MEASURE;
  INPUTS(1, 1);
  return one(cm_astype(in[0], t, s), o, outs);
}
/* The common shape of every input (a shapeless broadcast: MLX's and
 * cmlx's Broadcast then has the arrays that give the shape as inputs). */
static int common_shape(cm_array *const *in, int nin, int *nd, int32_t *sh) {
  *nd = in[0]->ndim;
  memcpy(sh, in[0]->shape, sizeof *sh * (size_t)*nd);
  for (int i = 1; i < nin; i++)
    if (cm_broadcast_shapes(*nd, sh, in[i]->ndim, in[i]->shape, nd, sh)) return -1;
  return 0;
}
L(load_broadcast) {
  int32_t sh[CM_MAX_DIMS];
  int n = xr_ints(r, sh, CM_MAX_DIMS);
  MEASURE;
  INPUTS(1, 1 << 20);
  if (nin > 1 && common_shape(in, nin, &n, sh)) return -1;
  return one(cm_broadcast_to(in[0], n, sh, s), o, outs);
}
L(load_number_of_elements) {
  int32_t ax[CM_MAX_DIMS];
  int n = xr_ints(r, ax, CM_MAX_DIMS);
  bool inv = xr_bool(r);
  cm_dtype t = xr_dtype(r);
  MEASURE;
  INPUTS(1, 1);
  double count = 1;
  for (int i = 0; i < n; i++) {
    if (ax[i] < 0 || ax[i] >= in[0]->ndim)
      return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: an axis out of range.");
    count *= in[0]->shape[ax[i]];
  }
  (void)s;
  return one(cm_array_scalar_double(inv ? 1.0 / count : count, t), o, outs);
}
/* MLX's BroadcastAxes::output_shape: the inputs' shapes without the
 * ignored axes (negative, from the end, increasing) broadcast together,
 * then input 0's extents put back at those axes. */
static int broadcast_axes_shape(cm_array *const *in, int nin, const int32_t *ign, int n, int *nd,
                                int32_t *sh) {
  for (int j = 0; j < n; j++)
    if (ign[j] >= 0 || (j && ign[j] <= ign[j - 1]))
      return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: bad BroadcastAxes axes.");
  *nd = 0;
  for (int i = 0; i < nin; i++) {
    if (in[i]->ndim < n || -ign[0] > in[i]->ndim)
      return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: bad BroadcastAxes axes.");
    int32_t kept[CM_MAX_DIMS];
    int nk = 0;
    for (int d = 0; d < in[i]->ndim; d++) {
      bool skip = false;
      for (int j = 0; j < n && !skip; j++) skip = d == in[i]->ndim + ign[j];
      if (!skip) kept[nk++] = in[i]->shape[d];
    }
    if (cm_broadcast_shapes(*nd, sh, nk, kept, nd, sh)) return -1;
  }
  int dims = n + *nd;
  if (dims > CM_MAX_DIMS) return cm_error(CM_ERR_VALUE, "[import_function] Too many dimensions.");
  for (int j = 0; j < n; j++) { /* insert input 0's extent at dims + ign[j] */
    int at = dims + ign[j];
    if (at < 0 || at > *nd) return cm_error(CM_ERR_VALUE, "[import_function] Bad axes.");
    memmove(sh + at + 1, sh + at, sizeof *sh * (size_t)(*nd - at));
    sh[at] = in[0]->shape[in[0]->ndim + ign[j]];
    (*nd)++;
  }
  return 0;
}
L(load_broadcast_axes) {
  int32_t ign[CM_MAX_DIMS], sh[CM_MAX_DIMS];
  int n = xr_ints(r, ign, CM_MAX_DIMS), nd;
  MEASURE;
  INPUTS(2, 1 << 20);
  if (broadcast_axes_shape(in, nin, ign, n, &nd, sh)) return -1;
  return one(cm_broadcast_to(in[0], nd, sh, s), o, outs);
}
L(load_full) {
  MEASURE;
  INPUTS(1, 1);
  if (o->n != 1) return one(NULL, o, outs);
  /* the traced shape, unless the input no longer fits it: a shapeless
   * replay, where Full's input has the output's shape (MLX's Full) */
  int nd = o->ndims[0];
  const int32_t *sh = o->shapes[0];
  int nb;
  int32_t b[CM_MAX_DIMS];
  if (cm_broadcast_shapes(in[0]->ndim, in[0]->shape, nd, sh, &nb, b) ||
      !cm_shape_equal(nb, b, nd, sh)) {
    cm_error_clear();
    nd = in[0]->ndim, sh = in[0]->shape;
  }
  return one(cm_full(nd, sh, in[0], o->dtypes[0], s), o, outs);
}
L(load_copy) {
  MEASURE;
  INPUTS(1, 1);
  return one(cm_op_node(in[0]->dtype, in[0]->ndim, in[0]->shape, &cm_prim_copy, NULL, 0, in, 1, s),
             o, outs);
}
L(load_select) {
  MEASURE;
  INPUTS(3, 3);
  return one(cm_where(in[0], in[1], in[2], s), o, outs);
}
L(load_matmul) {
  MEASURE;
  INPUTS(2, 2);
  return one(cm_matmul(in[0], in[1], s), o, outs);
}
L(load_addmm) {
  float alpha = xr_f32(r), beta = xr_f32(r);
  MEASURE;
  INPUTS(3, 3);
  return one(cm_addmm(in[2], in[0], in[1], alpha, beta, s), o, outs);
}
/* MLX's CustomKernel state (its scalar arguments must be empty: MLX's CPU
 * build records none). */
L(load_custom_kernel) {
  cm_custom_kernel_params h = {0};
  size_t nlen, slen;
  const char *name = xr_str(r, &nlen), *src = xr_str(r, &slen);
  for (int i = 0; i < 3; i++) h.grid[i] = xr_i32(r);
  for (int i = 0; i < 3; i++) h.threadgroup[i] = xr_i32(r);
  uint64_t ninfos = xr_count(r, UINT32_MAX, 3);
  const unsigned char *infos = xr_take(r, 3 * (size_t)ninfos);
  h.ensure_row_contiguous = xr_bool(r);
  if ((h.has_init = xr_bool(r))) h.init_value = xr_f32(r);
  if (xr_u64(r) && !r->fail)
    return cm_error(CM_ERR_VALUE, "[import_function] CustomKernel scalar arguments are not "
                                  "supported.");
  h.is_precompiled = xr_bool(r);
  h.shared_memory = xr_i32(r), h.compile_options = xr_i32(r);
  MEASURE;
  if (nlen > UINT32_MAX || slen > UINT32_MAX)
    return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: CustomKernel state.");
  h.name_len = (uint32_t)nlen, h.source_len = (uint32_t)slen, h.ninfos = (uint32_t)ninfos;
  size_t size = sizeof h + 3 * (size_t)ninfos + nlen + slen;
  unsigned char *p = malloc(size);
  if (!p) return cm_error(CM_ERR_MEMORY, "[import_function] Out of memory.");
  memcpy(p, &h, sizeof h);
  for (size_t i = 0; i < 3 * (size_t)ninfos; i++) p[sizeof h + i] = infos[i] != 0;
  memcpy(p + sizeof h + 3 * (size_t)ninfos, name, nlen);
  memcpy(p + sizeof h + 3 * (size_t)ninfos + nlen, src, slen);
  int rc = cm_custom_kernel(p, size, in, nin, o->ndims, o->shapes, o->dtypes, o->n, s, outs);
  free(p);
  return rc;
}
L(load_divmod) {
  MEASURE;
  INPUTS(2, 2);
  if (o->n != 2) return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: DivMod outputs.");
  return cm_divmod(in[0], in[1], &outs[0], &outs[1], s);
}
L(load_reshape) {
  int32_t sh[CM_MAX_DIMS];
  int n = xr_ints(r, sh, CM_MAX_DIMS);
  MEASURE;
  INPUTS(1, 1);
  return one(cm_reshape(in[0], n, sh, s), o, outs);
}
L(load_flatten) {
  int32_t a = xr_i32(r), b = xr_i32(r);
  MEASURE;
  INPUTS(1, 1);
  return one(cm_flatten(in[0], a, b, s), o, outs);
}
L(load_unflatten) {
  int32_t ax = xr_i32(r), sh[CM_MAX_DIMS];
  int n = xr_ints(r, sh, CM_MAX_DIMS);
  MEASURE;
  INPUTS(1, 1);
  return one(cm_unflatten(in[0], ax, n, sh, s), o, outs);
}
/* Squeeze (code 0), ExpandDims (1) and Transpose (2): a list of axes. */
L(load_axes) {
  int32_t ax[CM_MAX_DIMS];
  int n = xr_ints(r, ax, CM_MAX_DIMS);
  MEASURE;
  INPUTS(1, 1);
  const int *v = (const int *)ax;
  return one(code == 0   ? cm_squeeze(in[0], n, v, s)
             : code == 1 ? cm_expand_dims(in[0], n, v, s)
                         : cm_transpose(in[0], n, v, s),
             o, outs);
}
static int check_axes(int n, const int32_t *ax, int ndim);

/* MLX's absolute slice ends as the op reads them (see load_slice). */
static int slice_args(const cm_array *a, int n, int32_t *st, int32_t *en, const int32_t *sd) {
  if (n != a->ndim)
    return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: a slice of another rank.");
  for (int i = 0; i < n; i++) {
    int32_t d = a->shape[i];
    if (sd[i] == 0 || st[i] < 0 || (d > 0 && st[i] >= d && sd[i] < 0))
      return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: a bad slice.");
    int64_t e = (int64_t)en[i] - d; /* in 64 bits: a file's end can be near INT32_MIN */
    if (en[i] < 0) en[i] = e < INT32_MIN + 1 ? INT32_MIN + 1 : (int32_t)e;
  }
  return 0;
}
L(load_slice_update) {
  int32_t k = xr_i32(r), st[CM_MAX_DIMS], en[CM_MAX_DIMS], sd[CM_MAX_DIMS];
  int n1 = xr_ints(r, st, CM_MAX_DIMS), n2 = xr_ints(r, en, CM_MAX_DIMS);
  int n3 = xr_ints(r, sd, CM_MAX_DIMS);
  if (n1 != n2 || n1 != n3) xr_bad(r, "SliceUpdate vectors of different lengths");
  if (k < 0 || k >= COUNT(cm_export_scatter_ops)) xr_bad(r, "an invalid SliceUpdate reduction");
  MEASURE;
  INPUTS(2, 2);
  if (slice_args(in[0], n1, st, en, sd)) return -1;
  if (cm_export_scatter_ops[k] == CM_SCATTER_NONE)
    return one(cm_slice_update(in[0], in[1], n1, st, n1, en, n1, sd, s), o, outs);
  return one(
      cm_slice_update_reduce(in[0], in[1], n1, st, n1, en, n1, sd, cm_export_scatter_ops[k], s), o,
      outs);
}
L(load_pad) {
  int32_t ax[CM_MAX_DIMS], lo[CM_MAX_DIMS], hi[CM_MAX_DIMS];
  int n1 = xr_ints(r, ax, CM_MAX_DIMS), n2 = xr_ints(r, lo, CM_MAX_DIMS);
  int n3 = xr_ints(r, hi, CM_MAX_DIMS);
  MEASURE;
  INPUTS(2, 2);
  return one(cm_pad(in[0], n1, (const int *)ax, n2, lo, n3, hi, in[1], "constant", s), o, outs);
}
L(load_split) {
  int32_t idx[CM_MAX_DIMS * 4];
  int n = xr_ints(r, idx, CM_MAX_DIMS * 4);
  int32_t ax = xr_i32(r);
  MEASURE;
  INPUTS(1, 1);
  cm_array **parts = NULL;
  int np = 0;
  if (cm_split_indices(in[0], n, idx, ax, &parts, &np, s)) return -1;
  if (np != o->n) {
    cm_array_list_free(parts, np);
    return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: Split outputs.");
  }
  for (int i = 0; i < np; i++) outs[i] = parts[i];
  free(parts);
  return 0;
}
L(load_fft) {
  int64_t ax64[CM_MAX_DIMS];
  int32_t ax[CM_MAX_DIMS];
  int n = xr_i64s(r, ax64, CM_MAX_DIMS);
  for (int i = 0; i < n; i++) ax[i] = ax64[i] < 0 || ax64[i] > CM_MAX_DIMS ? -1 : (int32_t)ax64[i];
  bool inv = xr_bool(r), real = xr_bool(r), other = xr_bool(r);
  MEASURE;
  INPUTS(1, 1);
  if (other) return cm_error(CM_ERR_VALUE, "[import_function] This FFT form is not supported.");
  if (o->n != 1 || check_axes(n, ax, in[0]->ndim) || o->ndims[0] != in[0]->ndim)
    return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: a bad FFT.");
  int32_t len[CM_MAX_DIMS];
  for (int i = 0; i < n; i++) len[i] = real && !inv ? in[0]->shape[ax[i]] : o->shapes[0][ax[i]];
  return one(
      cm_fft_nd(in[0], n, len, n, (const int *)ax, real, inv, CM_FFT_NORM_BACKWARD, "fftn", s), o,
      outs);
}
L(load_slice) {
  int32_t st[CM_MAX_DIMS], en[CM_MAX_DIMS], sd[CM_MAX_DIMS];
  int n1 = xr_ints(r, st, CM_MAX_DIMS), n2 = xr_ints(r, en, CM_MAX_DIMS);
  int n3 = xr_ints(r, sd, CM_MAX_DIMS);
  if (n1 != n2 || n1 != n3) xr_bad(r, "Slice vectors of different lengths");
  MEASURE;
  INPUTS(1, 1);
  if (slice_args(in[0], n1, st, en, sd)) return -1;
  return one(cm_slice(in[0], n1, st, n1, en, n1, sd, s), o, outs);
}
L(load_masked_scatter) {
  MEASURE;
  INPUTS(3, 3);
  /* MLX's form: a leading batch axis on all three, the mask of a's shape */
  const cm_array *a = in[0], *m = in[1], *v = in[2];
  if (m->dtype != CM_BOOL || !cm_same_shape(a, m) || a->ndim < 1 || v->ndim < 1 ||
      v->shape[0] != a->shape[0] || v->dtype != a->dtype)
    return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: a bad MaskedScatter.");
  cm_masked_params mp = {.batch = 1};
  return one(
      cm_op_node(a->dtype, a->ndim, a->shape, &cm_prim_masked_scatter, &mp, sizeof mp, in, 3, s), o,
      outs);
}
/* A norm's vector input: a 0-d default (1 or 0) spread over the last axis. */
static cm_array *norm_vec(cm_array *v, const cm_array *x, cm_stream s) {
  if (v->ndim != 0) return cm_retain(v);
  return cm_broadcast_to(v, 1, &x->shape[x->ndim - 1], s);
}
L(load_norm) {
  float eps = xr_f32(r);
  MEASURE;
  INPUTS(code ? 3 : 2, code ? 3 : 2);
  if (in[0]->ndim == 0) return one(cm_fast_rms_norm(in[0], NULL, eps, s), o, outs); /* its error */
  cm_array *wv = norm_vec(in[1], in[0], s), *bv = code && wv ? norm_vec(in[2], in[0], s) : NULL;
  cm_array *y = !wv || (code && !bv) ? NULL
                : code               ? cm_fast_layer_norm(in[0], wv, bv, eps, s)
                                     : cm_fast_rms_norm(in[0], wv, eps, s);
  cm_release(wv), cm_release(bv);
  return one(y, o, outs);
}
L(load_rope) {
  int32_t dims = xr_i32(r);
  bool trad = xr_bool(r);
  float base = xr_f32(r), scale = xr_f32(r);
  bool forward = xr_bool(r);
  MEASURE;
  INPUTS(2, 3);
  if (!forward)
    return cm_error(CM_ERR_VALUE, "[import_function] RoPE's inverse rotation is not supported.");
  return one(
      cm_fast_rope(in[0], dims, trad, nin == 2, base, scale, in[1], nin == 3 ? in[2] : NULL, s), o,
      outs);
}
L(load_dynamic_slice) {
  int32_t ax[CM_MAX_DIMS], sz[CM_MAX_DIMS];
  int n = xr_ints(r, ax, CM_MAX_DIMS), m = code ? 0 : xr_ints(r, sz, CM_MAX_DIMS);
  MEASURE;
  INPUTS(code ? 3 : 2, code ? 3 : 2);
  const int *v = (const int *)ax;
  return one(code ? cm_slice_update_dynamic(in[0], in[1], in[2], n, v, s)
                  : cm_slice_dynamic(in[0], in[1], n, v, m, sz, s),
             o, outs);
}
L(load_gather_mm) {
  bool left = xr_bool(r), right = xr_bool(r);
  MEASURE;
  INPUTS(4, 4);
  /* the op takes one sorted flag: MLX sets it on the left indices */
  if (right)
    return cm_error(CM_ERR_VALUE, "[import_function] GatherMM with sorted right indices is not "
                                  "supported by cmlx.");
  return one(cm_gather_mm(in[0], in[1], in[2], in[3], left, s), o, outs);
}
L(load_gather_qmm) {
  int32_t gs = xr_i32(r), bits = xr_i32(r), mode = xr_i32(r);
  bool tr = xr_bool(r), left = xr_bool(r), right = xr_bool(r);
  if (mode < 0 || mode >= COUNT(cm_export_qmodes)) xr_bad(r, "an invalid quantization mode");
  MEASURE;
  INPUTS(5, 6);
  if (right)
    return cm_error(CM_ERR_VALUE, "[import_function] GatherQMM with sorted right indices is not "
                                  "supported by cmlx.");
  return one(cm_gather_qmm(in[0], in[1], in[2], nin == 6 ? in[3] : NULL, in[nin - 2], in[nin - 1],
                           tr, gs, bits, cm_export_qmodes[mode], left, s),
             o, outs);
}
L(load_quantize) {
  int32_t gs = xr_i32(r), bits = xr_i32(r), mode = xr_i32(r);
  bool deq = xr_bool(r);
  if (mode < 0 || mode >= COUNT(cm_export_qmodes)) xr_bad(r, "an invalid quantization mode");
  MEASURE;
  INPUTS(1, 1);
  if (deq)
    return cm_error(CM_ERR_VALUE, "[import_function] Quantize's dequantize form is not "
                                  "supported by cmlx.");
  cm_array *q[3] = {NULL, NULL, NULL};
  int n = 0;
  if (cm_quantize(in[0], gs, bits, cm_export_qmodes[mode], NULL, q, &n, s)) return -1;
  if (n != o->n) {
    for (int i = 0; i < n; i++) cm_release(q[i]);
    return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: Quantize outputs.");
  }
  for (int i = 0; i < n; i++) outs[i] = q[i];
  return 0;
}
/* The linalg primitives: n outputs from the op's list (NULL ends it). */
static int several(cm_array **got, int n, const xout *o, cm_array **outs) {
  if (n != o->n) {
    for (int i = 0; i < n; i++) cm_release(got[i]);
    return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: wrong output count.");
  }
  for (int i = 0; i < n; i++) outs[i] = got[i];
  return 0;
}
L(load_linalg) { /* code: 0 SVD, 1 QRF, 2 Cholesky, 3 Inverse, 4 Eig, 5 Eigh */
  char uplo[2] = "L";
  size_t ulen = 0;
  const char *u = code == 5 ? xr_str(r, &ulen) : NULL;
  if (u && (ulen != 1 || (u[0] != 'U' && u[0] != 'L'))) xr_bad(r, "an invalid UPLO");
  if (u && !r->fail) uplo[0] = u[0];
  bool f1 = code != 1 ? xr_bool(r) : false, f2 = code == 3 ? xr_bool(r) : false;
  MEASURE;
  INPUTS(1, 1);
  cm_array *g[3] = {NULL, NULL, NULL};
  int n = 0, rc = 0;
  switch (code) {
  case 0: rc = cm_linalg_svd_uv(in[0], f1, g, &n, s); break;
  case 1: rc = cm_linalg_qr(in[0], &g[0], &g[1], s), n = 2; break;
  case 2: return one(cm_linalg_cholesky(in[0], f1, s), o, outs);
  case 3: return one(f1 ? cm_linalg_tri_inv(in[0], f2, s) : cm_linalg_inv(in[0], s), o, outs);
  case 4:
    if (!f1) return one(cm_linalg_eigvals(in[0], s), o, outs);
    rc = cm_linalg_eig(in[0], &g[0], &g[1], s), n = 2;
    break;
  default:
    if (!f1) return one(cm_linalg_eigvalsh(in[0], uplo, s), o, outs);
    rc = cm_linalg_eigh(in[0], uplo, &g[0], &g[1], s), n = 2;
  }
  if (rc) {
    for (int i = 0; i < 3; i++) cm_release(g[i]);
    return -1;
  }
  return several(g, n, o, outs);
}
L(load_view) {
  cm_dtype t = xr_dtype(r);
  MEASURE;
  INPUTS(1, 1);
  return one(cm_view(in[0], t, s), o, outs);
}
L(load_hadamard) {
  float scale = xr_f32(r);
  MEASURE;
  INPUTS(1, 1);
  return one(cm_hadamard_transform(in[0], true, scale, s), o, outs);
}
L(load_as_strided) {
  int32_t sh[CM_MAX_DIMS];
  int64_t st[CM_MAX_DIMS];
  int n = xr_shape(r, sh), m = xr_i64s(r, st, CM_MAX_DIMS);
  uint64_t off = xr_u64(r);
  if (n != m) xr_bad(r, "AsStrided vectors of different lengths");
  MEASURE;
  INPUTS(1, 1);
  /* MLX does not check the window: the file must keep it inside the input */
  int64_t last = 0;
  bool empty = false, bad = off > (uint64_t)INT64_MAX;
  for (int i = 0; i < n; i++) {
    empty = empty || sh[i] == 0;
    if (st[i] < 0 || (sh[i] && st[i] > INT64_MAX / sh[i])) bad = true;
    else last += (int64_t)(sh[i] ? sh[i] - 1 : 0) * st[i];
  }
  if (bad || (!empty && (int64_t)off + last >= in[0]->size))
    return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: AsStrided reads outside "
                                  "its input.");
  return one(cm_as_strided(in[0], n, sh, n, st, (int64_t)off, s), o, outs);
}
L(load_concatenate) {
  int32_t ax = xr_i32(r);
  MEASURE;
  INPUTS(1, 1 << 20);
  return one(cm_concatenate(in, nin, ax, s), o, outs);
}
static int check_axes(int n, const int32_t *ax, int ndim) {
  for (int i = 0; i < n; i++)
    if (ax[i] < 0 || ax[i] >= ndim)
      return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: an axis out of range.");
  return 0;
}
L(load_reduce) {
  int32_t k = xr_i32(r), ax[CM_MAX_DIMS];
  int n = xr_ints(r, ax, CM_MAX_DIMS);
  if (k < 0 || k >= COUNT(cm_export_reduce_ops)) xr_bad(r, "an invalid reduction");
  MEASURE;
  INPUTS(1, 1);
  if (check_axes(n, ax, in[0]->ndim)) return -1;
  uint64_t mask = 0;
  for (int i = 0; i < n; i++) mask |= (uint64_t)1 << ax[i];
  return one(cm_reduce_mask(cm_export_reduce_ops[k], in[0], mask, true, s), o, outs);
}
L(load_arg_reduce) {
  int32_t k = xr_i32(r), ax = xr_i32(r);
  if (k < 0 || k > 1) xr_bad(r, "an invalid ArgReduce");
  MEASURE;
  INPUTS(1, 1);
  return one(cm_reduce(k ? CM_REDUCE_ARGMAX : CM_REDUCE_ARGMIN, in[0], CM_AXIS(ax), true, s), o,
             outs);
}
L(load_softmax) {
  bool precise = xr_bool(r);
  MEASURE;
  INPUTS(1, 1);
  int last = -1;
  return one(cm_softmax(in[0], cm_axes_list(&last, 1), precise, s), o, outs);
}
L(load_logsumexp) {
  MEASURE;
  INPUTS(1, 1);
  return one(cm_logsumexp_last(in[0], true, s), o, outs);
}
L(load_scan) {
  int32_t k = xr_i32(r), ax = xr_i32(r);
  bool rev = xr_bool(r), incl = xr_bool(r);
  if (k < 0 || k >= COUNT(cm_export_scan_ops)) xr_bad(r, "an invalid scan");
  MEASURE;
  INPUTS(1, 1);
  return one(cm_scan((cm_scan_op)cm_export_scan_ops[k], in[0], ax, rev, incl, s), o, outs);
}
/* Sort (code 0), ArgSort (1): the axis; Partition (2), ArgPartition (3):
 * kth and the axis. */
L(load_sort) {
  int32_t kth = code >= 2 ? xr_i32(r) : 0, ax = xr_i32(r);
  MEASURE;
  INPUTS(1, 1);
  cm_array *y = code == 0   ? cm_sort(in[0], ax, s)
                : code == 1 ? cm_argsort(in[0], ax, s)
                : code == 2 ? cm_partition(in[0], kth, ax, s)
                            : cm_argpartition(in[0], kth, ax, s);
  return one(y, o, outs);
}
L(load_searchsorted) {
  bool right = xr_bool(r);
  MEASURE;
  INPUTS(2, 2);
  return one(cm_searchsorted(in[0], in[1], right ? "right" : "left", s), o, outs);
}
L(load_gather) {
  int32_t ax[CM_MAX_DIMS], sz[CM_MAX_DIMS];
  int n = xr_ints(r, ax, CM_MAX_DIMS), m = xr_ints(r, sz, CM_MAX_DIMS);
  MEASURE;
  INPUTS(1, 1 << 20);
  if (n != nin - 1)
    return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: Gather's axes and indices.");
  return one(cm_gather(in[0], in + 1, nin - 1, (const int *)ax, n, sz, m, s), o, outs);
}
L(load_scatter) {
  int32_t k = xr_i32(r), ax[CM_MAX_DIMS];
  int n = xr_ints(r, ax, CM_MAX_DIMS);
  if (k < 0 || k >= COUNT(cm_export_scatter_ops)) xr_bad(r, "an invalid scatter");
  MEASURE;
  INPUTS(2, 1 << 20);
  if (n != nin - 2)
    return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: Scatter's axes and indices.");
  return one(cm_scatter(in[0], in + 1, nin - 2, in[nin - 1], (const int *)ax, n,
                        cm_export_scatter_ops[k], s),
             o, outs);
}
L(load_gather_axis) {
  int32_t ax = xr_i32(r);
  MEASURE;
  INPUTS(2, 2);
  return one(cm_take_along_axis(in[0], in[1], ax, s), o, outs);
}
L(load_scatter_axis) {
  int32_t k = xr_i32(r), ax = xr_i32(r);
  if (k < 0 || k > 1) xr_bad(r, "an invalid ScatterAxis");
  MEASURE;
  INPUTS(3, 3);
  return one(k == 0 ? cm_scatter_add_axis(in[0], in[1], in[2], ax, s)
                    : cm_put_along_axis(in[0], in[1], in[2], ax, s),
             o, outs);
}
L(load_conv) {
  int32_t l[5][CM_MAX_DIMS];
  int n[5];
  for (int k = 0; k < 5; k++) n[k] = xr_ints(r, l[k], CM_MAX_DIMS);
  int32_t groups = xr_i32(r);
  bool flip = xr_bool(r);
  MEASURE;
  INPUTS(2, 2);
  cm_conv_list c[5];
  for (int k = 0; k < 5; k++) c[k] = (cm_conv_list){n[k], (const int *)l[k]};
  return one(cm_conv_general(in[0], in[1], c[0], c[1], c[2], c[3], c[4], groups, flip, s), o, outs);
}
L(load_qmm) {
  int32_t gs = xr_i32(r), bits = xr_i32(r), mode = xr_i32(r);
  bool tr = xr_bool(r);
  if (mode < 0 || mode >= COUNT(cm_export_qmodes)) xr_bad(r, "an invalid quantization mode");
  MEASURE;
  INPUTS(3, 4);
  return one(cm_quantized_matmul(in[0], in[1], in[2], nin == 4 ? in[3] : NULL, tr, gs, bits,
                                 cm_export_qmodes[mode], s),
             o, outs);
}
L(load_random_bits) {
  int32_t sh[CM_MAX_DIMS];
  int n = xr_ints(r, sh, CM_MAX_DIMS);
  int32_t width = xr_i32(r);
  MEASURE;
  INPUTS(1, 1);
  return one(cm_random_bits(n, sh, width, in[0], s), o, outs);
}
L(load_arange) {
  double a = xr_f64(r), b = xr_f64(r), st = xr_f64(r);
  MEASURE;
  INPUTS(0, 0);
  (void)in;
  if (o->n != 1) return one(NULL, o, outs);
  return one(cm_arange(a, b, st, o->dtypes[0], s), o, outs);
}

L(load_named_unary) {
  MEASURE;
  if (code == CM_UNARY_ABS && nin == 1 && in[0]->dtype == CM_COMPLEX64 && o->n == 1 &&
      o->dtypes[0] == CM_COMPLEX64) { /* MLX's Abs keeps the complex dtype */
    cm_array *m = cm_unary(CM_UNARY_ABS, in[0], s);
    cm_array *c = m ? cm_astype(m, CM_COMPLEX64, s) : NULL;
    cm_release(m);
    return one(c, o, outs);
  }
  return load_unary((cm_unary_op)code, in, nin, o, outs, s);
}
L(load_named_binary) {
  MEASURE;
  return load_binary((cm_binary_op)code, in, nin, o, outs, s);
}

static const struct {
  const char *name;
  xload_fn load;
  int code;
} loaders[] = {
    {"Log", load_log, 0},
    {"Sqrt", load_sqrt, 0},
    {"CmlxUnary", load_cmlx_unary, 0},
    {"CmlxBinary", load_cmlx_binary, 0},
    {"Equal", load_equal, 0},
    {"BitwiseBinary", load_bitwise, 0},
    {"StopGradient", load_stop_gradient, 0},
    {"AsType", load_astype, 0},
    {"Broadcast", load_broadcast, 0},
    {"BroadcastAxes", load_broadcast_axes, 0},
    {"Full", load_full, 0},
    {"Copy", load_copy, 0},
    {"Select", load_select, 0},
    {"Matmul", load_matmul, 0},
    {"AddMM", load_addmm, 0},
    {"DivMod", load_divmod, 0},
    {"CustomKernel", load_custom_kernel, 0},
    {"Reshape", load_reshape, 0},
    {"Flatten", load_flatten, 0},
    {"Unflatten", load_unflatten, 0},
    {"Squeeze", load_axes, 0},
    {"ExpandDims", load_axes, 1},
    {"Transpose", load_axes, 2},
    {"Slice", load_slice, 0},
    {"SliceUpdate", load_slice_update, 0},
    {"Pad", load_pad, 0},
    {"Split", load_split, 0},
    {"FFT", load_fft, 0},
    {"MaskedScatter", load_masked_scatter, 0},
    {"RoPE", load_rope, 0},
    {"DynamicSlice", load_dynamic_slice, 0},
    {"DynamicSliceUpdate", load_dynamic_slice, 1},
    {"GatherMM", load_gather_mm, 0},
    {"GatherQMM", load_gather_qmm, 0},
    {"Quantize", load_quantize, 0},
    {"SVD", load_linalg, 0},
    {"QRF", load_linalg, 1},
    {"Cholesky", load_linalg, 2},
    {"Inverse", load_linalg, 3},
    {"Eig", load_linalg, 4},
    {"Eigh", load_linalg, 5},
    {"NumberOfElements", load_number_of_elements, 0},
    {"View", load_view, 0},
    {"Hadamard", load_hadamard, 0},
    {"AsStrided", load_as_strided, 0},
    {"Concatenate", load_concatenate, 0},
    {"Reduce", load_reduce, 0},
    {"ArgReduce", load_arg_reduce, 0},
    {"Softmax", load_softmax, 0},
    {"LogSumExp", load_logsumexp, 0},
    {"Scan", load_scan, 0},
    {"Sort", load_sort, 0},
    {"ArgSort", load_sort, 1},
    {"Partition", load_sort, 2},
    {"ArgPartition", load_sort, 3},
    {"RMSNorm", load_norm, 0},
    {"LayerNorm", load_norm, 1},
    {"SearchSorted", load_searchsorted, 0},
    {"Gather", load_gather, 0},
    {"Scatter", load_scatter, 0},
    {"GatherAxis", load_gather_axis, 0},
    {"ScatterAxis", load_scatter_axis, 0},
    {"Convolution", load_conv, 0},
    {"QuantizedMatmul", load_qmm, 0},
    {"RandomBits", load_random_bits, 0},
    {"Arange", load_arange, 0},
};

static bool same(const char *a, const char *name, size_t len) {
  return strlen(a) == len && !memcmp(a, name, len);
}

xloader cm_export_loader(const char *name, size_t len) {
  for (int i = 0; i < COUNT(unary_names); i++)
    if (same(unary_names[i].name, name, len))
      return (xloader){load_named_unary, (int)unary_names[i].op};
  for (int i = 0; i < COUNT(binary_names); i++)
    if (same(binary_names[i].name, name, len))
      return (xloader){load_named_binary, (int)binary_names[i].op};
  for (int i = 0; i < COUNT(loaders); i++)
    if (same(loaders[i].name, name, len)) return (xloader){loaders[i].load, loaders[i].code};
  return cm_export_loader_extra(name, len);
}
