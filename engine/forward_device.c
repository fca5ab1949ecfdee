/* Device dispatch for the forward pass, with the GPU copy of the model cached. */
#include "forward_device.h"

#include <stdio.h>
#include <string.h>

static struct {
    const hs_model *m;
    const float *arena;        /* with the pointer: a different model at the same address differs here */
    size_t arena_floats;
    const hs_cuda_api *api;
    hs_cuda_model *cm;
} cache;

void hs_forward_device_release(const hs_model *m) {
    if (!cache.cm || (m && cache.m != m)) return;
    cache.api->model_free(cache.cm);
    memset(&cache, 0, sizeof cache);
}

static hs_cuda_model *cached_upload(const hs_model *m, const hs_cuda_api *api, char *err, size_t errlen) {
    if (cache.cm && cache.m == m && cache.arena == m->arena && cache.arena_floats == m->arena_floats)
        return cache.cm;
    hs_forward_device_release(NULL);
    hs_cuda_model *cm = api->model_upload(m, err, errlen);
    if (!cm) return NULL;
    cache.m = m;
    cache.arena = m->arena;
    cache.arena_floats = m->arena_floats;
    cache.api = api;
    cache.cm = cm;
    return cm;
}

hs_cuda_model *hs_forward_device_model(const hs_model *m, const hs_cuda_api **api, char *err, size_t errlen) {
    *api = hs_cuda_load(err, errlen);
    return *api ? cached_upload(m, *api, err, errlen) : NULL;
}

int hs_forward_device_prepare(const hs_model *m, char *err, size_t errlen) {
    const hs_cuda_api *api = hs_cuda_load(err, errlen);
    if (!api) return -1;
    return cached_upload(m, api, err, errlen) ? 0 : -1;
}

int hs_forward_on(int device, const hs_model *m, const int32_t *tokens, int T,
                  const hs_knobs *knobs, const hs_forward_opts *opts, char *err, size_t errlen) {
    int d = hs_device_resolve(device, err, errlen);
    if (d < 0) return -1;
    if (d == HS_DEVICE_CPU) {
        if (opts && opts->stats) {
            snprintf(err, errlen, "head statistics inside the forward are a CUDA-backend feature "
                     "(the CPU engine computes them through the capture hook)");
            return -1;
        }
        return hs_forward(m, tokens, T, knobs, opts, err, errlen);
    }
    if (knobs && hs_knobs_validate(knobs, &m->cfg, err, errlen)) return -1;
    const hs_cuda_api *api = hs_cuda_load(err, errlen);
    if (!api) return -1;
    hs_cuda_model *cm = cached_upload(m, api, err, errlen);
    if (!cm) return -1;
    return api->forward(cm, tokens, T, knobs, opts, err, errlen);
}
