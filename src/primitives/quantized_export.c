/* .mlxfn states of the quantization primitives (quantized.c; the contract
 * is export_desc.h).  MLX's QuantizationMode is (affine, mxfp4, mxfp8,
 * nvfp4), cmlx's mode codes in the same order.
 *
 * cmlx's own nodes, under "Cmlx" names (cmlx reads them back, MLX reports
 * it cannot deserialise them):
 *   CmlxConvertFP8   bool to_fp8: MLX's ToFP8 / FromFP8, which MLX 0.32.4
 *                    cannot serialise
 *   CmlxDequantize   group_size, bits, mode, has_global: the fp modes
 *                    (affine is written as MLX's arithmetic, export_lower.c)
 *   CmlxQuantize     group_size, bits, mode: a floating-point quantize
 *                    with a global scale (its second input), which MLX
 *                    composes with ToFP8 and cannot serialise */
#include <string.h>

#include "ops/binary.h"
#include "ops/creation.h"
#include "ops/ops.h"
#include "ops/quantized.h"
#include "ops/reduce.h"
#include "ops/shape.h"
#include "ops/unary.h"
#include "primitives/export_desc.h"
#include "primitives/quantized.h"
#include "primitives/rules_util.h"

static const char *const qmodes[4] = {"affine", "mxfp4", "mxfp8", "nvfp4"};

static void put_quant(xw *w, const cm_quant_params *q) {
  xw_i32(w, q->group_size), xw_i32(w, q->bits), xw_i32(w, q->mode);
}
/* The (group_size, bits, mode) every state starts with. */
static int32_t get_quant(xr *r, int32_t *gs, int32_t *bits) {
  *gs = xr_i32(r), *bits = xr_i32(r);
  int32_t mode = xr_i32(r);
  if (mode < 0 || mode >= CM_XCOUNT(qmodes)) xr_bad(r, "an invalid quantization mode");
  return mode;
}

/* ---- QuantizedMatmul: (group_size, bits, mode, transpose) ---- */

static int save_qmm(const cm_array *a, xw *w, xsave *sv) {
  const cm_quant_params *q = cm_quant_params_of(a);
  if (q->has_global) return cm_export_unsupported(a);
  put_quant(w, q), xw_bool(w, q->transpose);
  return sv->name = "QuantizedMatmul", 0;
}
CM_XLOAD(load_qmm) {
  int32_t gs, bits, mode = get_quant(r, &gs, &bits);
  bool tr = xr_bool(r);
  CM_XMEASURE;
  CM_XINPUTS(3, 4);
  return cm_xload_one(cm_quantized_matmul(in[0], in[1], in[2], nin == 4 ? in[3] : NULL, tr, gs,
                                          bits, qmodes[mode], s),
                      o, outs);
}
const cm_export_desc cm_export_quantized_matmul = {
    .save = save_qmm, CM_EXPORT_NAMES({"QuantizedMatmul", load_qmm, 0})};

/* ---- GatherQMM: (group_size, bits, mode, transpose, left_sorted,
 * right_sorted) ---- */

static int save_gather_qmm(const cm_array *a, xw *w, xsave *sv) {
  const cm_quant_params *q = cm_quant_params_of(a);
  if (q->has_global) return cm_export_unsupported(a);
  put_quant(w, q);
  xw_bool(w, q->transpose), xw_bool(w, q->sorted), xw_bool(w, false);
  return sv->name = "GatherQMM", 0;
}
CM_XLOAD(load_gather_qmm) {
  int32_t gs, bits, mode = get_quant(r, &gs, &bits);
  bool tr = xr_bool(r), left = xr_bool(r), right = xr_bool(r);
  CM_XMEASURE;
  CM_XINPUTS(5, 6);
  if (right)
    return cm_error(CM_ERR_VALUE, "[import_function] GatherQMM with sorted right indices is not "
                                  "supported by cmlx.");
  return cm_xload_one(cm_gather_qmm(in[0], in[1], in[2], nin == 6 ? in[3] : NULL, in[nin - 2],
                                    in[nin - 1], tr, gs, bits, qmodes[mode], left, s),
                      o, outs);
}
const cm_export_desc cm_export_gather_qmm = {.save = save_gather_qmm,
                                             CM_EXPORT_NAMES({"GatherQMM", load_gather_qmm, 0})};

