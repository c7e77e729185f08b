/* Direct float32 convolution over channels-last images (conv_nhwc.h).
 *
 * The weight is repacked once per call into blocks of BW output channels
 * (64 with AVX-512, 16 with AVX2; the last block may be narrower), each
 * [kh][kw][c][BW] with the channels contiguous.  An output row (n, oh) is
 * then cut into register tiles of P pixels along the width by G vectors of
 * output channels (AVX-512: up to 7 x 4 zmm, AVX2: 6 x 2 ymm); per tap and
 * input channel a tile loads its G weight vectors once, broadcasts each
 * pixel's input value and does P * G fused multiply-adds.  Taps whose
 * input row lies in the padding are skipped for the whole row; pixels
 * near the left and right edges, whose taps reach into the padding, are
 * tiles of one pixel over their valid taps only.  Rows run in parallel on
 * the pool; each output element is the sum over (kh, kw, c) in that
 * order, whatever the thread count. */
#include "backend/cpu/conv_nhwc.h"

#include <stdlib.h>

#include "backend/cpu/matmul_small.h"
#include "core/error.h"
#include "core/threadpool.h"

#define NHWC_MAX_KC 2304           /* 3x3 over 256 channels */
#define NHWC_MAX_WGRAD (160 << 10) /* weight elements: 3x3x128 -> 128 */

typedef struct nhwc_job {
  const cm_conv_nhwc *d;
  const float *x, *wt, *zero; /* zero: C zeros */
  float *y;
  int64_t bw; /* output channels per weight block */
} nhwc_job;

