/* Fusion of a compile trace (MLX's compile_fuse): regions of elementwise
 * nodes (Unary, Binary, Select, AsType, and Broadcasts of the region's
 * inputs) become one Compiled node each.
 *
 * This pass only decides what fuses and describes each region as a
 * backend-neutral program (cm_fused_program, primitives/compiled.h),
 * which the node's parameters point at.  It includes no backend header
 * and builds no kernel: what a device can compute in a fused kernel it
 * asks the device's backend through the registry (core/backend.h: the
 * fusion hooks' supports, cheap and available), and the backend turns
 * the program into a kernel when the node is first evaluated.
 *
 * Regions grow from a root, visited from the last node of the order back,
 * up through the inputs of their members.  A node joins when it is
 * elementwise over the root's shape, on the root's stream, and each of its
 * consumers is a member or comes after the root in the order (a trace
 * output counts as last): then no path leaves the region and comes back,
 * and the Compiled node can stand at the root's place.  A member used
 * outside the region becomes one more output of the node (the outputs are
 * siblings).  A Broadcast joins only when all its consumers are members:
 * its input becomes a region input, read with zero strides.  One that is
 * also used outside (MLX's shared broadcast) stays for those uses, and the
 * region reads its input in the same way.  Regions of fewer than two
 * computing nodes, and all regions on a device whose backend cannot fuse,
 * stay as they are. */
#include "transforms/simplify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/backend.h"
#include "ops/common.h"
#include "primitives/binary.h"
#include "primitives/compiled.h"
#include "primitives/layout.h"
#include "primitives/reduce.h"
#include "primitives/ternary.h"
#include "primitives/unary.h"
#include "transforms/graph.h"
#include "transforms/ptrmap.h"

#define MAX_MEMBERS 256
#define MAX_INPUTS 48

typedef enum { NOT_FUSIBLE, COMPUTE, BCAST } fuse_kind;

typedef struct fuser {
  cm_tape *t;
  /* a shapeless trace: its broadcasts are dynamic (Broadcast of an input
   * against the others), no input is known to be a scalar, and the
   * Compiled node's shape is its inputs' common one */
  bool shapeless;
  cm_ptrmap pos;   /* node -> position + 1 */
  int *cons_start; /* CSR of consumers' positions */
  int *cons;
  bool *is_out;
  int *region; /* per position: region id, or -1 */
  int nregions;
  /* per region: the Compiled outputs, filed at the root's position */
  cm_array ***fused;
  int *nfused;
  int *root_of;
  /* per device type: its backend's fusion hooks, NULL where nothing fuses */
  const cm_fusion_impl *impl[CM_NUM_DEVICE_TYPES];
} fuser;

/* What each device's backend can fuse, asked once per pass. */
static void resolve_backends(fuser *f) {
  for (int t = 0; t < CM_NUM_DEVICE_TYPES; t++) {
    const cm_backend *b = cm_backend_for((cm_device_type)t);
    const cm_fusion_impl *impl = b ? b->fusion : NULL;
    f->impl[t] = impl && impl->supports && (!impl->available || impl->available()) ? impl : NULL;
  }
}

/* The fusion hooks of a's device, or NULL. */
static const cm_fusion_impl *impl_of(const fuser *f, const cm_array *a) {
  int t = (int)a->stream.device.type;
  return t >= 0 && t < CM_NUM_DEVICE_TYPES ? f->impl[t] : NULL;
}

static int position(const fuser *f, const cm_array *a) {
  void **s = cm_ptrmap_find(&f->pos, a);
  return s ? (int)(intptr_t)*s - 1 : -1;
}

