/* Few-row matrix products (see gemv.h).
 *
 * The small operand A (at most 8 rows) is widened once into a float32
 * copy padded with zero rows to MP in {1, 2, 4, 8} rows, so each kernel
 * has a fixed number of accumulators.  The large operand B is streamed
 * once in its own dtype, in one of two forms:
 *   dot:  B's K axis is contiguous (x @ w.T with w row-major): each output
 *         column is MP dot products over one contiguous column of B;
 *   axpy: B's N axis is contiguous (x @ w): a block of output columns
 *         accumulates MP scaled rows of B, reading each row segment once.
 * Output columns (dot) or column blocks (axpy) are spread over the pool;
 * each output element is one float32 sum rounded once into its dtype, so
 * the result does not depend on the thread count. */
#include "backend/cpu/gemv.h"

#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_features.h"
#include "core/error.h"
#include "core/threadpool.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <immintrin.h>

#define GV_TARGET __attribute__((target("avx2,fma,f16c")))
#define GV_AXPY_BLOCK 1024 /* output columns per axpy block: MP * 4 KiB of sums */

typedef struct gv_job {
  int64_t M, MP, N, K;
  float alpha, beta;
  const float *a; /* MP x K, row-major, rows past M are zero */
  const char *b;  /* element (k, n) at b + (k * bks + n * bns) elements */
  int64_t bks, bns;
  char *out; /* element (m, n) at out + (m * oms + n * ons) elements */
  int64_t oms, ons;
  int64_t nb; /* axpy: columns per block */
} gv_job;

/* Loads of 8 elements as float32, and of one. */
#define LD_f32(p) _mm256_loadu_ps((const float *)(p))
#define LD_f16(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(const void *)(p)))
#define LD_bf16(p)                       \
  _mm256_castsi256_ps(_mm256_slli_epi32( \
      _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(const void *)(p))), 16))
#define S_f32(p) (*(const float *)(p))
#define S_f16(p) cm_f16_to_f32(*(const uint16_t *)(p))
#define S_bf16(p) cm_bf16_to_f32(*(const uint16_t *)(p))
#define ST_f32(p, v) (*(float *)(p) = (v))
#define ST_f16(p, v) (*(uint16_t *)(p) = cm_f32_to_f16(v))
#define ST_bf16(p, v) (*(uint16_t *)(p) = cm_f32_to_bf16(v))

GV_TARGET static inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

/* The element types: storage type, loads and stores. */
#define GV_TYPES(X) X(f32, float) X(f16, uint16_t) X(bf16, uint16_t)

/* out(m, n) = alpha * acc (+ beta * out(m, n)), for the rows m < M. */
#define GV_PUT(TN, T)                                                             \
  static inline void put_##TN(const gv_job *j, int64_t m, int64_t n, float acc) { \
    T *p = (T *)(void *)j->out + m * j->oms + n * j->ons;                         \
    float v = j->alpha * acc;                                                     \
    if (j->beta != 0.0f) v += j->beta * S_##TN(p);                                \
    ST_##TN(p, v);                                                                \
  }

/* dot form, MP rows: NC output columns at a time (NC streams of B in
 * flight, which is what keeps the memory busy), NC * MP accumulators in
 * registers.  K runs in blocks of GV_DOT_KBLOCK / MP floats over a chunk
 * of columns, so the block of A stays in L1 (8 rows of a 4096-long K do
 * not fit), each column's vector sums parked in `part` between blocks;
 * every lane adds in k order, so the blocking changes no bits. */
