/* cmlx.core.fast: MLX's mx.fast (python/src/fast.cpp in MLX) over
 * ops/fast.h.  As in MLX's CPU build, metal_kernel builds kernel objects
 * whose call raises "[metal_kernel] No Metal back-end." except while a
 * function is traced for export (ops/metal_kernel.h), and cuda_kernel
 * and precompiled_cuda_kernel raise "[cuda_kernel] No CUDA back-end." at
 * once. */
#include "ops/fast.h"
#include "init.h"
#include "argparse.h"
#include "ops/metal_kernel.h"

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

/* A metal_kernel(...) object: what it was given (name/source/header str,
 * input and output names tuples of str, MLX's MathMode). */
typedef struct custom_kernel {
  PyObject_HEAD
  PyObject *name, *source, *header, *inputs, *outputs;
  bool ensure_row_contiguous, atomic_outputs;
  int math_mode;
} custom_kernel;

static void kernel_dealloc(PyObject *self) {
  custom_kernel *k = (custom_kernel *)self;
  Py_XDECREF(k->name), Py_XDECREF(k->source), Py_XDECREF(k->header);
  Py_XDECREF(k->inputs), Py_XDECREF(k->outputs);
  Py_TYPE(self)->tp_free(self);
}

/* A tuple's str items as UTF-8 (borrowed from the tuple); NULL on error. */
static const char **utf8_items(PyObject *t) {
  Py_ssize_t n = PyTuple_GET_SIZE(t);
  const char **v = PyMem_Malloc(sizeof *v * (size_t)(n + 1));
  if (!v) return (const char **)PyErr_NoMemory();
  for (Py_ssize_t i = 0; i < n; i++)
    if (!(v[i] = PyUnicode_AsUTF8(PyTuple_GET_ITEM(t, i)))) {
      PyMem_Free(v);
      return NULL;
    }
  return v;
}

static int int3_arg(PyObject *o, const char *what, int v[3]) {
  PyObject *t = PySequence_Check(o) ? PySequence_Tuple(o) : NULL;
  int rc = t && PyTuple_GET_SIZE(t) == 3 ? 0 : -1;
  for (int i = 0; !rc && i < 3; i++) {
    long x = PyLong_AsLong(PyTuple_GET_ITEM(t, i));
    if (x == -1 && PyErr_Occurred()) rc = -1;
    else v[i] = (int)x;
  }
  Py_XDECREF(t);
  if (rc && !PyErr_Occurred())
    PyErr_Format(PyExc_TypeError, "__call__(): `%s` must be a tuple of three ints", what);
  return rc;
}

typedef struct call_args {
  cm_array **in;
  int nin, nout, nt;
  int *ndims;
  int32_t *shapes; /* CM_MAX_DIMS per output */
  cm_dtype *dtypes;
  cm_template_arg *targs;
  PyObject *tnames; /* keeps the template names' strings */
} call_args;

static void call_args_free(call_args *a) {
  for (int i = 0; i < a->nin; i++) cm_release(a->in[i]);
  PyMem_Free(a->in), PyMem_Free(a->ndims), PyMem_Free(a->shapes), PyMem_Free(a->dtypes);
  PyMem_Free(a->targs);
  Py_XDECREF(a->tnames);
}

static int parse_outputs(PyObject *shapes, PyObject *dtypes, call_args *a) {
  PyObject *sh = PySequence_Fast(shapes, "__call__(): `output_shapes` must be a list");
  PyObject *dt = sh ? PySequence_Fast(dtypes, "__call__(): `output_dtypes` must be a list") : NULL;
  int rc = dt ? 0 : -1;
  int n = rc ? 0 : (int)PySequence_Fast_GET_SIZE(sh),
      m = rc ? 0 : (int)PySequence_Fast_GET_SIZE(dt);
  if (!rc && n != m) {
    PyErr_Format(PyExc_ValueError,
                 "[metal_kernel] Expected `output_dtypes` to have size %d but got size %d.\n", n,
                 m);
    rc = -1;
  }
  if (!rc) {
    a->ndims = PyMem_Malloc(sizeof *a->ndims * (size_t)(n + 1));
    a->shapes = PyMem_Malloc(sizeof *a->shapes * CM_MAX_DIMS * (size_t)(n + 1));
    a->dtypes = PyMem_Malloc(sizeof *a->dtypes * (size_t)(n + 1));
    if (!a->ndims || !a->shapes || !a->dtypes) rc = (PyErr_NoMemory(), -1);
  }
  for (int i = 0; !rc && i < n; i++) {
    PyObject *s = PySequence_Fast(PySequence_Fast_GET_ITEM(sh, i),
                                  "__call__(): each output shape must be a sequence of ints");
    if (!s) rc = -1;
    else if (PySequence_Fast_GET_SIZE(s) > CM_MAX_DIMS)
      rc = (PyErr_Format(PyExc_ValueError, "[metal_kernel] Too many dimensions."), -1);
    for (int j = 0; !rc && j < (int)PySequence_Fast_GET_SIZE(s); j++) {
      long x = PyLong_AsLong(PySequence_Fast_GET_ITEM(s, j));
      if (x == -1 && PyErr_Occurred()) rc = -1;
      a->shapes[i * CM_MAX_DIMS + j] = (int32_t)x;
    }
    if (!rc) a->ndims[i] = (int)PySequence_Fast_GET_SIZE(s);
    Py_XDECREF(s);
    if (!rc) rc = pycm_dtype_arg(PySequence_Fast_GET_ITEM(dt, i), &a->dtypes[i]);
  }
  if (!rc) a->nout = n;
  Py_XDECREF(sh), Py_XDECREF(dt);
  return rc;
}