/* floor(a / b) for b > 0 */
static inline int64_t floor_div(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/* The taps k in [*k0, *k1) whose input index base + k * dil lies in
 * [0, len). */
static inline void valid_taps(int64_t base, int64_t dil, int64_t len, int64_t K, int64_t *k0,
                              int64_t *k1) {
  int64_t lo = base >= 0 ? 0 : floor_div(-base + dil - 1, dil);
  int64_t hi = floor_div(len - 1 - base, dil) + 1;
  *k0 = lo < K ? lo : K;
  *k1 = hi > K ? K : hi < *k0 ? *k0 : hi;
}

/* The weight (O, KH, KW, C) as blocks of bw outputs, [kh][kw][c][bw]
 * each, flipped when the convolution flips; then C zeros. */
static inline float *repack(const cm_conv_nhwc *d, const float *w, int64_t bw) {
  int64_t T = d->KH * d->KW, C = d->C;
  float *wt = malloc(sizeof(float) * (size_t)((d->O * T + 1) * C)); /* then C zeros */
  if (!wt) return NULL;
  for (int64_t c = 0; c < C; c++) wt[d->O * T * C + c] = 0;
  for (int64_t o0 = 0; o0 < d->O; o0 += bw) {
    int64_t b = d->O - o0 < bw ? d->O - o0 : bw;
    float *blk = wt + o0 * T * C;
    for (int64_t o = 0; o < b; o++)
      for (int64_t kh = 0; kh < d->KH; kh++)
        for (int64_t kw = 0; kw < d->KW; kw++) {
          int64_t sh = d->flip ? d->KH - 1 - kh : kh, sw = d->flip ? d->KW - 1 - kw : kw;
          const float *src = w + (((o0 + o) * d->KH + sh) * d->KW + sw) * C;
          float *dst = blk + (kh * d->KW + kw) * C * b + o;
          for (int64_t c = 0; c < C; c++) dst[c * b] = src[c];
        }
  }
  return wt;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>
#define NHWC_KERNELS 1

#if defined(__clang__)
#define NHWC_UNROLL _Pragma("unroll")
#else
#define NHWC_UNROLL _Pragma("GCC unroll 8")
#endif

/* The tile of P pixels from ow0 of output row (n, oh) by G vectors of L
 * outputs: xn is image n, wb its weight block (bw outputs a tap and
 * channel), yp the tile's first output, taps kh in [kh0, kh1).  A pixel
 * whose tap falls left or right of the image reads zero, C zeros.
 * TILE_FN defines it for one vector type. */
#define TILE_FN(SFX, TGT, V, L, ZERO, LOAD, STORE, SET1, FMA)                                     \
  TGT __attribute__((always_inline)) static inline void tile_##SFX(                               \
      const cm_conv_nhwc *d, int P, int G, const float *xn, int64_t oh, int64_t ow0, int64_t kh0, \
      int64_t kh1, const float *zero, const float *wb, int64_t bw, float *yp) {                   \
    V acc[8][4];                                                                                  \
    NHWC_UNROLL for (int p = 0; p < P; p++) NHWC_UNROLL for (int g = 0; g < G; g++) acc[p][g] =   \
        ZERO();                                                                                   \
    int64_t C = d->C;                                                                             \
    for (int64_t kh = kh0; kh < kh1; kh++) {                                                      \
      const float *xr = xn + (oh * d->sh + kh * d->dh - d->ph) * d->W * C;                        \
      for (int64_t kw = 0; kw < d->KW; kw++) {                                                    \
        const float *xq[8];                                                                       \
        NHWC_UNROLL for (int p = 0; p < P; p++) {                                                 \
          int64_t iw = (ow0 + p) * d->sw + kw * d->dw - d->pw;                                    \
          xq[p] = iw >= 0 && iw < d->W ? xr + iw * C : zero;                                      \
        }                                                                                         \
        const float *wp = wb + (kh * d->KW + kw) * C * bw;                                        \
        for (int64_t c = 0; c < C; c++, wp += bw) {                                               \
          V wv[4];                                                                                \
          NHWC_UNROLL for (int g = 0; g < G; g++) wv[g] = LOAD(wp + g * L);                       \
          NHWC_UNROLL for (int p = 0; p < P; p++) {                                               \
            V xv = SET1(xq[p][c]);                                                                \
            NHWC_UNROLL for (int g = 0; g < G; g++) acc[p][g] = FMA(xv, wv[g], acc[p][g]);        \
          }                                                                                       \
        }                                                                                         \
      }                                                                                           \
    }                                                                                             \
    NHWC_UNROLL for (int p = 0; p < P; p++) NHWC_UNROLL for (int g = 0; g < G; g++)               \
        STORE(yp + p * d->O + g * L, acc[p][g]);                                                  \
  }

#define T512 __attribute__((target("avx512f")))
#define T256 __attribute__((target("avx2,fma")))
TILE_FN(512, T512, __m512, 16, _mm512_setzero_ps, _mm512_loadu_ps, _mm512_storeu_ps, _mm512_set1_ps,
        _mm512_fmadd_ps)
TILE_FN(256, T256, __m256, 8, _mm256_setzero_ps, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_set1_ps,
        _mm256_fmadd_ps)

/* One tile, P and G made constants: DISPATCH(CASES, CALL) switches on P
 * (1..7) and G (1..4 with CASES4, 1..2 with CASES2), CALL(p, g) being the
 * call. */
#define CASE(CALL, p, g) \
  case (p)*8 + (g):      \
    CALL(p, g);          \
    break;
#define CASES4(CALL, p) CASE(CALL, p, 1) CASE(CALL, p, 2) CASE(CALL, p, 3) CASE(CALL, p, 4)
#define CASES2(CALL, p) CASE(CALL, p, 1) CASE(CALL, p, 2)
#define DISPATCH(CASES, CALL) \
  switch (P * 8 + G) {        \
    CASES(CALL, 1)            \
    CASES(CALL, 2)            \
    CASES(CALL, 3)            \
    CASES(CALL, 4)            \
    CASES(CALL, 5)            \
    CASES(CALL, 6)            \
    CASES(CALL, 7)            \
  default: break;             \
  }

#define TILE_PARAMS                                                                           \
  const cm_conv_nhwc *d, int P, int G, const float *xn, int64_t oh, int64_t ow0, int64_t kh0, \
      int64_t kh1, const float *zero, const float *wb, int64_t bw, float *yp
#define CALL_T512(p, g) tile_512(d, p, g, xn, oh, ow0, kh0, kh1, zero, wb, bw, yp)
#define CALL_T256(p, g) tile_256(d, p, g, xn, oh, ow0, kh0, kh1, zero, wb, bw, yp)
T512 static void any_tile_512(TILE_PARAMS){DISPATCH(CASES4, CALL_T512)} T256
    static void any_tile_256(TILE_PARAMS){DISPATCH(CASES2, CALL_T256)}

/* Items [begin, end) of (weight block, n * OH + oh), the block outer:
 * a thread's run of rows reuses one block's weights from its cache. */
#define ROWS_FN(SFX, TGT, L, PMAX)                                                              \
  TGT static void rows_##SFX(void *ctx, int64_t begin, int64_t end) {                           \
    const nhwc_job *j = ctx;                                                                    \
    const cm_conv_nhwc *d = j->d;                                                               \
    int64_t O = d->O, rows = d->N * d->OH;                                                      \
    for (int64_t i = begin; i < end; i++) {                                                     \
      int64_t r = i % rows, o0 = i / rows * j->bw, n = r / d->OH, oh = r % d->OH, kh0, kh1;     \
      valid_taps(oh * d->sh - d->ph, d->dh, d->H, d->KH, &kh0, &kh1);                           \
      const float *xn = j->x + n * d->H * d->W * d->C, *wb = j->wt + o0 * d->KH * d->KW * d->C; \
      float *yr = j->y + r * d->OW * O + o0;                                                    \
      int64_t bw = O - o0 < j->bw ? O - o0 : j->bw;                                             \
      int G = (int)(bw / (L));                                                                  \
      for (int64_t ow = 0; ow < d->OW; ow += (PMAX)) {                                          \
        int P = d->OW - ow < (PMAX) ? (int)(d->OW - ow) : (PMAX);                               \
        any_tile_##SFX(d, P, G, xn, oh, ow, kh0, kh1, j->zero, wb, bw, yr + ow * O);            \
      }                                                                                         \
    }                                                                                           \
  }
