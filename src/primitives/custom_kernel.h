/* The CustomKernel primitive (MLX's fast::CustomKernel): a user kernel for
 * a GPU back-end, recorded so that it can be exported.  cmlx has no GPU
 * back-end, so evaluating one raises MLX's "Custom kernels only run on
 * GPU." (see ops/metal_kernel.h for when such nodes are built).
 *
 * The parameter block is variable-length: this header, then ninfos
 * entries of three flag bytes (the kernel reads the input's _shape,
 * _strides, _ndim), then the name's and the source's bytes. */
#ifndef CMLX_PRIMITIVES_CUSTOM_KERNEL_H
#define CMLX_PRIMITIVES_CUSTOM_KERNEL_H

#include "primitives/primitive.h"

typedef struct cm_custom_kernel_params {
  uint32_t name_len, source_len, ninfos;
  int32_t grid[3], threadgroup[3];
  int32_t shared_memory, compile_options; /* MLX's CompileOptions::Data */
  float init_value;
  uint8_t has_init, ensure_row_contiguous, is_precompiled, pad;
} cm_custom_kernel_params;
CM_PARAMS_ACCESSOR(cm_custom_kernel_params, cm_custom_kernel_params_of)

size_t cm_custom_kernel_params_size(const cm_params *p);
static inline const uint8_t *cm_custom_kernel_infos(const cm_custom_kernel_params *k) {
  return (const uint8_t *)(k + 1);
}
static inline const char *cm_custom_kernel_name(const cm_custom_kernel_params *k) {
  return (const char *)(k + 1) + 3 * (size_t)k->ninfos;
}
static inline const char *cm_custom_kernel_source(const cm_custom_kernel_params *k) {
  return cm_custom_kernel_name(k) + k->name_len;
}

extern const cm_prim cm_prim_custom_kernel;

#endif
