/* Registration of the CPU backend's kernels (kernels.c). */
#ifndef CMLX_BACKEND_CPU_KERNELS_H
#define CMLX_BACKEND_CPU_KERNELS_H

int cm_cpu_kernels_register(void);

#endif
