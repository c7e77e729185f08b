/* The CUDA backend's kernels: one (primitive, kernel) pair per primitive
 * with a GPU kernel, registered when the backend is.  A primitive missing
 * here is MLX's RuntimeError "<Name> has no GPU implementation." when a
 * node of it is evaluated on a GPU stream; docs/api-status.md lists the
 * primitives that run on the GPU. */
#include "backend/cuda/kernels.h"

#include "backend/cuda/elementwise.h"
#include "backend/cuda/matmul.h"
#include "backend/cuda/reduce.h"
#include "backend/cuda/shape.h"
#include "backend/views.h"
#include "core/backend.h"
#include "primitives/binary.h"
#include "primitives/layout.h"
#include "primitives/matmul.h"
#include "primitives/reduce.h"
#include "primitives/shape.h"
#include "primitives/ternary.h"
#include "primitives/unary.h"

static const cm_kernel_entry cuda_kernels[] = {
    /* element-wise */
    {&cm_prim_unary, cm_cuda_unary},
    {&cm_prim_stop_gradient, cm_view_identity},
    {&cm_prim_binary, cm_cuda_binary},
    {&cm_prim_select, cm_cuda_select},
    /* layout: copies, broadcasts, dependencies */
    {&cm_prim_broadcast, cm_view_broadcast},
    {&cm_prim_broadcast_axes, cm_view_broadcast},
    {&cm_prim_astype, cm_cuda_copy},
    {&cm_prim_copy, cm_cuda_copy},
    {&cm_prim_full, cm_cuda_copy},
    {&cm_prim_identity, cm_view_identity},
    {&cm_prim_depends, cm_view_depends},
    /* shape: views and copies of parts */
    {&cm_prim_reshape, cm_cuda_reshape},
    {&cm_prim_flatten, cm_cuda_reshape},
    {&cm_prim_unflatten, cm_cuda_reshape},
    {&cm_prim_squeeze, cm_cuda_reshape},
    {&cm_prim_expand_dims, cm_cuda_reshape},
    {&cm_prim_transpose, cm_view_transpose},
    {&cm_prim_slice, cm_view_slice},
    {&cm_prim_slice_update, cm_cuda_slice_update},
    {&cm_prim_pad, cm_cuda_pad},
    {&cm_prim_as_strided, cm_cuda_as_strided},
    {&cm_prim_view, cm_cuda_view},
    {&cm_prim_diagonal, cm_view_diagonal},
    {&cm_prim_concatenate, cm_cuda_concatenate},
    /* reductions */
    {&cm_prim_reduce, cm_cuda_reduce},
    /* products */
    {&cm_prim_matmul, cm_cuda_matmul},
    {&cm_prim_addmm, cm_cuda_matmul},
};

void cm_cuda_kernels_register(void) {
  cm_kernels_register(CM_GPU, cuda_kernels, sizeof cuda_kernels / sizeof *cuda_kernels);
}

size_t cm_cuda_kernel_table(const cm_kernel_entry **table) {
  *table = cuda_kernels;
  return sizeof cuda_kernels / sizeof *cuda_kernels;
}
