/*
 * cube.h — the C guest kit for cube's WebAssembly ABI v1 (docs/ABI.md).
 *
 * One header, nothing to link: include it, write `run`, build with clang and
 * wasi-libc (Debian: apt-get install clang lld wasi-libc
 * libclang-rt-14-dev-wasm32):
 *
 *     clang --target=wasm32-wasi --sysroot=/usr -O2 -mexec-model=reactor \
 *           -I plugins/pdk/c -Wl,--strip-all -o prog.wasm prog.c
 *
 *     #include "cube.h"
 *
 *     CUBE_RUN(void) {                          // the exported run()
 *         int32_t min[2] = {0, 0}, max[2] = {9, 9};
 *         cube_region r;
 *         cube_point p;
 *         int64_t n = 0;
 *         if (cube_region_open(&r, min, max) != CUBE_OK) return cube_fail("region");
 *         while (cube_region_next(&r, &p)) n++;  // p.coord, p.value, p.len
 *         if (cube_region_close(&r) != CUBE_OK) return cube_fail("region");
 *         return cube_output_str("done");
 *     }
 *
 * Conventions:
 *   - Functions return a cube_status (CUBE_OK is 0). CUBE_NOT_FOUND is an
 *     answer (no value, no edge, no path); anything else is a failure, and
 *     after CUBE_LIMIT or CUBE_READ_ONLY the run has failed whatever the
 *     program does next: return promptly.
 *   - Buffers are the kit's business. Values, records and paths are read into
 *     buffers the kit grows with malloc as needed (CUBE_TOO_SMALL never
 *     reaches you); what a function hands back points into such a buffer and
 *     stays valid until the next call of the same function (or, for
 *     iterators, the next call of next on the same iterator). Copy what you
 *     keep.
 *   - Coordinates are arrays of cube_dims() int32_t.
 *   - run returns 0 for success; return cube_fail("message") to fail with a
 *     message (a guest error).
 */
#ifndef CUBE_H
#define CUBE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Statuses of ABI v1, plus one of the kit's own. */
typedef enum cube_status {
    CUBE_OK = 0,           /* done */
    CUBE_NOT_FOUND = 1,    /* no value / edge / path */
    CUBE_TOO_SMALL = 2,    /* handled inside the kit; never returned */
    CUBE_LIMIT = 3,        /* a limit of the run was reached: the run has failed */
    CUBE_READ_ONLY = 4,    /* a write in a read-only run: the run has failed */
    CUBE_ABORTED = 5,      /* cancelled or out of time */
    CUBE_BAD_ARGUMENT = 6, /* a malformed argument */
    CUBE_ERROR = 7,        /* the store failed (the reason is in the run's log) */
    CUBE_NO_MEMORY = 100   /* the kit could not allocate a buffer */
} cube_status;

typedef enum cube_dir { CUBE_OUT = 0, CUBE_IN = 1, CUBE_BOTH = 2 } cube_dir;
typedef enum cube_order { CUBE_BFS = 0, CUBE_DFS = 1 } cube_order;

#define CUBE_MAX_DIMS 8

/* CUBE_RUN(void) { ... } defines the exported entry point. */
#define CUBE_RUN __attribute__((export_name("run"))) int32_t run

