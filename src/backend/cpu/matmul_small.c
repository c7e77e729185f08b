/* Small float32 matrix products accumulated in double (see matmul_small.h).
 *
 * Every output element is the float32 rounding of alpha * s (+ beta * c),
 * s the double sum of A[r, k] * B[k, c] over k in order.  The product of
 * two float32 values is exact in double, so a fused multiply-add adds the
 * same value an unfused one does: the AVX-512 and AVX2/FMA kernels and
 * the portable loop give the same bits, on any thread count.
 *
 * The AVX2 kernel works on register tiles of MR rows by 8 * G columns
 * (MR * 2G accumulators of four doubles, at most 8 of the 16 registers):
 * per k, each group of 8 floats of B's row is loaded once and widened,
 * each A[r, k] broadcast once, then MR * 2G FMAs.  Tiles: 4 x 8 while four
 * rows remain, then 3 x 8, 2 x 16 or 1 x 32 for the last rows (the wide
 * ones while enough columns remain); the last group of a row of tiles is
 * read and written under a mask.  The AVX-512 kernel (below) is the same
 * with eight doubles a register.  B is packed row-major first when its
 * columns are not contiguous. */
#include "backend/cpu/matmul_small.h"

#include <stdatomic.h>
#include <string.h>

#include "backend/cpu/cpu_features.h"

/* The portable loop: a block of columns at a time (64, then 8, then the
 * rest), constant widths with unit column stride being loops the compiler
 * vectorises. */
static inline void block_sums(int64_t nc, int64_t K, const float *A, int64_t acs, const float *B,
                              int64_t brs, int64_t bcs, double *acc) {
  for (int64_t c = 0; c < nc; c++) acc[c] = 0;
  for (int64_t k = 0; k < K; k++) {
    double av = A[k * acs];
    const float *bp = B + k * brs;
    if (bcs == 1)
      for (int64_t c = 0; c < nc; c++) acc[c] += av * bp[c];
    else
      for (int64_t c = 0; c < nc; c++) acc[c] += av * bp[c * bcs];
  }
}

