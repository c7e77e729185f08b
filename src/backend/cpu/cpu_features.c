#include "backend/cpu/cpu_features.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CM_CPU_X86 1
#include <cpuid.h>
#endif

static cm_cpu_flags flags;
static pthread_once_t flags_once = PTHREAD_ONCE_INIT;

static void detect_flags(void) {
#ifdef CM_CPU_X86
  __builtin_cpu_init();
  flags.avx = __builtin_cpu_supports("avx");
  flags.avx2 = __builtin_cpu_supports("avx2");
  flags.fma = __builtin_cpu_supports("fma");
  /* both compilers' check includes the OS saving the 512-bit state */
  flags.avx512f = __builtin_cpu_supports("avx512f");
  flags.avx512bw = __builtin_cpu_supports("avx512bw");
  flags.avx512vl = __builtin_cpu_supports("avx512vl");
  flags.avx512vbmi = __builtin_cpu_supports("avx512vbmi");
  flags.avx512vnni = __builtin_cpu_supports("avx512vnni");
  /* clang's __builtin_cpu_supports has no "f16c", so ask CPUID directly;
   * the AVX test covers the OS side that CPUID alone does not */
  unsigned a, b, c = 0, d;
  flags.f16c = __get_cpuid(1, &a, &b, &c, &d) && (c & bit_F16C) && flags.avx;
  flags.avx512bf16 = __builtin_cpu_supports("avx512bf16");
  /* AMX: CPUID.(7,0):EDX bits 22 (bf16) and 24 (tiles); the OS must enable
   * the tile configuration and data (XCR0 bits 17 and 18) */
  if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (d & (1u << 22)) && (d & (1u << 24)) &&
      __get_cpuid(1, &a, &b, &c, &d) && (c & bit_OSXSAVE)) {
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    flags.amx_bf16 = (lo & (3u << 17)) == (3u << 17);
  }
  unsigned vendor[4] = {0}; /* the name comes in EBX, EDX, ECX */
  if (__get_cpuid(0, &a, &vendor[0], &vendor[2], &vendor[1]))
    flags.fast_compress_store = flags.avx512f && memcmp(vendor, "GenuineIntel", 12) == 0;
#endif
}

const cm_cpu_flags *cm_cpu_features(void) {
  pthread_once(&flags_once, detect_flags);
  return &flags;
}

static bool family_supported(cm_cpu_simd family) {
  const cm_cpu_flags *f = cm_cpu_features();
  switch (family) {
  case CM_SIMD_BINARY: return f->avx2;
  case CM_SIMD_UNARY: return f->avx2 && f->fma && f->f16c;
  case CM_SIMD_RANDOM: return f->avx2;
  case CM_SIMD_RANDOM512: return f->avx512f;
  case CM_SIMD_SORT: return f->avx512f && f->avx512bw;
  case CM_SIMD_MATMUL: return f->avx2 && f->fma;
  case CM_SIMD_MATMUL512: return f->avx512f;
  case CM_SIMD_MATMUL_AMX:
    return f->amx_bf16 && f->avx512f && f->avx512bw && f->avx512vl && f->avx512bf16 && f->f16c;
  default: return false;
  }
}

static const char *const simd_env[CM_SIMD_NUM_FAMILIES] = {
    [CM_SIMD_BINARY] = "CMLX_BINARY_SIMD",      [CM_SIMD_UNARY] = "CMLX_UNARY_SIMD",
    [CM_SIMD_RANDOM] = "CMLX_RANDOM_SIMD",      [CM_SIMD_RANDOM512] = "CMLX_RANDOM_AVX512",
    [CM_SIMD_SORT] = "CMLX_SORT_SIMD",          [CM_SIMD_MATMUL] = "CMLX_MATMUL_SIMD",
    [CM_SIMD_MATMUL512] = "CMLX_MATMUL_AVX512", [CM_SIMD_MATMUL_AMX] = "CMLX_MATMUL_AMX",
};

bool cm_cpu_simd_enabled(cm_cpu_simd family) {
  /* each family is settled on its first query, not all at once, so a
   * variable set before that family's first op still counts */
  static atomic_int cached[CM_SIMD_NUM_FAMILIES] = {-1, -1, -1, -1, -1, -1, -1, -1};
  if ((unsigned)family >= CM_SIMD_NUM_FAMILIES) return false;
  int v = atomic_load_explicit(&cached[family], memory_order_relaxed);
  if (v < 0) { /* racing threads compute the same answer */
    const char *env = getenv(simd_env[family]);
    v = !(env && env[0] == '0') && family_supported(family);
    atomic_store_explicit(&cached[family], v, memory_order_relaxed);
  }
  return v;
}

static char arch[sizeof((struct utsname *)0)->machine];
static char model[256];
static bool have_arch, have_model;
static pthread_once_t names_once = PTHREAD_ONCE_INIT;

/* Stops at the first "model name": every core of a machine reports the
 * same one, and /proc/cpuinfo grows with the core count. */
static void read_model(void) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, "model name", 10) != 0) continue;
    char *colon = strchr(line, ':');
    if (!colon) break;
    colon++;
    while (*colon == ' ' || *colon == '\t') colon++;
    size_t n = strcspn(colon, "\n");
    if (n >= sizeof model) n = sizeof model - 1;
    memcpy(model, colon, n);
    model[n] = 0;
    have_model = true;
    break;
  }
  fclose(f);
}

static void read_names(void) {
  struct utsname u;
  have_arch = uname(&u) == 0;
  if (have_arch) snprintf(arch, sizeof arch, "%s", u.machine);
  read_model();
}

const char *cm_cpu_arch(void) {
  pthread_once(&names_once, read_names);
  return have_arch ? arch : NULL;
}

const char *cm_cpu_model(void) {
  pthread_once(&names_once, read_names);
  return have_model ? model : NULL;
}
