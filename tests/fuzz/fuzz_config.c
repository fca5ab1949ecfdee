/* libFuzzer entry point for the config.json parser (hs_config_parse). An accepted config
 * must serialise and parse back to the identical struct (but for the training record), and the tensor list and counts
 * derived from it must be computable without overflow. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "model.h"

static hs_config a, b;
static hs_model m;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char err[HS_ERR_LEN];
    if (hs_config_parse(&a, (const char *)data, size, "fuzz.json", err, sizeof err) != 0) {
        if (!memchr(err, 0, sizeof err) || !strstr(err, "fuzz.json")) __builtin_trap();
        return 0;
    }
    char *json = hs_config_to_json(&a, NULL);
    if (!json) __builtin_trap();
    if (hs_config_parse(&b, json, strlen(json), "roundtrip.json", err, sizeof err) != 0) __builtin_trap();
    /* the training record is read from config.json but not written back by to_json (the
     * saver passes the whole block as extra JSON): everything else must survive */
    char line[160];
    (void)hs_training_describe(line, sizeof line, &a.training);
    if (b.training.present) __builtin_trap();
    b.training = a.training;
    if (memcmp(&a, &b, sizeof a) != 0) __builtin_trap();
    free(json);
    (void)hs_config_param_count(&a);
    (void)hs_config_total_heads(&a, NULL, NULL);
    for (int i = 0; i < a.num_layers; i++) (void)hs_layer_cache_bytes(&a, i, 1LL << 20);
    m.cfg = a;
    int n = hs_model_tensor_specs(&m, NULL, 0);
    hs_tensor_spec *s = malloc((size_t)n * sizeof *s);
    if (hs_model_tensor_specs(&m, s, n) != n) __builtin_trap();
    free(s);
    return 0;
}
