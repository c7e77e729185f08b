/* The primitive descriptor type.  A primitive is one function table shared
 * by a family (Unary, Binary, Reduce, ...) plus a parameter block on the
 * node that carries the op code and settings.  The type lives in the core
 * because nodes own their parameter blocks: the core checks a block's size
 * when a node is built and runs its destructor when the graph is dropped.
 * The descriptors themselves are defined in src/primitives.
 *
 * Multi-output primitives (DivMod, custom functions, the factorisations)
 * build one node per output, tied as siblings (core/array.h): the kernel
 * runs once, for the first output, and fills every output; their
 * transforms use the *_multi rules, which see every output at once. */
#ifndef CMLX_CORE_PRIM_H
#define CMLX_CORE_PRIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/stream.h"

typedef struct cm_array cm_array;
/* A primitive's parameters: an opaque block that each primitive casts to
 * its own struct.  Its size is the descriptor's to declare (below). */
typedef struct cm_params cm_params;
typedef struct cm_prim cm_prim;
/* How export writes and reads the primitive (primitives/export_desc.h). */
typedef struct cm_export_desc cm_export_desc;

/* Fill out's data from its inputs (a multi-output kernel gets the first
 * output and fills cm_output(out, k) for every k).  Returns 0, or -1 with
 * the error set. */
