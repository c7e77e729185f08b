/* Shared declarations of the cmlx.core extension.  The module is split by
 * concern: dtype objects, the array type, devices/streams, memory, eval,
 * argument parsing and the op bindings.  Bindings hold no semantics: they
 * convert arguments and call the core's op constructors. */
#ifndef CMLX_PY_H
#define CMLX_PY_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "ops/ops.h"

/* ---- method tables ----
 * PyMethodDef keeps every method as a PyCFunction and CPython calls it as
 * its METH_ flags say, so a method that takes keywords (or fastcall
 * arguments) is stored cast.  These give the function and its flags
 * together, and the cast happens here only: each accepts a function of
 * exactly the type its flags mean (the _Generic has no other branch), so
 * a method of another shape does not compile. */
typedef PyObject *(*pycm_fastcall_fn)(PyObject *, PyObject *const *, Py_ssize_t);
typedef PyObject *(*pycm_fastcall_kw_fn)(PyObject *, PyObject *const *, Py_ssize_t, PyObject *);
#define PYCM_METH_CAST_(f) ((PyCFunction)(void (*)(void))(f))
#define PYCM_METH_KW(f) \
  _Generic((f), PyCFunctionWithKeywords: PYCM_METH_CAST_(f)), METH_VARARGS | METH_KEYWORDS
#define PYCM_METH_FAST(f) _Generic((f), pycm_fastcall_fn: PYCM_METH_CAST_(f)), METH_FASTCALL
#define PYCM_METH_FAST_KW(f) \
  _Generic((f), pycm_fastcall_kw_fn: PYCM_METH_CAST_(f)), METH_FASTCALL | METH_KEYWORDS

/* ---- the array type (array.c) ---- */
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
/* Raise the core's pending error as MLX's Python exception type; returns
 * NULL for `return pycm_raise();`. */
PyObject *pycm_raise(void);
/* Any array-like (array, bool/int/float/complex scalar, nested list/tuple,
 * NumPy array, buffer-protocol object) to a new reference.  dtype < 0
 * infers it as MLX does.  NULL with a Python exception set on failure. */
cm_array *pycm_to_array(PyObject *o, int dtype);
/* Python scalars are weak: converted with `other`'s dtype when the kinds
 * allow (int with any int/float array keeps the array's dtype, float with
 * an integer array gives float32, ...).  Non-scalars go to pycm_to_array. */
cm_array *pycm_to_array_weak(PyObject *o, const cm_array *other);
/* Two operands of a binary op/operator, with weak-scalar promotion. */
int pycm_binary_operands(PyObject *a, PyObject *b, cm_array **xa, cm_array **xb);
/* Import from a buffer-protocol object / a DLPack producer (a copy; dtype
 * < 0 keeps the source's, except float64 -> float32 as in MLX). */
cm_array *pycm_from_buffer(PyObject *o, int dtype);
cm_array *pycm_from_dlpack(PyObject *o, int dtype);
/* item() and tolist(): evaluate (GIL released) and convert. */
PyObject *pycm_array_item(cm_array *a);
PyObject *pycm_array_tolist(cm_array *a);
/* "numpy.int64" -> "int64", as MLX names types in its messages. */
const char *pycm_short_type_name(PyObject *o);

/* Evaluate arrays with the GIL released; -1 with a Python exception. */
int pycm_eval(cm_array *const *arrays, int n);
/* Raise nanobind's "name(): incompatible function arguments" TypeError
 * (MLX's wording) listing the argument types; self may be NULL.  NULL. */
PyObject *pycm_signature_error(const char *name, const char *signature, PyObject *self,
                               PyObject *args, PyObject *kwargs);

