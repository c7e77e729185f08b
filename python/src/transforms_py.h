/* Private declarations shared by transforms.c and transforms_custom.c. */
#ifndef CMLX_TRANSFORMS_PY_H
#define CMLX_TRANSFORMS_PY_H

#include "cmlx_py.h"

/* Keep the pending Python exception aside (per thread) and record a core
 * error so that an engine unwinds; returns -1. */
int pytr_stash_exception(void);
/* Raise the stashed Python exception if there is one, else the core's
 * pending error.  Returns NULL. */
PyObject *pytr_raise(void);
/* A new Python list wrapping new references to arrays[0..n). */
PyObject *pytr_list(cm_array *const *arrays, int n);
/* A sequence of arrays (list, tuple, or any non-str sequence) as a
 * malloc'd vector of new references: 0; 1 if o is not one (no error
 * set); -1 with a Python error. */
int pytr_array_seq(PyObject *o, cm_array ***out, int *n);
/* Call fun(*in): an array or a list/tuple of arrays comes back as a
 * malloc'd vector of new references.  Failures are core errors (a Python
 * exception is stashed); who names the transform in messages. */
int pytr_call(PyObject *fun, cm_array *const *in, int nin, cm_array ***out, int *nout,
              const char *who);

/* transforms_custom.c: _custom_function and the _gc_func type. */
int pytr_init_custom(PyObject *m);
/* transforms_compile.c: the _Compiled type and the compile mode. */
int pytr_init_compile(PyObject *m);
/* transforms_export.c: _Exporter, _Imported, _export_visit, _export_to_dot. */
int pytr_init_export(PyObject *m);

#endif
