/* MLX's detail::in_export_tracing: whether the calling thread is tracing a
 * function for export (transforms/export.c sets it around each trace).
 * It lives in the core so that ops (ops/metal_kernel.c) can ask. */
#ifndef CMLX_CORE_EXPORT_TRACING_H
#define CMLX_CORE_EXPORT_TRACING_H

#include <stdbool.h>

void cm_export_tracing_push(void);
void cm_export_tracing_pop(void);
bool cm_in_export_tracing(void);

#endif