/* ---- the raw imports (docs/ABI.md §3); prefer the wrappers below ---- */
#define CUBE__IMPORT(name) __attribute__((import_module("cube_v1"), import_name(#name)))
CUBE__IMPORT(args_len) int32_t cube_v1_args_len(void);
CUBE__IMPORT(args_read) int32_t cube_v1_args_read(void *buf, uint32_t cap);
CUBE__IMPORT(output_write) int32_t cube_v1_output_write(const void *data, uint32_t len);
CUBE__IMPORT(log) int32_t cube_v1_log(const char *msg, uint32_t len);
CUBE__IMPORT(set_error) int32_t cube_v1_set_error(const char *msg, uint32_t len);
CUBE__IMPORT(dims) int32_t cube_v1_dims(void);
CUBE__IMPORT(get) int32_t cube_v1_get(const int32_t *coord, void *val, uint32_t cap, uint32_t *len_out);
CUBE__IMPORT(put) int32_t cube_v1_put(const int32_t *coord, const void *val, uint32_t len);
CUBE__IMPORT(del) int32_t cube_v1_del(const int32_t *coord);
CUBE__IMPORT(region_open) int32_t cube_v1_region_open(const int32_t *min, const int32_t *max, uint32_t *cursor_out);
CUBE__IMPORT(region_next) int32_t cube_v1_region_next(uint32_t cursor, void *buf, uint32_t cap, uint32_t *n_out, uint32_t *bytes_out);
CUBE__IMPORT(cursor_close) int32_t cube_v1_cursor_close(uint32_t cursor);
CUBE__IMPORT(edges_open) int32_t cube_v1_edges_open(const int32_t *coord, uint32_t dir, const char *label, uint32_t label_len, uint32_t *cursor_out);
CUBE__IMPORT(edges_next) int32_t cube_v1_edges_next(uint32_t cursor, void *buf, uint32_t cap, uint32_t *n_out, uint32_t *bytes_out);
CUBE__IMPORT(link) int32_t cube_v1_link(const int32_t *from, const int32_t *to, const char *label, uint32_t label_len,
                                        double weight, const void *val, uint32_t val_len);
CUBE__IMPORT(unlink) int32_t cube_v1_unlink(const int32_t *from, const int32_t *to, const char *label, uint32_t label_len);
CUBE__IMPORT(walk) int32_t cube_v1_walk(const int32_t *start, uint32_t order, int32_t max_depth, uint32_t dir,
                                        const char *label, uint32_t label_len, int32_t limit,
                                        void *buf, uint32_t cap, uint32_t *needed_out);
CUBE__IMPORT(shortest_path) int32_t cube_v1_shortest_path(const int32_t *from, const int32_t *to, const char *label,
                                                          uint32_t label_len, uint32_t dir, double *weight_out,
                                                          void *buf, uint32_t cap, uint32_t *needed_out);
/* Added to v1 later (docs/ABI.md §9); a program imports them only if it
 * calls the wrappers that use them. */
CUBE__IMPORT(shortest_path_hops) int32_t cube_v1_shortest_path_hops(const int32_t *from, const int32_t *to, const char *label,
                                                                    uint32_t label_len, uint32_t dir, int32_t max_hops,
                                                                    double *weight_out, void *buf, uint32_t cap,
                                                                    uint32_t *needed_out);
CUBE__IMPORT(nearby) int32_t cube_v1_nearby(const int32_t *centre, int32_t k, double max_dist, void *buf, uint32_t cap,
                                            uint32_t *n_out, uint32_t *needed_out);
CUBE__IMPORT(within_open) int32_t cube_v1_within_open(const int32_t *centre, double r, uint32_t *cursor_out);
CUBE__IMPORT(region_columns) int32_t cube_v1_region_columns(uint32_t cursor, int32_t *coords, uint32_t *lens, uint8_t *vals,
                                                            uint32_t cap_points, uint32_t vals_cap, uint32_t *n_out,
                                                            uint32_t *vbytes_out);
#undef CUBE__IMPORT

/* ---- buffers ---- */

/* A growable buffer, 8-aligned (malloc's alignment is 16 on wasm32). */
typedef struct cube_buf {
    uint8_t *p;
    uint32_t cap;
} cube_buf;

/* cube__reserve makes b hold at least n bytes (64 KiB at first). */
static inline cube_status cube__reserve(cube_buf *b, uint32_t n) {
    if (b->cap >= n && b->p != NULL) return CUBE_OK;
    uint32_t c = b->cap < 65536 ? 65536 : b->cap;
    while (c < n) c *= 2;
    uint8_t *p = (uint8_t *)realloc(b->p, c);
    if (p == NULL) return CUBE_NO_MEMORY;
    b->p = p;
    b->cap = c;
    return CUBE_OK;
}

static inline void cube__free(cube_buf *b) {
    free(b->p);
    b->p = NULL;
    b->cap = 0;
}

static inline uint32_t cube__u32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

/* ---- arguments, result, log, errors ---- */

static inline int cube_dims(void) { return cube_v1_dims(); }

