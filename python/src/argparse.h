/* The signature table behind every op binding.
 *
 * Each binding is one row: the Python name, a spec string that says what the
 * parser accepts ("a: arraylike, b: arraylike, /, *, stream: Stream = None"),
 * MLX's displayed signature (for __doc__, TypeErrors and the API status
 * page), an implementation family and the core function it calls.  One
 * generic parser reads positional and keyword arguments against the compiled
 * spec, fills a value per parameter and hands them to the family, so no
 * binding parses its own arguments.
 *
 * Spec grammar: comma-separated items, each "/" (the parameters before it are
 * positional-only), "*" (the ones after it are keyword-only), "*name: type"
 * (extra positionals, collected) or "name: type [= default]".  Types:
 *   array      a cmlx array only                      -> v.arr (borrowed)
 *   arraylike  MLX's "scalar | array": any non-None object; the family
 *              converts it (weak scalars need the other operand)  -> v.obj
 *   int        int, bool or __index__, in int32 range  -> v.i
 *   float      float, int or __float__                 -> v.f
 *   bool       True or False                           -> v.b
 *   number     exactly int, float or bool, no conversion (arange) -> v.i/v.f,
 *              v.kind says which
 *   Dtype      a Dtype                                 -> v.dtype
 *   shape      int or sequence of ints                 -> v.shape/v.ndim
 *   shapeseq   sequence of ints only (MLX's Sequence[int]) -> v.shape/v.ndim
 *   uint64     int in [0, 2^64) (a seed)               -> v.u
 *   intorarray a Python int (bool too) or an array      -> v.obj
 *   axes       int or sequence of ints (reduction axes) -> v.shape/v.ndim
 *   Stream     None, Stream, Device or DeviceType      -> v.stream
 *   object     any non-None object                     -> v.obj
 * "T | None" makes a parameter accept None (v.none).  Defaults: None, True,
 * False, integers, floats, dtype names (float32, ...), [] for a shape and
 * a number for an arraylike (v.given false: the family builds the value
 * from v.i / v.f / v.kind). */
#ifndef CMLX_PY_ARGPARSE_H
#define CMLX_PY_ARGPARSE_H

#include "cmlx_py.h"
#include "distributed/group.h"
#include "ops/reduce.h"
#include "ops/shape.h"

#define PA_MAX_PARAMS 16

typedef enum pa_type {
  PA_ARRAY,
  PA_ARRAYLIKE,
  PA_INT,
  PA_FLOAT,
  PA_BOOL,
  PA_NUMBER,
  PA_DTYPE,
  PA_SHAPE,
  PA_AXES,
  PA_STREAM,
  PA_OBJECT,
  PA_SHAPESEQ, /* "Sequence[int]": a shape that is not a bare int */
  PA_UINT64,
  PA_INT_OR_ARRAY, /* "int | array": a Python int (or bool) or an array */
} pa_type;

/* What a number argument was: arange's dtype depends on it. */
typedef enum pa_kind { PA_KIND_BOOL, PA_KIND_INT, PA_KIND_FLOAT } pa_kind;

typedef struct pa_param {
  const char *name; /* points into the owning op's name buffer */
  pa_type type;
  bool optional;    /* accepts None */
  bool has_default;
  bool default_none;
  /* the default, as the parsed value it stands for */
  int64_t def_i;
  double def_f;
  pa_kind def_kind;
  cm_dtype def_dtype;
} pa_param;

/* A compiled spec. */
typedef struct pa_sig {
  int n;           /* parameters (not counting *varargs) */
  int npos_only;   /* parameters before "/" */
  int kw_start;    /* first keyword-only parameter (n if none) */
  int varargs;     /* index in the argument order where *varargs sits, -1 if none */
  pa_param p[PA_MAX_PARAMS];
  char names[256]; /* the parameter names, NUL-separated */
} pa_sig;

