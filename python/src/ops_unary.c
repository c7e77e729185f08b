/* Elementwise unary ops: the rows of the signature table.  The spec says
 * what MLX 0.32 accepts (nanobind's real rules: `a` positional-only, stream
 * keyword-only), the sig is MLX's displayed signature, which for some ops
 * shows fewer markers than the binding enforces. */
#include "argparse.h"

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
#define UNARY(name) PYCM_UNARY(#name, SPEC_A, SIG_A, cm_##name)
#define UNARY_NOMARK(name) PYCM_UNARY(#name, SPEC_A, SIG_A_NOMARK, cm_##name)

pycm_op pycm_ops_unary[] = {
    UNARY(abs),
    UNARY(sign),
    PYCM_UNARY("positive", SPEC_A_STRICT, SIG_A, cm_positive),
    UNARY(negative),
    UNARY(square),
    UNARY(sqrt),
    UNARY(rsqrt),
    UNARY(reciprocal),
    UNARY(exp),
    UNARY(expm1),
    UNARY(erf),
    UNARY(erfinv),
    UNARY(sin),
    UNARY(cos),
    UNARY(tan),
    UNARY(arcsin),
    UNARY(arccos),
    UNARY(arctan),
    UNARY(sinh),
    UNARY(cosh),
    UNARY(tanh),
    UNARY(arcsinh),
    UNARY(arccosh),
    UNARY(arctanh),
    UNARY(degrees),
    UNARY(radians),
    UNARY(log),
    UNARY(log2),
    UNARY(log10),
    UNARY(log1p),
    PYCM_UNARY("stop_gradient", SPEC_A_STRICT, SIG_A, cm_stop_gradient),
    UNARY(sigmoid),
    UNARY(floor),
    UNARY(ceil),
    UNARY(logical_not),
    UNARY_NOMARK(isnan),
    UNARY_NOMARK(isinf),
    UNARY_NOMARK(isfinite),
    UNARY_NOMARK(isposinf),
    UNARY_NOMARK(isneginf),
    UNARY(real),
    UNARY(imag),
    PYCM_UNARY("conj", SPEC_A, SIG_A_KW, cm_conjugate),
    PYCM_UNARY("conjugate", SPEC_A, SIG_A_KW, cm_conjugate),
    PYCM_UNARY("bitwise_invert", SPEC_A,
               "(a: scalar | array, stream: StreamOrDevice = None) -> array", cm_bitwise_invert),
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
