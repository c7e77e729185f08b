/* Shape and view primitives: Reshape (and its named forms Flatten,
 * Unflatten, Squeeze, ExpandDims), Transpose, Slice, DynamicSlice,
 * SliceUpdate, DynamicSliceUpdate, Pad, AsStrided, View, Diagonal, Concatenate,
 * and the window functions (Hanning, ...).
 *
 * Most of these are views: the CPU kernel gives the output new strides and
 * an offset over the input's buffer and copies nothing.  Reshape copies
 * only when the input's strides cannot express the new shape; SliceUpdate
 * and Concatenate always materialise.
 */
#ifndef CMLX_PRIMITIVES_SHAPE_H
#define CMLX_PRIMITIVES_SHAPE_H

#include "primitives/primitive.h"

/* Reshape-like primitives: the kernel needs only the node's output shape;
 * the parameters only record what the op was. */
extern const cm_prim cm_prim_reshape;
extern const cm_prim cm_prim_flatten;
extern const cm_prim cm_prim_unflatten;
extern const cm_prim cm_prim_squeeze;
extern const cm_prim cm_prim_expand_dims;
/* Reshape keeps the shape asked for (one entry may be -1): a
 * variable-length block of ndim entries (cm_reshape_params_size bytes). */
typedef struct cm_reshape_params {
  int32_t ndim;
  int32_t shape[CM_MAX_DIMS];
} cm_reshape_params;
size_t cm_reshape_params_size(const cm_params *p);
typedef struct cm_flatten_params { int32_t start_axis, end_axis; } cm_flatten_params;
typedef struct cm_unflatten_params { int32_t axis; } cm_unflatten_params;
CM_PARAMS_ACCESSOR(cm_unflatten_params, cm_unflatten_params_of)
/* Squeeze: bit i = input axis i removed.  ExpandDims: bit i = output axis
 * i inserted. */
typedef struct cm_axes_mask_params { uint64_t mask; } cm_axes_mask_params;
CM_PARAMS_ACCESSOR(cm_axes_mask_params, cm_axes_mask_params_of)

/* Transpose: output axis i is input axis perm[i]. */
extern const cm_prim cm_prim_transpose;
typedef struct cm_transpose_params { uint8_t perm[CM_MAX_DIMS]; } cm_transpose_params;
CM_PARAMS_ACCESSOR(cm_transpose_params, cm_transpose_params_of)

/* Slice and SliceUpdate store the axes whose window is not the whole
 * axis: start, step and length on each (other axes are untouched).  The
 * block is variable-length: a node stores the header and the first n
 * entries only (cm_slice_params_size bytes), so slicing any number of
 * axes is one node. */
extern const cm_prim cm_prim_slice;
extern const cm_prim cm_prim_slice_update;
typedef struct cm_slice_axis {
  int32_t axis;
  int32_t start; /* normalised: 0 <= start < dim */
  int32_t step;  /* never 0; negative walks backwards */
  int32_t len;   /* the window's length on the axis */
} cm_slice_axis;
typedef struct cm_slice_params {
  int32_t n;
  cm_slice_axis ax[CM_MAX_DIMS]; /* room for every axis; n are stored */
} cm_slice_params;
size_t cm_slice_params_size(const cm_params *p);

/* Pad (inputs: a, value, a 0-d array of a's dtype): the output, larger
 * than a, is value everywhere except the window where a sits, described
 * by the same block as a Slice of the output (start = the low padding,
 * step 1, len = a's extent, on the padded axes).  Constant mode only (the
 * other modes are compositions). */
extern const cm_prim cm_prim_pad;

/* DynamicSlice (inputs: a, start) and DynamicSliceUpdate (inputs: src,
 * update, start): start[i] (read at eval time) applies to axes[i]; the
 * number of axes is start's size.  Starts are clamped into range. */
extern const cm_prim cm_prim_dynamic_slice;
extern const cm_prim cm_prim_dynamic_slice_update;
typedef struct cm_dynamic_slice_params { uint8_t axes[CM_MAX_DIMS]; } cm_dynamic_slice_params;
CM_PARAMS_ACCESSOR(cm_dynamic_slice_params, cm_dynamic_slice_params_of)

/* AsStrided over a row-contiguous input: element offset and the strides
 * of the output's ndim axes (variable-length like Slice's block:
 * cm_as_strided_params_size bytes). */
extern const cm_prim cm_prim_as_strided;
typedef struct cm_as_strided_params {
  int64_t offset;
  int32_t ndim;
  int32_t reserved; /* 0: keeps the block free of padding */
  int64_t strides[CM_MAX_DIMS];
} cm_as_strided_params;
size_t cm_as_strided_params_size(const cm_params *p);

/* View: reinterpret the bytes as dtype (the node's dtype). */
extern const cm_prim cm_prim_view;
typedef struct cm_view_params { int32_t dtype; } cm_view_params;

/* Diagonal: a view; output = input without axis1/axis2, plus the diagonal
 * as the last axis. */
extern const cm_prim cm_prim_diagonal;
typedef struct cm_diagonal_params { int32_t offset, axis1, axis2; } cm_diagonal_params;
CM_PARAMS_ACCESSOR(cm_diagonal_params, cm_diagonal_params_of)

/* Concatenate along axis (inputs already share a dtype). */
extern const cm_prim cm_prim_concatenate;
typedef struct cm_concatenate_params { int32_t axis; } cm_concatenate_params;

/* Window functions: a float32 vector of length m (m >= 2). */
typedef enum cm_window_kind {
  CM_WINDOW_BARTLETT,
  CM_WINDOW_BLACKMAN,
  CM_WINDOW_HAMMING,
  CM_WINDOW_HANNING,
} cm_window_kind;
extern const cm_prim cm_prim_window;
typedef struct cm_window_params { int32_t kind, m; } cm_window_params;

#endif
