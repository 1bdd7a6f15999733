/* The simulator's random numbers (ext/_sim.pyx and its twin solver/_sim_pure.py):
   xoshiro256** seeded by splitmix64, one stream per game. */
#ifndef THK_RNG_H
#define THK_RNG_H

#include <stdint.h>
typedef struct { uint64_t s0, s1, s2, s3; } sim_rng;

static inline uint64_t sim_rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

static inline void sim_seed(sim_rng *r, uint64_t seed, uint64_t game) {
    uint64_t x = seed + game * 0xD1B54A32D192ED03ULL;
    uint64_t out[4];
    for (int i = 0; i < 4; i++) {
        x += 0x9E3779B97F4A7C15ULL;
        uint64_t z = x;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        out[i] = z ^ (z >> 31);
    }
    r->s0 = out[0]; r->s1 = out[1]; r->s2 = out[2]; r->s3 = out[3];
}

static inline uint64_t sim_next(sim_rng *r) {
    uint64_t res = sim_rotl(r->s1 * 5, 7) * 9;
    uint64_t t = r->s1 << 17;
    r->s2 ^= r->s0;
    r->s3 ^= r->s1;
    r->s1 ^= r->s2;
    r->s0 ^= r->s3;
    r->s2 ^= t;
    r->s3 = sim_rotl(r->s3, 45);
    return res;
}

static inline uint64_t sim_below(sim_rng *r, uint64_t m) {
    return (uint64_t)(((__uint128_t)sim_next(r) * m) >> 64);
}

#endif /* THK_RNG_H */
