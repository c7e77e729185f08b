/* CPU kernels of GatherMM, SegmentedMM and BlockMaskedMM (see
 * primitives/gather_mm.h): loops of one-matrix products on the shared
 * engine of matmul.c (BLAS, or the few-row kernel), so each product reads
 * its operands where they lie.  Indices are clamped into range, as
 * gathers' reads are (an index past the end never reads outside a
 * buffer); a segment is clamped into [0, K]. */
#include "backend/cpu/gather_mm.h"

#include <stdlib.h>
#include <string.h>

#include "backend/cpu/copy.h"
#include "backend/cpu/matmul.h"
#include "primitives/gather_mm.h"

static uint32_t index_at(const cm_array *idx, int64_t i) {
  const uint32_t *p = cm_data(idx);
  return p[cm_batch_offset(i, idx->ndim, idx->shape, idx->strides)];
}

static int64_t batch_count(const cm_array *x) {
  int64_t n = 1;
  for (int i = 0; i < x->ndim - 2; i++) n *= x->shape[i];
  return n;
}

/* operand matrix bi of x (..., R, C) */
static cm_gemm_operand matrix(const cm_array *x, int64_t bi) {
  int nd = x->ndim;
  int64_t off = cm_batch_offset(bi, nd - 2, x->shape, x->strides);
  return (cm_gemm_operand){(const char *)cm_data(x) + off * (int64_t)cm_dtype_size(x->dtype),
                           x->dtype, x->strides[nd - 2], x->strides[nd - 1]};
}

int cm_cpu_gather_mm(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  cm_array *a = in[0], *b = in[1], *lhs = in[2], *rhs = in[3];
  if (cm_alloc_output(out)) return -1;
  if (out->size == 0) return 0;
  int nd = out->ndim;
  int64_t M = out->shape[nd - 2], N = out->shape[nd - 1], K = a->shape[a->ndim - 1];
  int64_t na = batch_count(a), nbb = batch_count(b), mats = out->size / (M * N);
  size_t dsz = cm_dtype_size(out->dtype);
  if (K == 0 || na == 0 || nbb == 0) {
    memset(cm_data(out), 0, cm_nbytes(out));
    return 0;
  }
  cm_gemm g;
  cm_gemm_init(&g, out->dtype, M, N, K, 1.0f);
  int rc = 0;
  for (int64_t i = 0; i < mats && !rc; i++) {
    int64_t li = index_at(lhs, i), ri = index_at(rhs, i);
    cm_gemm_operand oa = matrix(a, li < na ? li : na - 1);
    cm_gemm_operand ob = matrix(b, ri < nbb ? ri : nbb - 1);
    rc = cm_gemm_run(&g, K, &oa, &ob, (char *)cm_data(out) + i * M * N * (int64_t)dsz, 0.0f);
  }
  cm_gemm_free(&g);
  return rc;
}

int cm_cpu_segmented_mm(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  cm_array *a = in[0], *b = in[1], *seg = in[2];
  if (cm_alloc_output(out)) return -1;
  if (out->size == 0) return 0;
  int nd = out->ndim;
  int64_t M = out->shape[nd - 2], N = out->shape[nd - 1], K = a->shape[1];
  int64_t mats = out->size / (M * N);
  size_t dsz = cm_dtype_size(out->dtype);
  cm_gemm g;
  cm_gemm_init(&g, out->dtype, M, N, K, 1.0f);
  int rc = 0;
  for (int64_t i = 0; i < mats && !rc; i++) {
    int64_t k0 = index_at(seg, 2 * i), k1 = index_at(seg, 2 * i + 1);
    k0 = k0 < K ? k0 : K;
    k1 = k1 < K ? k1 : K;
    char *o = (char *)cm_data(out) + i * M * N * (int64_t)dsz;
    if (k1 <= k0) {
      memset(o, 0, (size_t)(M * N) * dsz);
      continue;
    }
    cm_gemm_operand oa = matrix(a, 0), ob = matrix(b, 0);
    oa.ptr = (const char *)oa.ptr + k0 * oa.cs * (int64_t)dsz;
    ob.ptr = (const char *)ob.ptr + k0 * ob.rs * (int64_t)dsz;
    rc = cm_gemm_run(&g, k1 - k0, &oa, &ob, o, 0.0f);
  }
  cm_gemm_free(&g);
  return rc;
}

/* ---- BlockMaskedMM ---- */

static double load(const char *p, cm_dtype t) {
  switch (t) {
  case CM_BOOL: return *(const bool *)p ? 1.0 : 0.0;
  case CM_FLOAT16: return cm_f16_to_f32(*(const uint16_t *)p);
  case CM_BFLOAT16: return cm_bf16_to_f32(*(const uint16_t *)p);
  case CM_FLOAT64: return *(const double *)p;
  default: return *(const float *)p;
  }
}

