/* Quantization op constructors: MLX's argument checks (in MLX's order, with
 * its messages), dtype rules and shapes; the nodes are the primitives of
 * primitives/quantized.h.  See ops/quantized.h. */
#include "ops/quantized.h"

#include <stdio.h>
#include <string.h>

#include "ops/creation.h"
#include "ops/shape.h"
#include "primitives/quantized.h"

static int parse_mode(const char *tag, const char *mode, cm_qmode *out) {
  static const char *names[] = {"affine", "mxfp4", "mxfp8", "nvfp4"};
  if (!mode) mode = "affine";
  for (int i = 0; i < 4; i++)
    if (!strcmp(mode, names[i])) return *out = (cm_qmode)i, 0;
  return cm_error(CM_ERR_VALUE, "[%s] Invalid quantization mode '%s'.", tag, mode);
}

static const char *mode_name(cm_qmode m) {
  static const char *names[] = {"affine", "mxfp4", "mxfp8", "nvfp4"};
  return names[m];
}

static void mode_params(cm_qmode m, int *gs, int *bits) {
  static const int dgs[] = {64, 32, 32, 16}, dbits[] = {4, 4, 8, 4};
  if (*gs < 0) *gs = dgs[m];
  if (*bits < 0) *bits = dbits[m];
}

static char *shape_of(char *buf, size_t n, const cm_array *a) {
  return (char *)cm_shape_str(buf, n, a->ndim, a->shape);
}

/* MLX's validate_mode_with_type: the mode, biases present exactly for
 * affine, floating scales/biases or uint8 scales; *dtype the output type
 * (out_type < 0: the default). */
static int check_mode(const char *tag, const char *mode, cm_array *scales, cm_array *biases,
                      int out_type, cm_qmode *qm, cm_dtype *dtype) {
  if (parse_mode(tag, mode, qm)) return -1;
  if (!scales) return cm_error(CM_ERR_VALUE, "[%s] Got a null array.", tag);
  if (out_type >= 0 && !cm_dtype_is_float((cm_dtype)out_type))
    return cm_error(CM_ERR_VALUE,
                    "[%s] Only real floating types are supported but output dtype == %s.", tag,
                    cm_dtype_name((cm_dtype)out_type));
  if (*qm == CM_QMODE_AFFINE) {
    if (!biases)
      return cm_error(CM_ERR_VALUE, "[%s] Biases must be provided for affine quantization.", tag);
    cm_dtype t = cm_promote_types(scales->dtype, biases->dtype);
    if (!cm_dtype_is_float(t))
      return cm_error(CM_ERR_VALUE,
                      "[%s] Only real floating types are supported but scales.dtype() == %s and "
                      "biases.dtype() == %s.",
                      tag, cm_dtype_name(scales->dtype), cm_dtype_name(biases->dtype));
    *dtype = out_type >= 0 ? (cm_dtype)out_type : t;
    return 0;
  }
  if (scales->dtype != CM_UINT8)
    return cm_error(CM_ERR_VALUE, "[%s] Scale type must be uint8 but received type %s.", tag,
                    cm_dtype_name(scales->dtype));
  if (biases)
    return cm_error(CM_ERR_VALUE, "[%s] Biases must be null for quantization mode '%s'.", tag,
                    mode);
  *dtype = out_type >= 0 ? (cm_dtype)out_type : CM_BFLOAT16;
  return 0;
}

static int check_global(const char *tag, cm_qmode qm, cm_array *g) {
  if (!g) return 0;
  if (qm != CM_QMODE_NVFP4)
    return cm_error(CM_ERR_VALUE,
                    "[%s] Global scale is only supported for 'nvfp4' quantization mode.", tag);
  char b[128];
  if (g->size != 1)
    return cm_error(CM_ERR_VALUE, "[%s] Global scale must be a scalar but got shape %s.", tag,
                    shape_of(b, sizeof b, g));
  if (g->dtype != CM_FLOAT32)
    return cm_error(CM_ERR_VALUE, "[%s] Global scale must have dtype float32 but got %s.", tag,
                    cm_dtype_name(g->dtype));
  return 0;
}

