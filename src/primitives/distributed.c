/* The collective primitives: descriptors and rules (see
 * primitives/distributed.h; MLX's mlx/distributed/primitives.cpp). */
#include "primitives/distributed.h"

#include "ops/distributed.h"
#include "ops/shape.h"

/* A block names a group of this process: it means nothing in a file. */
static int no_save(const cm_params *p, size_t size, cm_bytes *out) {
  (void)p, (void)size, (void)out;
  return cm_error(CM_ERR_VALUE, "[export] Distributed primitives cannot be exported.");
}
#define DIST_PARAMS CM_PARAMS_OF(cm_dist_params), .params_save = no_save

static cm_array *reduce_again(cm_array *x, const cm_dist_params *d, cm_stream s) {
  switch ((cm_reduce_op)d->op) {
  case CM_REDUCE_SUM: return cm_dist_all_sum(x, d->group, s);
  case CM_REDUCE_MAX: return cm_dist_all_max(x, d->group, s);
  case CM_REDUCE_MIN: return cm_dist_all_min(x, d->group, s);
  default: break;
  }
  return cm_error(CM_ERR_RUNTIME, "[AllReduce] Unknown reduction."), NULL;
}

static const char *all_reduce_name(const cm_params *p, size_t size) {
  switch ((cm_reduce_op)cm_dist_params_of_block(p, size)->op) {
  case CM_REDUCE_SUM: return "AllReduce(sum)";
  case CM_REDUCE_MAX: return "AllReduce(max)";
  case CM_REDUCE_MIN: return "AllReduce(min)";
  default: break;
  }
  return "AllReduce";
}

static int all_reduce_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                          cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                          cm_stream s) {
  (void)out, (void)in, (void)nin, (void)p, (void)argnums, (void)nargs, (void)s;
  grads[0] = cm_retain(cotan);
  return 0;
}

static int all_reduce_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                          cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)in, (void)nin, (void)p;
  *tangent = reduce_again(tangents[0], cm_dist_params_of(out), s);
  return *tangent ? 0 : -1;
}

static int all_reduce_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                           const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin, (void)p;
  *out = reduce_again(in[0], cm_dist_params_of(node), s);
  *out_axis = axes[0];
  return *out ? 0 : -1;
}

const cm_prim cm_prim_all_reduce = {
    .name = "AllReduce",
    .op_name = all_reduce_name,
    DIST_PARAMS,
    .vjp = all_reduce_vjp,
    .jvp = all_reduce_jvp,
    .vmap = all_reduce_vmap,
};

/* this rank's block of the gathered cotangent */
static int all_gather_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                          cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                          cm_stream s) {
  (void)nin, (void)p, (void)argnums, (void)nargs;
  const cm_array *x = in[0];
  int nd = cotan->ndim;
  int32_t start[CM_MAX_DIMS] = {0}, stop[CM_MAX_DIMS];
  for (int i = 0; i < nd; i++) stop[i] = cotan->shape[i];
  int32_t n0 = x->ndim ? x->shape[0] : 1;
  start[0] = cm_dist_params_of(out)->group->rank * n0;
  stop[0] = start[0] + n0;
  cm_array *part = cm_slice(cotan, nd, start, nd, stop, 0, NULL, s);
  if (part && x->ndim == 0) {
    int axis = 0;
    cm_array *sq = cm_squeeze(part, 1, &axis, s);
    cm_release(part);
    part = sq;
  }
  grads[0] = part;
  return part ? 0 : -1;
}

static int all_gather_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                          cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)in, (void)nin, (void)p;
  *tangent = cm_dist_all_gather(tangents[0], cm_dist_params_of(out)->group, s);
  return *tangent ? 0 : -1;
}

static int all_gather_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                           const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin, (void)p;
  *out = cm_dist_all_gather(in[0], cm_dist_params_of(node)->group, s);
  *out_axis = axes[0];
  return *out ? 0 : -1;
}

const cm_prim cm_prim_all_gather = {
    .name = "AllGather",
    DIST_PARAMS,
    .vjp = all_gather_vjp,
    .jvp = all_gather_jvp,
    .vmap = all_gather_vmap,
};

const cm_prim cm_prim_reduce_scatter = {
    .name = "ReduceScatter",
    DIST_PARAMS,
};

static int send_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                     const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin, (void)p;
  const cm_dist_params *d = cm_dist_params_of(node);
  *out = cm_dist_send(in[0], d->peer, d->group, s);
  *out_axis = axes[0];
  return *out ? 0 : -1;
}

const cm_prim cm_prim_send = {
    .name = "Send",
    DIST_PARAMS,
    .vmap = send_vmap,
};

const cm_prim cm_prim_recv = {
    .name = "Recv",
    DIST_PARAMS,
};