/* template: (name, bool | int | Dtype) pairs, bool before int as MLX. */
static int parse_template(PyObject *o, call_args *a) {
  if (!o || o == Py_None) return 0;
  PyObject *t = PySequence_Fast(o, "__call__(): `template` must be a list");
  if (!t) return -1;
  int n = (int)PySequence_Fast_GET_SIZE(t), rc = 0;
  a->targs = PyMem_Malloc(sizeof *a->targs * (size_t)(n + 1));
  a->tnames = PyList_New(0);
  if (!a->targs || !a->tnames) rc = (PyErr_NoMemory(), -1);
  for (int i = 0; !rc && i < n; i++) {
    PyObject *pair = PySequence_Fast_GET_ITEM(t, i), *name, *v;
    if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2 ||
        !PyUnicode_Check(name = PyTuple_GET_ITEM(pair, 0))) {
      rc = (PyErr_Format(PyExc_TypeError, "__call__(): `template` must be (str, value) pairs"), -1);
      break;
    }
    v = PyTuple_GET_ITEM(pair, 1);
    cm_template_arg *g = &a->targs[i];
    if (PyList_Append(a->tnames, name) || !(g->name = PyUnicode_AsUTF8(name))) rc = -1;
    else if (PyBool_Check(v)) g->kind = CM_TEMPLATE_BOOL, g->value = v == Py_True;
    else if (PyLong_Check(v)) {
      g->kind = CM_TEMPLATE_INT, g->value = (int)PyLong_AsLong(v);
      if (PyErr_Occurred()) rc = -1;
    } else {
      cm_dtype d;
      if (pycm_dtype_arg(v, &d)) {
        PyErr_Clear();
        rc = (PyErr_Format(PyExc_ValueError, "[metal_kernel] Invalid template argument. Must be "
                                             "`mlx.core.Dtype`, `int` or `bool`."),
              -1);
      } else {
        g->kind = CM_TEMPLATE_DTYPE, g->value = (int)d;
      }
    }
  }
  if (!rc) a->nt = n;
  Py_DECREF(t);
  return rc;
}

