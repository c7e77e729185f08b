/* where and clip. */
#ifndef CMLX_OPS_TERNARY_H
#define CMLX_OPS_TERNARY_H

#include "ops/common.h"

cm_array *cm_where(cm_array *cond, cm_array *x, cm_array *y, cm_stream s);
/* a_min / a_max may be NULL (unbounded on that side); both NULL is a
 * ValueError as in MLX. */
cm_array *cm_clip(cm_array *a, cm_array *a_min, cm_array *a_max, cm_stream s);

#endif