/* The codes are read a byte or two at a time (backend/cpu/quantized.c). */
static int check_bits(const char *tag, int bits) {
  if (bits > 8)
    return cm_error(CM_ERR_NOT_IMPLEMENTED, "[%s] %d bits is not supported in cmlx (at most 8).",
                    tag, bits);
  return 0;
}

static int check_fp_params(const char *tag, cm_qmode qm, int gs, int bits) {
  int egs = qm == CM_QMODE_NVFP4 ? 16 : 32, ebits = qm == CM_QMODE_MXFP8 ? 8 : 4;
  if (gs != egs)
    return cm_error(CM_ERR_VALUE, "[%s] %s quantization requires group size %d but got %d.", tag,
                    mode_name(qm), egs, gs);
  if (bits != ebits)
    return cm_error(CM_ERR_VALUE, "[%s] %s quantization requires bits to be %d but got %d.", tag,
                    mode_name(qm), ebits, bits);
  return 0;
}

/* ---- quantize ---- */

int cm_quantize(cm_array *w, int group_size, int bits, const char *mode, cm_array *global_scale,
                cm_array **outs, int *nout, cm_stream s) {
  cm_qmode qm;
  *nout = 0;
  if (cm_op_stream(&s) || parse_mode("quantize", mode, &qm)) return -1;
  if (!w) return cm_error(CM_ERR_VALUE, "[quantize] Got a null array.");
  mode_params(qm, &group_size, &bits);
  char b[256];
  if (!cm_dtype_is_float(w->dtype))
    return cm_error(CM_ERR_VALUE,
                    "[quantize] Only real floating types can be quantized but w has type %s.",
                    cm_dtype_name(w->dtype));
  if (w->ndim < 2)
    return cm_error(CM_ERR_VALUE,
                    "[quantize] The matrix to be quantized must have at least 2 dimension but it "
                    "has only %d.",
                    w->ndim);
  if (group_size <= 0 || w->shape[w->ndim - 1] % group_size != 0)
    return cm_error(CM_ERR_VALUE,
                    "[quantize] The last dimension of the matrix needs to be divisible by the "
                    "quantization group size %d. However the provided  matrix has shape %s",
                    group_size, shape_of(b, sizeof b, w));
  if (check_global("quantize", qm, global_scale)) return -1;
  if (qm == CM_QMODE_AFFINE) {
    if (group_size != 32 && group_size != 64 && group_size != 128)
      return cm_error(CM_ERR_VALUE,
                      "[quantize] The requested group size %d is not supported. The supported "
                      "group sizes are 32, 64, and 128.",
                      group_size);
    if (bits < 1 || bits > 8 || bits == 7)
      return cm_error(CM_ERR_VALUE,
                      "[quantize] The requested number of bits %d is not supported. The "
                      "supported bits are 1, 2, 3, 4, 5, 6 and 8.",
                      bits);
  } else if (check_fp_params("quantize", qm, group_size, bits)) {
    return -1;
  }
  int nd = w->ndim;
  int32_t qshape[CM_MAX_DIMS], sshape[CM_MAX_DIMS];
  memcpy(qshape, w->shape, sizeof(int32_t) * (size_t)nd);
  memcpy(sshape, w->shape, sizeof(int32_t) * (size_t)nd);
  qshape[nd - 1] = (int32_t)((int64_t)w->shape[nd - 1] * bits / 32);
  sshape[nd - 1] = w->shape[nd - 1] / group_size;
  cm_quant_params p;
  memset(&p, 0, sizeof p);
  p.mode = qm, p.group_size = group_size, p.bits = bits, p.has_global = global_scale != NULL;
  bool affine = qm == CM_QMODE_AFFINE;
  int n = affine ? 3 : 2;
  cm_dtype dts[3] = {CM_UINT32, affine ? w->dtype : CM_UINT8, w->dtype};
  int nds[3] = {nd, nd, nd};
  const int32_t *shapes[3] = {qshape, sshape, sshape};
  cm_array *in[2] = {w, global_scale};
  if (cm_node_new_multi(n, dts, nds, shapes, affine ? &cm_prim_quantize : &cm_prim_fp_quantize, &p,
                        sizeof p, in, global_scale ? 2 : 1, s, outs))
    return -1;
  *nout = n;
  return 0;
}

