/* The inner loops of the quantized products (quantized_mm.h): decode a
 * group of packed codes and use it, portable C and AVX2+FMA.
 *
 * The AVX2 decoder takes eight codes at a time: they fill `bits` bytes,
 * read as one 64-bit word whose low and high halves (four codes each) are
 * broadcast into the two halves of a vector and shifted into place by
 * lane; fp codes are then looked up in their value table.  The affine sum
 * over a group is scale * (q . x) + bias * sum(x), so the bias costs one
 * multiply per group. */
#include <string.h>

#include "backend/cpu/quantized.h"
#include "backend/cpu/quantized_mm.h"

static inline void group_sb(const qmm_ctx *c, const cm_qmat *m, int64_t r, int64_t g, float *sc,
                            float *bi) {
  if (c->b) {
    *sc = cm_q_sb(m->s, r * m->s_rs + g, m->sbt);
    *bi = cm_q_sb(m->b, r * m->b_rs + g, m->sbt);
  } else {
    *sc = cm_fp_scale(((const uint8_t *)m->s)[r * m->s_rs + g], c->gs);
    *bi = 0.0f;
  }
}

/* ---- portable ---- */

/* The values of n codes (n a multiple of 8) starting at p. */
void cm_q_decode(const uint8_t *p, int n, int bits, const float *lut, float *dst) {
  switch (bits) {
  case 8:
    for (int i = 0; i < n; i++) dst[i] = lut ? lut[p[i]] : (float)p[i];
    return;
  case 4:
    for (int i = 0; i < n / 2; i++) {
      dst[2 * i] = (float)(p[i] & 15), dst[2 * i + 1] = (float)(p[i] >> 4);
    }
    break;
  case 2:
    for (int i = 0; i < n / 4; i++)
      for (int k = 0; k < 4; k++) dst[4 * i + k] = (float)((p[i] >> (2 * k)) & 3);
    break;
  default:
    for (int i = 0; i < n; i++) {
      int bit = i * bits, sh = bit & 7;
      const uint8_t *b = p + (bit >> 3);
      uint32_t v = b[0];
      if (sh + bits > 8) v |= (uint32_t)b[1] << 8;
      dst[i] = (float)((v >> sh) & ((1u << bits) - 1u));
    }
    break;
  }
  if (lut)
    for (int i = 0; i < n; i++) dst[i] = lut[(int)dst[i]];
}

static float dot(const float *a, const float *b, int n) {
  float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  for (int i = 0; i < n; i += 4) {
    s0 += a[i] * b[i], s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2], s3 += a[i + 3] * b[i + 3];
  }
  return (s0 + s1) + (s2 + s3);
}

static void qmv_portable(const qmm_ctx *c, const cm_qmat *m, const float *x, const float *xsum,
                         int64_t M, int64_t n0, int64_t n1, float *out) {
  int gs = c->gs, bits = c->bits;
  int64_t G = c->K / gs, gbytes = gs * bits / 8;
  float vals[128], acc[8];
  for (int64_t n = n0; n < n1; n++) {
    const uint8_t *w = m->w + n * m->w_rs;
    for (int64_t i = 0; i < M; i++) acc[i] = 0.0f;
    for (int64_t g = 0; g < G; g++) {
      float sc, bi;
      group_sb(c, m, n, g, &sc, &bi);
      cm_q_decode(w + g * gbytes, gs, bits, c->lut, vals);
      for (int64_t i = 0; i < M; i++) {
        acc[i] += sc * dot(vals, x + i * c->K + g * gs, gs);
        if (xsum) acc[i] += bi * xsum[i * G + g];
      }
    }
    for (int64_t i = 0; i < M; i++) out[i * c->N + n] = acc[i];
  }
}

static void dequant_portable(const qmm_ctx *c, const cm_qmat *m, int64_t r, float *dst) {
  int gs = c->gs, bits = c->bits;
  int64_t cols = c->transpose ? c->K : c->N, G = cols / gs, gbytes = gs * bits / 8;
  const uint8_t *w = m->w + r * m->w_rs;
  for (int64_t g = 0; g < G; g++) {
    float sc, bi;
    group_sb(c, m, r, g, &sc, &bi);
    float *d = dst + g * gs;
    cm_q_decode(w + g * gbytes, gs, bits, c->lut, d);
    for (int k = 0; k < gs; k++) d[k] = d[k] * sc + bi;
  }
}

