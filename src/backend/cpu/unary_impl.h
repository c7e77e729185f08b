/* Internal interface between the unary driver (unary.c), the scalar row
 * loops (unary_rows.c) and the vectorised float32 loops (unary_simd.c). */
#ifndef CMLX_BACKEND_CPU_UNARY_IMPL_H
#define CMLX_BACKEND_CPU_UNARY_IMPL_H

#include <stdint.h>

#include "primitives/unary.h"

/* One strided row: n elements, dst/src steps in elements.  The loops have a
 * separate unit-stride branch so the common case compiles tight. */
typedef void (*cm_unary_row_fn)(void *dst, int64_t ds, const void *src, int64_t ss, int64_t n,
                                const cm_unary_params *p);

/* The row loop of op over input dtype in (the output dtype follows from
 * the op, as ops/unary.c decides); NULL when the pair has no kernel. */
cm_unary_row_fn cm_unary_row(cm_unary_op op, cm_dtype in);

/* A contiguous loop (unit strides) for op over dtype in that uses the CPU's
 * vector units when this machine has them; NULL when there is none, and the
 * caller uses the row loop. */
cm_unary_row_fn cm_unary_simd(cm_unary_op op, cm_dtype in);

#endif
