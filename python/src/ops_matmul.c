/* Matrix products as module functions: matmul and addmm.  Both take arrays
 * only (MLX refuses scalars, lists and NumPy arrays with a TypeError); the
 * `@` operator is in array_ops.c. */
#include "ops_lists.h"
#include "ops_tables.h"

static PyObject *impl_matmul(const pycm_op *op, pa_call *c) {
  return pycm_wrap(cm_matmul(c->v[0].arr, c->v[1].arr, pa_stream(op, c)));
}

/* addmm(c, a, b, /, alpha=1.0, beta=1.0) = alpha * (a @ b) + beta * c */
static PyObject *impl_addmm(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  return pycm_wrap(cm_addmm(v[0].arr, v[1].arr, v[2].arr, (float)v[3].f, (float)v[4].f,
                            pa_stream(op, c)));
}

pycm_op pycm_ops_matmul[] = {
    PYCM_CALL("matmul", "a: array, b: array, /, *, stream: Stream = None",
              "(a: array, b: array, /, *, stream: StreamOrDevice = None) -> array", impl_matmul),
    PYCM_CALL("addmm",
              "c: array, a: array, b: array, /, alpha: float = 1.0, beta: float = 1.0, *, "
              "stream: Stream = None",
              "(c: array, a: array, b: array, /, alpha: float = 1.0, beta: float = 1.0,  *, "
              "stream: StreamOrDevice = None) -> array",
              impl_addmm),
};
const int pycm_ops_matmul_count = sizeof pycm_ops_matmul / sizeof pycm_ops_matmul[0];
