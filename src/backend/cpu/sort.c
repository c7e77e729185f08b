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
 * The keys go to backend/cpu/sort_keys.c, which picks the sort for each
 * row (AVX-512 quicksort, counting sort, radix sort: all give the same
 * result); partition is a quickselect.  Contiguous rows of 32-bit values
 * skip the key pass: the first split (or the count of few distinct
 * values) reads them as they are.
 *
 * Rows (the lines along the sorted axis) are spread over the thread pool;
 * each thread loads its row's keys into a contiguous buffer (the output
 * row itself, when values are wanted and it is contiguous), sorts them and
 * writes them out, so input and output may have any strides; lines side
 * by side in memory are gathered a block at a time.  A row alone (fewer
 * rows than threads) may be sorted by several threads. */
#include "backend/cpu/sort.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/sort_keys.h"
#include "backend/cpu/strided.h"
#include "backend/cpu/types.h"
#include "core/threadpool.h"
#include "primitives/sort.h"

/* Rows at least this long, fewer than the threads, are sorted one at a
 * time, each by all the threads. */
#define PAR_MIN_ROW (1 << 17)
#define BLOCK_BYTES (1 << 20)

/* ------------------------------------------------------------------ */
/* Keys */

/* Float bits -> key without a branch, so that the loops vectorise: the
 * IEEE flip (negative: all bits inverted; positive: sign bit set), -0.0
 * to the key of +0.0 (the flip gives it one less), NaN to all ones.
 * fspecial: whether the bits are a NaN or -0.0; funkey: key -> bits. */
#define DEF_FKEY(W, KT, ST)                                                  \
  static inline KT fkey##W(KT b, KT expmask) {                               \
    const KT sign = (KT)((KT)1 << (W - 1));                                  \
    KT nan = (KT)((KT)(b & (KT)~sign) > expmask), nz = (KT)(b == sign);      \
    KT f = (KT)(b ^ (KT)((KT)((ST)b >> (W - 1)) | sign));                    \
    return (KT)((KT)(f + nz) | (KT)(0 - nan));                               \
  }                                                                          \
  static inline KT fspecial##W(KT b, KT expmask) {                           \
    const KT sign = (KT)((KT)1 << (W - 1));                                  \
    return (KT)(((KT)(b & (KT)~sign) > expmask) | (b == sign));              \
  }                                                                          \
  static inline KT funkey##W(KT y) {                                         \
    const KT sign = (KT)((KT)1 << (W - 1));                                  \
    return (KT)(y ^ (KT)((KT) ~(KT)((ST)y >> (W - 1)) | sign));              \
  }
DEF_FKEY(16, uint16_t, int16_t)
DEF_FKEY(32, uint32_t, int32_t)
DEF_FKEY(64, uint64_t, int64_t)
#define F32_EXP 0x7f800000u
#define F64_EXP 0x7ff0000000000000ull

/* complex64: lexicographic (real, imaginary); a NaN in either part is NaN */
static inline uint64_t key_c64(uint64_t b) {
  uint32_t re = fkey32((uint32_t)b, F32_EXP), im = fkey32((uint32_t)(b >> 32), F32_EXP);
  uint64_t nan = re == UINT32_MAX || im == UINT32_MAX;
  return ((uint64_t)re << 32 | im) | (0 - nan);
}
static inline uint64_t special_c64(uint64_t b) {
  return fspecial32((uint32_t)b, F32_EXP) | fspecial32((uint32_t)(b >> 32), F32_EXP);
}
static inline uint64_t unkey_c64(uint64_t y) {
  return (uint64_t)funkey32((uint32_t)(y >> 32)) | (uint64_t)funkey32((uint32_t)y) << 32;
}

/* Gather n strided elements as keys; returns whether the row is special. */
typedef bool (*load_fn)(void *keys, const char *src, int64_t stride, int64_t n);
/* Write n keys back as values (rows without specials only); keys may be
 * dst itself (stride 1). */
typedef void (*store_fn)(char *dst, int64_t stride, const void *keys, int64_t n);

/* Contiguous rows in blocks of 16 with a fixed count, in functions whose
 * pointers are restrict parameters: the compiler vectorises those (its
 * cheap cost model refuses an epilogue or a run-time alias check). */
