/* libFuzzer entry point for the safetensors header parser (hs_st_parse). Besides "no crash,
 * no out-of-bounds read", it checks two properties: every accepted tensor's bytes lie inside
 * the input (converted to fp32 under ASan), and the same file parsed again as a second shard
 * is rejected as a duplicate whenever it holds a tensor. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "safetensors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    hs_st_archive ar;
    memset(&ar, 0, sizeof ar);
    char err[512];
    if (hs_st_parse(&ar, data, size, 0, "fuzz.safetensors", err, sizeof err) == 0) {
        size_t budget = 1 << 20;
        for (int i = 0; i < ar.n_tensors; i++) {
            const hs_st_tensor *t = &ar.tensors[i];
            if ((const uint8_t *)t->data < data || (const uint8_t *)t->data + t->nbytes > data + size)
                __builtin_trap();
            size_t n = t->nbytes / hs_dtype_size(t->dtype);
            if (t->nbytes > budget) continue;
            budget -= t->nbytes;
            float *out = malloc(n * sizeof *out + 1);
            hs_st_to_f32(out, t);
            free(out);
        }
        int had = ar.n_tensors;
        int again = hs_st_parse(&ar, data, size, 1, "fuzz-2.safetensors", err, sizeof err);
        if (had > 0 && again == 0) __builtin_trap();
        if (ar.n_tensors != had) __builtin_trap();   /* a failed parse adds nothing */
    } else if (ar.n_tensors != 0) {
        __builtin_trap();
    }
    hs_st_close(&ar);
    return 0;
}
