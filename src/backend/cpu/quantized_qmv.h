/* What quantized_qmv.c (the float loops) and quantized_qmv_vnni.c (the
 * integer loops for 4 bits) share: one W matrix of a product with few rows
 * of x, and the integer loops' entry points. */
#ifndef CMLX_BACKEND_CPU_QUANTIZED_QMV_H
#define CMLX_BACKEND_CPU_QUANTIZED_QMV_H

#include <stdint.h>

#include "core/dtype.h"

typedef struct qmv_args {
  const uint8_t *w;
  const void *s, *b; /* of dtype sbt */
  cm_dtype sbt;
  int64_t w_rs, s_rs, b_rs;
  int64_t M, K, N;
  int gs, bits;
} qmv_args;

/* x (M, K) in fixed point for the integer loops: per row and block of 4
 * groups, three signed 8-bit limbs of each transformed element and the
 * block's power of two.  Empty (q NULL) when they do not apply. */
typedef struct qmv_fixed {
  int8_t *q;  /* 3 * K bytes per row, in the loops' order */
  float *pw;  /* (M, K / (4 * gs)): 2^-e, the value of one unit */
} qmv_fixed;

/* Whether the integer loops can take this product: 4 bits, group size
 * 32, 64 or 128, a whole number of 4-group blocks, and a CPU with
 * AVX-512 VNNI, VBMI, BW and VL (CMLX_QUANT_VNNI=0 turns them off). */
int cm_qmv_vnni_applies(int bits, int gs, int64_t K);
/* x in fixed point (free with cm_qmv_fixed_free).  0 with f->q NULL when
 * some block cannot be written exactly enough (a NaN or an infinity, or
 * magnitudes beyond 2^+-100): the float loops then take the product.
 * -1 on allocation failure. */
int cm_qmv_fixed_make(const float *x, int64_t M, int64_t K, int gs, qmv_fixed *f);
void cm_qmv_fixed_free(qmv_fixed *f);
/* out[i, n] for rows n in [n0, n1) of W, every row i of x; xsum[i * G + g]
 * is the sum of group g of row i of x (the biases' share). */
void cm_qmv_vnni_rows(const qmv_args *a, const qmv_fixed *f, int64_t n0, int64_t n1,
                      const float *xsum, float *out);

#endif
