// c_print: a wasi-libc program that prints to stdout and stderr, reads the
// clock and allocates: every WASI import a C guest typically has.
// Rebuild: clang --target=wasm32-wasi --sysroot=/usr -O2 -mexec-model=reactor -Wl,--strip-all -o c_print.wasm c_print.c
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((export_name("run"))) int32_t run(void) {
    char *m = malloc(100);
    if (m == NULL) return 1;
    printf("hello from C, time %s\n", time(0) > 0 ? "ok" : "zero");
    fflush(stdout);
    fprintf(stderr, "to stderr\n");
    free(m);
    return 0;
}
