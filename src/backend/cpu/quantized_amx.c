/* x @ W^T for 4- and 8-bit affine W and many rows of half-precision x, on
 * AMX tiles (a prefill's quantized projections).
 *
 * Why: the float path dequantizes W to float32 tiles and calls sgemm, so
 * a 4-bit product ran slower than the dense float16 one.  Within a group
 * g of W's row n, x . w = s[n][g] (x . q) + b[n][g] sum(x), and the codes
 * q (0..15, or 0..255) are exact bfloat16 values, so x . q is a bfloat16 tile product
 * of the codes with x's exact bfloat16 parts (one for bfloat16, two for
 * float16, as in gemm_amx.c), summed in float32 per group; the scales and
 * the biases (times x's group sums) are applied in float32 once per group.
 * No dequantized W is ever written.
 *
 * Tiles: x is packed once (cm_amx_pack_rows); each B tile (16 code pairs
 * by 16 rows of W) is made from 4-byte gathers of the packed bytes, a byte
 * (codes k, k + 1) becoming the bfloat16 pair the instruction multiplies.
 * C blocks of 32 x 32 run over chunks of x that stay in L2, a group at a
 * time into the four accumulator tiles, then into float32 sums. */
#include "backend/cpu/quantized_amx.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/gemm_amx.h"
#include "core/allocator.h"
#include "core/error.h"
#include "core/threadpool.h"
#include "primitives/quantized.h"

#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_QAMX 1
#include <immintrin.h>
#else
#define HAVE_QAMX 0
#endif

#if HAVE_QAMX
#define QAMX_TGT __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,amx-tile,amx-bf16")))
#define TILE_U16 512

typedef struct qamx_job {
  const qmm_ctx *c;
  const cm_qmat *m;
  int parts;
  int64_t M, N, K, KB, G, Np, MC, panels;
  const uint16_t *px; /* x's tiles */
  uint16_t *pw;       /* W's code tiles, (16-row block, k block) */
  float *st, *bt;     /* scales and biases as [G][Np] float32 */
  float *xsum;        /* [rows][G] */
  float *out;
  atomic_int bad;
} qamx_job;

/* The bfloat16 pair (c0, c1) of two codes (integers under 256, exact) as
 * one 32-bit lane, c0 in the low half. */
static inline uint32_t code_pair(unsigned c0, unsigned c1) {
  union { float f; uint32_t u; } lo = {.f = (float)c0}, hi = {.f = (float)c1};
  return (lo.u >> 16) | (hi.u & 0xFFFF0000u);
}
QAMX_TGT static inline __m512i code_pairs(__m512i c0, __m512i c1) {
  __m512i lo = _mm512_castps_si512(_mm512_cvtepi32_ps(c0));
  __m512i hi = _mm512_castps_si512(_mm512_cvtepi32_ps(c1));
  return _mm512_or_si512(_mm512_srli_epi32(lo, 16), _mm512_and_si512(hi, _mm512_set1_epi32((int)0xFFFF0000u)));
}

/* W's 16-row blocks [begin, end) into code tiles, and their scales and
 * biases into st and bt.  A tile row kk holds codes 2 kk and 2 kk + 1 of
 * the block's 32: one byte of each W row with 4 bits, two with 8; a 4-byte
 * gather per row fetches four rows' worth (4 bits) or two (8 bits). */
