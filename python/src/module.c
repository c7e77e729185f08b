/* The cmlx.core module: creates it, adds the module constants, and calls
 * each file's init function in order (dtypes, devices, arrays, ..., ops);
 * nothing else.  The helpers the bindings share are in util.c, the entry
 * points it calls are declared in init.h.
 *
 * python/src is layered, each file using only files below it (the layer
 * map is in docs/internals.md; the ctest python_layers checks it):
 * util < dtype, device, array_object, array_buffer < argparse,
 * array_convert < ops_common, ops_lists, indexing, transforms_util < the
 * binding files < array (the type's behaviour), ops_module < module;
 * docs (argparse < docs < module) runs last, over everything added. */
#include "init.h"

#include <math.h>

#define CMLX_PY_VERSION "0.1.0"

static int add_constants(PyObject *m) {
  if (PyModule_AddObject(m, "pi", PyFloat_FromDouble(3.141592653589793)) ||
      PyModule_AddObject(m, "e", PyFloat_FromDouble(2.718281828459045)) ||
      PyModule_AddObject(m, "euler_gamma", PyFloat_FromDouble(0.5772156649015329)) ||
      PyModule_AddObject(m, "inf", PyFloat_FromDouble(INFINITY)) ||
      PyModule_AddObject(m, "nan", PyFloat_FromDouble(NAN)))
    return -1;
  Py_INCREF(Py_None);
  if (PyModule_AddObject(m, "newaxis", Py_None)) { Py_DECREF(Py_None); return -1; }
  return PyModule_AddStringConstant(m, "__version__", CMLX_PY_VERSION);
}

static struct PyModuleDef core_module = {
    PyModuleDef_HEAD_INIT,
    .m_name = "cmlx.core",
    .m_doc = "cmlx: MLX's array framework in C.",
    .m_size = -1,
};

PyMODINIT_FUNC PyInit_core(void) {
  PyObject *m = PyModule_Create(&core_module);
  if (!m) return NULL;
  /* Order matters: arrays refer to dtypes and devices; the op bindings come
   * last so they may replace nothing but add to everything. */
  if (add_constants(m) || pycm_init_dtype(m) || pycm_init_device(m) || pycm_init_array(m) ||
      pycm_init_memory(m) || pycm_init_eval(m) || pycm_init_ops(m) ||
      pycm_init_transforms(m) || pycm_init_backends(m) || pycm_init_print(m) ||
      pycm_init_random(m) || pycm_init_io(m) || pycm_init_linalg(m) || pycm_init_fast(m) ||
      pycm_init_fft(m) || pycm_init_hadamard(m) || pycm_init_distributed(m) ||
      pycm_init_docs(m)) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