/* cube_args returns the run's argument bytes (NUL-terminated, so text
 * arguments are a C string) and their length in *len. The buffer is the
 * kit's; it lives until the run ends. NULL if memory ran out. */
static inline const uint8_t *cube_args(uint32_t *len) {
    static uint8_t *args;
    static uint32_t n;
    if (args == NULL) {
        n = (uint32_t)cube_v1_args_len();
        args = (uint8_t *)malloc(n + 1);
        if (args == NULL) return NULL;
        if (cube_v1_args_read(args, n) != CUBE_OK) n = 0;
        args[n] = 0;
    }
    if (len != NULL) *len = n;
    return args;
}

/* cube_output appends bytes to the run's result. */
static inline cube_status cube_output(const void *data, uint32_t len) {
    return (cube_status)cube_v1_output_write(data, len);
}

static inline cube_status cube_output_str(const char *s) { return cube_output(s, (uint32_t)strlen(s)); }

/* cube_log adds a line to the run's log. */
static inline void cube_log(const char *msg) { cube_v1_log(msg, (uint32_t)strlen(msg)); }

/* cube_fail sets the run's error message and returns 1, for
 * `return cube_fail("what went wrong");` from run. */
static inline int32_t cube_fail(const char *msg) {
    cube_v1_set_error(msg, (uint32_t)strlen(msg));
    return 1;
}

/* cube_status_string names a status, for messages. */
static inline const char *cube_status_string(cube_status s) {
    switch (s) {
    case CUBE_OK: return "ok";
    case CUBE_NOT_FOUND: return "not found";
    case CUBE_TOO_SMALL: return "buffer too small";
    case CUBE_LIMIT: return "limit reached";
    case CUBE_READ_ONLY: return "read-only";
    case CUBE_ABORTED: return "aborted";
    case CUBE_BAD_ARGUMENT: return "bad argument";
    case CUBE_ERROR: return "store error";
    case CUBE_NO_MEMORY: return "out of memory";
    }
    return "unknown status";
}

/* ---- values ---- */

/* cube_get reads the value at coord: CUBE_OK with *val and *len set (the
 * bytes stay valid until the next cube_get), or CUBE_NOT_FOUND. */
static inline cube_status cube_get(const int32_t *coord, const uint8_t **val, uint32_t *len) {
    static cube_buf b;
    cube_status st = cube__reserve(&b, 0);
    if (st != CUBE_OK) return st;
    for (;;) {
        uint32_t n = 0;
        st = (cube_status)cube_v1_get(coord, b.p, b.cap, &n);
        if (st == CUBE_TOO_SMALL) {
            if ((st = cube__reserve(&b, n)) != CUBE_OK) return st;
            continue;
        }
        if (st == CUBE_OK) {
            *val = b.p;
            *len = n;
        }
        return st;
    }
}

/* cube_put writes (replaces) the value at coord, as part of the run's
 * transaction. */
static inline cube_status cube_put(const int32_t *coord, const void *val, uint32_t len) {
    return (cube_status)cube_v1_put(coord, val, len);
}

static inline cube_status cube_put_str(const int32_t *coord, const char *s) {
    return cube_put(coord, s, (uint32_t)strlen(s));
}

/* cube_del removes the value at coord: CUBE_OK, or CUBE_NOT_FOUND if there
 * was none. */
static inline cube_status cube_del(const int32_t *coord) { return (cube_status)cube_v1_del(coord); }

/* ---- regions ---- */

/* A point of a region: coord has cube_dims() elements. Valid until the next
 * cube_region_next on the same iterator. */
typedef struct cube_point {
    const int32_t *coord;
    const uint8_t *value;
    uint32_t len;
} cube_point;

/* An iterator over the points in a box, reading many per host call. */
typedef struct cube_region {
    uint32_t cursor, cw, left, off;
    bool open;
    cube_status status;
    cube_buf buf;
} cube_region;

/* cube_region_open starts an iteration over the points with
 * min[i] <= c[i] <= max[i] on every axis. */