static fuse_kind kind_of(const fuser *f, const cm_array *a, cm_fused_op *op) {
  const cm_fusion_impl *impl = impl_of(f, a);
  if (!impl || !cm_has_graph(a) || a->sib || a->raw_bytes) return NOT_FUSIBLE;
  for (int i = 0; i < a->nin; i++)
    if (a->in[i]->raw_bytes) return NOT_FUSIBLE;
  const cm_prim *p = a->prim;
  memset(op, 0, sizeof *op);
  op->dtype = a->dtype;
  op->nargs = a->nin;
  if (p == &cm_prim_broadcast && (f->shapeless ? a->nin > 1 : a->nin == 1))
    return cm_dtype_size(a->dtype) ? BCAST : NOT_FUSIBLE;
  if (p == &cm_prim_unary && a->nin == 1) {
    op->kind = CM_FUSED_UNARY;
    op->up = *cm_unary_params_of(a);
    op->op = (int)op->up.op;
  } else if (p == &cm_prim_binary && a->nin == 2 && a->in[0]->dtype == a->in[1]->dtype) {
    op->kind = CM_FUSED_BINARY;
    op->op = (int)cm_binary_params_of(a)->op;
  } else if (p == &cm_prim_select && a->nin == 3 && a->in[0]->dtype == CM_BOOL &&
             a->in[1]->dtype == a->dtype && a->in[2]->dtype == a->dtype) {
    op->kind = CM_FUSED_SELECT;
  } else if (p == &cm_prim_astype && a->nin == 1) {
    op->kind = CM_FUSED_CAST;
  } else {
    return NOT_FUSIBLE;
  }
  for (int i = 0; i < a->nin; i++)
    if (!cm_same_shape(a->in[i], a) || !impl->supports(op->kind, op->op, a->in[i]->dtype, a->dtype))
      return NOT_FUSIBLE;
  return COMPUTE;
}

static int build_index(fuser *f) {
  cm_tape *t = f->t;
  int n = (int)t->len;
  f->cons_start = calloc((size_t)n + 2, sizeof(int));
  f->is_out = calloc((size_t)n + 1, sizeof(bool));
  f->region = malloc(sizeof(int) * ((size_t)n + 1));
  if (!f->cons_start || !f->is_out || !f->region) return -1;
  for (int k = 0; k < n; k++) {
    f->region[k] = -1;
    void **s = cm_ptrmap_insert(&f->pos, t->order[k]);
    if (!s) return -1;
    *s = (void *)(intptr_t)(k + 1);
  }
  for (int j = 0; j < t->nout; j++) {
    int k = position(f, t->outputs[j]);
    if (k >= 0) f->is_out[k] = true;
  }
  /* consumers: a group's inputs counted once, at its first output */
  for (int pass = 0; pass < 2; pass++) {
    int *fill = NULL;
    if (pass == 1) {
      for (int k = 0; k < n; k++) f->cons_start[k + 1] += f->cons_start[k];
      f->cons = malloc(sizeof(int) * ((size_t)f->cons_start[n] + 1));
      fill = calloc((size_t)n + 1, sizeof(int));
      if (!f->cons || !fill) return free(fill), -1;
    }
    for (int k = 0; k < n; k++) {
      cm_array *a = t->order[k];
      if (!cm_has_graph(a) || (a->sib && a->position)) continue;
      for (int i = 0; i < a->nin; i++) {
        int x = position(f, a->in[i]);
        if (x < 0) continue;
        if (pass == 0) f->cons_start[x + 1]++;
        else f->cons[f->cons_start[x] + fill[x]++] = k;
      }
    }
    free(fill);
  }
  return 0;
}

/* Whether node x (position kx) may join region rid rooted at r. */
static bool may_join(const fuser *f, int kx, int rid, int r, fuse_kind kind) {
  /* shapeless: the root is the only output (the shape rule gives one
   * shape, and a member's own may be smaller on a replay) */
  bool inner = kind == BCAST || f->shapeless;
  if (f->region[kx] >= 0) return false;
  if (f->is_out[kx] && inner) return false;
  for (int c = f->cons_start[kx]; c < f->cons_start[kx + 1]; c++) {
    int k = f->cons[c];
    if (f->region[k] == rid) continue;
    if (inner || k <= r) return false;
  }
  return true;
}