ROWS_FN(512, T512, 16, 7) ROWS_FN(256, T256, 8, 6)

    /* ---- the weight gradient ----
     * dW[o][kh][kw][c] = sum over outputs (n, oh, ow) of ct[n][oh][ow][o] *
     * x[n][ih][iw][c].  Register tiles of P input channels by G vectors of
     * output channels, for one tap, accumulate along an output row: per
     * pixel, G cotangent vectors and P broadcast inputs, P * G FMAs.  The
     * output rows are cut into a fixed number of blocks (independent of the
     * thread count), each summing into its own partial [kh][kw][c][O]; the
     * partials are added in block order. */

    typedef struct wgrad_job {
  const cm_conv_nhwc *d;
  const float *x, *ct;
  float *part;         /* nb partials of KH * KW * C * O */
  int64_t block, rows; /* output rows (n * OH + oh) per partial, in all */
  int64_t bw;          /* output channels per tile */
} wgrad_job;

/* acc[p][g] (at ap: P rows of O, vectors of L) += the sum over output
 * rows [r0, r1) reading input rows through tap row kh, over their pixels
 * [ow0, ow0 + n_ow), of x[.., c0 + p] * ct[.., o0 + g * L ...]; xoff and
 * coff place pixel ow0 and channels c0 / o0 within a row. */
#define WTILE_FN(SFX, TGT, V, L, LOAD, STORE, SET1, FMA)                                        \
  TGT __attribute__((always_inline)) static inline void wtile_##SFX(                            \
      const wgrad_job *j, int P, int G, int64_t r0, int64_t r1, int64_t kh, int64_t n_ow,       \
      int64_t xoff, int64_t coff, float *ap) {                                                  \
    const cm_conv_nhwc *d = j->d;                                                               \
    int64_t O = d->O, xs = d->sw * d->C;                                                        \
    V acc[8][4];                                                                                \
    NHWC_UNROLL for (int p = 0; p < P; p++) NHWC_UNROLL for (int g = 0; g < G; g++) acc[p][g] = \
        LOAD(ap + p * O + g * L);                                                               \
    for (int64_t r = r0; r < r1; r++) {                                                         \
      int64_t n = r / d->OH, ih = r % d->OH * d->sh + kh * d->dh - d->ph;                       \
      if (ih < 0 || ih >= d->H) continue;                                                       \
      const float *xr = j->x + (n * d->H + ih) * d->W * d->C + xoff;                            \
      const float *cr = j->ct + r * d->OW * O + coff;                                           \
      for (int64_t i = 0; i < n_ow; i++, xr += xs, cr += O) {                                   \
        V cv[4];                                                                                \
        NHWC_UNROLL for (int g = 0; g < G; g++) cv[g] = LOAD(cr + g * L);                       \
        NHWC_UNROLL for (int p = 0; p < P; p++) {                                               \
          V xv = SET1(xr[p]);                                                                   \
          NHWC_UNROLL for (int g = 0; g < G; g++) acc[p][g] = FMA(xv, cv[g], acc[p][g]);        \
        }                                                                                       \
      }                                                                                         \
    }                                                                                           \
    NHWC_UNROLL for (int p = 0; p < P; p++) NHWC_UNROLL for (int g = 0; g < G; g++)             \
        STORE(ap + p * O + g * L, acc[p][g]);                                                   \
  }
