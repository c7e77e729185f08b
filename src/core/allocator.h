/* Buffers and the allocator.  A buffer is a ref-counted block of memory
 * shared by an array and its views.  Freed blocks go to a small cache so
 * the temporaries of a training step are reused instead of faulted in
 * again; the counters behind mx.get_active_memory() and friends live here.
 *
 * One allocator interface, one implementation per device type.  The cache
 * policy, the counters (active, peak, cache) and the limits are the
 * core's, one instance per device type; a backend supplies only its raw
 * memory (cm_allocator_impl in core/backend.h: raw alloc/free, total
 * memory, default limits), registered with its cm_backend.  The CPU's is
 * src/backend/cpu/allocator.c.  A buffer remembers the device type it came
 * from, so releasing it returns it to that device's cache.
 *
 * Which allocator a buffer comes from: a kernel's outputs (cm_alloc_output
 * in core/array.h) come from the device of the node's stream; everything
 * made on the host (arrays from data, loads, NumPy buffers) comes from the
 * CPU's (cm_buffer_alloc).
 *
 * The memory API (mx.get_active_memory, mlx_get_peak_memory, ...) sees the
 * devices as one: active and cache are sums over the devices, the peak is
 * the peak of that sum, clear_cache empties every device's cache, and
 * set_memory_limit / set_cache_limit set every device's limit (a device
 * whose allocator is first used later starts from the value set).  This is
 * what MLX reports: an MLX build has one allocator (the CUDA build's
 * covers every array, CPU-stream ones included), so its counters are
 * totals over everything an array holds, and its limits are that
 * allocator's.  A limit read back (cm_memory_limit, the previous value the
 * setters return) is the accelerator's when one is present, as in a CUDA
 * build, else the CPU's.  With only the CPU every number is the CPU
 * allocator's, as before.  The _on variants give one device type's own
 * numbers (tests, a backend's own reporting). */
#ifndef CMLX_CORE_ALLOCATOR_H
#define CMLX_CORE_ALLOCATOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/stream.h"

typedef struct cm_buffer {
  atomic_long refs;
  void *ptr;
  size_t nbytes; /* what the array asked for */
  /* The block's size as the counters see it: what it was first allocated
   * for.  A cached block reused for a smaller request keeps its size, as
   * in MLX, so active memory is what MLX reports.  0 for wrapped memory. */
  size_t size;
  bool wrapped; /* memory owned by someone else: never cached or donated */
  /* Allocator-private: the block's size was asked for again after a
   * block of that size was freed (core/allocator.c: such blocks may use
   * the whole cache limit, others only MLX's 32 MiB of it). */
  bool recurring;
  /* The device type (cm_device_type) whose allocator made the block; its
   * release goes back to that device's cache and counters. */
  unsigned char device;
  /* Memory owned by someone else (mlx_array_new_data_managed, NumPy):
   * released through dtor(payload) instead of the cache. */
  void (*dtor)(void *payload);
  void *payload;
  /* allocator-private: links while the block sits in the cache, and the
   * pool's allocation clock when it was cached (its age) */
  struct cm_buffer *lru_prev, *lru_next, *bin_next;
  size_t stamp;
} cm_buffer;

/* New buffer with refs = 1 from the CPU's allocator (host-side creation),
 * or NULL with a MemoryError set. */
cm_buffer *cm_buffer_alloc(size_t nbytes);
/* The same from device type t's allocator (the backend registered for t);
 * NULL with a MemoryError when it has no memory, or a RuntimeError when no
 * backend with an allocator is registered for t. */
cm_buffer *cm_buffer_alloc_on(cm_device_type t, size_t nbytes);
/* Adopt caller memory; dtor(payload) runs when the last reference goes. */
cm_buffer *cm_buffer_wrap(void *ptr, size_t nbytes, void (*dtor)(void *), void *payload);
static inline void cm_buffer_retain(cm_buffer *b) {
  atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
}
void cm_buffer_release(cm_buffer *b);

/* ---- the memory API: totals over the devices (see above) ---- */
size_t cm_memory_active(void);
size_t cm_memory_peak(void);
void cm_memory_reset_peak(void); /* to 0, as MLX (every device's too) */
size_t cm_memory_cache(void);
size_t cm_memory_limit(void);
size_t cm_memory_set_limit(size_t limit);       /* returns the previous limit */
/* The same, choosing whether the limit is enforced: with relaxed false an
 * allocation of new memory that would take the active memory over the
 * limit first empties the cache, then waits for scheduled work that can
 * still finish, and then fails with MLX's MemoryError ("[malloc] Unable to
 * allocate N bytes.").  Relaxed (cm_memory_set_limit's choice, and MLX's
 * default) it only empties the cache.  Returns the previous limit. */
size_t cm_memory_set_limit_relaxed(size_t limit, bool relaxed);
size_t cm_memory_set_cache_limit(size_t limit); /* returns the previous limit */
size_t cm_memory_set_wired_limit(size_t limit); /* CPU: nothing to wire; returns 0 */
void cm_memory_clear_cache(void);
size_t cm_memory_total_ram(void); /* the CPU allocator's total memory */

/* ---- one device type's own numbers ----
 * 0 for a device type whose allocator was never used (and, for the
 * limits, that has no backend with an allocator). */
size_t cm_memory_active_on(cm_device_type t);
size_t cm_memory_peak_on(cm_device_type t);
size_t cm_memory_cache_on(cm_device_type t);
size_t cm_memory_limit_on(cm_device_type t);
size_t cm_memory_cache_limit_on(cm_device_type t);
void cm_memory_clear_cache_on(cm_device_type t);

#endif
