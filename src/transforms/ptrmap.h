/* A small open-addressing map from node pointers to slots, used by the
 * graph walks of the transforms (which node has which cotangent, which
 * nodes lie between the inputs and the outputs). */
#ifndef CMLX_TRANSFORMS_PTRMAP_H
#define CMLX_TRANSFORMS_PTRMAP_H

#include <stdint.h>
#include <stdlib.h>

typedef struct cm_ptrmap {
  const void **keys;
  void **vals;
  size_t cap, len; /* cap is a power of two, kept at most half full */
} cm_ptrmap;

static inline size_t cm_ptrmap_hash(const void *p, size_t cap) {
  uint64_t x = (uint64_t)(uintptr_t)p;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  return (size_t)x & (cap - 1);
}

static inline void cm_ptrmap_free(cm_ptrmap *m) {
  free(m->keys);
  free(m->vals);
  m->keys = NULL;
  m->vals = NULL;
  m->cap = m->len = 0;
}

/* Slot for key (NULL if absent). */
static inline void **cm_ptrmap_find(const cm_ptrmap *m, const void *key) {
  if (!m->cap) return NULL;
  for (size_t i = cm_ptrmap_hash(key, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (m->keys[i] == key) return &m->vals[i];
    if (!m->keys[i]) return NULL;
  }
}

/* Slot for key, inserting it (value NULL) if absent; NULL if out of memory. */
static inline void **cm_ptrmap_insert(cm_ptrmap *m, const void *key) {
  if (2 * (m->len + 1) > m->cap) {
    size_t ncap = m->cap ? m->cap * 2 : 64;
    const void **nk = calloc(ncap, sizeof *nk);
    void **nv = calloc(ncap, sizeof *nv);
    if (!nk || !nv) {
      free(nk);
      free(nv);
      return NULL;
    }
    for (size_t i = 0; i < m->cap; i++) {
      if (!m->keys[i]) continue;
      size_t j = cm_ptrmap_hash(m->keys[i], ncap);
      while (nk[j]) j = (j + 1) & (ncap - 1);
      nk[j] = m->keys[i];
      nv[j] = m->vals[i];
    }
    free(m->keys);
    free(m->vals);
    m->keys = nk;
    m->vals = nv;
    m->cap = ncap;
  }
  size_t i = cm_ptrmap_hash(key, m->cap);
  while (m->keys[i] && m->keys[i] != key) i = (i + 1) & (m->cap - 1);
  if (!m->keys[i]) {
    m->keys[i] = key;
    m->vals[i] = NULL;
    m->len++;
  }
  return &m->vals[i];
}

#endif
