/* Sorting 32- and 64-bit unsigned keys with AVX-512 (512-bit vectors of 16
 * or 8 keys): a quicksort whose partition step compresses each vector's
 * keys to the two sides, down to ranges of 16 vectors that a bitonic
 * sorting network sorts in registers.  It touches memory in sequence,
 * which on the machines measured beat the radix sort's scattered writes
 * about threefold.
 *
 * The keys carry everything the result depends on (sort.c makes them
 * unique where order among equals matters: index in the low bits), so the
 * order this sort leaves equal keys in is never visible: the result is
 * the one the portable radix sort gives, whatever the CPU and the number
 * of threads.  Chosen at run time by backend/cpu/sort_keys.c; the file is
 * empty on other compilers and architectures. */
#include "backend/cpu/sort_keys.h"

#if CM_SORT_HAVE_AVX512

#include <immintrin.h>
#include <stdbool.h>

#include "backend/cpu/cpu_features.h"

#define CM_CAT3_(a, b, c) a##b##c
#define CM_CAT3(a, b, c) CM_CAT3_(a, b, c)

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,popcnt"))), \
                             apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,popcnt")
#endif

typedef __m512i V;

/* Whether the compressing stores are fast (asked once per partition). */
static inline bool cstore_fast(void) { return cm_cpu_features()->fast_compress_store; }

/* One compare-exchange step of a network inside a vector: every lane meets
 * the lane that SWAP brings to it; the lanes set in M keep the larger.
 * Three instructions: the larger of each pair everywhere, then the
 * smaller where M is clear (a masked min), not min, max and a blend. */
#define CX(v, SWAP, MASK_MIN, MAX, MT_, M)                  \
  do {                                                       \
    V o_ = SWAP(v);                                          \
    v = MASK_MIN(MAX(v, o_), (MT_) ~(MT_)(M), v, o_);        \
  } while (0)

/* ---- 16 lanes of 32 bits.  The swaps exchange lane i with lane i ^ j. */
#define SW32_1(v) _mm512_shuffle_epi32(v, _MM_PERM_CDAB)
#define SW32_2(v) _mm512_shuffle_epi32(v, _MM_PERM_BADC)
#define SW32_4(v) _mm512_shuffle_i32x4(v, v, _MM_SHUFFLE(2, 3, 0, 1))
#define SW32_8(v) _mm512_shuffle_i32x4(v, v, _MM_SHUFFLE(1, 0, 3, 2))
#define CX32(v, J, M) CX(v, SW32_##J, _mm512_mask_min_epu32, _mm512_max_epu32, __mmask16, M)

/* Bitonic sort: stage k makes sorted blocks of k lanes, alternately
 * ascending and descending; a lane keeps the larger key when it is the
 * upper of its pair ((i & j) != 0) in an ascending block ((i & k) == 0),
 * or the lower in a descending one. */
static inline V sort_v32(V v) {
  CX32(v, 1, 0x6666);
  CX32(v, 2, 0x3C3C);
  CX32(v, 1, 0x5A5A);
  CX32(v, 4, 0x0FF0);
  CX32(v, 2, 0x33CC);
  CX32(v, 1, 0x55AA);
  CX32(v, 8, 0xFF00);
  CX32(v, 4, 0xF0F0);
  CX32(v, 2, 0xCCCC);
  CX32(v, 1, 0xAAAA);
  return v;
}

/* A bitonic vector to ascending: the last stage of sort_v32. */
static inline V merge_v32(V v) {
  CX32(v, 8, 0xFF00);
  CX32(v, 4, 0xF0F0);
  CX32(v, 2, 0xCCCC);
  CX32(v, 1, 0xAAAA);
  return v;
}

static inline V rev_v32(V v) {
  return _mm512_permutexvar_epi32(
      _mm512_set_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), v);
}

