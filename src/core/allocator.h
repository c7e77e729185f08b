/* Buffers and the allocator.  A buffer is a ref-counted block of memory
 * shared by an array and its views.  Freed blocks go to a size-classed cache
 * so training loops stop calling malloc after the first step; the counters
 * behind mx.get_active_memory() and friends live here. */
#ifndef CMLX_CORE_ALLOCATOR_H
#define CMLX_CORE_ALLOCATOR_H

#include <stdatomic.h>
#include <stddef.h>

typedef struct cm_buffer {
  atomic_long refs;
  void *ptr;
  size_t nbytes;   /* what was asked for */
  size_t capacity; /* what the size class gave; 0 for wrapped memory */
  /* Memory owned by someone else (mlx_array_new_data_managed, NumPy):
   * released through dtor(payload) instead of the cache. */
  void (*dtor)(void *payload);
  void *payload;
  struct cm_buffer *next_free; /* cache free-list link */
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
void cm_memory_reset_peak(void);
size_t cm_memory_cache(void);
size_t cm_memory_limit(void);
size_t cm_memory_set_limit(size_t limit);       /* returns the previous limit */
size_t cm_memory_set_cache_limit(size_t limit); /* returns the previous limit */
size_t cm_memory_set_wired_limit(size_t limit); /* CPU: recorded only */
void cm_memory_clear_cache(void);
size_t cm_memory_total_ram(void);

#endif
