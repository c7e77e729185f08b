/* mlx/c/fast.h: fused operations (ops/fast.h) and custom kernels, which
 * behave as MLX's CPU build: making or applying a CUDA kernel reports
 * "[cuda_kernel] No CUDA back-end." (its configuration holds nothing, so
 * its setters accept anything and freeing any handle succeeds).  Metal
 * kernels are fast_metal.c. */
#include "ops/fast.h"
#include "capi/capi.h"

/* The CUDA kernel functions ignore their arguments: no kernel ever runs. */
#pragma GCC diagnostic ignored "-Wunused-parameter"

mlx_fast_cuda_kernel_config mlx_fast_cuda_kernel_config_new(void) {
  return (mlx_fast_cuda_kernel_config){0};
}

void mlx_fast_cuda_kernel_config_free(mlx_fast_cuda_kernel_config cls) {}

int mlx_fast_cuda_kernel_config_add_output_arg(mlx_fast_cuda_kernel_config cls, const int *shape,
                                               size_t size, mlx_dtype dtype) {
  return 0;
}

int mlx_fast_cuda_kernel_config_set_grid(mlx_fast_cuda_kernel_config cls, int grid1, int grid2,
                                         int grid3) {
  return 0;
}

int mlx_fast_cuda_kernel_config_set_thread_group(mlx_fast_cuda_kernel_config cls, int thread1,
                                                 int thread2, int thread3) {
  return 0;
}

int mlx_fast_cuda_kernel_config_set_init_value(mlx_fast_cuda_kernel_config cls, float value) {
  return 0;
}

int mlx_fast_cuda_kernel_config_set_verbose(mlx_fast_cuda_kernel_config cls, bool verbose) {
  return 0;
}

int mlx_fast_cuda_kernel_config_add_template_arg_dtype(mlx_fast_cuda_kernel_config cls,
                                                       const char *name, mlx_dtype dtype) {
  return 0;
}

int mlx_fast_cuda_kernel_config_add_template_arg_int(mlx_fast_cuda_kernel_config cls,
                                                     const char *name, int value) {
  return 0;
}

int mlx_fast_cuda_kernel_config_add_template_arg_bool(mlx_fast_cuda_kernel_config cls,
                                                      const char *name, bool value) {
  return 0;
}

mlx_fast_cuda_kernel mlx_fast_cuda_kernel_new(const char *name, const mlx_vector_string input_names,
                                              const mlx_vector_string output_names,
                                              const char *source, const char *header,
                                              bool ensure_row_contiguous, int shared_memory) {
  capi_errorf("[cuda_kernel] No CUDA back-end.");
  return (mlx_fast_cuda_kernel){0};
}

void mlx_fast_cuda_kernel_free(mlx_fast_cuda_kernel cls) {}

int mlx_fast_cuda_kernel_apply(mlx_vector_array *outputs, mlx_fast_cuda_kernel cls,
                               const mlx_vector_array inputs,
                               const mlx_fast_cuda_kernel_config config, const mlx_stream stream) {
  return capi_errorf("[cuda_kernel] No CUDA back-end.");
}

int mlx_fast_layer_norm(mlx_array *res, const mlx_array x, const mlx_array weight,
                        const mlx_array bias, float eps, const mlx_stream s) {
  if (capi_op(__func__, res, s) || capi_need(__func__, x) || capi_opt(__func__, weight) ||
      capi_opt(__func__, bias))
    return 1;
  return capi_set(
      res, cm_fast_layer_norm(capi_arr(x), capi_arr(weight), capi_arr(bias), eps, capi_stream(s)));
}

int mlx_fast_rms_norm(mlx_array *res, const mlx_array x, const mlx_array weight, float eps,
                      const mlx_stream s) {
  if (capi_op(__func__, res, s) || capi_need(__func__, x) || capi_opt(__func__, weight)) return 1;
  return capi_set(res, cm_fast_rms_norm(capi_arr(x), capi_arr(weight), eps, capi_stream(s)));
}

int mlx_fast_rope(mlx_array *res, const mlx_array x, int dims, bool traditional,
                  mlx_optional_float base, float scale, int offset, const mlx_array freqs,
                  const mlx_stream s) {
  if (capi_op(__func__, res, s) || capi_need(__func__, x) || capi_opt(__func__, freqs)) return 1;
  cm_array *off = cm_array_scalar_int(offset, CM_INT32);
  if (!off) return capi_fail();
  cm_array *r = cm_fast_rope(capi_arr(x), dims, traditional, base.has_value, base.value, scale, off,
                             capi_arr(freqs), capi_stream(s));
  cm_release(off);
  return capi_set(res, r);
}

int mlx_fast_rope_dynamic(mlx_array *res, const mlx_array x, int dims, bool traditional,
                          mlx_optional_float base, float scale, const mlx_array offset,
                          const mlx_array freqs, const mlx_stream s) {
  if (capi_op(__func__, res, s) || capi_need(__func__, x) || capi_need(__func__, offset) ||
      capi_opt(__func__, freqs))
    return 1;
  return capi_set(res, cm_fast_rope(capi_arr(x), dims, traditional, base.has_value, base.value,
                                    scale, capi_arr(offset), capi_arr(freqs), capi_stream(s)));
}

int mlx_fast_scaled_dot_product_attention(mlx_array *res, const mlx_array queries,
                                          const mlx_array keys, const mlx_array values, float scale,
                                          const char *mask_mode, const mlx_array mask_arr,
                                          const mlx_array sinks, const mlx_stream s) {
  if (capi_op(__func__, res, s) || capi_need(__func__, queries) || capi_need(__func__, keys) ||
      capi_need(__func__, values) || capi_opt(__func__, mask_arr) || capi_opt(__func__, sinks))
    return 1;
  return capi_set(res, cm_fast_sdpa(capi_arr(queries), capi_arr(keys), capi_arr(values), scale,
                                    mask_mode, capi_arr(mask_arr), capi_arr(sinks), false,
                                    capi_stream(s)));
}
