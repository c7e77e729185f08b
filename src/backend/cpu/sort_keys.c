/* Which sort a row of keys gets.  In order:
 *   - a row already in order (or in reverse order) is found in one pass
 *     that stops at the first key out of place, and is not sorted at all;
 *   - values of 8-bit keys, and of 16-bit keys in long rows: counting sort
 *     (count each key, write the runs);
 *   - with AVX-512: rows of at most 32 distinct 32-bit keys are counted
 *     (values: runs; positions: a stable counting sort of the ranks);
 *     32- and 64-bit values are sorted as they are (equal keys are equal
 *     values, so their order cannot show); positions are sorted as
 *     composite keys, key << b | position, which are unique, so any sort
 *     of them is stable; one long row is split around pivots and the
 *     parts sorted on several threads;
 *   - otherwise the portable radix sort (positions of 8- and 16-bit keys
 *     too, in long rows: one or two passes).
 * Partition: the AVX-512 quickselect (argpartition of 32-bit keys: select
 * in a copy, then place every position by the kth key), else the
 * portable one.
 * Every path gives the same permutation and the same values, so results do
 * not depend on the machine or the thread count. */
#include "backend/cpu/sort_keys.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/cpu_features.h"
#include "core/threadpool.h"

/* A row alone at least this long is sorted by several threads. */
#define PAR_MIN_ROW (1 << 17)
/* The parallel radix sort reads the keys once more per byte (each slice
 * recounts), so it only pays with several cores: on 2 (loaded) cores it
 * measured slower than one. */
#define PAR_RADIX_MIN_THREADS 4
/* Parts shorter than this are not split further for the threads. */
#define PAR_MIN_PART (1 << 12)
/* Values of 16-bit keys: counting sort from this many keys on (below, the
 * 65536 counts cost more than sorting). */
#define COUNT16_MIN (1 << 15)
/* Positions of 8- and 16-bit keys: the radix sort (one or two stable
 * counting passes) from this many keys on, composite keys below (where
 * the radix sort's 256 counts per pass dominate).  Measured at 1e5 and
 * 1e6 keys the radix sort was as fast or up to 1.6x faster. */
#define RADIX_NARROW_MIN (1 << 12)

void *cm_sort_scratch_get(cm_sort_scratch *s, size_t nbytes) {
  if (s->buf && s->buf->nbytes >= nbytes) return s->buf->ptr;
  cm_sort_scratch_free(s);
  s->buf = cm_buffer_alloc(nbytes ? nbytes : 1);
  return s->buf ? s->buf->ptr : NULL;
}

void cm_sort_scratch_free(cm_sort_scratch *s) {
  if (s->buf) cm_buffer_release(s->buf);
  s->buf = NULL;
}

static bool use_simd(void) {
#if CM_SORT_HAVE_AVX512
  return cm_cpu_simd_enabled(CM_SIMD_SORT);
#else
  return false;
#endif
}

/* ------------------------------------------------------------------ */
/* Rows already in order */

/* 1: non-decreasing, -1: non-increasing (and not constant), 0: neither.
 * Blocks of 64 comparisons without an early exit let the compiler
 * vectorise the common case, a long ordered row. */
#define DEF_ORDER(W, KT)                                                 \
  static int order_##W(const KT *k, int64_t n) {                         \
    int64_t i = 1;                                                       \
    for (; i + 64 <= n; i += 64) {                                       \
      int bad = 0;                                                       \
      for (int j = 0; j < 64; j++) bad |= k[i + j - 1] > k[i + j];       \
      if (bad) break;                                                    \
    }                                                                    \
    while (i < n && k[i - 1] <= k[i]) i++;                               \
    if (i == n) return 1;                                                \
    if (k[0] != k[i - 1]) return 0; /* rose, then fell */                \
    while (i < n && k[i - 1] >= k[i]) i++;                               \
    return i == n ? -1 : 0;                                              \
  }                                                                      \
  static void reverse_##W(KT *k, int64_t n) {                            \
    for (int64_t i = 0, j = n - 1; i < j; i++, j--) {                    \
      KT t = k[i];                                                       \
      k[i] = k[j], k[j] = t;                                             \
    }                                                                    \
  }                                                                      \
  /* positions of a non-increasing row in sorted order: the runs of     \
   * equal keys from last to first, each in its own (rising) order */    \
  static void reverse_runs_##W(const KT *k, uint32_t *idx, int64_t n) {  \
    int64_t o = 0;                                                       \
    for (int64_t e = n; e > 0;) {                                        \
      int64_t s = e - 1;                                                 \
      while (s > 0 && k[s - 1] == k[e - 1]) s--;                         \
      for (int64_t t = s; t < e; t++) idx[o++] = (uint32_t)t;            \
      e = s;                                                             \
    }                                                                    \
  }
