/* The CPU's fusion hooks (core/backend.h): transforms/fuse.c asks them
 * what may join a region on the CPU.  The answers are the generated
 * kernels' (jit_codegen.c) and the reductions' (reduce.c): an op fuses
 * when a row function or an exact C expression computes it, a reduction
 * when the Reduce kernel can take its input block by block. */
#include "backend/cpu/fusion.h"

#include "backend/cpu/fused.h"
#include "backend/cpu/reduce.h"

static bool cpu_supports(int kind, int op, cm_dtype in, cm_dtype out) {
  if (kind == CM_FUSED_REDUCE) return cm_reduce_rows_supported(op, in);
  return cm_fused_supports((cm_fused_op_kind)kind, op, in, out);
}

/* Inline ops are a few instructions in the kernel's loop; the others call
 * a row function (libm, division), worth storing instead. */
static bool cpu_cheap(int kind, int op, cm_dtype in, cm_dtype out) {
  return kind != CM_FUSED_REDUCE && cm_fused_inline((cm_fused_op_kind)kind, op, in, out);
}

/* Always: a program whose kernel cannot be built or loaded (no compiler,
 * a kernel missing from the disk cache) runs interpreted, with the same
 * bits (fused_interp.c), so a region never has to stay unfused here. */
static bool cpu_available(void) { return true; }

const cm_fusion_impl cm_cpu_fusion_impl = {
    .supports = cpu_supports,
    .cheap = cpu_cheap,
    .available = cpu_available,
};

const cm_fusion_impl *cm_cpu_fusion(void) { return &cm_cpu_fusion_impl; }