static PyObject *kernel_call(PyObject *self, PyObject *args, PyObject *kw) {
  static char *kwlist[] = {"inputs",   "output_shapes", "output_dtypes", "grid",   "threadgroup",
                           "template", "init_value",    "verbose",       "stream", NULL};
  custom_kernel *k = (custom_kernel *)self;
  PyObject *inputs, *shapes, *dtypes, *grid_o, *tg_o, *tmpl = NULL, *init = Py_None,
                                                      *stream_o = Py_None;
  int verbose = 0, grid[3], tg[3];
  if (!PyArg_ParseTupleAndKeywords(args, kw, "|$OOOOOOOpO:__call__", kwlist, &inputs, &shapes,
                                   &dtypes, &grid_o, &tg_o, &tmpl, &init, &verbose, &stream_o))
    return NULL;
  static const char *need[] = {"inputs", "output_shapes", "output_dtypes", "grid", "threadgroup"};
  for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
    if (!kw || !PyDict_GetItemString(kw, need[i]))
      return PyErr_Format(PyExc_TypeError, "__call__() missing required argument '%s'", need[i]);
  call_args a = {0};
  cm_stream s;
  double init_value = 0;
  PyObject *in = PySequence_Fast(inputs, "__call__(): `inputs` must be a list");
  int rc = in ? 0 : -1;
  if (!rc) {
    Py_ssize_t n = PySequence_Fast_GET_SIZE(in);
    if (!(a.in = PyMem_Calloc((size_t)n + 1, sizeof *a.in))) rc = (PyErr_NoMemory(), -1);
    for (Py_ssize_t i = 0; !rc && i < n; i++, a.nin++)
      if (!(a.in[i] = pa_to_array(PySequence_Fast_GET_ITEM(in, i), -1))) rc = -1;
  }
  Py_XDECREF(in);
  if (!rc) rc = parse_outputs(shapes, dtypes, &a);
  if (!rc) rc = int3_arg(grid_o, "grid", grid) || int3_arg(tg_o, "threadgroup", tg) ? -1 : 0;
  if (!rc) rc = parse_template(tmpl, &a);
  if (!rc && init != Py_None && (init_value = PyFloat_AsDouble(init)) == -1 && PyErr_Occurred())
    rc = -1;
  if (!rc) rc = pycm_stream_arg(stream_o, &s);
  const char **inames = rc ? NULL : utf8_items(k->inputs);
  const char **onames = inames ? utf8_items(k->outputs) : NULL;
  const char *name = onames ? PyUnicode_AsUTF8(k->name) : NULL;
  const char *source = name ? PyUnicode_AsUTF8(k->source) : NULL;
  const char *header = source ? PyUnicode_AsUTF8(k->header) : NULL;
  PyObject *result = NULL;
  if (header) {
    cm_metal_kernel_def def = {name,
                               source,
                               header,
                               inames,
                               (int)PyTuple_GET_SIZE(k->inputs),
                               onames,
                               (int)PyTuple_GET_SIZE(k->outputs),
                               k->ensure_row_contiguous,
                               k->atomic_outputs,
                               k->math_mode};
    const int32_t **sh = PyMem_Malloc(sizeof *sh * (size_t)(a.nout + 1));
    cm_array **outs = PyMem_Calloc((size_t)a.nout + 1, sizeof *outs);
    for (int i = 0; sh && i < a.nout; i++) sh[i] = a.shapes + (size_t)i * CM_MAX_DIMS;
    if (!sh || !outs) PyErr_NoMemory();
    else if (cm_fast_metal_kernel(&def, a.in, a.nin, a.ndims, sh, a.dtypes, a.nout, grid, tg,
                                  a.targs, a.nt, init != Py_None, (float)init_value, verbose, s,
                                  outs))
      pycm_raise();
    else if ((result = PyList_New(a.nout)))
      for (int i = 0; i < a.nout; i++)
        PyList_SET_ITEM(result, i, pycm_wrap(outs[i])), outs[i] = NULL;
    for (int i = 0; outs && i < a.nout; i++) cm_release(outs[i]);
    PyMem_Free(sh), PyMem_Free(outs);
  }
  PyMem_Free(inames), PyMem_Free(onames);
  call_args_free(&a);
  return result;
}

static PyTypeObject custom_kernel_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "cmlx.core.fast._CustomKernel",
    .tp_basicsize = sizeof(custom_kernel),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_dealloc = kernel_dealloc,
    .tp_call = kernel_call,
    .tp_doc = "__call__(self, *, inputs: list[scalar | array], output_shapes: "
              "list[Sequence[int]], output_dtypes: list[Dtype], grid: tuple[int, int, int], "
              "threadgroup: tuple[int, int, int], template: list[tuple[str, bool | int | "
              "Dtype]] | None = None, init_value: float | None = None, verbose: bool = false, "
              "stream: StreamOrDevice = None)",
};

/* A sequence of str as a tuple (new reference). */
static PyObject *str_tuple(PyObject *o, const char *who) {
  PyObject *t = PySequence_Check(o) && !PyUnicode_Check(o) ? PySequence_Tuple(o) : NULL;
  for (Py_ssize_t i = 0; t && i < PyTuple_GET_SIZE(t); i++)
    if (!PyUnicode_Check(PyTuple_GET_ITEM(t, i))) Py_CLEAR(t);
  if (!t) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "%s(): input_names and output_names must be sequences of str",
                 who);
  }
  return t;
}

/* MLX's parse_compile_options: None or {"math_mode": "safe" | "relaxed" | "fast"}. */
static int parse_compile_options(PyObject *o, int *math_mode) {
  static const char *const modes[] = {"safe", "relaxed", "fast"};
  *math_mode = 0;
  if (!o || o == Py_None) return 0;
  if (!PyDict_Check(o))
    return PyErr_Format(PyExc_ValueError,
                        "[metal_kernel] Expected `compile_options` to be a dict."),
           -1;
  PyObject *key, *value;
  Py_ssize_t pos = 0;
  while (PyDict_Next(o, &pos, &key, &value)) {
    const char *ks = PyUnicode_Check(key) ? PyUnicode_AsUTF8(key) : NULL;
    if (!ks) return PyErr_Format(PyExc_TypeError, "compile_options keys must be str"), -1;
    if (strcmp(ks, "math_mode"))
      return PyErr_Format(PyExc_ValueError, "[metal_kernel] Unknown compile option `%s`.", ks), -1;
    const char *vs = PyUnicode_Check(value) ? PyUnicode_AsUTF8(value) : NULL;
    if (!vs) return PyErr_Format(PyExc_TypeError, "math_mode must be str"), -1;
    int m = -1;
    for (int i = 0; i < 3; i++)
      if (!strcmp(vs, modes[i])) m = i;
    if (m < 0)
      return PyErr_Format(PyExc_ValueError, "[metal_kernel] Expected math_mode to be 'safe', "
                                            "'relaxed', or 'fast'."),
             -1;
    *math_mode = m;
  }
  return 0;
}

