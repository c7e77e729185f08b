/* What the quantized product kernels share: quantized_mm.c drives the
 * jobs, quantized_rows.c holds the inner loops (portable and AVX2+FMA),
 * quantized_qmv.c the vector loops for x @ W^T with few rows of x. */
#ifndef CMLX_BACKEND_CPU_QUANTIZED_MM_H
#define CMLX_BACKEND_CPU_QUANTIZED_MM_H

#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"

/* Jobs with at most this many rows of x take the decode-once loops. */
#define QMV_ROWS 8

typedef struct qarr qarr;

/* A product's settings: x (rows, K) times W, out (rows, N). */
typedef struct qmm_ctx {
  const qarr *w, *s, *b; /* b NULL: an fp mode */
  int mode, gs, bits;
  bool transpose; /* W is (N, K), packed along K; else (K, N) packed along N */
  bool simd;      /* the AVX2+FMA loops may run */
  int64_t K, N;
  const float *lut; /* fp modes: the values of the codes */
  cm_dtype xdt;     /* x's own dtype (the kernels read it as float32) */
} qmm_ctx;

/* One W matrix: packed rows (w_rs bytes apart), scales (affine: of
 * dtype sbt, uint8 codes otherwise; s_rs apart) and biases (dtype sbt).
 * Affine scales and biases are read where they are, in float32, float16
 * or bfloat16: a half model's would otherwise be widened on every call,
 * a quarter of the bytes the packed weights take. */
typedef struct cm_qmat {
  const uint8_t *w;
  int64_t w_rs;
  const void *s;
  int64_t s_rs;
  const void *b;
  int64_t b_rs;
  cm_dtype sbt;
} cm_qmat;

/* Element i of an affine scale or bias row of dtype t, as float32. */
static inline float cm_q_sb(const void *p, int64_t i, cm_dtype t) {
  if (t == CM_FLOAT32) return ((const float *)p)[i];
  uint16_t h = ((const uint16_t *)p)[i];
  return t == CM_BFLOAT16 ? cm_bf16_to_f32(h) : cm_f16_to_f32(h);
}

/* transpose: out[m, n] for n in [n0, n1), every m < M; xsum[m * G + g]
 * is the sum of group g of x's row m (affine only). */
void cm_q_qmv_rows(const qmm_ctx *c, const cm_qmat *m, const float *x, const float *xsum, int64_t M,
                   int64_t n0, int64_t n1, float *out);
/* transpose, affine with 2, 4 or 8 bits: out (M, N) with the vector
 * loops of quantized_qmv.c, spread on the pool.  1 when done, 0 when they
 * do not apply (the caller takes cm_q_qmv_rows), -1 on error. */
int cm_q_qmv_fast(const qmm_ctx *c, const cm_qmat *m, const float *x, const float *xsum, int64_t M,
                  float *out);
/* not transposed: out[m, g*gs .. (g1)*gs) for the column groups [g0, g1). */
void cm_q_qvm_groups(const qmm_ctx *c, const cm_qmat *m, const float *x, int64_t M, int64_t g0,
                     int64_t g1, float *out);
/* xsum[r * (K / gs) + g]: the float32 sum of group g of row r of x (rows
 * of K), for each of the rows. */
void cm_q_group_sums(const float *x, int64_t rows, int64_t K, int gs, float *xsum);
/* Row r of W, dequantized to float32 (its whole width). */
void cm_q_dequant_row(const qmm_ctx *c, const cm_qmat *m, int64_t r, float *dst);

#endif
