/* The portable key sorts, one set per key width (8, 16, 32, 64 bits):
 *   LSD radix sort over bytes, stable, so the positions carried along in v
 *   stay in order among equal keys; byte positions in which all keys agree
 *   are skipped (few distinct values cost few passes); insertion sort for
 *   short rows;
 *   the same radix sort cut over the thread pool, for rows too long to
 *   leave to one thread;
 *   quickselect (Hoare partition around a median of three) for partition,
 *   falling back to the radix sort when it recurses too deep, so it is
 *   never quadratic.
 * They serve every machine; backend/cpu/sort_keys.c prefers the AVX-512
 * sorts where the CPU has them, which give the same results. */
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/sort_keys.h"
#include "core/threadpool.h"

/* Rows at most this long are insertion-sorted. */
#define SMALL_ROW 24


#define DEF_SORTS(W, KT)                                                                   \
  static void isort_##W(KT *k, uint32_t *v, int64_t n) {                                   \
    for (int64_t i = 1; i < n; i++) {                                                      \
      KT x = k[i];                                                                         \
      int64_t j = i;                                                                       \
      if (v) {                                                                             \
        uint32_t y = v[i];                                                                 \
        for (; j > 0 && k[j - 1] > x; j--) k[j] = k[j - 1], v[j] = v[j - 1];               \
        v[j] = y;                                                                          \
      } else {                                                                             \
        for (; j > 0 && k[j - 1] > x; j--) k[j] = k[j - 1];                                \
      }                                                                                    \
      k[j] = x;                                                                            \
    }                                                                                      \
  }                                                                                        \
  static void radix_##W(KT *k, KT *kt, uint32_t *v, uint32_t *vt, int64_t n) {             \
    enum { NB = (int)sizeof(KT) };                                                         \
    uint32_t hist[NB][256]; /* every byte's counts, from one pass */                       \
    memset(hist, 0, sizeof hist);                                                          \
    for (int64_t i = 0; i < n; i++) {                                                      \
      KT x = k[i];                                                                         \
      for (int b = 0; b < NB; b++) hist[b][(x >> (8 * b)) & 0xff]++;                      \
    }                                                                                      \
    KT *src = k, *dst = kt;                                                                \
    uint32_t *vs = v, *vd = vt;                                                            \
    for (int b = 0; b < NB; b++) {                                                         \
      uint32_t *h = hist[b];                                                               \
      if (h[(src[0] >> (8 * b)) & 0xff] == (uint32_t)n) continue; /* all agree */          \
      uint32_t sum = 0;                                                                    \
      for (int d = 0; d < 256; d++) {                                                      \
        uint32_t c = h[d];                                                                 \
        h[d] = sum;                                                                        \
        sum += c;                                                                          \
      }                                                                                    \
      if (vs) {                                                                            \
        for (int64_t i = 0; i < n; i++) {                                                  \
          uint32_t p = h[(src[i] >> (8 * b)) & 0xff]++;                                    \
          dst[p] = src[i];                                                                 \
          vd[p] = vs[i];                                                                   \
        }                                                                                  \
        uint32_t *t = vs;                                                                  \
        vs = vd, vd = t;                                                                   \
      } else {                                                                             \
        for (int64_t i = 0; i < n; i++) dst[h[(src[i] >> (8 * b)) & 0xff]++] = src[i];     \
      }                                                                                    \
      KT *t = src;                                                                         \
      src = dst, dst = t;                                                                  \
    }                                                                                      \
    if (src != k) {                                                                        \
      memcpy(k, src, (size_t)n * sizeof(KT));                                              \
      if (v) memcpy(v, vs, (size_t)n * sizeof(uint32_t));                                  \
    }                                                                                      \
  }                                                                                        \
  static void sort_##W(KT *k, KT *kt, uint32_t *v, uint32_t *vt, int64_t n) {              \
    if (n <= SMALL_ROW) isort_##W(k, v, n);                                                \
    else radix_##W(k, kt, v, vt, n);                                                       \
  }                                                                                        \
  static void select_##W(KT *k, KT *kt, uint32_t *v, uint32_t *vt, int64_t n, int64_t kth) { \
    int64_t lo = 0, hi = n;                                                                \
    int depth = 16;                                                                        \
    for (int64_t m = n; m > 1; m >>= 1) depth += 2;                                        \
    while (hi - lo > SMALL_ROW) {                                                          \
      if (depth-- == 0) {                                                                  \
        radix_##W(k + lo, kt, v ? v + lo : NULL, vt, hi - lo);                             \
        return;                                                                            \
      }                                                                                    \
      KT a = k[lo], b = k[lo + (hi - lo) / 2], c = k[hi - 1];                              \
      KT p = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));        \
      int64_t i = lo - 1, j = hi;                                                          \
      for (;;) {                                                                           \
        do i++; while (k[i] < p);                                                          \
        do j--; while (k[j] > p);                                                          \
        if (i >= j) break;                                                                 \
        KT t = k[i];                                                                       \
        k[i] = k[j], k[j] = t;                                                             \
        if (v) {                                                                           \
          uint32_t u = v[i];                                                               \
          v[i] = v[j], v[j] = u;                                                           \
        }                                                                                  \
      }                                                                                    \
      /* [lo, j] <= p <= [j + 1, hi) */                                                    \
      if (kth <= j) hi = j + 1;                                                            \
      else lo = j + 1;                                                                     \
    }                                                                                      \
    isort_##W(k + lo, v ? v + lo : NULL, hi - lo);                                         \
  }