DEF_ORDER(8, uint8_t)
DEF_ORDER(16, uint16_t)
DEF_ORDER(32, uint32_t)
DEF_ORDER(64, uint64_t)

/* Handles a row that needs no sorting; false when it does. */
static bool presorted(int w, void *k, uint32_t *idx, int64_t n) {
  int o;
  switch (w) {
  case 1: o = order_8(k, n); break;
  case 2: o = order_16(k, n); break;
  case 4: o = order_32(k, n); break;
  default: o = order_64(k, n); break;
  }
  if (o == 0) return false;
  if (o > 0) {
    if (idx)
      for (int64_t i = 0; i < n; i++) idx[i] = (uint32_t)i;
    return true;
  }
  switch (w) {
  case 1: idx ? reverse_runs_8(k, idx, n) : reverse_8(k, n); break;
  case 2: idx ? reverse_runs_16(k, idx, n) : reverse_16(k, n); break;
  case 4: idx ? reverse_runs_32(k, idx, n) : reverse_32(k, n); break;
  default: idx ? reverse_runs_64(k, idx, n) : reverse_64(k, n); break;
  }
  return true;
}

/* ------------------------------------------------------------------ */
/* Counting sorts of values */

static void count_sort_8(uint8_t *k, int64_t n) {
  int64_t cnt[256] = {0};
  for (int64_t i = 0; i < n; i++) cnt[k[i]]++;
  int64_t o = 0;
  for (int d = 0; d < 256; o += cnt[d], d++) memset(k + o, d, (size_t)cnt[d]);
}

/* cnt: scratch for 65536 counts */
static void count_sort_16(uint16_t *k, int64_t n, uint32_t *cnt) {
  memset(cnt, 0, 65536 * sizeof *cnt);
  for (int64_t i = 0; i < n; i++) cnt[k[i]]++;
  int64_t o = 0;
  for (uint32_t d = 0; d < 65536; d++)
    for (uint32_t c = cnt[d]; c; c--) k[o++] = (uint16_t)d;
}

/* ------------------------------------------------------------------ */
/* AVX-512 paths */

#if CM_SORT_HAVE_AVX512

/* One long row on several threads: a parallel quicksort over a shared
 * stack of parts.  Each thread takes a part, splits it around a pivot
 * while it is long (pushing one side for any thread to take, keeping the
 * other), then sorts what is left.  Each part's keys all sort before the
 * next part's, so the row ends sorted.  The splits are the quicksort's
 * own first levels, so no work is added, and there is no barrier between
 * levels: a thread that another process delays holds up one small part,
 * not a level.  A thread waits only while the stack is empty and some
 * other thread may still push to it. */
#define PAR_PARTS_PER_THREAD 8
#define PAR_STACK 256
typedef struct par_sort {
  int w, fin;
  char *k;
  int64_t part_min; /* parts at least this long are split */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int top, busy; /* parts on the stack; threads working on one */
  int64_t lo[PAR_STACK], n[PAR_STACK];
} par_sort;

static void sort_run(int w, void *k, int64_t n, int fin) {
  if (w == 4) cm_sort_avx512_u32(k, n, fin);
  else cm_sort_avx512_u64(k, n);
}

