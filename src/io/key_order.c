/* The order in which MLX hands out the entries of a name -> array map.
 *
 * MLX keeps loaded and to-be-saved arrays in a std::unordered_map of
 * std::string, and everything a user sees follows that map's iteration
 * order: the keys of the dict mx.load returns, the members of the npz and
 * the tensors of the GGUF file mx.savez / mx.save_gguf write, mlx-c's map
 * iterators.  Code can depend on it: a model whose sanitize keeps "the
 * first" of two tied weights loads different parameters when the order
 * differs.  So cmlx reproduces it.
 *
 * The order is a pure function of the keys and the order they were
 * inserted in, for GNU libstdc++ (the C++ library of the Linux wheels):
 * - the hash is std::hash<std::string> (64-bit size_t);
 * - the buckets start at 13 and, when an insertion makes the count exceed
 *   the bucket count (maximum load factor 1), grow to the table below,
 *   read off libstdc++'s prime rehash policy;
 * - the nodes form one singly linked list, each bucket's nodes adjacent: a
 *   key whose bucket is empty goes to the front of the list, otherwise to
 *   the front of its bucket's run, and a rehash walks the old list, placing
 *   each node the same way in the new buckets.
 * tests/python/test_io_key_order.py checks it against real MLX and against
 * a compiled std::unordered_map. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/io.h"

/* Bucket counts in growth order; the map rehashes to the next one when an
 * insertion makes the size exceed the current one. */
static const uint64_t bucket_counts[] = {
    13,       29,        59,        127,       257,       541,        1109,
    2357,     5087,      10273,     20753,     42043,     85229,      172933,
    351061,   712697,    1447153,   2938679,   5967347,   12117689,   24607243,
    49969847, 101473717, 206062531, 418451333, 849749479, 1725587117, 3504151727u};

/* std::hash<std::string> of libstdc++ on 64-bit targets: a MurmurHash2
 * variant over 8-byte words (little-endian), with libstdc++'s seed. */
static uint64_t shift_mix(uint64_t v) { return v ^ (v >> 47); }

uint64_t cm_std_string_hash(const char *s, size_t len) {
  const uint64_t mul = ((uint64_t)0xc6a4a793u << 32) + 0x5bd1e995u;
  const unsigned char *p = (const unsigned char *)s;
  size_t whole = len & ~(size_t)7;
  uint64_t h = 0xc70f6907u ^ ((uint64_t)len * mul);
  for (size_t i = 0; i < whole; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    h = (h ^ (shift_mix(w * mul) * mul)) * mul;
  }
  if (len & 7) {
    uint64_t tail = 0;
    for (size_t i = len; i-- > whole;) tail = tail << 8 | p[i];
    h = (h ^ tail) * mul;
  }
  return shift_mix(shift_mix(h) * mul);
}

/* The list: next[i] is the node after i, NONE at the end; node n stands
 * for the list's head ("before begin").  before[b] is the node whose
 * successor is bucket b's first node, or NONE when b is empty. */
#define NONE SIZE_MAX

typedef struct hash_list {
  size_t *next, *before;
  const uint64_t *hash;
  uint64_t nbuckets;
} hash_list;

/* Put node i at the front of bucket b's run (b empty: the list's front). */
static void place(hash_list *l, size_t head, size_t i, uint64_t b, uint64_t *front_bucket) {
  if (l->before[b] != NONE) {
    size_t p = l->before[b];
    l->next[i] = l->next[p];
    l->next[p] = i;
    return;
  }
  l->next[i] = l->next[head];
  l->next[head] = i;
  /* the bucket that was at the front now starts after i */
  if (l->next[i] != NONE) l->before[*front_bucket] = i;
  l->before[b] = head;
  *front_bucket = b;
}

