/* .mlxfn states of the matrix primitives (matmul.c, gather_mm.c, conv.c,
 * fft.c, hadamard.c, fast.c, linalg.c; the contract is export_desc.h).
 *
 * MLX 0.32.4 cannot serialise its LUF, Solve and SegmentedMM: cmlx writes
 * them under "CmlxLUF", "CmlxSolve" and "CmlxSegmentedMM", which cmlx
 * reads back and MLX reports it cannot deserialise. */
#include <string.h>

#include "ops/contract.h"
#include "ops/conv.h"
#include "ops/fast.h"
#include "ops/fft.h"
#include "ops/hadamard.h"
#include "ops/linalg.h"
#include "ops/ops.h"
#include "ops/shape.h"
#include "primitives/conv.h"
#include "primitives/export_desc.h"
#include "primitives/fast.h"
#include "primitives/fft.h"
#include "primitives/gather_mm.h"
#include "primitives/hadamard.h"
#include "primitives/linalg.h"
#include "primitives/matmul.h"
#include "primitives/rules_util.h"

/* ---- Matmul, AddMM, GatherMM, SegmentedMM, BlockMaskedMM ---- */

static int make_matmul(const cm_xval *v, cm_array *const *in, int nin, const xout *o,
                       cm_array **outs, cm_stream s) {
  (void)v, (void)nin;
  return cm_xload_one(cm_matmul(in[0], in[1], s), o, outs);
}
const cm_export_desc cm_export_matmul = {
    .name = "Matmul", .nin_lo = 2, .nin_hi = 2, .make = make_matmul};

/* MLX's AddMM: inputs a, b, c. */
static int make_addmm(const cm_xval *v, cm_array *const *in, int nin, const xout *o,
                      cm_array **outs, cm_stream s) {
  (void)nin;
  return cm_xload_one(cm_addmm(in[2], in[0], in[1], v[0].f, v[1].f, s), o, outs);
}
const cm_export_desc cm_export_addmm = {.name = "AddMM",
                                        CM_EXPORT_FIELDS(cm_matmul_params,
                                                         CM_XF(CM_XF_F32, cm_matmul_params, alpha),
                                                         CM_XF(CM_XF_F32, cm_matmul_params, beta)),
                                        .nin_lo = 3,
                                        .nin_hi = 3,
                                        .make = make_addmm};

static int make_gather_mm(const cm_xval *v, cm_array *const *in, int nin, const xout *o,
                          cm_array **outs, cm_stream s) {
  (void)nin;
  /* the op takes one sorted flag: MLX sets it on the left indices */
  if (v[1].b)
    return cm_error(CM_ERR_VALUE, "[import_function] GatherMM with sorted right indices is not "
                                  "supported by cmlx.");
  return cm_xload_one(cm_gather_mm(in[0], in[1], in[2], in[3], v[0].b, s), o, outs);
}
const cm_export_desc cm_export_gather_mm = {
    .name = "GatherMM",
    CM_EXPORT_FIELDS(cm_gather_mm_params, CM_XF(CM_XF_BOOL, cm_gather_mm_params, left_sorted),
                     CM_XF(CM_XF_BOOL, cm_gather_mm_params, right_sorted)),
    .nin_lo = 4,
    .nin_hi = 4,
    .make = make_gather_mm};

static int make_segmented_mm(const cm_xval *v, cm_array *const *in, int nin, const xout *o,
                             cm_array **outs, cm_stream s) {
  (void)v, (void)nin;
  return cm_xload_one(cm_segmented_mm(in[0], in[1], in[2], s), o, outs);
}
const cm_export_desc cm_export_segmented_mm = {
    .name = "CmlxSegmentedMM", .nin_lo = 3, .nin_hi = 3, .make = make_segmented_mm};

/* MLX's input counts: a, b, then the output mask and/or the two operand
 * masks. */
static int make_block_masked_mm(const cm_xval *v, cm_array *const *in, int nin, const xout *o,
                                cm_array **outs, cm_stream s) {
  cm_array *mo = nin != 4 ? in[2] : NULL;
  cm_array *ml = nin >= 4 ? in[nin - 2] : NULL, *mr = nin >= 4 ? in[nin - 1] : NULL;
  return cm_xload_one(cm_block_masked_mm(in[0], in[1], v[0].i, mo, ml, mr, s), o, outs);
}
const cm_export_desc cm_export_block_masked_mm = {
    .name = "BlockMaskedMM",
    CM_EXPORT_FIELDS(cm_block_mm_params, CM_XF(CM_XF_I32, cm_block_mm_params, block_size)),
    .nin_lo = 3,
    .nin_hi = 5,
    .make = make_block_masked_mm};