static void par_sort_part(par_sort *p, int64_t lo, int64_t n) {
  while (n >= p->part_min) {
    int64_t m = p->w == 4 ? cm_sort_avx512_split_u32((uint32_t *)p->k + lo, n)
                          : cm_sort_avx512_split_u64((uint64_t *)p->k + lo, n);
    if (m == 0 || m == n) break; /* all keys equal: nothing to split off */
    pthread_mutex_lock(&p->mu);
    bool room = p->top < PAR_STACK;
    if (room) { /* share the larger side, keep splitting the smaller */
      bool left_big = m >= n - m;
      p->lo[p->top] = left_big ? lo : lo + m;
      p->n[p->top++] = left_big ? m : n - m;
      pthread_cond_signal(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    if (!room) break;
    if (m >= n - m) lo += m, n -= m;
    else n = m;
  }
  sort_run(p->w, p->k + lo * p->w, n, p->fin);
}

static void par_worker(void *ctx, int64_t b, int64_t e) {
  par_sort *p = ctx;
  (void)b, (void)e;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    if (p->top > 0) {
      p->top--;
      int64_t lo = p->lo[p->top], n = p->n[p->top];
      p->busy++;
      pthread_mutex_unlock(&p->mu);
      par_sort_part(p, lo, n);
      pthread_mutex_lock(&p->mu);
      if (--p->busy == 0 && p->top == 0) pthread_cond_broadcast(&p->cv);
    } else if (p->busy == 0) {
      break; /* nothing left and nobody can push more */
    } else {
      pthread_cond_wait(&p->cv, &p->mu);
    }
  }
  pthread_mutex_unlock(&p->mu);
}

/* Sorts the parts [lo[i], lo[i] + len[i]) of k (w: 4 or 8 bytes), each
 * of whose keys sort before the next part's; on the pool where the row is
 * long and the caller allows it. */
static void simd_sort_parts(int w, void *k, int64_t n, int fin, bool par, int parts,
                            const int64_t *lo, const int64_t *len) {
  int threads = par && n >= PAR_MIN_ROW ? cm_num_threads() : 1;
  par_sort *p = threads > 1 ? malloc(sizeof *p) : NULL;
  if (!p) { /* one thread (or no memory for the shared stack) */
    for (int i = 0; i < parts; i++) sort_run(w, (char *)k + lo[i] * w, len[i], fin);
    return;
  }
  p->w = w, p->fin = fin;
  p->k = k;
  p->part_min = n / ((int64_t)threads * PAR_PARTS_PER_THREAD);
  if (p->part_min < PAR_MIN_PART) p->part_min = PAR_MIN_PART;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  p->top = parts, p->busy = 0;
  for (int i = 0; i < parts; i++) p->lo[i] = lo[i], p->n[i] = len[i];
  cm_parallel_for(threads, 1, par_worker, p);
  pthread_cond_destroy(&p->cv);
  pthread_mutex_destroy(&p->mu);
  free(p);
}

/* w: 4 or 8 */
static void simd_sort(int w, void *k, int64_t n, bool par) {
  const int64_t lo = 0;
  simd_sort_parts(w, k, n, 0, par, 1, &lo, &n);
}

#define FEW_MIN_ROW (1 << 12)
#define FEW_SAMPLE 256

static bool few_sample_key(uint32_t x, int kind, uint32_t *key) {
  const uint32_t sign = 0x80000000u;
  if (kind == CM_KEY32_I32) x ^= sign;
  if (kind == CM_KEY32_F32) {
    if ((x & ~sign) > 0x7f800000u || x == sign) return false;
    x ^= (uint32_t)((int32_t)x >> 31) | sign;
  }
  *key = x;
  return true;
}

/* The distinct keys are guessed from a sample; a key outside it ends the
 * attempt (at worst one pass lost, on rows that have a few rare keys
 * besides). */
/* The rank pass in FEW_SLICES slices of the row (enough for a thread that
 * another process delays to leave the rest to the others). */
#define FEW_SLICES 16
typedef struct few_job {
  const uint32_t *k;
  int64_t n;
  int kind;
  const uint32_t *t;
  int d;
  uint8_t *rank;
  int64_t cnt[FEW_SLICES][CM_FEW_MAX];
  atomic_int miss;
} few_job;

static void few_slices(void *ctx, int64_t b, int64_t e) {
  few_job *j = ctx;
  for (int64_t sl = b; sl < e; sl++) {
    int64_t lo = j->n * sl / FEW_SLICES, hi = j->n * (sl + 1) / FEW_SLICES;
    if (!cm_sort_avx512_rank_u32(j->k + lo, hi - lo, j->kind, j->t, j->d,
                                 j->rank ? j->rank + lo : NULL, j->cnt[sl]))
      atomic_store(&j->miss, 1);
  }
}

bool cm_keys_few_32(const uint32_t *k, int64_t n, int kind, uint8_t *rank, cm_few_keys *f,
                    bool par) {
  if (n < FEW_MIN_ROW || n > UINT32_MAX || !use_simd()) return false;
  uint32_t *t = f->t, s[FEW_SAMPLE];
  for (int i = 0; i < FEW_SAMPLE; i++)
    if (!few_sample_key(k[(n - 1) * (2 * i + 1) / (2 * FEW_SAMPLE)], kind, &s[i])) return false;
  cm_sort_avx512_u32(s, FEW_SAMPLE, 0);
  int d = 1;
  t[0] = s[0];
  for (int i = 1; i < FEW_SAMPLE; i++) {
    if (s[i] == t[d - 1]) continue;
    if (d == CM_FEW_MAX) return false;
    t[d++] = s[i];
  }
  for (int i = d; i < CM_FEW_MAX; i++) t[i] = UINT32_MAX;
  f->d = d;
  int threads = par && n >= PAR_MIN_ROW ? cm_num_threads() : 1;
  if (threads <= 1) return cm_sort_avx512_rank_u32(k, n, kind, t, d, rank, f->cnt);
  /* a long row alone: the pass in slices on the pool, counts summed */
  few_job job = {k, n, kind, t, d, rank, {{0}}, 0};
  cm_parallel_for(FEW_SLICES, 1, few_slices, &job);
  if (atomic_load(&job.miss)) return false;
  for (int j = 0; j < d; j++) {
    f->cnt[j] = 0;
    for (int sl = 0; sl < FEW_SLICES; sl++) f->cnt[j] += job.cnt[sl][j];
  }
  return true;
}

/* Few distinct keys, sorted by counting: values as runs of each key,
 * positions by a stable counting sort of the ranks.  1 done, 0 not
 * taken, -1 out of memory. */
static int few_distinct_32(uint32_t *k, uint32_t *idx, int64_t n, cm_sort_scratch *s, bool par) {
  if (n < FEW_MIN_ROW) return 0;
  uint8_t *rank = idx ? cm_sort_scratch_get(s, (size_t)n) : NULL;
  if (idx && !rank) return -1;
  cm_few_keys f;
  if (!cm_keys_few_32(k, n, CM_KEY32_U32, rank, &f, par)) return 0;
  int64_t o = 0;
  if (!idx) {
    for (int r = 0; r < f.d; r++) {
      int64_t c = f.cnt[r];
      for (; c >= 16; c -= 16, o += 16) /* blocks, so that it vectorises */
        for (int j = 0; j < 16; j++) k[o + j] = f.t[r];
      for (; c > 0; c--) k[o++] = f.t[r];
    }
    return 1;
  }
  int64_t pos[CM_FEW_MAX];
  for (int r = 0; r < f.d; r++) pos[r] = o, o += f.cnt[r];
  for (int64_t i = 0; i < n; i++) idx[pos[rank[i]]++] = (uint32_t)i;
  return 1;
}

/* Positions by composite keys: key << b | position, b the bits positions
 * need.  32-bit composites where they fit (narrow keys in short rows),
 * else 64-bit. */
#define DEF_COMPOSE(W, KT)                                                                   \
  static bool compose_##W(const KT *k, uint32_t *idx, int64_t n, cm_sort_scratch *s,        \
                          bool par) {                                                       \
    int b = 1;                                                                               \
    while (b < 32 && ((int64_t)1 << b) < n) b++;                                             \
    if (W + b <= 32) {                                                                       \
      uint32_t *c = cm_sort_scratch_get(s, (size_t)n * 4);                                   \
      if (!c) return false;                                                                  \
      for (int64_t i = 0; i < n; i++) c[i] = (uint32_t)k[i] << b | (uint32_t)i;              \
      simd_sort(4, c, n, par);                                                               \
      uint32_t m = ((uint32_t)1 << b) - 1;                                                   \
      for (int64_t i = 0; i < n; i++) idx[i] = c[i] & m;                                     \
    } else {                                                                                 \
      uint64_t *c = cm_sort_scratch_get(s, (size_t)n * 8);                                   \
      if (!c) return false;                                                                  \
      for (int64_t i = 0; i < n; i++) c[i] = (uint64_t)k[i] << 32 | (uint64_t)i;             \
      simd_sort(8, c, n, par);                                                               \
      for (int64_t i = 0; i < n; i++) idx[i] = (uint32_t)c[i];                               \
    }                                                                                        \
    return true;                                                                             \
  }
