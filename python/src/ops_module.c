/* pycm_init_ops: every op family's table becomes module functions, and the
 * tables (with the array methods) become cmlx.core._signatures, a list of
 * (name, MLX's signature, accepted spec) from which docs/api-status can be
 * generated. */
#include "init.h"
#include "ops_tables.h"

int pycm_init_ops(PyObject *m) {
  if (pa_add_functions(m, pycm_ops_creation, pycm_ops_creation_count) ||
      pa_add_functions(m, pycm_ops_unary, pycm_ops_unary_count) ||
      pa_add_functions(m, pycm_ops_binary, pycm_ops_binary_count) ||
      pa_add_functions(m, pycm_ops_misc, pycm_ops_misc_count) || pycm_init_indexing(m) ||
      pa_add_functions(m, pycm_ops_shape, pycm_ops_shape_count) ||
      pa_add_functions(m, pycm_ops_shape_join, pycm_ops_shape_join_count) ||
      pa_add_functions(m, pycm_ops_reduce, pycm_ops_reduce_count) ||
      pa_add_functions(m, pycm_ops_sortscan, pycm_ops_sortscan_count) ||
      pa_add_functions(m, pycm_ops_matmul, pycm_ops_matmul_count) ||
      pa_add_functions(m, pycm_ops_contract, pycm_ops_contract_count) ||
      pa_add_functions(m, pycm_ops_quantized, pycm_ops_quantized_count) ||
      pa_add_functions(m, pycm_ops_conv, pycm_ops_conv_count) ||
      pa_add_functions(m, pycm_ops_array_api, pycm_ops_array_api_count) ||
      pycm_add_array_api_aliases(m))
    return -1;
  return pycm_init_array_op_methods(m);
}
