/* The host CPU: which instruction sets the kernels may use and what the
 * device-info functions report.  Everything is found once per process, on
 * first use, from any thread; the answers never change afterwards, so the
 * kernels may ask on every call.  Kernels choose AVX2 loops at run time
 * (they carry target attributes), which is why this is a run-time check
 * and not a compile-time one. */
#ifndef CMLX_BACKEND_CPU_CPU_FEATURES_H
#define CMLX_BACKEND_CPU_CPU_FEATURES_H

#include <stdbool.h>

/* Usable instruction sets: the CPU has them and the OS saves their
 * registers.  All false off x86-64 or with a compiler lacking the builtins. */
typedef struct cm_cpu_flags {
  bool avx, avx2, fma;
  bool f16c;     /* needs AVX, being VEX-encoded */
  bool avx512f;  /* the foundation subset of AVX-512 (512-bit vectors, masks) */
  bool avx512bw; /* AVX-512 on bytes and words */
  bool avx512vl;   /* AVX-512's masks and forms on 128- and 256-bit vectors */
  bool avx512vbmi; /* AVX-512's byte permutes */
  bool avx512vnni; /* AVX-512's byte and word dot products into int32 */
  bool avx512bf16; /* AVX-512's float32 to bfloat16 conversions */
  /* AMX's tiles and their bfloat16 dot products, with the OS saving the
   * tile state (XCR0); a process must still ask the kernel for the tile
   * data before its first use (gemm_amx.c does) */
  bool amx_bf16;
  /* AVX-512's compressing store to memory is about as fast as compressing
   * in a register and storing (Intel); on AMD's Zen 4 it is microcoded and
   * many times slower, so it counts as slow there and wherever unknown. */
  bool fast_compress_store;
} cm_cpu_flags;

const cm_cpu_flags *cm_cpu_features(void);

/* Kernel families with an environment switch that forces the portable
 * loops (for checking a SIMD kernel against the baseline). */
typedef enum cm_cpu_simd {
  CM_SIMD_BINARY,    /* CMLX_BINARY_SIMD=0; needs AVX2 */
  CM_SIMD_UNARY,     /* CMLX_UNARY_SIMD=0; needs AVX2, FMA and F16C */
  CM_SIMD_RANDOM,    /* CMLX_RANDOM_SIMD=0; needs AVX2 */
  CM_SIMD_RANDOM512, /* CMLX_RANDOM_AVX512=0 (AVX2 only); needs AVX-512F */
  CM_SIMD_SORT,      /* CMLX_SORT_SIMD=0; needs AVX-512F and BW */
  CM_SIMD_MATMUL,    /* CMLX_MATMUL_SIMD=0; needs AVX2 and FMA */
  CM_SIMD_MATMUL512, /* CMLX_MATMUL_AVX512=0 (AVX2 only); needs AVX-512F */
  CM_SIMD_MATMUL_AMX, /* CMLX_MATMUL_AMX=0 (no tiles for half products); needs AMX-BF16,
                         AVX-512 BW/VL/BF16 and F16C */
  CM_SIMD_NUM_FAMILIES
} cm_cpu_simd;

/* Whether the family's SIMD kernels may run: the CPU has what they need
 * and the family's variable does not start with '0'.  The variable is read
 * the first time a family is asked about, as each family did before this
 * module existed. */
bool cm_cpu_simd_enabled(cm_cpu_simd family);

/* NULL when unknown, so that each front door keeps its own fallback
 * (the C API reports the architecture as the name, Python ""). */
/* uname's machine name ("x86_64"). */
const char *cm_cpu_arch(void);
/* The "model name" of /proc/cpuinfo; unknown off Linux and on
 * architectures whose kernel reports no such line. */
const char *cm_cpu_model(void);

#endif