#define DEF_KEYS(SFX, T, KT, KEY, SPECIAL, VAL)                                         \
  static KT load16_##SFX(KT *restrict k, const T *restrict s, int64_t n) {              \
    KT sp = 0;                                                                          \
    for (int64_t i = 0; i + 16 <= n; i += 16)                                           \
      for (int b = 0; b < 16; b++) {                                                    \
        T x = s[i + b];                                                                 \
        k[i + b] = KEY;                                                                 \
        sp |= SPECIAL;                                                                  \
      }                                                                                 \
    return sp;                                                                          \
  }                                                                                     \
  static bool load_##SFX(void *keys, const char *src, int64_t st, int64_t n) {          \
    const T *s = (const T *)src;                                                        \
    KT *k = keys;                                                                       \
    KT sp = 0;                                                                          \
    int64_t i = 0;                                                                      \
    if (st == 1) sp = load16_##SFX(k, s, n), i = n & ~(int64_t)15;                      \
    for (; i < n; i++) {                                                                \
      T x = s[i * st];                                                                  \
      k[i] = KEY;                                                                       \
      sp |= SPECIAL;                                                                    \
    }                                                                                   \
    return sp != 0;                                                                     \
  }                                                                                     \
  static void unkey16_##SFX(KT *d, int64_t n) { /* in place */                          \
    for (int64_t i = 0; i + 16 <= n; i += 16)                                           \
      for (int b = 0; b < 16; b++) {                                                    \
        KT y = d[i + b];                                                                \
        d[i + b] = VAL;                                                                 \
      }                                                                                 \
  }                                                                                     \
  static void store_##SFX(char *dst, int64_t st, const void *keys, int64_t n) {         \
    T *d = (T *)dst;                                                                    \
    const KT *k = keys;                                                                 \
    int64_t i = 0;                                                                      \
    if (st == 1 && (const void *)d == keys) unkey16_##SFX(d, n), i = n & ~(int64_t)15;  \
    for (; i < n; i++) {                                                                \
      KT y = k[i];                                                                      \
      d[i * st] = VAL;                                                                  \
    }                                                                                   \
  }

/* Storage types: halves, floats and complex are handled as their bits. */
DEF_KEYS(b8, uint8_t, uint8_t, (uint8_t)(x != 0), 0, y)
DEF_KEYS(u8, uint8_t, uint8_t, x, 0, y)
DEF_KEYS(i8, uint8_t, uint8_t, (uint8_t)(x ^ 0x80u), 0, (uint8_t)(y ^ 0x80u))
DEF_KEYS(u16, uint16_t, uint16_t, x, 0, y)
DEF_KEYS(i16, uint16_t, uint16_t, (uint16_t)(x ^ 0x8000u), 0, (uint16_t)(y ^ 0x8000u))
DEF_KEYS(u32, uint32_t, uint32_t, x, 0, y)
DEF_KEYS(i32, uint32_t, uint32_t, x ^ 0x80000000u, 0, y ^ 0x80000000u)
DEF_KEYS(u64, uint64_t, uint64_t, x, 0, y)
DEF_KEYS(i64, uint64_t, uint64_t, x ^ 0x8000000000000000ull, 0, y ^ 0x8000000000000000ull)
DEF_KEYS(f16, uint16_t, uint16_t, fkey16(x, 0x7c00u), fspecial16(x, 0x7c00u), funkey16(y))
DEF_KEYS(bf16, uint16_t, uint16_t, fkey16(x, 0x7f80u), fspecial16(x, 0x7f80u), funkey16(y))
DEF_KEYS(f32, uint32_t, uint32_t, fkey32(x, F32_EXP), fspecial32(x, F32_EXP), funkey32(y))
DEF_KEYS(f64, uint64_t, uint64_t, fkey64(x, F64_EXP), fspecial64(x, F64_EXP), funkey64(y))
DEF_KEYS(c64, uint64_t, uint64_t, key_c64(x), special_c64(x), unkey_c64(y))

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
/* Driver: one row per sorted line. */

typedef struct sort_job {
  cm_sort_op op;
  int64_t n, kth;
  const char *src;
  char *dst;
  cm_dtype dt;
  size_t isz;          /* input element size */
  size_t osz;          /* output element size */
  int64_t sst, dst_st; /* strides along the axis (elements) */
  cm_layout L;         /* the other axes: operand 0 = input, 1 = output */
  bool par;            /* few long rows: each sorted by all the threads */
  int blk;             /* strided lines side by side: how many to gather at once */
  atomic_int oom;
} sort_job;

/* One thread's buffers, allocated when a row first needs them and kept
 * for its next rows: positions, keys (when not sorted in the output row)
 * and the key sorts' scratch. */
