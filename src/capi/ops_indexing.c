/* mlx/c/ops.h, indexing: take, take_along_axis, put_along_axis, gather,
 * scatter (and its reductions), masked_scatter and the combining slice
 * updates: adapters over src/ops/indexing.h (whose header lists the
 * mlx-c -> cm_ mapping). */
#include "capi/capi.h"
#include "ops/indexing.h"

#define NEED1(fn, a) capi_need(fn, a)

/* The arrays of a vector argument, with its count as an int. */
static cm_array *const *vector_arg(const char *fn, mlx_vector_array v, int *n, int *rc) {
  size_t num;
  cm_array *const *items;
  if ((*rc = capi_vector_arrays(fn, v, &items, &num))) return NULL;
  *rc = capi_list(fn, items ? (const void *)items : (const void *)"", num, n);
  return items;
}

/* ---- take ---- */

int mlx_take(mlx_array *res, const mlx_array a, const mlx_array indices, const mlx_stream s) {
  if (capi_op("take", res, s)) return 1;
  if (NEED1("take", a) || NEED1("take", indices)) return 1;
  return capi_set(res, cm_take_flat(capi_arr(a), capi_arr(indices), capi_stream(s)));
}

int mlx_take_axis(mlx_array *res, const mlx_array a, const mlx_array indices, int axis,
                  const mlx_stream s) {
  if (capi_op("take", res, s)) return 1;
  if (NEED1("take", a) || NEED1("take", indices)) return 1;
  return capi_set(res, cm_take(capi_arr(a), capi_arr(indices), axis, capi_stream(s)));
}

int mlx_take_along_axis(mlx_array *res, const mlx_array a, const mlx_array indices, int axis,
                        const mlx_stream s) {
  if (capi_op("take_along_axis", res, s)) return 1;
  if (NEED1("take_along_axis", a) || NEED1("take_along_axis", indices)) return 1;
  return capi_set(res, cm_take_along_axis(capi_arr(a), capi_arr(indices), axis, capi_stream(s)));
}

int mlx_put_along_axis(mlx_array *res, const mlx_array a, const mlx_array indices,
                       const mlx_array values, int axis, const mlx_stream s) {
  const char *fn = "put_along_axis";
  if (capi_op(fn, res, s)) return 1;
  if (NEED1(fn, a) || NEED1(fn, indices) || NEED1(fn, values)) return 1;
  return capi_set(res, cm_put_along_axis(capi_arr(a), capi_arr(indices), capi_arr(values), axis,
                                         capi_stream(s)));
}

int mlx_scatter_add_axis(mlx_array *res, const mlx_array a, const mlx_array indices,
                         const mlx_array values, int axis, const mlx_stream s) {
  const char *fn = "scatter_add_axis";
  if (capi_op(fn, res, s)) return 1;
  if (NEED1(fn, a) || NEED1(fn, indices) || NEED1(fn, values)) return 1;
  return capi_set(res, cm_scatter_add_axis(capi_arr(a), capi_arr(indices), capi_arr(values), axis,
                                           capi_stream(s)));
}

/* ---- gather ---- */

int mlx_gather(mlx_array *res, const mlx_array a, const mlx_vector_array indices, const int *axes,
               size_t axes_num, const int *slice_sizes, size_t slice_sizes_num,
               const mlx_stream s) {
  if (capi_op("gather", res, s)) return 1;
  int n, na, ns, rc;
  if (NEED1("gather", a)) return 1;
  cm_array *const *idx = vector_arg("gather", indices, &n, &rc);
  if (rc || capi_list("gather", axes, axes_num, &na) ||
      capi_list("gather", slice_sizes, slice_sizes_num, &ns))
    return 1;
  return capi_set(res, cm_gather(capi_arr(a), idx, n, axes, na, (const int32_t *)slice_sizes, ns,
                                 capi_stream(s)));
}

int mlx_gather_single(mlx_array *res, const mlx_array a, const mlx_array indices, int axis,
                      const int *slice_sizes, size_t slice_sizes_num, const mlx_stream s) {
  if (capi_op("gather", res, s)) return 1;
  int ns;
  if (NEED1("gather", a) || NEED1("gather", indices) ||
      capi_list("gather", slice_sizes, slice_sizes_num, &ns))
    return 1;
  cm_array *idx = capi_arr(indices);
  return capi_set(res, cm_gather(capi_arr(a), &idx, 1, &axis, 1, (const int32_t *)slice_sizes, ns,
                                 capi_stream(s)));
}

