// aggregate: the sum of the decimal integers stored in a box, with the C
// guest kit (plugins/pdk/c/cube.h). Arguments: two corners, min then max
// (2 x dims little-endian int32). Output: "sum=<sum> count=<integers added>";
// a value counts if it is an optional '-' and 1 to 18 ASCII digits; the sum
// wraps at 64 bits.
//
// Rebuild (from this directory):
//   clang --target=wasm32-wasi --sysroot=/usr -O2 -mexec-model=reactor -I../../../plugins/pdk/c -Wl,--strip-all -o aggregate.wasm aggregate.c
#include <stdio.h>

#include "cube.h"

// parse_int reports whether v is a decimal integer and stores its value.
static bool parse_int(const uint8_t *v, uint32_t len, int64_t *out) {
    bool neg = len > 0 && v[0] == '-';
    if (neg) v++, len--;
    if (len == 0 || len > 18) return false;
    int64_t n = 0;
    for (uint32_t i = 0; i < len; i++) {
        if (v[i] < '0' || v[i] > '9') return false;
        n = n * 10 + (v[i] - '0');
    }
    *out = neg ? -n : n;
    return true;
}

CUBE_RUN(void) {
    uint32_t len, dims = (uint32_t)cube_dims();
    const int32_t *box = (const int32_t *)cube_args(&len);
    if (box == NULL || len != 8 * dims) return cube_fail("aggregate: bad arguments");

    uint64_t sum = 0; // unsigned, so that it wraps instead of overflowing
    int64_t count = 0;
    cube_region r;
    cube_point p;
    cube_region_open(&r, box, box + dims);
    while (cube_region_next(&r, &p)) {
        int64_t v;
        if (parse_int(p.value, p.len, &v)) {
            sum += (uint64_t)v;
            count++;
        }
    }
    if (cube_region_close(&r) != CUBE_OK) return cube_fail("aggregate: region failed");

    char out[64];
    snprintf(out, sizeof out, "sum=%lld count=%lld", (long long)(int64_t)sum, (long long)count);
    return cube_output_str(out) == CUBE_OK ? 0 : 1;
}
