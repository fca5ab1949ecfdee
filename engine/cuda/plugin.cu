/* The plugin's entry point (engine/cuda_backend.h): build/libhs_cuda.so exports
 * hs_cuda_get_api, which the engine finds with dlsym. */
#include "cuda_model.cuh"

#include <stdio.h>

static int device_count(char *err, size_t errlen) {
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        snprintf(err, errlen, "%s (%s)", cudaGetErrorString(e),
                 e == cudaErrorInsufficientDriver ? "driver missing or too old" : "runtime cannot reach a device");
        return 0;
    }
    if (n == 0) snprintf(err, errlen, "the CUDA runtime sees no device");
    return n;
}

static hs_cuda_model *model_upload(const hs_model *m, char *err, size_t errlen) {
    return cu_model_upload(m, err, errlen);
}

static void model_free(hs_cuda_model *cm) { cu_model_free(cm); }

static int forward(hs_cuda_model *cm, const int32_t *tokens, int T, const hs_knobs *k,
                   const hs_forward_opts *opts, char *err, size_t errlen) {
    return cu_forward(cm, tokens, T, k, opts, err, errlen);
}

static hs_cuda_decoder *decoder_new(hs_cuda_model *cm, const hs_knobs *k, int max_tokens, char *err,
                                    size_t errlen) {
    return cu_decoder_new(cm, k, max_tokens, err, errlen);
}

static int decoder_prefill(hs_cuda_decoder *d, const int32_t *tokens, int n, float *logits,
                           const hs_forward_opts *opts, char *err, size_t errlen) {
    return cu_decoder_prefill(d, tokens, n, logits, opts, err, errlen);
}

static int decoder_step(hs_cuda_decoder *d, int32_t token, float *logits, char *err, size_t errlen) {
    return cu_decoder_step(d, token, logits, err, errlen);
}

static void decoder_free(hs_cuda_decoder *d) { cu_decoder_free(d); }

static const hs_cuda_api api = {HS_CUDA_ABI, device_count,    model_upload, model_free,  forward,
                                decoder_new, decoder_prefill, decoder_step, decoder_free};

extern "C" __attribute__((visibility("default"))) const hs_cuda_api *hs_cuda_get_api(void) { return &api; }
