/* Parameter blocks beyond construction: comparison and hashing (graph
 * simplification and compile merge nodes on them) and serialisation (export
 * writes them).  Plain-data blocks are handled by their bytes; a primitive
 * whose block holds pointers brings its own hooks (core/prim.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"

bool cm_node_params_equal(const cm_array *a, const cm_array *b) {
  if (a->prim != b->prim || a->params_size != b->params_size) return false;
  if (!a->params_size) return true;
  if (a->prim && a->prim->params_equal)
    return a->prim->params_equal(a->params, b->params, a->params_size);
  return memcmp(a->params, b->params, a->params_size) == 0;
}

/* FNV-1a: small blocks, no need for anything stronger. */
static uint64_t hash_bytes(uint64_t h, const void *p, size_t n) {
  const unsigned char *c = p;
  for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 0x100000001b3ull;
  return h;
}

uint64_t cm_node_params_hash(const cm_array *a) {
  uint64_t h = 0xcbf29ce484222325ull;
  if (a->prim) h = hash_bytes(h, a->prim->name, strlen(a->prim->name));
  if (!a->params_size) return h;
  if (a->prim && a->prim->params_hash) return h ^ a->prim->params_hash(a->params, a->params_size);
  return hash_bytes(h, a->params, a->params_size);
}

static int bytes_append(cm_bytes *out, const void *p, size_t n) {
  if (out->len + n > out->cap) {
    size_t cap = out->cap ? out->cap : 64;
    while (cap < out->len + n) cap *= 2;
    unsigned char *d = realloc(out->data, cap);
    if (!d) return cm_error(CM_ERR_MEMORY, "[export] Out of memory.");
    out->data = d;
    out->cap = cap;
  }
  if (n) memcpy(out->data + out->len, p, n);
  out->len += n;
  return 0;
}

int cm_node_params_save(const cm_array *a, cm_bytes *out) {
  const cm_prim *prim = a->prim;
  if (!prim) return cm_error(CM_ERR_VALUE, "[export] The array has no graph to save.");
  if (prim->params_save) return prim->params_save(a->params, a->params_size, out);
  if (prim->params_destroy)
    return cm_error(CM_ERR_VALUE, "[export] Cannot save the parameters of %s.", prim->name);
  return bytes_append(out, a->params, a->params_size);
}

int cm_params_load(const cm_prim *prim, const unsigned char *data, size_t len, cm_params **p,
                   size_t *size) {
  *p = NULL;
  *size = 0;
  if (prim->params_load) return prim->params_load(data, len, p, size);
  if (prim->params_destroy)
    return cm_error(CM_ERR_VALUE, "[import] Cannot load the parameters of %s.", prim->name);
  /* the same check a node applies, on an aligned copy: a hostile file
   * must not make a kernel read past its block */
  void *b = len ? malloc(len) : NULL;
  if (len && !b) return cm_error(CM_ERR_MEMORY, "[import] Out of memory.");
  if (len) memcpy(b, data, len);
  size_t want = prim->params_size;
  if (len >= want && want && prim->params_extent) want = prim->params_extent(b);
  if (len != want) {
    free(b);
    return cm_error(CM_ERR_VALUE, "[import] %s parameters of %zu bytes, expected %zu.", prim->name,
                    len, want);
  }
  *p = b;
  *size = len;
  return 0;
}

void cm_params_free(const cm_prim *prim, cm_params *p) {
  if (p && prim->params_destroy) prim->params_destroy(p);
  free(p);
}

/* ---- the typed accessors' checks (primitives/primitive.h) ---- */

void cm_params_check_failed(const char *type, const char *prim, size_t have, size_t want) {
  fprintf(stderr,
          "cmlx: internal error: %s parameters read as %s (%zu bytes, %zu needed, or another "
          "family's block)\n",
          prim, type, have, want);
  abort();
}

bool cm_params_type_matches(const cm_prim *prim, const char *type) {
  /* A descriptor that has not declared its type yet is not checked. */
  return !prim->params_type || strcmp(prim->params_type, type) == 0;
}