/* Grow region rid from root r; members gets the positions, sorted. */
static int grow(fuser *f, int rid, int r, int *members) {
  cm_tape *t = f->t;
  cm_array *root = t->order[r];
  int n = 0, stack[MAX_MEMBERS], top = 0;
  members[n++] = r;
  f->region[r] = rid;
  stack[top++] = r;
  while (top) {
    cm_array *m = t->order[stack[--top]];
    /* a dynamic broadcast: its input may be computed in the region (at
     * the region's shape, which elementwise ops commute with) */
    int nin = m->prim == &cm_prim_broadcast ? 1 : m->nin;
    for (int i = 0; i < nin && n < MAX_MEMBERS; i++) {
      cm_array *x = m->in[i];
      int kx = position(f, x);
      cm_fused_op op;
      fuse_kind kind;
      if (kx < 0 || (kind = kind_of(f, x, &op)) == NOT_FUSIBLE || !cm_same_shape(x, root) ||
          !cm_stream_equal(x->stream, root->stream) || !may_join(f, kx, rid, r, kind))
        continue;
      f->region[kx] = rid;
      members[n++] = kx;
      if (kind == COMPUTE || f->shapeless) stack[top++] = kx;
    }
  }
  /* insertion sort: regions are small */
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && members[j - 1] > members[j]; j--) {
      int s = members[j];
      members[j] = members[j - 1];
      members[j - 1] = s;
    }
  return n;
}

/* The member index of array x in region rid (members[0..below)), or -1. */
static int member_of(const fuser *f, int rid, const int *members, int below, const cm_array *x) {
  int kx = position(f, x);
  for (int s = 0; kx >= 0 && f->region[kx] == rid && s < below; s++)
    if (members[s] == kx) return s;
  return -1;
}

/* The region's input slot for array x (added if new), or -1 when full. */
static int input_slot(cm_array **ins, int *nin, cm_array *x) {
  for (int i = 0; i < *nin; i++)
    if (ins[i] == x) return i;
  if (*nin == MAX_INPUTS) return -1;
  ins[*nin] = x;
  return (*nin)++;
}

/* A Broadcast outside the region that the region can read through: its
 * input, read with zero strides, stands for it. */
static bool shared_broadcast(const fuser *f, const cm_array *x, const cm_array *root) {
  cm_fused_op op;
  return !f->shapeless && kind_of(f, x, &op) == BCAST && cm_same_shape(x, root) &&
         cm_stream_equal(x->stream, root->stream);
}

static void append_label(char *label, size_t cap, const char *name) {
  size_t used = strlen(label);
  if (used + 1 < cap) snprintf(label + used, cap - used, "%s", name);
}

/* Point the uses of x outside region rid (consumers, regions fused
 * before, trace outputs) at y. */
static void redirect(fuser *f, int rid, int kx, cm_array *x, cm_array *y) {
  cm_tape *t = f->t;
  for (int c = f->cons_start[kx]; c < f->cons_start[kx + 1]; c++) {
    cm_array *a = t->order[f->cons[c]];
    if (f->region[f->cons[c]] == rid) continue;
    for (int q = 0; q < a->nin; q++)
      if (a->in[q] == x) cm_tape_set_input(a, q, y);
  }
  for (int r2 = 0; r2 < rid; r2++) /* regions fused before read x too */
    for (int q = 0; f->fused[r2] && q < f->fused[r2][0]->nin; q++)
      if (f->fused[r2][0]->in[q] == x) cm_tape_set_input(f->fused[r2][0], q, y);
  for (int j = 0; j < t->nout; j++)
    if (t->outputs[j] == x) {
      t->outputs[j] = cm_retain(y);
      cm_release(x);
    }
}

/* A Reduce node that can take the region rooted at its input into its
 * pass: sum, prod, max, min, all or any over trailing axes (of those
 * longer than one) of an elementwise node used by it alone. */
static bool reduce_fusible(const fuser *f, int r) {
  const cm_array *a = f->t->order[r];
  if (a->prim != &cm_prim_reduce || a->nin != 1 || !cm_has_graph(a) || a->sib) return false;
  const cm_reduce_params *rp = cm_reduce_params_of(a);
  const cm_array *x = a->in[0];
  int kx = position(f, x);
  cm_fused_op op;
  if (kx < 0 || f->region[kx] != -1 || f->is_out[kx] || kind_of(f, x, &op) != COMPUTE ||
      f->cons_start[kx + 1] - f->cons_start[kx] != 1 || !cm_stream_equal(x->stream, a->stream) ||
      !impl_of(f, a)->supports(CM_FUSED_REDUCE, (int)rp->op, x->dtype, a->dtype) || x->ndim > 63)
    return false;
  bool seen = false;
  for (int d = 0; d < x->ndim; d++) {
    if (x->shape[d] == 1) continue;
    bool red = (rp->axes >> d) & 1;
    if (!red && seen) return false;
    seen = seen || red;
  }
  return true;
}

