/* The DivMod primitive: two outputs (quotient, remainder) of one node. */
#ifndef CMLX_PRIMITIVES_DIVMOD_H
#define CMLX_PRIMITIVES_DIVMOD_H

#include "primitives/primitive.h"

extern const cm_prim cm_prim_divmod;

#endif
