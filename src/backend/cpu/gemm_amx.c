/* Half-precision products on AMX tiles (see gemm_amx.h).
 *
 * Why: a float16 or bfloat16 product used to be widened to float32 and
 * handed to sgemm, which peaks at 32 multiply-adds per cycle and core; one
 * tile instruction (tdpbf16ps) does 16 x 16 x 32 bfloat16 ones in about 16
 * cycles.  A float16 value x is the exact sum of two bfloat16 parts, h =
 * bf16(x) and l = x - h (x has 11 significant bits, each part 8), so a
 * float16 product is the four part products added in float32: the same
 * products a float32 GEMM forms, four times the tile work, still several
 * times sgemm's speed.  A bfloat16 product needs one.
 *
 * Where the tiles would give another answer than float32 arithmetic, the
 * call declines and the caller's path runs: the tiles treat bfloat16
 * subnormals as zero and flush results below float32's normal range, and a
 * float16 infinity split into (inf, 0) would make inf x 0 = NaN where a
 * float32 product is infinite.  Packing finds both: a value below 2^-63 in
 * magnitude (so every product of two stays normal) or not finite (for
 * bfloat16 too, which keeps one rule for every user of the packing:
 * quantized_amx.c's zero codes would meet an infinity the same way).
 *
 * Layout: both operands are packed into tiles of 1 KB.  A's tile (16 rows
 * by 32 k) holds each row's 32 values; B's (16 pairs of k by 16 columns)
 * holds, per row, the 16 columns' pairs (k, k + 1), as the instruction
 * reads them.  Products pad M, N and K to multiples of 32 with zeros.  The
 * compute runs 32 x 32 blocks of C in four accumulator tiles, over chunks
 * of A's rows that stay in the L2 cache while B's panels of 32 columns go
 * by. */
#include "backend/cpu/gemm_amx.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#include "backend/cpu/copy.h"
#include "backend/cpu/cpu_features.h"
#include "core/allocator.h"
#include "core/error.h"
#include "core/threadpool.h"

#if defined(__x86_64__) && defined(__linux__) && (defined(__GNUC__) || defined(__clang__))
#define HAVE_AMX 1
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#else
#define HAVE_AMX 0
#endif

#if HAVE_AMX
#define AMX_TGT                                                                                   \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,f16c,amx-tile,amx-bf16")))

/* Linux hands out the tile data registers only to a process that asks
 * (arch_prctl ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA), once. */
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18
static bool amx_permitted;
static pthread_once_t amx_once = PTHREAD_ONCE_INIT;
static void ask_for_tiles(void) {
  amx_permitted = syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
}

#define TILE_U16 512 /* bfloat16 values per packed tile (16 rows of 64 bytes) */

typedef struct amx_job {
  cm_dtype dt, adt; /* the product's dtype; A's (float32 for the quantized product's x) */
  int parts; /* bfloat16 parts per value: 1 (bfloat16) or 2 (float16) */
  int64_t M, N, K, KB, MC, mchunks, panels;
  const void *a;
  const uint16_t *b;
  int64_t ars, acs, brs, bcs;
  uint16_t *pa, *pb;
  void *out;
  float alpha, beta;
  cm_convert_row_fn to_out, from_out;
  atomic_int bad;
} amx_job;

/* Configuration for 8 tiles of 16 rows by 64 bytes (palette 1). */
typedef struct tile_config {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
} tile_config;

/* A constant in memory: built on the stack, GCC dropped the stores of
 * colsb and rows (it does not see ldtilecfg read all 64 bytes), leaving
 * a configuration of empty tiles. */
static const tile_config tiles_8x16x64 = {
    .palette = 1,
    .colsb = {64, 64, 64, 64, 64, 64, 64, 64},
    .rows = {16, 16, 16, 16, 16, 16, 16, 16},
};

AMX_TGT static void tiles_on(void) { _tile_loadconfig(&tiles_8x16x64); }

static float half_at(cm_dtype dt, const void *p, int64_t i) {
  if (dt == CM_FLOAT32) return ((const float *)p)[i];
  uint16_t h = ((const uint16_t *)p)[i];
  return dt == CM_FLOAT16 ? cm_f16_to_f32(h) : cm_bf16_to_f32(h);
}

