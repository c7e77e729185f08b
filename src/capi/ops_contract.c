/* mlx/c/ops.h, contractions: tensordot, einsum and the gathered, segmented
 * and block-masked products; adapters over src/ops/contract.h.  An empty
 * mlx_array for an optional argument (indices, masks) means none. */
#include "capi/capi.h"
#include "ops/contract.h"

int mlx_tensordot(mlx_array *res, const mlx_array a, const mlx_array b, const int *axes_a,
                  size_t axes_a_num, const int *axes_b, size_t axes_b_num, const mlx_stream s) {
  int na, nb;
  if (capi_op("tensordot", res, s)) return 1;
  if (capi_need("tensordot", a) || capi_need("tensordot", b)) return 1;
  if (capi_list("tensordot", axes_a, axes_a_num, &na) ||
      capi_list("tensordot", axes_b, axes_b_num, &nb))
    return 1;
  if (na != nb) return capi_errorf("[tensordot] axes must have the same size.");
  return capi_set(res, cm_tensordot(capi_arr(a), capi_arr(b), na, axes_a, axes_b, capi_stream(s)));
}

int mlx_tensordot_axis(mlx_array *res, const mlx_array a, const mlx_array b, int axis,
                       const mlx_stream s) {
  if (capi_op("tensordot", res, s)) return 1;
  if (capi_need("tensordot", a) || capi_need("tensordot", b)) return 1;
  return capi_set(res, cm_tensordot_axis(capi_arr(a), capi_arr(b), axis, capi_stream(s)));
}

int mlx_einsum(mlx_array *res, const char *subscripts, const mlx_vector_array operands,
               const mlx_stream s) {
  if (capi_op("einsum", res, s)) return 1;
  if (!subscripts) return capi_errorf("[einsum] Got no subscripts.");
  size_t num;
  int n;
  cm_array *const *ops;
  if (capi_vector_arrays("mlx_einsum", operands, &ops, &num)) return 1;
  if (capi_list("einsum", ops ? (const void *)ops : (const void *)"", num, &n)) return 1;
  return capi_set(res, cm_einsum(subscripts, ops, n, capi_stream(s)));
}

int mlx_gather_mm(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_array lhs_indices,
                  const mlx_array rhs_indices, bool sorted_indices, const mlx_stream s) {
  if (capi_op("gather_mm", res, s)) return 1;
  if (capi_need("gather_mm", a) || capi_need("gather_mm", b) ||
      capi_opt("gather_mm", lhs_indices) || capi_opt("gather_mm", rhs_indices))
    return 1;
  return capi_set(res, cm_gather_mm(capi_arr(a), capi_arr(b), capi_arr(lhs_indices),
                                    capi_arr(rhs_indices), sorted_indices, capi_stream(s)));
}

int mlx_segmented_mm(mlx_array *res, const mlx_array a, const mlx_array b, const mlx_array segments,
                     const mlx_stream s) {
  if (capi_op("segmented_mm", res, s)) return 1;
  if (capi_need("segmented_mm", a) || capi_need("segmented_mm", b) ||
      capi_need("segmented_mm", segments))
    return 1;
  return capi_set(res,
                  cm_segmented_mm(capi_arr(a), capi_arr(b), capi_arr(segments), capi_stream(s)));
}

int mlx_block_masked_mm(mlx_array *res, const mlx_array a, const mlx_array b, int block_size,
                        const mlx_array mask_out, const mlx_array mask_lhs,
                        const mlx_array mask_rhs, const mlx_stream s) {
  if (capi_op("block_masked_mm", res, s)) return 1;
  if (capi_need("block_masked_mm", a) || capi_need("block_masked_mm", b)) return 1;
  return capi_set(res, cm_block_masked_mm(capi_arr(a), capi_arr(b), block_size, capi_arr(mask_out),
                                          capi_arr(mask_lhs), capi_arr(mask_rhs), capi_stream(s)));
}
