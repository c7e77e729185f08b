/* NVRTC and cuBLASLt, loaded at run time.  Both are large shared
 * libraries that only a machine with a GPU needs, so the library does not
 * link them: the first kernel that needs one loads it (dlopen), from
 * $CMLX_CUDA_LIBRARY_PATH (directories separated by ':') first, then the
 * loader's search path, then /usr/local/cuda/lib64; CUDA 13's libraries
 * first, then 12's (the functions used exist in both).  A missing library
 * is a RuntimeError naming it, raised by the op that needed it. */
#ifndef CMLX_BACKEND_CUDA_LIBS_H
#define CMLX_BACKEND_CUDA_LIBS_H

#include <cublasLt.h>
#include <nvrtc.h>

typedef struct cm_nvrtc_api {
  __typeof__(&nvrtcCreateProgram) create;
  __typeof__(&nvrtcCompileProgram) compile;
  __typeof__(&nvrtcGetCUBINSize) cubin_size;
  __typeof__(&nvrtcGetCUBIN) cubin;
  __typeof__(&nvrtcGetPTXSize) ptx_size;
  __typeof__(&nvrtcGetPTX) ptx;
  __typeof__(&nvrtcGetProgramLogSize) log_size;
  __typeof__(&nvrtcGetProgramLog) log;
  __typeof__(&nvrtcDestroyProgram) destroy;
  __typeof__(&nvrtcGetErrorString) error_string;
  __typeof__(&nvrtcVersion) version;
} cm_nvrtc_api;

typedef struct cm_cublaslt_api {
  __typeof__(&cublasLtCreate) create;
  __typeof__(&cublasLtMatmulDescCreate) desc_create;
  __typeof__(&cublasLtMatmulDescDestroy) desc_destroy;
  __typeof__(&cublasLtMatmulDescSetAttribute) desc_set;
  __typeof__(&cublasLtMatrixLayoutCreate) layout_create;
  __typeof__(&cublasLtMatrixLayoutDestroy) layout_destroy;
  __typeof__(&cublasLtMatrixLayoutSetAttribute) layout_set;
  __typeof__(&cublasLtMatmulPreferenceCreate) pref_create;
  __typeof__(&cublasLtMatmulPreferenceDestroy) pref_destroy;
  __typeof__(&cublasLtMatmulPreferenceSetAttribute) pref_set;
  __typeof__(&cublasLtMatmulAlgoGetHeuristic) heuristic;
  __typeof__(&cublasLtMatmul) matmul;
  __typeof__(&cublasLtGetStatusString) status_string;
} cm_cublaslt_api;

/* The loaded table, or NULL with a RuntimeError when the library (or one
 * of its functions) cannot be found. */
const cm_nvrtc_api *cm_nvrtc(void);
const cm_cublaslt_api *cm_cublaslt(void);

#endif