QAMX_TGT static void pack_w(void *ctx, int64_t begin, int64_t end) {
  qamx_job *j = ctx;
  const cm_qmat *m = j->m;
  const size_t sz = cm_dtype_size(m->sbt);
  const bool four = j->c->bits == 4;
  const int64_t block_bytes = four ? 16 : 32; /* of 32 codes */
  const __m512i offs = _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                                          _mm512_set1_epi32((int)m->w_rs));
  const __m512i byte = _mm512_set1_epi32(0xFF), low4 = _mm512_set1_epi32(15);
  for (int64_t nb = begin; nb < end; nb++) {
    int64_t n0 = nb * 16;
    bool full = n0 + 16 <= j->N;
    for (int64_t kb = 0; kb < j->KB; kb++) {
      uint16_t *dst = j->pw + (nb * j->KB + kb) * TILE_U16;
      const uint8_t *src = m->w + n0 * m->w_rs + kb * block_bytes;
      if (!full) {
        uint32_t *d = (uint32_t *)dst;
        for (int kk = 0; kk < 16; kk++)
          for (int n = 0; n < 16; n++) {
            uint32_t v = 0;
            if (n0 + n < j->N) {
              const uint8_t *r = src + n * m->w_rs;
              v = four ? code_pair(r[kk] & 15u, r[kk] >> 4) : code_pair(r[2 * kk], r[2 * kk + 1]);
            }
            d[kk * 16 + n] = v;
          }
        continue;
      }
      for (int q = 0; q < 4 * (four ? 1 : 2); q++) {
        __m512i g = _mm512_i32gather_epi32(offs, src + 4 * q, 1);
        if (four) {
          for (int t = 0; t < 4; t++) {
            __m512i b = _mm512_and_si512(_mm512_srli_epi32(g, 8 * t), byte);
            _mm512_store_si512(dst + 32 * (4 * q + t),
                               code_pairs(_mm512_and_si512(b, low4), _mm512_srli_epi32(b, 4)));
          }
        } else {
          for (int t = 0; t < 2; t++)
            _mm512_store_si512(dst + 32 * (2 * q + t),
                               code_pairs(_mm512_and_si512(_mm512_srli_epi32(g, 16 * t), byte),
                                          _mm512_and_si512(_mm512_srli_epi32(g, 16 * t + 8), byte)));
        }
      }
    }
    for (int64_t g = 0; g < j->G; g++)
      for (int n = 0; n < 16; n++) {
        float s = 0.0f, b = 0.0f;
        if (n0 + n < j->N) {
          s = cm_q_sb((const char *)m->s + (n0 + n) * m->s_rs * (int64_t)sz, g, m->sbt);
          b = cm_q_sb((const char *)m->b + (n0 + n) * m->b_rs * (int64_t)sz, g, m->sbt);
          if (!__builtin_isfinite(s) || !__builtin_isfinite(b))
            atomic_store_explicit(&j->bad, 1, memory_order_relaxed);
        }
        j->st[g * j->Np + n0 + n] = s;
        j->bt[g * j->Np + n0 + n] = b;
      }
  }
}

/* Work items as in gemm_amx.c: chunk it / panels of x's rows against
 * panel it % panels of W's rows. */
QAMX_TGT static void compute(void *ctx, int64_t begin, int64_t end) {
  const qamx_job *j = ctx;
  _Alignas(64) float cb[32][32], acc[32][32];
  const int64_t per_group = j->c->gs / 32, xstep = (int64_t)j->parts * TILE_U16;
  cm_amx_tiles_on();
  for (int64_t it = begin; it < end; it++) {
    int64_t mc = it / j->panels, np = it % j->panels, n0 = np * 32;
    int64_t rows = (j->M + 31) / 32 * 32, m_end = (mc + 1) * j->MC < rows ? (mc + 1) * j->MC : rows;
    const uint16_t *w0 = j->pw + (2 * np) * j->KB * TILE_U16, *w1 = w0 + j->KB * TILE_U16;
    for (int64_t m0 = mc * j->MC; m0 < m_end; m0 += 32) {
      const uint16_t *x0 = j->px + (m0 / 16) * j->KB * xstep, *x1 = x0 + j->KB * xstep;
      memset(acc, 0, sizeof acc);
      for (int64_t g = 0; g < j->G; g++) {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
        for (int64_t kb = g * per_group; kb < (g + 1) * per_group; kb++) {
          _tile_loadd(6, w0 + kb * TILE_U16, 64);
          _tile_loadd(7, w1 + kb * TILE_U16, 64);
          for (int p = 0; p < j->parts; p++) {
            _tile_loadd(4, x0 + kb * xstep + p * TILE_U16, 64);
            _tile_loadd(5, x1 + kb * xstep + p * TILE_U16, 64);
            _tile_dpbf16ps(0, 4, 6);
            _tile_dpbf16ps(1, 4, 7);
            _tile_dpbf16ps(2, 5, 6);
            _tile_dpbf16ps(3, 5, 7);
          }
        }
        _tile_stored(0, &cb[0][0], 128);
        _tile_stored(1, &cb[0][16], 128);
        _tile_stored(2, &cb[16][0], 128);
        _tile_stored(3, &cb[16][16], 128);
        const float *sg = j->st + g * j->Np + n0, *bg = j->bt + g * j->Np + n0;
        __m512 s0 = _mm512_loadu_ps(sg), s1 = _mm512_loadu_ps(sg + 16);
        __m512 b0 = _mm512_loadu_ps(bg), b1 = _mm512_loadu_ps(bg + 16);
        for (int r = 0; r < 32; r++) {
          __m512 xs = _mm512_set1_ps(j->xsum[(m0 + r) * j->G + g]);
          __m512 a0 = _mm512_fmadd_ps(_mm512_load_ps(cb[r]), s0, _mm512_load_ps(acc[r]));
          __m512 a1 = _mm512_fmadd_ps(_mm512_load_ps(cb[r] + 16), s1, _mm512_load_ps(acc[r] + 16));
          _mm512_store_ps(acc[r], _mm512_fmadd_ps(xs, b0, a0));
          _mm512_store_ps(acc[r] + 16, _mm512_fmadd_ps(xs, b1, a1));
        }
      }
      int64_t cols = j->N - n0 < 32 ? j->N - n0 : 32;
      for (int r = 0; r < 32 && m0 + r < j->M; r++)
        memcpy(j->out + (m0 + r) * j->N + n0, acc[r], sizeof(float) * (size_t)cols);
    }
  }
  cm_amx_tiles_off();
}