/* Whether the inputs broadcast together give root's shape (a shapeless
 * Compiled node's shape rule on a replay). */
static bool inputs_give_shape(cm_array *const *ins, int nin, const cm_array *root) {
  int nd = 0;
  int32_t shape[CM_MAX_DIMS];
  for (int i = 0; i < nin; i++)
    if (cm_broadcast_shapes(nd, shape, ins[i]->ndim, ins[i]->shape, &nd, shape)) {
      cm_error_clear();
      return false;
    }
  return cm_shape_equal(nd, shape, root->ndim, root->shape);
}

/* Build region rid's program and node; 0 with f->fused[rid] set, or 0
 * with nothing done when the region is not worth it or cannot be built.
 * With kred >= 0, the region's root is the input of the Reduce node at
 * kred, which the node takes over (its last output). */
static int fuse_region(fuser *f, int rid, const int *members, int n, int kred) {
  cm_tape *t = f->t;
  cm_fused_op ops[MAX_MEMBERS];
  int opix[MAX_MEMBERS]; /* per member: its op index, or -1 (broadcasts) */
  cm_array *ins[MAX_INPUTS];
  cm_dtype in_dtype[MAX_INPUTS];
  bool in_scalar[MAX_INPUTS];
  int32_t outs[MAX_MEMBERS], red_op = 0;
  int nin = 0, nops = 0, nout = 0;
  const cm_array *root = t->order[members[n - 1]];
  cm_compiled_params params = {.label = "Compiled"};
  for (int i = 0; i < n; i++) {
    cm_array *a = t->order[members[i]];
    cm_fused_op op;
    opix[i] = -1;
    if (kind_of(f, a, &op) != COMPUTE) {
      append_label(params.label, sizeof params.label,
                   cm_prim_name(a->prim, a->params, a->params_size));
      /* shapeless: the arrays a dynamic broadcast is shaped by are inputs
       * too (the node's shape rule broadcasts its inputs together) */
      for (int q = 1; f->shapeless && q < a->nin; q++)
        if (member_of(f, rid, members, i, a->in[q]) < 0 && input_slot(ins, &nin, a->in[q]) < 0)
          return 0;
      continue;
    }
    for (int q = 0; q < a->nin; q++) {
      cm_array *x = a->in[q];
      int mi = member_of(f, rid, members, i, x), slot;
      /* through broadcasts in the region to what they read */
      while (mi >= 0 && opix[mi] < 0 && member_of(f, rid, members, mi, x->in[0]) >= 0)
        mi = member_of(f, rid, members, mi, x->in[0]), x = t->order[members[mi]];
      if (mi >= 0 && opix[mi] >= 0) {
        op.arg[q] = opix[mi] + MAX_INPUTS; /* renumbered below */
        continue;
      }
      bool shared = mi < 0 && position(f, x) >= 0 && shared_broadcast(f, x, root);
      int before = nin;
      slot = input_slot(ins, &nin, mi >= 0 || shared ? x->in[0] : x); /* a broadcast: its input */
      if (slot < 0) return 0;
      if (shared && nin > before)
        append_label(params.label, sizeof params.label,
                     cm_prim_name(x->prim, x->params, x->params_size));
      op.arg[q] = slot;
    }
    append_label(params.label, sizeof params.label,
                 cm_prim_name(a->prim, a->params, a->params_size));
    opix[i] = nops;
    ops[nops++] = op;
    bool escapes = f->is_out[members[i]];
    for (int c = f->cons_start[members[i]]; !escapes && c < f->cons_start[members[i] + 1]; c++)
      if (f->region[f->cons[c]] != rid) escapes = true;
    if (escapes) outs[nout++] = opix[i];
  }
  if (nops < (kred >= 0 ? 1 : 2) || !nout) return 0;
  const cm_array *red = kred >= 0 ? t->order[kred] : NULL;
  if (red) { /* the root is the last output; it is used by the reduction only */
    const cm_reduce_params *rp = cm_reduce_params_of(red);
    red_op = (int32_t)rp->op + 1;
    params.full_ndim = root->ndim;
    memcpy(params.full_shape, root->shape, sizeof(int32_t) * (size_t)root->ndim);
    append_label(params.label, sizeof params.label,
                 cm_prim_name(red->prim, red->params, red->params_size));
  }
  for (int j = 0; j < nops; j++)
    for (int q = 0; q < ops[j].nargs; q++)
      if (ops[j].arg[q] >= MAX_INPUTS) ops[j].arg[q] = ops[j].arg[q] - MAX_INPUTS + nin;
  bool in_rowconst[MAX_INPUTS];
  const cm_array *shape = root;
  for (int i = 0; i < nin; i++) {
    cm_array *x = ins[i];
    /* shapeless: only a constant (evaluated; placeholders have a
     * primitive) keeps its size */
    in_dtype[i] = x->dtype, in_scalar[i] = x->size == 1 && (!f->shapeless || !cm_has_graph(x));
    /* broadcast along the last axis: (n, 1) against (n, m) */
    in_rowconst[i] = !f->shapeless && !in_scalar[i] && shape->ndim &&
                     shape->shape[shape->ndim - 1] > 1 &&
                     (x->ndim == 0 || x->shape[x->ndim - 1] == 1) && x->ndim <= shape->ndim;
  }
  if (f->shapeless && !inputs_give_shape(ins, nin, root)) return 0;
  cm_fused_program prog = {.nin = nin,
                           .nops = nops,
                           .nout = nout,
                           .red_op = red_op,
                           .in_dtype = in_dtype,
                           .in_scalar = in_scalar,
                           .in_rowconst = in_rowconst,
                           .ops = ops,
                           .outs = outs};
  if (!(params.program = cm_fused_program_intern(&prog))) return -1;
  cm_array **res = calloc((size_t)nout, sizeof *res);
  if (!res) return cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
  int rc;
  if (nout == 1) {
    const cm_array *like = red ? red : root;
    res[0] = cm_node_new(like->dtype, like->ndim, like->shape, &cm_prim_compiled, &params,
                         sizeof params, ins, nin, root->stream);
    rc = res[0] ? 0 : -1;
  } else {
    cm_dtype dt[MAX_MEMBERS];
    int nd[MAX_MEMBERS];
    const int32_t *sh[MAX_MEMBERS];
    for (int o = 0; o < nout; o++)
      dt[o] = ops[outs[o]].dtype, nd[o] = root->ndim, sh[o] = root->shape;
    if (red) dt[nout - 1] = red->dtype, nd[nout - 1] = red->ndim, sh[nout - 1] = red->shape;
    rc = cm_node_new_multi(nout, dt, nd, sh, &cm_prim_compiled, &params, sizeof params, ins, nin,
                           root->stream, res);
  }
  if (rc) {
    free(res);
    return -1;
  }
  /* point the uses outside the region at the new outputs */
  for (int o = 0; o < nout; o++) {
    if (red && o == nout - 1) {
      redirect(f, rid, kred, t->order[kred], res[o]);
      f->region[kred] = rid; /* the Reduce node goes too */
      continue;
    }
    int mi = 0;
    while (opix[mi] != outs[o]) mi++;
    redirect(f, rid, members[mi], t->order[members[mi]], res[o]);
  }
  f->fused[rid] = res;
  f->nfused[rid] = nout;
  f->root_of[rid] = members[n - 1];
  return 0;
}

