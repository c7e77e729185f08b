/* mlx/c/fast.h's Metal kernels over ops/metal_kernel.h, the core that
 * mx.fast.metal_kernel calls: the kernel keeps its name, argument names,
 * source, header and flags; the configuration its output shapes and
 * dtypes, grid, threadgroup, template arguments, init value and verbose
 * flag.  Applying it is MLX's CPU build: "[metal_kernel] No Metal
 * back-end.", except while mlx_export_function / an exporter traces a
 * closure, where the call is recorded as MLX's CustomKernel node (as from
 * Python) on MLX's placeholder GPU stream.  The stream may be empty (no
 * stream given: the placeholder); a CPU stream is MLX's "[metal_kernel]
 * Only supports the GPU.". */
#include <stdlib.h>
#include <string.h>

#include "capi/capi.h"
#include "ops/metal_kernel.h"

typedef struct mk_config {
  int nout, ntargs;
  int *ndims;
  int32_t *shapes; /* CM_MAX_DIMS per output */
  cm_dtype *dtypes;
  int grid[3], tg[3];
  cm_template_arg *targs; /* names owned */
  bool has_init, verbose;
  float init;
} mk_config;

typedef struct mk_kernel {
  char *name, *source, *header;
  char **inames, **onames;
  int nin, nout;
  bool ensure_row_contiguous, atomic_outputs;
} mk_kernel;

static int oom(const char *fn) { return capi_errorf("[%s] Out of memory.", fn); }

/* Both handles are cells (handle.h) holding an mk_config / mk_kernel. */
#define T_CFG CAPI_H_FAST_KERNEL_CONFIG
#define T_KER CAPI_H_FAST_KERNEL

static mk_config *config_of(const char *fn, mlx_fast_metal_kernel_config c) {
  if (!c.ctx) capi_errorf("[%s] The kernel configuration is empty.", fn);
  return !c.ctx || capi_check(fn, c.ctx, T_CFG) ? NULL : capi_obj(c.ctx);
}

static void config_destroy(mk_config *c);

mlx_fast_metal_kernel_config mlx_fast_metal_kernel_config_new(void) {
  mk_config *c = calloc(1, sizeof *c);
  if (!c) {
    oom("mlx_fast_metal_kernel_config_new");
    return (mlx_fast_metal_kernel_config){NULL};
  }
  c->grid[0] = c->grid[1] = c->grid[2] = c->tg[0] = c->tg[1] = c->tg[2] = 1;
  void *cell = capi_cell_new(T_CFG, c);
  if (!cell) free(c);
  return (mlx_fast_metal_kernel_config){cell};
}

void mlx_fast_metal_kernel_config_free(mlx_fast_metal_kernel_config cls) {
  void *c;
  if (!capi_cell_free("mlx_fast_metal_kernel_config_free", cls.ctx, T_CFG, &c))
    config_destroy(c);
}

static void config_destroy(mk_config *c) {
  if (!c) return;
  for (int i = 0; i < c->ntargs; i++) free((char *)c->targs[i].name);
  free(c->targs), free(c->ndims), free(c->shapes), free(c->dtypes);
  free(c);
}

int mlx_fast_metal_kernel_config_add_output_arg(mlx_fast_metal_kernel_config cls, const int *shape,
                                                size_t size, mlx_dtype dtype) {
  const char *fn = "mlx_fast_metal_kernel_config_add_output_arg";
  mk_config *c = config_of(fn, cls);
  int nd;
  if (!c || capi_shape(fn, shape, size, &nd) || capi_dtype(fn, dtype)) return 1;
  for (int i = 0; i < nd; i++)
    if (shape[i] < 0) return capi_errorf("[%s] Negative dimension %d.", fn, shape[i]);
  int n = c->nout + 1;
  int *ndims = realloc(c->ndims, sizeof *ndims * (size_t)n);
  if (ndims) c->ndims = ndims;
  int32_t *shapes = ndims ? realloc(c->shapes, sizeof *shapes * CM_MAX_DIMS * (size_t)n) : NULL;
  if (shapes) c->shapes = shapes;
  cm_dtype *dtypes = shapes ? realloc(c->dtypes, sizeof *dtypes * (size_t)n) : NULL;
  if (!dtypes) return oom(fn);
  c->dtypes = dtypes;
  c->ndims[c->nout] = nd, c->dtypes[c->nout] = (cm_dtype)dtype;
  for (int i = 0; i < nd; i++) c->shapes[(size_t)c->nout * CM_MAX_DIMS + i] = shape[i];
  c->nout = n;
  return 0;
}

