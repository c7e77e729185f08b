/* The quantization ops as module functions (ops/quantized.h): quantize,
 * dequantize, quantized_matmul, gather_qmm, qqmm, to_fp8, from_fp8.
 * Arrays only, as in MLX; `mode` is a str (None is MLX's TypeError). */
#include "ops/quantized.h"
#include "ops_tables.h"

#include "ops_lists.h"

#define KW_S "*, stream: Stream = None"
#define SIG_S "stream: StreamOrDevice = None) -> array"

static const char *mode_arg(const pa_value *v, const char *dflt, int *bad) {
  const char *m = NULL;
  *bad = pa_str_arg(v, dflt, &m);
  return m;
}

static int opt_int(const pa_value *v) { return v->none ? -1 : (int)v->i; }

static cm_array *opt_arr(const pa_value *v) { return v->none ? NULL : v->arr; }

/* quantize(w, /, group_size=None, bits=None, mode='affine', *, global_scale=None) -> list */
static PyObject *impl_quantize(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  int bad;
  const char *mode = mode_arg(&v[3], "affine", &bad);
  if (bad) return bad > 0 ? pa_value_type_error(op, c) : NULL;
  cm_array *outs[3] = {NULL, NULL, NULL};
  int n = 0;
  if (cm_quantize(v[0].arr, opt_int(&v[1]), opt_int(&v[2]), mode, opt_arr(&v[4]), outs, &n,
                  pa_stream(op, c)))
    return pycm_raise();
  return pa_wrap_arrays(outs, n, false);
}

static PyObject *impl_dequantize(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  int bad;
  const char *mode = mode_arg(&v[5], "affine", &bad);
  if (bad) return bad > 0 ? pa_value_type_error(op, c) : NULL;
  return pycm_wrap(cm_dequantize(v[0].arr, v[1].arr, opt_arr(&v[2]), opt_int(&v[3]), opt_int(&v[4]),
                                 mode, opt_arr(&v[6]), v[7].none ? -1 : (int)v[7].dtype,
                                 pa_stream(op, c)));
}

static PyObject *impl_quantized_matmul(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  int bad;
  const char *mode = mode_arg(&v[7], "affine", &bad);
  if (bad) return bad > 0 ? pa_value_type_error(op, c) : NULL;
  return pycm_wrap(cm_quantized_matmul(v[0].arr, v[1].arr, v[2].arr, opt_arr(&v[3]), v[4].b,
                                       opt_int(&v[5]), opt_int(&v[6]), mode, pa_stream(op, c)));
}

static PyObject *impl_gather_qmm(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  int bad;
  const char *mode = mode_arg(&v[9], "affine", &bad);
  if (bad) return bad > 0 ? pa_value_type_error(op, c) : NULL;
  return pycm_wrap(cm_gather_qmm_global(v[0].arr, v[1].arr, v[2].arr, opt_arr(&v[3]),
                                        opt_arr(&v[4]), opt_arr(&v[5]), v[6].b, opt_int(&v[7]),
                                        opt_int(&v[8]), mode, opt_arr(&v[10]), v[11].b,
                                        pa_stream(op, c)));
}

static PyObject *impl_qqmm(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  int bad;
  const char *mode = mode_arg(&v[5], "nvfp4", &bad);
  if (bad) return bad > 0 ? pa_value_type_error(op, c) : NULL;
  return pycm_wrap(cm_qqmm(v[0].arr, v[1].arr, opt_arr(&v[2]), opt_int(&v[3]), opt_int(&v[4]), mode,
                           opt_arr(&v[6]), opt_arr(&v[7]), pa_stream(op, c)));
}

static PyObject *impl_gather_qqmm(const pycm_op *op, pa_call *c) {
  return pycm_wrap(cm_gather_qqmm(c->v[0].arr, c->v[1].arr, pa_stream(op, c)));
}

static PyObject *impl_to_fp8(const pycm_op *op, pa_call *c) {
  return pycm_wrap(cm_to_fp8(c->v[0].arr, pa_stream(op, c)));
}

static PyObject *impl_from_fp8(const pycm_op *op, pa_call *c) {
  return pycm_wrap(cm_from_fp8(c->v[0].arr, c->v[1].dtype, pa_stream(op, c)));
}

