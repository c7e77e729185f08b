/* x @ W^T for 4-bit affine W and few rows of x, with integer dot products
 * (AVX-512 VNNI): the loop that matters for decoding a 4-bit model.
 *
 * Why integers: the float loops of quantized_qmv.c spend five vector
 * operations on every 32 codes (widen, look up, convert, two multiply-adds)
 * and reach ~13 GB/s of packed weights on one core here, under the ~14 GB/s
 * the core can stream, so with two threads a step ran at 60-70% of the
 * memory's speed.  vpdpbusd multiplies 64 unsigned bytes by 64 signed ones
 * and adds them in fours into 16 int32 lanes: one operation for 64 codes.
 *
 * Exactness: x is written in fixed point, not rounded to 8 bits as int8
 * schemes do.  For each block of 4 groups, every element gets an integer X
 * with |X| < 2^23 at a power of two 2^-e chosen from the block's
 * largest magnitude, split into three signed 8-bit limbs
 * (X = 65536 l0 + 256 l1 + l2); the three integer dot products are exact,
 * and the only roundings are X's (half a unit: at most 2^-23 of the
 * block's largest element) and the float sums per block.  The result
 * agrees with a float32 evaluation to a few float32 roundings of the
 * block's largest term, so greedy decoding picks the same tokens.  Blocks with a NaN, an infinity or magnitudes beyond
 * 2^+-100 leave the whole product to the float loops.
 *
 * Codes: byte d of W holds the codes lo = d & 15 and hi = d >> 4 of
 * elements 2b and 2b + 1, and lo x0 + hi x1 = lo (x0 - x1/16) + d (x1/16),
 * so the loops take lo (one mask) and d itself, against those two
 * transformed elements: no shift.  A block's codes are regrouped so that
 * each 128-bit lane of a vector holds one group (one shuffle per vector
 * with group size 64, two with 128, none with 32): a lane's sums then
 * share one scale, and the integer sums turn into floats once per block of
 * 4 groups, times a vector of the 4 scales.  The biases' share is
 * sum_g bias[g] * sum(x[g]), taken once per tile from the group sums. */
#include "backend/cpu/quantized_qmv.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "backend/cpu/cpu_features.h"
#include "core/error.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define HAVE_VNNI 1
#else
#define HAVE_VNNI 0
#endif

int cm_qmv_vnni_applies(int bits, int gs, int64_t K) {
#if HAVE_VNNI
  static atomic_int usable = -1;
  if (bits != 4 || (gs != 32 && gs != 64 && gs != 128) || K % (4 * gs)) return 0;
  int v = atomic_load_explicit(&usable, memory_order_relaxed);
  if (v < 0) {
    const cm_cpu_flags *f = cm_cpu_features();
    const char *env = getenv("CMLX_QUANT_VNNI");
    v = f->avx512f && f->avx512bw && f->avx512vl && f->avx512vnni && f->avx512vbmi && f->f16c && !(env && env[0] == '0');
    atomic_store_explicit(&usable, v, memory_order_relaxed);
  }
  return v;
#else
  (void)bits, (void)gs, (void)K;
  return 0;
#endif
}

void cm_qmv_fixed_free(qmv_fixed *f) {
  free(f->q);
  free(f->pw);
  f->q = NULL;
  f->pw = NULL;
}

#if HAVE_VNNI
#define VN_TARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx512vbmi,f16c")))

/* Bytes of x per 32 elements (one step of one group): 3 limbs x (lo, d). */
#define VN_STEP_BYTES 384

/* The largest magnitude of the n (a multiple of 16) floats at p; *bad set
 * when one is a NaN or an infinity. */
VN_TARGET static float vn_absmax(const float *p, int64_t n, int *bad) {
  const __m512 inf = _mm512_set1_ps(INFINITY);
  __m512 m = _mm512_setzero_ps();
  __mmask16 nonfinite = 0;
  for (int64_t k = 0; k < n; k += 16) {
    __m512 v = _mm512_abs_ps(_mm512_loadu_ps(p + k));
    nonfinite |= _mm512_cmp_ps_mask(v, inf, _CMP_NLT_UQ); /* inf or NaN */
    m = _mm512_max_ps(m, v);
  }
  *bad |= nonfinite != 0;
  return _mm512_reduce_max_ps(m);
}

