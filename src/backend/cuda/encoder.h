/* The command encoder of a GPU stream: how the CUDA backend's kernels
 * reach the device.  Each cmlx GPU stream has one encoder with one CUDA
 * stream.
 *
 * With CUDA graphs on (the default; MLX_USE_CUDA_GRAPHS=0 turns them off)
 * each launch becomes a kernel node of the graph being built, ordered only
 * after the nodes it depends on through the buffers it reads and writes
 * (graph_plan.h); a library call (cuBLASLt) is captured into a child graph
 * node.  Every MLX_MAX_OPS_PER_BUFFER nodes or MLX_MAX_MB_PER_BUFFER
 * megabytes (MLX's defaults per architecture: 20 nodes and 100 MB, 100 and
 * 1000 on Hopper and Blackwell), and whenever finish is called, the graph
 * is committed: instantiated, or, when a graph of the same topology ran
 * before, updated in place with cudaGraphExecUpdate (falling back to a
 * fresh instantiation when the update is refused), and launched.  Up to
 * MLX_CUDA_GRAPH_CACHE_SIZE (400) instantiated graphs are kept, least
 * recently used first out; a graph with a node other than a kernel is
 * never updated, so it is instantiated each time and not kept.
 *
 * Every buffer a queued kernel reads or writes, and every temporary a
 * kernel hands over (cm_cuda_hold), is kept alive until the work is known
 * to be complete, so the core's buffer cache never gives it to someone
 * else while the GPU still uses it. */
#ifndef CMLX_BACKEND_CUDA_ENCODER_H
#define CMLX_BACKEND_CUDA_ENCODER_H

#include <stdbool.h>
#include <stddef.h>

#include "backend/cuda/runtime.h"
#include "core/array.h"

typedef struct cm_cuda_encoder cm_cuda_encoder;

/* One kernel launch.  func is a kernel from cm_cuda_jit (a cudaKernel_t
 * cast to a pointer); args point at the argument values (copied at
 * launch).  reads and writes are the arrays whose buffers the kernel
 * touches (an array may appear in both). */
typedef struct cm_cuda_launch {
  const void *func;
  unsigned grid[3], block[3];
  size_t shared_bytes;
  void **args;
  cm_array *const *reads;
  int nreads;
  cm_array *const *writes;
  int nwrites;
} cm_cuda_launch;

/* The encoder of GPU stream s (made on first use), or NULL with an error. */
cm_cuda_encoder *cm_cuda_encoder_of(cm_stream s);

/* Queue a kernel on s.  0, or -1 with a RuntimeError. */
int cm_cuda_launch_kernel(cm_stream s, const cm_cuda_launch *l);

/* Queue work that a library issues on a CUDA stream (fn(stream, ctx)
 * returns 0 or -1 with an error): run on the encoder's stream, captured
 * into a child graph when graphs are on. */
int cm_cuda_library_call(cm_stream s, int (*fn)(cudaStream_t stream, void *ctx), void *ctx,
                         cm_array *const *reads, int nreads, cm_array *const *writes,
                         int nwrites);

/* Keep b (a reference is taken) until the work queued on s so far is
 * complete: a kernel's temporaries. */
int cm_cuda_hold(cm_stream s, cm_buffer *b);

/* A pointer the GPU can read for a's element 0.  An array whose buffer is
 * not the GPU allocator's (host memory a NumPy array or a C caller
 * lent) is first copied into GPU-visible memory, held until the work
 * queued on s completes.  NULL with an error when it cannot be. */
const void *cm_cuda_input_ptr(cm_stream s, const cm_array *a);

/* Commit what is queued on s and wait for it (the backend's finish). */
int cm_cuda_finish(cm_stream s);

/* The commit thresholds for a device of compute capability major.minor
 * (MLX's table, then MLX_MAX_OPS_PER_BUFFER / MLX_MAX_MB_PER_BUFFER). */
void cm_cuda_graph_limits(int major, int minor, int *max_ops, size_t *max_mb);

#endif
