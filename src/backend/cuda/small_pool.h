/* Cells for small blocks (scalars, shapes, tiny vectors) carved out of
 * large slabs.  A managed-memory allocation costs a driver call and at
 * least a page, so the CUDA allocator serves blocks of at most
 * CM_SMALL_CELL bytes from here.  The free list lives in host memory
 * beside the slabs, never inside them: writing it into a cell would pull
 * the cell's page back to the host.  Pure C: the slabs come from callbacks,
 * so the unit tests run it on malloc. */
#ifndef CMLX_BACKEND_CUDA_SMALL_POOL_H
#define CMLX_BACKEND_CUDA_SMALL_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CM_SMALL_CELL 256
#define CM_SMALL_SLAB (64 * 1024)

typedef struct cm_small_pool {
  void *(*slab_alloc)(size_t size, void *ctx); /* NULL when there is no memory */
  void (*slab_free)(void *ptr, size_t size, void *ctx);
  void *ctx;
  char **slabs;
  size_t nslabs, cap;
  int32_t *free_cells; /* cell numbers (slab * cells per slab + cell) */
  size_t nfree;
  size_t cells_used;
  pthread_mutex_t mu;
} cm_small_pool;

void cm_small_pool_init(cm_small_pool *p, void *(*slab_alloc)(size_t, void *),
                        void (*slab_free)(void *, size_t, void *), void *ctx);
/* Give every slab back (every cell must have been freed). */
void cm_small_pool_destroy(cm_small_pool *p);
/* A cell of CM_SMALL_CELL bytes, or NULL when no slab can be had. */
void *cm_small_pool_alloc(cm_small_pool *p);
/* Whether ptr is a cell of this pool. */
bool cm_small_pool_owns(cm_small_pool *p, const void *ptr);
/* Give a cell back; false when ptr is not one of the pool's cells. */
bool cm_small_pool_free(cm_small_pool *p, void *ptr);
/* Cells handed out and not yet given back. */
size_t cm_small_pool_in_use(cm_small_pool *p);

#endif
