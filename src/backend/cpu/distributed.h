/* CPU kernels of the collective primitives (primitives/distributed.h): they
 * lay the data out flat and call the group's transport; and the
 * element-wise reduction the transports apply to received blocks. */
#ifndef CMLX_BACKEND_CPU_DISTRIBUTED_H
#define CMLX_BACKEND_CPU_DISTRIBUTED_H

#include "core/array.h"
#include "core/prim.h"
#include "distributed/comm.h"

int cm_cpu_all_reduce(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_all_gather(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_reduce_scatter(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_send(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_recv(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

/* acc[i] = op(acc[i], x[i]) for n elements of dt (MLX's SumOp / MaxOp /
 * MinOp: max keeps acc unless acc < x; float16 / bfloat16 computed in
 * float and rounded back; bool sums are logical or; complex compares
 * lexicographically). */
void cm_cpu_reduce_into(void *acc, const void *x, size_t n, cm_dtype dt, cm_reduce_op op);

#endif