static inline cube_status cube_region_open(cube_region *r, const int32_t *min, const int32_t *max) {
    memset(r, 0, sizeof *r);
    r->cw = 4u * (uint32_t)cube_v1_dims();
    r->status = (cube_status)cube_v1_region_open(min, max, &r->cursor);
    r->open = r->status == CUBE_OK;
    return r->status;
}

/* cube_within_open starts an iteration over the points at distance at most
 * r from centre (a point at exactly r is inside; CUBE_NO_BOUND for every
 * point), read with cube_region_next and ended with cube_region_close like
 * a box. Distances are Euclidean over the coordinates (metres on the sphere
 * in a GEO namespace). CUBE_BAD_ARGUMENT if r is NaN or negative. */
static inline cube_status cube_within_open(cube_region *it, const int32_t *centre, double r) {
    memset(it, 0, sizeof *it);
    it->cw = 4u * (uint32_t)cube_v1_dims();
    it->status = (cube_status)cube_v1_within_open(centre, r, &it->cursor);
    it->open = it->status == CUBE_OK;
    return it->status;
}

/* cube__fill reads the next batch of records into b: the number in *n (0 at
 * the end), growing b when one record does not fit. */
static inline cube_status cube__fill(int32_t (*next)(uint32_t, void *, uint32_t, uint32_t *, uint32_t *),
                                     uint32_t cursor, cube_buf *b, uint32_t *n) {
    cube_status st = cube__reserve(b, 0);
    while (st == CUBE_OK) {
        uint32_t bytes = 0;
        st = (cube_status)next(cursor, b->p, b->cap, n, &bytes);
        if (st != CUBE_TOO_SMALL) break;
        st = cube__reserve(b, bytes);
    }
    return st;
}

/* cube_region_next moves to the next point: true with *p set, or false at
 * the end or on failure (then r->status is not CUBE_OK). */
static inline bool cube_region_next(cube_region *r, cube_point *p) {
    if (!r->open) return false;
    if (r->left == 0) {
        r->status = cube__fill(cube_v1_region_next, r->cursor, &r->buf, &r->left);
        r->off = 0;
        if (r->status != CUBE_OK || r->left == 0) return false;
    }
    const uint8_t *rec = r->buf.p + r->off;
    p->coord = (const int32_t *)rec; /* records are 4-aligned in an 8-aligned buffer */
    p->len = cube__u32(rec + r->cw);
    p->value = rec + r->cw + 4;
    r->off += (r->cw + 4 + p->len + 3) & ~3u;
    r->left--;
    return true;
}

/* cube_region_close ends the iteration, frees its buffer and returns the
 * iteration's status: CUBE_OK if it ran to the end without failing. */
static inline cube_status cube_region_close(cube_region *r) {
    if (r->open) cube_v1_cursor_close(r->cursor);
    r->open = false;
    cube__free(&r->buf);
    return r->status;
}

/* A batch of points read as columns (cube_region_columns): point i has the
 * coordinate coords[i * cube_dims()] .. and a value of lens[i] bytes; the
 * values follow one another in vals, so a loop over the batch keeps its own
 * offset (value i starts at lens[0] + ... + lens[i-1]). The buffers are the
 * kit's, valid until the next cube_region_columns with these columns;
 * cube_columns_free frees them. Start from a zeroed cube_columns. */
typedef struct cube_columns {
    uint32_t n;
    const int32_t *coords;
    const uint32_t *lens;
    const uint8_t *vals;
    cube_buf cbuf, lbuf, vbuf;
} cube_columns;

/* cube__columns_from_records moves up to max_points of the records
 * cube_region_next read ahead into c, as columns, through cube_region_next
 * (which reads no more while it holds records). */
