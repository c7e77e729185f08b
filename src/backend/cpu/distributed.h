/* CPU kernels of the collective primitives (primitives/distributed.h): they
 * lay the data out flat and call the group's transport.  The element-wise
 * reduction the transports apply to received blocks is the CPU backend's
 * reduce_into (backend/cpu/kernels.h). */
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

#endif