/* ---- Quantize: MLX's (group_size, bits, mode, dequantize); with a
 * global scale CmlxQuantize (group_size, bits, mode) ---- */

static int save_quantize(const cm_array *a, xw *w, xsave *sv) {
  const cm_quant_params *q = cm_quant_params_of(a);
  if (q->has_global && a->prim != &cm_prim_fp_quantize) return cm_export_unsupported(a);
  put_quant(w, q);
  if (q->has_global) return sv->name = "CmlxQuantize", 0;
  return xw_bool(w, false), sv->name = "Quantize", 0;
}
/* n quantize outputs as the node's (o->n of them). */
static int quantize_outs(cm_array **q, int n, const xout *o, cm_array **outs) {
  if (n != o->n) {
    for (int i = 0; i < n; i++) cm_release(q[i]);
    return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: Quantize outputs.");
  }
  for (int i = 0; i < n; i++) outs[i] = q[i];
  return 0;
}
CM_XLOAD(load_quantize) {
  int32_t gs, bits, mode = get_quant(r, &gs, &bits);
  bool deq = xr_bool(r);
  CM_XMEASURE;
  CM_XINPUTS(1, 1);
  if (deq)
    return cm_error(CM_ERR_VALUE, "[import_function] Quantize's dequantize form is not "
                                  "supported by cmlx.");
  cm_array *q[3] = {NULL, NULL, NULL};
  int n = 0;
  if (cm_quantize(in[0], gs, bits, qmodes[mode], NULL, q, &n, s)) return -1;
  return quantize_outs(q, n, o, outs);
}
CM_XLOAD(load_quantize_global) {
  int32_t gs, bits, mode = get_quant(r, &gs, &bits);
  CM_XMEASURE;
  if (nin != 2) return cm_xload_bad("wrong input count");
  cm_array *q[3] = {NULL, NULL, NULL};
  int n = 0;
  if (cm_quantize(in[0], gs, bits, qmodes[mode], in[1], q, &n, s)) return -1;
  return cm_xload_results(q, n, o, outs);
}
/* Both descriptors write these; Quantize's desc reads them. */
const cm_export_desc cm_export_quantize = {
    .save = save_quantize,
    CM_EXPORT_NAMES({"Quantize", load_quantize, 0}, {"CmlxQuantize", load_quantize_global, 0})};
const cm_export_desc cm_export_fp_quantize = {.save = save_quantize};

/* ---- CmlxDequantize: (group_size, bits, mode, has_global) ---- */

static int save_dequantize(const cm_array *a, xw *w, xsave *sv) {
  const cm_quant_params *q = cm_quant_params_of(a);
  put_quant(w, q), xw_bool(w, q->has_global != 0);
  return sv->name = "CmlxDequantize", 0;
}
CM_XLOAD(load_dequantize) {
  int32_t gs, bits, mode = get_quant(r, &gs, &bits);
  bool global = xr_bool(r);
  CM_XMEASURE;
  if (nin != 2 && nin != 3) return cm_xload_bad("wrong input count");
  if (o->n != 1) return cm_xload_bad("wrong output count");
  bool affine = mode == 0;
  cm_array *extra = nin == 3 ? in[2] : NULL;
  return cm_xload_one(cm_dequantize(in[0], in[1], affine ? extra : NULL, gs, bits, qmodes[mode],
                                    global ? extra : NULL, (int)o->dtypes[0], s),
                      o, outs);
}
static cm_array *scalar(cm_rt *t, double v, cm_dtype dt) {
  return RT(t, cm_array_scalar_double(v, dt));
}

/* MLX's affine dequantize on the CPU: the bits unpacked by shifts (power
 * of two widths: a shift pair per field, concatenated; others: single
 * bits regrouped and summed), grouped, times the scales, plus the biases,
 * cast to the result dtype. */
