/* Primitive descriptors (the type is core/prim.h).  A primitive is one
 * function table shared by a family (Unary, Binary, Reduce, ...) plus a
 * parameter block on the node that carries the op code and settings.
 * Per-op facts (the derivative rule, the printed name) live in the
 * family's tables; kernels live in the backends, which register them
 * (core/backend.h).
 *
 * Typed parameter access.  A block is read through the accessor its
 * struct declares, never through a cast:
 *
 *   CM_PARAMS_ACCESSOR(cm_unary_params, cm_unary_params_of)
 *
 * defines
 *
 *   const cm_unary_params *cm_unary_params_of(const cm_array *node);
 *   const cm_unary_params *cm_unary_params_of_block(const cm_params *p, size_t size);
 *
 * Both check that the block is at least as large as the struct (for a
 * variable-length block, CM_PARAMS_ACCESSOR_VAR below: its header) in
 * every build, and, in debug builds, that the node's descriptor declared
 * this struct (CM_PARAMS_OF in the descriptor).  A failed check is a bug in cmlx, not
 * bad input: it stops the process with a message rather than read past a
 * block. */
#ifndef CMLX_PRIMITIVES_PRIMITIVE_H
#define CMLX_PRIMITIVES_PRIMITIVE_H

#include "core/array.h"
#include "core/prim.h"

static inline const void *cm_params_checked(const cm_params *p, size_t have, size_t want,
                                            const cm_prim *prim, const char *type) {
  if (!p || have < want) cm_params_check_failed(type, prim ? prim->name : "?", have, want);
#ifndef NDEBUG
  if (prim && !cm_params_type_matches(prim, type))
    cm_params_check_failed(type, prim->name, have, want);
#endif
  return (const void *)p;
}

#define CM_PARAMS_ACCESSOR_MIN(T, fn, min)                                                       \
  static inline const T *fn(const cm_array *node) {                                              \
    return (const T *)cm_params_checked(node->params, node->params_size, (min), node->prim, #T); \
  }                                                                                              \
  static inline const T *fn##_block(const cm_params *p, size_t size) {                           \
    return (const T *)cm_params_checked(p, size, (min), NULL, #T);                               \
  }
#define CM_PARAMS_ACCESSOR(T, fn) CM_PARAMS_ACCESSOR_MIN(T, fn, sizeof(T))

/* A variable-length block (CM_PARAMS_OF_VAR in the descriptor): the
 * struct has room for every entry, but a node stores the header and only
 * the entries its header counts (params_extent, checked when the node is
 * built), so the accessor checks for the header: the fields before
 * member. */
#define CM_PARAMS_ACCESSOR_VAR(T, fn, member) CM_PARAMS_ACCESSOR_MIN(T, fn, offsetof(T, member))

#endif
