/* pycm_init_ops: every op family's table becomes module functions, and the
 * tables (with the array methods) become cmlx.core._signatures, a list of
 * (name, MLX's signature, accepted spec) from which docs/api-status can be
 * generated. */
#include "argparse.h"

int pycm_init_ops(PyObject *m) {
  if (pa_add_functions(m, pycm_ops_creation, pycm_ops_creation_count) ||
      pa_add_functions(m, pycm_ops_unary, pycm_ops_unary_count) ||
      pa_add_functions(m, pycm_ops_binary, pycm_ops_binary_count) ||
      pa_add_functions(m, pycm_ops_misc, pycm_ops_misc_count))
    return -1;
  return pycm_init_array_op_methods(m);
}
