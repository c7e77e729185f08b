/* x @ W^T for a few rows of x (M <= QMV_ROWS) and W affine with 2, 4 or
 * 8 bits: the loop that matters for decoding one token.
 *
 * out[i, n] = sum_g scale[n, g] * (q[n, g] . x[i, g]) + bias[n, g] * sum(x[i, g]).
 * Each block of QV_LANES packed bytes is loaded once, zero-extended to
 * int32 lanes (one byte per lane); each of the 1, 2 or 4 codes a byte
 * holds then costs a mask and a conversion (with AVX-512 a 4-bit mask and
 * conversion is one vpermps; the last code needs no mask) and one
 * multiply-add per row of x, against x permuted and transformed once per
 * call (qmv_permute), so that nothing moves between lanes.  Each decoded
 * vector serves every row of x (up to 8 per pass with AVX-512, 4 with
 * AVX2), and each load of x serves several rows of W (qmv_tile).  The
 * sums of x per group are taken once per call too, so a bias costs one
 * multiply per group.  Rows of W are spread on the pool in tiles of 4.
 *
 * AVX-512 when the CPU has it (CMLX_QUANT_AVX512=0 turns it off), else
 * AVX2+FMA; neither (or CMLX_UNARY_SIMD=0): the portable loops of
 * quantized_rows.c.  4 bits with AVX-512 VNNI take the integer loops of
 * quantized_qmv_vnni.c instead, twice as fast. */
#include <stdatomic.h>
#include <stdlib.h>

#include "backend/cpu/quantized.h"
#include "backend/cpu/quantized_mm.h"
#include "backend/cpu/quantized_qmv.h"
#include "backend/cpu/cpu_features.h"
#include "core/error.h"
#include "core/threadpool.h"

/* Scales or biases a tile widens at once (float32 on the stack): the
 * groups of one x block, QMV_XBLOCK / 32 at the smallest group size. */
#define QMV_SB_CHUNK 192


#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_QMV 1

/* ---- AVX2 + FMA: 8 lanes ---- */
#define QV __m256
#define QI __m256i
#define QV_LANES 8
#define QV_WIDE 4
#define QV_TARGET __attribute__((target("avx2,fma,f16c")))
#define QV_SUFFIX _avx2
#define QV_LOADB(p) _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(p)))
#define QV_AND(a, b) _mm256_and_si256(a, b)
#define QV_SET1I(v) _mm256_set1_epi32(v)
#define QV_CVT(v) _mm256_cvtepi32_ps(v)
#define QV_FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define QV_SET1(v) _mm256_set1_ps(v)
#define QV_ZERO() _mm256_setzero_ps()
#define QV_LOAD(p) _mm256_loadu_ps(p)
#define QV_HSUM(v) qmv_hsum_avx2(v)
#define QV_LUT16 0
#define QV_PERM16(i, t) (t)
#define QV_IOTA16() _mm256_setzero_ps()
QV_TARGET static inline float qmv_hsum_avx2(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}
#include "backend/cpu/quantized_qmv_impl.h"
#undef QV
#undef QI
#undef QV_LANES
#undef QV_WIDE
#undef QV_TARGET
#undef QV_SUFFIX
#undef QV_LOADB
#undef QV_AND
#undef QV_SET1I
#undef QV_CVT
#undef QV_FMA
#undef QV_SET1
#undef QV_ZERO
#undef QV_LOAD
#undef QV_HSUM
#undef QV_LUT16
#undef QV_PERM16
#undef QV_IOTA16

/* ---- AVX-512F: 16 lanes ---- */
#define QV __m512
#define QI __m512i
#define QV_LANES 16
#define QV_WIDE 8
#define QV_TARGET __attribute__((target("avx512f,f16c")))
#define QV_SUFFIX _avx512
#define QV_LOADB(p) _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p)))
#define QV_AND(a, b) _mm512_and_si512(a, b)
#define QV_SET1I(v) _mm512_set1_epi32(v)
#define QV_CVT(v) _mm512_cvtepi32_ps(v)
#define QV_FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define QV_SET1(v) _mm512_set1_ps(v)
#define QV_ZERO() _mm512_setzero_ps()
#define QV_LOAD(p) _mm512_loadu_ps(p)
#define QV_HSUM(v) _mm512_reduce_add_ps(v)
#define QV_LUT16 1
#define QV_PERM16(i, t) _mm512_permutexvar_ps(i, t)
#define QV_IOTA16() _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15)
#include "backend/cpu/quantized_qmv_impl.h"
#else
#define HAVE_QMV 0
#endif

