/* The binary row loops a second time, built for AVX2 (256-bit vectors;
 * no FMA, so results are bit-identical to the baseline build).  Chosen at
 * run time by backend/cpu/binary.c when the CPU has AVX2; about twice as
 * fast as SSE2 on data that sits in cache.  On other compilers or
 * architectures this file is empty and the baseline tables serve. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))

#define CM_BINARY_AVX2_BUILD 1
#include "backend/cpu/binary_impl.h"

#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2")
#endif

/* the same sources, so the two builds can never disagree */
#include "backend/cpu/binary_arith.c"
#include "backend/cpu/binary_cmp.c"

#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

#else
typedef int cm_binary_avx2_unused; /* ISO C wants a declaration per file */
#endif
