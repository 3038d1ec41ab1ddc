// c_sum: the complete C plugin of docs/ABI.md section 8 (which shows this
// file whole), the same aggregate as aggregate.wat. Build it from the
// repository root (Debian: clang lld wasi-libc libclang-rt-14-dev-wasm32):
//   clang --target=wasm32-wasi --sysroot=/usr -O2 -mexec-model=reactor -Wl,--export=run -o sum.wasm vm/wasm/testdata/c_sum.c
#include <stdint.h>
#include <string.h>

#define CUBE_IMPORT(name) __attribute__((import_module("cube_v1"), import_name(#name)))
CUBE_IMPORT(args_read)    int32_t cube_args_read(void *buf, uint32_t cap);
CUBE_IMPORT(dims)         int32_t cube_dims(void);
CUBE_IMPORT(region_open)  int32_t cube_region_open(const int32_t *min, const int32_t *max, uint32_t *cursor);
CUBE_IMPORT(region_next)  int32_t cube_region_next(uint32_t cursor, void *buf, uint32_t cap, uint32_t *n, uint32_t *bytes);
CUBE_IMPORT(cursor_close) int32_t cube_cursor_close(uint32_t cursor);
CUBE_IMPORT(output_write) int32_t cube_output_write(const void *data, uint32_t len);
CUBE_IMPORT(set_error)    int32_t cube_set_error(const char *msg, uint32_t len);

static int fail(const char *msg) {
    cube_set_error(msg, strlen(msg));
    return 1;
}

static _Alignas(8) uint8_t buf[64 * 1024];

__attribute__((export_name("run")))
int32_t run(void) {
    int32_t box[16];                       /* min then max, up to 8 dims each */
    uint32_t cw = 4 * (uint32_t)cube_dims();
    if (cube_args_read(box, sizeof box) != 0) return fail("arguments: want two corners");
    uint32_t cur, n, bytes;
    if (cube_region_open(box, (int32_t *)((uint8_t *)box + cw), &cur) != 0) return fail("region_open");
    int64_t sum = 0, count = 0;
    for (;;) {
        int32_t st = cube_region_next(cur, buf, sizeof buf, &n, &bytes);
        if (st != 0) return fail("region_next failed");
        if (n == 0) break;                 /* end of the region */
        uint8_t *p = buf;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t len;
            memcpy(&len, p + cw, 4);
            if (len >= 8) { int64_t v; memcpy(&v, p + cw + 4, 8); sum += v; }
            count++;
            p += (cw + 4 + len + 3) & ~3u; /* records are 4-aligned */
        }
    }
    cube_cursor_close(cur);
    int64_t out[2] = {sum, count};
    return cube_output_write(out, sizeof out) == 0 ? 0 : 1;
}