pycm_op pycm_ops_quantized[] = {
    PYCM_CALL("quantize",
              "w: array, /, group_size: int | None = None, bits: int | None = None, mode: object "
              "| None = None, *, global_scale: array | None = None, " KW_S,
              "(w: array, /, group_size: int | None = None, bits: int | None = None, mode: str = "
              "'affine', *, global_scale: array | None = None, stream: StreamOrDevice = None) -> "
              "tuple[array, array, array]",
              impl_quantize),
    PYCM_CALL("dequantize",
              "w: array, /, scales: array, biases: array | None = None, group_size: int | None = "
              "None, bits: int | None = None, mode: object | None = None, global_scale: array | "
              "None = None, dtype: Dtype | None = None, " KW_S,
              "(w: array, /, scales: array, biases: array | None = None, group_size: int | None = "
              "None, bits: int | None = None, mode: str = 'affine', global_scale: array | None = "
              "None, dtype: Dtype | None = None, *, " SIG_S,
              impl_dequantize),
    PYCM_CALL("quantized_matmul",
              "x: array, w: array, /, scales: array, biases: array | None = None, transpose: bool "
              "= True, group_size: int | None = None, bits: int | None = None, mode: object | "
              "None = None, " KW_S,
              "(x: array, w: array, /, scales: array, biases: array | None = None, transpose: "
              "bool = True, group_size: int | None = None, bits: int | None = None, mode: str = "
              "'affine', *, " SIG_S,
              impl_quantized_matmul),
    PYCM_CALL("gather_qmm",
              "x: array, w: array, /, scales: array, biases: array | None = None, lhs_indices: "
              "array | None = None, rhs_indices: array | None = None, transpose: bool = True, "
              "group_size: int | None = None, bits: int | None = None, mode: object | None = "
              "None, global_scale: array | None = None, *, sorted_indices: bool = False, "
              "stream: Stream = None",
              "(x: array, w: array, /, scales: array, biases: array | None = None, lhs_indices: "
              "array | None = None, rhs_indices: array | None = None, transpose: bool = True, "
              "group_size: int | None = None, bits: int | None = None, mode: str = 'affine', "
              "global_scale: array | None = None, *, sorted_indices: bool = False, " SIG_S,
              impl_gather_qmm),
    PYCM_CALL("qqmm",
              "x: array, w: array, scales: array | None = None, group_size: int | None = None, "
              "bits: int | None = None, mode: object | None = None, global_scale_x: array | None "
              "= None, global_scale_w: array | None = None, " KW_S,
              "(x: array, w: array, scales: array | None = None, group_size: int | None = None, "
              "bits: int | None = None, mode: str = 'nvfp4', global_scale_x: array | None = "
              "None, global_scale_w: array | None = None, *, " SIG_S,
              impl_qqmm),
    PYCM_CALL("gather_qqmm",
              "x: array, w: array, /, scales: array | None = None, lhs_indices: array | None = "
              "None, rhs_indices: array | None = None, group_size: int | None = None, bits: int "
              "| None = None, mode: object | None = None, global_scale_x: array | None = None, "
              "global_scale_w: array | None = None, *, sorted_indices: bool = False, "
              "stream: Stream = None",
              "(x: array, w: array, /, scales: array | None = None, lhs_indices: array | None = "
              "None, rhs_indices: array | None = None, group_size: int | None = None, bits: int "
              "| None = None, mode: str = 'nvfp4', global_scale_x: array | None = None, "
              "global_scale_w: array | None = None, *, sorted_indices: bool = False, " SIG_S,
              impl_gather_qqmm),
    PYCM_CALL("to_fp8", "x: array, " KW_S, "(x: array, *, " SIG_S, impl_to_fp8),
    PYCM_CALL("from_fp8", "x: array, dtype: Dtype = bfloat16, " KW_S,
              "(x: array, dtype: Dtype = bfloat16, *, " SIG_S, impl_from_fp8),
};
const int pycm_ops_quantized_count = sizeof pycm_ops_quantized / sizeof pycm_ops_quantized[0];