/* ---- dequantize ---- */

static int check_dequant_shapes(cm_array *w, cm_array *scales, cm_array *biases, int gs, int bits) {
  const char *what = biases ? "Shape of scales and biases does not match the matrix"
                            : "Shape of scales does not match the matrix";
  int nd = w->ndim;
  bool ok = scales->ndim == nd && (!biases || biases->ndim == nd);
  for (int i = 0; ok && i < nd - 1; i++)
    ok = scales->shape[i] == w->shape[i] && (!biases || biases->shape[i] == w->shape[i]);
  if (!ok) return cm_error(CM_ERR_VALUE, "[dequantize] %s", what);
  int64_t out_size = (int64_t)w->shape[nd - 1] * 32 / bits;
  if (out_size != (int64_t)scales->shape[nd - 1] * gs) {
    char a[256], b[256];
    if (biases)
      return cm_error(CM_ERR_VALUE,
                      "[dequantize] %s given the quantization parameters. Provided matrix of "
                      "shape %s and scales/biases of shape %s with group_size=%d and bits=%d.",
                      what, shape_of(a, sizeof a, w), shape_of(b, sizeof b, scales), gs, bits);
    return cm_error(CM_ERR_VALUE,
                    "[dequantize] %s given the quantization parameters. Provided matrix of shape "
                    "%s and scales of shape %s.",
                    what, shape_of(a, sizeof a, w), shape_of(b, sizeof b, scales));
  }
  return 0;
}

cm_array *cm_dequantize(cm_array *w, cm_array *scales, cm_array *biases, int group_size, int bits,
                        const char *mode, cm_array *global_scale, int dtype, cm_stream s) {
  cm_qmode qm;
  cm_dtype out_type;
  if (cm_op_stream(&s)) return NULL;
  if (check_mode("dequantize", mode, scales, biases, dtype, &qm, &out_type)) return NULL;
  if (!w) return cm_error(CM_ERR_VALUE, "[dequantize] Got a null array."), NULL;
  mode_params(qm, &group_size, &bits);
  if (bits <= 0)
    return cm_error(CM_ERR_VALUE, "[dequantize] Invalid value for bits: %d", bits), NULL;
  if (group_size <= 0)
    return cm_error(CM_ERR_VALUE, "[dequantize] Invalid value for group_size: %d", group_size),
           NULL;
  if (w->dtype != CM_UINT32)
    return cm_error(CM_ERR_VALUE, "[dequantize] The matrix should be given as a uint32"), NULL;
  if (w->ndim < 2)
    return cm_error(CM_ERR_VALUE,
                    "[dequantize] The matrix to be dequantized must have at least 2 dimension "
                    "but it has only %d.",
                    w->ndim),
           NULL;
  if (check_global("dequantize", qm, global_scale)) return NULL;
  if (qm != CM_QMODE_AFFINE && check_fp_params("dequantize", qm, group_size, bits)) return NULL;
  if (check_dequant_shapes(w, scales, biases, group_size, bits) || check_bits("dequantize", bits))
    return NULL;
  int nd = w->ndim;
  int32_t shape[CM_MAX_DIMS];
  memcpy(shape, w->shape, sizeof(int32_t) * (size_t)nd);
  shape[nd - 1] = (int32_t)((int64_t)w->shape[nd - 1] * 32 / bits);
  cm_quant_params p;
  memset(&p, 0, sizeof p);
  p.mode = qm, p.group_size = group_size, p.bits = bits, p.has_global = global_scale != NULL;
  cm_array *in[3] = {w, scales, qm == CM_QMODE_AFFINE ? biases : global_scale};
  int nin = qm == CM_QMODE_AFFINE || global_scale ? 3 : 2;
  if (qm == CM_QMODE_AFFINE) {
    p.t1 = scales->dtype;
    p.t2 = cm_promote_types(scales->dtype, biases->dtype);
  } else if (global_scale) { /* MLX's arithmetic promotes with the float32 global scale */
    out_type = cm_promote_types(out_type, CM_FLOAT32);
  }
  return cm_op_node(out_type, nd, shape, &cm_prim_dequantize, &p, sizeof p, in, nin, s);
}

