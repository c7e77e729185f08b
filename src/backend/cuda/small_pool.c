/* The small-block pool (small_pool.h). */
#include "backend/cuda/small_pool.h"

#include <stdlib.h>

#define CELLS_PER_SLAB (CM_SMALL_SLAB / CM_SMALL_CELL)

void cm_small_pool_init(cm_small_pool *p, void *(*slab_alloc)(size_t, void *),
                        void (*slab_free)(void *, size_t, void *), void *ctx) {
  *p = (cm_small_pool){.slab_alloc = slab_alloc, .slab_free = slab_free, .ctx = ctx};
  pthread_mutex_init(&p->mu, NULL);
}

void cm_small_pool_destroy(cm_small_pool *p) {
  for (size_t i = 0; i < p->nslabs; i++) p->slab_free(p->slabs[i], CM_SMALL_SLAB, p->ctx);
  free(p->slabs);
  free(p->free_cells);
  pthread_mutex_destroy(&p->mu);
  p->slabs = NULL;
  p->free_cells = NULL;
  p->nslabs = p->cap = p->nfree = p->cells_used = 0;
}

/* One more slab, its cells pushed on the free list (highest first, so
 * cells go out in address order).  -1 when there is no memory. */
static int add_slab(cm_small_pool *p) {
  if (p->nslabs == p->cap) {
    size_t cap = p->cap ? p->cap * 2 : 8;
    char **s = realloc(p->slabs, cap * sizeof *s);
    if (!s) return -1;
    p->slabs = s;
    int32_t *f = realloc(p->free_cells, cap * CELLS_PER_SLAB * sizeof *f);
    if (!f) return -1;
    p->free_cells = f;
    p->cap = cap;
  }
  char *slab = p->slab_alloc(CM_SMALL_SLAB, p->ctx);
  if (!slab) return -1;
  size_t k = p->nslabs++;
  p->slabs[k] = slab;
  for (int c = CELLS_PER_SLAB - 1; c >= 0; c--)
    p->free_cells[p->nfree++] = (int32_t)(k * CELLS_PER_SLAB + (size_t)c);
  return 0;
}

void *cm_small_pool_alloc(cm_small_pool *p) {
  pthread_mutex_lock(&p->mu);
  void *cell = NULL;
  if (p->nfree || !add_slab(p)) {
    int32_t c = p->free_cells[--p->nfree];
    cell = p->slabs[c / CELLS_PER_SLAB] + (size_t)(c % CELLS_PER_SLAB) * CM_SMALL_CELL;
    p->cells_used++;
  }
  pthread_mutex_unlock(&p->mu);
  return cell;
}

/* The cell number of ptr, or -1 (the caller holds the lock). */
static long cell_of(const cm_small_pool *p, const void *ptr) {
  const char *c = ptr;
  for (size_t k = 0; k < p->nslabs; k++) {
    const char *base = p->slabs[k];
    if (c >= base && c < base + CM_SMALL_SLAB) {
      size_t off = (size_t)(c - base);
      if (off % CM_SMALL_CELL) return -1;
      return (long)(k * CELLS_PER_SLAB + off / CM_SMALL_CELL);
    }
  }
  return -1;
}

bool cm_small_pool_owns(cm_small_pool *p, const void *ptr) {
  pthread_mutex_lock(&p->mu);
  bool owns = cell_of(p, ptr) >= 0;
  pthread_mutex_unlock(&p->mu);
  return owns;
}

bool cm_small_pool_free(cm_small_pool *p, void *ptr) {
  pthread_mutex_lock(&p->mu);
  long c = cell_of(p, ptr);
  if (c >= 0) {
    p->free_cells[p->nfree++] = (int32_t)c;
    p->cells_used--;
  }
  pthread_mutex_unlock(&p->mu);
  return c >= 0;
}

size_t cm_small_pool_in_use(cm_small_pool *p) {
  pthread_mutex_lock(&p->mu);
  size_t n = p->cells_used;
  pthread_mutex_unlock(&p->mu);
  return n;
}