DEF_COMPOSE(8, uint8_t)
DEF_COMPOSE(16, uint16_t)
DEF_COMPOSE(32, uint32_t)

/* Handles the row when an AVX-512 path suits it; 1 done, 0 not taken,
 * -1 out of memory. */
static int simd_keys_sort(int w, void *k, uint32_t *idx, int64_t n, cm_sort_scratch *s,
                          bool par) {
  if (w == 4) {
    int r = few_distinct_32(k, idx, n, s, par);
    if (r) return r;
  }
  if (idx) {
    if (w == 8 || (w < 4 && n >= RADIX_NARROW_MIN)) return 0;
    bool ok = w == 1   ? compose_8(k, idx, n, s, par)
              : w == 2 ? compose_16(k, idx, n, s, par)
                       : compose_32(k, idx, n, s, par);
    return ok ? 1 : -1;
  }
  if (w >= 4) {
    simd_sort(w, k, n, par);
    return 1;
  }
  if (w == 2) { /* short rows of 16-bit values: widened to 32 bits */
    uint32_t *c = cm_sort_scratch_get(s, (size_t)n * 4);
    if (!c) return -1;
    const uint16_t *k16 = k;
    for (int64_t i = 0; i < n; i++) c[i] = k16[i];
    cm_sort_avx512_u32(c, n, 0);
    for (int64_t i = 0; i < n; i++) ((uint16_t *)k)[i] = (uint16_t)c[i];
    return 1;
  }
  return 0;
}