int mlx_fast_metal_kernel_config_set_grid(mlx_fast_metal_kernel_config cls, int grid1, int grid2,
                                          int grid3) {
  mk_config *c = config_of("mlx_fast_metal_kernel_config_set_grid", cls);
  if (!c) return 1;
  c->grid[0] = grid1, c->grid[1] = grid2, c->grid[2] = grid3;
  return 0;
}

int mlx_fast_metal_kernel_config_set_thread_group(mlx_fast_metal_kernel_config cls, int thread1,
                                                  int thread2, int thread3) {
  mk_config *c = config_of("mlx_fast_metal_kernel_config_set_thread_group", cls);
  if (!c) return 1;
  c->tg[0] = thread1, c->tg[1] = thread2, c->tg[2] = thread3;
  return 0;
}

int mlx_fast_metal_kernel_config_set_init_value(mlx_fast_metal_kernel_config cls, float value) {
  mk_config *c = config_of("mlx_fast_metal_kernel_config_set_init_value", cls);
  if (!c) return 1;
  c->has_init = true, c->init = value;
  return 0;
}

int mlx_fast_metal_kernel_config_set_verbose(mlx_fast_metal_kernel_config cls, bool verbose) {
  mk_config *c = config_of("mlx_fast_metal_kernel_config_set_verbose", cls);
  if (!c) return 1;
  c->verbose = verbose;
  return 0;
}

static int add_template(const char *fn, mlx_fast_metal_kernel_config cls, const char *name,
                        cm_template_kind kind, int value) {
  mk_config *c = config_of(fn, cls);
  if (!c) return 1;
  if (!name) return capi_errorf("[%s] name is NULL.", fn);
  cm_template_arg *t = realloc(c->targs, sizeof *t * (size_t)(c->ntargs + 1));
  if (!t) return oom(fn);
  c->targs = t;
  char *copy = strdup(name);
  if (!copy) return oom(fn);
  t[c->ntargs++] = (cm_template_arg){copy, kind, value};
  return 0;
}

int mlx_fast_metal_kernel_config_add_template_arg_dtype(mlx_fast_metal_kernel_config cls,
                                                        const char *name, mlx_dtype dtype) {
  const char *fn = "mlx_fast_metal_kernel_config_add_template_arg_dtype";
  if (capi_dtype(fn, dtype)) return 1;
  return add_template(fn, cls, name, CM_TEMPLATE_DTYPE, (int)dtype);
}

int mlx_fast_metal_kernel_config_add_template_arg_int(mlx_fast_metal_kernel_config cls,
                                                      const char *name, int value) {
  return add_template("mlx_fast_metal_kernel_config_add_template_arg_int", cls, name,
                      CM_TEMPLATE_INT, value);
}

int mlx_fast_metal_kernel_config_add_template_arg_bool(mlx_fast_metal_kernel_config cls,
                                                       const char *name, bool value) {
  return add_template("mlx_fast_metal_kernel_config_add_template_arg_bool", cls, name,
                      CM_TEMPLATE_BOOL, value);
}

static void names_free(char **v, int n) {
  for (int i = 0; v && i < n; i++) free(v[i]);
  free(v);
}

/* A copy of a vector of strings (n entries). */
static char **names_copy(const char *fn, mlx_vector_string vs, int *n) {
  *n = 0;
  if (capi_check(fn, vs.ctx, CAPI_H_VECTOR_STRING)) return NULL;
  size_t len = vs.ctx ? mlx_vector_string_size(vs) : 0;
  char **v = calloc(len + 1, sizeof *v);
  if (!v) return oom(fn), NULL;
  for (size_t i = 0; i < len; i++) {
    char *s = NULL;
    if (mlx_vector_string_get(&s, vs, i) || !s || !(v[i] = strdup(s))) {
      names_free(v, (int)i);
      return oom(fn), NULL;
    }
  }
  *n = (int)len;
  return v;
}