/* One parsed argument. */
typedef struct pa_value {
  bool given; /* passed by the caller, not defaulted */
  bool none;  /* None (given or by default) */
  PyObject *obj; /* borrowed; NULL when defaulted */
  int64_t i;
  uint64_t u;
  double f;
  bool b;
  pa_kind kind;
  cm_dtype dtype;
  cm_stream stream;
  cm_array *arr; /* borrowed from the PyCmArray */
  int ndim;
  int32_t shape[CM_MAX_DIMS];
} pa_value;

typedef struct pa_call {
  pa_value v[PA_MAX_PARAMS];
  PyObject *const *varargs; /* borrowed: the extra positionals */
  Py_ssize_t nvarargs;
} pa_call;

typedef struct pycm_op pycm_op;
typedef PyObject *(*pycm_impl)(const pycm_op *op, pa_call *c);

/* The core function a row hands its family, with its own type: one member
 * per signature the families call.  A row sets exactly the member its
 * family reads (the row macros below pair the two), so a function of the
 * wrong type for its family is a compile error
 * (-Werror=incompatible-pointer-types), not a call through a cast. */
typedef union pycm_fn {
  cm_array *(*unary)(cm_array *a, cm_stream s);
  cm_array *(*unary_group)(cm_array *a, cm_group *g, cm_stream s); /* distributed */
  cm_array *(*binary)(cm_array *a, cm_array *b, cm_stream s);
  cm_array *(*int1)(cm_array *a, int i, cm_stream s);
  cm_array *(*upper)(cm_array *a, bool upper, cm_stream s); /* linalg's upper= */
  cm_array *(*int2)(cm_array *a, int i, int j, cm_stream s);
  cm_array *(*ints)(cm_array *a, int n, const int *v, cm_stream s);
  cm_array *(*reduce)(cm_array *a, cm_axes axes, bool keepdims, cm_stream s);
  cm_array *(*moment)(cm_array *a, cm_axes axes, bool keepdims, int ddof, cm_stream s);
  cm_array *(*close)(cm_array *a, cm_array *b, double rtol, double atol, bool equal_nan,
                     cm_stream s);
  cm_array *(*shape_dtype)(int ndim, const int32_t *shape, cm_dtype t, cm_stream s);
  cm_array *(*eye)(int n, int m, int k, cm_dtype t, cm_stream s);
  cm_array *(*window)(int m, cm_stream s);
  /* ops with an axis and MLX's axis=None (the flattened array) */
  struct {
    cm_array *(*axis)(cm_array *a, int axis, cm_stream s);
    cm_array *(*flat)(cm_array *a, cm_stream s);
  } sort;
  struct {
    cm_array *(*axis)(cm_array *a, int k, int axis, cm_stream s);
    cm_array *(*flat)(cm_array *a, int k, cm_stream s);
  } select;
  struct {
    cm_array *(*axis)(cm_array *a, int axis, bool reverse, bool inclusive, cm_stream s);
    cm_array *(*flat)(cm_array *a, bool reverse, bool inclusive, cm_stream s);
  } scan;
  /* random samplers between two bounds (uniform, randint, truncated_normal):
   * ndim < 0 takes the bounds' broadcast shape */
  cm_array *(*bounded)(cm_array *lo, cm_array *hi, int ndim, const int32_t *shape, cm_dtype dtype,
                       cm_array *key, cm_stream s);
} pycm_fn;

/* One row: Python name, accepted spec, MLX's displayed signature, family
 * and, in member `member_` of fn, the core function the family calls.
 * Tables use a family's own macro (PYCM_UNARY, ..., or one defined next to
 * a file's family), which fixes impl and member together. */
#define PYCM_ROW(name_, spec_, sig_, impl_, member_, ...) \
  { .name = (name_), .spec = (spec_), .sig = (sig_), .impl = (impl_), .fn.member_ = __VA_ARGS__ }
/* A row whose family calls the core itself (no function in the row). */
#define PYCM_CALL(name_, spec_, sig_, impl_) \
  { .name = (name_), .spec = (spec_), .sig = (sig_), .impl = (impl_) }
/* The two families every op file shares (ops_common.c). */
#define PYCM_UNARY(name_, spec_, sig_, fn_) PYCM_ROW(name_, spec_, sig_, pa_impl_unary, unary, fn_)
#define PYCM_BINARY(name_, spec_, sig_, fn_) \
  PYCM_ROW(name_, spec_, sig_, pa_impl_binary, binary, fn_)

