/* GatherMM, SegmentedMM and BlockMaskedMM: the matrix products of
 * ops/contract.h as primitives.
 *
 * GatherMM inputs: a (A.., M, K), b (B.., K, N), lhs and rhs uint32
 * indices of one shape I (broadcast by the op); out (I.., M, N).
 * vjp (MLX's): d(a) scatters gather_mm(cotan, b^T, rhs) back onto a's
 * batch elements (or is that product itself when the indices are sorted
 * and every element is used once); d(b) is a segmented_mm over sorted
 * indices, else a gather_mm scattered onto b's batch; indices have no
 * derivative (MLX's ValueError naming stop_gradient).  No jvp or vmap, as
 * in MLX.
 *
 * SegmentedMM inputs: a (M, K), b (K, N), segments uint32 (S.., 2);
 * out (S.., M, N).  No derivatives, as in MLX.
 *
 * BlockMaskedMM inputs: a, b (batch shapes broadcast to one), then
 * mask_out (.., tm, tn) if given, then mask_lhs (.., tm, tk) and mask_rhs
 * (.., tk, tn) if either was given (MLX's input counts: 3 means an output
 * mask, 4 operand masks, 5 both).  vjp as MLX's (products masked the same
 * way, float masks summed over their tiles; bool masks have none). */
#ifndef CMLX_PRIMITIVES_GATHER_MM_H
#define CMLX_PRIMITIVES_GATHER_MM_H

#include "primitives/primitive.h"

typedef struct cm_gather_mm_params {
  int32_t left_sorted, right_sorted;
} cm_gather_mm_params;
CM_PARAMS_ACCESSOR(cm_gather_mm_params, cm_gather_mm_params_of)

typedef struct cm_block_mm_params {
  int32_t block_size;
} cm_block_mm_params;
CM_PARAMS_ACCESSOR(cm_block_mm_params, cm_block_mm_params_of)

extern const cm_prim cm_prim_gather_mm;
extern const cm_prim cm_prim_segmented_mm;
extern const cm_prim cm_prim_block_masked_mm;

#endif
