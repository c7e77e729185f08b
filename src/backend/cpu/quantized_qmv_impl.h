/* The loops of quantized_qmv.c, written once over a vector of QV_LANES
 * floats and included once per instruction set (AVX2 and AVX-512).  The
 * including file defines:
 *   QV, QI          the float and int32 vector types
 *   QV_LANES        their lanes; a block of packed codes is QV_LANES bytes
 *   QV_TARGET       the target attribute of every function here
 *   QV_SUFFIX       the suffix of the instance's names
 *   QV_WIDE         the most rows of x one pass over W takes (registers)
 *   QV_LOADB(p)     QV_LANES bytes at p, zero-extended to int32
 *   QV_AND, QV_SET1I, QV_CVT, QV_FMA, QV_SET1, QV_ZERO,
 *   QV_LOAD, QV_HSUM
 *   QV_LUT16        1 when QV_PERM16(i, t) is t[i & 15] in every lane (then
 *                   QV_IOTA16() is 0, 1, ..., 15): one instruction for the
 *                   low nibbles instead of a mask and a conversion
 * x comes permuted and transformed (qmv_permute) so that the codes need
 * neither shifts nor shuffles: see there. */

#define QV_CAT2(a, b) a##b
#define QV_CAT(a, b) QV_CAT2(a, b)
#define QF(name) QV_CAT(name, QV_SUFFIX)

/* n scales or biases of dtype t from p as float32: p itself for float32,
 * else widened into buf (8 at a time). */
QV_TARGET static inline const float *QF(qmv_sb)(const void *p, cm_dtype t, int64_t n, float *buf) {
  if (t == CM_FLOAT32) return p;
  const uint16_t *h = p;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i v = _mm_loadu_si128((const __m128i *)(h + i));
    __m256 f = t == CM_FLOAT16 ? _mm256_cvtph_ps(v)
                               : _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(v), 16));
    _mm256_storeu_ps(buf + i, f);
  }
  for (; i < n; i++) buf[i] = t == CM_FLOAT16 ? _cvtsh_ss(h[i]) : cm_bf16_to_f32(h[i]);
  return buf;
}

/* R rows of W from n, MM rows of x, groups [g0, g1): out[i, n + r] is
 * set (g0 = 0) or added to, the biases' share included.  Every loop over r,
 * i or k has a constant trip count and is unrolled, so that acc, ga, d
 * and xv live in registers. */
QV_TARGET static inline __attribute__((always_inline)) void
QF(qmv_tile)(int bits, int R, int MM, const qmv_args *a, int64_t n, int64_t g0, int64_t g1,
             const float *xp, const float *xsum, float *out) {
  const int per = 8 / bits, E = QV_LANES * per, gs = a->gs;
  const int64_t K = a->K, G = K / gs, gbytes = (int64_t)gs * bits / 8;
  const QV iota = QV_IOTA16();
  QV acc[4][8];
  const uint8_t *w[4];
  /* the scales and biases of groups [g0, g1), at sc[r][g - g0] */
  const float *sc[4], *bi[4];
  float sbuf[4][QMV_SB_CHUNK], bbuf[4][QMV_SB_CHUNK];
  float bacc[4][8]; /* the biases' share: sum_g bias[g] * xsum[g] */
  const int64_t sz = (int64_t)cm_dtype_size(a->sbt);
#pragma GCC unroll 4
  for (int r = 0; r < R; r++) {
    w[r] = a->w + (n + r) * a->w_rs;
    sc[r] = QF(qmv_sb)((const char *)a->s + ((n + r) * a->s_rs + g0) * sz, a->sbt, g1 - g0, sbuf[r]);
    bi[r] = QF(qmv_sb)((const char *)a->b + ((n + r) * a->b_rs + g0) * sz, a->sbt, g1 - g0, bbuf[r]);
#pragma GCC unroll 8
    for (int i = 0; i < MM; i++) bacc[r][i] = 0.0f;
#pragma GCC unroll 8
    for (int i = 0; i < MM; i++) acc[r][i] = QV_ZERO();
  }
  /* the same group of the next tile's rows is fetched while this one is
   * used: when W is not in the caches this is 3-4 times faster */
  const int64_t ahead = R * a->w_rs;
  for (int64_t g = g0; g < g1; g++) {
    QV ga[4][8];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 8
      for (int i = 0; i < MM; i++) ga[r][i] = QV_ZERO();
    const float *xg = xp + g * gs;
    const int64_t wo = g * gbytes;
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) _mm_prefetch((const char *)(w[r] + wo + ahead), _MM_HINT_T0);
    for (int e = 0; e < gs; e += E) {
      QI d[4];
#pragma GCC unroll 4
      for (int r = 0; r < R; r++) d[r] = QV_LOADB(w[r] + wo + e / per);
#pragma GCC unroll 4
      for (int k = 0; k < per; k++) {
        QV xv[8];
#pragma GCC unroll 8
        for (int i = 0; i < MM; i++) xv[i] = QV_LOAD(xg + i * K + e + k * QV_LANES);
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
          /* the low (k + 1) * bits bits of each byte: its last field */
          const int low = (k + 1) * bits;
          QV v;
          if (QV_LUT16 && low == 4) v = QV_PERM16(d[r], iota); /* reads 4 bits only */
          else v = QV_CVT(low == 8 ? d[r] : QV_AND(d[r], QV_SET1I((1 << low) - 1)));
#pragma GCC unroll 8
          for (int i = 0; i < MM; i++) ga[r][i] = QV_FMA(v, xv[i], ga[r][i]);
        }
      }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++) {
      QV s = QV_SET1(sc[r][g - g0]);
      const float bg = bi[r][g - g0];
#pragma GCC unroll 8
      for (int i = 0; i < MM; i++) {
        acc[r][i] = QV_FMA(s, ga[r][i], acc[r][i]);
        bacc[r][i] += bg * xsum[i * G + g];
      }
    }
  }
  for (int r = 0; r < R; r++) {
    for (int i = 0; i < MM; i++) {
      float *o = out + i * a->N + n + r, v = QV_HSUM(acc[r][i]) + bacc[r][i];
      *o = g0 ? *o + v : v;
    }
  }
}