WTILE_FN(512, T512, __m512, 16, _mm512_loadu_ps, _mm512_storeu_ps, _mm512_set1_ps, _mm512_fmadd_ps)
WTILE_FN(256, T256, __m256, 8, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_set1_ps, _mm256_fmadd_ps)

#define WTILE_PARAMS                                                                  \
  const wgrad_job *j, int P, int G, int64_t r0, int64_t r1, int64_t kh, int64_t n_ow, \
      int64_t xoff, int64_t coff, float *ap
#define CALL_W512(p, g) wtile_512(j, p, g, r0, r1, kh, n_ow, xoff, coff, ap)
#define CALL_W256(p, g) wtile_256(j, p, g, r0, r1, kh, n_ow, xoff, coff, ap)
T512 static void any_wtile_512(WTILE_PARAMS){DISPATCH(CASES4, CALL_W512)} T256
    static void any_wtile_256(WTILE_PARAMS){DISPATCH(CASES2, CALL_W256)}

/* Partials [begin, end): each tile runs over all of its block's rows. */
#define WROWS_FN(SFX, TGT, L, PMAX)                                                          \
  TGT static void wrows_##SFX(void *ctx, int64_t begin, int64_t end) {                       \
    const wgrad_job *j = ctx;                                                                \
    const cm_conv_nhwc *d = j->d;                                                            \
    int64_t C = d->C, O = d->O, wsize = d->KH * d->KW * C * O;                               \
    for (int64_t b = begin; b < end; b++) {                                                  \
      float *part = j->part + b * wsize;                                                     \
      for (int64_t i = 0; i < wsize; i++) part[i] = 0;                                       \
      int64_t r0 = b * j->block, r1 = r0 + j->block < j->rows ? r0 + j->block : j->rows;     \
      for (int64_t kh = 0; kh < d->KH; kh++)                                                 \
        for (int64_t kw = 0; kw < d->KW; kw++) {                                             \
          int64_t base = kw * d->dw - d->pw, ow0, ow1;                                       \
          valid_taps(base, d->sw, d->W, d->OW, &ow0, &ow1);                                  \
          if (ow0 >= ow1) continue;                                                          \
          float *ap = part + (kh * d->KW + kw) * C * O;                                      \
          for (int64_t c0 = 0; c0 < C; c0 += (PMAX)) {                                       \
            int P = C - c0 < (PMAX) ? (int)(C - c0) : (PMAX);                                \
            for (int64_t o0 = 0; o0 < O; o0 += j->bw) {                                      \
              int G = (int)((O - o0 < j->bw ? O - o0 : j->bw) / (L));                        \
              any_wtile_##SFX(j, P, G, r0, r1, kh, ow1 - ow0, (ow0 * d->sw + base) * C + c0, \
                              ow0 * O + o0, ap + c0 * O + o0);                               \
            }                                                                                \
          }                                                                                  \
        }                                                                                    \
    }                                                                                        \
  }
WROWS_FN(512, T512, 16, 7) WROWS_FN(256, T256, 8, 6)
#endif

    /* dw (O, KH, KW, C) = the partials summed in order, taps reversed when
     * the convolution flips; over taps [begin, end). */
    typedef struct wsum_job {
  const cm_conv_nhwc *d;
  const float *part;
  int64_t nb;
  float *dw;
} wsum_job;