typedef struct row_mem {
  cm_sort_scratch v, k, sort, tin, tout;
} row_mem;

/* A values sort of a contiguous row of few distinct 32-bit values: each
 * value counted where it lies (no keys, no sort), then written as runs. */
static bool few_values(sort_job *j, int kind, const char *src, char *dst, int64_t st) {
  cm_few_keys f;
  if (!cm_keys_few_32((const uint32_t *)src, j->n, kind, NULL, &f, j->par)) return false;
  uint32_t *d = (uint32_t *)dst;
  int64_t o = 0;
  for (int r = 0; r < f.d; r++) {
    uint32_t bits;
    kinds[j->dt].store((char *)&bits, 1, &f.t[r], 1);
    const uint32_t v = bits; /* a copy the fill cannot alias */
    int64_t c = f.cnt[r];
    if (st == 1)
      for (; c >= 16; c -= 16, o += 16) /* blocks, so that it vectorises */
        for (int b = 0; b < 16; b++) d[o + b] = v;
    for (; c > 0; c--, o++) d[o * st] = v;
  }
  return true;
}

/* One line: src and dst with their strides along the axis (elements). */
static bool sort_one(sort_job *j, const char *src, int64_t sst, char *dst, int64_t dst_st,
                     row_mem *m) {
  const struct key_kind *kk = &kinds[j->dt];
  int64_t n = j->n;
  bool arg = cm_sort_op_indices(j->op);
  /* contiguous 32-bit values are read where they lie (no key pass) */
  int kind = j->dt == CM_FLOAT32 ? CM_KEY32_F32
             : j->dt == CM_INT32 ? CM_KEY32_I32
             : j->dt == CM_UINT32 ? CM_KEY32_U32
                                  : -1;
  if (j->op == CM_SORT_ARGSORT && kind >= 0 && sst == 1 && n > 256 &&
      cm_raw_in_order_32((const uint32_t *)src, n, kind)) {
    uint32_t *d = (uint32_t *)dst;
    for (int64_t i = 0; i < n; i++) d[i * dst_st] = (uint32_t)i;
    return true;
  }
  if (j->op == CM_SORT_SORT && kind >= 0 && sst == 1) {
    if (few_values(j, kind, src, dst, dst_st)) return true;
    if (dst_st == 1 &&
        cm_values_sort_32((const uint32_t *)src, (uint32_t *)dst, n, kind, j->par))
      return true;
  }
  /* values are sorted as keys in the output row itself where it is
   * contiguous (keys have the element's size), saving a copy */
  bool in_dst = !arg && dst_st == 1 && j->osz == (size_t)kk->width;
  void *k = in_dst ? dst : cm_sort_scratch_get(&m->k, (size_t)n * (size_t)kk->width);
  if (!k) return false;
  bool sp = kk->load(k, src, sst, n);
  uint32_t *idx = NULL; /* positions: straight into a contiguous argsort output */
  if (arg && dst_st == 1) idx = (uint32_t *)dst;
  else if ((arg || sp) && !(idx = cm_sort_scratch_get(&m->v, (size_t)n * sizeof(uint32_t))))
    return false;
  bool ok = cm_sort_op_full(j->op) ? cm_keys_sort(kk->width, k, idx, n, &m->sort, j->par)
                                   : cm_keys_select(kk->width, k, idx, n, j->kth, &m->sort);
  if (!ok) return false;
  if (arg) {
    uint32_t *d = (uint32_t *)dst;
    if (d != idx)
      for (int64_t i = 0; i < n; i++) d[i * dst_st] = idx[i];
  } else if (sp) { /* gather the original elements through the permutation */
    for (int64_t i = 0; i < n; i++)
      memcpy(dst + i * dst_st * (int64_t)j->osz,
             src + (int64_t)idx[i] * sst * (int64_t)j->isz, j->isz);
  } else {
    kk->store(dst, dst_st, k, n); /* in place when k is the output row */
  }
  return true;
}

/* Lines side by side in memory (sorting along an outer axis) read one at
 * a time touch a cache line per element; a block of them is gathered into
 * contiguous rows instead (each cache line read once for the block),
 * sorted there, and scattered back the same way. */
#define DEF_TRANSPOSE(T)                                                                 \
  static void gather_##T(T *t, const T *s, int64_t n, int64_t st, int b) {               \
    for (int64_t i = 0; i < n; i++)                                                      \
      for (int l = 0; l < b; l++) t[l * n + i] = s[i * st + l];                          \
  }                                                                                      \
  static void scatter_##T(T *d, const T *t, int64_t n, int64_t st, int b) {              \
    for (int64_t i = 0; i < n; i++)                                                      \
      for (int l = 0; l < b; l++) d[i * st + l] = t[l * n + i];                          \
  }
