/* cmlx.core.fast: MLX's mx.fast (python/src/fast.cpp in MLX) over
 * ops/fast.h.  As in MLX's CPU build, metal_kernel builds kernel objects
 * whose call raises "[metal_kernel] No Metal back-end.", and cuda_kernel
 * and precompiled_cuda_kernel raise "[cuda_kernel] No CUDA back-end." at
 * once. */
#include "ops/fast.h"
#include "argparse.h"

static PyObject *impl_rms_norm(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  return pycm_wrap(
      cm_fast_rms_norm(v[0].arr, v[1].none ? NULL : v[1].arr, (float)v[2].f, pa_stream(op, c)));
}

static PyObject *impl_layer_norm(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  return pycm_wrap(cm_fast_layer_norm(v[0].arr, v[1].none ? NULL : v[1].arr,
                                      v[2].none ? NULL : v[2].arr, (float)v[3].f,
                                      pa_stream(op, c)));
}

/* rope(a, dims, *, traditional, base, scale, offset, freqs, stream):
 * offset is MLX's to_array (an int becomes int32). */
static PyObject *impl_rope(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_array *off = pa_to_array(v[5].obj, -1);
  if (!off) return NULL;
  cm_array *r = cm_fast_rope(v[0].arr, (int)v[1].i, v[2].b, !v[3].none, (float)v[3].f,
                             (float)v[4].f, off, v[6].none ? NULL : v[6].arr, pa_stream(op, c));
  cm_release(off);
  return pycm_wrap(r);
}

/* mask: None, "causal" or an array (bool or additive). */
static PyObject *impl_sdpa(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  const char *mode = "";
  cm_array *mask = NULL;
  if (!v[4].none) {
    PyObject *m = v[4].obj;
    if (PyUnicode_Check(m)) {
      const char *str = PyUnicode_AsUTF8(m);
      if (!str) return NULL;
      if (strcmp(str, "causal"))
        return PyErr_Format(PyExc_ValueError,
                            "[scaled_dot_product_attention] invalid mask option '%s'. Must be "
                            "'causal', or an array.",
                            str);
      mode = "causal";
    } else if (!(mask = pa_to_array(m, -1))) {
      return NULL;
    } else {
      mode = "array";
    }
  }
  cm_array *r = cm_fast_sdpa(v[0].arr, v[1].arr, v[2].arr, (float)v[3].f, mode, mask,
                             v[5].none ? NULL : v[5].arr, v[6].b, pa_stream(op, c));
  cm_release(mask);
  return pycm_wrap(r);
}

/* ---- custom kernels --------------------------------------------------------- */

typedef struct {
  PyObject_HEAD
} custom_kernel;

static PyObject *kernel_call(PyObject *self, PyObject *args, PyObject *kw) {
  static const char *need[] = {"inputs", "output_shapes", "output_dtypes", "grid", "threadgroup"};
  if (PyTuple_GET_SIZE(args))
    return PyErr_Format(PyExc_TypeError, "__call__() takes keyword arguments only");
  for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
    if (!kw || !PyDict_GetItemString(kw, need[i]))
      return PyErr_Format(PyExc_TypeError, "__call__() missing required argument '%s'", need[i]);
  (void)self;
  return PyErr_Format(PyExc_RuntimeError, "[metal_kernel] No Metal back-end.");
}

static PyTypeObject custom_kernel_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cmlx.core.fast._CustomKernel",
    .tp_basicsize = sizeof(custom_kernel),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_call = kernel_call,
    .tp_doc = "__call__(self, *, inputs: list[scalar | array], output_shapes: "
              "list[Sequence[int]], output_dtypes: list[Dtype], grid: tuple[int, int, int], "
              "threadgroup: tuple[int, int, int], template: list[tuple[str, bool | int | "
              "Dtype]] | None = None, init_value: float | None = None, verbose: bool = false, "
              "stream: StreamOrDevice = None)",
};

/* The first four arguments are strings and lists of strings. */
static PyObject *make_kernel(pa_call *c, const char *who) {
  const pa_value *v = c->v;
  if (!PyUnicode_Check(v[0].obj) || !PyUnicode_Check(v[3].obj))
    return PyErr_Format(PyExc_TypeError, "%s(): name and source must be str", who);
  for (int i = 1; i <= 2; i++)
    if (!PySequence_Check(v[i].obj) || PyUnicode_Check(v[i].obj))
      return PyErr_Format(PyExc_TypeError,
                          "%s(): input_names and output_names must be "
                          "sequences of str",
                          who);
  return (PyObject *)PyObject_New(custom_kernel, &custom_kernel_type);
}