/* 16 contiguous values of dtype dt (float32 or a half) at p as float32. */
AMX_TGT static inline __m512 load16(cm_dtype dt, const void *p) {
  if (dt == CM_FLOAT32) return _mm512_loadu_ps(p);
  __m256i h = _mm256_loadu_si256((const __m256i *)p);
  if (dt == CM_FLOAT16) return _mm512_cvtph_ps(h);
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* The float32 values of 16 bfloat16 ones. */
AMX_TGT static inline __m512 widen_bf16(__m256i h) {
  return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

/* One packed tile row: the 32 values v0 (first 16), v1 as bfloat16 parts
 * at dst (and dst + TILE_U16 for float16's second part). */
AMX_TGT static inline void put_row(amx_job *j, __m512 v0, __m512 v1, uint16_t *dst) {
  __m512i h = (__m512i)_mm512_cvtne2ps_pbh(v1, v0); /* exact for bfloat16 input */
  _mm512_store_si512(dst, h);
  /* what the tiles cannot carry: non-finite values (a split gives inf x 0,
   * a quantized product's zero codes too) and magnitudes under 2^-63 */
  const __m512 tiny = _mm512_set1_ps(0x1p-63f), zero = _mm512_setzero_ps();
  const __m512 inf = _mm512_set1_ps(__builtin_inff());
  __m512 a0 = _mm512_abs_ps(v0), a1 = _mm512_abs_ps(v1);
  __mmask16 ok0 = _mm512_cmp_ps_mask(a0, inf, _CMP_LT_OQ) &
                  (_mm512_cmp_ps_mask(a0, tiny, _CMP_GE_OQ) | _mm512_cmp_ps_mask(a0, zero, _CMP_EQ_OQ));
  __mmask16 ok1 = _mm512_cmp_ps_mask(a1, inf, _CMP_LT_OQ) &
                  (_mm512_cmp_ps_mask(a1, tiny, _CMP_GE_OQ) | _mm512_cmp_ps_mask(a1, zero, _CMP_EQ_OQ));
  if ((ok0 & ok1) != 0xFFFF) atomic_store_explicit(&j->bad, 1, memory_order_relaxed);
  if (j->parts == 1) return;
  __m512 l0 = _mm512_sub_ps(v0, widen_bf16(_mm512_castsi512_si256(h)));
  __m512 l1 = _mm512_sub_ps(v1, widen_bf16(_mm512_extracti64x4_epi64(h, 1)));
  _mm512_store_si512(dst + TILE_U16, (__m512i)_mm512_cvtne2ps_pbh(l1, l0));
}

static uint16_t *tile_at(const amx_job *j, uint16_t *base, int64_t blk, int64_t kb) {
  return base + (blk * j->KB + kb) * j->parts * TILE_U16;
}

/* A's 16-row blocks [begin, end). */
AMX_TGT static void pack_a(void *ctx, int64_t begin, int64_t end) {
  amx_job *j = ctx;
  _Alignas(64) float buf[32];
  for (int64_t mb = begin; mb < end; mb++)
    for (int64_t kb = 0; kb < j->KB; kb++)
      for (int r = 0; r < 16; r++) {
        int64_t m = mb * 16 + r, k0 = kb * 32;
        __m512 v0 = _mm512_setzero_ps(), v1 = v0;
        size_t esz = cm_dtype_size(j->adt);
        if (m < j->M && j->acs == 1 && k0 + 32 <= j->K) {
          const char *p = (const char *)j->a + (m * j->ars + k0) * (int64_t)esz;
          v0 = load16(j->adt, p), v1 = load16(j->adt, p + 16 * esz);
        } else if (m < j->M) {
          for (int t = 0; t < 32; t++)
            buf[t] = k0 + t < j->K ? half_at(j->adt, j->a, m * j->ars + (k0 + t) * j->acs) : 0.0f;
          v0 = _mm512_load_ps(buf), v1 = _mm512_load_ps(buf + 16);
        }
        put_row(j, v0, v1, tile_at(j, j->pa, mb, kb) + 32 * r);
      }
}

/* B's 16-column blocks [begin, end). */
AMX_TGT static void pack_b(void *ctx, int64_t begin, int64_t end) {
  amx_job *j = ctx;
  _Alignas(64) float buf[32];
  const __m512i cols = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  /* k-contiguous B (the transposed weight of x @ w.T): one 4-byte gather
   * per column fetches its pair; the byte offsets must fit an int32 */
  bool gather = j->brs == 1 && j->bcs > 0 && j->bcs <= INT_MAX / 32;
  const __m512i offs = _mm512_mullo_epi32(cols, _mm512_set1_epi32(gather ? (int)(2 * j->bcs) : 0));
  const __m512i first = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
  const __m512i second = _mm512_add_epi32(first, _mm512_set1_epi32(8));
  for (int64_t nb = begin; nb < end; nb++)
    for (int64_t kb = 0; kb < j->KB; kb++)
      for (int kk = 0; kk < 16; kk++) {
        int64_t n0 = nb * 16, k = kb * 32 + 2 * kk;
        bool full = n0 + 16 <= j->N && k + 2 <= j->K;
        __m512 v0, v1;
        if (full && gather) {
          __m512i g = _mm512_i32gather_epi32(offs, j->b + k + n0 * j->bcs, 1);
          if (j->dt == CM_FLOAT16) {
            v0 = _mm512_cvtph_ps(_mm512_castsi512_si256(g));
            v1 = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(g, 1));
          } else {
            v0 = widen_bf16(_mm512_castsi512_si256(g));
            v1 = widen_bf16(_mm512_extracti64x4_epi64(g, 1));
          }
        } else if (full && j->bcs == 1) { /* row-major B: interleave rows k, k + 1 */
          __m512 r0 = load16(j->dt, j->b + k * j->brs + n0), r1 = load16(j->dt, j->b + (k + 1) * j->brs + n0);
          v0 = _mm512_permutex2var_ps(r0, first, r1);
          v1 = _mm512_permutex2var_ps(r0, second, r1);
        } else {
          for (int n = 0; n < 16; n++)
            for (int s = 0; s < 2; s++)
              buf[2 * n + s] = n0 + n < j->N && k + s < j->K
                                   ? half_at(j->dt, j->b, (k + s) * j->brs + (n0 + n) * j->bcs)
                                   : 0.0f;
          v0 = _mm512_load_ps(buf), v1 = _mm512_load_ps(buf + 16);
        }
        put_row(j, v0, v1, tile_at(j, j->pb, nb, kb) + 32 * kk);
      }
}

/* C's 32 x 32 block from A's blocks a0, a0 + 1 and B's b0, b0 + 1 into the
 * accumulator tiles 0-3; tiles 4-5 hold A, 6-7 B.  With two parts the
 * four part products go h h, h l, l l, l h, so that each step reloads
 * only one operand's pair. */
AMX_TGT static void block(const amx_job *j, const uint16_t *a0, const uint16_t *a1,
                          const uint16_t *b0, const uint16_t *b1) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  const int64_t step = (int64_t)j->parts * TILE_U16;
#define AMX_FOUR()                                                                                \
  _tile_dpbf16ps(0, 4, 6);                                                                        \
  _tile_dpbf16ps(1, 4, 7);                                                                        \
  _tile_dpbf16ps(2, 5, 6);                                                                        \
  _tile_dpbf16ps(3, 5, 7)
  for (int64_t kb = 0; kb < j->KB; kb++) {
    const uint16_t *A0 = a0 + kb * step, *A1 = a1 + kb * step, *B0 = b0 + kb * step, *B1 = b1 + kb * step;
    _tile_loadd(4, A0, 64);
    _tile_loadd(5, A1, 64);
    _tile_loadd(6, B0, 64);
    _tile_loadd(7, B1, 64);
    AMX_FOUR();
    if (j->parts == 1) continue;
    _tile_loadd(6, B0 + TILE_U16, 64);
    _tile_loadd(7, B1 + TILE_U16, 64);
    AMX_FOUR();
    _tile_loadd(4, A0 + TILE_U16, 64);
    _tile_loadd(5, A1 + TILE_U16, 64);
    AMX_FOUR();
    _tile_loadd(6, B0, 64);
    _tile_loadd(7, B1, 64);
    AMX_FOUR();
  }
#undef AMX_FOUR
}

