/* mlx/c/ops.h, reductions and comparisons of whole arrays: adapters over
 * src/ops/reduce.h.  Each reduction comes in three mlx-c forms (every
 * axis, one axis, a list of axes) that map onto one cm_axes argument. */
#include <limits.h>

#include "capi/capi.h"
#include "ops/reduce.h"

static int axes_arg(const char *fn, const int *axes, size_t n, cm_axes *out) {
  if (capi_count_size(fn, "axes_num", n)) return 1;
  if (n > INT_MAX) return capi_errorf("[%s] Too many axes.", fn);
  if (n && !axes) return capi_errorf("[%s] axes is NULL.", fn);
  *out = cm_axes_list(axes, (int)n);
  return 0;
}

/* X(a, keepdims), X_axis(a, axis, keepdims): every axis or one.  argmax and
 * argmin have just these two. */
#define ARG_REDUCTION(NAME)                                                                \
  int mlx_##NAME(mlx_array *res, const mlx_array a, bool keepdims, const mlx_stream s) {   \
    if (capi_op(#NAME, res, s) || capi_need(#NAME, a)) return 1;                           \
    return capi_set(res, cm_##NAME(capi_arr(a), CM_AXES_ALL, keepdims, capi_stream(s)));   \
  }                                                                                        \
  int mlx_##NAME##_axis(mlx_array *res, const mlx_array a, int axis, bool keepdims,        \
                        const mlx_stream s) {                                              \
    if (capi_op(#NAME, res, s) || capi_need(#NAME, a)) return 1;                           \
    return capi_set(res, cm_##NAME(capi_arr(a), CM_AXIS(axis), keepdims, capi_stream(s))); \
  }

/* The others add X_axes(a, axes, n, keepdims). */
#define REDUCTION(NAME)                                                                      \
  ARG_REDUCTION(NAME)                                                                        \
  int mlx_##NAME##_axes(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, \
                        bool keepdims, const mlx_stream s) {                                 \
    cm_axes ax;                                                                              \
    if (capi_op(#NAME, res, s) || capi_need(#NAME, a) ||                                     \
        axes_arg(#NAME, axes, axes_num, &ax))                                                \
      return 1;                                                                              \
    return capi_set(res, cm_##NAME(capi_arr(a), ax, keepdims, capi_stream(s)));              \
  }

/* The primitive reductions: the rows of ops/reduce_ops.h, in the forms
 * their mlxc column names.  An adapter mlx-c does not declare must not
 * compile. */
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wmissing-prototypes"
#define FORMS_MLXC(name) REDUCTION(name)
#define FORMS_MLXC_AXIS(name) ARG_REDUCTION(name)
#define CM_X(CODE, name, Name, class, empty, grad, mlxc, ...) FORMS_##mlxc(name)
CM_REDUCE_OPS(CM_X)
#undef CM_X
#pragma GCC diagnostic pop

/* Compositions with the same forms. */
REDUCTION(mean)
REDUCTION(logsumexp)

/* var / std carry ddof. */
#define DDOF_REDUCTION(NAME)                                                                       \
  int mlx_##NAME(mlx_array *res, const mlx_array a, bool keepdims, int ddof, const mlx_stream s) { \
    if (capi_op(#NAME, res, s) || capi_need(#NAME, a)) return 1;                                   \
    return capi_set(res, cm_##NAME(capi_arr(a), CM_AXES_ALL, keepdims, ddof, capi_stream(s)));     \
  }                                                                                                \
  int mlx_##NAME##_axis(mlx_array *res, const mlx_array a, int axis, bool keepdims, int ddof,      \
                        const mlx_stream s) {                                                      \
    if (capi_op(#NAME, res, s) || capi_need(#NAME, a)) return 1;                                   \
    return capi_set(res, cm_##NAME(capi_arr(a), CM_AXIS(axis), keepdims, ddof, capi_stream(s)));   \
  }                                                                                                \
  int mlx_##NAME##_axes(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num,       \
                        bool keepdims, int ddof, const mlx_stream s) {                             \
    cm_axes ax;                                                                                    \
    if (capi_op(#NAME, res, s) || capi_need(#NAME, a) ||                                           \
        axes_arg(#NAME, axes, axes_num, &ax))                                                      \
      return 1;                                                                                    \
    return capi_set(res, cm_##NAME(capi_arr(a), ax, keepdims, ddof, capi_stream(s)));              \
  }

DDOF_REDUCTION(var)
DDOF_REDUCTION(std)

int mlx_softmax(mlx_array *res, const mlx_array a, bool precise, const mlx_stream s) {
  if (capi_op("softmax", res, s)) return 1;
  if (capi_need("softmax", a)) return 1;
  return capi_set(res, cm_softmax(capi_arr(a), CM_AXES_ALL, precise, capi_stream(s)));
}

int mlx_softmax_axis(mlx_array *res, const mlx_array a, int axis, bool precise,
                     const mlx_stream s) {
  if (capi_op("softmax", res, s)) return 1;
  if (capi_need("softmax", a)) return 1;
  return capi_set(res, cm_softmax(capi_arr(a), CM_AXIS(axis), precise, capi_stream(s)));
}

int mlx_softmax_axes(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num,
                     bool precise, const mlx_stream s) {
  if (capi_op("softmax", res, s)) return 1;
  cm_axes ax;
  if (capi_need("softmax", a) || axes_arg("softmax", axes, axes_num, &ax)) return 1;
  return capi_set(res, cm_softmax(capi_arr(a), ax, precise, capi_stream(s)));
}

int mlx_median(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num, bool keepdims,
               const mlx_stream s) {
  if (capi_op("median", res, s)) return 1;
  cm_axes ax;
  if (capi_need("median", a) || axes_arg("median", axes, axes_num, &ax)) return 1;
  return capi_set(res, cm_median(capi_arr(a), ax, keepdims, capi_stream(s)));
}

int mlx_isclose(mlx_array *res, const mlx_array a, const mlx_array b, double rtol, double atol,
                bool equal_nan, const mlx_stream s) {
  if (capi_op("isclose", res, s)) return 1;
  if (capi_need("isclose", a) || capi_need("isclose", b)) return 1;
  return capi_set(res, cm_isclose(capi_arr(a), capi_arr(b), rtol, atol, equal_nan, capi_stream(s)));
}

int mlx_allclose(mlx_array *res, const mlx_array a, const mlx_array b, double rtol, double atol,
                 bool equal_nan, const mlx_stream s) {
  if (capi_op("allclose", res, s)) return 1;
  if (capi_need("allclose", a) || capi_need("allclose", b)) return 1;
  return capi_set(res,
                  cm_allclose(capi_arr(a), capi_arr(b), rtol, atol, equal_nan, capi_stream(s)));
}

int mlx_array_equal(mlx_array *res, const mlx_array a, const mlx_array b, bool equal_nan,
                    const mlx_stream s) {
  if (capi_op("array_equal", res, s)) return 1;
  if (capi_need("array_equal", a) || capi_need("array_equal", b)) return 1;
  return capi_set(res, cm_array_equal(capi_arr(a), capi_arr(b), equal_nan, capi_stream(s)));
}
