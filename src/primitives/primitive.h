/* Primitive descriptors (the type is core/prim.h).  A primitive is one
 * function table shared by a family (Unary, Binary, Reduce, ...) plus a
 * parameter block on the node that carries the op code and settings.
 * Per-op facts (the kernel, the derivative rule, the printed name) live in
 * the family's tables. */
#ifndef CMLX_PRIMITIVES_PRIMITIVE_H
#define CMLX_PRIMITIVES_PRIMITIVE_H

#include "core/array.h"
#include "core/prim.h"

#endif
