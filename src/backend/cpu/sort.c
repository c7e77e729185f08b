/* Sorting on the CPU.
 *
 * Every dtype is mapped to unsigned integer keys whose plain unsigned
 * order is MLX's order, so one set of key sorts (per key width: 8, 16, 32
 * and 64 bits) serves all fourteen dtypes:
 *   bool, unsigned    the value itself
 *   signed            the value with its sign bit flipped
 *   floats            the IEEE flip (negative: all bits inverted; positive:
 *                     sign bit set), after mapping -0.0 to +0.0 (MLX treats
 *                     them as equal) and every NaN to the all-ones key
 *                     (NaN sorts last, all NaNs equal)
 *   complex64         (key of real part) << 32 | key of imaginary part:
 *                     lexicographic; a NaN in either part gives all ones.
 * Keys of finite values convert back exactly.  A row holding -0.0 or a NaN
 * ("special") cannot be rebuilt from its keys (the sign of zero, the NaN
 * payload), so there a values op sorts indices instead and gathers the
 * original elements, which also keeps equal zeros in their stable order.
 *
 * Sorts: LSD radix sort over bytes (stable, so argsort carries the index
 * along and stays stable), skipping the byte positions in which all keys
 * agree; insertion sort for short rows.  Partition: quickselect (Hoare
 * partition around a median of three) that falls back to the radix sort
 * when it recurses too deep, so it is never quadratic.
 *
 * Rows (the lines along the sorted axis) are spread over the thread pool;
 * each thread gathers its row into a contiguous key buffer, sorts it and
 * writes it out, so input and output may have any strides. */
#include "backend/cpu/sort.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/strided.h"
#include "backend/cpu/types.h"
#include "core/threadpool.h"
#include "primitives/sort.h"

/* Rows at most this long are insertion-sorted. */
#define SMALL_ROW 24
/* Rows at least this long may be sorted by several threads together. */
#define PAR_MIN_ROW (1 << 16)
#define PAR_MIN_THREADS 4

/* ------------------------------------------------------------------ */
/* Keys */

#define FLIP(KT, b, SIGN) (((b) & (SIGN)) ? (KT)~(b) : (KT)((b) | (SIGN)))
#define UNFLIP(KT, k, SIGN) (((k) & (SIGN)) ? (KT)((k) ^ (SIGN)) : (KT)~(k))

/* Float bits -> key; NaN and -0.0 set *sp. */
#define FLOAT_KEY(KT, b, SIGN, EXPMASK, sp)                             \
  (((b) & (KT) ~(SIGN)) > (EXPMASK) ? (*(sp) = true, (KT)~(KT)0)        \
   : (b) == (SIGN)                  ? (*(sp) = true, (KT)(SIGN))        \
                                    : FLIP(KT, b, SIGN))

static inline uint16_t key16f(uint16_t b, uint16_t expmask, bool *sp) {
  return FLOAT_KEY(uint16_t, b, (uint16_t)0x8000u, expmask, sp);
}
static inline uint32_t key32f(uint32_t b, bool *sp) {
  return FLOAT_KEY(uint32_t, b, 0x80000000u, 0x7f800000u, sp);
}
static inline uint64_t key64f(uint64_t b, bool *sp) {
  return FLOAT_KEY(uint64_t, b, 0x8000000000000000ull, 0x7ff0000000000000ull, sp);
}
static inline uint64_t key_c64(uint64_t b, bool *sp) {
  bool nan = false;
  uint32_t re = key32f((uint32_t)b, &nan), im = key32f((uint32_t)(b >> 32), &nan);
  if (nan) *sp = true;
  if (re == UINT32_MAX || im == UINT32_MAX) return UINT64_MAX;
  return (uint64_t)re << 32 | im;
}

/* Gather n strided elements as keys; returns whether the row is special. */
typedef bool (*load_fn)(void *keys, const char *src, int64_t stride, int64_t n);
/* Write n keys back as values (rows without specials only). */
typedef void (*store_fn)(char *dst, int64_t stride, const void *keys, int64_t n);

#define DEF_KEYS(SFX, T, KT, KEY, VAL)                                                \
  static bool load_##SFX(void *keys, const char *src, int64_t st, int64_t n) {        \
    const T *s = (const T *)src;                                                      \
    KT *k = keys;                                                                     \
    bool sp = false, *spp = &sp;                                                      \
    (void)spp;                                                                        \
    for (int64_t i = 0; i < n; i++) {                                                 \
      T x = s[i * st];                                                                \
      k[i] = KEY;                                                                     \
    }                                                                                 \
    return sp;                                                                        \
  }                                                                                   \
  static void store_##SFX(char *dst, int64_t st, const void *keys, int64_t n) {       \
    T *d = (T *)dst;                                                                  \
    const KT *k = keys;                                                               \
    for (int64_t i = 0; i < n; i++) {                                                 \
      KT y = k[i];                                                                    \
      d[i * st] = VAL;                                                                \
    }                                                                                 \
  }

