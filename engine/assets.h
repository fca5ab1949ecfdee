/* The files in assets/ (see assets/README.md): word lists for needle keys and the
 * public-domain prose, one sentence per line, that needle haystacks and perplexity
 * documents are made of. */
#ifndef HS_ASSETS_H
#define HS_ASSETS_H

#include <stddef.h>

typedef struct {
    char dir[1024];
    char **adjectives, **nouns;
    int n_adjectives, n_nouns;
    int max_adjective_len, max_noun_len;
    char **sentences;          /* every prose sentence, files in name order */
    int *sentence_len;
    unsigned char *new_paragraph; /* 1 where a sentence starts a paragraph (or a file) */
    int n_sentences;
    char *store;               /* the text the pointers above point into */
} hs_assets;

/* Finds the assets directory: `hint` when given, else $HYBRIDSCOPE_ASSETS, else
 * <dir of the executable>/../assets, else ./assets. Returns 0 with the path in out, or -1
 * with a message naming where it looked. */
int hs_assets_find(char *out, size_t n, const char *hint, char *err, size_t errlen);

/* Loads words/adjectives.txt, words/nouns.txt and the prose/ .txt files from dir. */
int hs_assets_load(hs_assets *a, const char *dir, char *err, size_t errlen);
void hs_assets_free(hs_assets *a);

/* The prose stream of assets/NEEDLE.md section 7 (malloc'd, *len bytes, NUL-terminated). */
char *hs_assets_prose_stream(const hs_assets *a, size_t *len);

/* Where the stream's held-out part begins: the sample models train on the first 90% of it
 * (sample-models/recipe/data.py, int(len * 0.9)), so perplexity on the rest is perplexity
 * on text they never saw (NEEDLE.md section 7). */
size_t hs_assets_heldout_start(size_t len);

#endif
