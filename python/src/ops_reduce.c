/* Reductions and their compositions as module functions: sum, prod, max,
 * min, mean, all, any, logsumexp, median, argmax, argmin, var, std,
 * count_nonzero, softmax, and the comparisons isclose, allclose and
 * array_equal.  (The array methods are rows of ops_methods.c.)
 *
 * MLX's rules, as 0.32 enforces them: `a` is an array (no scalars or
 * lists), axis is an int, a sequence of ints or None; argmax/argmin take
 * one int; count_nonzero's axis is positional but keepdims keyword-only;
 * var/std accept the array API's `correction` (which replaces ddof) although
 * their displayed signature does not show it. */
#include "ops_lists.h"
#include "ops_tables.h"

/* fn(a, axes, keepdims, s). */
static PyObject *impl_reduce(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  return pycm_wrap(op->fn.reduce(v[0].arr, PA_AXES_OF(&v[1]), v[2].b, pa_stream(op, c)));
}
#define REDUCE_ROW(name, spec, sig, fn) PYCM_ROW(name, spec, sig, impl_reduce, reduce, fn)

/* argmax/argmin: one axis or None (every axis). */
static PyObject *impl_arg_reduce(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  cm_stream s = pa_stream(op, c);
  if (v[1].none) return pycm_wrap(op->fn.reduce(v[0].arr, CM_AXES_ALL, v[2].b, s));
  return pycm_wrap(op->fn.reduce(v[0].arr, CM_AXIS((int)v[1].i), v[2].b, s));
}
#define ARG_REDUCE_ROW(name, spec, sig, fn) PYCM_ROW(name, spec, sig, impl_arg_reduce, reduce, fn)

/* var/std(a, axis, keepdims, ddof, *, correction): a given correction
 * replaces ddof. */
static PyObject *impl_moment(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  int ddof = v[4].none ? (int)v[3].i : (int)v[4].i;
  return pycm_wrap(op->fn.moment(v[0].arr, PA_AXES_OF(&v[1]), v[2].b, ddof, pa_stream(op, c)));
}
#define MOMENT_ROW(name, spec, sig, fn) PYCM_ROW(name, spec, sig, impl_moment, moment, fn)

/* softmax(a, axis=None, *, precise=False) */
static PyObject *impl_softmax(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  return pycm_wrap(cm_softmax(v[0].arr, PA_AXES_OF(&v[1]), v[2].b, pa_stream(op, c)));
}

/* isclose/allclose(a, b, rtol, atol, *, equal_nan): arrays only. */
static PyObject *impl_close(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  return pycm_wrap(op->fn.close(v[0].arr, v[1].arr, v[2].f, v[3].f, v[4].b, pa_stream(op, c)));
}
#define CLOSE_ROW(name, spec, sig, fn) PYCM_ROW(name, spec, sig, impl_close, close, fn)

/* array_equal(a, b, *, equal_nan): scalars allowed, weak against the other
 * operand. */
static PyObject *impl_array_equal(const pycm_op *op, pa_call *c) {
  cm_array *a, *b;
  if (pa_binary_operands(c->v[0].obj, c->v[1].obj, &a, &b)) return NULL;
  cm_array *r = cm_array_equal(a, b, c->v[2].b, pa_stream(op, c));
  cm_release(a);
  cm_release(b);
  return pycm_wrap(r);
}

#define KW_S "*, stream: Stream = None"
#define SIG_S "*, stream: StreamOrDevice = None) -> array"
#define R_SPEC "a: array, /, axis: axes | None = None, keepdims: bool = False, " KW_S
#define R_SIG \
  "(a: array, /, axis: None | int | Sequence[int] = None, keepdims: bool = False, " SIG_S
#define REDUCE(name) REDUCE_ROW(#name, R_SPEC, R_SIG, cm_##name)
#define ARG_REDUCE(name)                                                                       \
  ARG_REDUCE_ROW(#name, "a: array, /, axis: int | None = None, keepdims: bool = False, " KW_S, \
                 "(a: array, /, axis: None | int = None, keepdims: bool = False, " SIG_S,      \
                 cm_##name)
#define MOMENT(name)                                                                             \
  MOMENT_ROW(#name,                                                                              \
             "a: array, /, axis: axes | None = None, keepdims: bool = False, ddof: int = 0, *, " \
             "correction: int | None = None, stream: Stream = None",                             \
             "(a: array, /, axis: None | int | Sequence[int] = None, keepdims: bool = False, "   \
             "ddof: int = 0, " SIG_S,                                                            \
             cm_##name)
#define CLOSE(name)                                                                            \
  CLOSE_ROW(#name,                                                                             \
            "a: array, b: array, /, rtol: float = 1e-05, atol: float = 1e-08, *, "             \
            "equal_nan: bool = False, stream: Stream = None",                                  \
            "(a: array, b: array, /, rtol: float = 1e-05, atol: float = 1e-08, *, equal_nan: " \
            "bool = False, stream: StreamOrDevice = None) -> array",                           \
            cm_##name)

/* The rows of ops/reduce_ops.h (their py column names the form), then the
 * compositions. */
#define ROW_AXES(name) REDUCE(name),
#define ROW_AXIS(name) ARG_REDUCE(name),

pycm_op pycm_ops_reduce[] = {
#define CM_X(CODE, name, Name, class, empty, grad, mlxc, py) ROW_##py(name)
    CM_REDUCE_OPS(CM_X)
#undef CM_X
    REDUCE(mean),
    MOMENT(var),
    MOMENT(std),
    REDUCE(logsumexp),
    REDUCE(median),
    REDUCE_ROW("count_nonzero",
               "a: array, /, axis: axes | None = None, *, keepdims: bool = False, "
               "stream: Stream = None",
               "(a: array, /, *, axis: None | int | Sequence[int] = None, keepdims: bool = False, "
               "stream: StreamOrDevice = None) -> array",
               cm_count_nonzero),
    PYCM_CALL("softmax",
              "a: array, /, axis: axes | None = None, *, precise: bool = False, "
              "stream: Stream = None",
              "(a: array, /, axis: None | int | Sequence[int] = None, *, precise: bool = False, "
              "stream: StreamOrDevice = None) -> array",
              impl_softmax),
    CLOSE(allclose),
    CLOSE(isclose),
    PYCM_CALL("array_equal",
              "a: arraylike, b: arraylike, /, *, equal_nan: bool = False, stream: Stream = None",
              "(a: scalar | array, b: scalar | array, equal_nan: bool = False, stream: "
              "StreamOrDevice = None) -> array",
              impl_array_equal),
};
const int pycm_ops_reduce_count = sizeof pycm_ops_reduce / sizeof pycm_ops_reduce[0];