/* 0: no fast loop; else the lanes of the one that runs. */
static int qmv_lanes(const qmm_ctx *c) {
#if HAVE_QMV
  static atomic_int avx512 = -1;
  if (!c->simd || c->mode != CM_QMODE_AFFINE || !c->transpose) return 0;
  if (c->bits != 2 && c->bits != 4 && c->bits != 8) return 0;
  int v = atomic_load_explicit(&avx512, memory_order_relaxed);
  if (v < 0) {
    const char *env = getenv("CMLX_QUANT_AVX512");
    v = cm_cpu_features()->avx512f && !(env && env[0] == '0');
    atomic_store_explicit(&avx512, v, memory_order_relaxed);
  }
  int per = 8 / c->bits; /* a block must not straddle two groups */
  if (v && c->gs % (16 * per) == 0) return 16;
  return c->gs % (8 * per) == 0 ? 8 : 0;
#else
  (void)c;
  return 0;
#endif
}

/* x (M, K) as the loops read it.  A block of `lanes` bytes holds per =
 * 8 / bits codes each: byte b, field k (bits k*bits .. k*bits+bits-1) is
 * element per*b + k.  With d the byte and P_k = d mod 2^((k+1)*bits) (so
 * P_{per-1} = d), field k is f_k = (P_k - P_{k-1}) / 2^(k*bits), and
 *   sum_k f_k x_k = sum_k P_k y_k,  y_k = x_k / 2^(k*bits) - x_{k+1} / 2^((k+1)*bits)
 * (x_per = 0): the loops take P_k with one mask per field (none for the
 * last) and y_k, stored at xp[k * lanes + b] of the block.  y_k is
 * rounded once (the scalings are exact), and the terms stay the size of
 * f_k x_k. */
static void qmv_permute(const float *x, int64_t M, int64_t K, int bits, int lanes, float *xp) {
  int per = 8 / bits, E = lanes * per;
  float inv[5]; /* 2^(-k*bits), exact */
  for (int k = 0; k <= per; k++) inv[k] = 1.0f / (float)(1 << k * bits);
  inv[per] = 0.0f;
  for (int64_t i = 0; i < M * K; i += E)
    for (int b = 0; b < lanes; b++)
      for (int k = 0; k < per; k++) {
        const float *xe = x + i + b * per + k;
        xp[i + k * lanes + b] = xe[0] * inv[k] - (k + 1 < per ? xe[1] : 0.0f) * inv[k + 1];
      }
}

typedef struct qmv_tiles_job {
  qmv_args a;
  const float *xp, *xsum;
  float *out;
  int lanes;
  qmv_fixed fixed; /* x for the integer loops, when they take the product */
} qmv_tiles_job;

static void qmv_tiles(void *ctx, int64_t begin, int64_t end) {
  const qmv_tiles_job *j = ctx;
  int64_t n0 = begin * 4, n1 = end * 4 < j->a.N ? end * 4 : j->a.N;
#if HAVE_QMV
  if (j->fixed.q) cm_qmv_vnni_rows(&j->a, &j->fixed, n0, n1, j->xsum, j->out);
  else if (j->lanes == 16) qmv_rows_avx512(&j->a, n0, n1, j->xp, j->xsum, j->out);
  else qmv_rows_avx2(&j->a, n0, n1, j->xp, j->xsum, j->out);
#else
  (void)n0, (void)n1;
#endif
}

int cm_q_qmv_fast(const qmm_ctx *c, const cm_qmat *m, const float *x, const float *xsum, int64_t M,
                  float *out) {
  int lanes = qmv_lanes(c);
  if (!lanes) return 0;
  int64_t K = c->K, N = c->N;
  qmv_fixed fixed = {0};
  /* the integer loops are AVX-512 too: CMLX_QUANT_AVX512=0 turns them off */
  if (lanes == 16 && cm_qmv_vnni_applies(c->bits, c->gs, K) &&
      cm_qmv_fixed_make(x, M, K, c->gs, &fixed) < 0)
    return -1;
  float *xp = NULL;
  if (!fixed.q) {
    xp = malloc(sizeof(float) * (size_t)(M * K));
    if (!xp) return cm_error(CM_ERR_MEMORY, "[quantized_matmul] Out of memory.");
    qmv_permute(x, M, K, c->bits, lanes, xp);
  }
  qmv_tiles_job j = {.a = {.w = m->w,
                           .s = m->s,
                           .b = m->b,
                           .sbt = m->sbt,
                           .w_rs = m->w_rs,
                           .s_rs = m->s_rs,
                           .b_rs = m->b_rs,
                           .M = M,
                           .K = K,
                           .N = N,
                           .gs = c->gs,
                           .bits = c->bits},
                     .xp = xp,
                     .xsum = xsum,
                     .out = out,
                     .lanes = lanes,
                     .fixed = fixed};
  /* a tile of 4 rows reads 4 * K * bits / 8 bytes and does 8 * K * M flops */
  cm_parallel_for((N + 3) / 4, cm_grain(2 * K * M) + 1, qmv_tiles, &j);
  free(xp);
  cm_qmv_fixed_free(&fixed);
  return 1;
}
