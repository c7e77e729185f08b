/* mlx/c/ops.h, shape and view ops: adapters over src/ops/shape.h (whose
 * header lists the mlx-c -> cm_ mapping).  List arguments arrive as
 * (pointer, size_t count) and go on as (int count, pointer). */
#include <stdlib.h>

#include "capi/capi.h"
#include "ops/shape.h"

#define NEED1(fn, a) capi_need(fn, a)
#define LIST(fn, p, num, n) capi_list(fn, p, num, &n)

/* Put a malloc'd list of n new references into *res and free it. */
static int set_list(mlx_vector_array *res, cm_array **outs, int n) {
  int rc = capi_vector_set_arrays(res, outs, (size_t)n);
  for (int i = 0; i < n; i++) cm_release(outs[i]);
  free(outs);
  return rc;
}

/* The arrays of a vector argument, with its count as an int. */
static cm_array *const *vector_arg(const char *fn, mlx_vector_array v, int *n, int *rc) {
  size_t num;
  cm_array *const *items;
  if ((*rc = capi_vector_arrays(fn, v, &items, &num))) return NULL;
  *rc = capi_list(fn, items ? (const void *)items : (const void *)"", num, n);
  return items;
}

/* ---- reshaping ---- */

int mlx_reshape(mlx_array *res, const mlx_array a, const int *shape, size_t shape_num,
                const mlx_stream s) {
  if (capi_op("reshape", res, s)) return 1;
  int n;
  if (NEED1("reshape", a) || capi_shape("reshape", shape, shape_num, &n)) return 1;
  return capi_set(res, cm_reshape(capi_arr(a), n, (const int32_t *)shape, capi_stream(s)));
}

int mlx_flatten(mlx_array *res, const mlx_array a, int start_axis, int end_axis,
                const mlx_stream s) {
  if (capi_op("flatten", res, s)) return 1;
  if (NEED1("flatten", a)) return 1;
  return capi_set(res, cm_flatten(capi_arr(a), start_axis, end_axis, capi_stream(s)));
}

int mlx_unflatten(mlx_array *res, const mlx_array a, int axis, const int *shape, size_t shape_num,
                  const mlx_stream s) {
  if (capi_op("unflatten", res, s)) return 1;
  int n;
  if (NEED1("unflatten", a) || capi_shape("unflatten", shape, shape_num, &n)) return 1;
  return capi_set(res, cm_unflatten(capi_arr(a), axis, n, (const int32_t *)shape, capi_stream(s)));
}

int mlx_squeeze(mlx_array *res, const mlx_array a, const mlx_stream s) {
  if (capi_op("squeeze", res, s)) return 1;
  if (NEED1("squeeze", a)) return 1;
  return capi_set(res, cm_squeeze_all(capi_arr(a), capi_stream(s)));
}

int mlx_squeeze_axis(mlx_array *res, const mlx_array a, int axis, const mlx_stream s) {
  if (capi_op("squeeze", res, s)) return 1;
  if (NEED1("squeeze", a)) return 1;
  return capi_set(res, cm_squeeze(capi_arr(a), 1, &axis, capi_stream(s)));
}

int mlx_squeeze_axes(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num,
                     const mlx_stream s) {
  if (capi_op("squeeze", res, s)) return 1;
  int n;
  if (NEED1("squeeze", a) || LIST("squeeze", axes, axes_num, n)) return 1;
  return capi_set(res, cm_squeeze(capi_arr(a), n, axes, capi_stream(s)));
}

int mlx_expand_dims(mlx_array *res, const mlx_array a, int axis, const mlx_stream s) {
  if (capi_op("expand_dims", res, s)) return 1;
  if (NEED1("expand_dims", a)) return 1;
  return capi_set(res, cm_expand_dims(capi_arr(a), 1, &axis, capi_stream(s)));
}

int mlx_expand_dims_axes(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num,
                         const mlx_stream s) {
  if (capi_op("expand_dims", res, s)) return 1;
  int n;
  if (NEED1("expand_dims", a) || LIST("expand_dims", axes, axes_num, n)) return 1;
  return capi_set(res, cm_expand_dims(capi_arr(a), n, axes, capi_stream(s)));
}

