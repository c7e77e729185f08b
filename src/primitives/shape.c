#include "primitives/shape.h"

#include "backend/cpu/shape.h"

/* The packed parameter blocks must fit the node's inline storage. */
_Static_assert(sizeof(cm_transpose_params) <= sizeof(cm_params), "transpose params");
_Static_assert(sizeof(cm_slice_params) <= sizeof(cm_params), "slice params");
_Static_assert(sizeof(cm_dynamic_slice_params) <= sizeof(cm_params), "dynamic slice params");
_Static_assert(sizeof(cm_as_strided_params) <= sizeof(cm_params), "as_strided params");

const cm_prim cm_prim_reshape = {.name = "Reshape", .eval_cpu = cm_cpu_reshape};
const cm_prim cm_prim_flatten = {.name = "Flatten", .eval_cpu = cm_cpu_reshape};
const cm_prim cm_prim_unflatten = {.name = "Unflatten", .eval_cpu = cm_cpu_reshape};
const cm_prim cm_prim_squeeze = {.name = "Squeeze", .eval_cpu = cm_cpu_reshape};
const cm_prim cm_prim_expand_dims = {.name = "ExpandDims", .eval_cpu = cm_cpu_reshape};
const cm_prim cm_prim_transpose = {.name = "Transpose", .eval_cpu = cm_cpu_transpose};
const cm_prim cm_prim_slice = {.name = "Slice", .eval_cpu = cm_cpu_slice};
const cm_prim cm_prim_slice_update = {.name = "SliceUpdate", .eval_cpu = cm_cpu_slice_update};
const cm_prim cm_prim_dynamic_slice = {.name = "DynamicSlice", .eval_cpu = cm_cpu_dynamic_slice};
const cm_prim cm_prim_dynamic_slice_update = {.name = "DynamicSliceUpdate",
                                              .eval_cpu = cm_cpu_dynamic_slice_update};
const cm_prim cm_prim_as_strided = {.name = "AsStrided", .eval_cpu = cm_cpu_as_strided};
const cm_prim cm_prim_view = {.name = "View", .eval_cpu = cm_cpu_view};
const cm_prim cm_prim_diagonal = {.name = "Diagonal", .eval_cpu = cm_cpu_diagonal};
const cm_prim cm_prim_concatenate = {.name = "Concatenate", .eval_cpu = cm_cpu_concatenate};

static const char *window_name(const cm_params *p) {
  switch (((const cm_window_params *)p)->kind) {
  case CM_WINDOW_BARTLETT: return "Bartlett";
  case CM_WINDOW_BLACKMAN: return "Blackman";
  case CM_WINDOW_HAMMING: return "Hamming";
  default: return "Hanning";
  }
}

const cm_prim cm_prim_window = {.name = "Window", .op_name = window_name, .eval_cpu = cm_cpu_window};