static cm_array *lower_dequantize(const cm_array *a) {
  if (a->nin != 3 || cm_quant_params_of(a)->mode != 0 || cm_quant_params_of(a)->has_global)
    return NULL;
  const cm_quant_params *q = cm_quant_params_of(a);
  cm_array *w = a->in[0], *sc = a->in[1], *bi = a->in[2];
  cm_stream s = a->stream;
  int bits = q->bits, gs = q->group_size, nd = w->ndim, last = -1;
  if (bits < 1 || bits > 8) return NULL;
  cm_rt t = {0};
  cm_array *u;
  if ((bits & (bits - 1)) == 0) {
    cm_array *parts[32]; /* own references: more fields than a cm_rt holds */
    int np = 0;
    bool bad = false;
    for (int start = 0; start < 32 && !bad; start += bits) {
      cm_array *up = cm_array_scalar_double(32 - (start + bits), CM_UINT32);
      cm_array *down = cm_array_scalar_double(32 - bits, CM_UINT32);
      cm_array *l = up && down ? cm_left_shift(w, up, s) : NULL;
      cm_array *r = l ? cm_right_shift(l, down, s) : NULL;
      cm_array *e = r ? cm_expand_dims(r, 1, &last, s) : NULL;
      cm_release(up), cm_release(down), cm_release(l), cm_release(r);
      if (e) parts[np++] = e;
      else bad = true;
    }
    if (bad) t.fail = true;
    u = t.fail ? NULL : RT(&t, cm_concatenate(parts, np, -1, s));
    for (int i = 0; i < np; i++) cm_release(parts[i]);
  } else {
    cm_array *e = RT(&t, cm_expand_dims(w, 1, &last, s));
    cm_array *sh = RT(&t, cm_arange(0, 32, 1, CM_UINT32, s)), *one = scalar(&t, 1, CM_UINT32);
    cm_array *r = t.fail ? NULL : RT(&t, cm_right_shift(e, sh, s));
    cm_array *b = t.fail ? NULL : RT(&t, cm_bitwise_and(r, one, s));
    int32_t shp[CM_MAX_DIMS];
    if (!t.fail) {
      memcpy(shp, b->shape, sizeof(int32_t) * (size_t)b->ndim);
      shp[b->ndim - 2] = -1, shp[b->ndim - 1] = bits;
    }
    cm_array *g = t.fail ? NULL : RT(&t, cm_reshape(b, b->ndim, shp, s));
    cm_array *k = RT(&t, cm_arange(0, bits, 1, CM_UINT32, s));
    cm_array *l = t.fail ? NULL : RT(&t, cm_left_shift(g, k, s));
    u = t.fail ? NULL : RT(&t, cm_reduce(CM_REDUCE_SUM, l, CM_AXIS(-1), false, s));
  }
  int32_t ws[CM_MAX_DIMS + 1];
  memcpy(ws, w->shape, sizeof(int32_t) * (size_t)nd);
  ws[nd - 1] = -1, ws[nd] = gs;
  cm_array *grouped = t.fail ? NULL : RT(&t, cm_reshape(u, nd + 1, ws, s));
  cm_array *se = RT(&t, cm_expand_dims(sc, 1, &last, s)),
           *be = RT(&t, cm_expand_dims(bi, 1, &last, s));
  cm_array *m = t.fail ? NULL : RT(&t, cm_multiply(grouped, se, s));
  cm_array *ad = t.fail ? NULL : RT(&t, cm_add(m, be, s));
  int32_t os[CM_MAX_DIMS];
  memcpy(os, sc->shape, sizeof(int32_t) * (size_t)sc->ndim);
  os[sc->ndim - 1] = -1;
  cm_array *flat = t.fail ? NULL : RT(&t, cm_reshape(ad, sc->ndim, os, s));
  cm_array *r = t.fail ? NULL : RT(&t, cm_astype(flat, a->dtype, s)), *out;
  return cm_rt_done(&t, r, &out) ? NULL : out;
}

const cm_export_desc cm_export_dequantize = {
    .save = save_dequantize,
    .lower = lower_dequantize,
    CM_EXPORT_NAMES({"CmlxDequantize", load_dequantize, 0})};

/* ---- CmlxConvertFP8: (to_fp8) ---- */

static int make_convert_fp8(const cm_xval *v, cm_array *const *in, int nin, const xout *o,
                            cm_array **outs, cm_stream s) {
  (void)nin;
  if (o->n != 1) return cm_xload_bad("wrong input count");
  return cm_xload_one(v[0].b ? cm_to_fp8(in[0], s) : cm_from_fp8(in[0], o->dtypes[0], s), o, outs);
}
const cm_export_desc cm_export_convert_fp8 = {
    .name = "CmlxConvertFP8",
    CM_EXPORT_FIELDS(cm_quant_params, CM_XF(CM_XF_BOOL, cm_quant_params, to_fp8)),
    .nin_lo = 1,
    .nin_hi = 1,
    .make = make_convert_fp8};