/* ---- quantized products ---- */

/* MLX's validate_quantized_input and extract_quantized_matmul_dims:
 * *outer is the product's last dimension. */
static int check_qmm(const char *tag, cm_array *x, cm_array *w, cm_array *scales, cm_array *biases,
                     bool transpose, int gs, int bits, int32_t *outer) {
  char a[256], b[256];
  if (!x || !w) return cm_error(CM_ERR_VALUE, "[%s] Got a null array.", tag);
  if (w->dtype != CM_UINT32)
    return cm_error(CM_ERR_VALUE, "[%s] The weight matrix should be uint32 but received %s", tag,
                    cm_dtype_name(w->dtype));
  if (biases && !cm_same_shape(scales, biases))
    return cm_error(CM_ERR_VALUE,
                    "[%s] Scales and biases should have the same shape. Received scales with "
                    "shape %s and biases with %s",
                    tag, shape_of(a, sizeof a, scales), shape_of(b, sizeof b, biases));
  if (w->ndim < 2 || x->ndim < 1)
    return cm_error(CM_ERR_VALUE, "[%s] The weight matrix must have at least 2 dimensions.", tag);
  bool same = scales->ndim >= w->ndim - 2;
  for (int i = 0; same && i < w->ndim - 2; i++) same = w->shape[i] == scales->shape[i];
  if (!same || scales->ndim < 1)
    return cm_error(CM_ERR_VALUE,
                    "[%s] Weight and scales should have the same batch shape. Received weight "
                    "with shape %s, scales with %s.",
                    tag, shape_of(a, sizeof a, w), shape_of(b, sizeof b, scales));
  int64_t wl = w->shape[w->ndim - 1], full = wl * 32 / bits;
  /* (MLX leaves the row count unchecked, and its kernels then read past
   * the scales) */
  if (full != (int64_t)scales->shape[scales->ndim - 1] * gs || scales->ndim != w->ndim ||
      scales->shape[scales->ndim - 2] != w->shape[w->ndim - 2])
    return cm_error(CM_ERR_VALUE,
                    "[%s] The shapes of the weight and scales are incompatible based on bits and "
                    "group_size. w.shape() == %s and scales.shape() == %s with group_size=%d and "
                    "bits=%d",
                    tag, shape_of(a, sizeof a, w), shape_of(b, sizeof b, scales), gs, bits);
  int64_t inner = transpose ? full : w->shape[w->ndim - 2];
  int64_t out = transpose ? w->shape[w->ndim - 2] : full;
  if (inner != x->shape[x->ndim - 1])
    return cm_error(CM_ERR_VALUE,
                    "[%s] Last dimension of first input with shape (..., %d) does not match the "
                    "expanded quantized matrix (%lld, %lld) computed from shape %s with "
                    "group_size=%d, bits=%d and transpose=%s",
                    tag, x->shape[x->ndim - 1], (long long)inner, (long long)out,
                    shape_of(a, sizeof a, w), gs, bits, transpose ? "true" : "false");
  *outer = (int32_t)out;
  return check_bits(tag, bits);
}

/* The checks and dtype shared by quantized_matmul and gather_qmm. */
static int qmm_setup(const char *tag, cm_array *x, cm_array *w, cm_array *scales, cm_array *biases,
                     bool transpose, int *gs, int *bits, const char *mode, cm_quant_params *p,
                     cm_dtype *dtype, int32_t *outer) {
  cm_qmode qm;
  cm_dtype t;
  if (check_mode(tag, mode, scales, biases, -1, &qm, &t)) return -1;
  mode_params(qm, gs, bits);
  if (*bits <= 0 || *gs <= 0)
    return cm_error(CM_ERR_VALUE, "[%s] Invalid group_size %d or bits %d.", tag, *gs, *bits);
  if (check_qmm(tag, x, w, scales, biases, transpose, *gs, *bits, outer)) return -1;
  *dtype = qm == CM_QMODE_AFFINE ? cm_promote_types(x->dtype, t) : x->dtype;
  if (!cm_dtype_is_float(*dtype))
    return cm_error(CM_ERR_VALUE,
                    "[%s] Only real floating types are supported but x.dtype() == %s.", tag,
                    cm_dtype_name(x->dtype));
  memset(p, 0, sizeof *p);
  p->mode = qm, p->group_size = *gs, p->bits = *bits, p->transpose = transpose;
  return 0;
}