static void store(char *p, cm_dtype t, double v) {
  switch (t) {
  case CM_FLOAT16: *(uint16_t *)p = cm_f32_to_f16((float)v); break;
  case CM_BFLOAT16: *(uint16_t *)p = cm_f32_to_bf16((float)v); break;
  case CM_FLOAT64: *(double *)p = v; break;
  default: *(float *)p = (float)v; break;
  }
}

/* Scale the block tiles of a rows x cols row-major matrix (dtype t) by
 * the mask of batch element bi; MLX skips tiles whose mask is exactly 1
 * and zeroes those a bool mask drops. */
static void apply_mask(char *data, cm_dtype t, int64_t rows, int64_t cols, const cm_array *mask,
                       int64_t bi, int bs) {
  int nd = mask->ndim;
  size_t msz = cm_dtype_size(mask->dtype), dsz = cm_dtype_size(t);
  const char *mb = (const char *)cm_data(mask) +
                   cm_batch_offset(bi, nd - 2, mask->shape, mask->strides) * (int64_t)msz;
  int64_t ty = (rows + bs - 1) / bs, tx = (cols + bs - 1) / bs;
  for (int64_t i = 0; i < ty; i++)
    for (int64_t j = 0; j < tx; j++) {
      double v = load(mb + (i * mask->strides[nd - 2] + j * mask->strides[nd - 1]) * (int64_t)msz,
                      mask->dtype);
      if (v == 1.0) continue;
      for (int64_t r = i * bs; r < rows && r < (i + 1) * bs; r++)
        for (int64_t c = j * bs; c < cols && c < (j + 1) * bs; c++) {
          char *e = data + (r * cols + c) * (int64_t)dsz;
          store(e, t, mask->dtype == CM_BOOL ? 0.0 : load(e, t) * v);
        }
    }
}

/* x's matrix bi copied row-major into dst (compute dtype ct). */
static void copy_matrix(void *dst, cm_dtype ct, const cm_array *x, int64_t bi) {
  int nd = x->ndim;
  cm_gemm_operand o = matrix(x, bi);
  int64_t rows = x->shape[nd - 2], cols = x->shape[nd - 1];
  int64_t dst_st[2] = {cols, 1}, src_st[2] = {o.rs, o.cs};
  int32_t shape[2] = {(int32_t)rows, (int32_t)cols};
  cm_cpu_copy_strided(dst, ct, dst_st, o.ptr, x->dtype, src_st, 2, shape);
}

int cm_cpu_block_masked_mm(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)p;
  const cm_block_mm_params *bp = cm_block_mm_params_of(out);
  cm_array *a = in[0], *b = in[1];
  bool has_op = nin > 3, has_out = nin == 3 || nin == 5;
  cm_array *mout = has_out ? in[2] : NULL;
  cm_array *mlhs = has_op ? in[nin - 2] : NULL, *mrhs = has_op ? in[nin - 1] : NULL;
  if (cm_alloc_output(out)) return -1;
  if (out->size == 0) return 0;
  int nd = out->ndim;
  int64_t M = out->shape[nd - 2], N = out->shape[nd - 1], K = a->shape[nd - 1];
  int64_t mats = out->size / (M * N);
  size_t dsz = cm_dtype_size(out->dtype);
  if (K == 0) {
    memset(cm_data(out), 0, cm_nbytes(out));
    return 0;
  }
  cm_gemm g;
  cm_gemm_init(&g, out->dtype, M, N, K, 1.0f);
  cm_dtype ct = g.ct;
  size_t csz = cm_dtype_size(ct);
  char *sa = has_op ? malloc((size_t)(M * K + K * N) * csz) : NULL;
  if (has_op && !sa) return cm_error(CM_ERR_MEMORY, "[block_masked_mm] Out of memory.");
  char *sb = has_op ? sa + M * K * (int64_t)csz : NULL;
  int rc = 0;
  for (int64_t i = 0; i < mats && !rc; i++) {
    cm_gemm_operand oa = matrix(a, i), ob = matrix(b, i);
    if (has_op) {
      copy_matrix(sa, ct, a, i);
      copy_matrix(sb, ct, b, i);
      apply_mask(sa, ct, M, K, mlhs, i, bp->block_size);
      apply_mask(sb, ct, K, N, mrhs, i, bp->block_size);
      oa = (cm_gemm_operand){sa, ct, K, 1};
      ob = (cm_gemm_operand){sb, ct, N, 1};
    }
    char *o = (char *)cm_data(out) + i * M * N * (int64_t)dsz;
    rc = cm_gemm_run(&g, K, &oa, &ob, o, 0.0f);
    if (!rc && mout) apply_mask(o, out->dtype, M, N, mout, i, bp->block_size);
  }
  free(sa);
  cm_gemm_free(&g);
  return rc;
}
