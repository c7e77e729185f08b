/* mlx/c/transforms.h: custom_function, custom_vjp and checkpoint.
 *
 * Each returns an mlx_closure whose application runs the core's
 * cm_custom_function with rules that call the given mlx-c closures.  An
 * empty rule closure means the default rule (derived from fun by the
 * engines), so checkpoint is a custom function with no rules: its vjp
 * re-runs fun in the backward pass.  The closures are shared handles; the
 * last node built by an application may drop them from a stream worker
 * after evaluation (their payload dtors may run there). */
#include <stdatomic.h>
#include <stdlib.h>

#include "capi/capi.h"
#include "transforms/custom.h"

typedef struct custom_payload {
  atomic_long refs; /* the closure's own + one per application alive */
  mlx_closure fun;
  mlx_closure_custom vjp;
  mlx_closure_custom_jvp jvp;
  mlx_closure_custom_vmap vmap;
} custom_payload;

static void payload_release(void *p) {
  custom_payload *c = p;
  if (atomic_fetch_sub(&c->refs, 1) != 1) return;
  mlx_closure_free(c->fun);
  mlx_closure_custom_free(c->vjp);
  mlx_closure_custom_jvp_free(c->jvp);
  mlx_closure_custom_vmap_free(c->vmap);
  free(c);
}

/* vector <-> core list; the mlx-c closures report their own errors, so a
 * failure here is recorded as a core error for the engine to unwind. */
static int to_vector(mlx_vector_array *v, cm_array *const *a, int n) {
  *v = mlx_vector_array_new();
  if (!v->ctx || capi_vector_set_arrays(v, a, (size_t)n)) {
    mlx_vector_array_free(*v);
    return cm_error(CM_ERR_MEMORY, "[custom_function] Out of memory.");
  }
  return 0;
}

static int from_vector(mlx_vector_array v, cm_array ***out, int *n) {
  size_t len;
  cm_array *const *items;
  if (capi_vector_arrays("custom_function", v, &items, &len))
    return cm_error(CM_ERR_VALUE, "[custom_function] Invalid result vector.");
  cm_array **l = malloc(sizeof *l * (len ? len : 1));
  if (!l) return cm_error(CM_ERR_MEMORY, "[custom_function] Out of memory.");
  for (size_t i = 0; i < len; i++) l[i] = cm_retain(items[i]);
  *out = l;
  *n = (int)len;
  return 0;
}

static int rule_vjp(void *ctx, cm_array *const *primals, int np, cm_array *const *cots,
                    cm_array *const *outs, int nout, cm_array ***grads, int *ngrads) {
  custom_payload *c = ctx;
  mlx_vector_array p, ct, o, r = mlx_vector_array_new();
  if (to_vector(&p, primals, np)) return -1;
  if (to_vector(&ct, cots, nout)) return mlx_vector_array_free(p), -1;
  if (to_vector(&o, outs, nout)) return mlx_vector_array_free(p), mlx_vector_array_free(ct), -1;
  int rc = mlx_closure_custom_apply(&r, c->vjp, p, ct, o)
               ? cm_error(CM_ERR_RUNTIME, "[custom_function] The vjp closure failed.")
               : from_vector(r, grads, ngrads);
  mlx_vector_array_free(p);
  mlx_vector_array_free(ct);
  mlx_vector_array_free(o);
  mlx_vector_array_free(r);
  return rc;
}

static int rule_jvp(void *ctx, cm_array *const *primals, int np, cm_array *const *tangents,
                    const int *argnums, int nt, cm_array ***out, int *nout) {
  custom_payload *c = ctx;
  mlx_vector_array p, t, r = mlx_vector_array_new();
  if (to_vector(&p, primals, np)) return -1;
  if (to_vector(&t, tangents, nt)) return mlx_vector_array_free(p), -1;
  int rc = mlx_closure_custom_jvp_apply(&r, c->jvp, p, t, argnums, (size_t)nt)
               ? cm_error(CM_ERR_RUNTIME, "[custom_function] The jvp closure failed.")
               : from_vector(r, out, nout);
  mlx_vector_array_free(p);
  mlx_vector_array_free(t);
  mlx_vector_array_free(r);
  return rc;
}

static int rule_vmap(void *ctx, cm_array *const *in, int nin, const int *axes, cm_array ***out,
                     int **out_axes, int *nout) {
  custom_payload *c = ctx;
  mlx_vector_array p, r = mlx_vector_array_new();
  mlx_vector_int ra = mlx_vector_int_new();
  if (to_vector(&p, in, nin)) return -1;
  int rc = mlx_closure_custom_vmap_apply(&r, &ra, c->vmap, p, axes, (size_t)nin)
               ? cm_error(CM_ERR_RUNTIME, "[custom_function] The vmap closure failed.")
               : from_vector(r, out, nout);
  size_t na = rc ? 0 : mlx_vector_int_size(ra);
  if (!rc && na != (size_t)*nout)
    rc = cm_error(CM_ERR_VALUE, "[custom vmap] The vmap closure returned %d arrays and %zu axes.",
                  *nout, na);
  if (!rc && !(*out_axes = malloc(sizeof(int) * (na ? na : 1))))
    rc = cm_error(CM_ERR_MEMORY, "[custom_function] Out of memory.");
  for (size_t i = 0; !rc && i < na; i++) mlx_vector_int_get(&(*out_axes)[i], ra, i);
  if (rc && *out) {
    cm_array_list_free(*out, *nout);
    *out = NULL;
  }
  mlx_vector_array_free(p);
  mlx_vector_array_free(r);
  mlx_vector_int_free(ra);
  return rc;
}

