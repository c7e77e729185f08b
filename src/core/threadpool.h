/* One worker pool shared by all kernels.  Large loops are cut into up to
 * four chunks per thread, which the threads (the caller included) take in
 * turn.  Kernels must not let results depend on the cut: reductions
 * combine fixed-size blocks.  CMLX_NUM_THREADS overrides the size
 * (default: the usable cores). */
#ifndef CMLX_CORE_THREADPOOL_H
#define CMLX_CORE_THREADPOOL_H

#include <stdint.h>

typedef void (*cm_range_fn)(void *ctx, int64_t begin, int64_t end);

/* Run fn over [0, n) split into ranges.  Loops shorter than 2 * min_chunk
 * run inline on the caller: waking threads costs more than they save. */
void cm_parallel_for(int64_t n, int64_t min_chunk, cm_range_fn fn, void *ctx);
int cm_num_threads(void);

/* Suggested min_chunk for a loop doing roughly `cost` cheap operations per
 * element: about 32K operations per chunk. */
static inline int64_t cm_grain(int64_t cost) { return cost > 0 ? (1 << 15) / cost + 1 : 1 << 15; }

#endif
