/* Sorting unsigned keys: the interface between the sort driver
 * (backend/cpu/sort.c), which maps every dtype to keys whose unsigned
 * order is MLX's order, and the key sorts: the strategy that picks one per
 * row (sort_keys.c), the portable sorts (sort_radix.c) and the AVX-512
 * ones (sort_avx512.c).  Keys are 1, 2, 4 or 8 bytes wide (w). */
#ifndef CMLX_BACKEND_CPU_SORT_KEYS_H
#define CMLX_BACKEND_CPU_SORT_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/allocator.h"

/* One thread's scratch memory, reused from row to row and grown on
 * demand, so a chunk of rows allocates once or twice and not per row. It
 * comes from the allocator, whose cache saves the page faults of a fresh
 * mapping on every sort of a long row. */
typedef struct cm_sort_scratch {
  cm_buffer *buf;
} cm_sort_scratch;

/* At least nbytes (64-byte aligned), or NULL when out of memory.  The
 * contents do not survive a call that grows it. */
void *cm_sort_scratch_get(cm_sort_scratch *s, size_t nbytes);
void cm_sort_scratch_free(cm_sort_scratch *s);

/* Sorts n keys ascending.  With idx (room for n): fills idx with the
 * stable sorting permutation (the positions of the keys in sorted order,
 * equal keys in the order they came) and leaves the keys in no particular
 * order; without: sorts the keys in place.  par: the row is alone and the
 * sort may use the thread pool.  The result never depends on the CPU's
 * instruction set or the number of threads.  False when out of memory. */
bool cm_keys_sort(int w, void *k, uint32_t *idx, int64_t n, cm_sort_scratch *s, bool par);

/* Moves the key that sorts to position kth there, smaller or equal keys
 * before it and larger or equal ones after; with idx, their positions
 * along with them.  False when out of memory. */
bool cm_keys_select(int w, void *k, uint32_t *idx, int64_t n, int64_t kth, cm_sort_scratch *s);

/* Raw 32-bit values and their keys: the kinds of rows the paths below
 * read without loading keys first.  A kind is also the transform from
 * keys back to values (CM_KEY32_U32, 0: none).  A float32 NaN or -0.0
 * ends such a path: neither is the key of one value. */
enum { CM_KEY32_U32, CM_KEY32_I32, CM_KEY32_F32 };

/* Sorts the values of a contiguous 32-bit row from src into dst (both
 * contiguous, n elements).  False where the path does not apply (no
 * AVX-512, a short row, a NaN or -0.0 in a float row): the caller then
 * sorts through keys.  par: as for cm_keys_sort. */
bool cm_values_sort_32(const uint32_t *src, uint32_t *dst, int64_t n, int kind, bool par);
/* Whether a contiguous raw 32-bit row is already in order (AVX-512 only;
 * false otherwise): an argsort is then the identity, without loading keys. */
bool cm_raw_in_order_32(const uint32_t *s, int64_t n, int kind);

/* Rows of few distinct 32-bit keys (AVX-512 only; otherwise never found):
 * the distinct keys in order and how often each occurs, from one pass
 * over the row without moving it, so that a values sort is a fill.  k
 * holds raw values of a kind. */
#define CM_FEW_MAX 32
typedef struct cm_few_keys {
  int d;                   /* distinct keys */
  uint32_t t[CM_FEW_MAX];  /* the keys, ascending */
  int64_t cnt[CM_FEW_MAX]; /* how many of each */
} cm_few_keys;
/* With rank (room for n), also each key's index in t.  False when the
 * row has more distinct keys (found early, from a sample, in most rows).
 * par: as for cm_keys_sort. */
bool cm_keys_few_32(const uint32_t *k, int64_t n, int kind, uint8_t *rank, cm_few_keys *f,
                    bool par);

/* ---- the portable sorts (sort_radix.c).  v: positions carried along
 * (the caller fills them; NULL for keys only); kt and vt: scratch for n
 * keys and n positions. */

/* Stable LSD radix sort; insertion sort for short rows. */
void cm_radix_sort(int w, void *k, void *kt, uint32_t *v, uint32_t *vt, int64_t n);
/* The same over the thread pool, for one long row (same result). */
void cm_radix_sort_par(int w, void *k, void *kt, uint32_t *v, uint32_t *vt, int64_t n);
/* Quickselect, radix sort when it recurses too deep. */
void cm_radix_select(int w, void *k, void *kt, uint32_t *v, uint32_t *vt, int64_t n, int64_t kth);

/* ---- AVX-512 (sort_avx512.c), where the compiler can build it; call
 * only where the CPU has AVX-512F.  In place, ascending; the order left
 * among equal keys is unspecified (callers make keys unique where it
 * would show). */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CM_SORT_HAVE_AVX512 1
/* fin: the kind whose values the sorted keys become (CM_KEY32_U32: stay) */
void cm_sort_avx512_u32(uint32_t *a, int64_t n, int fin);
void cm_sort_avx512_u64(uint64_t *a, int64_t n);
/* Partitions a[0, n) (n >= 256) around a pivot near the median; returns
 * m with every key of a[0, m) <= every key of a[m, n). */
int64_t cm_sort_avx512_split_u32(uint32_t *a, int64_t n);
int64_t cm_sort_avx512_split_u64(uint64_t *a, int64_t n);
/* The same split from raw values of a kind in src to their keys in dst
 * (n >= 256): loading the keys and the first split in one pass.  -1 when
 * a float row holds a NaN or -0.0. */
int64_t cm_sort_avx512_split_from_u32(const uint32_t *src, uint32_t *dst, int64_t n, int kind);
/* n <= 256 raw values of a kind from src, sorted into dst as values in
 * one pass; false when a float row holds a NaN or -0.0. */
bool cm_sort_avx512_small_from_u32(const uint32_t *src, uint32_t *dst, int64_t n, int kind);
/* Quickselect: a[kth] becomes the key that sorts there, no larger key
 * before it, no smaller one after. */
void cm_sort_avx512_select_u32(uint32_t *a, int64_t n, int64_t kth);
void cm_sort_avx512_select_u64(uint64_t *a, int64_t n, int64_t kth);
/* From i (>= 1), the end of the 16-key steps over which a raw row keeps
 * rising (up) or falling; falling sets *mixed where equal keys of
 * different values (-0.0 and 0.0, NaNs) stand side by side. */
int64_t cm_sort_avx512_run_u32(const uint32_t *s, int64_t n, int64_t i, int kind, bool up,
                               bool *mixed);
void cm_sort_avx512_reverse_u32(const uint32_t *src, uint32_t *dst, int64_t n);
/* Positions for an argpartition around the key p that sorts to kth: of
 * the keys < p, then == p, then > p, each class in order. */
void cm_sort_avx512_argpart_u32(const uint32_t *k, int64_t n, uint32_t p, uint32_t *idx);
/* Counts, in cnt, the keys equal to each of the d <= 32 sorted distinct
 * keys t (padded to 32 with the largest key), and with rank (room for n)
 * stores each key's index in t.  k holds raw values of the kind given
 * (CM_KEY32_*).  False when some key is not among them (or is a NaN or
 * -0.0): cnt and rank are then partly written. */
bool cm_sort_avx512_rank_u32(const uint32_t *k, int64_t n, int kind, const uint32_t *t, int d,
                             uint8_t *rank, int64_t *cnt);
#else
#define CM_SORT_HAVE_AVX512 0
#endif

#endif