static void portable(int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t ars,
                     int64_t acs, const float *B, int64_t brs, int64_t bcs, float *C, int64_t ldc,
                     float beta) {
  double acc[64];
  for (int64_t r = 0; r < M; r++)
    for (int64_t c0 = 0; c0 < N;) {
      int64_t nc = N - c0 >= 64 ? 64 : N - c0 >= 8 ? 8 : N - c0;
      const float *ar = A + r * ars, *bc = B + c0 * bcs;
      if (nc == 64) block_sums(64, K, ar, acs, bc, brs, bcs, acc);
      else if (nc == 8) block_sums(8, K, ar, acs, bc, brs, bcs, acc);
      else block_sums(nc, K, ar, acs, bc, brs, bcs, acc);
      float *cp = C + r * ldc + c0;
      for (int64_t c = 0; c < nc; c++) {
        double v = (double)alpha * acc[c];
        if (beta != 0) v += (double)beta * cp[c];
        cp[c] = (float)v;
      }
      c0 += nc;
    }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define SG_TARGET __attribute__((target("avx2,fma")))
#define SG_INLINE SG_TARGET __attribute__((always_inline)) static inline
#if defined(__clang__)
#define SG_UNROLL _Pragma("unroll")
#else
#define SG_UNROLL _Pragma("GCC unroll 8")
#endif

typedef struct sg_job {
  int64_t K;
  const float *A;
  int64_t ars, acs;
  const float *B; /* row-major: unit column stride */
  int64_t brs;
  float *C;
  int64_t ldc;
  double alpha, beta;
} sg_job;

/* Lanes below n (0 < n <= 8) set. */
SG_INLINE __m256i lane_mask(int64_t n) {
  return _mm256_cmpgt_epi32(_mm256_set1_epi32((int)n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

/* The tile at rows r0.., columns c0.. (MR rows, G groups of 8 columns);
 * the last group holds last (1..8) valid columns. */
SG_INLINE void tile(const sg_job *j, int MR, int G, int64_t r0, int64_t c0, int64_t last) {
  __m256d acc[4][8];
  __m256i m = lane_mask(last);
  SG_UNROLL for (int r = 0; r < MR; r++) SG_UNROLL for (int v = 0; v < 2 * G; v++) acc[r][v] =
      _mm256_setzero_pd();
  const float *a = j->A + r0 * j->ars, *b = j->B + c0;
  for (int64_t k = 0; k < j->K; k++, b += j->brs) {
    __m256d av[4];
    SG_UNROLL for (int r = 0; r < MR; r++) av[r] = _mm256_set1_pd(a[r * j->ars + k * j->acs]);
    SG_UNROLL for (int g = 0; g < G; g++) {
      const float *bg = b + 8 * g;
      __m256d b0, b1;
      if (g < G - 1 || last == 8) { /* widened straight from memory */
        b0 = _mm256_cvtps_pd(_mm_loadu_ps(bg)), b1 = _mm256_cvtps_pd(_mm_loadu_ps(bg + 4));
      } else {
        b0 = _mm256_cvtps_pd(_mm_maskload_ps(bg, _mm256_castsi256_si128(m)));
        b1 = _mm256_cvtps_pd(_mm_maskload_ps(bg + 4, _mm256_extracti128_si256(m, 1)));
      }
      SG_UNROLL for (int r = 0; r < MR; r++) {
        acc[r][2 * g] = _mm256_fmadd_pd(av[r], b0, acc[r][2 * g]);
        acc[r][2 * g + 1] = _mm256_fmadd_pd(av[r], b1, acc[r][2 * g + 1]);
      }
    }
  }
  __m256d al = _mm256_set1_pd(j->alpha), be = _mm256_set1_pd(j->beta);
  SG_UNROLL for (int r = 0; r < MR; r++) SG_UNROLL for (int g = 0; g < G; g++) {
    float *cp = j->C + (r0 + r) * j->ldc + c0 + 8 * g;
    bool full = g < G - 1 || last == 8;
    __m256d v0 = _mm256_mul_pd(al, acc[r][2 * g]), v1 = _mm256_mul_pd(al, acc[r][2 * g + 1]);
    if (j->beta != 0) {
      __m256 cf = full ? _mm256_loadu_ps(cp) : _mm256_maskload_ps(cp, m);
      v0 = _mm256_add_pd(v0, _mm256_mul_pd(be, _mm256_cvtps_pd(_mm256_castps256_ps128(cf))));
      v1 = _mm256_add_pd(v1, _mm256_mul_pd(be, _mm256_cvtps_pd(_mm256_extractf128_ps(cf, 1))));
    }
    __m256 out = _mm256_set_m128(_mm256_cvtpd_ps(v1), _mm256_cvtpd_ps(v0));
    if (full) _mm256_storeu_ps(cp, out);
    else _mm256_maskstore_ps(cp, m, out);
  }
}

/* One row of tiles of MR rows at r0 over all N columns: tiles of G
 * groups while they fit whole, then single groups, the last masked. */
SG_INLINE void tile_row(const sg_job *j, int MR, int G, int64_t r0, int64_t N) {
  int64_t c0 = 0;
  if (G > 1)
    for (; N - c0 >= 8 * G; c0 += 8 * G) tile(j, MR, G, r0, c0, 8);
  for (; c0 < N; c0 += 8) tile(j, MR, 1, r0, c0, N - c0 >= 8 ? 8 : N - c0);
}

SG_TARGET static void avx2(int64_t M, int64_t N, const sg_job *j) {
  int64_t r0 = 0;
  for (; M - r0 >= 4; r0 += 4) tile_row(j, 4, 1, r0, N);
  switch (M - r0) {
  case 3: tile_row(j, 3, 1, r0, N); break;
  case 2: tile_row(j, 2, 2, r0, N); break;
  case 1: tile_row(j, 1, 4, r0, N); break;
  default: break;
  }
}

/* AVX-512: tiles of MR rows by 8 * G columns, one register of eight
 * doubles per 8 columns (MR * G <= 8 accumulators): 8 x 8 while eight
 * rows remain, then 4 x 16, 2 x 32 or 1 x 64 while enough columns remain,
 * else single groups.  A's rows are widened to double first (at most
 * SG512_KMAX columns), so each A[r, k] is an FMA's broadcast operand. */
#define SG512_TARGET __attribute__((target("avx512f")))
#define SG512_INLINE SG512_TARGET __attribute__((always_inline)) static inline
#define SG512_KMAX 512

SG512_INLINE void tile512(const sg_job *j, const double *ad, int MR, int G, int64_t r0, int64_t c0,
                          int64_t last) {
  __m512d acc[8][8];
  __mmask16 m = (__mmask16)((1u << last) - 1);
  SG_UNROLL for (int r = 0; r < MR; r++) SG_UNROLL for (int g = 0; g < G; g++) acc[r][g] =
      _mm512_setzero_pd();
  const float *b = j->B + c0;
  int64_t K = j->K;
  for (int64_t k = 0; k < K; k++, b += j->brs) {
    SG_UNROLL for (int g = 0; g < G; g++) {
      __m256 bf = g < G - 1 || last == 8
                      ? _mm256_loadu_ps(b + 8 * g)
                      : _mm512_castps512_ps256(_mm512_maskz_loadu_ps(m, b + 8 * g));
      __m512d bd = _mm512_cvtps_pd(bf);
      SG_UNROLL for (int r = 0; r < MR; r++) acc[r][g] =
          _mm512_fmadd_pd(_mm512_set1_pd(ad[r * K + k]), bd, acc[r][g]);
    }
  }
  __m512d al = _mm512_set1_pd(j->alpha), be = _mm512_set1_pd(j->beta);
  SG_UNROLL for (int r = 0; r < MR; r++) SG_UNROLL for (int g = 0; g < G; g++) {
    float *cp = j->C + (r0 + r) * j->ldc + c0 + 8 * g;
    bool full = g < G - 1 || last == 8;
    __m512d v = _mm512_mul_pd(al, acc[r][g]);
    if (j->beta != 0) {
      __m256 cf = full ? _mm256_loadu_ps(cp) : _mm512_castps512_ps256(_mm512_maskz_loadu_ps(m, cp));
      v = _mm512_add_pd(v, _mm512_mul_pd(be, _mm512_cvtps_pd(cf)));
    }
    __m256 out = _mm512_cvtpd_ps(v);
    if (full) _mm256_storeu_ps(cp, out);
    else _mm512_mask_storeu_ps(cp, m, _mm512_castps256_ps512(out));
  }
}

SG512_INLINE void tile_row512(const sg_job *j, double *ad, int MR, int G, int64_t r0, int64_t N) {
  int64_t K = j->K;
  for (int r = 0; r < MR; r++) {
    const float *a = j->A + (r0 + r) * j->ars;
    double *d = ad + r * K;
    if (j->acs != 1) {
      for (int64_t k = 0; k < K; k++) d[k] = a[k * j->acs];
      continue;
    }
    int64_t k = 0;
    for (; K - k >= 8; k += 8) _mm512_storeu_pd(d + k, _mm512_cvtps_pd(_mm256_loadu_ps(a + k)));
    if (k < K) {
      __mmask16 m = (__mmask16)((1u << (K - k)) - 1);
      __m512d v = _mm512_cvtps_pd(_mm512_castps512_ps256(_mm512_maskz_loadu_ps(m, a + k)));
      _mm512_mask_storeu_pd(d + k, (__mmask8)m, v);
    }
  }
  int64_t c0 = 0;
  if (G > 1)
    for (; N - c0 >= 8 * G; c0 += 8 * G) tile512(j, ad, MR, G, r0, c0, 8);
  for (; c0 < N; c0 += 8) tile512(j, ad, MR, 1, r0, c0, N - c0 >= 8 ? 8 : N - c0);
}

SG512_TARGET static void avx512(int64_t M, int64_t N, const sg_job *j) {

  double ad[8 * SG512_KMAX];
  int64_t r0 = 0;
  for (; M - r0 >= 8; r0 += 8) tile_row512(j, ad, 8, 1, r0, N);
  int64_t left = M - r0;
  if (left >= 4) tile_row512(j, ad, 4, 2, r0, N), r0 += 4, left -= 4;
  if (left >= 2) tile_row512(j, ad, 2, 4, r0, N), r0 += 2, left -= 2;
  if (left >= 1) tile_row512(j, ad, 1, 8, r0, N);
}
#endif

/* Which kernel runs: 2 AVX-512, 1 AVX2/FMA, 0 the portable loop; found
 * on the first call (racing threads find the same). */
int cm_cpu_matmul_simd_level(void) {
  static atomic_int level = -1;
  int v = atomic_load_explicit(&level, memory_order_relaxed);
  if (v < 0) {
    const cm_cpu_flags *f = cm_cpu_features();
    v = f->avx2 && f->fma && cm_cpu_simd_enabled(CM_SIMD_MATMUL);
    if (v && f->avx512f && cm_cpu_simd_enabled(CM_SIMD_MATMUL512)) v = 2;
    atomic_store_explicit(&level, v, memory_order_relaxed);
  }
  return v;
}

void cm_cpu_small_sgemm(int64_t M, int64_t N, int64_t K, float alpha, const float *A, int64_t ars,
                        int64_t acs, const float *B, int64_t brs, int64_t bcs, float *C,
                        int64_t ldc, float beta) {
  if (M <= 0 || N <= 0) return;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  int level = cm_cpu_matmul_simd_level();
  if (level && K * N <= CM_SMALL_SGEMM_WORK) {
    float packed[CM_SMALL_SGEMM_WORK];
    if (bcs != 1 && N > 1) { /* B's rows made contiguous */
      for (int64_t k = 0; k < K; k++)
        for (int64_t c = 0; c < N; c++) packed[k * N + c] = B[k * brs + c * bcs];
      B = packed, brs = N;
    }
    sg_job j = {K, A, ars, acs, B, brs, C, ldc, alpha, beta};
    if (level == 2 && K <= SG512_KMAX) avx512(M, N, &j);
    else avx2(M, N, &j);
    return;
  }
#endif
  portable(M, N, K, alpha, A, ars, acs, B, brs, bcs, C, ldc, beta);
}