/* Keys back to values (fin: CM_KEY32_I32 or CM_KEY32_F32) */
static inline V fin_v32(V y, int fin) {
  const V sign = _mm512_set1_epi32((int)0x80000000u);
  if (fin == CM_KEY32_I32) return _mm512_xor_si512(y, sign);
  /* float: negative values had every bit inverted, the others the sign set */
  V neg = _mm512_andnot_si512(_mm512_srai_epi32(y, 31), _mm512_set1_epi32(-1));
  return _mm512_xor_si512(y, _mm512_or_si512(neg, sign));
}

#define S 32
#define KT uint32_t
#define V_FIN fin_v32
#define MT __mmask16
#define L 16
#define V_SORT sort_v32
#define V_MERGE merge_v32
#define V_REV rev_v32
#define V_MIN _mm512_min_epu32
#define V_MAX _mm512_max_epu32
#define V_CMPGE _mm512_cmpge_epu32_mask
#define V_COMPRESS _mm512_maskz_compress_epi32
#define V_CSTORE(p, k, v) _mm512_mask_compressstoreu_epi32((void *)(p), k, v)
#define V_SET1(x) _mm512_set1_epi32((int)(x))
#define V_LOADU(p) _mm512_loadu_si512((const void *)(p))
#define V_STOREU(p, v) _mm512_storeu_si512((void *)(p), v)
#define V_MLOAD(src, k, p) _mm512_mask_loadu_epi32(src, k, (const void *)(p))
#define V_MSTORE(p, k, v) _mm512_mask_storeu_epi32((void *)(p), k, v)
#include "backend/cpu/sort_avx512_impl.h"
#undef S
#undef KT
#undef MT
#undef L
#undef V_SORT
#undef V_MERGE
#undef V_REV
#undef V_MIN
#undef V_MAX
#undef V_CMPGE
#undef V_COMPRESS
#undef V_CSTORE
#undef V_SET1
#undef V_MLOAD
#undef V_MSTORE
#undef V_FIN

/* ---- 8 lanes of 64 bits. */
#define SW64_1(v) _mm512_shuffle_epi32(v, _MM_PERM_BADC)
#define SW64_2(v) _mm512_shuffle_i64x2(v, v, _MM_SHUFFLE(2, 3, 0, 1))
#define SW64_4(v) _mm512_shuffle_i64x2(v, v, _MM_SHUFFLE(1, 0, 3, 2))
#define CX64(v, J, M) CX(v, SW64_##J, _mm512_mask_min_epu64, _mm512_max_epu64, __mmask8, M)

static inline V sort_v64(V v) {
  CX64(v, 1, 0x66);
  CX64(v, 2, 0x3C);
  CX64(v, 1, 0x5A);
  CX64(v, 4, 0xF0);
  CX64(v, 2, 0xCC);
  CX64(v, 1, 0xAA);
  return v;
}

static inline V merge_v64(V v) {
  CX64(v, 4, 0xF0);
  CX64(v, 2, 0xCC);
  CX64(v, 1, 0xAA);
  return v;
}

static inline V rev_v64(V v) {
  return _mm512_permutexvar_epi64(_mm512_set_epi64(0, 1, 2, 3, 4, 5, 6, 7), v);
}

#define S 64
#define KT uint64_t
#define V_FIN(v, fin) ((void)(fin), (v))
#define MT __mmask8
#define L 8
#define V_SORT sort_v64
#define V_MERGE merge_v64
#define V_REV rev_v64
#define V_MIN _mm512_min_epu64
#define V_MAX _mm512_max_epu64
#define V_CMPGE _mm512_cmpge_epu64_mask
#define V_COMPRESS _mm512_maskz_compress_epi64
#define V_CSTORE(p, k, v) _mm512_mask_compressstoreu_epi64((void *)(p), k, v)
#define V_SET1(x) _mm512_set1_epi64((long long)(x))
#define V_MLOAD(src, k, p) _mm512_mask_loadu_epi64(src, k, (const void *)(p))
#define V_MSTORE(p, k, v) _mm512_mask_storeu_epi64((void *)(p), k, v)
#include "backend/cpu/sort_avx512_impl.h"

