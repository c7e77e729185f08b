/* The transform bindings' shared helpers (transforms_util.c), used by
 * transforms.c and its parts (transforms_custom.c, transforms_compile.c,
 * transforms_export.c; their entry points are in init.h). */
#ifndef CMLX_TRANSFORMS_UTIL_H
#define CMLX_TRANSFORMS_UTIL_H

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

#endif
