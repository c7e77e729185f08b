/* The CPU backend's kernels: one (primitive, kernel) pair per primitive
 * with a CPU kernel, registered when the library starts.  The descriptors
 * in src/primitives name no kernel; this table is the only place that ties
 * a CPU function to a primitive.  A primitive missing here has no CPU
 * kernel (eval reports "<Name> has no CPU implementation."). */
#include "backend/cpu/kernels.h"

#include "backend/cpu/binary.h"
#include "backend/cpu/conv.h"
#include "backend/cpu/creation.h"
#include "backend/cpu/distributed.h"
#include "backend/cpu/fast.h"
#include "backend/cpu/fft.h"
#include "backend/cpu/fused.h"
#include "backend/cpu/gather.h"
#include "backend/cpu/gather_mm.h"
#include "backend/cpu/hadamard.h"
#include "backend/cpu/layout.h"
#include "backend/cpu/linalg.h"
#include "backend/cpu/load.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/quantized.h"
#include "backend/cpu/random.h"
#include "backend/cpu/reduce.h"
#include "backend/cpu/scan.h"
#include "backend/cpu/scatter.h"
#include "backend/cpu/shape.h"
#include "backend/cpu/sort.h"
#include "backend/cpu/ternary.h"
#include "backend/cpu/unary.h"
#include "backend/views.h"
#include "core/backend.h"
#include "core/error.h"
#include "primitives/binary.h"
#include "primitives/compiled.h"
#include "primitives/conv.h"
#include "primitives/count.h"
#include "primitives/creation.h"
#include "primitives/custom_kernel.h"
#include "primitives/distributed.h"
#include "primitives/divmod.h"
#include "primitives/fast.h"
#include "primitives/fft.h"
#include "primitives/gather_mm.h"
#include "primitives/hadamard.h"
#include "primitives/indexing.h"
#include "primitives/layout.h"
#include "primitives/linalg.h"
#include "primitives/load.h"
#include "primitives/matmul.h"
#include "primitives/quantized.h"
#include "primitives/random.h"
#include "primitives/reduce.h"
#include "primitives/scan.h"
#include "primitives/shape.h"
#include "primitives/sort.h"
#include "primitives/ternary.h"
#include "primitives/unary.h"

/* MLX's CustomKernel::eval_cpu: custom kernels are Metal (or CUDA)
 * source, so the CPU's answer is MLX's error rather than the generic
 * "no CPU implementation". */
static int custom_kernel_cpu(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)out, (void)in, (void)nin, (void)p;
  return cm_error(CM_ERR_RUNTIME, "Custom kernels only run on GPU.");
}