/* The application of the returned closure. */
static int custom_apply(mlx_vector_array *res, const mlx_vector_array input, void *payload) {
  custom_payload *c = payload;
  size_t n;
  cm_array *const *in;
  if (capi_vector_arrays("custom_function", input, &in, &n))
    return -cm_error(CM_ERR_VALUE, "[custom_function] Invalid input vector.");
  /* A native closure: failures leave the core error for the caller to
   * report once (see capi_closure_mark_native). */
  if (n > INT32_MAX) return -cm_error(CM_ERR_VALUE, "[custom_function] Too many arrays.");
  atomic_fetch_add(&c->refs, 1); /* owned by this application's nodes */
  cm_custom_rules rules = {
      .vjp = c->vjp.ctx ? rule_vjp : NULL,
      .jvp = c->jvp.ctx ? rule_jvp : NULL,
      .vmap = c->vmap.ctx ? rule_vmap : NULL,
      .ctx = c,
      .destroy = payload_release,
  };
  cm_closure f = {capi_closure_call, c->fun.ctx};
  cm_array **outs = NULL;
  int nout = 0;
  if (cm_custom_function(f, &rules, in, (int)n, &outs, &nout)) return 1;
  int rc = capi_vector_set_arrays(res, outs, (size_t)nout);
  cm_array_list_free(outs, nout);
  return rc;
}

static int make(mlx_closure *res, const mlx_closure fun, const mlx_closure_custom *vjp,
                const mlx_closure_custom_jvp *jvp, const mlx_closure_custom_vmap *vmap,
                const char *name) {
  if (capi_need_h(name, fun.ctx, CAPI_H_CLOSURE) ||
      (vjp && capi_check(name, vjp->ctx, CAPI_H_CLOSURE_CUSTOM)) ||
      (jvp && capi_check(name, jvp->ctx, CAPI_H_CLOSURE_CUSTOM_JVP)) ||
      (vmap && capi_check(name, vmap->ctx, CAPI_H_CLOSURE_CUSTOM_VMAP)))
    return 1;
  custom_payload *c = calloc(1, sizeof *c);
  if (!c) return capi_errorf("[%s] Out of memory.", name);
  atomic_init(&c->refs, 1);
  c->fun = mlx_closure_new();
  c->vjp = mlx_closure_custom_new();
  c->jvp = mlx_closure_custom_jvp_new();
  c->vmap = mlx_closure_custom_vmap_new();
  mlx_closure_set(&c->fun, fun);
  if (vjp) mlx_closure_custom_set(&c->vjp, *vjp);
  if (jvp) mlx_closure_custom_jvp_set(&c->jvp, *jvp);
  if (vmap) mlx_closure_custom_vmap_set(&c->vmap, *vmap);
  mlx_closure cl = mlx_closure_new_func_payload(custom_apply, c, payload_release);
  if (!cl.ctx) return 1; /* reported; the payload was released */
  capi_closure_mark_native(cl.ctx);
  mlx_closure_set(res, cl);
  mlx_closure_free(cl);
  return 0;
}

int mlx_custom_function(mlx_closure *res, const mlx_closure fun, const mlx_closure_custom fun_vjp,
                        const mlx_closure_custom_jvp fun_jvp,
                        const mlx_closure_custom_vmap fun_vmap) {
  if (capi_out("mlx_custom_function", res) ||
      capi_check("custom_function", fun_vjp.ctx, CAPI_H_CLOSURE_CUSTOM) ||
      capi_check("custom_function", fun_jvp.ctx, CAPI_H_CLOSURE_CUSTOM_JVP) ||
      capi_check("custom_function", fun_vmap.ctx, CAPI_H_CLOSURE_CUSTOM_VMAP))
    return 1;
  /* MLX returns fun itself when there is nothing to customise. */
  if (fun.ctx && !fun_vjp.ctx && !fun_jvp.ctx && !fun_vmap.ctx) return mlx_closure_set(res, fun);
  return make(res, fun, &fun_vjp, &fun_jvp, &fun_vmap, "custom_function");
}

int mlx_custom_vjp(mlx_closure *res, const mlx_closure fun, const mlx_closure_custom fun_vjp) {
  if (capi_out("mlx_custom_vjp", res) ||
      capi_check("custom_vjp", fun_vjp.ctx, CAPI_H_CLOSURE_CUSTOM))
    return 1;
  if (fun.ctx && !fun_vjp.ctx) return mlx_closure_set(res, fun);
  return make(res, fun, &fun_vjp, NULL, NULL, "custom_vjp");
}

int mlx_checkpoint(mlx_closure *res, const mlx_closure fun) {
  if (capi_out("mlx_checkpoint", res)) return 1;
  return make(res, fun, NULL, NULL, NULL, "checkpoint");
}