static void kernel_destroy(mk_kernel *k) {
  if (!k) return;
  free(k->name), free(k->source), free(k->header);
  names_free(k->inames, k->nin), names_free(k->onames, k->nout);
  free(k);
}

void mlx_fast_metal_kernel_free(mlx_fast_metal_kernel cls) {
  void *k;
  if (!capi_cell_free("mlx_fast_metal_kernel_free", cls.ctx, T_KER, &k)) kernel_destroy(k);
}

mlx_fast_metal_kernel mlx_fast_metal_kernel_new(const char *name,
                                                const mlx_vector_string input_names,
                                                const mlx_vector_string output_names,
                                                const char *source, const char *header,
                                                bool ensure_row_contiguous, bool atomic_outputs) {
  const char *fn = "mlx_fast_metal_kernel_new";
  if (!name || !source)
    return capi_errorf("[%s] name or source is NULL.", fn), (mlx_fast_metal_kernel){0};
  mk_kernel *k = calloc(1, sizeof *k);
  if (!k) return oom(fn), (mlx_fast_metal_kernel){0};
  k->ensure_row_contiguous = ensure_row_contiguous, k->atomic_outputs = atomic_outputs;
  k->name = strdup(name), k->source = strdup(source), k->header = strdup(header ? header : "");
  if (k->name && k->source && k->header && (k->inames = names_copy(fn, input_names, &k->nin)) &&
      (k->onames = names_copy(fn, output_names, &k->nout))) {
    void *cell = capi_cell_new(T_KER, k);
    if (!cell) kernel_destroy(k);
    return (mlx_fast_metal_kernel){cell};
  }
  if (!k->name || !k->source || !k->header) oom(fn);
  kernel_destroy(k);
  return (mlx_fast_metal_kernel){0};
}

int mlx_fast_metal_kernel_apply(mlx_vector_array *outputs, mlx_fast_metal_kernel cls,
                                const mlx_vector_array inputs,
                                const mlx_fast_metal_kernel_config config,
                                const mlx_stream stream) {
  const char *fn = "mlx_fast_metal_kernel_apply";
  if (capi_check(fn, cls.ctx, T_KER)) return 1;
  mk_kernel *k = capi_obj(cls.ctx);
  mk_config *c = config_of(fn, config);
  if (!c || capi_out(fn, outputs)) return 1;
  if (!k) return capi_errorf("[%s] The kernel is empty.", fn);
  size_t nin;
  cm_array *const *in;
  if (capi_vector_arrays(fn, inputs, &in, &nin)) return 1;
  cm_metal_kernel_def def = {k->name,
                             k->source,
                             k->header,
                             (const char *const *)k->inames,
                             k->nin,
                             (const char *const *)k->onames,
                             k->nout,
                             k->ensure_row_contiguous,
                             k->atomic_outputs,
                             0};
  const int32_t **sh = malloc(sizeof *sh * (size_t)(c->nout + 1));
  cm_array **outs = calloc((size_t)c->nout + 1, sizeof *outs);
  int rc = sh && outs ? 0 : oom(fn);
  for (int i = 0; !rc && i < c->nout; i++) sh[i] = c->shapes + (size_t)i * CM_MAX_DIMS;
  if (!rc && cm_fast_metal_kernel(&def, in, (int)nin, c->ndims, sh, c->dtypes, c->nout, c->grid,
                                  c->tg, c->targs, c->ntargs, c->has_init, c->init, c->verbose,
                                  capi_stream(stream), outs))
    rc = capi_fail();
  if (!rc) rc = capi_vector_set_arrays(outputs, outs, (size_t)c->nout);
  for (int i = 0; outs && i < c->nout; i++) cm_release(outs[i]);
  free(sh), free(outs);
  return rc;
}