/* Raw values to keys (sort.c has the float mapping, here without the NaN
 * and -0.0 flags). */
#define RAW_I32(x) ((x) ^ 0x80000000u)
#define RAW_F32(x)                                                                       \
  ((((x) ^ ((uint32_t)((int32_t)(x) >> 31) | 0x80000000u)) + ((x) == 0x80000000u)) |      \
   (0u - (uint32_t)(((x) & 0x7fffffffu) > 0x7f800000u)))

static uint32_t raw_key_32(uint32_t x, int kind) {
  return kind == CM_KEY32_I32 ? RAW_I32(x) : kind == CM_KEY32_F32 ? RAW_F32(x) : x;
}

/* A raw row in order, or in reverse order (1, -1; 0: neither), as order_32
 * does on keys: vector steps, then key by key; *mixed: a reverse row has
 * equal keys of different values side by side (-0.0 and 0.0, or NaNs),
 * whose order must be kept. */
static int raw_order_32(const uint32_t *s, int64_t n, int kind, bool *mixed) {
  int64_t i = cm_sort_avx512_run_u32(s, n, 1, kind, true, mixed);
  while (i < n && raw_key_32(s[i - 1], kind) <= raw_key_32(s[i], kind)) i++;
  if (i == n) return 1;
  uint32_t k0 = raw_key_32(s[0], kind);
  if (k0 != raw_key_32(s[i - 1], kind)) return 0; /* rose, then fell */
  for (int64_t j = 1; j < i; j++) *mixed |= s[j] != s[0];
  i = cm_sort_avx512_run_u32(s, n, i, kind, false, mixed);
  for (; i < n; i++) {
    uint32_t a = raw_key_32(s[i - 1], kind), b = raw_key_32(s[i], kind);
    if (a < b) return 0;
    *mixed |= a == b && s[i - 1] != s[i];
  }
  return -1;
}

bool cm_raw_in_order_32(const uint32_t *s, int64_t n, int kind) {
  bool mixed = false;
  return n <= UINT32_MAX && use_simd() && raw_order_32(s, n, kind, &mixed) > 0;
}

bool cm_values_sort_32(const uint32_t *src, uint32_t *dst, int64_t n, int kind, bool par) {
  if (n > UINT32_MAX || !use_simd()) return false;
  if (n <= 256) return cm_sort_avx512_small_from_u32(src, dst, n, kind);
  bool mixed = false;
  int o = raw_order_32(src, n, kind, &mixed);
  if (o > 0) {
    memcpy(dst, src, (size_t)n * 4);
    return true;
  }
  if (o < 0 && !mixed) {
    cm_sort_avx512_reverse_u32(src, dst, n);
    return true;
  }
  if (o < 0) { /* runs of equal keys keep their order */
    int64_t d = 0;
    for (int64_t e = n; e > 0;) {
      int64_t s = e - 1;
      uint32_t key = raw_key_32(src[s], kind);
      while (s > 0 && raw_key_32(src[s - 1], kind) == key) s--;
      for (int64_t t = s; t < e; t++) dst[d++] = src[t];
      e = s;
    }
    return true;
  }
  int64_t m = cm_sort_avx512_split_from_u32(src, dst, n, kind);
  if (m < 0) return false;
  const int64_t lo[2] = {0, m}, len[2] = {m, n - m};
  simd_sort_parts(4, dst, n, kind, par, 2, lo, len);
  return true;
}

