/* What the shape, reduction, sort/scan and matmul bindings share beyond
 * argparse.h: arguments that are lists (of ints, of arrays, of pairs),
 * results that are lists of arrays, and the TypeError a family raises when
 * an `object` parameter turns out to be of the wrong kind (the parser only
 * knows the spec's types; `int | Sequence[int]`, `str` and `list[array]`
 * are checked by the family, with the same TypeError the parser raises). */
#ifndef CMLX_PY_OPS_LISTS_H
#define CMLX_PY_OPS_LISTS_H

#include "argparse.h"

/* nanobind's "incompatible function arguments" TypeError for a call that
 * parsed but whose values do not fit (types listed in parameter order).
 * Returns NULL. */
PyObject *pa_value_type_error(const pycm_op *op, const pa_call *c);

/* A sequence argument: list, tuple, NumPy array, cmlx array, ... (not a
 * str/bytes, not a scalar). */
bool pa_is_seq(PyObject *o);

/* The ints of a sequence, each in [lo, hi], into a PyMem_Malloc'd vector
 * (*out is NULL for an empty one; PyMem_Free it).  0: converted; 1: not a
 * sequence of ints in range (no error set: the caller's TypeError); -1: a
 * Python error. */
int pa_seq_ints64(PyObject *o, int64_t lo, int64_t hi, int64_t **out, Py_ssize_t *n);
/* The same into int32 (range of int32). */
int pa_seq_ints32(PyObject *o, int32_t **out, int *n);

/* list[array]: every element must be a cmlx array (no conversion, as in
 * MLX).  *arrs is a PyMem_Malloc'd vector of new references; release with
 * pa_release_arrays.  0 / 1 (not a sequence of arrays) / -1. */
int pa_seq_arrays(PyObject *o, cm_array ***arrs, Py_ssize_t *n);
/* The extra positionals (*arrays) of a call, each a cmlx array. */
int pa_varargs_arrays(const pa_call *c, cm_array ***arrs, Py_ssize_t *n);
void pa_release_arrays(cm_array **arrs, Py_ssize_t n);

/* n new references (stolen) as a list (tuple: a tuple); NULL with the error
 * set when any is NULL or on failure (the rest are released).  outs itself
 * is not freed. */
PyObject *pa_wrap_arrays(cm_array **outs, int n, bool tuple);

/* An optional str parameter given as `object | None = None`: *s is dflt
 * when it was not passed; 1 when it is not a str (None included). */
int pa_str_arg(const pa_value *v, const char *dflt, const char **s);

/* Families shared with the array methods: the scans (ops_sortscan.c) and
 * split (ops_shape_join.c; any number of indices). */
PyObject *pa_impl_scan(const pycm_op *op, pa_call *c);
/* A scan row: cm_<base> and cm_<base>_flat (axis=None). */
#define PYCM_SCAN(name_, spec_, sig_, base) \
  PYCM_ROW(name_, spec_, sig_, pa_impl_scan, scan, {cm_##base, cm_##base##_flat})
PyObject *pa_impl_split(const pycm_op *op, pa_call *c);

#endif
