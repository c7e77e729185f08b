/* mlx/c/transforms_impl.h: the two halves of vmap, as MLX's
 * detail::vmap_trace and detail::vmap_replace.  An axis of -1 means "not
 * batched" (MLX's flat axes); in out_axes it is MLX's None. */
#include <stdint.h>
#include <stdlib.h>

#include "capi/capi.h"
#include "transforms/vmap.h"

/* Copy axes, turning -1 into CM_VMAP_NONE; NULL (reported) on failure. */
static int *axes_arg(const char *fn, const int *axes, size_t num, size_t want, const char *what) {
  int n;
  if (capi_list(fn, axes, num, &n)) return NULL;
  if (num != want) {
    capi_errorf("[vmap] The number of %s (%zu) must match the number of %s (%zu).", what, num,
                what[0] == 'i' ? "inputs" : "outputs", want);
    return NULL;
  }
  int *out = malloc(sizeof(int) * (num ? num : 1));
  if (!out) {
    capi_errorf("[vmap] Out of memory.");
    return NULL;
  }
  for (size_t i = 0; i < num; i++) out[i] = axes[i] == -1 ? CM_VMAP_NONE : axes[i];
  return out;
}

int mlx_detail_vmap_trace(mlx_vector_array *res_0, mlx_vector_array *res_1, const mlx_closure fun,
                          const mlx_vector_array inputs, const int *in_axes, size_t in_axes_num) {
  if (capi_out("mlx_detail_vmap_trace", res_0) ||
      capi_out("mlx_detail_vmap_trace", res_1))
    return 1;
  size_t n;
  cm_array *const *in;
  if (capi_vector_arrays("mlx_detail_vmap_trace", inputs, &in, &n)) return 1;
  if (capi_need_h("vmap", fun.ctx, CAPI_H_CLOSURE)) return 1;
  if (n > INT32_MAX) return capi_errorf("[vmap] Too many arrays.");
  int *axes = axes_arg("vmap_trace", in_axes, in_axes_num, n, "in axes");
  if (!axes) return 1;
  cm_closure f = {capi_closure_call, fun.ctx};
  cm_array **s_in = NULL, **s_out = NULL;
  int nout = 0;
  int rc = cm_vmap_trace(f, in, (int)n, axes, &s_in, &s_out, &nout) ? capi_fail() : 0;
  free(axes);
  if (rc) return rc;
  rc = capi_vector_set_arrays(res_0, s_in, n);
  if (!rc) rc = capi_vector_set_arrays(res_1, s_out, (size_t)nout);
  cm_array_list_free(s_in, (int)n);
  cm_array_list_free(s_out, nout);
  return rc;
}

int mlx_detail_vmap_replace(mlx_vector_array *res, const mlx_vector_array inputs,
                            const mlx_vector_array s_inputs, const mlx_vector_array s_outputs,
                            const int *in_axes, size_t in_axes_num, const int *out_axes,
                            size_t out_axes_num) {
  if (capi_out("mlx_detail_vmap_replace", res)) return 1;
  size_t n, ns, nout;
  cm_array *const *in, *const *s_in, *const *s_out;
  const char *fn = "mlx_detail_vmap_replace";
  if (capi_vector_arrays(fn, inputs, &in, &n) || capi_vector_arrays(fn, s_inputs, &s_in, &ns) ||
      capi_vector_arrays(fn, s_outputs, &s_out, &nout))
    return 1;
  if (n > INT32_MAX || nout > INT32_MAX) return capi_errorf("[vmap] Too many arrays.");
  if (ns != n)
    return capi_errorf(
        "[vmap] The number of traced inputs (%zu) must match the number of inputs (%zu).", ns, n);
  int *axes = axes_arg("vmap_replace", in_axes, in_axes_num, n, "in axes");
  if (!axes) return 1;
  int *oaxes = axes_arg("vmap_replace", out_axes, out_axes_num, nout, "out axes");
  if (!oaxes) {
    free(axes);
    return 1;
  }
  cm_array **outs = NULL;
  int rc = cm_vmap_replace(in, s_in, (int)n, s_out, (int)nout, axes, oaxes, (int)nout, &outs)
               ? capi_fail()
               : 0;
  if (!rc) {
    rc = capi_vector_set_arrays(res, outs, nout);
    cm_array_list_free(outs, (int)nout);
  }
  free(axes);
  free(oaxes);
  return rc;
}
