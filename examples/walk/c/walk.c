// walk: from a start, follow the lightest outgoing edge until the value at
// the current coordinate equals the target; with the C guest kit
// (plugins/pdk/c/cube.h). Arguments: the start (dims little-endian int32),
// then the target bytes. Output: the path, "x,y x,y ...". Ties on weight go
// to the smaller destination coordinate, then the smaller label (bytewise).
// A dead end, or 64 coordinates without the target, fails with
// "walk: not found".
//
// Rebuild (from this directory):
//   clang --target=wasm32-wasi --sysroot=/usr -O2 -mexec-model=reactor -I../../../plugins/pdk/c -Wl,--strip-all -o walk.wasm walk.c
#include <stdio.h>

#include "cube.h"

#define MAX_PATH 64

typedef struct {
    bool have;
    double weight;
    int32_t to[CUBE_MAX_DIMS];
    char label[4096];
    uint32_t label_len;
} best;

// better reports whether e beats b: lighter, then a smaller destination,
// then a smaller label.
static bool better(const cube_edge *e, const best *b, uint32_t dims) {
    if (!b->have) return true;
    if (e->weight != b->weight) return e->weight < b->weight;
    for (uint32_t i = 0; i < dims; i++)
        if (e->to[i] != b->to[i]) return e->to[i] < b->to[i];
    uint32_t n = e->label_len < b->label_len ? e->label_len : b->label_len;
    int c = memcmp(e->label, b->label, n);
    if (c != 0) return c < 0;
    return e->label_len < b->label_len;
}

static best b;
static char out[MAX_PATH * CUBE_MAX_DIMS * 12];

CUBE_RUN(void) {
    uint32_t len, dims = (uint32_t)cube_dims();
    const uint8_t *args = cube_args(&len);
    if (args == NULL || len < 4 * dims) return cube_fail("walk: bad arguments");
    const uint8_t *target = args + 4 * dims;
    uint32_t target_len = len - 4 * dims;
    int32_t at[CUBE_MAX_DIMS];
    memcpy(at, args, 4 * dims);

    size_t o = 0;
    for (int steps = 1;; steps++) {
        for (uint32_t i = 0; i < dims; i++)
            o += (size_t)snprintf(out + o, sizeof out - o, "%s%d", i ? "," : (steps > 1 ? " " : ""), at[i]);
        const uint8_t *v;
        uint32_t vlen;
        cube_status st = cube_get(at, &v, &vlen);
        if (st != CUBE_OK && st != CUBE_NOT_FOUND) return cube_fail("walk: get failed");
        if (st == CUBE_OK && vlen == target_len && memcmp(v, target, vlen) == 0)
            return cube_output(out, (uint32_t)o) == CUBE_OK ? 0 : 1;
        if (steps == MAX_PATH) break;

        cube_edges it;
        cube_edge e;
        b.have = false;
        cube_edges_open(&it, at, CUBE_OUT, NULL);
        while (cube_edges_next(&it, &e)) {
            if (!better(&e, &b, dims)) continue;
            b.have = true;
            b.weight = e.weight;
            memcpy(b.to, e.to, 4 * dims);
            memcpy(b.label, e.label, e.label_len);
            b.label_len = e.label_len;
        }
        if (cube_edges_close(&it) != CUBE_OK) return cube_fail("walk: edges failed");
        if (!b.have) break;
        memcpy(at, b.to, 4 * dims);
    }
    return cube_fail("walk: not found");
}