/* Storage types: halves, floats and complex are handled as their bits. */
DEF_KEYS(b8, uint8_t, uint8_t, (uint8_t)(x != 0), y)
DEF_KEYS(u8, uint8_t, uint8_t, x, y)
DEF_KEYS(i8, uint8_t, uint8_t, (uint8_t)(x ^ 0x80u), (uint8_t)(y ^ 0x80u))
DEF_KEYS(u16, uint16_t, uint16_t, x, y)
DEF_KEYS(i16, uint16_t, uint16_t, (uint16_t)(x ^ 0x8000u), (uint16_t)(y ^ 0x8000u))
DEF_KEYS(u32, uint32_t, uint32_t, x, y)
DEF_KEYS(i32, uint32_t, uint32_t, x ^ 0x80000000u, y ^ 0x80000000u)
DEF_KEYS(u64, uint64_t, uint64_t, x, y)
DEF_KEYS(i64, uint64_t, uint64_t, x ^ 0x8000000000000000ull, y ^ 0x8000000000000000ull)
DEF_KEYS(f16, uint16_t, uint16_t, key16f(x, 0x7c00u, spp), UNFLIP(uint16_t, y, 0x8000u))
DEF_KEYS(bf16, uint16_t, uint16_t, key16f(x, 0x7f80u, spp), UNFLIP(uint16_t, y, 0x8000u))
DEF_KEYS(f32, uint32_t, uint32_t, key32f(x, spp), UNFLIP(uint32_t, y, 0x80000000u))
DEF_KEYS(f64, uint64_t, uint64_t, key64f(x, spp),
         UNFLIP(uint64_t, y, 0x8000000000000000ull))
DEF_KEYS(c64, uint64_t, uint64_t, key_c64(x, spp),
         (uint64_t)UNFLIP(uint32_t, (uint32_t)(y >> 32), 0x80000000u) |
             (uint64_t)UNFLIP(uint32_t, (uint32_t)y, 0x80000000u) << 32)

static const struct key_kind {
  load_fn load;
  store_fn store;
  int width; /* key bytes: 1, 2, 4, 8 */
} kinds[CM_NUM_DTYPES] = {
    [CM_BOOL] = {load_b8, store_b8, 1},       [CM_UINT8] = {load_u8, store_u8, 1},
    [CM_UINT16] = {load_u16, store_u16, 2},   [CM_UINT32] = {load_u32, store_u32, 4},
    [CM_UINT64] = {load_u64, store_u64, 8},   [CM_INT8] = {load_i8, store_i8, 1},
    [CM_INT16] = {load_i16, store_i16, 2},    [CM_INT32] = {load_i32, store_i32, 4},
    [CM_INT64] = {load_i64, store_i64, 8},    [CM_FLOAT16] = {load_f16, store_f16, 2},
    [CM_FLOAT32] = {load_f32, store_f32, 4},  [CM_FLOAT64] = {load_f64, store_f64, 8},
    [CM_BFLOAT16] = {load_bf16, store_bf16, 2}, [CM_COMPLEX64] = {load_c64, store_c64, 8},
};

/* ------------------------------------------------------------------ */
/* Key sorts, one set per key width.  v (the original positions) may be
 * NULL when only the values are wanted; kt and vt are scratch of n. */

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

static void sort_keys(int width, void *k, void *kt, uint32_t *v, uint32_t *vt, int64_t n);