/* ---- entry points */

void cm_sort_avx512_u32(uint32_t *a, int64_t n, int fin) {
  qsort_32(a, n, depth_32(n), fin);
}

void cm_sort_avx512_u64(uint64_t *a, int64_t n) {
  qsort_64(a, n, depth_64(n), 0);
}

void cm_sort_avx512_select_u32(uint32_t *a, int64_t n, int64_t kth) {
  select_32(a, n, kth);
}

void cm_sort_avx512_select_u64(uint64_t *a, int64_t n, int64_t kth) {
  select_64(a, n, kth);
}

/* The split for sorting one long row on several threads: a pivot from a
 * larger sample (the median of 256 keys) so that the two sides come out
 * close in size.  Keys equal to a smallest pivot go left (as above). */
#define DEF_SPLIT(W, KT_)                                                        \
  int64_t cm_sort_avx512_split_u##W(KT_ *a, int64_t n) {                         \
    enum { M = 16 * (512 / W) };                                                 \
    KT_ s[M];                                                                    \
    for (int i = 0; i < M; i++) s[i] = a[(n - 1) * (2 * i + 1) / (2 * M)];      \
    small_##W(s, M, 0);                                                          \
    KT_ p = s[M / 2];                                                            \
    int64_t nl = part_##W(a, n, p);                                              \
    if (nl == 0 && p != (KT_)~(KT_)0) nl = part_##W(a, n, p + 1);                \
    return nl;                                                                   \
  }
DEF_SPLIT(32, uint32_t)
DEF_SPLIT(64, uint64_t)

/* ---- few distinct keys */

/* Raw 32-bit values to keys (kind: CM_KEY32_*); NaN and -0.0 go to *bad:
 * each is a key of several values. */
static inline V few_key(V x, int kind, __mmask16 m, __mmask16 *bad) {
  const V sign = _mm512_set1_epi32((int)0x80000000u);
  if (kind == CM_KEY32_I32) return _mm512_xor_si512(x, sign);
  if (kind != CM_KEY32_F32) return x;
  V mag = _mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff));
  *bad |= (__mmask16)(_mm512_mask_cmpgt_epu32_mask(m, mag, _mm512_set1_epi32(0x7f800000)) |
                      _mm512_mask_cmpeq_epu32_mask(m, x, sign));
  return _mm512_xor_si512(x, _mm512_or_si512(_mm512_srai_epi32(x, 31), sign));
}

/* The ranks of 16 keys among the sorted keys in (lo, hi): a binary search
 * per lane, steps from top down, each looking up t[pos + step - 1] in
 * the two registers; the lanes whose key is not t[rank] go to *miss. */
static inline __attribute__((always_inline)) V few_rank(V x, V lo, V hi, int top, __mmask16 m,
                                                        __mmask16 *miss) {
  V pos = _mm512_setzero_si512();
  for (int step = top; step > 0; step /= 2) {
    V y = _mm512_permutex2var_epi32(lo, _mm512_add_epi32(pos, _mm512_set1_epi32(step - 1)), hi);
    pos = _mm512_mask_add_epi32(pos, _mm512_cmpgt_epu32_mask(x, y), pos, _mm512_set1_epi32(step));
  }
  *miss |= _mm512_mask_cmpneq_epu32_mask(m, x, _mm512_permutex2var_epi32(lo, pos, hi));
  return pos;
}

/* 64 keys a step: ranks found as dwords, packed to bytes, and counted
 * with one byte comparison per distinct key.  top is a constant where
 * this is inlined, so the search is unrolled. */