#define SIMPLE(NAME)                                                      \
  int mlx_##NAME(mlx_array *res, const mlx_array a, const mlx_stream s) { \
    if (capi_op(#NAME, res, s) || NEED1(#NAME, a)) return 1;              \
    return capi_set(res, cm_##NAME(capi_arr(a), capi_stream(s)));         \
  }
SIMPLE(atleast_1d)
SIMPLE(atleast_2d)
SIMPLE(atleast_3d)

/* ---- axis order ---- */

int mlx_transpose(mlx_array *res, const mlx_array a, const mlx_stream s) {
  if (capi_op("transpose", res, s)) return 1;
  if (NEED1("transpose", a)) return 1;
  return capi_set(res, cm_transpose(capi_arr(a), 0, NULL, capi_stream(s)));
}

int mlx_transpose_axes(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num,
                       const mlx_stream s) {
  if (capi_op("transpose", res, s)) return 1;
  int n;
  if (NEED1("transpose", a) || LIST("transpose", axes, axes_num, n)) return 1;
  /* an empty list is a list (of the wrong length for ndim > 0), not "reverse" */
  static const int none[1] = {0};
  return capi_set(res, cm_transpose(capi_arr(a), n, axes ? axes : none, capi_stream(s)));
}

int mlx_swapaxes(mlx_array *res, const mlx_array a, int axis1, int axis2, const mlx_stream s) {
  if (capi_op("swapaxes", res, s)) return 1;
  if (NEED1("swapaxes", a)) return 1;
  return capi_set(res, cm_swapaxes(capi_arr(a), axis1, axis2, capi_stream(s)));
}

int mlx_moveaxis(mlx_array *res, const mlx_array a, int source, int destination,
                 const mlx_stream s) {
  if (capi_op("moveaxis", res, s)) return 1;
  if (NEED1("moveaxis", a)) return 1;
  return capi_set(res, cm_moveaxis(capi_arr(a), source, destination, capi_stream(s)));
}

/* ---- broadcasting and views ---- */

int mlx_broadcast_arrays(mlx_vector_array *res, const mlx_vector_array inputs, const mlx_stream s) {
  if (capi_op("broadcast_arrays", res, s)) return 1;
  int n, rc;
  cm_array *const *ins = vector_arg("broadcast_arrays", inputs, &n, &rc);
  if (rc) return 1;
  cm_array **outs = malloc(sizeof *outs * (size_t)(n ? n : 1));
  if (!outs) return capi_errorf("[broadcast_arrays] Out of memory.");
  if (cm_broadcast_arrays(ins, n, outs, capi_stream(s))) {
    free(outs);
    return capi_fail();
  }
  return set_list(res, outs, n);
}

int mlx_as_strided(mlx_array *res, const mlx_array a, const int *shape, size_t shape_num,
                   const int64_t *strides, size_t strides_num, size_t offset, const mlx_stream s) {
  if (capi_op("as_strided", res, s)) return 1;
  int nd, ns;
  if (NEED1("as_strided", a) || capi_shape("as_strided", shape, shape_num, &nd) ||
      LIST("as_strided", strides, strides_num, ns))
    return 1;
  return capi_set(res, cm_as_strided(capi_arr(a), nd, (const int32_t *)shape, ns, strides,
                                     (int64_t)offset, capi_stream(s)));
}

int mlx_view(mlx_array *res, const mlx_array a, mlx_dtype dtype, const mlx_stream s) {
  if (capi_op("view", res, s)) return 1;
  if (NEED1("view", a) || capi_dtype("view", dtype)) return 1;
  return capi_set(res, cm_view(capi_arr(a), (cm_dtype)dtype, capi_stream(s)));
}

int mlx_diagonal(mlx_array *res, const mlx_array a, int offset, int axis1, int axis2,
                 const mlx_stream s) {
  if (capi_op("diagonal", res, s)) return 1;
  if (NEED1("diagonal", a)) return 1;
  return capi_set(res, cm_diagonal(capi_arr(a), offset, axis1, axis2, capi_stream(s)));
}

int mlx_diag(mlx_array *res, const mlx_array a, int k, const mlx_stream s) {
  if (capi_op("diag", res, s)) return 1;
  if (NEED1("diag", a)) return 1;
  return capi_set(res, cm_diag(capi_arr(a), k, capi_stream(s)));
}

/* ---- slicing ---- */

int mlx_slice(mlx_array *res, const mlx_array a, const int *start, size_t start_num,
              const int *stop, size_t stop_num, const int *strides, size_t strides_num,
              const mlx_stream s) {
  if (capi_op("slice", res, s)) return 1;
  int n0, n1, n2;
  if (NEED1("slice", a) || LIST("slice", start, start_num, n0) ||
      LIST("slice", stop, stop_num, n1) || LIST("slice", strides, strides_num, n2))
    return 1;
  return capi_set(res, cm_slice(capi_arr(a), n0, (const int32_t *)start, n1, (const int32_t *)stop,
                                n2, (const int32_t *)strides, capi_stream(s)));
}

int mlx_slice_dynamic(mlx_array *res, const mlx_array a, const mlx_array start, const int *axes,
                      size_t axes_num, const int *slice_size, size_t slice_size_num,
                      const mlx_stream s) {
  if (capi_op("slice_dynamic", res, s)) return 1;
  int na, nz;
  if (NEED1("slice_dynamic", a) || NEED1("slice_dynamic", start) ||
      LIST("slice_dynamic", axes, axes_num, na) ||
      LIST("slice_dynamic", slice_size, slice_size_num, nz))
    return 1;
  return capi_set(res, cm_slice_dynamic(capi_arr(a), capi_arr(start), na, axes, nz,
                                        (const int32_t *)slice_size, capi_stream(s)));
}

int mlx_slice_update(mlx_array *res, const mlx_array src, const mlx_array update, const int *start,
                     size_t start_num, const int *stop, size_t stop_num, const int *strides,
                     size_t strides_num, const mlx_stream s) {
  if (capi_op("slice_update", res, s)) return 1;
  int n0, n1, n2;
  if (NEED1("slice_update", src) || NEED1("slice_update", update) ||
      LIST("slice_update", start, start_num, n0) || LIST("slice_update", stop, stop_num, n1) ||
      LIST("slice_update", strides, strides_num, n2))
    return 1;
  return capi_set(res, cm_slice_update(capi_arr(src), capi_arr(update), n0, (const int32_t *)start,
                                       n1, (const int32_t *)stop, n2, (const int32_t *)strides,
                                       capi_stream(s)));
}

int mlx_slice_update_dynamic(mlx_array *res, const mlx_array src, const mlx_array update,
                             const mlx_array start, const int *axes, size_t axes_num,
                             const mlx_stream s) {
  int na;
  const char *fn = "slice_update_dynamic";
  if (capi_op(fn, res, s)) return 1;
  if (NEED1(fn, src) || NEED1(fn, update) || NEED1(fn, start) || LIST(fn, axes, axes_num, na))
    return 1;
  return capi_set(res, cm_slice_update_dynamic(capi_arr(src), capi_arr(update), capi_arr(start), na,
                                               axes, capi_stream(s)));
}

/* ---- joining and splitting ---- */

int mlx_concatenate(mlx_array *res, const mlx_vector_array arrays, const mlx_stream s) {
  if (capi_op("concatenate", res, s)) return 1;
  int n, rc;
  cm_array *const *in = vector_arg("concatenate", arrays, &n, &rc);
  return rc ? 1 : capi_set(res, cm_concatenate_flat(in, n, capi_stream(s)));
}

int mlx_concatenate_axis(mlx_array *res, const mlx_vector_array arrays, int axis,
                         const mlx_stream s) {
  if (capi_op("concatenate", res, s)) return 1;
  int n, rc;
  cm_array *const *in = vector_arg("concatenate", arrays, &n, &rc);
  return rc ? 1 : capi_set(res, cm_concatenate(in, n, axis, capi_stream(s)));
}

int mlx_stack(mlx_array *res, const mlx_vector_array arrays, const mlx_stream s) {
  if (capi_op("stack", res, s)) return 1;
  int n, rc;
  cm_array *const *in = vector_arg("stack", arrays, &n, &rc);
  return rc ? 1 : capi_set(res, cm_stack(in, n, 0, capi_stream(s)));
}

int mlx_stack_axis(mlx_array *res, const mlx_vector_array arrays, int axis, const mlx_stream s) {
  if (capi_op("stack", res, s)) return 1;
  int n, rc;
  cm_array *const *in = vector_arg("stack", arrays, &n, &rc);
  return rc ? 1 : capi_set(res, cm_stack(in, n, axis, capi_stream(s)));
}

int mlx_split(mlx_vector_array *res, const mlx_array a, int num_splits, int axis,
              const mlx_stream s) {
  if (capi_op("split", res, s)) return 1;
  cm_array **outs;
  int n;
  if (NEED1("split", a)) return 1;
  if (cm_split(capi_arr(a), num_splits, axis, &outs, &n, capi_stream(s))) return capi_fail();
  return set_list(res, outs, n);
}

int mlx_split_sections(mlx_vector_array *res, const mlx_array a, const int *indices,
                       size_t indices_num, int axis, const mlx_stream s) {
  if (capi_op("split", res, s)) return 1;
  cm_array **outs;
  int n, ni;
  if (NEED1("split", a) || LIST("split", indices, indices_num, ni)) return 1;
  if (cm_split_indices(capi_arr(a), ni, (const int32_t *)indices, axis, &outs, &n, capi_stream(s)))
    return capi_fail();
  return set_list(res, outs, n);
}

int mlx_tile(mlx_array *res, const mlx_array arr, const int *reps, size_t reps_num,
             const mlx_stream s) {
  if (capi_op("tile", res, s)) return 1;
  int n;
  if (NEED1("tile", arr) || LIST("tile", reps, reps_num, n)) return 1;
  return capi_set(res, cm_tile(capi_arr(arr), n, (const int32_t *)reps, capi_stream(s)));
}

int mlx_repeat(mlx_array *res, const mlx_array arr, int repeats, const mlx_stream s) {
  if (capi_op("repeat", res, s)) return 1;
  if (NEED1("repeat", arr)) return 1;
  return capi_set(res, cm_repeat_flat(capi_arr(arr), repeats, capi_stream(s)));
}

int mlx_repeat_axis(mlx_array *res, const mlx_array arr, int repeats, int axis,
                    const mlx_stream s) {
  if (capi_op("repeat", res, s)) return 1;
  if (NEED1("repeat", arr)) return 1;
  return capi_set(res, cm_repeat(capi_arr(arr), repeats, axis, capi_stream(s)));
}

int mlx_pad(mlx_array *res, const mlx_array a, const int *axes, size_t axes_num,
            const int *low_pad_size, size_t low_pad_size_num, const int *high_pad_size,
            size_t high_pad_size_num, const mlx_array pad_value, const char *mode,
            const mlx_stream s) {
  if (capi_op("pad", res, s)) return 1;
  int na, nl, nh;
  if (NEED1("pad", a) || LIST("pad", axes, axes_num, na) ||
      LIST("pad", low_pad_size, low_pad_size_num, nl) ||
      LIST("pad", high_pad_size, high_pad_size_num, nh))
    return 1;
  return capi_set(res, cm_pad(capi_arr(a), na, axes, nl, (const int32_t *)low_pad_size, nh,
                              (const int32_t *)high_pad_size, capi_arr(pad_value), mode,
                              capi_stream(s)));
}

int mlx_pad_symmetric(mlx_array *res, const mlx_array a, int pad_width, const mlx_array pad_value,
                      const char *mode, const mlx_stream s) {
  if (capi_op("pad", res, s)) return 1;
  if (NEED1("pad", a)) return 1;
  return capi_set(
      res, cm_pad_symmetric(capi_arr(a), pad_width, capi_arr(pad_value), mode, capi_stream(s)));
}

int mlx_roll(mlx_array *res, const mlx_array a, const int *shift, size_t shift_num,
             const mlx_stream s) {
  if (capi_op("roll", res, s)) return 1;
  int n;
  if (NEED1("roll", a) || LIST("roll", shift, shift_num, n)) return 1;
  return capi_set(res, cm_roll(capi_arr(a), n, (const int32_t *)shift, 0, NULL, capi_stream(s)));
}

int mlx_roll_axis(mlx_array *res, const mlx_array a, const int *shift, size_t shift_num, int axis,
                  const mlx_stream s) {
  if (capi_op("roll", res, s)) return 1;
  int n;
  if (NEED1("roll", a) || LIST("roll", shift, shift_num, n)) return 1;
  return capi_set(res, cm_roll_axis(capi_arr(a), n, (const int32_t *)shift, axis, capi_stream(s)));
}

int mlx_roll_axes(mlx_array *res, const mlx_array a, const int *shift, size_t shift_num,
                  const int *axes, size_t axes_num, const mlx_stream s) {
  if (capi_op("roll", res, s)) return 1;
  int n, na;
  if (NEED1("roll", a) || LIST("roll", shift, shift_num, n) || LIST("roll", axes, axes_num, na))
    return 1;
  static const int none[1] = {0};
  return capi_set(
      res, cm_roll(capi_arr(a), n, (const int32_t *)shift, na, axes ? axes : none, capi_stream(s)));
}

int mlx_meshgrid(mlx_vector_array *res, const mlx_vector_array arrays, bool sparse,
                 const char *indexing, const mlx_stream s) {
  if (capi_op("meshgrid", res, s)) return 1;
  int n, rc;
  cm_array *const *in = vector_arg("meshgrid", arrays, &n, &rc);
  if (rc) return 1;
  cm_array **outs = malloc(sizeof *outs * (size_t)(n ? n : 1));
  if (!outs) return capi_errorf("[meshgrid] Out of memory.");
  if (cm_meshgrid(in, n, sparse, indexing, outs, capi_stream(s))) {
    free(outs);
    return capi_fail();
  }
  return set_list(res, outs, n);
}

/* ---- arithmetic on shapes ---- */

int mlx_tril(mlx_array *res, const mlx_array x, int k, const mlx_stream s) {
  if (capi_op("tril", res, s)) return 1;
  if (NEED1("tril", x)) return 1;
  return capi_set(res, cm_tril(capi_arr(x), k, capi_stream(s)));
}

int mlx_triu(mlx_array *res, const mlx_array x, int k, const mlx_stream s) {
  if (capi_op("triu", res, s)) return 1;
  if (NEED1("triu", x)) return 1;
  return capi_set(res, cm_triu(capi_arr(x), k, capi_stream(s)));
}

#define PAIR(NAME)                                                                           \
  int mlx_##NAME(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_stream s) { \
    if (capi_op(#NAME, res, s) || NEED1(#NAME, a) || NEED1(#NAME, b)) return 1;              \
    return capi_set(res, cm_##NAME(capi_arr(a), capi_arr(b), capi_stream(s)));               \
  }
PAIR(kron)
PAIR(outer)
PAIR(inner)

int mlx_trace(mlx_array *res, const mlx_array a, int offset, int axis1, int axis2, mlx_dtype dtype,
              const mlx_stream s) {
  if (capi_op("trace", res, s)) return 1;
  if (NEED1("trace", a) || capi_dtype("trace", dtype)) return 1;
  return capi_set(res, cm_trace(capi_arr(a), offset, axis1, axis2, (int)dtype, capi_stream(s)));
}

#define WINDOW(NAME)                                          \
  int mlx_##NAME(mlx_array *res, int M, const mlx_stream s) { \
    if (capi_op(#NAME, res, s)) return 1;                     \
    return capi_set(res, cm_##NAME(M, capi_stream(s)));       \
  }
WINDOW(bartlett)
WINDOW(blackman)
WINDOW(hamming)
WINDOW(hanning)
