/* cmlx: mlx-c compatible C API.  Half-precision scalar types, where the
 * compiler has them.  As in mlx-c, HAS_FLOAT16 / HAS_BFLOAT16 say whether
 * float16_t / bfloat16_t (and the array functions that use them) exist: on
 * Arm they are __fp16 / __bf16; elsewhere the compiler's _Float16 / __bf16
 * when it provides them. */
#ifndef MLX_HALF_H
#define MLX_HALF_H

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__ARM_FEATURE_FP16_SCALAR_ARITHMETIC)
#define HAS_FLOAT16
#include <arm_fp16.h>
typedef __fp16 float16_t;
#elif defined(__FLT16_MAX__) && !defined(__cplusplus)
#define HAS_FLOAT16
__extension__ typedef _Float16 float16_t;
#endif

#if defined(__ARM_FEATURE_BF16)
#define HAS_BFLOAT16
#include <arm_bf16.h>
typedef __bf16 bfloat16_t;
#elif defined(__BFLT16_MAX__) && !defined(__cplusplus)
#define HAS_BFLOAT16
typedef __bf16 bfloat16_t;
#endif

#ifdef __cplusplus
}
#endif

#endif