static void qvm_portable(const qmm_ctx *c, const cm_qmat *m, const float *x, int64_t M, int64_t g0,
                         int64_t g1, float *out) {
  int gs = c->gs, bits = c->bits;
  int64_t gbytes = gs * bits / 8;
  float vals[128];
  for (int64_t i = 0; i < M; i++)
    memset(out + i * c->N + g0 * gs, 0, sizeof(float) * (size_t)((g1 - g0) * gs));
  for (int64_t k = 0; k < c->K; k++) {
    const uint8_t *w = m->w + k * m->w_rs;
    for (int64_t g = g0; g < g1; g++) {
      float sc, bi;
      group_sb(c, m, k, g, &sc, &bi);
      cm_q_decode(w + g * gbytes, gs, bits, c->lut, vals);
      for (int t = 0; t < gs; t++) vals[t] = vals[t] * sc + bi;
      for (int64_t i = 0; i < M; i++) {
        float xv = x[i * c->K + k];
        float *o = out + i * c->N + g * gs;
        for (int t = 0; t < gs; t++) o[t] += xv * vals[t];
      }
    }
  }
}

/* ---- AVX2 + FMA ---- */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define QAVX __attribute__((target("avx2,fma")))
#define HAVE_QAVX 1

/* The decoders, by code width and mode; the loops below are built once
 * per kind (the kind is a constant inside each). */
enum { DEC_GENERIC, DEC_B2, DEC_B4, DEC_B8, DEC_FP4, DEC_FP8 };

typedef struct dec8 {
  __m256i sh, mask;
  int bits;
  const float *lut;
  __m256 lut8; /* fp4: the magnitudes of codes 0..7 */
} dec8;

static int dec_kind(const qmm_ctx *c) {
  if (c->lut) return c->bits == 8 ? DEC_FP8 : DEC_FP4;
  return c->bits == 2 ? DEC_B2 : c->bits == 4 ? DEC_B4 : c->bits == 8 ? DEC_B8 : DEC_GENERIC;
}

QAVX static inline dec8 dec8_make(const qmm_ctx *c) {
  int b = c->bits;
  dec8 d;
  if (b == 2 || b == 4) d.sh = _mm256_setr_epi32(0, b, 2 * b, 3 * b, 4 * b, 5 * b, 6 * b, 7 * b);
  else d.sh = _mm256_setr_epi32(0, b, 2 * b, 3 * b, 0, b, 2 * b, 3 * b);
  d.mask = _mm256_set1_epi32((1 << b) - 1);
  d.bits = b;
  d.lut = c->lut;
  d.lut8 = _mm256_loadu_ps(cm_fp4_values);
  return d;
}

/* Eight codes' values from p (bits bytes, inside the row that ends at
 * end). */
QAVX static inline __attribute__((always_inline)) __m256
dec8_load(int kind, const dec8 *d, const uint8_t *p, const uint8_t *end) {
  __m256i v;
  switch (kind) {
  case DEC_B2: {
    uint16_t u;
    memcpy(&u, p, 2);
    v = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(u), d->sh), d->mask);
    return _mm256_cvtepi32_ps(v);
  }
  case DEC_B4:
  case DEC_FP4: {
    int32_t u;
    memcpy(&u, p, 4);
    v = _mm256_and_si256(_mm256_srlv_epi32(_mm256_set1_epi32(u), d->sh), d->mask);
    if (kind == DEC_B4) return _mm256_cvtepi32_ps(v);
    __m256 mag = _mm256_permutevar8x32_ps(d->lut8, v);
    __m256i sign = _mm256_and_si256(_mm256_slli_epi32(v, 28), _mm256_set1_epi32(INT32_MIN));
    return _mm256_or_ps(mag, _mm256_castsi256_ps(sign));
  }
  case DEC_B8:
  case DEC_FP8:
    v = _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)p));
    return kind == DEC_B8 ? _mm256_cvtepi32_ps(v) : _mm256_i32gather_ps(d->lut, v, 4);
  default: {
    uint64_t u = 0;
    memcpy(&u, p, end - p >= 8 ? 8 : (size_t)d->bits);
    uint32_t lo = (uint32_t)u, hi = (uint32_t)(u >> (4 * d->bits));
    v = _mm256_setr_epi32((int)lo, (int)lo, (int)lo, (int)lo, (int)hi, (int)hi, (int)hi, (int)hi);
    v = _mm256_and_si256(_mm256_srlv_epi32(v, d->sh), d->mask);
    return _mm256_cvtepi32_ps(v);
  }
  }
}

