/* The byte tokenizer (model-spec section 5): ids 0..255 are bytes, bos_id starts every
 * sequence given as text, eos_id ends a training document. */
#ifndef HS_TOKENIZER_H
#define HS_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>
#include "config.h"

typedef struct {
    int vocab_size;
    int bos_id, eos_id;
} hs_tokenizer;

/* From a config's "tokenizer" block. -1 with err when the type is not "bytes" or the ids do
 * not fit the vocabulary. */
int hs_tokenizer_init(hs_tokenizer *tk, const hs_config *c, char *err, size_t errlen);

/* BOS followed by the UTF-8 bytes of text[0..len). Writes len + 1 ids to out. */
void hs_tokenizer_encode(int32_t *out, const hs_tokenizer *tk, const char *text, size_t len);
/* Same, malloc'd; NULL when out of memory. *n_out = len + 1. */
int32_t *hs_tokenizer_encode_alloc(const hs_tokenizer *tk, const char *text, size_t len, int *n_out);

/* Printable text for ids: valid UTF-8 and \n, \t pass through, other control or stray bytes
 * become \xNN, bos/eos become <bos>/<eos>, other non-byte ids <ID>. Always NUL-terminated;
 * returns the length it needed (like snprintf). */
size_t hs_tokenizer_decode(char *out, size_t cap, const hs_tokenizer *tk, const int32_t *ids, int n);
/* Same, malloc'd (NULL when out of memory). */
char *hs_tokenizer_decode_alloc(const hs_tokenizer *tk, const int32_t *ids, int n);

#endif
