/* The backends built into this library, registered once on first use of
 * the registry (core/backend.c).  This is the one file that names every
 * backend: a new backend adds its folder and one line here (under its
 * build option). */
#include "core/backend.h"

/* Each backend's entry point, defined in its folder. */
void cm_backend_cpu_register(void);
#ifdef CMLX_CUDA
void cm_backend_cuda_register(void);
#endif

void cm_backends_init(void) {
  cm_backend_cpu_register();
#ifdef CMLX_CUDA
  cm_backend_cuda_register();
#endif
}