static PyObject *impl_metal_kernel(const pycm_op *op, pa_call *c) {
  (void)op;
  const pa_value *v = c->v;
  const char *who = "metal_kernel";
  if (!PyUnicode_Check(v[0].obj) || !PyUnicode_Check(v[3].obj) ||
      (!v[4].none && !PyUnicode_Check(v[4].obj)))
    return PyErr_Format(PyExc_TypeError, "%s(): name, source and header must be str", who);
  int math_mode;
  if (parse_compile_options(v[7].none ? NULL : v[7].obj, &math_mode)) return NULL;
  PyObject *ins = str_tuple(v[1].obj, who), *outs = ins ? str_tuple(v[2].obj, who) : NULL;
  if (outs && !PyTuple_GET_SIZE(outs)) {
    Py_CLEAR(outs);
    PyErr_Format(PyExc_ValueError, "[metal_kernel] Must specify at least one output.");
  }
  custom_kernel *k = outs ? PyObject_New(custom_kernel, &custom_kernel_type) : NULL;
  if (!k) {
    Py_XDECREF(ins), Py_XDECREF(outs);
    return NULL;
  }
  k->name = Py_NewRef(v[0].obj), k->source = Py_NewRef(v[3].obj);
  k->header = v[4].none ? PyUnicode_FromString("") : Py_NewRef(v[4].obj);
  k->inputs = ins, k->outputs = outs;
  k->ensure_row_contiguous = v[5].b, k->atomic_outputs = v[6].b, k->math_mode = math_mode;
  if (!k->header) Py_CLEAR(k);
  return (PyObject *)k;
}
/* MLX's CPU build refuses a CUDA kernel when it is made. */
static PyObject *impl_cuda_kernel(const pycm_op *op, pa_call *c) {
  (void)op, (void)c;
  return PyErr_Format(PyExc_RuntimeError, "[cuda_kernel] No CUDA back-end.");
}
static PyObject *impl_cross_entropy(const pycm_op *op, pa_call *c) {
  return pycm_wrap(cm_fast_cross_entropy(c->v[0].arr, c->v[1].arr, pa_stream(op, c)));
}

/* gated_delta_update(q, k, v, gamma, beta, initial_state=None, mask=None,
 * stream=None): MLX returns the list [y, state]. */
static PyObject *impl_gated_delta(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_array *y, *state;
  if (cm_fast_gated_delta_update(v[0].arr, v[1].arr, v[2].arr, v[3].arr, v[4].arr,
                                 v[5].none ? NULL : v[5].arr, v[6].none ? NULL : v[6].arr, &y,
                                 &state, pa_stream(op, c)))
    return pycm_raise();
  PyObject *list = PyList_New(2);
  PyObject *a = pycm_wrap(y), *b = pycm_wrap(state);
  if (!list || !a || !b) {
    Py_XDECREF(list), Py_XDECREF(a), Py_XDECREF(b);
    return NULL;
  }
  PyList_SET_ITEM(list, 0, a);
  PyList_SET_ITEM(list, 1, b);
  return list;
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
    PYCM_CALL("cross_entropy", "logits: array, targets: array, *, " STREAM,
              "(logits: array, targets: array, *, " SIG_STREAM, impl_cross_entropy),
    PYCM_CALL("gated_delta_update",
              "q: array, k: array, v: array, gamma: array, beta: array, initial_state: array | "
              "None = None, mask: array | None = None, " STREAM,
              "(q: mlx.core.array, k: mlx.core.array, v: mlx.core.array, gamma: "
              "mlx.core.array, beta: mlx.core.array, initial_state: mlx.core.array | None = "
              "None, mask: mlx.core.array | None = None, stream: mlx.core.Stream | "
              "mlx.core.ThreadLocalStream | mlx.core.Device | mlx.core.DeviceType | None = "
              "None) -> list[mlx.core.array]",
              impl_gated_delta),
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