static PyObject *impl_metal_kernel(const pycm_op *op, pa_call *c) {
  (void)op;
  return make_kernel(c, "metal_kernel");
}
/* MLX's CPU build refuses a CUDA kernel when it is made. */
static PyObject *impl_cuda_kernel(const pycm_op *op, pa_call *c) {
  (void)op, (void)c;
  return PyErr_Format(PyExc_RuntimeError, "[cuda_kernel] No CUDA back-end.");
}
static PyObject *impl_precompiled(const pycm_op *op, pa_call *c) {
  (void)op, (void)c;
  return PyErr_Format(PyExc_RuntimeError, "[cuda_kernel] No CUDA back-end.");
}

#define STREAM "stream: Stream | None = None"
#define SIG_STREAM "stream: StreamOrDevice = None) -> array"

static pycm_op fast_ops[] = {
    PYCM_CALL("rms_norm", "x: array, weight: array | None, eps: float, *, " STREAM,
              "(x: array, weight: array | None, eps: float, *, " SIG_STREAM, impl_rms_norm),
    PYCM_CALL("layer_norm",
              "x: array, weight: array | None, bias: array | None, eps: float, *, " STREAM,
              "(x: array, weight: array | None, bias: array | None, eps: float, *, " SIG_STREAM,
              impl_layer_norm),
    PYCM_CALL("rope",
              "a: array, dims: int, *, traditional: bool, base: float | None, scale: float, "
              "offset: intorarray, freqs: array | None = None, " STREAM,
              "(a: array, dims: int, *, traditional: bool, base: float | None, scale: float, "
              "offset: int | array, freqs: array | None = None, " SIG_STREAM,
              impl_rope),
    PYCM_CALL("scaled_dot_product_attention",
              "q: array, k: array, v: array, *, scale: float, mask: object | None = None, "
              "sinks: array | None = None, force_fused: bool = False, " STREAM,
              "(q: array, k: array, v: array, *, scale: float,  mask: None | str | array = "
              "None, sinks: array | None = None, force_fused: bool = False, " SIG_STREAM,
              impl_sdpa),
    PYCM_CALL("metal_kernel",
              "name: object, input_names: object, output_names: object, source: object, "
              "header: object | None = None, ensure_row_contiguous: bool = True, "
              "atomic_outputs: bool = False, compile_options: object | None = None",
              "(name: str, input_names: collections.abc.Sequence[str], output_names: "
              "collections.abc.Sequence[str], source: str, header: str = '', "
              "ensure_row_contiguous: bool = True, atomic_outputs: bool = False, "
              "compile_options: object | None = None) -> object",
              impl_metal_kernel),
    PYCM_CALL("cuda_kernel",
              "name: object, input_names: object, output_names: object, source: object, "
              "header: object | None = None, ensure_row_contiguous: bool = True, "
              "shared_memory: int = 0",
              "(name: str, input_names: collections.abc.Sequence[str], output_names: "
              "collections.abc.Sequence[str], source: str, header: str = '', "
              "ensure_row_contiguous: bool = True, shared_memory: int = 0) -> object",
              impl_cuda_kernel),
    PYCM_CALL("precompiled_cuda_kernel",
              "*, name: object, compiled_source: object, inputs: object, output_shapes: object, "
              "output_dtypes: object, scalars: object, grid: object, threadgroup: object, "
              "shared_memory: int = 0, init_value: float | None = None, "
              "ensure_row_contiguous: bool = False, " STREAM,
              "(*, name: str, compiled_source: bytes, inputs: collections.abc.Sequence[bool | "
              "int | float | array | complex], output_shapes: "
              "collections.abc.Sequence[tuple[int, ...]], output_dtypes: "
              "collections.abc.Sequence[Dtype], scalars: collections.abc.Sequence[object], "
              "grid: tuple[int, int, int], threadgroup: tuple[int, int, int], shared_memory: "
              "int = 0, init_value: float | None = None, ensure_row_contiguous: bool = False, "
              "stream: StreamOrDevice = None) -> list[array]",
              impl_precompiled),
};
#define N_FAST_OPS ((int)(sizeof fast_ops / sizeof fast_ops[0]))

int pycm_init_fast(PyObject *m) {
  PyObject *f = pycm_add_submodule(m, "fast", "mlx.core.fast: fast operations");
  if (!f || pa_add_functions(f, fast_ops, N_FAST_OPS)) return -1;
  return PyType_Ready(&custom_kernel_type);
}
