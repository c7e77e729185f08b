/* mx.metal and mx.cuda: the backend namespaces as MLX's CPU build has them
 * (python/src/metal.cpp and cuda.cpp in MLX, over no_metal.cpp and
 * no_cuda.cpp), so MLX code that asks about a backend runs on cmlx.
 *
 * metal.is_available() is False (cmlx has no Metal backend); start_capture
 * and stop_capture do nothing.  The memory functions and device_info are the
 * deprecated aliases MLX keeps in mx.metal: each prints MLX's deprecation
 * line to stderr on its first successful call, then does what its mx
 * namesake does (device_info asks about the GPU, so it gives {} here).
 * cuda.is_available() says whether the core has a usable GPU device, which
 * is False until a CUDA backend exists. */
#include "cmlx_py.h"
#include "init.h"

#include <stdio.h>

/* True with a nanobind signature TypeError raised unless the call passed no
 * arguments at all. */
static bool has_arguments(const char *name, const char *sig, PyObject *args, PyObject *kw) {
  if (PyTuple_GET_SIZE(args) == 0 && (!kw || PyDict_Size(kw) == 0)) return false;
  pycm_signature_error(name, sig, NULL, args, kw);
  return true;
}

/* ---- the functions MLX's CPU build implements itself --------------------- */

static PyObject *metal_is_available(PyObject *m, PyObject *args, PyObject *kw) {
  (void)m;
  if (has_arguments("is_available", "is_available() -> bool", args, kw)) return NULL;
  Py_RETURN_FALSE;
}

static PyObject *metal_start_capture(PyObject *m, PyObject *args, PyObject *kw) {
  (void)m;
  static char *kwlist[] = {"path", NULL};
  PyObject *path = NULL;
  /* nanobind's str caster: a str that encodes as UTF-8, nothing else. */
  if (!PyArg_ParseTupleAndKeywords(args, kw, "U:start_capture", kwlist, &path) ||
      !PyUnicode_AsUTF8AndSize(path, NULL))
    return pycm_signature_error("start_capture", "start_capture(path: str) -> None", NULL,
                                args, kw);
  Py_RETURN_NONE;
}

static PyObject *metal_stop_capture(PyObject *m, PyObject *args, PyObject *kw) {
  (void)m;
  if (has_arguments("stop_capture", "stop_capture() -> None", args, kw)) return NULL;
  Py_RETURN_NONE;
}

static PyObject *cuda_is_available(PyObject *m, PyObject *args, PyObject *kw) {
  (void)m;
  if (has_arguments("is_available", "is_available() -> bool", args, kw)) return NULL;
  return PyBool_FromLong(cm_device_available((cm_device){CM_GPU, 0}));
}

#define KW(f) (PyCFunction)(void (*)(void))(f), METH_VARARGS | METH_KEYWORDS

static PyMethodDef metal_functions[] = {
    {"is_available", KW(metal_is_available),
     "is_available() -> bool\n\nCheck if the Metal back-end is available."},
    {"start_capture", KW(metal_start_capture),
     "start_capture(path: str) -> None\n\nStart a Metal capture.\n\n"
     "Args:\n  path (str): The path to save the capture which should have\n"
     "    the extension ``.gputrace``."},
    {"stop_capture", KW(metal_stop_capture), "stop_capture() -> None\n\nStop a Metal capture."},
    {NULL, NULL, 0, NULL},
};

static PyMethodDef cuda_functions[] = {
    {"is_available", KW(cuda_is_available),
     "is_available() -> bool\n\nCheck if the CUDA back-end is available."},
    {NULL, NULL, 0, NULL},
};

/* ---- the deprecated aliases ---------------------------------------------- */

/* mx.metal.<name> calls mx.<name>: with `limit` passed through (the mx
 * function checks it and raises MLX's error), or with no arguments, or, for
 * device_info, with mx.gpu.  The function object's self is its index here. */
typedef struct {
  const char *name;
  const char *signature; /* as nanobind prints it */
  bool takes_limit;
  bool ask_gpu;
  bool warned; /* MLX prints the line once per process and function */
} alias;

static alias aliases[] = {
    {"get_active_memory", "get_active_memory() -> int", false, false, false},
    {"get_peak_memory", "get_peak_memory() -> int", false, false, false},
    {"reset_peak_memory", "reset_peak_memory() -> None", false, false, false},
    {"get_cache_memory", "get_cache_memory() -> int", false, false, false},
    {"set_memory_limit", "set_memory_limit(limit: int) -> int", true, false, false},
    {"set_cache_limit", "set_cache_limit(limit: int) -> int", true, false, false},
    {"set_wired_limit", "set_wired_limit(limit: int) -> int", true, false, false},
    {"clear_cache", "clear_cache() -> None", false, false, false},
    {"device_info", "device_info() -> dict[str, str | int]", false, true, false},
};
#define N_ALIASES ((int)(sizeof aliases / sizeof aliases[0]))

static PyObject *core_module; /* borrowed: the module outlives its submodules */

static PyObject *alias_call(PyObject *self, PyObject *args, PyObject *kw) {
  alias *a = &aliases[PyLong_AsLong(self)];
  PyObject *r = NULL;
  if (!a->takes_limit && has_arguments(a->name, a->signature, args, kw)) return NULL;
  PyObject *target = PyObject_GetAttrString(core_module, a->name);
  if (!target) return NULL;
  if (a->ask_gpu) {
    PyObject *gpu = PyObject_GetAttrString(core_module, "gpu");
    if (gpu) r = PyObject_CallOneArg(target, gpu);
    Py_XDECREF(gpu);
  } else {
    r = a->takes_limit ? PyObject_Call(target, args, kw) : PyObject_CallNoArgs(target);
  }
  Py_DECREF(target);
  if (r && !a->warned) {
    a->warned = true;
    fprintf(stderr,
            "mx.metal.%s is deprecated and will be removed in a future version. "
            "Use mx.%s instead.\n",
            a->name, a->name);
    fflush(stderr);
  }
  return r;
}

static PyMethodDef alias_defs[N_ALIASES];

static int add_aliases(PyObject *metal) {
  PyObject *modname = PyModule_GetNameObject(metal);
  if (!modname) return -1;
  int rc = 0;
  for (int i = 0; i < N_ALIASES && !rc; i++) {
    alias_defs[i] = (PyMethodDef){aliases[i].name, KW(alias_call), aliases[i].signature};
    PyObject *index = PyLong_FromLong(i);
    PyObject *f = index ? PyCFunction_NewEx(&alias_defs[i], index, modname) : NULL;
    Py_XDECREF(index);
    rc = f ? PyModule_AddObject(metal, aliases[i].name, f) : -1;
    if (rc) Py_XDECREF(f);
  }
  Py_DECREF(modname);
  return rc;
}

/* ---- the submodules ------------------------------------------------------ */

int pycm_init_backends(PyObject *m) {
  core_module = m;
  PyObject *metal = pycm_add_submodule(m, "metal", "cmlx.metal");
  if (!metal || PyModule_AddFunctions(metal, metal_functions) || add_aliases(metal)) return -1;
  PyObject *cuda = pycm_add_submodule(m, "cuda", "cmlx.cuda");
  if (!cuda || PyModule_AddFunctions(cuda, cuda_functions)) return -1;
  return 0;
}
