/* CPU kernels of Matmul and AddMM (through CBLAS), and the one-matrix
 * product engine the other matrix-product kernels (gather_mm,
 * segmented_mm, block_masked_mm) share with them. */
#ifndef CMLX_BACKEND_CPU_MATMUL_H
#define CMLX_BACKEND_CPU_MATMUL_H

#include "backend/views.h" /* cm_batch_offset */
#include "primitives/primitive.h"

/* in[0] (..., M, K) @ in[1] (..., K, N) with equal batch shapes (the op
 * broadcasts them as views); AddMM adds in[2] (..., M, N): out = alpha *
 * a @ b + beta * c, with alpha and beta in p (a cm_matmul_params).  All
 * inputs have out's dtype (float16, bfloat16, float32, float64 or
 * complex64).  The output is row-contiguous. */
int cm_cpu_matmul(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

/* Products of M x K by K x N matrices stored as dt (float16/bfloat16 are
 * computed in float32 and rounded once), with scratch for packing the
 * operands BLAS cannot read in place.  A run may use a shorter K.  Not
 * for concurrent runs (they share the scratch). */
typedef struct cm_gemm {
  cm_dtype dt, ct; /* storage and compute dtype */
  size_t dsz, csz;
  int64_t M, N, K;
  float alpha;
  void *sa, *sb, *sc; /* scratch (compute type) */
  char *scratch;
  struct cm_buffer *scratch_buf; /* the scratch's block, when a large one came from the cache */
} cm_gemm;

/* One operand: element (i, j) at ptr + (i * rs + j * cs) elements of dtype
 * (dt, or the compute type). */
typedef struct cm_gemm_operand {
  const void *ptr;
  cm_dtype dtype;
  int64_t rs, cs;
} cm_gemm_operand;

/* Never fails (the scratch is allocated by the first run that needs it). */
int cm_gemm_init(cm_gemm *g, cm_dtype dt, int64_t M, int64_t N, int64_t K, float alpha);
/* out (M x N, row-major, dtype dt) = alpha * a @ b + beta * out, with
 * K <= g->K (K > 0); beta == 0 never reads out.  -1 on failure. */
int cm_gemm_run(cm_gemm *g, int64_t K, const cm_gemm_operand *a, const cm_gemm_operand *b,
                void *out, float beta);
void cm_gemm_free(cm_gemm *g);

#endif