static void release_all(cm_array **a, int n) {
  for (int i = 0; i < n; i++) cm_release(a[i]), a[i] = NULL;
}

cm_array *cm_quantized_matmul(cm_array *x, cm_array *w, cm_array *scales, cm_array *biases,
                              bool transpose, int group_size, int bits, const char *mode,
                              cm_stream s) {
  cm_quant_params p;
  cm_dtype t;
  int32_t outer;
  if (cm_op_stream(&s) || qmm_setup("quantized_matmul", x, w, scales, biases, transpose,
                                    &group_size, &bits, mode, &p, &t, &outer))
    return NULL;
  bool affine = p.mode == CM_QMODE_AFFINE;
  int n = affine ? 4 : 3;
  cm_array *in[4] = {NULL, NULL, NULL, NULL};
  in[0] = cm_astype(x, t, s);
  in[1] = cm_retain(w);
  in[2] = affine ? cm_astype(scales, t, s) : cm_retain(scales);
  if (affine) in[3] = cm_astype(biases, t, s);
  for (int i = 0; i < n; i++)
    if (!in[i]) return release_all(in, n), NULL;
  if (x->ndim > 2 && w->ndim > 2) { /* broadcast the batch axes of every input */
    int nb = 0;
    int32_t bs[CM_MAX_DIMS];
    for (int i = 0; i < n; i++) {
      int32_t tmp[CM_MAX_DIMS];
      int nt;
      if (cm_broadcast_shapes(nb, bs, in[i]->ndim - 2, in[i]->shape, &nt, tmp))
        return release_all(in, n), NULL;
      nb = nt;
      memcpy(bs, tmp, sizeof(int32_t) * (size_t)nt);
    }
    for (int i = 0; i < n; i++) {
      int32_t sh[CM_MAX_DIMS];
      memcpy(sh, bs, sizeof(int32_t) * (size_t)nb);
      sh[nb] = in[i]->shape[in[i]->ndim - 2], sh[nb + 1] = in[i]->shape[in[i]->ndim - 1];
      cm_array *bi = cm_broadcast_to(in[i], nb + 2, sh, s);
      cm_release(in[i]);
      in[i] = bi;
      if (!bi) return release_all(in, n), NULL;
    }
  }
  int32_t shape[CM_MAX_DIMS];
  memcpy(shape, in[0]->shape, sizeof(int32_t) * (size_t)in[0]->ndim);
  shape[in[0]->ndim - 1] = outer;
  cm_array *r =
      cm_op_node(t, in[0]->ndim, shape, &cm_prim_quantized_matmul, &p, sizeof p, in, n, s);
  release_all(in, n);
  return r;
}

/* MLX's indices_or_default: integral indices as uint32, or every batch
 * index of a. */
static cm_array *indices_or_default(cm_array *idx, cm_array *a, cm_stream s) {
  char b[256];
  if (a->ndim < 2)
    return cm_error(CM_ERR_VALUE,
                    "[gather_qmm] Input must have at least two dimensions but got input with "
                    "shape %s.",
                    shape_of(b, sizeof b, a)),
           NULL;
  if (idx) {
    if (!cm_dtype_is_integral(idx->dtype))
      return cm_error(CM_ERR_VALUE,
                      "[gather_qmm] Got indices with invalid dtype. Indices must be integral."),
             NULL;
    return cm_astype(idx, CM_UINT32, s);
  }
  int64_t total = cm_shape_size(a->ndim - 2, a->shape);
  cm_array *r = cm_arange(0, (double)total, 1, CM_UINT32, s);
  if (!r) return NULL;
  cm_array *o = cm_reshape(r, a->ndim - 2, a->shape, s);
  cm_release(r);
  return o;
}

/* MLX's gather_qmm takes an nvfp4 scale per expert (shape w.shape[:-2],
 * float32), which it applies on the GPU only; cmlx checks it as MLX does
 * and has no kernel for it on either device yet. */