static inline bool cube__columns_from_records(cube_region *r, cube_columns *c, uint32_t max_points) {
    uint32_t n = r->left < max_points ? r->left : max_points, v = 0, i = 0;
    r->status = cube__reserve(&c->cbuf, n * r->cw);
    if (r->status == CUBE_OK) r->status = cube__reserve(&c->lbuf, n * 4);
    cube_point p;
    for (; r->status == CUBE_OK && i < n && cube_region_next(r, &p); i++) {
        r->status = cube__reserve(&c->vbuf, v + p.len);
        if (r->status != CUBE_OK) break;
        memcpy(c->cbuf.p + i * r->cw, p.coord, r->cw);
        ((uint32_t *)c->lbuf.p)[i] = p.len;
        memcpy(c->vbuf.p + v, p.value, p.len);
        v += p.len;
    }
    c->n = r->status == CUBE_OK ? i : 0;
    c->coords = (const int32_t *)c->cbuf.p;
    c->lens = (const uint32_t *)c->lbuf.p;
    c->vals = c->vbuf.p;
    return c->n > 0;
}

/* cube_region_columns reads the next batch of up to max_points points
 * (1024 if 0) of a box or radius iteration as columns into c, one host call
 * a batch, for loops that read many points and little of each: true with
 * c->n > 0, or false at the end or on failure (then r->status is not
 * CUBE_OK). It may be mixed with cube_region_next on one iteration: the
 * points cube_region_next read ahead come first, in order. */
static inline bool cube_region_columns(cube_region *r, cube_columns *c, uint32_t max_points) {
    if (!r->open) return false;
    if (max_points == 0) max_points = 1024;
    if (r->left != 0) return cube__columns_from_records(r, c, max_points);
    r->status = cube__reserve(&c->cbuf, max_points * r->cw);
    if (r->status == CUBE_OK) r->status = cube__reserve(&c->lbuf, max_points * 4);
    if (r->status == CUBE_OK) r->status = cube__reserve(&c->vbuf, 0);
    while (r->status == CUBE_OK) {
        uint32_t vbytes = 0;
        r->status = (cube_status)cube_v1_region_columns(r->cursor, (int32_t *)c->cbuf.p, (uint32_t *)c->lbuf.p, c->vbuf.p,
                                                        max_points, c->vbuf.cap, &c->n, &vbytes);
        if (r->status != CUBE_TOO_SMALL) break;
        r->status = cube__reserve(&c->vbuf, vbytes);
    }
    c->coords = (const int32_t *)c->cbuf.p;
    c->lens = (const uint32_t *)c->lbuf.p;
    c->vals = c->vbuf.p;
    if (r->status != CUBE_OK) c->n = 0;
    return c->n > 0;
}

static inline void cube_columns_free(cube_columns *c) {
    cube__free(&c->cbuf);
    cube__free(&c->lbuf);
    cube__free(&c->vbuf);
    c->n = 0;
}

/* ---- edges ---- */

/* An edge from -[label]-> to. Valid until the next cube_edges_next on the
 * same iterator. The label is not NUL-terminated. */
typedef struct cube_edge {
    double weight;
    const int32_t *from, *to;
    const char *label;
    uint32_t label_len;
    const uint8_t *value;
    uint32_t value_len;
} cube_edge;

typedef struct cube_edges {
    uint32_t cursor, cw, left, off;
    bool open;
    cube_status status;
    cube_buf buf;
} cube_edges;

/* cube_edges_open starts an iteration over the edges of coord in direction
 * dir with the label (NULL or "" means any label). */
static inline cube_status cube_edges_open(cube_edges *it, const int32_t *coord, cube_dir dir, const char *label) {
    memset(it, 0, sizeof *it);
    it->cw = 4u * (uint32_t)cube_v1_dims();
    it->status = (cube_status)cube_v1_edges_open(coord, (uint32_t)dir, label ? label : "",
                                                 label ? (uint32_t)strlen(label) : 0, &it->cursor);
    it->open = it->status == CUBE_OK;
    return it->status;
}

/* cube_edges_next moves to the next edge: true with *e set, or false at the
 * end or on failure (it->status says which). */
static inline bool cube_edges_next(cube_edges *it, cube_edge *e) {
    if (!it->open) return false;
    if (it->left == 0) {
        it->status = cube__fill(cube_v1_edges_next, it->cursor, &it->buf, &it->left);
        it->off = 0;
        if (it->status != CUBE_OK || it->left == 0) return false;
    }
    const uint8_t *rec = it->buf.p + it->off;
    memcpy(&e->weight, rec, 8);
    e->label_len = cube__u32(rec + 8);
    e->value_len = cube__u32(rec + 12);
    e->from = (const int32_t *)(rec + 16);
    e->to = (const int32_t *)(rec + 16 + it->cw);
    e->label = (const char *)(rec + 16 + 2 * it->cw);
    e->value = rec + 16 + 2 * it->cw + e->label_len;
    it->off += (16 + 2 * it->cw + e->label_len + e->value_len + 7) & ~7u;
    it->left--;
    return true;
}