static void par_radix(int width, void *k, void *kt, uint32_t *v, uint32_t *vt, int64_t n) {
  int T = cm_num_threads();
  if (T > PAR_MAX_SLICES) T = PAR_MAX_SLICES;
  uint32_t(*cnt)[256] = T > 1 ? malloc((size_t)T * sizeof *cnt) : NULL;
  if (!cnt) {
    sort_keys(width, k, kt, v, vt, n);
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

static void sort_keys(int width, void *k, void *kt, uint32_t *v, uint32_t *vt, int64_t n) {
  switch (width) {
  case 1: sort_8(k, kt, v, vt, n); break;
  case 2: sort_16(k, kt, v, vt, n); break;
  case 4: sort_32(k, kt, v, vt, n); break;
  default: sort_64(k, kt, v, vt, n); break;
  }
}

static void select_keys(int width, void *k, void *kt, uint32_t *v, uint32_t *vt, int64_t n,
                        int64_t kth) {
  switch (width) {
  case 1: select_8(k, kt, v, vt, n, kth); break;
  case 2: select_16(k, kt, v, vt, n, kth); break;
  case 4: select_32(k, kt, v, vt, n, kth); break;
  default: select_64(k, kt, v, vt, n, kth); break;
  }
}

/* ------------------------------------------------------------------ */
/* Driver: one row per sorted line. */

typedef struct sort_job {
  cm_sort_op op;
  int64_t n, kth;
  const char *src;
  char *dst;
  cm_dtype dt;
  size_t isz;      /* input element size */
  size_t osz;      /* output element size */
  int64_t sst, dst_st; /* strides along the axis (elements) */
  cm_layout L;     /* the other axes: operand 0 = input, 1 = output */
  bool par;        /* few long rows: sort each with the parallel radix */
  atomic_int oom;
} sort_job;

static void sort_one(sort_job *j, const char *src, char *dst, void *k, void *kt, uint32_t *v,
                     uint32_t *vt) {
  const struct key_kind *kk = &kinds[j->dt];
  int64_t n = j->n;
  bool arg = cm_sort_op_indices(j->op);
  bool sp = kk->load(k, src, j->sst, n);
  uint32_t *idx = arg || sp ? v : NULL;
  if (idx)
    for (int64_t i = 0; i < n; i++) idx[i] = (uint32_t)i;
  if (cm_sort_op_full(j->op)) {
    if (j->par) par_radix(kk->width, k, kt, idx, vt, n);
    else sort_keys(kk->width, k, kt, idx, vt, n);
  }
  else select_keys(kk->width, k, kt, idx, vt, n, j->kth);
  if (arg) {
    uint32_t *d = (uint32_t *)dst;
    for (int64_t i = 0; i < n; i++) d[i * j->dst_st] = idx[i];
  } else if (sp) { /* gather the original elements through the permutation */
    for (int64_t i = 0; i < n; i++)
      memcpy(dst + i * j->dst_st * (int64_t)j->osz,
             src + (int64_t)idx[i] * j->sst * (int64_t)j->isz, j->isz);
  } else {
    kk->store(dst, j->dst_st, k, n);
  }
}

static void sort_lines(void *ctx, int64_t begin, int64_t end) {
  sort_job *j = ctx;
  int64_t n = j->n;
  size_t w = (size_t)kinds[j->dt].width;
  char *mem = malloc((size_t)n * (2 * w + 2 * sizeof(uint32_t)));
  if (!mem) {
    atomic_store(&j->oom, 1);
    return;
  }
  uint32_t *v = (uint32_t *)mem, *vt = v + n;
  char *k = (char *)(vt + n), *kt = k + (size_t)n * w;
  int64_t rl = cm_layout_row_len(&j->L);
  int64_t s0 = cm_layout_row_stride(&j->L, 0), s1 = cm_layout_row_stride(&j->L, 1);
  cm_row_cursor c;
  int64_t row = begin / rl, col = begin % rl;
  cm_row_cursor_seek(&c, &j->L, row);
  for (int64_t line = begin; line < end;) {
    for (; col < rl && line < end; col++, line++)
      sort_one(j, j->src + (c.offset[0] + col * s0) * (int64_t)j->isz,
               j->dst + (c.offset[1] + col * s1) * (int64_t)j->osz, k, kt, v, vt);
    col = 0;
    cm_row_cursor_next(&c);
  }
  free(mem);
}

int cm_cpu_sort(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin;
  const cm_sort_params *sp = (const cm_sort_params *)p;
  cm_array *a = in[0];
  if (cm_alloc_output(out)) return -1;
  if (out->size == 0) return 0;
  int ax = sp->axis;
  sort_job *j = malloc(sizeof *j);
  if (!j) return cm_error(CM_ERR_MEMORY, "[%s] Out of memory.", cm_sort_op_name(sp->op));
  j->op = sp->op;
  j->n = a->shape[ax];
  j->kth = sp->kth;
  j->src = cm_data(a);
  j->dst = cm_data(out);
  j->dt = a->dtype;
  j->isz = cm_itemsize(a);
  j->osz = cm_itemsize(out);
  j->sst = a->strides[ax];
  j->dst_st = out->strides[ax];
  atomic_init(&j->oom, 0);
  /* The lines: every axis but the sorted one. */
  int32_t shape[CM_MAX_DIMS];
  int64_t ist[CM_MAX_DIMS], ost[CM_MAX_DIMS];
  int nd = 0;
  for (int i = 0; i < a->ndim; i++) {
    if (i == ax) continue;
    shape[nd] = a->shape[i];
    ist[nd] = a->strides[i];
    ost[nd++] = out->strides[i];
  }
  const int64_t *strides[2] = {ist, ost};
  cm_layout_init(&j->L, nd, shape, 2, strides);
  int64_t lines = out->size / j->n;
  /* Fewer rows than threads, each long: parallelise inside the rows
   * (one at a time) instead of across them.  The parallel sort reads the
   * keys once more per byte (each slice recounts), so it only pays with
   * several cores: on 2 (loaded) cores it measured slower than one. */
  int threads = cm_num_threads();
  j->par = threads >= PAR_MIN_THREADS && lines < threads && j->n >= PAR_MIN_ROW &&
           cm_sort_op_full(j->op);
  if (j->par) sort_lines(j, 0, lines);
  else cm_parallel_for(lines, cm_grain(16 * j->n), sort_lines, j);
  int oom = atomic_load(&j->oom);
  free(j);
  if (oom) return cm_error(CM_ERR_MEMORY, "[%s] Out of memory.", cm_sort_op_name(sp->op));
  return 0;
}

/* ------------------------------------------------------------------ */
/* searchsorted: binary search of each value's key among the sequence's. */

typedef struct search_job {
  const void *keys; /* the sequence as keys */
  int64_t n;
  cm_dtype dt;
  size_t isz;
  bool right;
  const char *vals;
  uint32_t *dst;
  cm_layout L; /* operand 0 = values, 1 = output */
} search_job;

#define DEF_SEARCH(W, KT)                                                              \
  static uint32_t search_##W(const KT *k, int64_t n, KT x, bool right) {               \
    int64_t lo = 0, hi = n;                                                            \
    while (lo < hi) {                                                                  \
      int64_t mid = lo + (hi - lo) / 2;                                                \
      if (right ? k[mid] <= x : k[mid] < x) lo = mid + 1;                              \
      else hi = mid;                                                                   \
    }                                                                                  \
    return (uint32_t)lo;                                                               \
  }
DEF_SEARCH(8, uint8_t)
DEF_SEARCH(16, uint16_t)
DEF_SEARCH(32, uint32_t)
DEF_SEARCH(64, uint64_t)

static void search_rows(void *ctx, int64_t begin, int64_t end) {
  search_job *j = ctx;
  const struct key_kind *kk = &kinds[j->dt];
  int64_t rl = cm_layout_row_len(&j->L);
  int64_t s0 = cm_layout_row_stride(&j->L, 0), s1 = cm_layout_row_stride(&j->L, 1);
  cm_row_cursor c;
  cm_row_cursor_seek(&c, &j->L, begin);
  for (int64_t r = begin; r < end; r++, cm_row_cursor_next(&c)) {
    for (int64_t i = 0; i < rl; i++) {
      union { uint8_t k8; uint16_t k16; uint32_t k32; uint64_t k64; } key;
      kk->load(&key, j->vals + (c.offset[0] + i * s0) * (int64_t)j->isz, 1, 1);
      uint32_t pos;
      switch (kk->width) {
      case 1: pos = search_8(j->keys, j->n, key.k8, j->right); break;
      case 2: pos = search_16(j->keys, j->n, key.k16, j->right); break;
      case 4: pos = search_32(j->keys, j->n, key.k32, j->right); break;
      default: pos = search_64(j->keys, j->n, key.k64, j->right); break;
      }
      j->dst[c.offset[1] + i * s1] = pos;
    }
  }
}

int cm_cpu_searchsorted(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin;
  const cm_sort_params *sp = (const cm_sort_params *)p;
  cm_array *seq = in[0], *vals = in[1];
  if (cm_alloc_output(out)) return -1;
  if (out->size == 0) return 0;
  search_job j;
  j.n = seq->shape[0];
  j.dt = seq->dtype;
  j.isz = cm_itemsize(vals);
  j.right = sp->right != 0;
  j.vals = cm_data(vals);
  j.dst = cm_data(out);
  void *keys = malloc((size_t)(j.n ? j.n : 1) * (size_t)kinds[j.dt].width);
  if (!keys) return cm_error(CM_ERR_MEMORY, "[searchsorted] Out of memory.");
  kinds[j.dt].load(keys, cm_data(seq), seq->strides[0], j.n);
  j.keys = keys;
  cm_array *const ops[2] = {vals, out};
  cm_layout_of(&j.L, ops, 2);
  int64_t rl = cm_layout_row_len(&j.L);
  int64_t log = 1;
  for (int64_t m = j.n; m > 1; m >>= 1) log++;
  cm_parallel_for(cm_layout_rows(&j.L), cm_grain(rl * log * 4), search_rows, &j);
  free(keys);
  return 0;
}