/* The finished block c (32 x 32 float32) into out at (m0, n0): alpha,
 * beta and the one rounding to the output's dtype. */
static void write_block(const amx_job *j, float c[32][32], int64_t m0, int64_t n0) {
  float old[32];
  int64_t cols = j->N - n0 < 32 ? j->N - n0 : 32, esz = 2;
  for (int r = 0; r < 32 && m0 + r < j->M; r++) {
    char *dst = (char *)j->out + ((m0 + r) * j->N + n0) * esz;
    float *row = c[r];
    if (j->beta != 0.0f) {
      j->from_out(old, 1, dst, 1, cols);
      for (int64_t t = 0; t < cols; t++) row[t] = j->alpha * row[t] + j->beta * old[t];
    } else if (j->alpha != 1.0f) {
      for (int64_t t = 0; t < cols; t++) row[t] *= j->alpha;
    }
    j->to_out(dst, 1, row, 1, cols);
  }
}

/* Work items [begin, end): item i is chunk i / panels of A's rows against
 * panel i % panels of B, so that a run of items keeps one chunk of A. */
AMX_TGT static void compute(void *ctx, int64_t begin, int64_t end) {
  const amx_job *j = ctx;
  _Alignas(64) float c[32][32];
  tiles_on();
  for (int64_t it = begin; it < end; it++) {
    int64_t mc = it / j->panels, np = it % j->panels;
    int64_t m_end = (mc + 1) * j->MC, rows = (j->M + 31) / 32 * 32;
    if (m_end > rows) m_end = rows;
    const uint16_t *b0 = tile_at(j, j->pb, 2 * np, 0), *b1 = tile_at(j, j->pb, 2 * np + 1, 0);
    for (int64_t m0 = mc * j->MC; m0 < m_end; m0 += 32) {
      block(j, tile_at(j, j->pa, m0 / 16, 0), tile_at(j, j->pa, m0 / 16 + 1, 0), b0, b1);
      _tile_stored(0, &c[0][0], 128);
      _tile_stored(1, &c[0][16], 128);
      _tile_stored(2, &c[16][0], 128);
      _tile_stored(3, &c[16][16], 128);
      write_block(j, c, m0, np * 32);
    }
  }
  _tile_release();
}
#endif

