/* Elementwise unary ops: the rows of the signature table.  The spec says
 * what MLX 0.32 accepts (nanobind's real rules: `a` positional-only, stream
 * keyword-only), the sig is MLX's displayed signature, which for some ops
 * shows fewer markers than the binding enforces. */
#include "argparse.h"
#include "ops_tables.h"

/* round(a, /, decimals=0, *, stream=None) */
static PyObject *impl_round(const pycm_op *op, pa_call *c) {
  cm_array *a = pa_to_array(c->v[0].obj, -1);
  if (!a) return NULL;
  cm_array *r = cm_round(a, (int)c->v[1].i, pa_stream(op, c));
  cm_release(a);
  return pycm_wrap(r);
}

/* nan_to_num(a, /, nan=0, posinf=None, neginf=None, *, stream=None) */
static PyObject *impl_nan_to_num(const pycm_op *op, pa_call *c) {
  cm_array *a = pa_to_array(c->v[0].obj, -1);
  if (!a) return NULL;
  const pa_value *v = c->v;
  cm_array *r = cm_nan_to_num(a, (float)v[1].f, !v[2].none, (float)v[2].f, !v[3].none,
                              (float)v[3].f, pa_stream(op, c));
  cm_release(a);
  return pycm_wrap(r);
}

/* astype(a, dtype, /, *, stream=None); MLX accepts dtype= as a keyword. */
static PyObject *impl_astype(const pycm_op *op, pa_call *c) {
  return pycm_wrap(cm_astype(c->v[0].arr, c->v[1].dtype, pa_stream(op, c)));
}

#define SPEC_A "a: arraylike, /, *, stream: Stream = None"
#define SPEC_A_STRICT "a: array, /, *, stream: Stream = None"
#define SIG_A "(a: array, /, *, stream: StreamOrDevice = None) -> array"
#define SIG_A_NOMARK "(a: array, stream: StreamOrDevice = None) -> array"
#define SIG_A_KW "(a: array, *, stream: StreamOrDevice = None) -> array"
#define SIG_A_SCALAR "(a: scalar | array, stream: StreamOrDevice = None) -> array"

/* A generated row per op of ops/unary_ops.h, its py column naming the
 * displayed form; the OWN rows, the ops that are not op codes (positive,
 * stop_gradient, astype) and the alias conj by hand. */
#define ROW_A(name) PYCM_UNARY(#name, SPEC_A, SIG_A, cm_##name),
#define ROW_NOMARK(name) PYCM_UNARY(#name, SPEC_A, SIG_A_NOMARK, cm_##name),
#define ROW_KW(name) PYCM_UNARY(#name, SPEC_A, SIG_A_KW, cm_##name),
#define ROW_SCALAR(name) PYCM_UNARY(#name, SPEC_A, SIG_A_SCALAR, cm_##name),
#define ROW_OWN(name)

pycm_op pycm_ops_unary[] = {
#define CM_X(CODE, name, Name, out, checks, grad, ctor, mlxc, py, ...) ROW_##py(name)
    CM_UNARY_OPS(CM_X)
#undef CM_X
    PYCM_UNARY("positive", SPEC_A_STRICT, SIG_A, cm_positive),
    PYCM_UNARY("stop_gradient", SPEC_A_STRICT, SIG_A, cm_stop_gradient),
    PYCM_UNARY("conj", SPEC_A, SIG_A_KW, cm_conjugate),
    PYCM_CALL("round", "a: arraylike, /, decimals: int = 0, *, stream: Stream = None",
              "(a: array, /, decimals: int = 0, stream: StreamOrDevice = None) -> array",
              impl_round),
    PYCM_CALL("nan_to_num",
              "a: arraylike, /, nan: float = 0, posinf: float | None = None, "
              "neginf: float | None = None, *, stream: Stream = None",
              "(a: scalar | array, nan: float = 0, posinf: float | None = None, neginf: float | "
              "None = None, *, stream: StreamOrDevice = None) -> array",
              impl_nan_to_num),
    PYCM_CALL("astype", "a: array, /, dtype: Dtype, *, stream: Stream = None",
              "(a: array, dtype: Dtype, /, *, stream: StreamOrDevice = None) -> array",
              impl_astype),
};
const int pycm_ops_unary_count = sizeof pycm_ops_unary / sizeof pycm_ops_unary[0];