#define GV_DOT_KB_COLS(TN, T, MP, NC)                                                              \
  GV_TARGET static inline void dotkb_##TN##_##MP##_##NC(const gv_job *j, int64_t n, int64_t k0,    \
                                                        int64_t k1, __m256 *part) {                \
    const int64_t K = j->K;                                                                        \
    const float *a = j->a;                                                                         \
    const T *col[NC];                                                                              \
    for (int c = 0; c < NC; c++) col[c] = (const T *)(const void *)j->b + (n + c) * j->bns;        \
    __m256 acc[NC][MP];                                                                            \
    for (int c = 0; c < NC; c++)                                                                   \
      for (int m = 0; m < MP; m++) acc[c][m] = part[c * MP + m];                                   \
    for (int64_t k = k0; k < k1; k += 8) {                                                         \
      /* half columns: each line asked for 1 KB ahead (from memory 23 -> 26 GB/s \
       * with two threads; float32 columns stream faster without) */          \
      if (sizeof(T) == 2 && (k & 31) == 0)                                                         \
        for (int c = 0; c < NC; c++) _mm_prefetch((const char *)(col[c] + k) + 1024, _MM_HINT_T0); \
      __m256 av[MP];                                                                               \
      _Pragma("GCC unroll 8") for (int m = 0; m < MP; m++) av[m] = _mm256_loadu_ps(a + m * K + k); \
      _Pragma("GCC unroll 8") for (int c = 0; c < NC; c++) {                                       \
        __m256 bv = LD_##TN(col[c] + k);                                                           \
        _Pragma("GCC unroll 8") for (int m = 0; m < MP; m++) acc[c][m] =                           \
            _mm256_fmadd_ps(av[m], bv, acc[c][m]);                                                 \
      }                                                                                            \
    }                                                                                              \
    for (int c = 0; c < NC; c++)                                                                   \
      for (int m = 0; m < MP; m++) part[c * MP + m] = acc[c][m];                                   \
  }

#define GV_DOT_KBLOCK 4096 /* floats of A per block: 16 KiB */
#define GV_DOT_CHUNK 32    /* columns whose sums are parked at once */

/* the driver; the kernels dotkb_MP_NC and dotkb_MP_1 come first */
#define GV_DOT_KB(TN, T, MP, NC)                                                       \
  GV_TARGET static void dot_##TN##_##MP(const gv_job *j, int64_t n0, int64_t n1) {     \
    const int64_t K = j->K, K8 = K & ~(int64_t)7, KB = GV_DOT_KBLOCK / MP;             \
    const float *a = j->a;                                                             \
    __m256 part[GV_DOT_CHUNK * MP];                                                    \
    for (int64_t c0 = n0; c0 < n1; c0 += GV_DOT_CHUNK) {                               \
      int64_t c1 = n1 - c0 < GV_DOT_CHUNK ? n1 : c0 + GV_DOT_CHUNK;                    \
      for (int64_t i = 0; i < (c1 - c0) * MP; i++) part[i] = _mm256_setzero_ps();      \
      for (int64_t k0 = 0; k0 < K8; k0 += KB) {                                        \
        int64_t k1 = K8 - k0 < KB ? K8 : k0 + KB, n = c0;                              \
        for (; n + NC <= c1; n += NC)                                                  \
          dotkb_##TN##_##MP##_##NC(j, n, k0, k1, part + (n - c0) * MP);                \
        for (; n < c1; n++) dotkb_##TN##_##MP##_1(j, n, k0, k1, part + (n - c0) * MP); \
      }                                                                                \
      for (int64_t n = c0; n < c1; n++) {                                              \
        const T *col = (const T *)(const void *)j->b + n * j->bns;                     \
        for (int m = 0; m < MP && m < j->M; m++) {                                     \
          float t = hsum(part[(n - c0) * MP + m]);                                     \
          for (int64_t q = K8; q < K; q++) t += a[m * K + q] * S_##TN(col + q);        \
          put_##TN(j, m, n, t);                                                        \
        }                                                                              \
      }                                                                                \
    }                                                                                  \
  }

