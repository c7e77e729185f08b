/* Kernels compiled at run time with NVRTC.  A kernel family (elementwise,
 * reductions, fused regions) generates CUDA C for the dtypes and layout at
 * hand; this file compiles it for the device's architecture, loads it, and
 * keeps what it loaded, so each distinct source is compiled once per
 * process.  Every source is compiled after the prelude and op functions
 * (kernels/prelude.cuh, kernels/ops.cuh), which it may use. */
#ifndef CMLX_BACKEND_CUDA_JIT_H
#define CMLX_BACKEND_CUDA_JIT_H

#include <stddef.h>

/* The kernel named name (extern "C") of source, built for device: a
 * cudaKernel_t as a pointer for cm_cuda_launch.  NULL with a RuntimeError
 * (the compiler's log in the message when the source does not compile). */
const void *cm_cuda_jit_kernel(int device, const char *source, const char *name);

/* Compile source (after the prelude) for arch ("sm_90", or "compute_90"
 * for PTX) without loading it: what the CPU-side tests use to check that
 * every generated kernel compiles on a machine without a GPU.  *image and
 * *size receive the CUBIN or PTX (free with free()).  0, or -1 with a
 * RuntimeError carrying the log. */
int cm_cuda_jit_compile(const char *source, const char *arch, void **image, size_t *size);

/* The prelude every source is compiled after (kernels/prelude.cuh then
 * kernels/ops.cuh), embedded in the library at build time. */
extern const char cm_cuda_src_prelude[];
extern const char cm_cuda_src_ops[];

#endif
