/* The bottom layer of the cmlx.core extension (util.c): what every binding
 * file needs whatever it binds.  Nothing here knows the array type or any
 * other file of python/src, so any file may include it. */
#ifndef CMLX_PY_UTIL_H
#define CMLX_PY_UTIL_H

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

/* ---- errors and eval ---- */
/* Raise the core's pending error as MLX's Python exception type; returns
 * NULL for `return pycm_raise();`. */
PyObject *pycm_raise(void);
/* Evaluate arrays with the GIL released; -1 with a Python exception. */
int pycm_eval(cm_array *const *arrays, int n);
/* Raise nanobind's "name(): incompatible function arguments" TypeError
 * (MLX's wording) listing the argument types; self may be NULL.  NULL. */
PyObject *pycm_signature_error(const char *name, const char *signature, PyObject *self,
                               PyObject *args, PyObject *kwargs);

/* ---- registration ---- */
/* A submodule parent.name (an attribute of parent and an entry of
 * sys.modules); a borrowed reference, or NULL with the error set. */
PyObject *pycm_add_submodule(PyObject *parent, const char *name, const char *doc);
/* PyType_Ready(t) and add it to module m as name; -1 with the error set. */
int pycm_add_type(PyObject *m, const char *name, PyTypeObject *t);
/* A Python enum.Enum subclass of cmlx.core whose members are numbered 0..n-1
 * and print as "Name.member" (what nanobind's enums look like in MLX). */
PyObject *pycm_make_enum(const char *name, const char *const *members, int n);
/* pycm_make_enum, then adds the class and each member to module m; the
 * members' references go to member_objs[0..n-1]. NULL with the error set. */
PyObject *pycm_add_enum(PyObject *m, const char *name, const char *const *members, int n,
                        PyObject **member_objs);

#endif
