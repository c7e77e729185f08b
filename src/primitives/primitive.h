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
 * Both check that the block is at least as large as the struct (a
 * variable-length block, with params_extent, is larger) in every build,
 * and, in debug builds, that the node's descriptor declared this struct
 * (CM_PARAMS_OF in the descriptor).  A failed check is a bug in cmlx, not
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

#define CM_PARAMS_ACCESSOR(T, fn)                                                            \
  static inline const T *fn(const cm_array *node) {                                          \
    return (const T *)cm_params_checked(node->params, node->params_size, sizeof(T),          \
                                        node->prim, #T);                                     \
  }                                                                                          \
  static inline const T *fn##_block(const cm_params *p, size_t size) {                       \
    return (const T *)cm_params_checked(p, size, sizeof(T), NULL, #T);                       \
  }

#endif
