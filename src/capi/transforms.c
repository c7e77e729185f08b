/* mlx/c/transforms.h: evaluation and transformations (eval, vjp, jvp,
 * value_and_grad here; custom_function, custom_vjp and checkpoint in
 * transforms_custom.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capi/capi.h"
#include "ops/ops.h"
#include "transforms/autodiff.h"
#include "transforms/eval.h"

/* eval, async_eval, vjp and jvp are adapters over the core;
 * value_and_grad builds a closure that runs vjp. */

static int eval_vector(const mlx_vector_array outputs, bool wait) {
  size_t n;
  cm_array *const *items;
  if (capi_vector_arrays(wait ? "mlx_eval" : "mlx_async_eval", outputs, &items, &n)) return 1;
  if (n > INT32_MAX) return capi_errorf("[eval] Too many arrays.");
  if (!n) return 0;
  int rc = wait ? cm_eval(items, (int)n) : cm_async_eval(items, (int)n);
  return rc ? capi_fail() : 0;
}

int mlx_eval(const mlx_vector_array outputs) { return eval_vector(outputs, true); }
int mlx_async_eval(const mlx_vector_array outputs) { return eval_vector(outputs, false); }

typedef int (*ad_fn)(cm_closure f, cm_array *const *primals, int nprimals, cm_array *const *seeds,
                     int nseeds, cm_array ***outputs, int *nout, cm_array ***derivs);

/* vjp and jvp share a shape: (outputs, derivatives) = T(fun, primals, seeds);
 * vjp gives one derivative per primal, jvp one per output. */
