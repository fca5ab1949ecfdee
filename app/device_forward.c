/* Full forwards on the chosen device. */
#include "device_forward.h"

#include <stdio.h>
#include <string.h>

int hs_device_forward_open(hs_device_forward *f, int requested, const hs_model *m,
                           const hs_knobs *k, char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    f->m = m;
    f->k = k;
    int d = hs_device_resolve(requested, err, errlen);
    if (d < 0) return -1;
    f->device = d;
    if (d == HS_DEVICE_CUDA) {
        f->api = hs_cuda_load(err, errlen);
        if (!f->api) return -1;
        f->cm = f->api->model_upload(m, err, errlen);
        if (!f->cm) return -1;
    }
    return 0;
}

int hs_device_forward_run(void *ctx, const int32_t *tokens, int T, const hs_forward_opts *opts,
                          char *err, size_t errlen) {
    hs_device_forward *f = ctx;
    if (f->device == HS_DEVICE_CUDA) return f->api->forward(f->cm, tokens, T, f->k, opts, err, errlen);
    return hs_forward(f->m, tokens, T, f->k, opts, err, errlen);
}

void hs_device_forward_close(hs_device_forward *f) {
    if (f->cm) f->api->model_free(f->cm);
    memset(f, 0, sizeof *f);
}
