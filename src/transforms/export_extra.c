/* .mlxfn states of the primitives export_prims.c does not cover, and
 * their loaders (the contract is export_impl.h's).
 *
 * MLX's names and states, which MLX 0.32.4 reads and runs:
 *   BlockMaskedMM   block_size; inputs a, b, then the output mask and/or
 *                   the two operand masks (MLX's input counts)
 *   Depends         no state; the outputs first among the inputs
 *
 * cmlx's own nodes, under "Cmlx" names (cmlx reads them back; MLX reports
 * "Unable to deserialize primitive CmlxLUF" and so on):
 *   CmlxLUF          MLX's LUF, which MLX 0.32.4 cannot serialise (so
 *                    neither lu_factor nor solve, which factors with it)
 *   CmlxSolve        no state: cmlx's solve node (a and b broadcast)
 *   CmlxSegmentedMM  MLX's SegmentedMM, which MLX cannot serialise
 *   CmlxConvertFP8   bool to_fp8: MLX's ToFP8 / FromFP8, likewise
 *   CmlxDiagonal     offset, axis1, axis2 (read only: export_lower.c
 *                    writes MLX's Gather composition)
 *   CmlxMedian       the axes, keepdims (read only: MLX's sort
 *                    composition is written)
 *   CmlxDequantize   group_size, bits, mode, has_global: the fp modes
 *                    (affine is written as MLX's arithmetic)
 *   CmlxQuantize     group_size, bits, mode: a floating-point quantize
 *                    with a global scale (its second input), which MLX
 *                    composes with ToFP8 and cannot serialise */
#include <string.h>

#include "ops/common.h"
#include "ops/contract.h"
#include "ops/linalg.h"
#include "ops/quantized.h"
#include "ops/reduce.h"
#include "ops/shape.h"
#include "primitives/gather_mm.h"
#include "primitives/layout.h"
#include "primitives/linalg.h"
#include "primitives/quantized.h"
#include "primitives/reduce.h"
#include "primitives/shape.h"
#include "transforms/export_impl.h"

#define P(T, a) ((const T *)(a)->params)

int cm_export_save_extra(const cm_array *node, xw *w, xsave *sv) {
  const cm_array *a = node->sib ? node->sib->out[0] : node;
  const cm_prim *p = a->prim;
  if (p == &cm_prim_block_masked_mm) {
    xw_i32(w, P(cm_block_mm_params, a)->block_size);
    return sv->name = "BlockMaskedMM", 0;
  }
  if (p == &cm_prim_depends) return sv->name = "Depends", 0;
  if (p == &cm_prim_luf) return sv->name = "CmlxLUF", 0;
  if (p == &cm_prim_solve) return sv->name = "CmlxSolve", 0;
  if (p == &cm_prim_segmented_mm) return sv->name = "CmlxSegmentedMM", 0;
  if (p == &cm_prim_convert_fp8) {
    xw_bool(w, P(cm_quant_params, a)->to_fp8 != 0);
    return sv->name = "CmlxConvertFP8", 0;
  }
  if (p == &cm_prim_diagonal) {
    const cm_diagonal_params *d = P(cm_diagonal_params, a);
    xw_i32(w, d->offset), xw_i32(w, d->axis1), xw_i32(w, d->axis2);
    return sv->name = "CmlxDiagonal", 0;
  }
  if (p == &cm_prim_median) {
    const cm_reduce_params *r = P(cm_reduce_params, a);
    int32_t ax[CM_MAX_DIMS];
    int n = 0;
    for (int i = 0; i < a->in[0]->ndim; i++)
      if (r->axes >> i & 1) ax[n++] = i;
    xw_ints(w, n, ax), xw_bool(w, r->keepdims != 0);
    return sv->name = "CmlxMedian", 0;
  }
  if (p == &cm_prim_fp_quantize && P(cm_quant_params, a)->has_global) {
    const cm_quant_params *q = P(cm_quant_params, a);
    xw_i32(w, q->group_size), xw_i32(w, q->bits), xw_i32(w, q->mode);
    return sv->name = "CmlxQuantize", 0;
  }
  if (p == &cm_prim_dequantize) {
    const cm_quant_params *q = P(cm_quant_params, a);
    xw_i32(w, q->group_size), xw_i32(w, q->bits), xw_i32(w, q->mode);
    xw_bool(w, q->has_global != 0);
    return sv->name = "CmlxDequantize", 0;
  }
  return cm_export_unsupported(a);
}

/* ---- loading ---- */

#define L(fn)                                                                                  \
  static int fn(xr *r, int code, cm_array *const *in, int nin, const xout *o, cm_array **outs, \
                cm_stream s)
#define MEASURE            \
  do {                     \
    (void)code;            \
    if (r->fail) return 0; \
    if (!o->n) return 0;   \
  } while (0)

static int bad(const char *what) {
  return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: %s.", what);
}

