/* The CPU backend's answers to mx.compile's fusion (core/backend.h,
 * cm_fusion_impl): what its generated kernels compute (fusion.c); the
 * kernels themselves are fused.h's. */
#ifndef CMLX_BACKEND_CPU_FUSION_H
#define CMLX_BACKEND_CPU_FUSION_H

#include "core/backend.h"

extern const cm_fusion_impl cm_cpu_fusion_impl;
const cm_fusion_impl *cm_cpu_fusion(void);

#endif
