/* What the CPU backend's descriptor (backend.c) is built from: the
 * registration of its kernels (kernels.c) and the functions it points to
 * that are not kernels of a primitive. */
#ifndef CMLX_BACKEND_CPU_KERNELS_H
#define CMLX_BACKEND_CPU_KERNELS_H

#include <stddef.h>

#include "core/dtype.h"

int cm_cpu_kernels_register(void);

/* The backend's reduce_into (core/backend.h), for the distributed
 * transports (backend/cpu/distributed.c): acc[i] = op(acc[i], x[i]) for n
 * elements of dt, op a cm_reduce_op of ops/reduce.h (MLX's SumOp / MaxOp /
 * MinOp: max keeps acc unless acc < x; float16 / bfloat16 computed in
 * float and rounded back; bool sums are logical or; complex compares
 * lexicographically). */
void cm_cpu_reduce_into(void *acc, const void *x, size_t n, cm_dtype dt, int op);

#endif