static int autodiff(ad_fn fn, bool per_primal, mlx_vector_array *res_0, mlx_vector_array *res_1,
                    const mlx_closure fun, const mlx_vector_array primals,
                    const mlx_vector_array seeds) {
  size_t np, ns;
  cm_array *const *p, *const *sd;
  const char *name = per_primal ? "mlx_vjp" : "mlx_jvp";
  if (capi_vector_arrays(name, primals, &p, &np) || capi_vector_arrays(name, seeds, &sd, &ns))
    return 1;
  if (capi_need_h(per_primal ? "vjp" : "jvp", fun.ctx, CAPI_H_CLOSURE)) return 1;
  if (np > INT32_MAX || ns > INT32_MAX)
    return capi_errorf("[%s] Too many arrays.", per_primal ? "vjp" : "jvp");
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

int mlx_vjp(mlx_vector_array *res_0, mlx_vector_array *res_1, const mlx_closure fun,
            const mlx_vector_array primals, const mlx_vector_array cotangents) {
  if (capi_out("mlx_vjp", res_0) || capi_out("mlx_vjp", res_1)) return 1;
  return autodiff(cm_vjp, true, res_0, res_1, fun, primals, cotangents);
}

int mlx_jvp(mlx_vector_array *res_0, mlx_vector_array *res_1, const mlx_closure fun,
            const mlx_vector_array primals, const mlx_vector_array tangents) {
  if (capi_out("mlx_jvp", res_0) || capi_out("mlx_jvp", res_1)) return 1;
  return autodiff(cm_jvp, false, res_0, res_1, fun, primals, tangents);
}

/* ---- value_and_grad --------------------------------------------------------- */

/* The payload of the closure mlx_value_and_grad returns. */
typedef struct vag_payload {
  mlx_closure fun; /* a shared handle */
  int *argnums;    /* sorted, unique */
  int nargs;
} vag_payload;

static void vag_payload_free(void *p) {
  vag_payload *v = p;
  mlx_closure_free(v->fun);
  free(v->argnums);
  free(v);
}

/* One application: the function sees its inputs with tracers at argnums;
 * its first output is differentiated, the rest come back stop_gradient'ed
 * (MLX's value_and_grad). */
typedef struct vag_call {
  const vag_payload *v;
  cm_array *const *inputs;
  int nin;
  cm_array **aux; /* outputs after the first */
  int naux;
} vag_call;

static int vag_trace(void *ctx, cm_array *const *tracers, int nt, cm_array ***out, int *nout) {
  vag_call *c = ctx;
  cm_array **full = malloc(sizeof *full * (size_t)(c->nin ? c->nin : 1)), **outs = NULL;
  if (!full) return cm_error(CM_ERR_MEMORY, "[value_and_grad] Out of memory.");
  for (int i = 0; i < c->nin; i++) full[i] = c->inputs[i];
  for (int k = 0; k < nt; k++) full[c->v->argnums[k]] = tracers[k];
  int n = 0, rc = capi_closure_call(c->v->fun.ctx, full, c->nin, &outs, &n);
  free(full);
  if (rc) return -1;
  if (n == 0) {
    free(outs);
    return cm_error(CM_ERR_VALUE, "[value_and_grad] The function must return at least one array.");
  }
  cm_array_list_free(c->aux, c->naux);
  c->aux = calloc((size_t)n, sizeof *c->aux);
  c->naux = 0;
  if (!c->aux) rc = cm_error(CM_ERR_MEMORY, "[value_and_grad] Out of memory.");
  for (int k = 1; !rc && k < n; k++) {
    c->aux[k - 1] = cm_stop_gradient(outs[k], CM_STREAM_DEFAULT);
    if (!c->aux[k - 1]) rc = -1;
    else c->naux = k;
  }
  for (int k = 1; k < n; k++) cm_release(outs[k]);
  if (rc) {
    cm_release(outs[0]);
    free(outs);
    return -1;
  }
  *out = outs; /* outs[0] only */
  *nout = 1;
  return 0;
}

static int vag_apply(mlx_vector_array *res_0, mlx_vector_array *res_1, const mlx_vector_array input,
                     void *payload) {
  const vag_payload *v = payload;
  size_t n;
  cm_array *const *in;
  if (capi_vector_arrays("value_and_grad", input, &in, &n))
    return -cm_error(CM_ERR_VALUE, "[grad] Invalid input vector.");
  /* A native closure: failures leave the core error for the caller to
   * report once (see capi_closure_mark_native). */
  if (n > INT32_MAX) return -cm_error(CM_ERR_VALUE, "[grad] Too many arrays.");
  for (int k = 0; k < v->nargs; k++)
    if (v->argnums[k] < 0 || (size_t)v->argnums[k] >= n)
      return -cm_error(CM_ERR_VALUE, "[grad] Invalid argument number for function with %zu inputs.",
                       n);
  cm_array **primals = malloc(sizeof *primals * (size_t)v->nargs), **outs = NULL, **grads = NULL;
  cm_array *one = cm_array_scalar_double(1.0, CM_FLOAT32);
  if (!primals || !one) {
    free(primals);
    cm_release(one);
    return -cm_error(CM_ERR_MEMORY, "[value_and_grad] Out of memory.");
  }
  for (int k = 0; k < v->nargs; k++) primals[k] = in[v->argnums[k]];
  vag_call c = {v, in, (int)n, NULL, 0};
  cm_closure f = {vag_trace, &c};
  int nout = 0, rc = cm_vjp(f, primals, v->nargs, &one, 1, &outs, &nout, &grads) ? 1 : 0;
  if (!rc) {
    /* value = (first output, stopped aux outputs...) */
    cm_array **vals = malloc(sizeof *vals * (size_t)(1 + c.naux));
    if (!vals) rc = -cm_error(CM_ERR_MEMORY, "[value_and_grad] Out of memory.");
    for (int k = 0; !rc && k <= c.naux; k++) vals[k] = k ? c.aux[k - 1] : outs[0];
    if (!rc) rc = capi_vector_set_arrays(res_0, vals, (size_t)(1 + c.naux));
    if (!rc) rc = capi_vector_set_arrays(res_1, grads, (size_t)v->nargs);
    free(vals);
    cm_array_list_free(outs, nout);
    cm_array_list_free(grads, v->nargs);
  }
  cm_array_list_free(c.aux, c.naux);
  cm_release(one);
  free(primals);
  return rc;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

int mlx_value_and_grad(mlx_closure_value_and_grad *res, const mlx_closure fun, const int *argnums,
                       size_t argnums_num) {
  if (capi_out("mlx_value_and_grad", res)) return 1;
  int n;
  if (capi_need_h("value_and_grad", fun.ctx, CAPI_H_CLOSURE)) return 1;
  if (capi_list("value_and_grad", argnums, argnums_num, &n)) return 1;
  if (n == 0) return capi_errorf("[grad] Must specify at least one argument.");
  vag_payload *v = calloc(1, sizeof *v);
  int *nums = malloc(sizeof *nums * (size_t)n);
  if (!v || !nums) {
    free(v);
    free(nums);
    return capi_errorf("[value_and_grad] Out of memory.");
  }
  /* MLX keeps the arguments as a set: sorted, duplicates dropped. */
  memcpy(nums, argnums, sizeof *nums * (size_t)n);
  qsort(nums, (size_t)n, sizeof *nums, cmp_int);
  int m = 0;
  for (int i = 0; i < n; i++)
    if (!m || nums[m - 1] != nums[i]) nums[m++] = nums[i];
  v->fun = mlx_closure_new();
  mlx_closure_set(&v->fun, fun);
  v->argnums = nums;
  v->nargs = m;
  mlx_closure_value_and_grad c =
      mlx_closure_value_and_grad_new_func_payload(vag_apply, v, vag_payload_free);
  if (!c.ctx) return 1; /* reported; the payload was freed */
  capi_closure_mark_native(c.ctx);
  mlx_closure_value_and_grad_set(res, c);
  mlx_closure_value_and_grad_free(c);
  return 0;
}