QAVX static inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_shuffle_ps(s, s, 1));
  return _mm_cvtss_f32(s);
}

QAVX static inline __attribute__((always_inline)) void
qmv_body(int kind, const qmm_ctx *c, const cm_qmat *m, const float *x, const float *xsum, int64_t M,
         int64_t n0, int64_t n1, float *out) {
  int gs = c->gs, bits = c->bits;
  int64_t K = c->K, G = K / gs, gbytes = gs * bits / 8;
  dec8 d = dec8_make(c);
  for (int64_t n = n0; n < n1; n++) {
    const uint8_t *w = m->w + n * m->w_rs, *end = w + K * bits / 8;
    for (int64_t i0 = 0; i0 < M; i0 += 4) {
      int mm = M - i0 < 4 ? (int)(M - i0) : 4;
      __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                       _mm256_setzero_ps()};
      float bacc[4] = {0, 0, 0, 0};
      for (int64_t g = 0; g < G; g++) {
        float sc, bi;
        group_sb(c, m, n, g, &sc, &bi);
        const uint8_t *p = w + g * gbytes;
        const float *xg = x + i0 * K + g * gs;
        __m256 s4[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                        _mm256_setzero_ps()};
        for (int j = 0; j < gs; j += 8, p += bits) {
          __m256 v = dec8_load(kind, &d, p, end);
          for (int i = 0; i < mm; i++)
            s4[i] = _mm256_fmadd_ps(v, _mm256_loadu_ps(xg + i * K + j), s4[i]);
        }
        __m256 vs = _mm256_set1_ps(sc);
        for (int i = 0; i < mm; i++) {
          acc[i] = _mm256_fmadd_ps(vs, s4[i], acc[i]);
          if (xsum) bacc[i] += bi * xsum[(i0 + i) * G + g];
        }
      }
      for (int i = 0; i < mm; i++) out[(i0 + i) * c->N + n] = hsum(acc[i]) + bacc[i];
    }
  }
}

QAVX static inline __attribute__((always_inline)) void
dequant_body(int kind, const qmm_ctx *c, const cm_qmat *m, int64_t r, float *dst) {
  int gs = c->gs, bits = c->bits;
  int64_t cols = c->transpose ? c->K : c->N, G = cols / gs, gbytes = gs * bits / 8;
  const uint8_t *w = m->w + r * m->w_rs, *end = w + cols * bits / 8;
  dec8 d = dec8_make(c);
  for (int64_t g = 0; g < G; g++) {
    float sc, bi;
    group_sb(c, m, r, g, &sc, &bi);
    __m256 vs = _mm256_set1_ps(sc), vb = _mm256_set1_ps(bi);
    const uint8_t *p = w + g * gbytes;
    for (int j = 0; j < gs; j += 8, p += bits)
      _mm256_storeu_ps(dst + g * gs + j, _mm256_fmadd_ps(dec8_load(kind, &d, p, end), vs, vb));
  }
}

