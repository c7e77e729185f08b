/* mlx/c/transforms.h: evaluation and transformations.
 * Every function not written out below reports "<function>: not
 * implemented yet in cmlx" through the error handler and returns 1 (an
 * empty handle, or false, where the function returns one); none computes
 * anything.  Freeing an (empty) handle succeeds. */
#include <stdint.h>

#include "capi/capi.h"
#include "transforms/autodiff.h"
#include "transforms/eval.h"

/* The stubs ignore their arguments. */
#pragma GCC diagnostic ignored "-Wunused-parameter"


/* eval, async_eval, vjp and jvp are adapters over the core; the other
 * transformations (value_and_grad, checkpoint, custom functions) are not
 * wired yet. */

static int eval_vector(const mlx_vector_array outputs, bool wait) {
  size_t n;
  cm_array *const *items = capi_vector_items(outputs, &n);
  if (n > INT32_MAX) return capi_errorf("[eval] Too many arrays.");
  if (!n) return 0;
  int rc = wait ? cm_eval(items, (int)n) : cm_async_eval(items, (int)n);
  return rc ? capi_fail() : 0;
}

int mlx_eval(const mlx_vector_array outputs) { return eval_vector(outputs, true); }
int mlx_async_eval(const mlx_vector_array outputs) { return eval_vector(outputs, false); }

typedef int (*ad_fn)(cm_closure f, cm_array *const *primals, int nprimals, cm_array *const *seeds, int nseeds,
                     cm_array ***outputs, int *nout, cm_array ***derivs);

/* vjp and jvp share a shape: (outputs, derivatives) = T(fun, primals, seeds);
 * vjp gives one derivative per primal, jvp one per output. */
static int autodiff(ad_fn fn, bool per_primal, mlx_vector_array *res_0, mlx_vector_array *res_1,
                    const mlx_closure fun, const mlx_vector_array primals, const mlx_vector_array seeds) {
  size_t np, ns;
  cm_array *const *p = capi_vector_items(primals, &np);
  cm_array *const *sd = capi_vector_items(seeds, &ns);
  if (!fun.ctx) return capi_errorf("[%s] expected a non-empty mlx_closure", per_primal ? "vjp" : "jvp");
  if (np > INT32_MAX || ns > INT32_MAX) return capi_errorf("[%s] Too many arrays.", per_primal ? "vjp" : "jvp");
  cm_closure f = {capi_closure_call, fun.ctx};
  cm_array **outs = NULL, **derivs = NULL;
  int nout = 0;
  if (fn(f, p, (int)np, sd, (int)ns, &outs, &nout, &derivs)) return capi_fail();
  int nd = per_primal ? (int)np : nout;
  int rc = capi_vector_set_arrays(res_0, outs, (size_t)nout);
  if (!rc) rc = capi_vector_set_arrays(res_1, derivs, (size_t)nd);
  cm_array_list_free(outs, nout);
  cm_array_list_free(derivs, nd);
  return rc;
}

int mlx_vjp(mlx_vector_array *res_0, mlx_vector_array *res_1, const mlx_closure fun, const mlx_vector_array primals,
            const mlx_vector_array cotangents) {
  return autodiff(cm_vjp, true, res_0, res_1, fun, primals, cotangents);
}

int mlx_jvp(mlx_vector_array *res_0, mlx_vector_array *res_1, const mlx_closure fun, const mlx_vector_array primals,
            const mlx_vector_array tangents) {
  return autodiff(cm_jvp, false, res_0, res_1, fun, primals, tangents);
}


int mlx_checkpoint(mlx_closure* res, const mlx_closure fun) {
  return capi_not_impl(__func__);
}

int mlx_custom_function(mlx_closure* res, const mlx_closure fun, const mlx_closure_custom fun_vjp , const mlx_closure_custom_jvp fun_jvp , const mlx_closure_custom_vmap fun_vmap) {
  return capi_not_impl(__func__);
}

int mlx_custom_vjp(mlx_closure* res, const mlx_closure fun, const mlx_closure_custom fun_vjp) {
  return capi_not_impl(__func__);
}

int mlx_value_and_grad(mlx_closure_value_and_grad* res, const mlx_closure fun, const int* argnums, size_t argnums_num) {
  return capi_not_impl(__func__);
}