bool cm_amx_ready(void) {
#if HAVE_AMX
  if (!cm_cpu_simd_enabled(CM_SIMD_MATMUL_AMX)) return false;
  pthread_once(&amx_once, ask_for_tiles);
  return amx_permitted;
#else
  return false;
#endif
}

#if HAVE_AMX
AMX_TGT void cm_amx_tiles_on(void) { tiles_on(); }
AMX_TGT void cm_amx_tiles_off(void) { _tile_release(); }
#else
void cm_amx_tiles_on(void) {}
void cm_amx_tiles_off(void) {}
#endif

int cm_amx_pack_rows(cm_dtype adt, int parts, int64_t M, int64_t K, const void *a, int64_t ars,
                     uint16_t *dst) {
#if HAVE_AMX
  amx_job j = {.adt = adt, .parts = parts, .M = M, .K = K, .KB = (K + 31) / 32, .a = a,
               .ars = ars, .acs = 1, .pa = dst};
  atomic_init(&j.bad, 0);
  cm_parallel_for((M + 31) / 32 * 2, 1, pack_a, &j);
  return atomic_load(&j.bad);
#else
  (void)adt, (void)parts, (void)M, (void)K, (void)a, (void)ars, (void)dst;
  return 1;
#endif
}

/* Below this much work (multiply-adds) the packing outweighs the tiles. */
#define AMX_MIN_WORK ((int64_t)1 << 18)

int cm_gemm_amx(cm_dtype dt, int64_t M, int64_t N, int64_t K, float alpha, const void *a,
                int64_t ars, int64_t acs, const void *b, int64_t brs, int64_t bcs, void *out,
                float beta) {
#if HAVE_AMX
  if ((dt != CM_FLOAT16 && dt != CM_BFLOAT16) || M < 16 || N < 16 || K < 32 ||
      M * N * K < AMX_MIN_WORK || !cm_amx_ready())
    return 0;
  amx_job j = {.dt = dt, .adt = dt, .parts = dt == CM_FLOAT16 ? 2 : 1, .M = M, .N = N, .K = K,
               .a = a, .b = b, .ars = ars, .acs = acs, .brs = brs, .bcs = bcs,
               .out = out, .alpha = alpha, .beta = beta};
  j.KB = (K + 31) / 32;
  j.to_out = cm_cpu_convert_row(CM_FLOAT32, dt);
  j.from_out = cm_cpu_convert_row(dt, CM_FLOAT32);
  int64_t mblocks = (M + 31) / 32 * 2, nblocks = (N + 31) / 32 * 2;
  size_t tile_bytes = (size_t)j.parts * TILE_U16 * sizeof(uint16_t);
  size_t bytes = (size_t)(mblocks + nblocks) * (size_t)j.KB * tile_bytes + 64;
  cm_buffer *scratch = cm_buffer_alloc(bytes);
  if (!scratch) return -1;
  uintptr_t base = ((uintptr_t)scratch->ptr + 63) & ~(uintptr_t)63;
  j.pa = (uint16_t *)base;
  j.pb = j.pa + (size_t)mblocks * (size_t)j.KB * tile_bytes / sizeof(uint16_t);
  atomic_init(&j.bad, 0);
  cm_parallel_for(mblocks, 1, pack_a, &j);
  cm_parallel_for(nblocks, 1, pack_b, &j);
  if (atomic_load(&j.bad)) {
    cm_buffer_release(scratch);
    return 0;
  }
  /* a chunk of A's rows about 768 KB packed, so that it and a panel of B
   * share a core's L2 */
  int64_t row_bytes = j.KB * 32 * j.parts * 2;
  j.MC = (768 * 1024 / row_bytes) / 32 * 32;
  if (j.MC < 32) j.MC = 32;
  if (j.MC > 256) j.MC = 256;
  j.mchunks = (mblocks * 16 + j.MC - 1) / j.MC;
  j.panels = nblocks / 2;
  cm_parallel_for(j.mchunks * j.panels, 1, compute, &j);
  cm_buffer_release(scratch);
  return 1;
#else
  (void)dt, (void)M, (void)N, (void)K, (void)alpha, (void)a, (void)ars, (void)acs, (void)b;
  (void)brs, (void)bcs, (void)out, (void)beta;
  return 0;
#endif
}
