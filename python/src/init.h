/* The registry of the extension's entry points: each file's init function
 * (what module.c calls, in order, and the parts that an init of a higher
 * file calls), and the slots of the array type that the operator and op
 * bindings provide (what array.c plugs into the type).  Every file that
 * defines one includes this header, so the definitions are checked against
 * these declarations; no file calls another's entry point by any other
 * way.  The op tables have their own registry, ops_tables.h. */
#ifndef CMLX_PY_INIT_H
#define CMLX_PY_INIT_H

#include "util.h"

/* ---- module parts: each adds its names to the module (module.c) ---- */
int pycm_init_dtype(PyObject *m);  /* dtype.c: Dtype, DtypeCategory, finfo, ... */
int pycm_init_device(PyObject *m); /* device.c: Device, Stream, default streams */
int pycm_init_array(PyObject *m);  /* array.c: the array type, asarray, from_dlpack */
int pycm_init_memory(PyObject *m); /* memory.c */
int pycm_init_eval(PyObject *m);   /* eval.c: eval, async_eval */
int pycm_init_ops(PyObject *m);    /* ops_module.c: op functions from the signature tables */
/* vjp, jvp and the internals of grad/vmap/custom_function (transforms.c). */
int pycm_init_transforms(PyObject *m);
/* mx.metal and mx.cuda as MLX's CPU build has them (backend_ns.c). */
int pycm_init_backends(PyObject *m);
/* PrintOptions, printoptions, set_printoptions, get_printoptions (print.c). */
int pycm_init_print(PyObject *m);
int pycm_init_random(PyObject *m);      /* random.c: mx.random */
int pycm_init_io(PyObject *m);          /* io.c: mx.load, mx.save and the other formats */
int pycm_init_linalg(PyObject *m);      /* linalg.c: mx.linalg */
int pycm_init_fast(PyObject *m);        /* fast.c: mx.fast */
int pycm_init_fft(PyObject *m);         /* fft.c: mx.fft */
int pycm_init_hadamard(PyObject *m);    /* hadamard.c: hadamard_transform */
int pycm_init_distributed(PyObject *m); /* distributed.c: cmlx.core.distributed */
/* docs.c: the docstring texts onto everything above; runs last. */
int pycm_init_docs(PyObject *m);

/* ---- parts of the inits above ---- */
/* ops_module.c's parts: take, take_along_axis, put_along_axis and ArrayAt
 * (ops_indexing.c); the array methods' signature rows (ops_methods.c); the
 * array API aliases (ops_array_api.c). */
int pycm_init_indexing(PyObject *m);
int pycm_init_array_op_methods(PyObject *m);
int pycm_add_array_api_aliases(PyObject *m);
/* pycm_init_indexing's part: the ArrayAt type (indexing_at.c). */
int pycm_init_array_at(PyObject *m);
/* transforms.c's parts: _custom_function and the _gc_func type
 * (transforms_custom.c); the _Compiled type and the compile mode
 * (transforms_compile.c); _Exporter, _Imported, _export_visit and
 * _export_to_dot (transforms_export.c). */
int pytr_init_custom(PyObject *m);
int pytr_init_compile(PyObject *m);
int pytr_init_export(PyObject *m);

/* ---- the array type's slots, provided by the files that own them ---- */
/* Operators and comparisons (array_ops.c); array.c adds the conversions to
 * Python numbers to the number methods. */
extern PyNumberMethods pycm_array_number_methods;
PyObject *pycm_array_richcompare(PyObject *a, PyObject *b, int op);
/* The methods that are ops: abs, exp, sum, ... (ops_methods.c);
 * NULL-terminated. */
extern PyMethodDef pycm_array_op_methods[];
/* a[key] and a[key] = value (indexing.c); array.at, the property's getter
 * (indexing_at.c). */
extern PyMappingMethods pycm_array_mapping_methods;
PyObject *pycm_array_at(PyObject *self, void *closure);
/* The buffer protocol and the export/pickle methods (array_buffer.c). */
extern PyBufferProcs pycm_array_buffer_procs;
PyObject *pycm_array_dunder_array(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pycm_array_dlpack(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pycm_array_dlpack_device(PyObject *self, PyObject *unused);
PyObject *pycm_array_getstate(PyObject *self, PyObject *unused);
PyObject *pycm_array_setstate(PyObject *self, PyObject *state);

#endif