/* cube_edges_close ends the iteration and returns its status. */
static inline cube_status cube_edges_close(cube_edges *it) {
    if (it->open) cube_v1_cursor_close(it->cursor);
    it->open = false;
    cube__free(&it->buf);
    return it->status;
}

/* cube_link creates or replaces the edge from -[label]-> to (NULL means the
 * empty label). */
static inline cube_status cube_link(const int32_t *from, const int32_t *to, const char *label, double weight,
                                    const void *val, uint32_t val_len) {
    if (label == NULL) label = ""; /* strlen(NULL) does not trap in wasm: it reads address 0 */
    return (cube_status)cube_v1_link(from, to, label, (uint32_t)strlen(label), weight, val, val_len);
}

/* cube_unlink removes an edge: CUBE_OK, or CUBE_NOT_FOUND if there was none
 * (NULL means the empty label). */
static inline cube_status cube_unlink(const int32_t *from, const int32_t *to, const char *label) {
    if (label == NULL) label = "";
    return (cube_status)cube_v1_unlink(from, to, label, (uint32_t)strlen(label));
}

/* ---- built-in walks ---- */

/* Options of cube_walk; zero values mean BFS, depth 1, outgoing edges, any
 * label, no limit. */
typedef struct cube_walk_options {
    cube_order order;
    int32_t max_depth;
    cube_dir dir;
    const char *label;
    int32_t limit;
} cube_walk_options;

/* A node reached by a walk: its depth (the start has 0), its coordinate and
 * the coordinate it was reached from (the start: itself). */
typedef struct cube_step {
    int32_t depth;
    const int32_t *coord, *from;
} cube_step;

/* cube_walk runs the store's walk from start and calls visit for every node
 * in visit order until it returns false. The steps live in a buffer shared
 * by all calls: visit must not call cube_walk. */
static inline cube_status cube_walk(const int32_t *start, const cube_walk_options *o,
                                    bool (*visit)(const cube_step *s, void *ctx), void *ctx) {
    static const cube_walk_options zero;
    static cube_buf b;
    if (o == NULL) o = &zero;
    const char *label = o->label ? o->label : "";
    cube_status st = cube__reserve(&b, 0);
    uint32_t need = 0;
    while (st == CUBE_OK) {
        st = (cube_status)cube_v1_walk(start, (uint32_t)o->order, o->max_depth, (uint32_t)o->dir, label,
                                       (uint32_t)strlen(label), o->limit, b.p, b.cap, &need);
        if (st != CUBE_TOO_SMALL) break;
        st = cube__reserve(&b, need);
    }
    if (st != CUBE_OK) return st;
    uint32_t cw = 4u * (uint32_t)cube_v1_dims(), size = 4 + 2 * cw;
    for (uint32_t off = 0; off + size <= need; off += size) {
        cube_step s;
        memcpy(&s.depth, b.p + off, 4);
        s.coord = (const int32_t *)(b.p + off + 4);
        s.from = (const int32_t *)(b.p + off + 4 + cw);
        if (!visit(&s, ctx)) break;
    }
    return CUBE_OK;
}

/* A path: n coordinates of cube_dims() int32_t each, back to back, from
 * first; valid until the next cube_shortest_path. */
typedef struct cube_path {
    const int32_t *coords;
    uint32_t n;
    double weight;
} cube_path;

/* cube_shortest_path finds the least-weight path from one coordinate to
 * another following edges with the label (NULL: any) in direction dir:
 * CUBE_OK with *p set, or CUBE_NOT_FOUND. */