/* array_buffer.c: buffer protocol and the export/pickle methods. */
extern PyBufferProcs pycm_array_buffer_procs;
PyObject *pycm_array_dunder_array(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pycm_array_dlpack(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pycm_array_dlpack_device(PyObject *self, PyObject *unused);
PyObject *pycm_array_getstate(PyObject *self, PyObject *unused);
PyObject *pycm_array_setstate(PyObject *self, PyObject *state);

/* ---- dtypes (dtype.c) ---- */
extern PyTypeObject PyCmDtype_Type;
PyObject *pycm_dtype_object(cm_dtype t); /* borrowed singleton */
/* Accepts a Dtype object; -1 with TypeError otherwise. */
int pycm_dtype_arg(PyObject *o, cm_dtype *out);
/* DtypeCategory members (mx.floating, ...): -1 with TypeError otherwise. */
int pycm_category_arg(PyObject *o, cm_category *out);
/* A Python enum.Enum subclass of cmlx.core whose members are numbered 0..n-1
 * and print as "Name.member" (what nanobind's enums look like in MLX). */
PyObject *pycm_make_enum(const char *name, const char *const *members, int n);
/* pycm_make_enum, then adds the class and each member to module m; the
 * members' references go to member_objs[0..n-1]. NULL with the error set. */
PyObject *pycm_add_enum(PyObject *m, const char *name, const char *const *members, int n,
                        PyObject **member_objs);
/* PyType_Ready(t) and add it to module m as name; -1 with the error set. */
int pycm_add_type(PyObject *m, const char *name, PyTypeObject *t);

/* ---- devices and streams (device.c) ---- */
/* None (default), a Stream or a Device (or DeviceType) -> cm_stream. */
int pycm_stream_arg(PyObject *o, cm_stream *out);
/* New Device / Stream objects. */
PyObject *pycm_device_object(cm_device d);
PyObject *pycm_stream_object(cm_stream s);

/* ---- module parts: each adds its names to the module ---- */
/* A submodule parent.name (an attribute of parent and an entry of
 * sys.modules); a borrowed reference, or NULL with the error set. */
PyObject *pycm_add_submodule(PyObject *parent, const char *name, const char *doc);
int pycm_init_dtype(PyObject *m);
int pycm_init_array(PyObject *m);
int pycm_init_device(PyObject *m);
int pycm_init_memory(PyObject *m);
int pycm_init_eval(PyObject *m);
int pycm_init_ops(PyObject *m); /* op functions from the signature table */
/* vjp, jvp and the internals of grad/vmap/custom_function (transforms.c). */
int pycm_init_transforms(PyObject *m);
/* PrintOptions, printoptions, set_printoptions, get_printoptions (print.c). */
int pycm_init_print(PyObject *m);
/* mx.metal and mx.cuda as MLX's CPU build has them (backend_ns.c). */
int pycm_init_backends(PyObject *m);
/* mx.random (random.c). */
int pycm_init_random(PyObject *m);
/* mx.fft (fft.c) and hadamard_transform (hadamard.c). */
int pycm_init_fft(PyObject *m);
int pycm_init_hadamard(PyObject *m);
/* mx.load, mx.save and the other file formats (io.c). */
int pycm_init_io(PyObject *m);
/* mx.linalg (linalg.c). */
int pycm_init_linalg(PyObject *m);
int pycm_init_fast(PyObject *m);
int pycm_init_distributed(PyObject *m); /* cmlx.core.distributed */

/* Provided by the op bindings for the array type: operators and the
 * methods that are ops (abs, exp, sum, ...).  array.c plugs them in. */
extern PyNumberMethods pycm_array_number_methods;
PyObject *pycm_array_richcompare(PyObject *a, PyObject *b, int op);
extern PyMethodDef pycm_array_op_methods[]; /* NULL-terminated */

/* ---- indexing (indexing.c, indexing_at.c, ops_indexing.c) ---- */
/* a[key] and a[key] = value; array.at (the property's getter). */
extern PyMappingMethods pycm_array_mapping_methods;
PyObject *pycm_array_at(PyObject *self, void *closure);
/* a with a[key] replaced by value (op none) or combined with it (the
 * array.at reductions); a new reference, or NULL with a Python error. */
cm_array *pycm_index_update(cm_array *a, PyObject *key, cm_array *value, cm_scatter_op op);
int pycm_init_array_at(PyObject *m); /* the ArrayAt type */
/* take, take_along_axis, put_along_axis and ArrayAt (from pycm_init_ops). */
int pycm_init_indexing(PyObject *m);

#endif