static int check_expert_global(cm_array *w, const char *mode, cm_array *g, cm_stream s) {
  if (!g) return 0;
  cm_qmode qm;
  if (parse_mode("gather_qmm", mode, &qm)) return -1;
  if (qm != CM_QMODE_NVFP4)
    return cm_error(CM_ERR_VALUE,
                    "[gather_qmm] Global scale is only supported for 'nvfp4' quantization mode.");
  if (g->dtype != CM_FLOAT32)
    return cm_error(CM_ERR_VALUE, "[gather_qmm] Global scale must have dtype float32 but got %s.",
                    cm_dtype_name(g->dtype));
  bool ok = w->ndim >= 2 && g->ndim == w->ndim - 2;
  for (int i = 0; ok && i < g->ndim; i++) ok = g->shape[i] == w->shape[i];
  if (!ok) {
    char want[128] = "(", got[128];
    size_t n = 1;
    for (int i = 0; i + 2 < w->ndim && n < sizeof want - 16; i++)
      n += (size_t)snprintf(want + n, sizeof want - n, i ? ",%d" : "%d", (int)w->shape[i]);
    snprintf(want + n, sizeof want - n, ")");
    return cm_error(CM_ERR_VALUE,
                    "[gather_qmm] Global scale must have one entry per expert with shape %s but "
                    "got %s.",
                    want, shape_of(got, sizeof got, g));
  }
  if (cm_op_stream(&s)) return -1;
  if (s.device.type != CM_GPU)
    return cm_error(CM_ERR_VALUE, "[gather_qmm] Global scale is only supported on the GPU.");
  return cm_error(CM_ERR_NOT_IMPLEMENTED,
                  "[gather_qmm] A global scale is not supported in cmlx yet.");
}

cm_array *cm_gather_qmm_global(cm_array *x, cm_array *w, cm_array *scales, cm_array *biases,
                               cm_array *lhs_indices, cm_array *rhs_indices, bool transpose,
                               int group_size, int bits, const char *mode,
                               cm_array *global_scale, bool sorted_indices, cm_stream s) {
  if (check_expert_global(w, mode, global_scale, s)) return NULL;
  return cm_gather_qmm(x, w, scales, biases, lhs_indices, rhs_indices, transpose, group_size, bits,
                       mode, sorted_indices, s);
}

cm_array *cm_gather_qmm(cm_array *x, cm_array *w, cm_array *scales, cm_array *biases,
                        cm_array *lhs_indices, cm_array *rhs_indices, bool transpose,
                        int group_size, int bits, const char *mode, bool sorted_indices,
                        cm_stream s) {
  if (!lhs_indices && !rhs_indices)
    return cm_quantized_matmul(x, w, scales, biases, transpose, group_size, bits, mode, s);
  cm_quant_params p;
  cm_dtype t;
  int32_t outer;
  if (cm_op_stream(&s) || qmm_setup("gather_qmm", x, w, scales, biases, transpose, &group_size,
                                    &bits, mode, &p, &t, &outer))
    return NULL;
  p.sorted = sorted_indices && (!lhs_indices || !rhs_indices);
  bool affine = p.mode == CM_QMODE_AFFINE;
  int n = affine ? 6 : 5;
  cm_array *in[6] = {NULL, NULL, NULL, NULL, NULL, NULL};
  cm_array *li = indices_or_default(lhs_indices, x, s);
  cm_array *ri = li ? indices_or_default(rhs_indices, w, s) : NULL;
  cm_array *idx_in[2] = {li, ri}, *idx[2] = {NULL, NULL};
  int rc = ri ? cm_broadcast_arrays(idx_in, 2, idx, s) : -1;
  cm_release(li);
  cm_release(ri);
  if (rc) return NULL;
  in[0] = cm_astype(x, t, s);
  in[1] = cm_retain(w);
  in[2] = affine ? cm_astype(scales, t, s) : cm_retain(scales);
  if (affine) in[3] = cm_astype(biases, t, s);
  in[n - 2] = idx[0];
  in[n - 1] = idx[1];
  for (int i = 0; i < n; i++)
    if (!in[i]) return release_all(in, n), NULL;
  int nd = idx[0]->ndim;
  int32_t shape[CM_MAX_DIMS];
  memcpy(shape, idx[0]->shape, sizeof(int32_t) * (size_t)nd);
  shape[nd] = x->shape[x->ndim - 2];
  shape[nd + 1] = outer;
  cm_array *r = cm_op_node(t, nd + 2, shape, &cm_prim_gather_qmm, &p, sizeof p, in, n, s);
  release_all(in, n);
  return r;
}

