/* The array type's operators and op methods, with MLX's semantics:
 *
 * - Python scalars are weak (take the array's dtype when the kinds allow).
 * - An operand that cannot become an array (str, list, dict, ...) is a
 *   ValueError "Cannot perform addition on an mlx.core.array and str"; None
 *   is a TypeError.  == and != answer False / True for such operands.
 * - Reflected forms exist for + - * / // % ** only (1 & a is a TypeError in
 *   MLX too); divmod() is not an operator of MLX arrays.
 * - In-place operators rebind the array object to the result, which may have
 *   a new dtype (a = int8 array; a *= 2.5 gives float32), so every Python
 *   reference to that object sees the new value, while views taken earlier
 *   keep the old one.  /= on a non-floating array is a ValueError.
 * - Bitwise operators reject floating operands before reaching the op. */
#include "argparse.h"
#include "init.h"

enum {
  OP_REFLECT = 1,         /* has __rX__ */
  OP_BITWISE = 2,         /* floating operands are a ValueError */
  OP_INPLACE_INEXACT = 4, /* the in-place form needs a floating array */
};

typedef cm_array *(*binary_fn)(cm_array *, cm_array *, cm_stream);

typedef struct binop {
  const char *what; /* "addition": MLX's word in error messages */
  binary_fn fn;
  int flags;
} binop;

/* The rows of ops/binary_ops.h with an operator, by op code; the dunder
 * column gives the flags. */
#define FLAGS_NB OP_REFLECT
#define FLAGS_NB_DIV (OP_REFLECT | OP_INPLACE_INEXACT)
#define FLAGS_NB_POW OP_REFLECT
#define FLAGS_NB_BITS OP_BITWISE
#define FLAGS_CMP 0
#define BINOP_NONE(CODE, name, what)
#define BINOP_OF(CODE, name, what, kind) [CM_BINARY_##CODE] = {what, cm_##name, FLAGS_##kind},
#define BINOP_NB(CODE, name, what) BINOP_OF(CODE, name, what, NB)
#define BINOP_NB_DIV(CODE, name, what) BINOP_OF(CODE, name, what, NB_DIV)
#define BINOP_NB_POW(CODE, name, what) BINOP_OF(CODE, name, what, NB_POW)
#define BINOP_NB_BITS(CODE, name, what) BINOP_OF(CODE, name, what, NB_BITS)
#define BINOP_CMP(CODE, name, what) BINOP_OF(CODE, name, what, CMP)
static const binop binops[CM_BINARY_NUM_OPS] = {
#define CM_X(CODE, name, Name, dtype, grad, mlxc, py, dunder, slot, what) \
  BINOP_##dunder(CODE, name, what)
    CM_BINARY_OPS(CM_X)
#undef CM_X
};

static PyObject *cannot_perform(const binop *op, bool inplace, PyObject *self, PyObject *other) {
  PyErr_Format(PyExc_ValueError, "Cannot perform %s%s on an %s and %s", inplace ? "inplace " : "",
               op->what, Py_TYPE(self)->tp_name, pa_type_name(other));
  return NULL;
}

/* self (op) other, or other (op) self when reflected; a new array or NULL. */
static cm_array *apply(const binop *op, PyObject *self, PyObject *other, bool reflected,
                       bool inplace) {
  if (!pa_is_array_operand(other)) {
    cannot_perform(op, inplace, self, other);
    return NULL;
  }
  cm_array *x, *y;
  int rc = reflected ? pycm_binary_operands(other, self, &x, &y)
                     : pycm_binary_operands(self, other, &x, &y);
  if (rc) return NULL;
  cm_array *r = NULL;
  if ((op->flags & OP_BITWISE) && (cm_dtype_is_inexact(x->dtype) || cm_dtype_is_inexact(y->dtype)))
    PyErr_Format(PyExc_ValueError, "Floating point types not allowed with %s.", op->what);
  else if (!(r = op->fn(x, y, CM_STREAM_DEFAULT)))
    pycm_raise();
  cm_release(x);
  cm_release(y);
  return r;
}

/* The nb_X slot: Python calls it with the array on either side. */
static PyObject *binary_slot(const binop *op, PyObject *a, PyObject *b) {
  bool reflected = !PyCmArray_Check(a);
  if (reflected && !(op->flags & OP_REFLECT)) Py_RETURN_NOTIMPLEMENTED;
  PyObject *self = reflected ? b : a, *other = reflected ? a : b;
  if (other == Py_None) Py_RETURN_NOTIMPLEMENTED; /* TypeError, as MLX */
  cm_array *r = apply(op, self, other, reflected, false);
  return r ? pycm_wrap(r) : NULL;
}

