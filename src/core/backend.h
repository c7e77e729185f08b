/* The seam between the layers above and the backends.  A backend is a
 * folder under src/backend/ that, when the library starts, registers
 *
 *   - itself (cm_backend: its device type, whether a device is present,
 *     its allocator, how it turns a fused program into a kernel, and the
 *     element-wise reduction the distributed transports apply), and
 *   - a kernel for each primitive it supports (cm_kernel_register).
 *
 * Eval looks a node's kernel up by the device type of the node's stream;
 * a primitive with no kernel there is MLX's RuntimeError "<Name> has no
 * GPU implementation." (naming the primitive and the device), never a
 * silent fall-back to another device.
 * Nothing outside src/backend/ includes a backend's header: the layers
 * above reach a backend only through this table.
 *
 * The backends built into the library are listed in src/backend/backends.c
 * and registered on first use of the registry (cm_backends_init, called
 * by every lookup).  A test may register a backend of its own for a device
 * type no built-in backend claims (tests/core/test_backend_seam.c). */
#ifndef CMLX_CORE_BACKEND_H
#define CMLX_CORE_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/dtype.h"
#include "core/prim.h"
#include "core/stream.h"

#define CM_NUM_DEVICE_TYPES 2

/* ---- allocators ------------------------------------------------------
 * A device's raw memory.  The buffer cache, the counters (active, peak,
 * cache) and the limits are the core's (core/allocator.h), one instance
 * per device type; a backend supplies only where blocks come from and go
 * to, and the defaults of its limits.  The core binds a device type's
 * allocator when its memory is first used, and keeps that one for the
 * rest of the process (its blocks are freed through it), so a backend
 * registers before anything allocates on its device.  The callbacks may
 * run on any thread, and never under the core's locks. */
typedef struct cm_allocator_impl {
  const char *name;
  /* A block of at least size bytes that the host can read and write
   * (unified memory: an array computed on the device is readable by CPU
   * code), or NULL with no error set when there is no memory. */
  void *(*raw_alloc)(size_t size, void *ctx);
  /* Give back a block raw_alloc returned for the same size. */
  void (*raw_free)(void *ptr, size_t size, void *ctx);
  /* Bytes of memory the device has (0 or NULL: unknown), and the fraction
   * of it the memory limit defaults to (the CPU's 0.8 of RAM, MLX's 0.95
   * on CUDA); an unknown total gives an 8 GiB limit. */
  size_t (*total_memory)(void *ctx);
  double default_limit_fraction;
  /* The cache limit's default for a device of total bytes; NULL: the
   * memory limit (MLX's CUDA allocator may cache up to it). */
  size_t (*default_cache_limit)(size_t total, void *ctx);
  void *ctx;
} cm_allocator_impl;

/* ---- fused programs (mx.compile) -------------------------------------
 * transforms/fuse.c describes each fused region as a backend-neutral
 * program (cm_fused_program, primitives/compiled.h) and asks the backend
 * of the region's device what it can fuse; the backend turns a program
 * into a kernel when a Compiled node of it is first evaluated (generated
 * C on the CPU, NVRTC on CUDA), in the Compiled kernel it registers. */
typedef struct cm_fusion_impl {
  /* Whether a kernel of this backend can compute an op of this kind
   * (cm_fused_op_kind), op code and dtypes (in: the first argument's,
   * out: the result's).  CM_FUSED_REDUCE asks whether the kernel can
   * reduce the region's root values in its pass (op a cm_reduce_op, in
   * the root's dtype, out the reduction's). */
  bool (*supports)(int kind, int op, cm_dtype in, cm_dtype out);
  /* Whether such an op costs about nothing to compute again: fuse.c then
   * copies it into a reduction's region rather than storing its values
   * for the region to read back.  NULL: nothing is cheap. */
  bool (*cheap)(int kind, int op, cm_dtype in, cm_dtype out);
  /* Whether the backend can run fused programs at all right now; false
   * keeps regions unfused.  The CPU always can (a program whose kernel
   * cannot be built is interpreted, with the same bits). */
  bool (*available)(void);
} cm_fusion_impl;