cm_array *cm_qqmm(cm_array *x, cm_array *w, cm_array *scales, int group_size, int bits,
                  const char *mode, cm_array *global_scale_x, cm_array *global_scale_w,
                  cm_stream s) {
  cm_qmode qm;
  if (cm_op_stream(&s) || parse_mode("qqmm", mode ? mode : "nvfp4", &qm)) return NULL;
  if (!x || !w) return cm_error(CM_ERR_VALUE, "[qqmm] Got a null array."), NULL;
  char a[256], b[256];
  if (x->ndim != 2 || w->ndim != 2)
    return cm_error(CM_ERR_VALUE,
                    "[qqmm] Only 2D inputs are supported but first input has shape %s and second "
                    "input has shape %s.",
                    shape_of(a, sizeof a, x), shape_of(b, sizeof b, w)),
           NULL;
  if (w->dtype != CM_UINT32 || !scales || x->shape[0] != 1 || global_scale_w ||
      qm == CM_QMODE_AFFINE)
    return cm_error(CM_ERR_NOT_IMPLEMENTED,
                    "[qqmm] cmlx's CPU qqmm takes one row of x, a quantized w with its scales, "
                    "an fp mode and no global scale for w."),
           NULL;
  cm_array *q[3] = {NULL, NULL, NULL};
  int nq = 0;
  if (cm_quantize(x, group_size, bits, mode_name(qm), global_scale_x, q, &nq, s)) return NULL;
  cm_array *xh =
      cm_dequantize(q[0], q[1], NULL, group_size, bits, mode_name(qm), global_scale_x, x->dtype, s);
  release_all(q, nq);
  if (!xh) return NULL;
  cm_array *r = cm_quantized_matmul(xh, w, scales, NULL, true, group_size, bits, mode_name(qm), s);
  cm_release(xh);
  return r;
}

cm_array *cm_gather_qqmm(cm_array *x, cm_array *w, cm_stream s) {
  (void)x, (void)w, (void)s;
  return cm_error(CM_ERR_NOT_IMPLEMENTED,
                  "[gather_qqmm] is not implemented on the CPU (MLX's CPU build has no kernel "
                  "for it either)."),
         NULL;
}

/* ---- fp8 ---- */

cm_array *cm_to_fp8(cm_array *x, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (!x) return cm_error(CM_ERR_VALUE, "[to_fp8] Got a null array."), NULL;
  if (!cm_dtype_is_float(x->dtype))
    return cm_error(CM_ERR_VALUE,
                    "[to_fp8] Only real floating types are supported but x.dtype() == %s.",
                    cm_dtype_name(x->dtype)),
           NULL;
  cm_quant_params p;
  memset(&p, 0, sizeof p);
  p.to_fp8 = 1;
  return cm_op_node(CM_UINT8, x->ndim, x->shape, &cm_prim_convert_fp8, &p, sizeof p, &x, 1, s);
}

cm_array *cm_from_fp8(cm_array *x, cm_dtype dtype, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (!x) return cm_error(CM_ERR_VALUE, "[from_fp8] Got a null array."), NULL;
  if (x->dtype != CM_UINT8)
    return cm_error(CM_ERR_VALUE, "[from_fp8] Input must have type uint8 but x.dtype() == %s.",
                    cm_dtype_name(x->dtype)),
           NULL;
  if (!cm_dtype_is_float(dtype))
    return cm_error(CM_ERR_VALUE,
                    "[from_fp8] Only real floating types are supported but dtype == %s.",
                    cm_dtype_name(dtype)),
           NULL;
  cm_quant_params p;
  memset(&p, 0, sizeof p);
  return cm_op_node(dtype, x->ndim, x->shape, &cm_prim_convert_fp8, &p, sizeof p, &x, 1, s);
}