/* ---- private copies of cheap values feeding a reduction ------------------ */
#define MAX_CLONES 32

static bool cheap(const fuser *f, const cm_array *a, const cm_array *like) {
  cm_fused_op op;
  return kind_of(f, a, &op) == COMPUTE && cm_same_shape(a, like) &&
         cm_stream_equal(a->stream, like->stream) && impl_of(f, a)->cheap &&
         impl_of(f, a)->cheap(op.kind, op.op, a->in[0]->dtype, a->dtype);
}

static void free_index(fuser *f) {
  free(f->cons_start), free(f->cons), free(f->is_out), free(f->region);
  f->cons_start = f->cons = NULL, f->is_out = NULL, f->region = NULL;
  cm_ptrmap_free(&f->pos);
}

/* The inline-cheap elementwise nodes above a fusible reduction's input
 * (the input included) are copied for it when one of them is also used
 * elsewhere: the reduction's region then computes them in its own pass
 * and the other uses' regions recompute them, instead of one region
 * storing a full-size value for the other to read back (a layer norm's
 * x - mean, used by the variance and by the result).  Originals left
 * unused go.  Returns 0 or -1 (out of memory, the tape consistent). */
static int copy_reduction_inputs(cm_tape *t) {
  fuser f = {.t = t};
  int n = (int)t->len, rc = 0, nnew = 0, cap = 0;
  resolve_backends(&f);
  if (build_index(&f)) {
    free_index(&f);
    return cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
  }
  cm_array **copies = calloc((size_t)n + 1, sizeof *copies); /* per position, this reduction's */
  bool *dead = calloc((size_t)n + 1, sizeof *dead), *redir = calloc((size_t)n + 1, sizeof *redir);
  bool *kept = calloc((size_t)n + 1, sizeof *kept);    /* read by a copy: stays */
  cm_array **was = calloc((size_t)n + 1, sizeof *was); /* a reduction's input before */
  cm_array **made = NULL; /* the copies, in order, each inserted before before[i] */
  int *before = NULL;
  if (!copies || !dead || !redir || !kept || !was)
    rc = cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
  for (int r = 0; !rc && r < n; r++) {
    if (!reduce_fusible(&f, r)) continue;
    cm_array *x = t->order[r]->in[0];
    int members[MAX_CLONES], nm = 0, top = 0, stack[MAX_CLONES];
    if (!cheap(&f, x, x)) continue;
    members[nm++] = stack[top++] = position(&f, x);
    while (top) {
      cm_array *m = t->order[stack[--top]];
      for (int i = 0; i < m->nin && nm < MAX_CLONES; i++) {
        int k = position(&f, m->in[i]);
        bool seen = false;
        for (int j = 0; j < nm; j++) seen |= members[j] == k;
        if (k < 0 || seen || dead[k] || !cheap(&f, m->in[i], x)) continue;
        members[nm++] = stack[top++] = k;
      }
    }
    /* worth it when a member is used outside */
    bool shared = false;
    for (int j = 1; j < nm && !shared; j++) {
      int k = members[j];
      shared = f.is_out[k];
      for (int c = f.cons_start[k]; c < f.cons_start[k + 1] && !shared; c++) {
        bool in = redir[f.cons[c]] || dead[f.cons[c]];
        for (int q = 0; q < nm; q++) in |= members[q] == f.cons[c];
        shared = !in;
      }
    }
    if (!shared) continue;
    for (int i = 1; i < nm; i++) /* in order: inputs first */
      for (int j = i; j > 0 && members[j - 1] > members[j]; j--) {
        int sw = members[j];
        members[j] = members[j - 1];
        members[j - 1] = sw;
      }
    if (nnew + nm > cap) {
      cap = 2 * (nnew + nm);
      cm_array **m2 = realloc(made, sizeof *m2 * (size_t)cap);
      if (m2) made = m2;
      int *b2 = m2 ? realloc(before, sizeof *b2 * (size_t)cap) : NULL;
      if (b2) before = b2;
      if (!m2 || !b2) {
        rc = cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
        break;
      }
    }
    for (int j = 0; !rc && j < nm; j++) {
      cm_array *a = t->order[members[j]], *ins[3];
      for (int i = 0; i < a->nin; i++) {
        int k = position(&f, a->in[i]);
        ins[i] = k >= 0 && copies[k] ? copies[k] : a->in[i];
        if (k >= 0 && !copies[k]) kept[k] = true;
      }
      copies[members[j]] = cm_node_new(a->dtype, a->ndim, a->shape, a->prim, a->params,
                                       a->params_size, ins, a->nin, a->stream);
      if (!copies[members[j]]) rc = -1;
      else made[nnew] = copies[members[j]], before[nnew++] = r;
    }
    if (!rc) {
      cm_tape_set_input(t->order[r], 0, copies[members[nm - 1]]); /* x is the last */
      redir[r] = true;
      was[r] = x; /* kept alive by the order, for an undo */
      /* originals whose uses were all copied (x's: the reduction) go */
      for (int j = nm - 1; j >= 0; j--) {
        int k = members[j];
        bool gone = !f.is_out[k] && !kept[k];
        for (int c = f.cons_start[k]; c < f.cons_start[k + 1] && gone; c++)
          gone = redir[f.cons[c]] || dead[f.cons[c]];
        dead[k] = gone;
      }
    }
    for (int j = 0; j < nm; j++) copies[members[j]] = NULL;
  }
  /* the new order: copies before their reduction, dead originals gone
   * (after a failure too: reductions may read copies already) */
  cm_array **order = malloc(sizeof *order * ((size_t)(n + nnew) + 1));
  if (!order || !was) { /* undone: the reductions read their inputs again */
    rc = cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
    for (int r = 0; r < n; r++)
      if (was && redir[r]) cm_tape_set_input(t->order[r], 0, was[r]);
    for (int q = 0; q < nnew; q++) cm_release(made[q]);
    free(order);
  } else {
    size_t len = 0;
    for (int k = 0, q = 0; k < n; k++) {
      while (q < nnew && before[q] == k) order[len++] = made[q++];
      if (dead[k]) cm_release(t->order[k]);
      else order[len++] = t->order[k];
    }
    free(t->order);
    t->order = order;
    t->len = len;
  }
  free_index(&f);
  free(copies), free(dead), free(redir), free(kept), free(was), free(made), free(before);
  return rc;
}

