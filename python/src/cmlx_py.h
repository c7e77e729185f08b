/* The values every binding file handles: the array object and conversions
 * to it, dtypes, devices and streams.  The module is split by concern;
 * bindings hold no semantics: they convert arguments and call the core's
 * op constructors.  The helpers below these (errors, eval, registration)
 * are in util.h; each file's entry points are in init.h. */
#ifndef CMLX_PY_H
#define CMLX_PY_H

#include "util.h"

/* ---- the array object (array_object.c) ----
 * The type's storage and what every binding needs of it; its behaviour
 * (constructor, properties, methods, operators) is filled in by array.c's
 * pycm_init_array, above the bindings that provide the operators. */
typedef struct {
  PyObject_HEAD
  cm_array *arr;        /* owned reference, never NULL once constructed */
  PyObject *weakreflist;
} PyCmArray;

extern PyTypeObject PyCmArray_Type;
#define PyCmArray_Check(o) PyObject_TypeCheck((o), &PyCmArray_Type)

/* Wrap a new reference (stolen).  If a is NULL, raises the pending core
 * error and returns NULL, so `return pycm_wrap(cm_add(...));` is correct. */
PyObject *pycm_wrap(cm_array *a);

/* ---- conversions to arrays and back (array_convert.c) ---- */
/* Any array-like (array, bool/int/float/complex scalar, nested list/tuple,
 * NumPy array, buffer-protocol object) to a new reference.  dtype < 0
 * infers it as MLX does.  NULL with a Python exception set on failure. */
cm_array *pycm_to_array(PyObject *o, int dtype);
/* An operand of an op ("scalar | array"): pycm_to_array, and also, as
 * MLX's complex caster does, any other object with __complex__, __float__
 * or __index__ (a Fraction, a Decimal, ...), as a complex64 scalar.
 * mx.array() itself refuses those. */
cm_array *pycm_to_operand(PyObject *o, int dtype);
/* Whether o is such an object (it converts; *out gets the value). */
bool pycm_complex_like(PyObject *o, Py_complex *out);
/* Python scalars are weak: converted with `other`'s dtype when the kinds
 * allow (int with any int/float array keeps the array's dtype, float with
 * an integer array gives float32, ...).  Non-scalars go to pycm_to_array. */
cm_array *pycm_to_array_weak(PyObject *o, const cm_array *other);
/* Two operands of a binary op/operator, with weak-scalar promotion. */
int pycm_binary_operands(PyObject *a, PyObject *b, cm_array **xa, cm_array **xb);
/* item() and tolist(): evaluate (GIL released) and convert. */
PyObject *pycm_array_item(cm_array *a);
PyObject *pycm_array_tolist(cm_array *a);
/* A type's name as MLX prints it: "int64" for numpy.int64 (a static
 * type), "__main__.F" for a class written in Python. */
const char *pycm_short_type_name(PyObject *o);

/* ---- imports from foreign memory (array_buffer.c) ---- */
/* From a buffer-protocol object / a DLPack producer (a copy; dtype < 0
 * keeps the source's, except float64 -> float32 as in MLX). */
cm_array *pycm_from_buffer(PyObject *o, int dtype);
cm_array *pycm_from_dlpack(PyObject *o, int dtype);

/* ---- dtypes (dtype.c) ---- */
extern PyTypeObject PyCmDtype_Type;
PyObject *pycm_dtype_object(cm_dtype t); /* borrowed singleton */
/* Accepts a Dtype object; -1 with TypeError otherwise. */
int pycm_dtype_arg(PyObject *o, cm_dtype *out);
/* DtypeCategory members (mx.floating, ...): -1 with TypeError otherwise. */
int pycm_category_arg(PyObject *o, cm_category *out);

/* ---- devices and streams (device.c) ---- */
/* None (default), a Stream or a Device (or DeviceType) -> cm_stream. */
int pycm_stream_arg(PyObject *o, cm_stream *out);
/* New Device / Stream objects. */
PyObject *pycm_device_object(cm_device d);
PyObject *pycm_stream_object(cm_stream s);

/* ---- indexing (indexing.c) ---- */
/* a with a[key] replaced by value (op none) or combined with it (the
 * array.at reductions); a new reference, or NULL with a Python error. */
cm_array *pycm_index_update(cm_array *a, PyObject *key, cm_array *value, cm_scatter_op op);

#endif