/* ---- Convolution: (strides, pad_lo, pad_hi, kernel dilation, input
 * dilation, groups, flip); the weight gradient is lowered first
 * (export_lower.c) ---- */

static int save_conv(const cm_array *a, xw *w, xsave *sv) {
  const cm_conv_params *c = cm_conv_params_of(a);
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
CM_XLOAD(load_conv) {
  int32_t l[5][CM_MAX_DIMS];
  int n[5];
  for (int k = 0; k < 5; k++) n[k] = xr_ints(r, l[k], CM_MAX_DIMS);
  int32_t groups = xr_i32(r);
  bool flip = xr_bool(r);
  CM_XMEASURE;
  CM_XINPUTS(2, 2);
  cm_conv_list c[5];
  for (int k = 0; k < 5; k++) c[k] = (cm_conv_list){n[k], (const int *)l[k]};
  return cm_xload_one(cm_conv_general(in[0], in[1], c[0], c[1], c[2], c[3], c[4], groups, flip, s),
                      o, outs);
}
/* ---- lowering: the weight gradient as MLX's Convolution::vjp general
 * form (a Convolution of the input and the cotangent with batch and
 * channel axes swapped, grouped: the input's groups moved beside the
 * batch; kernel strides and dilations exchanged; flipped back with a
 * reversing Slice when the forward flips; the result's axes swapped
 * back) ---- */

static int64_t dilated(int64_t n, int64_t d) { return n > 0 ? 1 + d * (n - 1) : 0; }

/* MLX's weight gradient: x (N, S.., C), cotangent (N, Y.., O) -> (O, K.., C / groups). */
static cm_array *lower_weight_grad(const cm_array *a) {
  cm_conv_params c = cm_conv_params_copy(cm_conv_params_of(a));
  cm_array *x = a->in[0], *cot = a->in[1];
  int nd = c.ndim, g = c.groups;
  cm_stream s = a->stream;
  int32_t st[CM_CONV_MAX_SPATIAL], lo[CM_CONV_MAX_SPATIAL], hi[CM_CONV_MAX_SPATIAL],
      kd[CM_CONV_MAX_SPATIAL], id[CM_CONV_MAX_SPATIAL];
  for (int i = 0; i < nd; i++) {
    const cm_conv_axis *ax = &c.ax[i];
    int64_t in = dilated(x->shape[1 + i], ax->idil), out = dilated(cot->shape[1 + i], ax->stride);
    int64_t wt = dilated(a->shape[1 + i], ax->kdil);
    st[i] = ax->kdil, kd[i] = ax->stride, id[i] = ax->idil, lo[i] = ax->pad_lo;
    hi[i] = (int32_t)(out - in + wt - ax->pad_lo - 1);
  }
  cm_rt t = {0};
  cm_array *xt;
  if (g > 1) { /* (N, S.., G, C/G) -> (C/G, S.., G, N) -> (C/G, S.., G * N) */
    int32_t sh[CM_MAX_DIMS];
    memcpy(sh, x->shape, sizeof(int32_t) * (size_t)x->ndim);
    sh[x->ndim - 1] = g, sh[x->ndim] = x->shape[x->ndim - 1] / g;
    cm_array *r = RT(&t, cm_reshape(x, x->ndim + 1, sh, s));
    cm_array *w = RT(&t, cm_swapaxes(r, 0, -1, s));
    xt = RT(&t, cm_flatten(w, x->ndim - 1, x->ndim, s));
  } else {
    xt = RT(&t, cm_swapaxes(x, 0, -1, s));
  }
  cm_array *ct = RT(&t, cm_swapaxes(cot, 0, -1, s));
  cm_array *gt =
      t.fail ? NULL
             : RT(&t, cm_conv_general(xt, ct, (cm_conv_list){nd, st}, (cm_conv_list){nd, lo},
                                      (cm_conv_list){nd, hi}, (cm_conv_list){nd, kd},
                                      (cm_conv_list){nd, id}, g, false, s));
  if (c.flip && !t.fail) { /* reverse the spatial axes */
    int n = gt->ndim;
    int32_t b[CM_MAX_DIMS], e[CM_MAX_DIMS], step[CM_MAX_DIMS];
    for (int i = 0; i < n; i++) {
      bool sp = i >= 1 && i < n - 1;
      b[i] = sp ? gt->shape[i] - 1 : 0, e[i] = sp ? -gt->shape[i] - 1 : gt->shape[i];
      step[i] = sp ? -1 : 1;
    }
    gt = RT(&t, cm_slice(gt, n, b, n, e, n, step, s));
  }
  cm_array *r = RT(&t, cm_swapaxes(gt, 0, -1, s)), *out;
  return cm_rt_done(&t, r, &out) ? NULL : out;
}

static cm_array *lower_conv(const cm_array *a) {
  const cm_conv_params *c = cm_conv_params_of(a);
  return c->kind == CM_CONV_WEIGHT_GRAD && a->nin == 2 ? lower_weight_grad(a) : NULL;
}

const cm_export_desc cm_export_conv = {
    .save = save_conv, .lower = lower_conv, CM_EXPORT_NAMES({"Convolution", load_conv, 0})};

/* ---- FFT: (axes as size_t, inverse, real, MLX's other form) ---- */

static int save_fft(const cm_array *a, xw *w, xsave *sv) {
  const cm_fft_params *f = cm_fft_params_of(a);
  int64_t ax[CM_MAX_DIMS];
  for (int i = 0; i < f->naxes; i++) ax[i] = f->axes[i];
  xw_i64s(w, f->naxes, ax); /* std::vector<size_t> */
  xw_bool(w, f->inverse), xw_bool(w, f->real), xw_bool(w, false);
  return sv->name = "FFT", 0;
}
CM_XLOAD(load_fft) {
  int64_t ax64[CM_MAX_DIMS];
  int32_t ax[CM_MAX_DIMS];
  int n = xr_i64s(r, ax64, CM_MAX_DIMS);
  for (int i = 0; i < n; i++) ax[i] = ax64[i] < 0 || ax64[i] > CM_MAX_DIMS ? -1 : (int32_t)ax64[i];
  bool inv = xr_bool(r), real = xr_bool(r), other = xr_bool(r);
  CM_XMEASURE;
  CM_XINPUTS(1, 1);
  if (other) return cm_error(CM_ERR_VALUE, "[import_function] This FFT form is not supported.");
  if (o->n != 1 || cm_xload_check_axes(n, ax, in[0]->ndim) || o->ndims[0] != in[0]->ndim)
    return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: a bad FFT.");
  int32_t len[CM_MAX_DIMS];
  for (int i = 0; i < n; i++) len[i] = real && !inv ? in[0]->shape[ax[i]] : o->shapes[0][ax[i]];
  return cm_xload_one(
      cm_fft_nd(in[0], n, len, n, (const int *)ax, real, inv, CM_FFT_NORM_BACKWARD, "fftn", s), o,
      outs);
}
const cm_export_desc cm_export_fft = {.save = save_fft, CM_EXPORT_NAMES({"FFT", load_fft, 0})};

static int make_hadamard(const cm_xval *v, cm_array *const *in, int nin, const xout *o,
                         cm_array **outs, cm_stream s) {
  (void)nin;
  return cm_xload_one(cm_hadamard_transform(in[0], true, v[0].f, s), o, outs);
}
const cm_export_desc cm_export_hadamard = {
    .name = "Hadamard",
    CM_EXPORT_FIELDS(cm_hadamard_params, CM_XF(CM_XF_F32, cm_hadamard_params, scale)),
    .nin_lo = 1,
    .nin_hi = 1,
    .make = make_hadamard};

/* ---- fast: RMSNorm, LayerNorm (eps), RoPE ---- */

/* A norm's vector input: a 0-d default (1 or 0) spread over the last axis. */
static cm_array *norm_vec(cm_array *v, const cm_array *x, cm_stream s) {
  if (v->ndim != 0) return cm_retain(v);
  return cm_broadcast_to(v, 1, &x->shape[x->ndim - 1], s);
}
static int make_norm(bool layer, float eps, cm_array *const *in, const xout *o, cm_array **outs,
                     cm_stream s) {
  if (in[0]->ndim == 0) return cm_xload_one(cm_fast_rms_norm(in[0], NULL, eps, s), o, outs);
  cm_array *wv = norm_vec(in[1], in[0], s), *bv = layer && wv ? norm_vec(in[2], in[0], s) : NULL;
  cm_array *y = !wv || (layer && !bv) ? NULL
                : layer               ? cm_fast_layer_norm(in[0], wv, bv, eps, s)
                                      : cm_fast_rms_norm(in[0], wv, eps, s);
  cm_release(wv), cm_release(bv);
  return cm_xload_one(y, o, outs);
}
static int make_rms_norm(const cm_xval *v, cm_array *const *in, int nin, const xout *o,
                         cm_array **outs, cm_stream s) {
  (void)nin;
  return make_norm(false, v[0].f, in, o, outs, s);
}
static int make_layer_norm(const cm_xval *v, cm_array *const *in, int nin, const xout *o,
                           cm_array **outs, cm_stream s) {
  (void)nin;
  return make_norm(true, v[0].f, in, o, outs, s);
}
/* MLX's states (fallback, eps): the fallback is a function, not saved. */
const cm_export_desc cm_export_rms_norm = {
    .name = "RMSNorm",
    CM_EXPORT_FIELDS(cm_norm_params, CM_XF(CM_XF_F32, cm_norm_params, eps)),
    .nin_lo = 2,
    .nin_hi = 2,
    .make = make_rms_norm};
const cm_export_desc cm_export_layer_norm = {
    .name = "LayerNorm",
    CM_EXPORT_FIELDS(cm_norm_params, CM_XF(CM_XF_F32, cm_norm_params, eps)),
    .nin_lo = 3,
    .nin_hi = 3,
    .make = make_layer_norm};

/* MLX's (fallback, dims, traditional, base, scale, forward); inputs x,
 * offset and freqs when given. */
static int make_rope(const cm_xval *v, cm_array *const *in, int nin, const xout *o, cm_array **outs,
                     cm_stream s) {
  if (!v[4].b)
    return cm_error(CM_ERR_VALUE, "[import_function] RoPE's inverse rotation is not supported.");
  return cm_xload_one(cm_fast_rope(in[0], v[0].i, v[1].b, nin == 2, v[2].f, v[3].f, in[1],
                                   nin == 3 ? in[2] : NULL, s),
                      o, outs);
}
const cm_export_desc cm_export_rope = {
    .name = "RoPE",
    CM_EXPORT_FIELDS(
        cm_rope_params, CM_XF(CM_XF_I32, cm_rope_params, dims),
        CM_XF(CM_XF_BOOL, cm_rope_params, traditional), CM_XF(CM_XF_F32, cm_rope_params, base),
        CM_XF(CM_XF_F32, cm_rope_params, scale), CM_XF(CM_XF_BOOL, cm_rope_params, forward)),
    .nin_lo = 2,
    .nin_hi = 3,
    .make = make_rope};

/* ---- linalg: each one input; the factorisations several outputs ---- */

/* n outputs from the op's list. */
static int several(cm_array **got, int n, int rc, const xout *o, cm_array **outs) {
  if (rc) {
    for (int i = 0; i < n; i++) cm_release(got[i]);
    return -1;
  }
  return cm_xload_results(got, n, o, outs);
}

static int make_svd(const cm_xval *v, cm_array *const *in, int nin, const xout *o, cm_array **outs,
                    cm_stream s) {
  (void)nin;
  cm_array *g[3] = {NULL, NULL, NULL};
  int n = 0, rc = cm_linalg_svd_uv(in[0], v[0].b, g, &n, s);
  return several(g, rc ? 3 : n, rc, o, outs);
}
const cm_export_desc cm_export_svd = {
    .name = "SVD",
    CM_EXPORT_FIELDS(cm_svd_params, CM_XF(CM_XF_BOOL, cm_svd_params, compute_uv)),
    .nin_lo = 1,
    .nin_hi = 1,
    .make = make_svd};

static int make_qrf(const cm_xval *v, cm_array *const *in, int nin, const xout *o, cm_array **outs,
                    cm_stream s) {
  (void)v, (void)nin;
  cm_array *g[2] = {NULL, NULL};
  int rc = cm_linalg_qr(in[0], &g[0], &g[1], s);
  return several(g, 2, rc, o, outs);
}
const cm_export_desc cm_export_qrf = {.name = "QRF", .nin_lo = 1, .nin_hi = 1, .make = make_qrf};

static int make_luf(const cm_xval *v, cm_array *const *in, int nin, const xout *o, cm_array **outs,
                    cm_stream s) {
  (void)v, (void)nin;
  cm_array *got[3];
  if (cm_linalg_luf(in[0], got, s)) return -1;
  return cm_xload_results(got, 3, o, outs);
}
const cm_export_desc cm_export_luf = {
    .name = "CmlxLUF", .nin_lo = 1, .nin_hi = 1, .make = make_luf};

static int make_cholesky(const cm_xval *v, cm_array *const *in, int nin, const xout *o,
                         cm_array **outs, cm_stream s) {
  (void)nin;
  return cm_xload_one(cm_linalg_cholesky(in[0], v[0].b, s), o, outs);
}
const cm_export_desc cm_export_cholesky = {
    .name = "Cholesky",
    CM_EXPORT_FIELDS(cm_upper_params, CM_XF(CM_XF_BOOL, cm_upper_params, upper)),
    .nin_lo = 1,
    .nin_hi = 1,
    .make = make_cholesky};

/* MLX's Inverse: (tri, upper); a general inverse is written upper. */
static int save_inverse(const cm_array *a, xw *w, xsave *sv) {
  const cm_inverse_params *q = cm_inverse_params_of(a);
  xw_bool(w, q->tri), xw_bool(w, q->tri ? q->upper : true);
  return sv->name = "Inverse", 0;
}
CM_XLOAD(load_inverse) {
  bool tri = xr_bool(r), upper = xr_bool(r);
  CM_XMEASURE;
  CM_XINPUTS(1, 1);
  return cm_xload_one(tri ? cm_linalg_tri_inv(in[0], upper, s) : cm_linalg_inv(in[0], s), o, outs);
}
const cm_export_desc cm_export_inverse = {.save = save_inverse,
                                          CM_EXPORT_NAMES({"Inverse", load_inverse, 0})};

static int make_solve(const cm_xval *v, cm_array *const *in, int nin, const xout *o,
                      cm_array **outs, cm_stream s) {
  (void)v;
  if (nin != 2 || in[1]->ndim < 2) return cm_xload_bad("CmlxSolve's inputs");
  return cm_xload_one(cm_linalg_solve(in[0], in[1], s), o, outs);
}
const cm_export_desc cm_export_solve = {
    .name = "CmlxSolve", .nin_lo = 0, .nin_hi = 1 << 20, .make = make_solve};

static int make_eig(const cm_xval *v, cm_array *const *in, int nin, const xout *o, cm_array **outs,
                    cm_stream s) {
  (void)nin;
  if (!v[0].b) return cm_xload_one(cm_linalg_eigvals(in[0], s), o, outs);
  cm_array *g[2] = {NULL, NULL};
  int rc = cm_linalg_eig(in[0], &g[0], &g[1], s);
  return several(g, 2, rc, o, outs);
}
const cm_export_desc cm_export_eig = {
    .name = "Eig",
    CM_EXPORT_FIELDS(cm_eig_params, CM_XF(CM_XF_BOOL, cm_eig_params, vectors)),
    .nin_lo = 1,
    .nin_hi = 1,
    .make = make_eig};

/* MLX's Eigh: (UPLO as a string, compute_eigenvectors). */
static int save_eigh(const cm_array *a, xw *w, xsave *sv) {
  xw_state_str(w, cm_eigh_params_of(a)->upper ? "U" : "L");
  xw_bool(w, cm_eigh_params_of(a)->vectors);
  return sv->name = "Eigh", 0;
}
CM_XLOAD(load_eigh) {
  char uplo[2] = "L";
  size_t ulen = 0;
  const char *u = xr_str(r, &ulen);
  if (u && (ulen != 1 || (u[0] != 'U' && u[0] != 'L'))) xr_bad(r, "an invalid UPLO");
  if (u && !r->fail) uplo[0] = u[0];
  bool vectors = xr_bool(r);
  CM_XMEASURE;
  CM_XINPUTS(1, 1);
  if (!vectors) return cm_xload_one(cm_linalg_eigvalsh(in[0], uplo, s), o, outs);
  cm_array *g[2] = {NULL, NULL};
  int rc = cm_linalg_eigh(in[0], uplo, &g[0], &g[1], s);
  return several(g, 2, rc, o, outs);
}
const cm_export_desc cm_export_eigh = {.save = save_eigh, CM_EXPORT_NAMES({"Eigh", load_eigh, 0})};
