/* Vector row conversions between float16/bfloat16 and float32 (F16C and
 * AVX2), which copy.c's row table takes when the CPU has them. */
#ifndef CMLX_BACKEND_CPU_CONVERT_HALF_H
#define CMLX_BACKEND_CPU_CONVERT_HALF_H

#include "backend/cpu/copy.h"

/* The vector row loop from st to dt, or NULL when there is none for the
 * pair or the CPU (or CMLX_UNARY_SIMD=0) rules it out. */
cm_convert_row_fn cm_convert_half_row(cm_dtype st, cm_dtype dt);

#endif