/* The three limbs of 16 integers, each stored as 16 bytes at dst + 128 L
 * (the loops' vectors for one part are 64 bytes apart, and the two parts
 * of a limb sit side by side). */
VN_TARGET static void vn_limbs(__m512i X, int8_t *dst) {
  __m512i l2 = _mm512_srai_epi32(_mm512_slli_epi32(X, 24), 24);
  __m512i X1 = _mm512_srai_epi32(_mm512_sub_epi32(X, l2), 8);
  __m512i l1 = _mm512_srai_epi32(_mm512_slli_epi32(X1, 24), 24);
  __m512i l0 = _mm512_srai_epi32(_mm512_sub_epi32(X1, l1), 8);
  _mm_storeu_si128((__m128i *)dst, _mm512_cvtepi32_epi8(l0));
  _mm_storeu_si128((__m128i *)(dst + 128), _mm512_cvtepi32_epi8(l1));
  _mm_storeu_si128((__m128i *)(dst + 256), _mm512_cvtepi32_epi8(l2));
}

/* The 16 values of v (float32) times 2^e, rounded to integers: in double,
 * where both the scaling and y_lo = x0 - x1/16 are exact, so that each
 * integer is rounded once. */
VN_TARGET static inline __m512i vn_round(__m512d lo, __m512d hi, __m512d scale) {
  __m256i a = _mm512_cvtpd_epi32(_mm512_mul_pd(lo, scale));
  __m256i b = _mm512_cvtpd_epi32(_mm512_mul_pd(hi, scale));
  return _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1);
}

VN_TARGET static inline __m512d vn_half(__m512 v, int upper) {
  __m256 h = upper ? _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(v), 1))
                   : _mm512_castps512_ps256(v);
  return _mm512_cvtps_pd(h);
}

/* The largest |X| whose balanced base-256 digits all fit in int8. */
#define VN_XMAX 8355711.0

/* One block of 4 groups of one row of x (4 gs floats at x) into its
 * gs / 32 steps at dst; 0 when it cannot be written exactly enough. */
VN_TARGET static int vn_fix_block(const float *x, int gs, int8_t *dst, float *pw) {
  int bad = 0;
  float m = vn_absmax(x, 4 * gs, &bad);
  if (bad) return 0;
  /* |x0 - x1/16| <= 17/16 max|x|: the transformed elements' bound; the
   * largest power of two that keeps bound * 2^e within VN_XMAX */
  int ex = 0, e = 0;
  if (m > 0) {
    double bound = (double)m * 1.0625;
    (void)frexp(bound, &ex); /* bound < 2^ex */
    e = ldexp(bound, 23 - ex) <= VN_XMAX - 2 ? 23 - ex : 22 - ex;
    if (e > 96 || e < -100) return 0;
  }
  *pw = ldexpf(1.0f, -e - 4); /* the products of 16 lo and d are in sixteenths */
  const __m512d scale = _mm512_set1_pd(ldexp(1.0, e)), sixteenth = _mm512_set1_pd(0.0625);
  const __m512d one = _mm512_set1_pd(1.0);
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_add_epi32(even, _mm512_set1_epi32(1));
  for (int j = 0; j < 4; j++)
    for (int t = 0; t < gs / 32; t++) {
      const float *p = x + j * gs + 32 * t;
      __m512 v0 = _mm512_loadu_ps(p), v1 = _mm512_loadu_ps(p + 16);
      __m512 x0 = _mm512_permutex2var_ps(v0, even, v1), x1 = _mm512_permutex2var_ps(v0, odd, v1);
      /* x1 at the unit 2^-e, then x0 less a sixteenth of x1 as it was
       * rounded: each element's error is half a unit */
      __m512i Xd = vn_round(vn_half(x1, 0), vn_half(x1, 1), scale);
      __m512d u0 = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_castsi512_si256(Xd)), sixteenth);
      __m512d u1 = _mm512_mul_pd(_mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(Xd, 1)), sixteenth);
      __m512i Xlo = vn_round(_mm512_sub_pd(_mm512_mul_pd(vn_half(x0, 0), scale), u0),
                             _mm512_sub_pd(_mm512_mul_pd(vn_half(x0, 1), scale), u1), one);
      int8_t *s = dst + t * VN_STEP_BYTES + 16 * j;
      vn_limbs(Xlo, s);
      vn_limbs(Xd, s + 64);
    }
  return 1;
}