/* axpy form, MP rows: blocks [blk0, blk1) of j->nb columns each. */
#define GV_AXPY(TN, T, MP)                                                                        \
  GV_TARGET static void axpy_##TN##_##MP(const gv_job *j, int64_t blk0, int64_t blk1) {           \
    const int64_t K = j->K;                                                                       \
    const float *a = j->a;                                                                        \
    _Alignas(32) float acc[MP][GV_AXPY_BLOCK];                                                    \
    for (int64_t blk = blk0; blk < blk1; blk++) {                                                 \
      int64_t n0 = blk * j->nb, w = j->N - n0 < j->nb ? j->N - n0 : j->nb, wv = w & ~7;           \
      for (int m = 0; m < MP; m++) memset(acc[m], 0, sizeof(float) * (size_t)w);                  \
      const T *base = (const T *)(const void *)j->b + n0;                                         \
      int64_t k = 0;                                                                              \
      for (; k + 4 <= K; k += 4) {                                                                \
        const T *r0 = base + k * j->bks, *r1 = r0 + j->bks, *r2 = r1 + j->bks, *r3 = r2 + j->bks; \
        for (int64_t c = 0; c < wv; c += 8) {                                                     \
          __m256 b0 = LD_##TN(r0 + c), b1 = LD_##TN(r1 + c), b2 = LD_##TN(r2 + c),                \
                 b3 = LD_##TN(r3 + c);                                                            \
          for (int m = 0; m < MP; m++) {                                                          \
            const float *am = a + m * K + k;                                                      \
            __m256 s = _mm256_load_ps(acc[m] + c);                                                \
            s = _mm256_fmadd_ps(_mm256_broadcast_ss(am), b0, s);                                  \
            s = _mm256_fmadd_ps(_mm256_broadcast_ss(am + 1), b1, s);                              \
            s = _mm256_fmadd_ps(_mm256_broadcast_ss(am + 2), b2, s);                              \
            s = _mm256_fmadd_ps(_mm256_broadcast_ss(am + 3), b3, s);                              \
            _mm256_store_ps(acc[m] + c, s);                                                       \
          }                                                                                       \
        }                                                                                         \
        for (int64_t c = wv; c < w; c++)                                                          \
          for (int m = 0; m < MP; m++) {                                                          \
            const float *am = a + m * K + k;                                                      \
            acc[m][c] += am[0] * S_##TN(r0 + c) + am[1] * S_##TN(r1 + c) +                        \
                         am[2] * S_##TN(r2 + c) + am[3] * S_##TN(r3 + c);                         \
          }                                                                                       \
      }                                                                                           \
      for (; k < K; k++) {                                                                        \
        const T *r0 = base + k * j->bks;                                                          \
        for (int64_t c = 0; c < wv; c += 8) {                                                     \
          __m256 b0 = LD_##TN(r0 + c);                                                            \
          for (int m = 0; m < MP; m++) {                                                          \
            __m256 s = _mm256_load_ps(acc[m] + c);                                                \
            s = _mm256_fmadd_ps(_mm256_broadcast_ss(a + m * K + k), b0, s);                       \
            _mm256_store_ps(acc[m] + c, s);                                                       \
          }                                                                                       \
        }                                                                                         \
        for (int64_t c = wv; c < w; c++)                                                          \
          for (int m = 0; m < MP; m++) acc[m][c] += a[m * K + k] * S_##TN(r0 + c);                \
      }                                                                                           \
      for (int m = 0; m < MP && m < j->M; m++)                                                    \
        for (int64_t c = 0; c < w; c++) put_##TN(j, m, n0 + c, acc[m][c]);                        \
    }                                                                                             \
  }

#define GV_FAMILY(TN, T)      \
  GV_PUT(TN, T)               \
  GV_DOT_KB_COLS(TN, T, 1, 4) \
  GV_DOT_KB_COLS(TN, T, 1, 1) \
  GV_DOT_KB(TN, T, 1, 4)      \
  GV_DOT_KB_COLS(TN, T, 2, 4) \
  GV_DOT_KB_COLS(TN, T, 2, 1) \
  GV_DOT_KB(TN, T, 2, 4)      \
  GV_DOT_KB_COLS(TN, T, 4, 2) \
  GV_DOT_KB_COLS(TN, T, 4, 1) \
  GV_DOT_KB(TN, T, 4, 2)      \
  GV_DOT_KB_COLS(TN, T, 8, 1) \
  GV_DOT_KB(TN, T, 8, 1) GV_AXPY(TN, T, 1) GV_AXPY(TN, T, 2) GV_AXPY(TN, T, 4) GV_AXPY(TN, T, 8)
GV_TYPES(GV_FAMILY)

typedef void (*gv_fn)(const gv_job *j, int64_t begin, int64_t end);