struct pycm_op {
  const char *name; /* Python name; adjacent rows with one name are overloads */
  const char *spec; /* what the parser accepts (see above) */
  const char *sig;  /* MLX's displayed signature, without the name */
  pycm_impl impl;   /* the family */
  pycm_fn fn;       /* the core function for the family (its member) */
  /* filled by pa_compile_table */
  pa_sig compiled;
  int noverloads; /* on the first row of a name */
};

/* Compile every spec of a table; -1 with a Python error on a malformed one
 * (a bug in the table, reported at import). */
int pa_compile_table(pycm_op *ops, int n);
/* Compile the table and add one function per name to module m; also append
 * (name, signature, spec) to the module's _signatures list. */
int pa_add_functions(PyObject *m, pycm_op *ops, int n);
/* Append a table's rows to m._signatures with a name prefix ("array."). */
/* Where the __doc__ of f is kept when f is one of pa_add_functions'
 * callables, else NULL (docs.c puts the docstring texts there). */
const char **pa_opfunc_doc_slot(PyObject *f);
int pa_register_signatures(PyObject *m, const pycm_op *ops, int n, const char *prefix);

/* Parse against a method's row and its overloads (self prepended to the
 * positionals) and call the matching family; the nanobind-style TypeError
 * when none matches. */
PyObject *pa_dispatch_method(const pycm_op *op, PyObject *self, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames);

/* The TypeError MLX (nanobind) raises when no overload fits. */
PyObject *pa_type_error(const pycm_op *op, PyObject *const *args, Py_ssize_t nargs,
                        PyObject *kwnames);
/* Building that message: pa_append adds s (a new reference, NULL when its
 * construction failed: -1) to the list parts; pa_overloads_message starts a
 * list with the heading and the n overload rows, up to "Invoked with
 * types: "; pa_raise_parts joins parts into the TypeError (not when bad,
 * an error already being set), releases parts and returns NULL. */
int pa_append(PyObject *parts, PyObject *s);
PyObject *pa_overloads_message(const char *name, const pycm_op *rows, int n);
PyObject *pa_raise_parts(PyObject *parts, int bad);
/* A type's name as MLX's messages print it: "int", "ndarray", "cmlx.core.array". */
const char *pa_type_name(PyObject *o);

/* ---- conversions shared by the families ---- */
/* An int (or an object with __index__; not a float or complex) in [lo, hi]:
 * 0 and *out; 1 otherwise, with no error left set. */
int pa_int_in_range(PyObject *o, int64_t lo, int64_t hi, int64_t *out);
/* True when o can be an operand of an op or operator (MLX's
 * is_comparable_with_array): an array, a bool/int/float/complex scalar, a
 * buffer-protocol object (NumPy arrays and scalars, bytes) or an object with
 * __mlx_array__ / __array__ / __dlpack__.  Lists, tuples, strings: no. */
bool pa_is_array_operand(PyObject *o);
/* "scalar | array" to a new reference (dtype < 0 infers); ValueError
 * "Invalid type list received in array initialization." for non-operands. */
cm_array *pa_to_array(PyObject *o, int dtype);
/* Two "scalar | array" operands with weak scalars. */
int pa_binary_operands(PyObject *a, PyObject *b, cm_array **xa, cm_array **xb);
/* A new reference to a Dtype object. */
PyObject *pa_dtype_object(cm_dtype t);

/* An "axes" value as the core's cm_axes (None: every axis). */
#define PA_AXES_OF(v) ((v)->none ? CM_AXES_ALL : cm_axes_list((const int *)(v)->shape, (v)->ndim))

/* The stream argument (the last parameter of every op spec). */
cm_stream pa_stream(const pycm_op *op, const pa_call *c);

/* The families every op file shares. */
PyObject *pa_impl_unary(const pycm_op *op, pa_call *c);  /* fn(a, s); a arraylike or array */
PyObject *pa_impl_binary(const pycm_op *op, pa_call *c); /* fn(a, b, s); weak scalars */

#endif
