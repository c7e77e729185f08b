/* mlx/c/compile.h: function compilation (transforms/compile.h).
 *
 * mlx_compile wraps a closure with its own trace cache.  mlx_detail_compile
 * shares one cache per fun_id (MLX's compile cache, which
 * mlx_detail_compile_erase and mlx_detail_compile_clear_cache empty) and
 * adds the caller's constants to the key of every call. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "capi/capi.h"
#include "transforms/compile.h"

/* ---- the shared caches of mlx_detail_compile ------------------------------ */

typedef struct shared {
  struct shared *next;
  uintptr_t id;
  cm_compiled *c;
  int refs; /* compiled closures using it, guarded by registry_mu */
} shared;

static pthread_mutex_t registry_mu = PTHREAD_MUTEX_INITIALIZER;
static shared *registry;

static shared *shared_get(uintptr_t id, bool shapeless) {
  pthread_mutex_lock(&registry_mu);
  shared *s = registry;
  while (s && s->id != id) s = s->next;
  if (!s && (s = calloc(1, sizeof *s))) {
    if ((s->c = cm_compiled_new(shapeless, NULL))) {
      s->id = id;
      s->next = registry;
      registry = s;
    } else {
      free(s);
      s = NULL;
    }
  }
  if (s) s->refs++;
  pthread_mutex_unlock(&registry_mu);
  return s;
}

static void shared_put(shared *s) {
  pthread_mutex_lock(&registry_mu);
  if (--s->refs == 0) {
    shared **p = &registry;
    while (*p != s) p = &(*p)->next;
    *p = s->next;
    cm_compiled_free(s->c);
    free(s);
  }
  pthread_mutex_unlock(&registry_mu);
}

/* ---- compiled closures ---------------------------------------------------- */

typedef struct compiled_payload {
  mlx_closure fun;
  cm_compiled *own; /* mlx_compile */
  shared *shared;   /* mlx_detail_compile */
  uint64_t *constants;
  int nconst;
} compiled_payload;

static void payload_free(void *p) {
  compiled_payload *c = p;
  mlx_closure_free(c->fun);
  cm_compiled_free(c->own);
  if (c->shared) shared_put(c->shared);
  free(c->constants);
  free(c);
}

static int compiled_apply(mlx_vector_array *res, const mlx_vector_array input, void *payload) {
  compiled_payload *c = payload;
  size_t n;
  cm_array *const *in;
  if (capi_vector_arrays("compile", input, &in, &n))
    return -cm_error(CM_ERR_VALUE, "[compile] Invalid input vector.");
  if (n > INT32_MAX) return -cm_error(CM_ERR_VALUE, "[compile] Too many arrays.");
  cm_closure f = {capi_closure_call, c->fun.ctx};
  cm_array **outs = NULL;
  int nout = 0, rc;
  /* A native closure: failures leave the core error for the caller to
   * report once (see capi_closure_mark_native). */
  if (cm_get_compile_mode() == CM_COMPILE_DISABLED) rc = f.call(f.ctx, in, (int)n, &outs, &nout);
  else
    rc = cm_compiled_call(c->own ? c->own : c->shared->c, f, in, (int)n, c->constants, c->nconst,
                          &outs, &nout, NULL);
  if (rc) return 1;
  rc = capi_vector_set_arrays(res, outs, (size_t)nout);
  cm_array_list_free(outs, nout);
  return rc;
}

static int make(mlx_closure *res, const mlx_closure fun, bool shapeless, bool detail,
                uintptr_t fun_id, const uint64_t *constants, size_t nconst) {
  const char *fn = detail ? "mlx_detail_compile" : "mlx_compile";
  if (capi_out(fn, res)) return 1;
  if (capi_check(fn, fun.ctx, CAPI_H_CLOSURE)) return 1;
  if (!fun.ctx) return capi_errorf("[compile] Cannot compile a function without a target.");
  if (nconst && !constants) return capi_errorf("[%s] constants is NULL.", fn);
  if (nconst > INT32_MAX) return capi_errorf("[%s] Too many constants.", fn);
  compiled_payload *c = calloc(1, sizeof *c);
  if (!c) return capi_errorf("[%s] Out of memory.", fn);
  c->fun = mlx_closure_new();
  mlx_closure_set(&c->fun, fun);
  if (detail) c->shared = shared_get(fun_id, shapeless);
  else c->own = cm_compiled_new(shapeless, NULL);
  c->constants = malloc(sizeof *constants * (nconst ? nconst : 1));
  if (!(c->own || c->shared) || !c->constants) {
    payload_free(c);
    return capi_errorf("[%s] Out of memory.", fn);
  }
  if (nconst) memcpy(c->constants, constants, sizeof *constants * nconst);
  c->nconst = (int)nconst;
  mlx_closure cl = mlx_closure_new_func_payload(compiled_apply, c, payload_free);
  if (!cl.ctx) return 1; /* reported; the payload was released */
  capi_closure_mark_native(cl.ctx);
  mlx_closure_set(res, cl);
  mlx_closure_free(cl);
  return 0;
}

int mlx_compile(mlx_closure *res, const mlx_closure fun, bool shapeless) {
  return make(res, fun, shapeless, false, 0, NULL, 0);
}

int mlx_detail_compile(mlx_closure *res, const mlx_closure fun, uintptr_t fun_id, bool shapeless,
                       const uint64_t *constants, size_t constants_num) {
  return make(res, fun, shapeless, true, fun_id, constants, constants_num);
}

int mlx_detail_compile_clear_cache(void) {
  pthread_mutex_lock(&registry_mu);
  for (shared *s = registry; s; s = s->next) cm_compiled_clear(s->c);
  pthread_mutex_unlock(&registry_mu);
  return 0;
}

int mlx_detail_compile_erase(uintptr_t fun_id) {
  pthread_mutex_lock(&registry_mu);
  for (shared *s = registry; s; s = s->next)
    if (s->id == fun_id) cm_compiled_clear(s->c);
  pthread_mutex_unlock(&registry_mu);
  return 0;
}

int mlx_disable_compile(void) {
  cm_set_compile_mode(CM_COMPILE_DISABLED);
  return 0;
}

int mlx_enable_compile(void) {
  cm_set_compile_mode(CM_COMPILE_ENABLED);
  return 0;
}

int mlx_set_compile_mode(mlx_compile_mode mode) {
  if ((int)mode < MLX_COMPILE_MODE_DISABLED || (int)mode > MLX_COMPILE_MODE_ENABLED)
    return capi_errorf("[set_compile_mode] Invalid compile mode %d.", (int)mode);
  cm_set_compile_mode((cm_compile_mode)mode);
  return 0;
}
