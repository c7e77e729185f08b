/* Loading NVRTC and cuBLASLt (libs.h). */
#include "backend/cuda/libs.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

/* dlopen the first of names found in the search order of libs.h. */
static void *open_library(const char *const *names) {
  const char *extra = getenv("CMLX_CUDA_LIBRARY_PATH");
  char path[4096];
  for (const char *const *n = names; *n; n++) {
    for (const char *d = extra; d && *d;) {
      const char *end = strchr(d, ':');
      size_t len = end ? (size_t)(end - d) : strlen(d);
      if (len && len + strlen(*n) + 2 < sizeof path) {
        snprintf(path, sizeof path, "%.*s/%s", (int)len, d, *n);
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (h) return h;
      }
      d = end ? end + 1 : NULL;
    }
    void *h = dlopen(*n, RTLD_NOW | RTLD_LOCAL);
    if (h) return h;
    snprintf(path, sizeof path, "/usr/local/cuda/lib64/%s", *n);
    if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL))) return h;
  }
  return NULL;
}

/* Fill n function pointers of table from h by the names given; false when
 * one is missing (its name in *missing). */
static bool bind(void *h, void **table, const char *const *syms, int n, const char **missing) {
  for (int i = 0; i < n; i++) {
    table[i] = dlsym(h, syms[i]);
    if (!table[i]) {
      *missing = syms[i];
      return false;
    }
  }
  return true;
}

/* One library's loading, done once; the message is kept for every later
 * caller that asks again. */
typedef struct loaded {
  pthread_once_t once;
  bool ok;
  char why[512];
} loaded;

static void load(loaded *l, const char *what, const char *const *names, void *table,
                 const char *const *syms, int n) {
  void *h = open_library(names);
  if (!h) {
    snprintf(l->why, sizeof l->why,
             "[cuda] Cannot load %s (%s): install the CUDA toolkit's %s, or name its folder in "
             "CMLX_CUDA_LIBRARY_PATH.",
             what, names[0], what);
    return;
  }
  const char *missing = NULL;
  void *found[32];
  if (n > 32 || !bind(h, found, syms, n, &missing)) {
    snprintf(l->why, sizeof l->why, "[cuda] %s has no function %s.", what,
             missing ? missing : "?");
    dlclose(h);
    return;
  }
  /* POSIX makes a function pointer and void * the same size and bits: the
   * table is those pointers in order (checked by the _Static_asserts). */
  memcpy(table, found, sizeof(void *) * (size_t)n);
  l->ok = true;
}

/* ---- NVRTC ---- */
static cm_nvrtc_api nvrtc_api;
static loaded nvrtc_loaded = {.once = PTHREAD_ONCE_INIT};
static const char *const nvrtc_names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so", NULL};
static const char *const nvrtc_syms[] = {
    "nvrtcCreateProgram", "nvrtcCompileProgram",    "nvrtcGetCUBINSize",  "nvrtcGetCUBIN",
    "nvrtcGetPTXSize",    "nvrtcGetPTX",            "nvrtcGetProgramLogSize", "nvrtcGetProgramLog",
    "nvrtcDestroyProgram", "nvrtcGetErrorString",   "nvrtcVersion"};
_Static_assert(sizeof nvrtc_syms / sizeof *nvrtc_syms == sizeof(cm_nvrtc_api) / sizeof(void *),
               "one symbol per entry of cm_nvrtc_api");

static void load_nvrtc(void) {
  load(&nvrtc_loaded, "NVRTC", nvrtc_names, &nvrtc_api, nvrtc_syms,
       (int)(sizeof nvrtc_syms / sizeof *nvrtc_syms));
}

const cm_nvrtc_api *cm_nvrtc(void) {
  pthread_once(&nvrtc_loaded.once, load_nvrtc);
  if (nvrtc_loaded.ok) return &nvrtc_api;
  cm_error(CM_ERR_RUNTIME, "%s", nvrtc_loaded.why);
  return NULL;
}

/* ---- cuBLASLt ---- */
static cm_cublaslt_api lt_api;
static loaded lt_loaded = {.once = PTHREAD_ONCE_INIT};
static const char *const lt_names[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so",
                                       NULL};
static const char *const lt_syms[] = {"cublasLtCreate",
                                      "cublasLtMatmulDescCreate",
                                      "cublasLtMatmulDescDestroy",
                                      "cublasLtMatmulDescSetAttribute",
                                      "cublasLtMatrixLayoutCreate",
                                      "cublasLtMatrixLayoutDestroy",
                                      "cublasLtMatrixLayoutSetAttribute",
                                      "cublasLtMatmulPreferenceCreate",
                                      "cublasLtMatmulPreferenceDestroy",
                                      "cublasLtMatmulPreferenceSetAttribute",
                                      "cublasLtMatmulAlgoGetHeuristic",
                                      "cublasLtMatmul",
                                      "cublasLtGetStatusString"};
_Static_assert(sizeof lt_syms / sizeof *lt_syms == sizeof(cm_cublaslt_api) / sizeof(void *),
               "one symbol per entry of cm_cublaslt_api");

static void load_lt(void) {
  load(&lt_loaded, "cuBLASLt", lt_names, &lt_api, lt_syms,
       (int)(sizeof lt_syms / sizeof *lt_syms));
}

const cm_cublaslt_api *cm_cublaslt(void) {
  pthread_once(&lt_loaded.once, load_lt);
  if (lt_loaded.ok) return &lt_api;
  cm_error(CM_ERR_RUNTIME, "%s", lt_loaded.why);
  return NULL;
}
