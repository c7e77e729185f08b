/* The elementwise driver shared by the Binary and Select kernels: choose
 * the output buffer (donate an input, keep a shared permuted layout, or
 * allocate row-major), walk all operands in the output's memory order, and
 * split the work over the thread pool (flat ranges for one long run, rows
 * or pieces of rows otherwise; small work stays on the calling thread). */
#ifndef CMLX_BACKEND_CPU_BINARY_LOOP_H
#define CMLX_BACKEND_CPU_BINARY_LOOP_H

#include "backend/cpu/strided.h"
#include "core/array.h"

/* `rows` runs of n elements: ptrs[k] is operand k's first element,
 * strides[k] its step in elements along a run (0 for a broadcast operand)
 * and row_strides[k] from one run to the next.  Operand 0 is the output. */
typedef void (*cm_ew_seg_fn)(void *ctx, char *const *ptrs, const int64_t *strides, int64_t n,
                             int64_t rows, const int64_t *row_strides);

/* Give out a buffer: reuse the first of in[0..n) that can be donated
 * (same item size, dense, only holder), else allocate, keeping a dense
 * permuted layout of an input when every other input shares it or is a
 * broadcast scalar (so a.T + b.T stays one flat loop). */
int cm_ew_output(cm_array *out, cm_array *const *in, int n);

/* Run seg over every element.  arrays[0] is the output, arrays[1..nops)
 * the inputs, all of out's shape; data[k] is operand k's element 0 (read
 * before a donation moved the buffer).  cost: rough work per element in
 * simple operations (1 for an add), to size the parallel chunks. */
void cm_ew_run(cm_array *const *arrays, char *const *data, int nops, int64_t cost, cm_ew_seg_fn seg,
               void *ctx);

#endif