VN_TARGET static int vn_fix(const float *x, int64_t M, int64_t K, int gs, qmv_fixed *f) {
  int64_t B = K / (4 * gs);
  for (int64_t i = 0; i < M; i++)
    for (int64_t q = 0; q < B; q++)
      if (!vn_fix_block(x + i * K + q * 4 * gs, gs, f->q + i * 3 * K + q * (gs / 32) * VN_STEP_BYTES,
                        f->pw + i * B + q))
        return 0;
  return 1;
}
#endif

int cm_qmv_fixed_make(const float *x, int64_t M, int64_t K, int gs, qmv_fixed *f) {
  f->q = NULL;
  f->pw = NULL;
#if HAVE_VNNI
  int64_t B = K / (4 * gs);
  f->q = malloc((size_t)(3 * M * K));
  f->pw = malloc(sizeof(float) * (size_t)(M * B));
  if (!f->q || !f->pw) {
    cm_qmv_fixed_free(f);
    return cm_error(CM_ERR_MEMORY, "[quantized_matmul] Out of memory.");
  }
  if (!vn_fix(x, M, K, gs, f)) cm_qmv_fixed_free(f);
#else
  (void)x, (void)M, (void)K, (void)gs;
#endif
  return 0;
}

#if HAVE_VNNI
/* 4 scales or biases of dtype t at p, as float32. */
VN_TARGET static inline __m128 vn_sb4(const void *p, cm_dtype t) {
  if (t == CM_FLOAT32) return _mm_loadu_ps(p);
  __m128i h = _mm_loadl_epi64(p);
  if (t == CM_FLOAT16) return _mm_cvtph_ps(h);
  return _mm_castsi128_ps(_mm_slli_epi32(_mm_cvtepu16_epi32(h), 16));
}

/* The first n (<= 16) scales or biases of dtype t at p, as float32; the
 * rest 0. */