/* [dtype][form: dot, axpy][MP: 1, 2, 4, 8] */
#define GV_ROW(TN, T)                                        \
  {{dot_##TN##_1, dot_##TN##_2, dot_##TN##_4, dot_##TN##_8}, \
   {axpy_##TN##_1, axpy_##TN##_2, axpy_##TN##_4, axpy_##TN##_8}},
static const gv_fn gv_table[3][2][4] = {GV_TYPES(GV_ROW)};

typedef struct gv_task {
  const gv_job *j;
  gv_fn fn;
} gv_task;

static void gv_range(void *ctx, int64_t begin, int64_t end) {
  const gv_task *t = ctx;
  t->fn(t->j, begin, end);
}

static float load_one(cm_dtype dt, const char *p) {
  switch (dt) {
  case CM_FLOAT16: return S_f16(p);
  case CM_BFLOAT16: return S_bf16(p);
  default: return S_f32(p);
  }
}

static bool gv_usable(void) {
  const cm_cpu_flags *f = cm_cpu_features();
  return f->avx2 && f->fma && f->f16c;
}

int cm_cpu_gemv(cm_dtype dt, int64_t M, int64_t N, int64_t K, float alpha, cm_gemv_mat a,
                cm_gemv_mat b, void *out, int64_t ors, int64_t ocs, float beta) {
  int ti = dt == CM_FLOAT32 ? 0 : dt == CM_FLOAT16 ? 1 : dt == CM_BFLOAT16 ? 2 : -1;
  if (ti < 0 || M <= 0 || N <= 0 || K <= 0 || !gv_usable()) return 0;
  if (M > CM_GEMV_MAX_ROWS) {
    if (N > CM_GEMV_MAX_ROWS) return 0;
    /* out^T = B^T @ A^T: the few columns become the few rows */
    cm_gemv_mat at = {b.ptr, b.cs, b.rs}, bt = {a.ptr, a.cs, a.rs};
    int64_t t = M;
    M = N, N = t;
    a = at, b = bt;
    t = ors, ors = ocs, ocs = t;
  }
  int form = b.rs == 1 || K == 1 ? 0 : b.cs == 1 || N == 1 ? 1 : -1;
  if (form < 0) return 0;
  int mi = M == 1 ? 0 : M == 2 ? 1 : M <= 4 ? 2 : 3;
  int64_t MP = (int64_t)1 << mi;
  size_t dsz = cm_dtype_size(dt);
  float *pa = calloc((size_t)(MP * K), sizeof(float));
  if (!pa) return cm_error(CM_ERR_MEMORY, "[matmul] Out of memory.");
  for (int64_t m = 0; m < M; m++)
    for (int64_t k = 0; k < K; k++)
      pa[m * K + k] = load_one(dt, (const char *)a.ptr + (m * a.rs + k * a.cs) * (int64_t)dsz);
  gv_job j = {.M = M,
              .MP = MP,
              .N = N,
              .K = K,
              .alpha = alpha,
              .beta = beta,
              .a = pa,
              .b = b.ptr,
              .bks = b.rs,
              .bns = b.cs,
              .out = out,
              .oms = ors,
              .ons = ocs};
  gv_task t = {&j, gv_table[ti][form][mi]};
  if (form == 0) {
    cm_parallel_for(N, cm_grain(K * MP), gv_range, &t);
  } else {
    /* blocks small enough to give every thread a few, wide enough to
     * stream long row segments */
    int64_t nb = N / (4 * (int64_t)cm_num_threads());
    nb = nb < 64 ? 64 : nb > GV_AXPY_BLOCK ? GV_AXPY_BLOCK : (nb + 7) & ~(int64_t)7;
    j.nb = nb;
    cm_parallel_for((N + nb - 1) / nb, 1, gv_range, &t);
  }
  free(pa);
  return 1;
}

#else
int cm_cpu_gemv(cm_dtype dt, int64_t M, int64_t N, int64_t K, float alpha, cm_gemv_mat a,
                cm_gemv_mat b, void *out, int64_t ors, int64_t ocs, float beta) {
  (void)dt, (void)M, (void)N, (void)K, (void)alpha, (void)a, (void)b, (void)out, (void)ors,
      (void)ocs, (void)beta;
  return 0;
}
#endif