/* ---- scatter ---- */

static int scatter_vec(const char *fn, mlx_array *res, mlx_array a, mlx_vector_array indices,
                       mlx_array updates, const int *axes, size_t axes_num, cm_scatter_op op,
                       mlx_stream s) {
  int n, na, rc;
  if (capi_op(fn, res, s) || NEED1(fn, a) || NEED1(fn, updates)) return 1;
  cm_array *const *idx = vector_arg(fn, indices, &n, &rc);
  if (rc || capi_list(fn, axes, axes_num, &na)) return 1;
  return capi_set(res,
                  cm_scatter(capi_arr(a), idx, n, capi_arr(updates), axes, na, op, capi_stream(s)));
}

static int scatter_one(const char *fn, mlx_array *res, mlx_array a, mlx_array indices,
                       mlx_array updates, int axis, cm_scatter_op op, mlx_stream s) {
  if (capi_op(fn, res, s) || NEED1(fn, a) || NEED1(fn, indices) || NEED1(fn, updates)) return 1;
  cm_array *idx = capi_arr(indices);
  return capi_set(
      res, cm_scatter(capi_arr(a), &idx, 1, capi_arr(updates), &axis, 1, op, capi_stream(s)));
}

#define SCATTER(NAME, OP)                                                                          \
  int mlx_##NAME(mlx_array *res, const mlx_array a, const mlx_vector_array indices,                \
                 const mlx_array updates, const int *axes, size_t axes_num, const mlx_stream s) {  \
    return scatter_vec(#NAME, res, a, indices, updates, axes, axes_num, OP, s);                    \
  }                                                                                                \
  int mlx_##NAME##_single(mlx_array *res, const mlx_array a, const mlx_array indices,              \
                          const mlx_array updates, int axis, const mlx_stream s) {                 \
    return scatter_one(#NAME, res, a, indices, updates, axis, OP, s);                              \
  }
/* The rows of ops/scatter_ops.h mlx-c declares; another must not compile. */
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wmissing-prototypes"
#define CM_X(CODE, name, Name, combine, mlxc) CM_IF_##mlxc(SCATTER(name, CM_SCATTER_##CODE))
CM_SCATTER_OPS(CM_X)
#undef CM_X
#pragma GCC diagnostic pop

int mlx_masked_scatter(mlx_array *res, const mlx_array a, const mlx_array mask, const mlx_array src,
                       const mlx_stream s) {
  const char *fn = "masked_scatter";
  if (capi_op(fn, res, s)) return 1;
  if (NEED1(fn, a) || NEED1(fn, mask) || NEED1(fn, src)) return 1;
  return capi_set(res,
                  cm_masked_scatter(capi_arr(a), capi_arr(mask), capi_arr(src), capi_stream(s)));
}

/* ---- slice updates that combine ---- */

#define SLICE_UPDATE(NAME, OP)                                                                    \
  int mlx_##NAME(mlx_array *res, const mlx_array src, const mlx_array update, const int *start,   \
                 size_t start_num, const int *stop, size_t stop_num, const int *strides,          \
                 size_t strides_num, const mlx_stream s) {                                        \
    int n0, n1, n2;                                                                               \
    if (capi_op(#NAME, res, s)) return 1;                                                         \
    if (NEED1(#NAME, src) || NEED1(#NAME, update) || capi_list(#NAME, start, start_num, &n0) ||   \
        capi_list(#NAME, stop, stop_num, &n1) || capi_list(#NAME, strides, strides_num, &n2))     \
      return 1;                                                                                   \
    return capi_set(res,                                                                          \
                    cm_slice_update_reduce(capi_arr(src), capi_arr(update), n0,                   \
                                           (const int32_t *)start, n1, (const int32_t *)stop, n2, \
                                           (const int32_t *)strides, OP, capi_stream(s)));        \
  }
SLICE_UPDATE(slice_update_add, CM_SCATTER_SUM)
SLICE_UPDATE(slice_update_prod, CM_SCATTER_PROD)
SLICE_UPDATE(slice_update_max, CM_SCATTER_MAX)
SLICE_UPDATE(slice_update_min, CM_SCATTER_MIN)
