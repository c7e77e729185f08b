/* The CPU backend's kernels: one (primitive, kernel) pair per primitive
 * with a CPU kernel, registered when the library starts. */
#include "backend/cpu/kernels.h"

#include "core/backend.h"

static const cm_kernel_entry cpu_kernels[] = {
    {0, 0}, /* placeholder: the table is being moved here from the descriptors */
};

int cm_cpu_kernels_register(void) {
  return cm_kernels_register(CM_CPU, cpu_kernels + 1,
                             sizeof cpu_kernels / sizeof cpu_kernels[0] - 1);
}
