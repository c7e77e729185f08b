/* Buffers and the allocator.  A buffer is a ref-counted block of memory
 * shared by an array and its views.  Freed blocks go to a small cache (32
 * MiB by default, as MLX's CPU allocator) so the temporaries of a training
 * step are reused instead of faulted in again; the counters behind
 * mx.get_active_memory() and friends live here. */
#ifndef CMLX_CORE_ALLOCATOR_H
#define CMLX_CORE_ALLOCATOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct cm_buffer {
  atomic_long refs;
  void *ptr;
  size_t nbytes; /* what the array asked for */
  /* The block's size as the counters see it: what it was first allocated
   * for.  A cached block reused for a smaller request keeps its size, as
   * in MLX, so active memory is what MLX reports.  0 for wrapped memory. */
  size_t size;
  bool wrapped; /* memory owned by someone else: never cached or donated */
  /* Memory owned by someone else (mlx_array_new_data_managed, NumPy):
   * released through dtor(payload) instead of the cache. */
  void (*dtor)(void *payload);
  void *payload;
  /* allocator-private: links while the block sits in the cache */
  struct cm_buffer *lru_prev, *lru_next, *bin_next;
} cm_buffer;

/* New buffer with refs = 1, or NULL with a MemoryError set. */
cm_buffer *cm_buffer_alloc(size_t nbytes);
/* Adopt caller memory; dtor(payload) runs when the last reference goes. */
cm_buffer *cm_buffer_wrap(void *ptr, size_t nbytes, void (*dtor)(void *), void *payload);
static inline void cm_buffer_retain(cm_buffer *b) {
  atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
}
void cm_buffer_release(cm_buffer *b);

size_t cm_memory_active(void);
size_t cm_memory_peak(void);
void cm_memory_reset_peak(void); /* to 0, as MLX */
size_t cm_memory_cache(void);
size_t cm_memory_limit(void);
size_t cm_memory_set_limit(size_t limit);       /* returns the previous limit */
size_t cm_memory_set_cache_limit(size_t limit); /* returns the previous limit */
size_t cm_memory_set_wired_limit(size_t limit); /* CPU: nothing to wire; returns 0 */
void cm_memory_clear_cache(void);
size_t cm_memory_total_ram(void);

#endif
