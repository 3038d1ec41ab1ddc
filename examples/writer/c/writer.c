// writer: doubles every decimal integer stored in a box, with the C guest
// kit (plugins/pdk/c/cube.h). Arguments: two corners, min then max
// (2 x dims little-endian int32). Output: "wrote=<values written>". A value
// counts if it is an optional '-' and 1 to 18 ASCII digits; doubles wrap at
// 64 bits. The whole region is read before the first write.
//
// Rebuild (from this directory):
//   clang --target=wasm32-wasi --sysroot=/usr -O2 -mexec-model=reactor -I../../../plugins/pdk/c -Wl,--strip-all -o writer.wasm writer.c
#include <stdio.h>

#include "cube.h"

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

typedef struct {
    int32_t coord[CUBE_MAX_DIMS];
    int64_t v;
} todo;

CUBE_RUN(void) {
    uint32_t len, dims = (uint32_t)cube_dims();
    const int32_t *box = (const int32_t *)cube_args(&len);
    if (box == NULL || len != 8 * dims) return cube_fail("writer: bad arguments");

    todo *list = NULL;
    size_t n = 0, cap = 0;
    cube_region r;
    cube_point p;
    cube_region_open(&r, box, box + dims);
    while (cube_region_next(&r, &p)) {
        int64_t v;
        if (!parse_int(p.value, p.len, &v)) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 256;
            if ((list = realloc(list, cap * sizeof *list)) == NULL) return cube_fail("writer: out of memory");
        }
        memcpy(list[n].coord, p.coord, 4 * dims);
        list[n++].v = v;
    }
    if (cube_region_close(&r) != CUBE_OK) return cube_fail("writer: region failed");

    for (size_t i = 0; i < n; i++) {
        char v[24];
        snprintf(v, sizeof v, "%lld", (long long)(int64_t)((uint64_t)list[i].v * 2));
        cube_status st = cube_put_str(list[i].coord, v);
        if (st != CUBE_OK) return cube_fail(cube_status_string(st));
    }
    char out[32];
    snprintf(out, sizeof out, "wrote=%zu", n);
    return cube_output_str(out) == CUBE_OK ? 0 : 1;
}