VN_TARGET static inline __m512 vn_sb16(const void *p, cm_dtype t, int n) {
  __mmask16 k = (__mmask16)((1u << n) - 1);
  if (t == CM_FLOAT32) return _mm512_maskz_loadu_ps(k, p);
  __m256i h = _mm256_maskz_loadu_epi16(k, p);
  if (t == CM_FLOAT16) return _mm512_cvtph_ps(h);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* The codes of step t of block q of a row (its bytes at wb), one group
 * per 128-bit lane (see the top of the file). */
VN_TARGET static inline __attribute__((always_inline)) void vn_codes(int GS, const uint8_t *wb,
                                                                     __m512i *steps) {
  if (GS == 32) {
    steps[0] = _mm512_loadu_si512(wb);
  } else if (GS == 64) {
    __m512i A = _mm512_loadu_si512(wb), B = _mm512_loadu_si512(wb + 64);
    steps[0] = _mm512_shuffle_i64x2(A, B, 0x88);
    steps[1] = _mm512_shuffle_i64x2(A, B, 0xDD);
  } else {
    __m512i Z0 = _mm512_loadu_si512(wb), Z1 = _mm512_loadu_si512(wb + 64);
    __m512i Z2 = _mm512_loadu_si512(wb + 128), Z3 = _mm512_loadu_si512(wb + 192);
    __m512i T0 = _mm512_shuffle_i64x2(Z0, Z1, 0x44), T1 = _mm512_shuffle_i64x2(Z0, Z1, 0xEE);
    __m512i T2 = _mm512_shuffle_i64x2(Z2, Z3, 0x44), T3 = _mm512_shuffle_i64x2(Z2, Z3, 0xEE);
    steps[0] = _mm512_shuffle_i64x2(T0, T2, 0x88);
    steps[1] = _mm512_shuffle_i64x2(T0, T2, 0xDD);
    steps[2] = _mm512_shuffle_i64x2(T1, T3, 0x88);
    steps[3] = _mm512_shuffle_i64x2(T1, T3, 0xDD);
  }
}

/* R rows of W from n against MM rows of x (their fixed point at xq, 3 K
 * bytes apart, and powers at pw, B apart), blocks [q0, q1): out[i * N +
 * n + r] set (q0 = 0) or added to, the biases' share included.  The trip
 * counts over r, i and the steps are constants, so that the accumulators
 * (4 vectors per pair of rows) stay in registers. */
VN_TARGET static inline __attribute__((always_inline)) void
vn_tile(int GS, int R, int MM, const qmv_args *a, int64_t n, int64_t q0, int64_t q1, const int8_t *xq,
        const float *pw, const float *xsum, float *out) {
  const int S = GS / 32;
  const int64_t K = a->K, G = K / GS, B = G / 4, sz = (int64_t)cm_dtype_size(a->sbt);
  /* W is fetched ahead in software: the next tile's rows into L1, and
   * those 4 tiles ahead into L2 (measured: 25-26 GB/s with two threads,
   * against 20 with the next tile only and 14 with the hardware's
   * prefetchers alone) */
  const int64_t ahead = R * a->w_rs;
  /* byte k of the table is 16 (k & 15): vpermb reads the low 6 bits */
  const __m512i lo16 = _mm512_set_epi64(0xF0E0D0C0B0A09080, 0x7060504030201000, 0xF0E0D0C0B0A09080,
                                        0x7060504030201000, 0xF0E0D0C0B0A09080, 0x7060504030201000,
                                        0xF0E0D0C0B0A09080, 0x7060504030201000);
  const __m512i lanes4 = _mm512_setr_epi32(0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3);
  const uint8_t *w[4];
  const char *sc[4];
  __m512 facc[4][4];
#pragma GCC unroll 4
  for (int r = 0; r < R; r++) {
    w[r] = a->w + (n + r) * a->w_rs;
    sc[r] = (const char *)a->s + (n + r) * a->s_rs * sz;
#pragma GCC unroll 4
    for (int i = 0; i < MM; i++) facc[r][i] = _mm512_setzero_ps();
  }
  for (int64_t q = q0; q < q1; q++) {
    __m512i acc[4][4][3];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
      for (int i = 0; i < MM; i++)
#pragma GCC unroll 3
        for (int l = 0; l < 3; l++) acc[r][i][l] = _mm512_setzero_si512();
    __m512i d[4][4];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
      const uint8_t *wb = w[r] + q * 2 * GS;
#pragma GCC unroll 4
      for (int t = 0; t < S; t++) {
        _mm_prefetch((const char *)(wb + ahead + 64 * t), _MM_HINT_T0);
        _mm_prefetch((const char *)(wb + 4 * ahead + 64 * t), _MM_HINT_T1);
      }
      vn_codes(GS, wb, d[r]);
    }
#pragma GCC unroll 4
    for (int t = 0; t < S; t++) {
#pragma GCC unroll 4
      for (int i = 0; i < MM; i++) {
        const int8_t *xs = xq + i * 3 * K + (q * S + t) * VN_STEP_BYTES;
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
          __m512i lo = _mm512_permutexvar_epi8(d[r][t], lo16);
#pragma GCC unroll 3
          for (int l = 0; l < 3; l++) {
            acc[r][i][l] = _mm512_dpbusd_epi32(acc[r][i][l], lo, _mm512_loadu_si512(xs + 128 * l));
            acc[r][i][l] = _mm512_dpbusd_epi32(acc[r][i][l], d[r][t], _mm512_loadu_si512(xs + 128 * l + 64));
          }
        }
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
      __m512 s = _mm512_permutexvar_ps(lanes4, _mm512_castps128_ps512(vn_sb4(sc[r] + 4 * q * sz, a->sbt)));
#pragma GCC unroll 4
      for (int i = 0; i < MM; i++) {
        const float p = pw[i * B + q];
        /* 256 l1 + l2 stays far inside int32; l0's share is added in float */
        __m512i low = _mm512_add_epi32(_mm512_slli_epi32(acc[r][i][1], 8), acc[r][i][2]);
        __m512 v = _mm512_fmadd_ps(_mm512_cvtepi32_ps(acc[r][i][0]), _mm512_set1_ps(65536.0f * p),
                                   _mm512_mul_ps(_mm512_cvtepi32_ps(low), _mm512_set1_ps(p)));
        facc[r][i] = _mm512_fmadd_ps(s, v, facc[r][i]);
      }
    }
  }
  /* the biases' share of groups [4 q0, 4 q1) */
  const int64_t g0 = 4 * q0, g1 = 4 * q1;
#pragma GCC unroll 4
  for (int r = 0; r < R; r++) {
    const char *br = (const char *)a->b + (n + r) * a->b_rs * sz;
    for (int64_t g = g0; g < g1; g += 16) {
      int cnt = g1 - g < 16 ? (int)(g1 - g) : 16;
      __m512 bv = vn_sb16(br + g * sz, a->sbt, cnt);
      __mmask16 k = (__mmask16)((1u << cnt) - 1);
#pragma GCC unroll 4
      for (int i = 0; i < MM; i++)
        facc[r][i] = _mm512_fmadd_ps(bv, _mm512_maskz_loadu_ps(k, xsum + i * G + g), facc[r][i]);
    }
#pragma GCC unroll 4
    for (int i = 0; i < MM; i++) {
      float *o = out + i * a->N + n + r, v = _mm512_reduce_add_ps(facc[r][i]);
      *o = q0 ? *o + v : v;
    }
  }
}

