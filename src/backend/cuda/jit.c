/* NVRTC compilation and the process's kernel cache (jit.h).
 *
 * Each source is compiled to a CUBIN for the device's own architecture
 * (sm_XY), or to PTX for compute_XY when this NVRTC is older than the
 * device (the driver then finishes the compile); the image is loaded with
 * the runtime's library API (cudaLibraryLoadData), which needs no driver
 * API of ours.  Loaded libraries stay loaded for the life of the process:
 * their kernels are referenced by instantiated graphs. */
#include "backend/cuda/jit.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/device.h"
#include "backend/cuda/libs.h"
#include "backend/cuda/runtime.h"

/* ---- compiling ---- */

static int nvrtc_fail(const cm_nvrtc_api *nv, nvrtcResult r, const char *what) {
  return cm_error(CM_ERR_RUNTIME, "[cuda] %s failed: %s.", what, nv->error_string(r));
}

/* The prelude and the source as one program text (malloc'd). */
static char *whole_source(const char *source) {
  size_t a = strlen(cm_cuda_src_prelude), b = strlen(cm_cuda_src_ops), c = strlen(source);
  char *s = malloc(a + b + c + 3);
  if (!s) return NULL;
  memcpy(s, cm_cuda_src_prelude, a);
  s[a] = '\n';
  memcpy(s + a + 1, cm_cuda_src_ops, b);
  s[a + b + 1] = '\n';
  memcpy(s + a + b + 2, source, c + 1);
  return s;
}

int cm_cuda_jit_compile(const char *source, const char *arch, void **image, size_t *size) {
  const cm_nvrtc_api *nv = cm_nvrtc();
  if (!nv) return -1;
  char *text = whole_source(source);
  if (!text) return cm_error(CM_ERR_MEMORY, "[cuda] Out of memory.");
  nvrtcProgram prog;
  nvrtcResult r = nv->create(&prog, text, "cmlx_kernel.cu", 0, NULL, NULL);
  free(text);
  if (r != NVRTC_SUCCESS) return nvrtc_fail(nv, r, "nvrtcCreateProgram");
  char arch_opt[64];
  snprintf(arch_opt, sizeof arch_opt, "--gpu-architecture=%s", arch);
  /* no fused multiply-add: the same roundings as the CPU's kernels, which
   * are built with -ffp-contract=off */
  const char *opts[] = {arch_opt, "--std=c++17", "--fmad=false", "-default-device"};
  r = nv->compile(prog, (int)(sizeof opts / sizeof *opts), opts);
  if (r != NVRTC_SUCCESS) {
    size_t n = 0;
    nv->log_size(prog, &n);
    char *log = malloc(n + 1);
    if (log) {
      log[0] = 0;
      nv->log(prog, log);
      log[n] = 0;
    }
    cm_error(CM_ERR_RUNTIME, "[cuda] A generated kernel did not compile (%s): %.1500s", arch,
             log ? log : "");
    free(log);
    nv->destroy(&prog);
    return -1;
  }
  bool ptx = strncmp(arch, "compute_", 8) == 0;
  size_t n = 0;
  r = ptx ? nv->ptx_size(prog, &n) : nv->cubin_size(prog, &n);
  void *img = r == NVRTC_SUCCESS ? malloc(n ? n : 1) : NULL;
  if (img) r = ptx ? nv->ptx(prog, img) : nv->cubin(prog, img);
  nv->destroy(&prog);
  if (r != NVRTC_SUCCESS) {
    free(img);
    return nvrtc_fail(nv, r, ptx ? "nvrtcGetPTX" : "nvrtcGetCUBIN");
  }
  if (!img) return cm_error(CM_ERR_MEMORY, "[cuda] Out of memory.");
  *image = img;
  *size = n;
  return 0;
}

/* ---- the cache: source text -> loaded library, per device ---- */

typedef struct entry {
  uint64_t hash;
  int device;
  char *source;
  cudaLibrary_t lib;
  struct entry *next;
} entry;

#define BUCKETS 1024
static entry *buckets[BUCKETS];
static pthread_mutex_t cache_mu = PTHREAD_MUTEX_INITIALIZER;

static uint64_t hash_text(const char *s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
  return h;
}

/* A CUBIN for the device's own architecture; when this NVRTC cannot make
 * one (it is older than the device), PTX for Hopper, which the driver
 * compiles for any newer device. */
static int build(int device, const char *source, cudaLibrary_t *lib) {
  const cm_cuda_device_props *d = cm_cuda_device(device);
  if (!d) return cm_error(CM_ERR_VALUE, "[cuda] Device index %d is out of range.", device);
  char arch[32];
  void *img = NULL;
  size_t size = 0;
  snprintf(arch, sizeof arch, "sm_%d%d", d->major, d->minor);
  if (cm_cuda_jit_compile(source, arch, &img, &size)) {
    cm_error_record first;
    cm_error_save(&first);
    snprintf(arch, sizeof arch, "compute_90");
    if (cm_cuda_jit_compile(source, arch, &img, &size)) {
      cm_error_restore(&first);
      return -1;
    }
  }
  if (cm_cuda_use_device(device)) {
    free(img);
    return -1;
  }
  int rc = cm_cuda_check(cudaLibraryLoadData(lib, img, NULL, NULL, 0, NULL, NULL, 0),
                         "cudaLibraryLoadData");
  free(img);
  return rc;
}

static cudaLibrary_t library_for(int device, const char *source) {
  uint64_t h = hash_text(source);
  pthread_mutex_lock(&cache_mu);
  entry *e = buckets[h % BUCKETS];
  for (; e; e = e->next)
    if (e->hash == h && e->device == device && !strcmp(e->source, source)) break;
  if (!e) {
    /* compiled under the lock: two threads asking for the same kernel
     * compile it once */
    cudaLibrary_t lib;
    e = malloc(sizeof *e);
    char *copy = e ? strdup(source) : NULL;
    if (!e || !copy) {
      free(e);
      cm_error(CM_ERR_MEMORY, "[cuda] Out of memory.");
      e = NULL;
    } else if (build(device, source, &lib)) {
      free(copy);
      free(e);
      e = NULL;
    } else {
      *e = (entry){h, device, copy, lib, buckets[h % BUCKETS]};
      buckets[h % BUCKETS] = e;
    }
  }
  pthread_mutex_unlock(&cache_mu);
  return e ? e->lib : NULL;
}

const void *cm_cuda_jit_kernel(int device, const char *source, const char *name) {
  cudaLibrary_t lib = library_for(device, source);
  if (!lib) return NULL;
  cudaKernel_t k;
  if (cm_cuda_check(cudaLibraryGetKernel(&k, lib, name), "cudaLibraryGetKernel")) return NULL;
  return (const void *)k;
}
