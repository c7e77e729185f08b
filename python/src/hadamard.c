/* cmlx.core.hadamard_transform over src/ops/hadamard.h. */
#include "ops/hadamard.h"
#include "init.h"
#include "argparse.h"

/* hadamard_transform(a, scale=None, stream=None) */
static PyObject *impl_hadamard(const pycm_op *op, pa_call *c) {
  const pa_value *v = c->v;
  return pycm_wrap(cm_hadamard_transform(v[0].arr, !v[1].none, (float)v[1].f, pa_stream(op, c)));
}

static pycm_op hadamard_ops[] = {
    PYCM_CALL("hadamard_transform", "a: array, scale: float | None = None, stream: Stream = None",
              "(a: array, scale: float | None = None, stream: StreamOrDevice = None) -> array",
              impl_hadamard),
};

int pycm_init_hadamard(PyObject *m) { return pa_add_functions(m, hadamard_ops, 1); }
