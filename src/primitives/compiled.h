/* Compiled: one node computing a fused region of elementwise nodes
 * (transforms/fuse.c builds them inside mx.compile).  Its outputs (one per
 * region value used outside the region) are siblings.  It has no
 * transform rules: transforms of a compiled function trace the function
 * itself, so they never meet a Compiled node (as in MLX).
 *
 * The split between the layers:
 *   - transforms/fuse.c decides what fuses and describes each region as a
 *     cm_fused_program (below): plain, backend-neutral data.  What a
 *     device can fuse it asks the device's backend through the registry
 *     (core/backend.h, cm_fusion_impl); it never builds a kernel.
 *   - the program is interned here (one process-wide copy per content), so
 *     the node's parameter block holds just a pointer to it, and nodes of
 *     equal programs compare equal byte by byte (compile merges them).
 *   - the backend of the node's device turns the program into a kernel
 *     when a node of it is first evaluated, and keeps the kernel for every
 *     later node of the same program (the CPU: backend/cpu/fused.c). */
#ifndef CMLX_PRIMITIVES_COMPILED_H
#define CMLX_PRIMITIVES_COMPILED_H

#include <stdbool.h>
#include <stdint.h>

#include "primitives/primitive.h"
#include "primitives/unary.h"

/* What an op of a program computes.  CM_FUSED_REDUCE is never an op of
 * the list: it is the kind a backend's supports() hook is asked about for
 * the program's fused reduction (op a cm_reduce_op). */
typedef enum cm_fused_op_kind {
  CM_FUSED_UNARY,  /* op: cm_unary_op, parameters in up */
  CM_FUSED_BINARY, /* op: cm_binary_op; both arguments of one dtype */
  CM_FUSED_SELECT, /* arg[0] ? arg[1] : arg[2], arg[0] bool */
  CM_FUSED_CAST,   /* arg[0] converted to dtype */
  CM_FUSED_REDUCE
} cm_fused_op_kind;

/* One node of a region.  arg[i] names a value: below nin an input of the
 * program, else the result of op arg[i] - nin (an earlier op).  Plain
 * 32-bit fields, no padding: programs are compared byte by byte. */
typedef struct cm_fused_op {
  int32_t kind; /* cm_fused_op_kind */
  int32_t op;
  int32_t dtype; /* the result's cm_dtype */
  int32_t nargs;
  int32_t arg[3];
  cm_unary_params up; /* UNARY: the node's parameters (zeroed otherwise) */
} cm_fused_op;

/* A fused region.  Shapes are not part of it: one program (and one
 * kernel) serves every shape, a shapeless function's replays included. */
typedef struct cm_fused_program {
  int32_t nin, nops, nout;
  /* The fused reduction: CM_REDUCE_<op> + 1 (0: none).  The last output
   * is then not op outs[nout - 1]'s values but their reduction over the
   * trailing axes of the node's full shape (cm_compiled_params), in the
   * same pass; its dtype is the node's last output's. */
  int32_t red_op;
  const cm_dtype *in_dtype;
  /* an input of one element, read once (a broadcast scalar or constant) */
  const bool *in_scalar;
  /* broadcast along the region's last axis ((n, 1) against (n, m)):
   * constant along each row of a row-wise walk */
  const bool *in_rowconst;
  const cm_fused_op *ops;
  const int32_t *outs; /* the op index of each output */
  uint64_t hash;       /* of the content; set by cm_fused_program_intern */
} cm_fused_program;

/* The dtype of value v of p (an input's, or an op's result). */
static inline cm_dtype cm_fused_value_dtype(const cm_fused_program *p, int v) {
  return v < p->nin ? p->in_dtype[v] : (cm_dtype)p->ops[v - p->nin].dtype;
}

/* The process-wide copy of p (deep, read-only, never freed): equal
 * programs, wherever they were built, give the same pointer.  p's arrays
 * are only read; its hash field is ignored.  NULL with a MemoryError, or
 * with a ValueError when p is not well formed (an argument naming a later
 * value, an output out of range). */
const cm_fused_program *cm_fused_program_intern(const cm_fused_program *p);

typedef struct cm_compiled_params {
  const cm_fused_program *program; /* interned */
  /* MLX's name for the node: "Compiled" then the region's primitives in
   * order ("CompiledBroadcastMultiplyAdd"), cut short when longer */
  char label[160];
  /* With a fused reduction: the shape of the reduction's input (the
   * region's root), whose trailing axes are reduced.  Zero otherwise. */
  int32_t full_ndim;
  int32_t reserved;
  int32_t full_shape[CM_MAX_DIMS];
} cm_compiled_params;

CM_PARAMS_ACCESSOR(cm_compiled_params, cm_compiled_params_of)

extern const cm_prim cm_prim_compiled;

#endif
