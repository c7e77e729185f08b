/* mx.hadamard_transform (MLX 0.32's mlx/ops.cpp): the Walsh-Hadamard
 * transform of the last axis, times scale (default 1/sqrt(n)), for
 * n = m * 2^k with m in {1, 12, 20, 28} and k <= 26 (MLX's matrices for
 * m > 1 are Sloane's, kron(H_m, H_2^k)).
 *
 * dtypes: float32, float16 and bfloat16 keep theirs (half types round
 * after every butterfly stage, as MLX's kernel); other integer, bool and
 * complex inputs become float32 (complex: the real part); float64 is
 * MLX's ValueError "[hadamard] Unsupported type.".  A last axis of 1
 * (and a 0-d array) is a itself when scale is 1, else a * scale.  Errors
 * (ValueError): "[hadamard_transform] Does not support empty arrays.",
 * "[hadamard] Only supports n = m*2^k where m in (1, 12, 20, 28)." (also
 * for sizes MLX accepts but computes wrongly, such as 36 = 12 * 3),
 * "[hadamard] Only supports n = m*2^k where k <= 26".  MLX raises the
 * size and dtype errors when evaluating; cmlx when building the node. */
#ifndef CMLX_OPS_HADAMARD_H
#define CMLX_OPS_HADAMARD_H

#include <stdbool.h>

#include "ops/common.h"

cm_array *cm_hadamard_transform(cm_array *a, bool has_scale, float scale, cm_stream s);

#endif
