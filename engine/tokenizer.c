/* Byte tokenizer: encoding is BOS + bytes; decoding renders ids as printable text. */
#include "tokenizer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hs_tokenizer_init(hs_tokenizer *tk, const hs_config *c, char *err, size_t errlen) {
    if (c->tokenizer_type[0] && strcmp(c->tokenizer_type, "bytes")) {
        snprintf(err, errlen, "tokenizer type '%s' is not supported (only \"bytes\")", c->tokenizer_type);
        return -1;
    }
    if (c->vocab_size < 256) {
        snprintf(err, errlen, "byte tokenizer needs vocab_size >= 256 (config has %d)", c->vocab_size);
        return -1;
    }
    if (c->bos_id < 0 || c->bos_id >= c->vocab_size || c->eos_id < 0 || c->eos_id >= c->vocab_size) {
        snprintf(err, errlen, "tokenizer bos_id %d / eos_id %d outside the vocabulary of %d",
                 c->bos_id, c->eos_id, c->vocab_size);
        return -1;
    }
    tk->vocab_size = c->vocab_size;
    tk->bos_id = c->bos_id;
    tk->eos_id = c->eos_id;
    return 0;
}

void hs_tokenizer_encode(int32_t *out, const hs_tokenizer *tk, const char *text, size_t len) {
    out[0] = tk->bos_id;
    for (size_t i = 0; i < len; i++) out[i + 1] = (int32_t)(unsigned char)text[i];
}

int32_t *hs_tokenizer_encode_alloc(const hs_tokenizer *tk, const char *text, size_t len, int *n_out) {
    if (len >= 0x7ffffffe) return NULL;
    int32_t *ids = malloc((len + 1) * sizeof *ids);
    if (!ids) return NULL;
    hs_tokenizer_encode(ids, tk, text, len);
    *n_out = (int)len + 1;
    return ids;
}

/* Length of a valid UTF-8 sequence of byte ids starting at ids[i], or 0. */
static int utf8_seq_len(const int32_t *ids, int n, int i) {
    int b = ids[i], len;
    if (b >= 0xc2 && b <= 0xdf) len = 2;
    else if (b >= 0xe0 && b <= 0xef) len = 3;
    else if (b >= 0xf0 && b <= 0xf4) len = 4;
    else return 0;
    if (i + len > n) return 0;
    for (int j = 1; j < len; j++)
        if (ids[i + j] < 0x80 || ids[i + j] > 0xbf) return 0;
    int b1 = ids[i + 1];
    if (b == 0xe0 && b1 < 0xa0) return 0;      /* overlong */
    if (b == 0xed && b1 > 0x9f) return 0;      /* surrogates */
    if (b == 0xf0 && b1 < 0x90) return 0;      /* overlong */
    if (b == 0xf4 && b1 > 0x8f) return 0;      /* > U+10FFFF */
    return len;
}

/* Appends s, counting what would be needed even past cap. */
static void put(char *out, size_t cap, size_t *len, const char *s, size_t n) {
    if (*len < cap) {
        size_t room = cap - *len - 1;
        memcpy(out + *len, s, n < room ? n : room);
    }
    *len += n;
}

size_t hs_tokenizer_decode(char *out, size_t cap, const hs_tokenizer *tk, const int32_t *ids, int n) {
    size_t len = 0;
    char buf[32];
    for (int i = 0; i < n; i++) {
        int id = ids[i];
        if (id == tk->bos_id) put(out, cap, &len, "<bos>", 5);
        else if (id == tk->eos_id) put(out, cap, &len, "<eos>", 5);
        else if (id < 0 || id > 255) {
            int w = snprintf(buf, sizeof buf, "<%d>", id);
            put(out, cap, &len, buf, (size_t)w);
        } else if (id == '\n' || id == '\t' || (id >= 0x20 && id < 0x7f)) {
            buf[0] = (char)id;
            put(out, cap, &len, buf, 1);
        } else {
            int sl = id >= 0x80 ? utf8_seq_len(ids, n, i) : 0;
            if (sl) {
                for (int j = 0; j < sl; j++) buf[j] = (char)ids[i + j];
                put(out, cap, &len, buf, (size_t)sl);
                i += sl - 1;
            } else {
                int w = snprintf(buf, sizeof buf, "\\x%02x", id);
                put(out, cap, &len, buf, (size_t)w);
            }
        }
    }
    if (cap) out[len < cap ? len : cap - 1] = 0;
    return len;
}

char *hs_tokenizer_decode_alloc(const hs_tokenizer *tk, const int32_t *ids, int n) {
    size_t need = hs_tokenizer_decode(NULL, 0, tk, ids, n);
    char *s = malloc(need + 1);
    if (!s) return NULL;
    hs_tokenizer_decode(s, need + 1, tk, ids, n);
    return s;
}
