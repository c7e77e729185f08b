/* Elementwise binary ops: the rows of the signature table.  Every operand
 * may be a Python scalar, which is weak (takes the other operand's dtype);
 * both operands positional-only and stream keyword-only, as MLX 0.32's
 * bindings enforce whatever their displayed signatures show. */
#include "argparse.h"

/* divmod(a, b) -> [quotient, remainder] (MLX returns a list). */
static PyObject *impl_divmod(const pycm_op *op, pa_call *c) {
  cm_array *a, *b, *q = NULL, *r = NULL;
  if (pa_binary_operands(c->v[0].obj, c->v[1].obj, &a, &b)) return NULL;
  int rc = cm_divmod(a, b, &q, &r, pa_stream(op, c));
  cm_release(a);
  cm_release(b);
  if (rc) return pycm_raise();
  PyObject *pq = pycm_wrap(q);
  if (!pq) {
    cm_release(r);
    return NULL;
  }
  PyObject *pr = pycm_wrap(r);
  if (!pr) {
    Py_DECREF(pq);
    return NULL;
  }
  return Py_BuildValue("[NN]", pq, pr);
}

#define SPEC_AB "a: arraylike, b: arraylike, /, *, stream: Stream = None"
/* MLX shows three forms of the same rules */
#define SIG_PLAIN "(a: scalar | array, b: scalar | array, stream: StreamOrDevice = None) -> array"
#define SIG_MARKED \
  "(a: scalar | array, b: scalar | array, /, *, stream: StreamOrDevice = None) -> array"
#define SIG_ARRAYS "(a: array, b: array, /, *, stream: StreamOrDevice = None) -> array"
#define BINARY(name, sig) PYCM_BINARY(#name, SPEC_AB, sig, cm_##name)

pycm_op pycm_ops_binary[] = {
    BINARY(add, SIG_PLAIN),
    BINARY(subtract, SIG_PLAIN),
    BINARY(multiply, SIG_PLAIN),
    BINARY(divide, SIG_PLAIN),
    PYCM_CALL("divmod", SPEC_AB, SIG_PLAIN, impl_divmod),
    BINARY(floor_divide, SIG_PLAIN),
    BINARY(remainder, SIG_PLAIN),
    BINARY(equal, SIG_PLAIN),
    BINARY(not_equal, SIG_PLAIN),
    BINARY(less, SIG_PLAIN),
    BINARY(less_equal, SIG_PLAIN),
    BINARY(greater, SIG_PLAIN),
    BINARY(greater_equal, SIG_PLAIN),
    BINARY(logical_and, SIG_ARRAYS),
    BINARY(logical_or, SIG_ARRAYS),
    BINARY(logical_xor, SIG_MARKED),
    BINARY(logaddexp, SIG_MARKED),
    BINARY(arctan2, SIG_ARRAYS),
    BINARY(power, SIG_MARKED),
    BINARY(minimum, SIG_MARKED),
    BINARY(maximum, SIG_MARKED),
    BINARY(bitwise_and, SIG_PLAIN),
    BINARY(bitwise_or, SIG_PLAIN),
    BINARY(bitwise_xor, SIG_PLAIN),
    BINARY(left_shift, SIG_PLAIN),
    BINARY(right_shift, SIG_PLAIN),
};
const int pycm_ops_binary_count = sizeof pycm_ops_binary / sizeof pycm_ops_binary[0];