/* ---- device info (mx.device_info, mlx_device_info_get) ---------------
 * One fact about a device: a string (static storage; NULL when unknown,
 * so each front door keeps its own fallback) or an integer. */
typedef struct cm_device_info_entry {
  const char *key;
  const char *str;
  int64_t num;
  bool is_string;
} cm_device_info_entry;
#define CM_DEVICE_INFO_MAX 16

/* ---- the backend ----------------------------------------------------- */
typedef struct cm_backend {
  const char *name; /* "cpu", "cuda" */
  cm_device_type device;
  /* Devices of this type present (0: the backend is built in but has no
   * device, as a CUDA build on a machine without a GPU). */
  int (*device_count)(void);
  const cm_allocator_impl *allocator;
  const cm_fusion_impl *fusion; /* NULL: regions are never fused here */
  /* acc[i] = op(acc[i], x[i]) for n elements of dt, on memory of this
   * device (op is a cm_reduce_op: sum, max or min; see
   * distributed/comm.h).  NULL: the transports cannot reduce here. */
  void (*reduce_into)(void *acc, const void *x, size_t n, cm_dtype dt, int op);
  /* Facts about device index (its name, architecture, memory): fills at
   * most CM_DEVICE_INFO_MAX entries and returns how many.  NULL: none. */
  int (*device_info)(int index, cm_device_info_entry *out);
  /* Block until the work this backend's kernels left queued on stream s
   * (a stream of this device) has finished on the device, so that the
   * host and other streams may read what it wrote.  0, or -1 with the
   * error a kernel met there.  Eval calls it before a node reads an input
   * made on another stream, before it hands an array back to its caller,
   * and in synchronize; it must be cheap when nothing is queued.  NULL:
   * kernels finish before they return (the CPU's). */
  int (*finish)(cm_stream s);
} cm_backend;

/* Register b (static storage, not copied) for b->device, replacing any
 * backend registered there before, and dropping that backend's kernels
 * (the new one registers its own).  0, or -1 with a ValueError. */
int cm_backend_register(const cm_backend *b);
/* The backend registered for device type t, or NULL. */
const cm_backend *cm_backend_for(cm_device_type t);

/* s's backend's finish (0 at once when it has none). */
int cm_backend_finish(cm_stream s);

/* d's facts through its backend (0 entries for a device that is not
 * available). */
int cm_device_info(cm_device d, cm_device_info_entry out[CM_DEVICE_INFO_MAX]);

/* ---- kernels --------------------------------------------------------- */
typedef struct cm_kernel_entry {
  const cm_prim *prim;
  cm_eval_fn eval;
} cm_kernel_entry;

/* Register fn as prim's kernel on device type t (replacing an earlier
 * one; fn NULL removes it).  Registering is thread-safe against lookups
 * running on other threads. */
int cm_kernel_register(cm_device_type t, const cm_prim *prim, cm_eval_fn fn);
/* The same for n entries of a table. */
int cm_kernels_register(cm_device_type t, const cm_kernel_entry *table, size_t n);
/* prim's kernel on device type t: the one registered there, else the
 * descriptor's device-neutral eval (prim->eval, for nodes whose
 * evaluation is not a kernel: placeholders, custom functions), else NULL. */
cm_eval_fn cm_kernel_lookup(cm_device_type t, const cm_prim *prim);
/* The kernel to run for a node of prim with parameters p on device type
 * t; NULL with MLX's RuntimeError "<Name> has no GPU implementation."
 * (or CPU) when there is none. */
cm_eval_fn cm_kernel_for(cm_device_type t, const cm_prim *prim, const cm_params *p);

/* Registers the built-in backends once (src/backend/backends.c); every
 * function above calls it first, so callers never need to. */
void cm_backends_init(void);

#endif