QAVX static inline __attribute__((always_inline)) void qvm_body(int kind, const qmm_ctx *c,
                                                                const cm_qmat *m, const float *x,
                                                                int64_t M, int64_t g0, int64_t g1,
                                                                float *out) {
  int gs = c->gs, bits = c->bits;
  int64_t N = c->N, gbytes = gs * bits / 8;
  dec8 d = dec8_make(c);
  for (int64_t i = 0; i < M; i++)
    memset(out + i * N + g0 * gs, 0, sizeof(float) * (size_t)((g1 - g0) * gs));
  for (int64_t k = 0; k < c->K; k++) {
    const uint8_t *w = m->w + k * m->w_rs, *end = w + N * bits / 8;
    __m256 xv[QMV_ROWS];
    for (int64_t i = 0; i < M; i++) xv[i] = _mm256_set1_ps(x[i * c->K + k]);
    for (int64_t g = g0; g < g1; g++) {
      float sc, bi;
      group_sb(c, m, k, g, &sc, &bi);
      __m256 vs = _mm256_set1_ps(sc), vb = _mm256_set1_ps(bi);
      const uint8_t *p = w + g * gbytes;
      for (int j = 0; j < gs; j += 8, p += bits) {
        __m256 v = _mm256_fmadd_ps(dec8_load(kind, &d, p, end), vs, vb);
        for (int64_t i = 0; i < M; i++) {
          float *o = out + i * N + g * gs + j;
          _mm256_storeu_ps(o, _mm256_fmadd_ps(xv[i], v, _mm256_loadu_ps(o)));
        }
      }
    }
  }
}
/* One copy of each loop per decoder kind. */
#define KINDS(X) \
  X(DEC_GENERIC, gen) X(DEC_B2, b2) X(DEC_B4, b4) X(DEC_B8, b8) X(DEC_FP4, fp4) X(DEC_FP8, fp8)
#define INSTANCES(K, k)                                                                         \
  QAVX static void qmv_##k(const qmm_ctx *c, const cm_qmat *m, const float *x, const float *xs, \
                           int64_t M, int64_t n0, int64_t n1, float *out) {                     \
    qmv_body(K, c, m, x, xs, M, n0, n1, out);                                                   \
  }                                                                                             \
  QAVX static void dequant_##k(const qmm_ctx *c, const cm_qmat *m, int64_t r, float *dst) {     \
    dequant_body(K, c, m, r, dst);                                                              \
  }                                                                                             \
  QAVX static void qvm_##k(const qmm_ctx *c, const cm_qmat *m, const float *x, int64_t M,       \
                           int64_t g0, int64_t g1, float *out) {                                \
    qvm_body(K, c, m, x, M, g0, g1, out);                                                       \
  }
KINDS(INSTANCES)
#undef INSTANCES

static void qmv_avx2(const qmm_ctx *c, const cm_qmat *m, const float *x, const float *xs, int64_t M,
                     int64_t n0, int64_t n1, float *out) {
  switch (dec_kind(c)) {
#define CASE(K, k) \
  case K: return qmv_##k(c, m, x, xs, M, n0, n1, out);
    KINDS(CASE)
#undef CASE
  }
}

static void dequant_avx2(const qmm_ctx *c, const cm_qmat *m, int64_t r, float *dst) {
  switch (dec_kind(c)) {
#define CASE(K, k) \
  case K: return dequant_##k(c, m, r, dst);
    KINDS(CASE)
#undef CASE
  }
}

static void qvm_avx2(const qmm_ctx *c, const cm_qmat *m, const float *x, int64_t M, int64_t g0,
                     int64_t g1, float *out) {
  switch (dec_kind(c)) {
#define CASE(K, k) \
  case K: return qvm_##k(c, m, x, M, g0, g1, out);
    KINDS(CASE)
#undef CASE
  }
}
#else
#define HAVE_QAVX 0
#endif

void cm_q_qmv_rows(const qmm_ctx *c, const cm_qmat *m, const float *x, const float *xsum, int64_t M,
                   int64_t n0, int64_t n1, float *out) {
#if HAVE_QAVX
  if (c->simd) return qmv_avx2(c, m, x, xsum, M, n0, n1, out);
#endif
  qmv_portable(c, m, x, xsum, M, n0, n1, out);
}

void cm_q_qvm_groups(const qmm_ctx *c, const cm_qmat *m, const float *x, int64_t M, int64_t g0,
                     int64_t g1, float *out) {
#if HAVE_QAVX
  if (c->simd) return qvm_avx2(c, m, x, M, g0, g1, out);
#endif
  qvm_portable(c, m, x, M, g0, g1, out);
}

void cm_q_dequant_row(const qmm_ctx *c, const cm_qmat *m, int64_t r, float *dst) {
#if HAVE_QAVX
  if (c->simd) return dequant_avx2(c, m, r, dst);
#endif
  dequant_portable(c, m, r, dst);
}