DEF_SORTS(8, uint8_t)
DEF_SORTS(16, uint16_t)
DEF_SORTS(32, uint32_t)
DEF_SORTS(64, uint64_t)

/* Parallel LSD radix sort, for rows too long to leave to one thread: the
 * row is cut into T slices; for each byte, every slice counts its digits,
 * the counts give each (slice, digit) pair its first output position, and
 * each slice scatters its own elements in order, so the sort stays stable. */
#define PAR_MAX_SLICES 64
typedef struct pradix {
  int64_t n;
  int T, shift;
  void *src, *dst;
  uint32_t *vs, *vd;
  uint32_t (*cnt)[256]; /* T rows of counts, then offsets */
} pradix;

#define DEF_PRADIX(W, KT)                                                     \
  static void pcount_##W(void *ctx, int64_t b, int64_t e) {                   \
    pradix *r = ctx;                                                          \
    const KT *s = r->src;                                                     \
    for (int64_t t = b; t < e; t++) {                                         \
      uint32_t *c = r->cnt[t];                                                \
      memset(c, 0, 256 * sizeof *c);                                          \
      for (int64_t i = r->n * t / r->T; i < r->n * (t + 1) / r->T; i++)       \
        c[(s[i] >> r->shift) & 0xff]++;                                       \
    }                                                                         \
  }                                                                           \
  static void pscatter_##W(void *ctx, int64_t b, int64_t e) {                 \
    pradix *r = ctx;                                                          \
    const KT *s = r->src;                                                     \
    KT *d = r->dst;                                                           \
    for (int64_t t = b; t < e; t++) {                                         \
      uint32_t *o = r->cnt[t];                                                \
      int64_t lo = r->n * t / r->T, hi = r->n * (t + 1) / r->T;               \
      if (r->vs) {                                                            \
        for (int64_t i = lo; i < hi; i++) {                                   \
          uint32_t p = o[(s[i] >> r->shift) & 0xff]++;                        \
          d[p] = s[i];                                                        \
          r->vd[p] = r->vs[i];                                                \
        }                                                                     \
      } else {                                                                \
        for (int64_t i = lo; i < hi; i++) d[o[(s[i] >> r->shift) & 0xff]++] = s[i]; \
      }                                                                       \
    }                                                                         \
  }
DEF_PRADIX(8, uint8_t)
DEF_PRADIX(16, uint16_t)
DEF_PRADIX(32, uint32_t)
DEF_PRADIX(64, uint64_t)

void cm_radix_sort_par(int width, void *k, void *kt, uint32_t *v, uint32_t *vt, int64_t n) {
  int T = cm_num_threads();
  if (T > PAR_MAX_SLICES) T = PAR_MAX_SLICES;
  uint32_t(*cnt)[256] = T > 1 ? malloc((size_t)T * sizeof *cnt) : NULL;
  if (!cnt) {
    cm_radix_sort(width, k, kt, v, vt, n);
    return;
  }
  cm_range_fn count = width == 1   ? pcount_8
                      : width == 2 ? pcount_16
                      : width == 4 ? pcount_32
                                   : pcount_64;
  cm_range_fn scatter = width == 1   ? pscatter_8
                        : width == 2 ? pscatter_16
                        : width == 4 ? pscatter_32
                                     : pscatter_64;
  pradix r = {.n = n, .T = T, .src = k, .dst = kt, .vs = v, .vd = v ? vt : NULL, .cnt = cnt};
  for (int b = 0; b < width; b++) {
    r.shift = 8 * b;
    cm_parallel_for(T, 1, count, &r);
    bool trivial = false; /* every key has the same byte here: nothing moves */
    uint32_t run = 0;
    for (int d = 0; d < 256; d++) {
      uint64_t tot = 0;
      for (int t = 0; t < T; t++) {
        uint32_t c = cnt[t][d];
        cnt[t][d] = run;
        run += c;
        tot += c;
      }
      if (tot == (uint64_t)n) trivial = true;
    }
    if (trivial) continue;
    cm_parallel_for(T, 1, scatter, &r);
    void *t = r.src;
    r.src = r.dst, r.dst = t;
    uint32_t *u = r.vs;
    r.vs = r.vd, r.vd = u;
  }
  if (r.src != k) {
    memcpy(k, r.src, (size_t)n * (size_t)width);
    if (v) memcpy(v, r.vs, (size_t)n * sizeof(uint32_t));
  }
  free(cnt);
}

void cm_radix_sort(int width, void *k, void *kt, uint32_t *v, uint32_t *vt, int64_t n) {
  switch (width) {
  case 1: sort_8(k, kt, v, vt, n); break;
  case 2: sort_16(k, kt, v, vt, n); break;
  case 4: sort_32(k, kt, v, vt, n); break;
  default: sort_64(k, kt, v, vt, n); break;
  }
}

void cm_radix_select(int width, void *k, void *kt, uint32_t *v, uint32_t *vt, int64_t n,
                     int64_t kth) {
  switch (width) {
  case 1: select_8(k, kt, v, vt, n, kth); break;
  case 2: select_16(k, kt, v, vt, n, kth); break;
  case 4: select_32(k, kt, v, vt, n, kth); break;
  default: select_64(k, kt, v, vt, n, kth); break;
  }
}