#else
bool cm_keys_few_32(const uint32_t *k, int64_t n, int kind, uint8_t *rank, cm_few_keys *f,
                    bool par) {
  (void)k, (void)n, (void)kind, (void)rank, (void)f, (void)par;
  return false;
}
bool cm_values_sort_32(const uint32_t *src, uint32_t *dst, int64_t n, int kind, bool par) {
  (void)src, (void)dst, (void)n, (void)kind, (void)par;
  return false;
}
bool cm_raw_in_order_32(const uint32_t *s, int64_t n, int kind) {
  (void)s, (void)n, (void)kind;
  return false;
}
#endif

/* ------------------------------------------------------------------ */

bool cm_keys_sort(int w, void *k, uint32_t *idx, int64_t n, cm_sort_scratch *s, bool par) {
  if (n <= 1) {
    if (idx && n == 1) idx[0] = 0;
    return true;
  }
  if (presorted(w, k, idx, n)) return true;
  if (!idx && w == 1) {
    count_sort_8(k, n);
    return true;
  }
  if (!idx && w == 2 && n >= COUNT16_MIN) {
    uint32_t *cnt = cm_sort_scratch_get(s, 65536 * sizeof(uint32_t));
    if (!cnt) return false;
    count_sort_16(k, n, cnt);
    return true;
  }
#if CM_SORT_HAVE_AVX512
  if (use_simd()) {
    int r = simd_keys_sort(w, k, idx, n, s, par);
    if (r) return r > 0;
  }
#endif
  /* the radix sort: kt (n keys), then vt (n positions), 8-byte aligned */
  size_t kbytes = ((size_t)n * (size_t)w + 7) & ~(size_t)7;
  char *mem = cm_sort_scratch_get(s, kbytes + (idx ? (size_t)n * 4 : 0));
  if (!mem) return false;
  uint32_t *vt = idx ? (uint32_t *)(mem + kbytes) : NULL;
  if (idx)
    for (int64_t i = 0; i < n; i++) idx[i] = (uint32_t)i;
  if (par && n >= PAR_MIN_ROW && cm_num_threads() >= PAR_RADIX_MIN_THREADS)
    cm_radix_sort_par(w, k, mem, idx, vt, n);
  else cm_radix_sort(w, k, mem, idx, vt, n);
  return true;
}

bool cm_keys_select(int w, void *k, uint32_t *idx, int64_t n, int64_t kth, cm_sort_scratch *s) {
#if CM_SORT_HAVE_AVX512
  if (use_simd() && n <= UINT32_MAX) {
    if (!idx && w == 4) return cm_sort_avx512_select_u32(k, n, kth), true;
    if (!idx && w == 8) return cm_sort_avx512_select_u64(k, n, kth), true;
    if (idx && w == 4) { /* find the kth key in a copy, then place every position by it */
      uint32_t *c = cm_sort_scratch_get(s, (size_t)n * 4);
      if (!c) return false;
      memcpy(c, k, (size_t)n * 4);
      cm_sort_avx512_select_u32(c, n, kth);
      cm_sort_avx512_argpart_u32(k, n, c[kth], idx);
      return true;
    }
    if (idx && w < 4) { /* composite keys, as for sorting */
      uint64_t *c = cm_sort_scratch_get(s, (size_t)n * 8);
      if (!c) return false;
      for (int64_t i = 0; i < n; i++) {
        uint64_t key = w == 1   ? ((uint8_t *)k)[i]
                       : w == 2 ? ((uint16_t *)k)[i]
                                : ((uint32_t *)k)[i];
        c[i] = key << 32 | (uint64_t)i;
      }
      cm_sort_avx512_select_u64(c, n, kth);
      for (int64_t i = 0; i < n; i++) idx[i] = (uint32_t)c[i];
      return true;
    }
  }
#endif
  size_t kbytes = ((size_t)n * (size_t)w + 7) & ~(size_t)7;
  char *mem = cm_sort_scratch_get(s, kbytes + (idx ? (size_t)n * 4 : 0));
  if (!mem) return false;
  if (idx)
    for (int64_t i = 0; i < n; i++) idx[i] = (uint32_t)i;
  cm_radix_select(w, k, mem, idx, idx ? (uint32_t *)(mem + kbytes) : NULL, n, kth);
  return true;
}
