/* What the op families share: turning "scalar | array" arguments into
 * arrays the way MLX's bindings do, and the two commonest families (one
 * array in, one array out; two operands with weak scalars). */
#include "argparse.h"

static PyObject *str_mlx_array, *str_array, *str_dlpack;

static int intern_names(void) {
  if (str_mlx_array) return 0;
  str_mlx_array = PyUnicode_InternFromString("__mlx_array__");
  str_array = PyUnicode_InternFromString("__array__");
  str_dlpack = PyUnicode_InternFromString("__dlpack__");
  return str_mlx_array && str_array && str_dlpack ? 0 : -1;
}

static bool has_attr(PyObject *o, PyObject *name) {
  PyObject *a = PyObject_GetAttr(o, name);
  if (!a) {
    PyErr_Clear();
    return false;
  }
  Py_DECREF(a);
  return true;
}

bool pa_is_array_operand(PyObject *o) {
  if (PyCmArray_Check(o) || PyBool_Check(o) || PyLong_Check(o) || PyFloat_Check(o) ||
      PyComplex_Check(o))
    return true;
  if (o == Py_None || PyUnicode_Check(o) || PyList_Check(o) || PyTuple_Check(o) ||
      PyDict_Check(o))
    return false;
  if (PyObject_CheckBuffer(o)) return true;
  if (intern_names()) {
    PyErr_Clear();
    return false;
  }
  return has_attr(o, str_mlx_array) || has_attr(o, str_array) || has_attr(o, str_dlpack) ||
         pycm_complex_like(o, NULL);
}

static int invalid_type(PyObject *o) {
  PyErr_Format(PyExc_ValueError, "Invalid type %s received in array initialization.",
               pa_type_name(o));
  return -1;
}

cm_array *pa_to_array(PyObject *o, int dtype) {
  if (PyCmArray_Check(o) && dtype < 0) return cm_retain(((PyCmArray *)o)->arr);
  if (!pa_is_array_operand(o)) {
    invalid_type(o);
    return NULL;
  }
  return pycm_to_operand(o, dtype);
}

int pa_binary_operands(PyObject *a, PyObject *b, cm_array **xa, cm_array **xb) {
  if (!pa_is_array_operand(a)) return invalid_type(a);
  if (!pa_is_array_operand(b)) return invalid_type(b);
  return pycm_binary_operands(a, b, xa, xb);
}

PyObject *pa_dtype_object(cm_dtype t) {
  PyObject *d = pycm_dtype_object(t);
  Py_XINCREF(d);
  return d;
}

/* The stream is the last parameter of every op spec. */
static cm_stream last_stream(const pycm_op *op, const pa_call *c) {
  int n = op->compiled.n;
  if (n && op->compiled.p[n - 1].type == PA_STREAM) return c->v[n - 1].stream;
  return CM_STREAM_DEFAULT;
}

/* fn(a, s): a is "array" (borrowed) or "scalar | array" (converted). */
PyObject *pa_impl_unary(const pycm_op *op, pa_call *c) {
  cm_array *a = op->compiled.p[0].type == PA_ARRAY ? cm_retain(c->v[0].arr)
                                                    : pa_to_array(c->v[0].obj, -1);
  if (!a) return NULL;
  cm_array *r = op->fn.unary(a, last_stream(op, c));
  cm_release(a);
  return pycm_wrap(r);
}

/* fn(a, b, s) with MLX's weak scalars. */
PyObject *pa_impl_binary(const pycm_op *op, pa_call *c) {
  cm_array *a, *b;
  if (pa_binary_operands(c->v[0].obj, c->v[1].obj, &a, &b)) return NULL;
  cm_array *r = op->fn.binary(a, b, last_stream(op, c));
  cm_release(a);
  cm_release(b);
  return pycm_wrap(r);
}

cm_stream pa_stream(const pycm_op *op, const pa_call *c) { return last_stream(op, c); }