/* The nb_inplace_X slot: compute, then point self at the result. */
static PyObject *inplace_slot(const binop *op, PyObject *self, PyObject *other) {
  if (!PyCmArray_Check(self) || other == Py_None) Py_RETURN_NOTIMPLEMENTED;
  if ((op->flags & OP_INPLACE_INEXACT) && !cm_dtype_is_inexact(((PyCmArray *)self)->arr->dtype)) {
    PyErr_SetString(PyExc_ValueError, "In place division cannot cast to non-floating point type.");
    return NULL;
  }
  cm_array *r = apply(op, self, other, false, true);
  if (!r) return NULL;
  PyCmArray *s = (PyCmArray *)self;
  cm_array *old = s->arr;
  s->arr = r;
  cm_release(old);
  Py_INCREF(self);
  return self;
}

/* pow(a, b, mod): MLX has no modular form. */
static PyObject *pow_mod_error(PyObject *mod) {
  PyErr_Format(PyExc_TypeError,
               "__pow__(): incompatible function arguments: pow() with a modulus (%s) is not "
               "supported for arrays.",
               pa_type_name(mod));
  return NULL;
}

/* The number slots of the rows with an operator: nb_<slot> and
 * nb_inplace_<slot> (the ternary pair for pow). */
#define SLOTS_NONE(CODE, slot)
#define SLOTS_CMP(CODE, slot)
#define SLOTS_NB(CODE, slot)                                                            \
  static PyObject *nb_##slot(PyObject *a, PyObject *b) {                                \
    return binary_slot(&binops[CM_BINARY_##CODE], a, b);                                \
  }                                                                                     \
  static PyObject *nb_inplace_##slot(PyObject *a, PyObject *b) {                        \
    return inplace_slot(&binops[CM_BINARY_##CODE], a, b);                               \
  }
#define SLOTS_NB_DIV SLOTS_NB
#define SLOTS_NB_BITS SLOTS_NB
#define SLOTS_NB_POW(CODE, slot)                                                        \
  static PyObject *nb_##slot(PyObject *a, PyObject *b, PyObject *mod) {                 \
    if (mod != Py_None) return pow_mod_error(mod);                                      \
    return binary_slot(&binops[CM_BINARY_##CODE], a, b);                                \
  }                                                                                     \
  static PyObject *nb_inplace_##slot(PyObject *a, PyObject *b, PyObject *mod) {         \
    if (mod != Py_None) return pow_mod_error(mod);                                      \
    return inplace_slot(&binops[CM_BINARY_##CODE], a, b);                               \
  }
#define CM_X(CODE, name, Name, dtype, grad, mlxc, py, dunder, slot, what) SLOTS_##dunder(CODE, slot)
CM_BINARY_OPS(CM_X)
#undef CM_X

/* a @ b: arrays only.  A non-array right operand is MLX's TypeError (its
 * __matmul__ is a method taking an array, so NumPy gets no chance to take
 * over); there is no reflected form, so `2 @ a` is Python's own TypeError. */
static PyObject *matmul_type_error(const char *dunder, PyObject *a, PyObject *b) {
  PyErr_Format(PyExc_TypeError,
               "%s(): incompatible function arguments. The following argument types are "
               "supported:\n    1. %s(self, other: array) -> array\n\n"
               "Invoked with types: %s, %s",
               dunder, dunder, Py_TYPE(a)->tp_name, pa_type_name(b));
  return NULL;
}

static PyObject *nb_matrix_multiply(PyObject *a, PyObject *b) {
  if (!PyCmArray_Check(a)) Py_RETURN_NOTIMPLEMENTED;
  if (!PyCmArray_Check(b)) return matmul_type_error("__matmul__", a, b);
  return pycm_wrap(
      cm_matmul(((PyCmArray *)a)->arr, ((PyCmArray *)b)->arr, CM_STREAM_DEFAULT));
}

/* a @= b rebinds a to the product, like the other in-place operators. */
static PyObject *nb_inplace_matrix_multiply(PyObject *a, PyObject *b) {
  if (!PyCmArray_Check(a)) Py_RETURN_NOTIMPLEMENTED;
  if (!PyCmArray_Check(b)) return matmul_type_error("__imatmul__", a, b);
  PyCmArray *s = (PyCmArray *)a;
  cm_array *r = cm_matmul(s->arr, ((PyCmArray *)b)->arr, CM_STREAM_DEFAULT);
  if (!r) return pycm_raise();
  cm_array *old = s->arr;
  s->arr = r;
  cm_release(old);
  Py_INCREF(a);
  return a;
}

static cm_array *self_arr(PyObject *o) { return ((PyCmArray *)o)->arr; }

/* -a and abs(a): the rows of ops/unary_ops.h whose dunder column is NB. */
#define UNARY_SLOT_NONE(name, slot)
#define UNARY_SLOT_NB(name, slot)                               \
  static PyObject *nb_##slot(PyObject *a) {                     \
    return pycm_wrap(cm_##name(self_arr(a), CM_STREAM_DEFAULT)); \
  }
#define CM_X(CODE, name, Name, out, checks, grad, ctor, mlxc, py, dunder, slot) \
  UNARY_SLOT_##dunder(name, slot)
CM_UNARY_OPS(CM_X)
#undef CM_X

/* +a is a itself (positive is not an op code). */
static PyObject *nb_positive(PyObject *a) {
  return pycm_wrap(cm_positive(self_arr(a), CM_STREAM_DEFAULT));
}

/* ~a: bitwise_invert for integers, logical_not for bool. */
static PyObject *nb_invert(PyObject *a) {
  cm_array *x = self_arr(a);
  if (cm_dtype_is_inexact(x->dtype)) {
    PyErr_SetString(PyExc_ValueError, "Floating point types not allowed with bitwise inversion.");
    return NULL;
  }
  if (x->dtype == CM_BOOL) return pycm_wrap(cm_logical_not(x, CM_STREAM_DEFAULT));
  return pycm_wrap(cm_bitwise_invert(x, CM_STREAM_DEFAULT));
}

/* nb_bool, nb_int, nb_float and nb_index belong to the array type (they read
 * the value) and are filled in by array.c. */
#define SLOT_INIT_NONE(slot)
#define SLOT_INIT_CMP(slot)
#define SLOT_INIT_NB(slot) .nb_##slot = nb_##slot, .nb_inplace_##slot = nb_inplace_##slot,
#define SLOT_INIT_NB_DIV SLOT_INIT_NB
#define SLOT_INIT_NB_POW SLOT_INIT_NB
#define SLOT_INIT_NB_BITS SLOT_INIT_NB
PyNumberMethods pycm_array_number_methods = {
#define CM_X(CODE, name, Name, dtype, grad, mlxc, py, dunder, slot, what) SLOT_INIT_##dunder(slot)
    CM_BINARY_OPS(CM_X)
#undef CM_X
#define UNARY_SLOT_INIT_NONE(slot)
#define UNARY_SLOT_INIT_NB(slot) .nb_##slot = nb_##slot,
#define CM_X(CODE, name, Name, out, checks, grad, ctor, mlxc, py, dunder, slot) \
  UNARY_SLOT_INIT_##dunder(slot)
    CM_UNARY_OPS(CM_X)
#undef CM_X
    .nb_positive = nb_positive,
    .nb_invert = nb_invert,
    .nb_matrix_multiply = nb_matrix_multiply,
    .nb_inplace_matrix_multiply = nb_inplace_matrix_multiply,
};

/* ---- comparisons ---------------------------------------------------------- */

PyObject *pycm_array_richcompare(PyObject *a, PyObject *b, int cmp) {
#define CMP_OP_NONE(CODE, slot)
#define CMP_OP_NB(CODE, slot)
#define CMP_OP_NB_DIV(CODE, slot)
#define CMP_OP_NB_POW(CODE, slot)
#define CMP_OP_NB_BITS(CODE, slot)
#define CMP_OP_CMP(CODE, slot) [slot] = &binops[CM_BINARY_##CODE],
  static const binop *const ops[Py_GE + 1] = {
#define CM_X(CODE, name, Name, dtype, grad, mlxc, py, dunder, slot, what) \
  CMP_OP_##dunder(CODE, slot)
      CM_BINARY_OPS(CM_X)
#undef CM_X
  };
  static const char *const dunder[] = {
      [Py_LT] = "__lt__", [Py_LE] = "__le__", [Py_EQ] = "__eq__",
      [Py_NE] = "__ne__", [Py_GT] = "__gt__", [Py_GE] = "__ge__",
  };
  if (!PyCmArray_Check(a)) Py_RETURN_NOTIMPLEMENTED;
  if (b == Py_None) {
    /* MLX: a TypeError even for == and != (no identity fallback) */
    PyErr_Format(PyExc_TypeError,
                 "%s(): incompatible function arguments. The following argument types are "
                 "supported:\n    1. %s(self, other: bool | int | float | array | complex | "
                 "ArrayLike) -> array%s\n\nInvoked with types: %s, NoneType",
                 dunder[cmp], dunder[cmp], cmp == Py_EQ || cmp == Py_NE ? " | bool" : "",
                 Py_TYPE(a)->tp_name);
    return NULL;
  }
  if (!ops[cmp]) Py_RETURN_NOTIMPLEMENTED; /* a comparison with no CMP row */
  if ((cmp == Py_EQ || cmp == Py_NE) && !pa_is_array_operand(b))
    return PyBool_FromLong(cmp == Py_NE);
  cm_array *r = apply(ops[cmp], a, b, false, false);
  return r ? pycm_wrap(r) : NULL;
}
