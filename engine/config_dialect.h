/* Other config dialects (model-spec section 2): fla's `gla` and `gated_deltanet` configs,
 * with their optional `attn` block of softmax layers, translated into the native structure.
 * Internal to engine/config.c. */
#ifndef HS_CONFIG_DIALECT_H
#define HS_CONFIG_DIALECT_H

#include <stddef.h>

struct cJSON;

/* 1 when model_type names a dialect that hs_config_translate handles. */
int hs_config_is_dialect(const char *model_type);

/* Returns a new native-dialect JSON object for an fla config (caller frees with cJSON_Delete),
 * or NULL with "PATH: problem" in err. Keys of the fla config that the engine does not need
 * are ignored silently; keys fla does not know are warned about on stderr. */
struct cJSON *hs_config_translate(const struct cJSON *root, const char *path, char *err,
                                  size_t errlen);

#endif
