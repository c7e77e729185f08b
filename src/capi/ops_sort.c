/* mlx/c/ops.h, sorting, selection and cumulative scans: adapters over
 * src/ops/sort.h and src/ops/scan.h.  The mlx-c forms without an axis are
 * MLX's axis=None (the flattened array). */
#include "capi/capi.h"
#include "ops/scan.h"
#include "ops/sort.h"
#include "primitives/sort.h"

/* X(a) flattened, X_axis(a, axis) */
#define SORT_OP(NAME)                                                                      \
  int mlx_##NAME(mlx_array *res, const mlx_array a, const mlx_stream s) {                  \
    if (capi_op(#NAME, res, s) || capi_need(#NAME, a)) return 1;                           \
    return capi_set(res, cm_##NAME##_flat(capi_arr(a), capi_stream(s)));                   \
  }                                                                                        \
  int mlx_##NAME##_axis(mlx_array *res, const mlx_array a, int axis, const mlx_stream s) { \
    if (capi_op(#NAME, res, s) || capi_need(#NAME, a)) return 1;                           \
    return capi_set(res, cm_##NAME(capi_arr(a), axis, capi_stream(s)));                    \
  }


/* X(a, k) flattened, X_axis(a, k, axis): k is kth, or topk's k */
#define KTH_OP(NAME)                                                                              \
  int mlx_##NAME(mlx_array *res, const mlx_array a, int k, const mlx_stream s) {                  \
    if (capi_op(#NAME, res, s) || capi_need(#NAME, a)) return 1;                                  \
    return capi_set(res, cm_##NAME##_flat(capi_arr(a), k, capi_stream(s)));                       \
  }                                                                                               \
  int mlx_##NAME##_axis(mlx_array *res, const mlx_array a, int k, int axis, const mlx_stream s) { \
    if (capi_op(#NAME, res, s) || capi_need(#NAME, a)) return 1;                                  \
    return capi_set(res, cm_##NAME(capi_arr(a), k, axis, capi_stream(s)));                        \
  }

/* The rows of ops/sort_ops.h mlx-c declares, in their form's two
 * adapters; an adapter mlx-c does not declare must not compile. */
#pragma GCC diagnostic error "-Wmissing-prototypes"
#define FORMS_AXIS(name) SORT_OP(name)
#define FORMS_KTH(name) KTH_OP(name)
#define FORMS_OWN(name)
#define CM_X(CODE, name, Name, form, out, mlxc, ...) CM_IF_##mlxc(FORMS_##form(name))
CM_SORT_OPS(CM_X)
#undef CM_X
KTH_OP(topk) /* a composition, with the KTH form */

#define SCAN_OP(NAME)                                                                       \
  int mlx_##NAME(mlx_array *res, const mlx_array a, int axis, bool reverse, bool inclusive, \
                 const mlx_stream s) {                                                      \
    if (capi_op(#NAME, res, s) || capi_need(#NAME, a)) return 1;                            \
    return capi_set(res, cm_##NAME(capi_arr(a), axis, reverse, inclusive, capi_stream(s))); \
  }

/* The rows of ops/scan_ops.h that mlx-c declares. */
#define CM_X(CODE, name, Name, dtype, mlxc, ...) CM_IF_##mlxc(SCAN_OP(name))
CM_SCAN_OPS(CM_X)
#undef CM_X