#endif

/* Below this much work (multiply-adds) the float path stays. */
#define QAMX_MIN_WORK ((int64_t)1 << 20)

int cm_q_qmm_amx(const qmm_ctx *c, const cm_qmat *m, const float *x, int64_t M, float *out) {
#if HAVE_QAMX
  int64_t K = c->K, N = c->N;
  if (!c->transpose || c->mode != CM_QMODE_AFFINE || (c->bits != 4 && c->bits != 8) ||
      (c->gs != 32 && c->gs != 64 && c->gs != 128) || K % c->gs || N < 16 || M < 2 ||
      M * N * K < QAMX_MIN_WORK || (c->xdt != CM_FLOAT16 && c->xdt != CM_BFLOAT16) ||
      m->w_rs > (1 << 26) || !cm_amx_ready())
    return 0;
  qamx_job j = {.c = c, .m = m, .parts = c->xdt == CM_FLOAT16 ? 2 : 1, .M = M, .N = N, .K = K};
  j.KB = K / 32, j.G = K / c->gs, j.Np = (N + 31) / 32 * 32;
  int64_t Mp = (M + 31) / 32 * 32;
  size_t xbytes = (size_t)(Mp / 16) * (size_t)(j.KB * j.parts) * TILE_U16 * 2;
  size_t wbytes = (size_t)(j.Np / 16) * (size_t)j.KB * TILE_U16 * 2;
  size_t fbytes = sizeof(float) * (size_t)(2 * j.G * j.Np + Mp * j.G);
  cm_buffer *scratch = cm_buffer_alloc(xbytes + wbytes + fbytes + 64);
  if (!scratch) return -1;
  char *base = (char *)(((uintptr_t)scratch->ptr + 63) & ~(uintptr_t)63);
  uint16_t *px = (uint16_t *)base;
  j.px = px;
  j.pw = (uint16_t *)(base + xbytes);
  j.st = (float *)(base + xbytes + wbytes);
  j.bt = j.st + j.G * j.Np;
  j.xsum = j.bt + j.G * j.Np;
  j.out = out;
  atomic_init(&j.bad, 0);
  /* x's values are float16 or bfloat16 ones held in float32: their parts
   * are exact */
  int bad = cm_amx_pack_rows(CM_FLOAT32, j.parts, M, K, x, K, px);
  cm_q_group_sums(x, M, K, c->gs, j.xsum);
  memset(j.xsum + M * j.G, 0, sizeof(float) * (size_t)((Mp - M) * j.G));
  if (!bad) cm_parallel_for(j.Np / 16, 1, pack_w, &j);
  if (bad || atomic_load(&j.bad)) {
    cm_buffer_release(scratch);
    return 0;
  }
  /* chunks of x of about 768 KB packed, beside a panel of W in L2 */
  j.MC = (768 * 1024 / (j.KB * 32 * j.parts * 2)) / 32 * 32;
  j.MC = j.MC < 32 ? 32 : j.MC > 256 ? 256 : j.MC;
  j.panels = j.Np / 32;
  cm_parallel_for((Mp + j.MC - 1) / j.MC * j.panels, 1, compute, &j);
  cm_buffer_release(scratch);
  return 1;
#else
  (void)c, (void)m, (void)x, (void)M, (void)out;
  return 0;
#endif
}
