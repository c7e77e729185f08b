/* Small float32 matrix products, summed in double and rounded once: each
 * element is the float32 nearest alpha * (the exact product) + beta * c
 * up to one double rounding per term, where sgemm's float32 sums can miss
 * it by many ulps where terms cancel (which MLX's own float32-vs-float64
 * test notices).  For matrices this small the kernel is faster than a
 * BLAS call.  AVX-512 or AVX2/FMA where the CPU has it (CMLX_MATMUL_AVX512=0
 * stops at AVX2, CMLX_MATMUL_SIMD=0 forces the portable loop); all give the
 * same bits. */
#ifndef CMLX_BACKEND_CPU_MATMUL_SMALL_H
#define CMLX_BACKEND_CPU_MATMUL_SMALL_H

#include <stdint.h>

/* The products that take this path: M * N * K at most this. */
#define CM_SMALL_SGEMM_WORK 16384

/* C (M x N, row stride ldc) = alpha * A @ B + beta * C, with A's element
 * (r, k) at A[r * ars + k * acs] and B's (k, c) at B[k * brs + c * bcs];
 * beta == 0 never reads C.  M * N * K at most CM_SMALL_SGEMM_WORK. */
void cm_cpu_small_sgemm(int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t ars,
                        int64_t acs, const float *B, int64_t brs, int64_t bcs, float *C,
                        int64_t ldc, float beta);

/* The float32 kernels' instruction set (also conv_nhwc.c's): 2 AVX-512,
 * 1 AVX2 and FMA, 0 neither or switched off by the variables above. */
int cm_cpu_matmul_simd_level(void);

#endif
