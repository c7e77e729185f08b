/* Contractions beyond matmul, with MLX 0.32's rules: tensordot, einsum
 * and einsum_path (ops/einsum.c), and the gathered, segmented and
 * block-masked matrix products.
 *
 * tensordot(a, b, axes): an int n sums the last n axes of a against the
 * first n of b ("[tensordot] axis must be greater or equal to 0.",
 * "[tensordot] axis must be less than the number of dimensions of a and
 * b."); lists pair axes_a[i] with axes_b[i] ("[tensordot] axes must have
 * the same size.", "[tensordot] a and b must have the same shape on the
 * contracted axes.").  The result is a's free axes then b's, computed as
 * one matmul, so its dtype rules are matmul's (inexact only).
 *
 * gather_mm(a, b, lhs_indices, rhs_indices, sorted): out[i] =
 * a[lhs[i]] @ b[rhs[i]], indexing the flattened batch axes of a (..., M,
 * K) and b (..., K, N); the indices (any integer dtype, NULL: every batch
 * element in order) broadcast together to the output's batch shape.
 * Neither index: plain matmul.  1-D a or b are expanded and squeezed as
 * in matmul.  Real floating types only ("[gather_mm] Only real floating
 * point types are supported ...").  sorted_indices promises the given
 * index array is sorted (only used when the other one is absent).
 *
 * segmented_mm(a, b, segments): a (M, K), b (K, N), segments (..., 2)
 * integer [start, end) ranges of K: out[..., :, :] = a[:, s:e] @ b[s:e, :]
 * (zeros for an empty range).
 *
 * block_masked_mm(a, b, block_size, mask_out, mask_lhs, mask_rhs): matmul
 * with block masks of block_size (32 or 64) tiles: mask_lhs (..., tm, tk)
 * and mask_rhs (..., tk, tn) scale (bool: keep or zero) the operand tiles
 * before the product, mask_out (..., tm, tn) the result's tiles.  No mask:
 * plain matmul.  Masks that are not bool are cast to the result dtype. */
#ifndef CMLX_OPS_CONTRACT_H
#define CMLX_OPS_CONTRACT_H

#include "ops/common.h"

cm_array *cm_tensordot(cm_array *a, cm_array *b, int naxes, const int *axes_a, const int *axes_b,
                       cm_stream s);
cm_array *cm_tensordot_axis(cm_array *a, cm_array *b, int axis, cm_stream s);

cm_array *cm_gather_mm(cm_array *a, cm_array *b, cm_array *lhs_indices, cm_array *rhs_indices,
                       bool sorted_indices, cm_stream s);
cm_array *cm_segmented_mm(cm_array *a, cm_array *b, cm_array *segments, cm_stream s);
cm_array *cm_block_masked_mm(cm_array *a, cm_array *b, int block_size, cm_array *mask_out,
                             cm_array *mask_lhs, cm_array *mask_rhs, cm_stream s);

/* einsum over n operands ("ij,jk->ik"; implicit output, ellipses). */
cm_array *cm_einsum(const char *subscripts, cm_array *const *operands, int n, cm_stream s);

/* MLX's contraction order: path[i] lists the positions (into the operand
 * list as it stands at step i) contracted at step i, npos[i] of them;
 * info is MLX's printed summary.  Free *path with cm_einsum_path_free. */
typedef struct cm_einsum_path {
  int nsteps;
  int *npos;  /* nsteps counts */
  int **pos;  /* nsteps lists */
  char *info; /* MLX's summary text */
} cm_einsum_path;
int cm_einsum_path_compute(const char *subscripts, cm_array *const *operands, int n,
                           cm_einsum_path *path);
void cm_einsum_path_free(cm_einsum_path *path);

#endif