static inline __attribute__((always_inline)) bool few_pass(const uint32_t *k, int64_t n,
                                                           int kind, V lo, V hi, int top, int d,
                                                           uint8_t *rank, int64_t *cnt) {
  for (int64_t i = 0; i < n; i += 64) {
    __mmask16 miss = 0, bad = 0;
    V r[4];
#pragma GCC unroll 4
    for (int q = 0; q < 4; q++) {
      int64_t left = n - i - 16 * q;
      __mmask16 m = left >= 16 ? (__mmask16)0xFFFF : left > 0 ? (__mmask16)((1u << left) - 1) : 0;
      V x = few_key(_mm512_maskz_loadu_epi32(m, (const void *)(k + i + 16 * q)), kind, m, &bad);
      r[q] = few_rank(x, lo, hi, top, m, &miss);
    }
    if (miss | bad) return false;
    V b = _mm512_castsi128_si512(_mm512_cvtepi32_epi8(r[0]));
    b = _mm512_inserti32x4(b, _mm512_cvtepi32_epi8(r[1]), 1);
    b = _mm512_inserti32x4(b, _mm512_cvtepi32_epi8(r[2]), 2);
    b = _mm512_inserti32x4(b, _mm512_cvtepi32_epi8(r[3]), 3);
    __mmask64 v = n - i >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << (n - i)) - 1;
    if (rank) _mm512_mask_storeu_epi8(rank + i, v, b);
    for (int j = 0; j < d; j++)
      cnt[j] += __builtin_popcountll(_mm512_mask_cmpeq_epi8_mask(v, b, _mm512_set1_epi8((char)j)));
  }
  return true;
}

bool cm_sort_avx512_rank_u32(const uint32_t *k, int64_t n, int kind, const uint32_t *t, int d,
                             uint8_t *rank, int64_t *cnt) {
  const V lo = _mm512_loadu_si512((const void *)t), hi = _mm512_loadu_si512((const void *)(t + 16));
  for (int j = 0; j < d; j++) cnt[j] = 0;
  if (d <= 1) return few_pass(k, n, kind, lo, hi, 0, d, rank, cnt);
  if (d <= 2) return few_pass(k, n, kind, lo, hi, 1, d, rank, cnt);
  if (d <= 4) return few_pass(k, n, kind, lo, hi, 2, d, rank, cnt);
  if (d <= 8) return few_pass(k, n, kind, lo, hi, 4, d, rank, cnt);
  if (d <= 16) return few_pass(k, n, kind, lo, hi, 8, d, rank, cnt);
  return few_pass(k, n, kind, lo, hi, 16, d, rank, cnt);
}

/* ---- rows in order */

/* Raw values to keys with NaN and -0.0 mapped as sort.c maps them (the
 * NaN key all ones, -0.0 the key of 0.0). */
static inline V raw_key(V x, int kind) {
  const V sign = _mm512_set1_epi32((int)0x80000000u);
  if (kind == CM_KEY32_I32) return _mm512_xor_si512(x, sign);
  if (kind != CM_KEY32_F32) return x;
  V f = _mm512_xor_si512(x, _mm512_or_si512(_mm512_srai_epi32(x, 31), sign));
  f = _mm512_mask_add_epi32(f, _mm512_cmpeq_epu32_mask(x, sign), f, _mm512_set1_epi32(1));
  __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(x, _mm512_set1_epi32(0x7fffffff)),
                                          _mm512_set1_epi32(0x7f800000));
  return _mm512_mask_mov_epi32(f, nan, _mm512_set1_epi32(-1));
}

/* How far from i a raw row keeps rising (up) or falling: the first index
 * of a 16-key step where it stops, for the caller to finish key by key;
 * falling also notes equal keys of different values side by side. */