/* Rows of W per tile for MM rows of x: 4 R MM accumulators in registers. */
#define VN_R(MM) ((MM) == 1 ? 4 : (MM) == 2 ? 2 : 1)

/* Rows [n0, n1) of W against MM rows of x, a chunk of blocks at a time:
 * the chunk's fixed-point x (12 gs bytes per block and row) stays in the
 * L1 cache while the rows of W go by. */
#define VN_XBLOCK 24576
#define VN_ROWS(GS, MM)                                                                         \
  VN_TARGET static void vn_rows_##GS##_##MM(const qmv_args *a, int64_t n0, int64_t n1,          \
                                            const int8_t *xq, const float *pw, const float *xsum, \
                                            float *out) {                                        \
    int64_t B = a->K / (4 * GS), QB = VN_XBLOCK / ((MM)*12 * GS);                                \
    QB = QB < 1 ? 1 : QB;                                                                        \
    for (int64_t q0 = 0; q0 < B; q0 += QB) {                                                     \
      int64_t q1 = B - q0 < QB ? B : q0 + QB, n = n0;                                            \
      for (; n + VN_R(MM) <= n1; n += VN_R(MM))                                                  \
        vn_tile(GS, VN_R(MM), MM, a, n, q0, q1, xq, pw, xsum, out);                              \
      for (; n < n1; n++) vn_tile(GS, 1, MM, a, n, q0, q1, xq, pw, xsum, out);                   \
    }                                                                                            \
  }
#define VN_GS(GS)                                                                                 \
  VN_ROWS(GS, 1)                                                                                  \
  VN_ROWS(GS, 2)                                                                                  \
  VN_ROWS(GS, 3)                                                                                  \
  VN_ROWS(GS, 4)                                                                                  \
  VN_TARGET static void vn_rows_##GS(const qmv_args *a, int64_t mm, int64_t n0, int64_t n1,       \
                                     const int8_t *xq, const float *pw, const float *xsum,        \
                                     float *out) {                                                \
    switch (mm) {                                                                                 \
    case 1: vn_rows_##GS##_1(a, n0, n1, xq, pw, xsum, out); break;                                \
    case 2: vn_rows_##GS##_2(a, n0, n1, xq, pw, xsum, out); break;                                \
    case 3: vn_rows_##GS##_3(a, n0, n1, xq, pw, xsum, out); break;                                \
    default: vn_rows_##GS##_4(a, n0, n1, xq, pw, xsum, out); break;                               \
    }                                                                                             \
  }
VN_GS(32)
VN_GS(64)
VN_GS(128)
#endif

void cm_qmv_vnni_rows(const qmv_args *a, const qmv_fixed *f, int64_t n0, int64_t n1,
                      const float *xsum, float *out) {
#if HAVE_VNNI
  int64_t K = a->K, G = K / a->gs, B = G / 4;
  /* at most 4 rows of x per pass over W (the registers) */
  for (int64_t i = 0; i < a->M; i += 4) {
    int64_t mm = a->M - i < 4 ? a->M - i : 4;
    const int8_t *xq = f->q + i * 3 * K;
    const float *pw = f->pw + i * B, *xs = xsum + i * G;
    float *o = out + i * a->N;
    if (a->gs == 32) vn_rows_32(a, mm, n0, n1, xq, pw, xs, o);
    else if (a->gs == 64) vn_rows_64(a, mm, n0, n1, xq, pw, xs, o);
    else vn_rows_128(a, mm, n0, n1, xq, pw, xs, o);
  }
#else
  (void)a, (void)f, (void)n0, (void)n1, (void)xsum, (void)out;
#endif
}