static const cm_kernel_entry cpu_kernels[] = {
    /* element-wise */
    {&cm_prim_unary, cm_cpu_unary},
    {&cm_prim_stop_gradient, cm_view_identity},
    {&cm_prim_binary, cm_cpu_binary},
    {&cm_prim_divmod, cm_cpu_divmod},
    {&cm_prim_select, cm_cpu_select},
    {&cm_prim_compiled, cm_cpu_fused},

    /* creation and random */
    {&cm_prim_arange, cm_cpu_arange},
    {&cm_prim_linspace, cm_cpu_linspace},
    {&cm_prim_eye, cm_cpu_eye},
    {&cm_prim_tri, cm_cpu_tri},
    {&cm_prim_number_of_elements, cm_cpu_number_of_elements},
    {&cm_prim_random_bits, cm_cpu_random_bits},
    {&cm_prim_load, cm_cpu_load},

    /* layout: copies, broadcasts, dependencies */
    {&cm_prim_broadcast, cm_view_broadcast},
    {&cm_prim_broadcast_axes, cm_view_broadcast},
    {&cm_prim_astype, cm_cpu_copy},
    {&cm_prim_copy, cm_cpu_copy},
    {&cm_prim_full, cm_cpu_copy},
    {&cm_prim_identity, cm_view_identity},
    {&cm_prim_depends, cm_view_depends},

    /* shape: views and copies of parts */
    {&cm_prim_reshape, cm_cpu_reshape},
    {&cm_prim_flatten, cm_cpu_reshape},
    {&cm_prim_unflatten, cm_cpu_reshape},
    {&cm_prim_squeeze, cm_cpu_reshape},
    {&cm_prim_expand_dims, cm_cpu_reshape},
    {&cm_prim_transpose, cm_view_transpose},
    {&cm_prim_slice, cm_view_slice},
    {&cm_prim_slice_update, cm_cpu_slice_update},
    {&cm_prim_pad, cm_cpu_pad},
    {&cm_prim_dynamic_slice, cm_cpu_dynamic_slice},
    {&cm_prim_dynamic_slice_update, cm_cpu_dynamic_slice_update},
    {&cm_prim_as_strided, cm_cpu_as_strided},
    {&cm_prim_view, cm_cpu_view},
    {&cm_prim_diagonal, cm_view_diagonal},
    {&cm_prim_concatenate, cm_cpu_concatenate},
    {&cm_prim_window, cm_cpu_window},

    /* indexing */
    {&cm_prim_gather, cm_cpu_gather},
    {&cm_prim_gather_axis, cm_cpu_gather_axis},
    {&cm_prim_scatter, cm_cpu_scatter},
    {&cm_prim_scatter_axis, cm_cpu_scatter_axis},
    {&cm_prim_masked_scatter, cm_cpu_masked_scatter},
    {&cm_prim_masked_gather, cm_cpu_masked_gather},

    /* reductions, scans, sorts */
    {&cm_prim_reduce, cm_cpu_reduce},
    {&cm_prim_arg_reduce, cm_cpu_arg_reduce},
    {&cm_prim_median, cm_cpu_median},
    {&cm_prim_softmax, cm_cpu_softmax},
    {&cm_prim_logsumexp, cm_cpu_logsumexp},
    {&cm_prim_scan, cm_cpu_scan},
    {&cm_prim_sort, cm_cpu_sort},

    /* products, convolution, transforms of the signal */
    {&cm_prim_matmul, cm_cpu_matmul},
    {&cm_prim_addmm, cm_cpu_matmul},
    {&cm_prim_gather_mm, cm_cpu_gather_mm},
    {&cm_prim_segmented_mm, cm_cpu_segmented_mm},
    {&cm_prim_block_masked_mm, cm_cpu_block_masked_mm},
    {&cm_prim_conv, cm_cpu_conv},
    {&cm_prim_fft, cm_cpu_fft},
    {&cm_prim_hadamard, cm_cpu_hadamard},

    /* quantization */
    {&cm_prim_quantize, cm_cpu_quantize},
    {&cm_prim_fp_quantize, cm_cpu_fp_quantize},
    {&cm_prim_dequantize, cm_cpu_dequantize},
    {&cm_prim_quantized_matmul, cm_cpu_quantized_matmul},
    {&cm_prim_gather_qmm, cm_cpu_gather_qmm},
    {&cm_prim_convert_fp8, cm_cpu_convert_fp8},

    /* linear algebra */
    {&cm_prim_svd, cm_cpu_svd},
    {&cm_prim_qrf, cm_cpu_qrf},
    {&cm_prim_luf, cm_cpu_luf},
    {&cm_prim_cholesky, cm_cpu_cholesky},
    {&cm_prim_inverse, cm_cpu_inverse},
    {&cm_prim_solve, cm_cpu_solve},
    {&cm_prim_eig, cm_cpu_eig},
    {&cm_prim_eigh, cm_cpu_eigh},

    /* mlx.core.fast */
    {&cm_prim_rms_norm, cm_cpu_rms_norm},
    {&cm_prim_layer_norm, cm_cpu_layer_norm},
    {&cm_prim_rms_norm_vjp, cm_cpu_norm_vjp},
    {&cm_prim_layer_norm_vjp, cm_cpu_norm_vjp},
    {&cm_prim_rope, cm_cpu_rope},
    {&cm_prim_sdpa, cm_cpu_sdpa},
    {&cm_prim_sdpa_vjp, cm_cpu_sdpa_vjp},
    {&cm_prim_custom_kernel, custom_kernel_cpu},

    /* collectives (host memory; the transports are distributed/) */
    {&cm_prim_all_reduce, cm_cpu_all_reduce},
    {&cm_prim_all_gather, cm_cpu_all_gather},
    {&cm_prim_reduce_scatter, cm_cpu_reduce_scatter},
    {&cm_prim_send, cm_cpu_send},
    {&cm_prim_recv, cm_cpu_recv},
};

int cm_cpu_kernels_register(void) {
  return cm_kernels_register(CM_CPU, cpu_kernels, sizeof cpu_kernels / sizeof cpu_kernels[0]);
}