/* Rows of W per tile for MM rows of x, as many as the registers hold. */
#define QV_R(MM) \
  ((MM) == 1 ? 4 : QV_WIDE >= 8 ? ((MM) == 2 ? 4 : (MM) <= 4 ? 2 : 1) : ((MM) == 2 ? 2 : 1))

/* Rows [n0, n1) of W against MM rows of x: tiles of QV_R(MM) rows, the
 * leftover rows one by one, a block of K at a time: the block's MM rows
 * of x (at most QMV_XBLOCK floats, at least one group) stay in the L1
 * cache while the rows of W go by; a whole row of W can take 8 rows of x
 * when K is 4096 (128 KiB), which then came from L2 for every row of W,
 * 3 times slower. */
#define QMV_XBLOCK 6144
#define QV_ROWS(BITS, MM)                                                                       \
  QV_TARGET static void QF(qmv_##BITS##_##MM)(const qmv_args *a, int64_t n0, int64_t n1,        \
                                              const float *xp, const float *xsum, float *out) { \
    int64_t G = a->K / a->gs, GB = QMV_XBLOCK / (MM) / a->gs;                                   \
    GB = GB < 1 ? 1 : GB > QMV_SB_CHUNK ? QMV_SB_CHUNK : GB;                                    \
    for (int64_t g0 = 0; g0 < G; g0 += GB) {                                                    \
      int64_t g1 = G - g0 < GB ? G : g0 + GB, n = n0;                                           \
      for (; n + QV_R(MM) <= n1; n += QV_R(MM))                                                 \
        QF(qmv_tile)(BITS, QV_R(MM), MM, a, n, g0, g1, xp, xsum, out);                          \
      for (; n < n1; n++) QF(qmv_tile)(BITS, 1, MM, a, n, g0, g1, xp, xsum, out);               \
    }                                                                                           \
  }
/* Every row of x, QV_WIDE rows per pass over W at most. */
#define QV_BITS(BITS)                                                                              \
  QV_ROWS(BITS, 1)                                                                                 \
  QV_ROWS(BITS, 2)                                                                                 \
  QV_ROWS(BITS, 3)                                                                                 \
  QV_ROWS(BITS, 4)                                                                                 \
  QV_ROWS(BITS, 5)                                                                                 \
  QV_ROWS(BITS, 6)                                                                                 \
  QV_ROWS(BITS, 7)                                                                                 \
  QV_ROWS(BITS, 8)                                                                                 \
  QV_TARGET static void QF(qmv_##BITS)(const qmv_args *a, int64_t n0, int64_t n1, const float *xp, \
                                       const float *xsum, float *out) {                            \
    int64_t K = a->K, G = K / a->gs;                                                               \
    for (int64_t i = 0; i < a->M;) {                                                               \
      int64_t mm = a->M - i < QV_WIDE ? a->M - i : QV_WIDE;                                        \
      const float *x = xp + i * K, *xs = xsum + i * G;                                             \
      float *o = out + i * a->N;                                                                   \
      switch (mm) {                                                                                \
      case 1: QF(qmv_##BITS##_1)(a, n0, n1, x, xs, o); break;                                      \
      case 2: QF(qmv_##BITS##_2)(a, n0, n1, x, xs, o); break;                                      \
      case 3: QF(qmv_##BITS##_3)(a, n0, n1, x, xs, o); break;                                      \
      case 4: QF(qmv_##BITS##_4)(a, n0, n1, x, xs, o); break;                                      \
      case 5: QF(qmv_##BITS##_5)(a, n0, n1, x, xs, o); break;                                      \
      case 6: QF(qmv_##BITS##_6)(a, n0, n1, x, xs, o); break;                                      \
      case 7: QF(qmv_##BITS##_7)(a, n0, n1, x, xs, o); break;                                      \
      default: QF(qmv_##BITS##_8)(a, n0, n1, x, xs, o); break;                                     \
      }                                                                                            \
      i += mm;                                                                                     \
    }                                                                                              \
  }

QV_BITS(2)
QV_BITS(4)
QV_BITS(8)

QV_TARGET static void QF(qmv_rows)(const qmv_args *a, int64_t n0, int64_t n1, const float *xp,
                                   const float *xsum, float *out) {
  switch (a->bits) {
  case 2: QF(qmv_2)(a, n0, n1, xp, xsum, out); break;
  case 4: QF(qmv_4)(a, n0, n1, xp, xsum, out); break;
  default: QF(qmv_8)(a, n0, n1, xp, xsum, out); break;
  }
}

#undef QV_R
#undef QMV_XBLOCK
#undef QV_ROWS
#undef QV_BITS
#undef QF
#undef QV_CAT
#undef QV_CAT2
