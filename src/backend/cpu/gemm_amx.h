/* Half-precision matrix products on AMX tiles (Intel Sapphire Rapids and
 * later): bfloat16 operands as they are, float16 ones as exact sums of two
 * bfloat16 parts, products accumulated in float32 and rounded once into
 * the output. */
#ifndef CMLX_BACKEND_CPU_GEMM_AMX_H
#define CMLX_BACKEND_CPU_GEMM_AMX_H

#include <stdint.h>

#include "core/dtype.h"

/* out (M x N, dtype dt, rows N apart) = alpha A B + beta out, for A (M x K)
 * and B (K x N) of dtype dt (float16 or bfloat16), element (i, j) of A at
 * a + i ars + j acs and of B at b + i brs + j bcs (in elements).  Returns
 * 1 when done; 0 when the tiles do not apply (no AMX, the product too
 * small, values the tiles cannot carry exactly: a non-finite float16, a
 * bfloat16 small enough for its products to fall below float32's normal
 * range), with out untouched, so the caller takes its own path; -1 after
 * reporting an error. */
int cm_gemm_amx(cm_dtype dt, int64_t M, int64_t N, int64_t K, float alpha, const void *a,
                int64_t ars, int64_t acs, const void *b, int64_t brs, int64_t bcs, void *out,
                float beta);

#endif