DEF_TRANSPOSE(uint8_t)
DEF_TRANSPOSE(uint16_t)
DEF_TRANSPOSE(uint32_t)
DEF_TRANSPOSE(uint64_t)

static void transpose(bool in, size_t size, void *d, const void *s, int64_t n, int64_t st, int b) {
  switch (size) {
  case 1: in ? gather_uint8_t(d, s, n, st, b) : scatter_uint8_t(d, s, n, st, b); break;
  case 2: in ? gather_uint16_t(d, s, n, st, b) : scatter_uint16_t(d, s, n, st, b); break;
  case 4: in ? gather_uint32_t(d, s, n, st, b) : scatter_uint32_t(d, s, n, st, b); break;
  default: in ? gather_uint64_t(d, s, n, st, b) : scatter_uint64_t(d, s, n, st, b); break;
  }
}

static bool sort_block(sort_job *j, const char *src, char *dst, int b, row_mem *m) {
  int64_t n = j->n;
  char *tin = cm_sort_scratch_get(&m->tin, (size_t)(n * b) * j->isz);
  char *tout = cm_sort_scratch_get(&m->tout, (size_t)(n * b) * j->osz);
  if (!tin || !tout) return false;
  transpose(true, j->isz, tin, src, n, j->sst, b);
  for (int l = 0; l < b; l++)
    if (!sort_one(j, tin + (size_t)(l * n) * j->isz, 1, tout + (size_t)(l * n) * j->osz, 1, m))
      return false;
  transpose(false, j->osz, dst, tout, n, j->dst_st, b);
  return true;
}

static void sort_lines(void *ctx, int64_t begin, int64_t end) {
  sort_job *j = ctx;
  row_mem m = {{NULL}, {NULL}, {NULL}, {NULL}, {NULL}};
  int64_t rl = cm_layout_row_len(&j->L);
  int64_t s0 = cm_layout_row_stride(&j->L, 0), s1 = cm_layout_row_stride(&j->L, 1);
  cm_row_cursor c;
  int64_t row = begin / rl, col = begin % rl;
  cm_row_cursor_seek(&c, &j->L, row);
  bool blocks = j->blk > 1 && s0 == 1 && s1 == 1;
  for (int64_t line = begin; line < end;) {
    while (col < rl && line < end) {
      const char *src = j->src + (c.offset[0] + col * s0) * (int64_t)j->isz;
      char *dst = j->dst + (c.offset[1] + col * s1) * (int64_t)j->osz;
      int64_t b = blocks ? rl - col : 1;
      if (b > end - line) b = end - line;
      if (b > j->blk) b = j->blk;
      bool ok = b > 1 ? sort_block(j, src, dst, (int)b, &m)
                      : sort_one(j, src, j->sst, dst, j->dst_st, &m);
      if (!ok) {
        atomic_store(&j->oom, 1);
        line = end;
        break;
      }
      col += b, line += b;
    }
    col = 0;
    cm_row_cursor_next(&c);
  }
  cm_sort_scratch_free(&m.v);
  cm_sort_scratch_free(&m.k);
  cm_sort_scratch_free(&m.sort);
  cm_sort_scratch_free(&m.tin);
  cm_sort_scratch_free(&m.tout);
}

static int sort_along_axis(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_sort_params *sp = cm_sort_params_of(out);
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
   * (one at a time) instead of across them. */
  int threads = cm_num_threads();
  j->par = threads > 1 && lines < threads && j->n >= PAR_MIN_ROW && cm_sort_op_full(j->op);
  /* blocks of strided lines, as many as keep both copies within about
   * 1 MB (a core's cache), at most 16 */
  int64_t blk = BLOCK_BYTES / (j->n * (int64_t)(j->isz + j->osz));
  j->blk = j->par || j->sst == 1 ? 1 : (int)(blk < 16 ? blk : 16);
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

static int search_sorted(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_sort_params *sp = cm_sort_params_of(out);
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

/* The Sort primitive's kernel: one descriptor covers the axis sorts and
 * selections and searchsorted, told apart by the op code. */
int cm_cpu_sort(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  if (cm_sort_params_of(out)->op == CM_SORT_SEARCHSORTED)
    return search_sorted(out, in, nin, p);
  return sort_along_axis(out, in, nin, p);
}