int64_t cm_sort_avx512_run_u32(const uint32_t *s, int64_t n, int64_t i, int kind, bool up,
                               bool *mixed) {
  __mmask16 mix = 0;
  for (; i + 16 <= n; i += 16) {
    V x = _mm512_loadu_si512((const void *)(s + i - 1));
    V y = _mm512_loadu_si512((const void *)(s + i));
    V kx = raw_key(x, kind), ky = raw_key(y, kind);
    if (up ? _mm512_cmpgt_epu32_mask(kx, ky) : _mm512_cmplt_epu32_mask(kx, ky)) break;
    if (!up) mix |= _mm512_mask_cmpneq_epu32_mask(_mm512_cmpeq_epu32_mask(kx, ky), x, y);
  }
  if (mix) *mixed = true;
  return i;
}

void cm_sort_avx512_reverse_u32(const uint32_t *src, uint32_t *dst, int64_t n) {
  const V r = _mm512_set_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    V x = _mm512_loadu_si512((const void *)(src + n - 16 - i));
    _mm512_storeu_si512((void *)(dst + i), _mm512_permutexvar_epi32(r, x));
  }
  for (; i < n; i++) dst[i] = src[n - 1 - i];
}

/* ---- argpartition */

static inline void store_positions(uint32_t *d, __mmask16 m, V pos, bool cs) {
  if (cs) _mm512_mask_compressstoreu_epi32((void *)d, m, pos);
  else
    _mm512_mask_storeu_epi32((void *)d, (__mmask16)((1u << __builtin_popcount(m)) - 1),
                             _mm512_maskz_compress_epi32(m, pos));
}

/* Two passes over the keys: count those < p and == p, then write the
 * positions of each class to its own run, in order. */
void cm_sort_avx512_argpart_u32(const uint32_t *k, int64_t n, uint32_t pk, uint32_t *idx) {
  const V p = _mm512_set1_epi32((int)pk);
  const bool cs = cstore_fast();
  int64_t nlt = 0, neq = 0;
  for (int64_t i = 0; i < n; i += 16) {
    int64_t left = n - i;
    __mmask16 m = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
    V x = _mm512_maskz_loadu_epi32(m, (const void *)(k + i));
    nlt += __builtin_popcount(_mm512_mask_cmplt_epu32_mask(m, x, p));
    neq += __builtin_popcount(_mm512_mask_cmpeq_epu32_mask(m, x, p));
  }
  int64_t a = 0, b = nlt, c = nlt + neq;
  V pos = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  const V step = _mm512_set1_epi32(16);
  for (int64_t i = 0; i < n; i += 16, pos = _mm512_add_epi32(pos, step)) {
    int64_t left = n - i;
    __mmask16 m = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
    V x = _mm512_maskz_loadu_epi32(m, (const void *)(k + i));
    __mmask16 lt = _mm512_mask_cmplt_epu32_mask(m, x, p);
    __mmask16 eq = _mm512_mask_cmpeq_epu32_mask(m, x, p);
    __mmask16 gt = (__mmask16)(m & ~(lt | eq));
    store_positions(idx + a, lt, pos, cs);
    store_positions(idx + b, eq, pos, cs);
    store_positions(idx + c, gt, pos, cs);
    a += __builtin_popcount(lt), b += __builtin_popcount(eq), c += __builtin_popcount(gt);
  }
}

/* A short row read as raw values, sorted in registers and stored as
 * values: one pass. */
static inline __attribute__((always_inline)) bool small_from_m(const uint32_t *src,
                                                               uint32_t *dst, int64_t n, int kind,
                                                               int m) {
  V v[16];
  __mmask16 bad = 0;
  const V pad = _mm512_set1_epi32(-1);
#pragma GCC unroll 16
  for (int i = 0; i < m; i++) {
    int64_t left = n - (int64_t)i * 16;
    __mmask16 k = left >= 16 ? (__mmask16)0xFFFF : left > 0 ? (__mmask16)((1u << left) - 1) : 0;
    V x = few_key(_mm512_maskz_loadu_epi32(k, (const void *)(src + i * 16)), kind, k, &bad);
    v[i] = _mm512_mask_mov_epi32(pad, k, x);
  }
  if (bad) return false;
  net_32(v, m, (int)((n + 15) / 16));
#pragma GCC unroll 16
  for (int i = 0; i < m; i++) {
    int64_t left = n - (int64_t)i * 16;
    __mmask16 k = left >= 16 ? (__mmask16)0xFFFF : left > 0 ? (__mmask16)((1u << left) - 1) : 0;
    _mm512_mask_storeu_epi32((void *)(dst + i * 16), k, kind ? fin_v32(v[i], kind) : v[i]);
  }
  return true;
}