/* n results of an op (NULL entries: its error) as the node's outputs. */
static int results(cm_array **got, int n, const xout *o, cm_array **outs) {
  bool made = true;
  for (int i = 0; i < n; i++) made = made && got[i];
  if (!made || n != o->n) {
    for (int i = 0; i < n; i++) cm_release(got[i]);
    return made ? bad("wrong output count") : -1;
  }
  memcpy(outs, got, sizeof *outs * (size_t)n);
  return 0;
}
static int one(cm_array *x, const xout *o, cm_array **outs) { return results(&x, 1, o, outs); }

L(load_block_masked_mm) {
  int32_t bs = xr_i32(r);
  MEASURE;
  if (nin < 3 || nin > 5) return bad("wrong input count");
  cm_array *mo = nin != 4 ? in[2] : NULL;
  cm_array *ml = nin >= 4 ? in[nin - 2] : NULL, *mr = nin >= 4 ? in[nin - 1] : NULL;
  return one(cm_block_masked_mm(in[0], in[1], bs, mo, ml, mr, s), o, outs);
}
L(load_depends) {
  MEASURE;
  (void)r;
  if (o->n < 1 || o->n > nin) return bad("Depends' outputs");
  cm_array *got[64] = {NULL};
  if (o->n > 64) return bad("Depends' outputs");
  if (cm_depends(o->n, in, nin - o->n, in + o->n, s, got)) return -1;
  return results(got, o->n, o, outs);
}
L(load_luf) {
  MEASURE;
  if (nin != 1) return bad("wrong input count");
  cm_array *got[3];
  if (cm_linalg_luf(in[0], got, s)) return -1;
  return results(got, 3, o, outs);
}
L(load_solve) {
  MEASURE;
  if (nin != 2 || in[1]->ndim < 2) return bad("CmlxSolve's inputs");
  return one(cm_linalg_solve(in[0], in[1], s), o, outs);
}
L(load_segmented_mm) {
  MEASURE;
  if (nin != 3) return bad("wrong input count");
  return one(cm_segmented_mm(in[0], in[1], in[2], s), o, outs);
}
L(load_convert_fp8) {
  bool to = xr_bool(r);
  MEASURE;
  if (nin != 1 || o->n != 1) return bad("wrong input count");
  return one(to ? cm_to_fp8(in[0], s) : cm_from_fp8(in[0], o->dtypes[0], s), o, outs);
}
L(load_diagonal) {
  int32_t off = xr_i32(r), a1 = xr_i32(r), a2 = xr_i32(r);
  MEASURE;
  if (nin != 1) return bad("wrong input count");
  return one(cm_diagonal(in[0], off, a1, a2, s), o, outs);
}
L(load_median) {
  int32_t ax[CM_MAX_DIMS];
  int n = xr_ints(r, ax, CM_MAX_DIMS);
  bool keep = xr_bool(r);
  MEASURE;
  if (nin != 1) return bad("wrong input count");
  uint64_t mask = 0;
  for (int i = 0; i < n; i++) {
    if (ax[i] < 0 || ax[i] >= in[0]->ndim) return bad("CmlxMedian's axes");
    mask |= (uint64_t)1 << ax[i];
  }
  return one(cm_median_mask(in[0], mask, keep, s), o, outs);
}
L(load_dequantize) {
  int32_t gs = xr_i32(r), bits = xr_i32(r), mode = xr_i32(r);
  bool global = xr_bool(r);
  if (mode < 0 || mode >= 4) xr_bad(r, "an invalid quantization mode");
  MEASURE;
  if (nin != 2 && nin != 3) return bad("wrong input count");
  if (o->n != 1) return bad("wrong output count");
  bool affine = mode == 0;
  cm_array *extra = nin == 3 ? in[2] : NULL;
  return one(cm_dequantize(in[0], in[1], affine ? extra : NULL, gs, bits, cm_export_qmodes[mode],
                           global ? extra : NULL, (int)o->dtypes[0], s),
             o, outs);
}

L(load_quantize_global) {
  int32_t gs = xr_i32(r), bits = xr_i32(r), mode = xr_i32(r);
  if (mode < 0 || mode >= 4) xr_bad(r, "an invalid quantization mode");
  MEASURE;
  if (nin != 2) return bad("wrong input count");
  cm_array *q[3] = {NULL, NULL, NULL};
  int n = 0;
  if (cm_quantize(in[0], gs, bits, cm_export_qmodes[mode], in[1], q, &n, s)) return -1;
  return results(q, n, o, outs);
}

static const struct {
  const char *name;
  xload_fn load;
} loaders[] = {
    {"BlockMaskedMM", load_block_masked_mm},
    {"Depends", load_depends},
    {"CmlxLUF", load_luf},
    {"CmlxSolve", load_solve},
    {"CmlxSegmentedMM", load_segmented_mm},
    {"CmlxConvertFP8", load_convert_fp8},
    {"CmlxDiagonal", load_diagonal},
    {"CmlxMedian", load_median},
    {"CmlxDequantize", load_dequantize},
    {"CmlxQuantize", load_quantize_global},
};

xloader cm_export_loader_extra(const char *name, size_t len) {
  for (size_t i = 0; i < sizeof loaders / sizeof loaders[0]; i++)
    if (strlen(loaders[i].name) == len && !memcmp(loaders[i].name, name, len))
      return (xloader){loaders[i].load, 0};
  return (xloader){NULL, 0};
}
