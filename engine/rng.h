/* splitmix64: a tiny, fast, well-mixed 64-bit generator. Needle samples are defined in terms
 * of it (assets/NEEDLE.md section 1), so its output must never change. */
#ifndef HS_RNG_H
#define HS_RNG_H

#include <stdint.h>

typedef struct { uint64_t state; } hs_rng;

static inline uint64_t hs_rng_mix(uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static inline uint64_t hs_rng_next(hs_rng *r) {
    r->state += 0x9E3779B97F4A7C15ULL;
    return hs_rng_mix(r->state);
}

/* next() % n: the small modulo bias is part of the definition (n > 0). */
static inline uint64_t hs_rng_below(hs_rng *r, uint64_t n) { return hs_rng_next(r) % n; }

/* Uniform double in [0, 1) from the top 53 bits. */
static inline double hs_rng_uniform(hs_rng *r) {
    return (double)(hs_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

#endif
