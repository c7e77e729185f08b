/* Matrix products with few rows (or few columns): out (M x N) = alpha * A
 * (M x K) @ B (K x N) + beta * out, with M (or N) at most CM_GEMV_MAX_ROWS.
 * This is LLM decoding's x @ w.T, which is memory-bound: the kernel reads
 * the big operand once, converting float16/bfloat16 on the fly, and
 * spreads its columns over the thread pool (OpenBLAS's sgemm reads it
 * once per row block and widens halves through a float32 copy). */
#ifndef CMLX_BACKEND_CPU_GEMV_H
#define CMLX_BACKEND_CPU_GEMV_H

#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"

#define CM_GEMV_MAX_ROWS 8

/* Element (i, j) of a matrix is at base + (i * rs + j * cs) elements. */
typedef struct cm_gemv_mat {
  const void *ptr;
  int64_t rs, cs;
} cm_gemv_mat;

/* Computes the product when it can: dt (every operand's dtype) float32,
 * float16 or bfloat16, the CPU has AVX2/FMA/F16C, min(M, N) <= 8 and the
 * large operand has a unit stride along K or along its long side.  Returns
 * false (nothing written) otherwise; -1 on allocation failure (error set). */
int cm_cpu_gemv(cm_dtype dt, int64_t M, int64_t N, int64_t K, float alpha, cm_gemv_mat a,
                cm_gemv_mat b, void *out, int64_t ors, int64_t ocs, float beta);

#endif
