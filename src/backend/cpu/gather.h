/* CPU kernels for the indexing primitives that read: Gather and GatherAxis
 * (primitives/indexing.h), plus the index helpers the scatter kernels
 * share.
 *
 * Out-of-range indices.  MLX does no bounds check (it reads or writes
 * whatever memory is there).  cmlx never touches memory outside a buffer:
 * by default a gather clamps each (wrapped) index into range and a scatter
 * drops the update of an out-of-range index; with the environment variable
 * CMLX_CHECK_INDICES=1 both raise IndexError from the kernel instead (the
 * error comes out of eval).  Negative indices wrap once, as in MLX:
 * -1 is the last element, -n the first. */
#ifndef CMLX_BACKEND_CPU_GATHER_H
#define CMLX_BACKEND_CPU_GATHER_H

#include <stdbool.h>
#include <stdint.h>

#include "primitives/primitive.h"

int cm_cpu_gather(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_gather_axis(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

/* True when CMLX_CHECK_INDICES is set to something other than "" or "0"
 * (read once per process). */
bool cm_cpu_check_indices(void);

/* One element of an integer index array as int64 (bool and floats never
 * reach the kernels: the op constructors refuse them). */
static inline int64_t cm_cpu_load_index(const void *p, cm_dtype t) {
  switch (t) {
  case CM_UINT8: return *(const uint8_t *)p;
  case CM_UINT16: return *(const uint16_t *)p;
  case CM_UINT32: return *(const uint32_t *)p;
  case CM_UINT64: {
    uint64_t v = *(const uint64_t *)p;
    return v > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)v;
  }
  case CM_INT8: return *(const int8_t *)p;
  case CM_INT16: return *(const int16_t *)p;
  case CM_INT32: return *(const int32_t *)p;
  default: return *(const int64_t *)p;
  }
}

/* Records the first bad index seen by any thread of a kernel. */
typedef struct cm_index_fault {
  _Atomic int hit;
  int64_t value, dim;
  int axis;
} cm_index_fault;

void cm_index_fault_note(cm_index_fault *f, int64_t value, int axis, int64_t dim);
/* -1 with "[op] Index v is out of bounds for axis a with size n."
 * (IndexError) if a fault was noted, else 0. */
int cm_index_fault_raise(cm_index_fault *f, const char *op);

/* The index arrays of a Gather/Scatter node, all of one (broadcast) shape,
 * and what they index: idx j selects along axis[j] of a target with that
 * axis' length dim[j] and element stride stride[j]; a start must leave
 * room for a window of win[j] elements (valid starts: 0..dim-win). */
typedef struct cm_index_set {
  int n;
  int ndim;
  const int32_t *shape;
  int64_t count; /* positions: the product of shape */
  const char *data[CM_MAX_DIMS];
  const int64_t *strides[CM_MAX_DIMS];
  cm_dtype dtype[CM_MAX_DIMS];
  int64_t isz[CM_MAX_DIMS];
  int axis[CM_MAX_DIMS];
  int64_t dim[CM_MAX_DIMS], win[CM_MAX_DIMS], stride[CM_MAX_DIMS];
  /* optional: one more array walked with the positions (a scatter's
   * updates over their leading, index-shaped axes) */
  const int64_t *extra_strides;
  bool checked; /* CMLX_CHECK_INDICES */
  cm_index_fault fault;
} cm_index_set;

/* Fill s from the n index arrays idx (borrowed) against a target with the
 * given shape/strides (element strides), windows win (target ndim
 * entries) and axes. */
void cm_index_set_init(cm_index_set *s, cm_array *const *idx, int n, const uint8_t *axes,
                       const int32_t *tshape, const int64_t *tstrides, const int32_t *win);

/* A position cursor over the index shape: per-array element offsets. */
typedef struct cm_index_cursor {
  const cm_index_set *s;
  int64_t pos[CM_MAX_DIMS];
  int64_t off[CM_MAX_DIMS];
  int64_t extra_off;
} cm_index_cursor;

void cm_index_cursor_seek(cm_index_cursor *c, const cm_index_set *s, int64_t p);
void cm_index_cursor_next(cm_index_cursor *c);

/* Element offset into the target of the cursor's position (negative when
 * the target has negative strides).  In range: true with *off set.  Out
 * of range: in checked mode the fault is noted and false returned;
 * otherwise clamp ? true with the clamped offset : false (dropped). */
bool cm_index_offset(cm_index_set *s, const cm_index_cursor *c, bool clamp, int64_t *off);

#endif
