/* Walking arrays of any layout.  A cm_layout describes up to four operands
 * of one shape, each with its own element strides, after merging the axes
 * that are contiguous in every operand (a row-contiguous array becomes one
 * long row).  Kernels loop over rows; each row is a 1-D run with a fixed
 * stride per operand, which is where the fast paths live. */
#ifndef CMLX_BACKEND_CPU_STRIDED_H
#define CMLX_BACKEND_CPU_STRIDED_H

#include <stdint.h>

#include "core/array.h"

#define CM_LAYOUT_MAX_OPS 4

typedef struct cm_layout {
  int ndim; /* >= 1 after collapsing; a 0-d array is one row of length 1 */
  int nops;
  int64_t shape[CM_MAX_DIMS];
  int64_t strides[CM_LAYOUT_MAX_OPS][CM_MAX_DIMS];
} cm_layout;

/* Collapse the shared shape with each operand's strides. */
void cm_layout_init(cm_layout *L, int ndim, const int32_t *shape, int nops,
                    const int64_t *const *strides);
/* Convenience: layout of arrays that all have out's shape. */
void cm_layout_of(cm_layout *L, cm_array *const *arrays, int n);

static inline int64_t cm_layout_rows(const cm_layout *L) {
  int64_t r = 1;
  for (int i = 0; i < L->ndim - 1; i++) r *= L->shape[i];
  return r;
}
static inline int64_t cm_layout_row_len(const cm_layout *L) { return L->shape[L->ndim - 1]; }
static inline int64_t cm_layout_row_stride(const cm_layout *L, int op) {
  return L->strides[op][L->ndim - 1];
}

/* Row cursor: element offsets of each operand at the start of the current
 * row, advanced incrementally (no division per row). */
typedef struct cm_row_cursor {
  const cm_layout *L;
  int64_t index[CM_MAX_DIMS];
  int64_t offset[CM_LAYOUT_MAX_OPS];
} cm_row_cursor;

void cm_row_cursor_seek(cm_row_cursor *c, const cm_layout *L, int64_t row);
void cm_row_cursor_next(cm_row_cursor *c);

#endif
