/* Half-precision matrix products on AMX tiles (Intel Sapphire Rapids and
 * later): bfloat16 operands as they are, float16 ones as exact sums of two
 * bfloat16 parts, products accumulated in float32 and rounded once into
 * the output. */
#ifndef CMLX_BACKEND_CPU_GEMM_AMX_H
#define CMLX_BACKEND_CPU_GEMM_AMX_H

#include <stdbool.h>
#include <stdint.h>

#include "core/dtype.h"

/* out (M x N, dtype dt, rows N apart) = alpha A B + beta out, for A (M x K)
 * and B (K x N) of dtype dt (float16 or bfloat16), element (i, j) of A at
 * a + i ars + j acs and of B at b + i brs + j bcs (in elements).  Returns
 * 1 when done; 0 when the tiles do not apply (no AMX, the product too
 * small, values the tiles cannot carry exactly: a non-finite value, one
 * small enough for its products to fall below float32's normal range),
 * with out untouched, so the caller takes its own path; -1 after
 * reporting an error. */
int cm_gemm_amx(cm_dtype dt, int64_t M, int64_t N, int64_t K, float alpha, const void *a,
                int64_t ars, int64_t acs, const void *b, int64_t brs, int64_t bcs, void *out,
                float beta);

/* For the other kernels on the tiles (quantized_amx.c). */
/* The tiles may run: the CPU has them, Linux granted their state (asked
 * once), CMLX_MATMUL_AMX is not 0. */
bool cm_amx_ready(void);
/* This thread's tile configuration (8 tiles of 16 rows by 64 bytes), set
 * before the tile instructions of a task, released after them. */
void cm_amx_tiles_on(void);
void cm_amx_tiles_off(void);
/* The bfloat16 tiles of a row-major A (M x K, dtype adt: float32 or a
 * half, rows ars elements apart) as the product's A operand: tile (block
 * mb of 16 rows, block kb of 32 k, part p) of the parts-part split at dst
 * + ((mb KB + kb) parts + p) 512, KB = ceil(K / 32), ceil(M / 32) * 2
 * blocks (the rows past M zero).  Returns 1 when a value is one the tiles
 * cannot carry (non-finite, or non-zero under 2^-63 in magnitude), 0
 * otherwise. */
int cm_amx_pack_rows(cm_dtype adt, int parts, int64_t M, int64_t K, const void *a, int64_t ars,
                     uint16_t *dst);

#endif
