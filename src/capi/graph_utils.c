/* mlx/c/graph_utils.h: graph printing.
 * Every function not written out below reports "<function>: not
 * implemented yet in cmlx" through the error handler and returns 1 (an
 * empty handle, or false, where the function returns one); none computes
 * anything.  Freeing an (empty) handle succeeds. */
#include "capi/capi.h"

/* Each function below reports that it is not implemented yet and ignores
 * its arguments: it never computes a result. */
#pragma GCC diagnostic ignored "-Wunused-parameter"



mlx_node_namer mlx_node_namer_new(void) {
  return (mlx_node_namer){0};
}

int mlx_node_namer_free(mlx_node_namer namer) {
  return 0;
}

int mlx_node_namer_set_name(mlx_node_namer namer, const mlx_array arr, const char* name) {
  return capi_not_impl(__func__);
}

int mlx_node_namer_get_name(const char** name, mlx_node_namer namer, const mlx_array arr) {
  return capi_not_impl(__func__);
}

int mlx_export_to_dot(FILE* os, const mlx_node_namer namer, const mlx_vector_array outputs) {
  return capi_not_impl(__func__);
}

int mlx_print_graph(FILE* os, const mlx_node_namer namer, const mlx_vector_array outputs) {
  return capi_not_impl(__func__);
}