static inline void wsum(void *ctx, int64_t begin, int64_t end) {
  const wsum_job *j = ctx;
  const cm_conv_nhwc *d = j->d;
  int64_t C = d->C, O = d->O, T = d->KH * d->KW, wsize = T * C * O;
  for (int64_t t = begin; t < end; t++) {
    int64_t td = d->flip ? T - 1 - t : t;
    for (int64_t c = 0; c < C; c++)
      for (int64_t o = 0; o < O; o++) {
        const float *src = j->part + (t * C + c) * O + o;
        float s = 0;
        for (int64_t b = 0; b < j->nb; b++) s += src[b * wsize];
        j->dw[(o * T + td) * C + c] = s;
      }
  }
}

/* AVX-512 when the outputs come in vectors of 16, else AVX2 */
static int level_for(const cm_conv_nhwc *d) {
  int v = cm_cpu_matmul_simd_level();
  if (v == 2 && d->O % 16) v = 1;
  return d->O % 8 ? 0 : v;
}

bool cm_cpu_conv_nhwc_supported(const cm_conv_nhwc *d) {
#ifdef NHWC_KERNELS
  /* Each tile streams its block's weights, taps * C * 64 floats, from L2:
   * larger ones (7x7x512 -> 512 measured) run faster as a GEMM. */
  int64_t kc = d->KH * d->KW * d->C;
  return d->O > 0 && d->C > 0 && kc <= NHWC_MAX_KC && d->sh > 0 && d->sw > 0 && d->dh > 0 &&
         d->dw > 0 && level_for(d) > 0;
#else
  (void)d;
  return false;
#endif
}

int cm_cpu_conv_nhwc_f32(const cm_conv_nhwc *d, const float *x, const float *w, float *y) {
#ifdef NHWC_KERNELS
  int level = level_for(d);
  int64_t bw = level == 2 ? 64 : 16;
  float *wt = repack(d, w, bw);
  if (!wt) return cm_error(CM_ERR_MEMORY, "[conv] Out of memory.");
  nhwc_job j = {d, x, wt, wt + d->O * d->KH * d->KW * d->C, y, bw};
  int64_t cost = d->OW * d->O * d->KH * d->KW * d->C;
  int64_t blocks = (d->O + bw - 1) / bw;
  cm_parallel_for(blocks * d->N * d->OH, cm_grain(cost / blocks + 1),
                  level == 2 ? rows_512 : rows_256, &j);
  free(wt);
  return 0;
#else
  (void)d, (void)x, (void)w, (void)y;
  return cm_error(CM_ERR_VALUE, "[conv] No direct convolution kernel on this CPU.");
#endif
}

bool cm_cpu_conv_nhwc_wgrad_wins(const cm_conv_nhwc *d) {
  int64_t wsize = d->KH * d->KW * d->C * d->O;
  return wsize <= NHWC_MAX_WGRAD && d->sh == 1 && d->sw == 1 && d->OW >= 8;
}

int cm_cpu_conv_nhwc_wgrad_f32(const cm_conv_nhwc *d, const float *x, const float *ct, float *dw) {
#ifdef NHWC_KERNELS
  int level = level_for(d);
  int64_t rows = d->N * d->OH, T = d->KH * d->KW, wsize = T * d->C * d->O;
  /* at most 32 partials and 64 MB of them */
  int64_t nb = rows < 32 ? rows : 32, cap = ((int64_t)64 << 20) / (wsize * 4) + 1;
  if (nb > cap) nb = cap;
  if (nb < 1) nb = 1;
  int64_t block = (rows + nb - 1) / nb;
  nb = rows ? (rows + block - 1) / block : 1;
  float *part = malloc(sizeof(float) * (size_t)(nb * wsize));
  if (!part) return cm_error(CM_ERR_MEMORY, "[conv] Out of memory.");
  wgrad_job j = {d, x, ct, part, block, rows, level == 2 ? 64 : 16};
  cm_parallel_for(nb, 1, level == 2 ? wrows_512 : wrows_256, &j);
  wsum_job sj = {d, part, nb, dw};
  cm_parallel_for(T, cm_grain(d->C * d->O * nb), wsum, &sj);
  free(part);
  return 0;
#else
  (void)d, (void)x, (void)ct, (void)dw;
  return cm_error(CM_ERR_VALUE, "[conv] No direct convolution kernel on this CPU.");
#endif
}