bool cm_sort_avx512_small_from_u32(const uint32_t *src, uint32_t *dst, int64_t n, int kind) {
  if (n <= 16) return small_from_m(src, dst, n, kind, 1);
  if (n <= 32) return small_from_m(src, dst, n, kind, 2);
  if (n <= 64) return small_from_m(src, dst, n, kind, 4);
  if (n <= 128) return small_from_m(src, dst, n, kind, 8);
  return small_from_m(src, dst, n, kind, 16);
}

/* Out of place, so the room the in-place partition keeps is not needed:
 * keys < p from the left of dst, the others from the right.  Only the last
 * vector is partial; *bad collects NaN and -0.0. */
static inline __attribute__((always_inline)) int64_t split_from(const uint32_t *src,
                                                                uint32_t *dst, int64_t n,
                                                                int kind, V p, bool cs,
                                                                __mmask16 *bad) {
  int64_t ls = 0, rs = n;
  for (int64_t i = 0; i < n; i += 16) {
    int64_t left = n - i;
    __mmask16 m = left >= 16 ? (__mmask16)0xFFFF : (__mmask16)((1u << left) - 1);
    V x = few_key(_mm512_maskz_loadu_epi32(m, (const void *)(src + i)), kind, m, bad);
    __mmask16 ge = _mm512_mask_cmpge_epu32_mask(m, x, p), lt = (__mmask16)(~ge & m);
    int nr = __builtin_popcount(ge), nl = __builtin_popcount(m) - nr;
    if (cs) {
      _mm512_mask_compressstoreu_epi32((void *)(dst + ls), lt, x);
      _mm512_mask_compressstoreu_epi32((void *)(dst + rs - nr), ge, x);
    } else {
      _mm512_mask_storeu_epi32((void *)(dst + ls), (__mmask16)((1u << nl) - 1),
                               _mm512_maskz_compress_epi32(lt, x));
      _mm512_mask_storeu_epi32((void *)(dst + rs - nr), (__mmask16)((1u << nr) - 1),
                               _mm512_maskz_compress_epi32(ge, x));
    }
    ls += nl;
    rs -= nr;
  }
  return ls;
}

int64_t cm_sort_avx512_split_from_u32(const uint32_t *src, uint32_t *dst, int64_t n, int kind) {
  /* the pivot: from 256 keys for a long row, whose parts go to threads;
   * from 16 for a short one, where sorting 256 would cost much */
  uint32_t s[256];
  int m = n >= (1 << 16) ? 256 : 16;
  if (m == 256) /* constant divisors: no division instruction per sample */
    for (int i = 0; i < 256; i++) s[i] = src[(n - 1) * (2 * i + 1) / 512];
  else
    for (int i = 0; i < 16; i++) s[i] = src[(n - 1) * (2 * i + 1) / 32];
  __mmask16 bad = 0;
  for (int i = 0; i < m; i += 16)
    _mm512_storeu_si512((void *)(s + i),
                        few_key(_mm512_loadu_si512((const void *)(s + i)), kind, 0xFFFF, &bad));
  if (bad) return -1;
  small_32(s, m, 0);
  const V p = _mm512_set1_epi32((int)s[m / 2]);
  int64_t ls = cstore_fast() ? split_from(src, dst, n, kind, p, true, &bad)
                                     : split_from(src, dst, n, kind, p, false, &bad);
  return bad ? -1 : ls;
}

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#else
typedef int cm_sort_avx512_unused; /* ISO C wants a declaration per file */
#endif