static inline cube_status cube_shortest_path(const int32_t *from, const int32_t *to, const char *label, cube_dir dir,
                                             cube_path *p) {
    static cube_buf b;
    if (label == NULL) label = "";
    cube_status st = cube__reserve(&b, 0);
    uint32_t need = 0;
    while (st == CUBE_OK) {
        st = (cube_status)cube_v1_shortest_path(from, to, label, (uint32_t)strlen(label), (uint32_t)dir, &p->weight,
                                                b.p, b.cap, &need);
        if (st != CUBE_TOO_SMALL) break;
        st = cube__reserve(&b, need);
    }
    if (st == CUBE_OK) {
        p->coords = (const int32_t *)b.p;
        p->n = need / (4u * (uint32_t)cube_v1_dims());
    }
    return st;
}

/* cube_shortest_path_hops is cube_shortest_path among the paths of at most
 * max_hops edges (0: any number): the least weight with few enough edges,
 * which may weigh more than the unbounded path. CUBE_NOT_FOUND when no path
 * is that short, CUBE_BAD_ARGUMENT for a negative max_hops. The path is
 * valid until the next cube_shortest_path_hops. */
static inline cube_status cube_shortest_path_hops(const int32_t *from, const int32_t *to, const char *label, cube_dir dir,
                                                  int32_t max_hops, cube_path *p) {
    static cube_buf b;
    if (label == NULL) label = "";
    cube_status st = cube__reserve(&b, 0);
    uint32_t need = 0;
    while (st == CUBE_OK) {
        st = (cube_status)cube_v1_shortest_path_hops(from, to, label, (uint32_t)strlen(label), (uint32_t)dir, max_hops,
                                                     &p->weight, b.p, b.cap, &need);
        if (st != CUBE_TOO_SMALL) break;
        st = cube__reserve(&b, need);
    }
    if (st == CUBE_OK) {
        p->coords = (const int32_t *)b.p;
        p->n = need / (4u * (uint32_t)cube_v1_dims());
    }
    return st;
}

/* ---- nearest neighbours ---- */

/* No bound on a distance: max_dist of cube_nearby, r of cube_within_open. */
#define CUBE_NO_BOUND __builtin_inf()

/* A point cube_nearby found: its distance from the centre, its coordinate
 * (cube_dims() elements) and its value. */
typedef struct cube_neighbor {
    double dist;
    const int32_t *coord;
    const uint8_t *value;
    uint32_t len;
} cube_neighbor;

/* cube_nearby finds the k points nearest to centre, leaving out those
 * farther than max_dist (a point at exactly max_dist stays; CUBE_NO_BOUND
 * for no bound, 0 for the point at centre alone), and calls visit for each,
 * nearest first (points at the same distance in curve order), until it
 * returns false. Fewer than k come when there are fewer. The neighbours
 * live in a buffer shared by all calls: visit must not call cube_nearby.
 * CUBE_BAD_ARGUMENT for k < 1 or a max_dist that is NaN or negative. */
static inline cube_status cube_nearby(const int32_t *centre, int32_t k, double max_dist,
                                      bool (*visit)(const cube_neighbor *n, void *ctx), void *ctx) {
    static cube_buf b;
    cube_status st = cube__reserve(&b, 0);
    uint32_t n = 0, need = 0;
    while (st == CUBE_OK) {
        st = (cube_status)cube_v1_nearby(centre, k, max_dist, b.p, b.cap, &n, &need);
        if (st != CUBE_TOO_SMALL) break;
        st = cube__reserve(&b, need);
    }
    if (st != CUBE_OK) return st;
    uint32_t cw = 4u * (uint32_t)cube_v1_dims(), off = 0;
    for (; n > 0 && off + 12 + cw <= need; n--) {
        const uint8_t *rec = b.p + off;
        cube_neighbor nb;
        memcpy(&nb.dist, rec, 8);
        nb.coord = (const int32_t *)(rec + 8); /* records are 8-aligned in an 8-aligned buffer */
        nb.len = cube__u32(rec + 8 + cw);
        nb.value = rec + 12 + cw;
        off += (12 + cw + nb.len + 7) & ~7u;
        if (!visit(&nb, ctx)) break;
    }
    return CUBE_OK;
}

#ifdef __cplusplus
}
#endif
#endif /* CUBE_H */
