/* Elementwise binary ops: the rows of the signature table.  Every operand
 * may be a Python scalar, which is weak (takes the other operand's dtype);
 * both operands positional-only and stream keyword-only, as MLX 0.32's
 * bindings enforce whatever their displayed signatures show. */
#include "argparse.h"
#include "ops_tables.h"
#include "ops/binary.h"

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

/* One row per op of ops/binary_ops.h, its py column naming the form;
 * divmod (two outputs, not in the family) by hand. */
pycm_op pycm_ops_binary[] = {
#define CM_X(CODE, name, Name, dtype, grad, mlxc, py, ...) \
  PYCM_BINARY(#name, SPEC_AB, SIG_##py, cm_##name),
    CM_BINARY_OPS(CM_X)
#undef CM_X
    PYCM_CALL("divmod", SPEC_AB, SIG_PLAIN, impl_divmod),
};
const int pycm_ops_binary_count = sizeof pycm_ops_binary / sizeof pycm_ops_binary[0];
