/* mlx/c/compile.h: function compilation.
 * Every function not written out below reports "<function>: not
 * implemented yet in cmlx" through the error handler and returns 1 (an
 * empty handle, or false, where the function returns one); none computes
 * anything.  Freeing an (empty) handle succeeds. */
#include "capi/capi.h"

/* Each function below reports that it is not implemented yet and ignores
 * its arguments: it never computes a result. */
#pragma GCC diagnostic ignored "-Wunused-parameter"



int mlx_compile(mlx_closure* res, const mlx_closure fun, bool shapeless) {
  return capi_not_impl(__func__);
}

int mlx_detail_compile(mlx_closure *res, const mlx_closure fun, uintptr_t fun_id, bool shapeless,
                       const uint64_t *constants, size_t constants_num) {
  return capi_not_impl(__func__);
}

int mlx_detail_compile_clear_cache(void) {
  return capi_not_impl(__func__);
}

int mlx_detail_compile_erase(uintptr_t fun_id) {
  return capi_not_impl(__func__);
}

int mlx_disable_compile(void) {
  return capi_not_impl(__func__);
}

int mlx_enable_compile(void) {
  return capi_not_impl(__func__);
}

int mlx_set_compile_mode(mlx_compile_mode mode) {
  return capi_not_impl(__func__);
}