typedef int (*cm_eval_fn)(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

/* Reverse mode: given the node out = prim(in) and the cotangent of out,
 * set grads[i] to the cotangent of in[argnums[i]] (a new reference; NULL
 * means zero).  Builds graph nodes only. */
typedef int (*cm_vjp_fn)(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                         cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                         cm_stream s);
/* Forward mode: tangents[i] is in[i]'s tangent (NULL: zero, and at least
 * one is non-NULL); set *tangent to out's tangent (a new reference). */
typedef int (*cm_jvp_fn)(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                         cm_array *const *tangents, cm_array **tangent, cm_stream s);
/* Batching: node is the traced node (its output shape and dtype are the
 * per-example ones); in[i] carries its batch on axis axes[i] (-1: not
 * batched, at least one is batched).  Set *out to the batched result (new
 * reference) and *out_axis to where its batch axis is. */
typedef int (*cm_vmap_fn)(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                          const int *axes, cm_array **out, int *out_axis, cm_stream s);

/* The same for a multi-output node: outs are its nout outputs (siblings,
 * in order).  vjp: cotans[k] is output k's cotangent (NULL: zero, at least
 * one is not).  jvp: set tangents_out[k] for every output.  vmap: set
 * outs_b[k] and out_axes[k] for every output. */
typedef int (*cm_vjp_multi_fn)(cm_array *const *outs, int nout, cm_array *const *in, int nin,
                               const cm_params *p, cm_array *const *cotans, const int *argnums,
                               int nargs, cm_array **grads, cm_stream s);
typedef int (*cm_jvp_multi_fn)(cm_array *const *outs, int nout, cm_array *const *in, int nin,
                               const cm_params *p, cm_array *const *tangents,
                               cm_array **tangents_out, cm_stream s);
typedef int (*cm_vmap_multi_fn)(cm_array *const *outs, int nout, cm_array *const *in, int nin,
                                const cm_params *p, const int *axes, cm_array **outs_b,
                                int *out_axes, cm_stream s);

/* Serialising a parameter block for export: bytes appended to a growable
 * buffer. */
typedef struct cm_bytes {
  unsigned char *data;
  size_t len, cap;
} cm_bytes;

struct cm_prim {
  const char *name; /* family name, e.g. "Unary" */
  /* Its .mlxfn names and state (primitives/export_desc.h); NULL: export
   * cannot write it (import reads only the names descriptors declare). */
  const cm_export_desc *export;
  /* Printed name of one node, e.g. "Exp"; NULL means use name. */
  const char *(*op_name)(const cm_params *p, size_t size);

  /* ---- the parameter block ----
   * params_size: bytes of the primitive's parameter struct (0: none).  A
   * variable-length block (a header followed by per-axis entries) sets
   * params_extent, which returns the whole block's size from its header.
   * Building a node with a block of any other size is an error.  Blocks
   * are compared and hashed byte by byte unless the hooks say otherwise,
   * so parameter structs have no padding (or zero it). */
  size_t params_size;
  /* The parameter struct's type name (CM_PARAMS_OF below sets both): the
   * typed accessors check it in debug builds, so a block is never read
   * as another family's struct of the same size. */
  const char *params_type;
  size_t (*params_extent)(const cm_params *p);
  /* Releases what the block owns (a custom function's state, a tape);
   * runs once, when the node's graph is dropped.  NULL: plain data. */
  void (*params_destroy)(cm_params *p);
  /* Takes one more reference on what the block owns, for another node
   * built from a copy of the same block (compile's replay of a traced
   * node); params_destroy then runs once per node.  NULL with a destructor:
   * the block cannot be shared, so compile refuses the primitive. */
  void (*params_share)(cm_params *p);
  bool (*params_equal)(const cm_params *a, const cm_params *b, size_t size);
  uint64_t (*params_hash)(const cm_params *p, size_t size);
  /* Export hooks.  NULL: plain data is saved as its bytes; a block with a
   * destructor (it holds pointers) cannot be saved unless it has hooks.
   * load builds a block (malloc'd, *size bytes) from what save wrote. */
  int (*params_save)(const cm_params *p, size_t size, cm_bytes *out);
  int (*params_load)(const unsigned char *data, size_t len, cm_params **p, size_t *size);

  /* The kernel moves or shares elements without reading their values
   * (views, reshapes, copies of one dtype): a bool array of raw bytes
   * (see cm_array.raw_bytes) stays one through it. */
  bool moves_bytes;

  /* Shapeless compile: the output shape node's primitive gives for inputs
   * of other shapes (node is the traced one; its shape was made for the
   * traced inputs).  Sets *ndim and shape (CM_MAX_DIMS entries); 0, or -1
   * with MLX's error when the inputs do not fit.  NULL: the primitive
   * cannot be replayed on other shapes. */
  int (*output_shape)(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                      int *ndim, int32_t *shape);

  /* A device-neutral evaluation, for nodes whose evaluation is not a
   * kernel (placeholders that report an error, custom functions that run
   * a graph); NULL for every primitive with kernels.  Kernels are not
   * named here: each backend registers its own (core/backend.h). */
  cm_eval_fn eval;
  /* Transform rules; NULL makes the transform fail with an error naming
   * the primitive.  A multi-output primitive sets the *_multi rules. */
  cm_vjp_fn vjp;
  cm_jvp_fn jvp;
  cm_vmap_fn vmap;
  cm_vjp_multi_fn vjp_multi;
  cm_jvp_multi_fn jvp_multi;
  cm_vmap_multi_fn vmap_multi;
};

/* In a descriptor: `CM_PARAMS_OF(cm_unary_params),` declares the block's
 * size and type for the typed accessors (primitives/primitive.h). */
#define CM_PARAMS_OF(T) .params_size = sizeof(T), .params_type = #T
/* A variable-length block: the header (the fields before member) is the
 * smallest block; params_extent gives a node's whole size. */
#define CM_PARAMS_OF_VAR(T, member) .params_size = offsetof(T, member), .params_type = #T

/* The typed accessors' checks (primitives/primitive.h, core/params.c):
 * report a failed check and abort; whether the descriptor declared type
 * as its block's (one that declared none is not checked). */
_Noreturn void cm_params_check_failed(const char *type, const char *prim, size_t have,
                                      size_t want);
bool cm_params_type_matches(const cm_prim *prim, const char *type);

static inline const char *cm_prim_name(const cm_prim *p, const cm_params *params, size_t size) {
  return p->op_name ? p->op_name(params, size) : p->name;
}

#endif