static bool fusion_disabled(void) {
  const char *e = getenv("CMLX_COMPILE_FUSE");
  return e && !strcmp(e, "0");
}

int cm_fuse_tape(cm_tape *t, bool shapeless) {
  if (fusion_disabled() || t->len < 2) return 0;
  int n = (int)t->len, rc = 0;
  if (!shapeless && copy_reduction_inputs(t)) return -1;
  n = (int)t->len;
  fuser f = {.t = t, .shapeless = shapeless};
  resolve_backends(&f);
  f.fused = calloc((size_t)n, sizeof *f.fused);
  f.nfused = calloc((size_t)n, sizeof *f.nfused);
  f.root_of = calloc((size_t)n, sizeof *f.root_of);
  int *members = malloc(sizeof(int) * MAX_MEMBERS);
  if (!f.fused || !f.nfused || !f.root_of || !members || build_index(&f))
    rc = cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
  for (int r = n - 1; !rc && r >= 0; r--) {
    cm_fused_op op;
    int root = r, kred = -1;
    if (f.region[r] == -1 && !f.shapeless && reduce_fusible(&f, r))
      root = position(&f, t->order[r]->in[0]), kred = r;
    else if (f.region[r] >= 0 || kind_of(&f, t->order[r], &op) != COMPUTE) continue;
    int rid = f.nregions++;
    int m = grow(&f, rid, root, members);
    rc = fuse_region(&f, rid, members, m, kred);
    if (!rc && !f.fused[rid])
      for (int i = 0; i < m; i++) f.region[members[i]] = -2 - rid; /* tried, left alone */
  }
  /* the new order: fused regions' outputs at their roots, members gone */
  size_t len = 0, extra = 0;
  for (int r = 0; r < f.nregions; r++) extra += (size_t)f.nfused[r];
  cm_array **order = rc ? NULL : malloc(sizeof *order * (t->len + extra + 1));
  if (!rc && !order) rc = cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
  if (!rc) {
    int *at_root = malloc(sizeof(int) * (size_t)n);
    if (!at_root) rc = cm_error(CM_ERR_MEMORY, "[compile] Out of memory.");
    for (int k = 0; !rc && k < n; k++) at_root[k] = -1;
    for (int r = 0; !rc && r < f.nregions; r++)
      if (f.fused[r]) at_root[f.root_of[r]] = r;
    for (int k = 0; !rc && k < n; k++) {
      int rid = f.region[k];
      if (rid >= 0 && f.fused[rid]) {
        if (at_root[k] >= 0)
          for (int o = 0; o < f.nfused[rid]; o++) order[len++] = f.fused[rid][o];
        cm_release(t->order[k]);
      } else {
        order[len++] = t->order[k];
      }
    }
    free(at_root);
  }
  if (!rc) {
    free(t->order);
    t->order = order;
    t->len = len;
  } else {
    free(order);
    for (int r = 0; r < f.nregions; r++)
      for (int o = 0; f.fused[r] && o < f.nfused[r]; o++) cm_release(f.fused[r][o]);
  }
  for (int r = 0; r < n && f.fused; r++) free(f.fused[r]);
  free(f.fused), free(f.nfused), free(f.root_of), free(members);
  free(f.cons_start), free(f.cons), free(f.is_out), free(f.region);
  cm_ptrmap_free(&f.pos);
  return rc;
}