size_t *cm_hash_map_order(const void *keys, size_t stride, size_t n) {
  size_t *order = malloc(sizeof(size_t) * (n ? n : 1));
  if (!order) {
    cm_error(CM_ERR_MEMORY, "[load] Out of memory.");
    return NULL;
  }
  const size_t nb_max = sizeof bucket_counts / sizeof bucket_counts[0];
  /* beyond the table (or off 64-bit targets) the order is the insertion order */
  if (sizeof(size_t) != 8 || n > bucket_counts[nb_max - 1] || n < 2) {
    for (size_t i = 0; i < n; i++) order[i] = i;
    return order;
  }
  size_t cap = 1;
  while (cap < nb_max && bucket_counts[cap - 1] < n) cap++;
  uint64_t *hash = malloc(sizeof(uint64_t) * n);
  size_t *next = malloc(sizeof(size_t) * (n + 1));
  size_t *before = malloc(sizeof(size_t) * (size_t)bucket_counts[cap - 1]);
  if (!hash || !next || !before) {
    free(hash), free(next), free(before), free(order);
    cm_error(CM_ERR_MEMORY, "[load] Out of memory.");
    return NULL;
  }
  for (size_t i = 0; i < n; i++) {
    const char *k = *(const char *const *)((const char *)keys + i * stride);
    hash[i] = cm_std_string_hash(k, strlen(k));
  }
  const size_t head = n;
  hash_list l = {.next = next, .before = before, .hash = hash, .nbuckets = bucket_counts[0]};
  next[head] = NONE;
  for (uint64_t b = 0; b < l.nbuckets; b++) before[b] = NONE;
  uint64_t front_bucket = 0;
  size_t level = 0;
  for (size_t i = 0; i < n; i++) {
    if (i + 1 > l.nbuckets) {
      /* rehash: walk the old list into the new buckets */
      l.nbuckets = bucket_counts[++level];
      for (uint64_t b = 0; b < l.nbuckets; b++) before[b] = NONE;
      size_t p = next[head];
      next[head] = NONE;
      front_bucket = 0;
      while (p != NONE) {
        size_t after = next[p];
        place(&l, head, p, hash[p] % l.nbuckets, &front_bucket);
        p = after;
      }
    }
    place(&l, head, i, hash[i] % l.nbuckets, &front_bucket);
  }
  size_t k = 0;
  for (size_t p = next[head]; p != NONE; p = next[p]) order[k++] = p;
  free(hash), free(next), free(before);
  return order;
}

int cm_named_arrays_map_order(const cm_named_arrays *m, cm_named_arrays *view) {
  *view = (cm_named_arrays){0};
  size_t *order = cm_hash_map_order(m->keys, sizeof *m->keys, m->n);
  char **keys = malloc(sizeof *keys * (m->n ? m->n : 1));
  cm_array **arrs = malloc(sizeof *arrs * (m->n ? m->n : 1));
  if (!order || !keys || !arrs) {
    free(order), free(keys), free(arrs);
    return order ? cm_error(CM_ERR_MEMORY, "[save] Out of memory.") : -1;
  }
  for (size_t i = 0; i < m->n; i++) keys[i] = m->keys[order[i]], arrs[i] = m->arrs[order[i]];
  free(order);
  *view = (cm_named_arrays){.n = m->n, .cap = m->n, .keys = keys, .arrs = arrs};
  return 0;
}

int cm_metadata_map_order(const cm_metadata *m, cm_metadata *view) {
  *view = (cm_metadata){0};
  if (!m) return 0;
  size_t *order = cm_hash_map_order(m->keys, sizeof *m->keys, m->n);
  char **keys = malloc(sizeof *keys * (m->n ? m->n : 1));
  cm_meta_value *vals = malloc(sizeof *vals * (m->n ? m->n : 1));
  if (!order || !keys || !vals) {
    free(order), free(keys), free(vals);
    return order ? cm_error(CM_ERR_MEMORY, "[save] Out of memory.") : -1;
  }
  for (size_t i = 0; i < m->n; i++) keys[i] = m->keys[order[i]], vals[i] = m->vals[order[i]];
  free(order);
  *view = (cm_metadata){.n = m->n, .cap = m->n, .keys = keys, .vals = vals};
  return 0;
}

void cm_map_order_view_free(char **keys, void *vals) {
  free(keys);
  free(vals);
}
