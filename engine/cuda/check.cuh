/* Error checks for every CUDA and cuBLAS call of the plugin: on failure they write one line
 * naming the file, the line and the call into err (a `char *err, size_t errlen` pair in scope)
 * and return -1 from the enclosing function. Nothing here aborts the process. */
#ifndef HS_CUDA_CHECK_CUH
#define HS_CUDA_CHECK_CUH

#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>

#define CUDA_CHECK(call)                                                                    \
    do {                                                                                    \
        cudaError_t e_ = (call);                                                            \
        if (e_ != cudaSuccess) {                                                            \
            snprintf(err, errlen, "CUDA error at %s:%d (%s): %s", __FILE__, __LINE__, #call, \
                     cudaGetErrorString(e_));                                               \
            return -1;                                                                      \
        }                                                                                   \
    } while (0)

#define CUBLAS_CHECK(call)                                                                    \
    do {                                                                                      \
        cublasStatus_t s_ = (call);                                                           \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                                    \
            snprintf(err, errlen, "cuBLAS error at %s:%d (%s): %s", __FILE__, __LINE__, #call, \
                     cublasGetStatusString(s_));                                              \
            return -1;                                                                        \
        }                                                                                     \
    } while (0)

#endif
