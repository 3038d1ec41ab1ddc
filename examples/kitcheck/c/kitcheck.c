/*
 * kitcheck: calls every function of the C guest kit (plugins/pdk/c/cube.h)
 * that the other examples leave out — cube_del, cube_link, cube_unlink,
 * cube_edges_*, cube_walk (BFS and DFS), cube_shortest_path, cube_log — and
 * the inverted-box error path (a CUBE_BAD_ARGUMENT status), and prints what
 * each returned. Its twins in Go, AssemblyScript and JavaScript must print
 * the same text; the contract is in plugins/pdk/conformance's doc. With the
 * argument "dfs" it runs only the depth-first walks; with "columns", only
 * cube_region_columns against cube_region_next; with "near", only the
 * distance queries (cube_nearby, cube_within_open) and hop-bounded paths
 * (cube_shortest_path_hops).
 *
 * Rebuild (from the repository's root; examples/build.sh does this):
 *   clang --target=wasm32-wasi --sysroot=/usr -O2 -Wall -Werror -mexec-model=reactor \
 *         -I plugins/pdk/c -Wl,--strip-all -o examples/kitcheck/c/kitcheck.wasm examples/kitcheck/c/kitcheck.c
 */
#include <stdio.h>

#include "cube.h"

/* The output, built up line by line. */
static char out[8192];
static size_t outn;
static int lines;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
static void say(const char *fmt, ...) {
    if (outn > 0 && outn < sizeof out - 1) out[outn++] = '\n';
    lines++;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(out + outn, sizeof out - outn, fmt, ap);
    va_end(ap);
    if (n > 0) outn += (size_t)n;
    if (outn > sizeof out - 1) outn = sizeof out - 1;
}

static void co(char *dst, size_t cap, const int32_t *c) {
    int d = cube_dims();
    size_t n = 0;
    for (int i = 0; i < d && n < cap; i++) n += (size_t)snprintf(dst + n, cap - n, i ? ",%d" : "%d", (int)c[i]);
}

static long long cost(double w) { return (long long)(w * 100 + (w >= 0 ? 0.5 : -0.5)); }

static int cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* A list of strings to sort and join. */
#define MAXITEMS 64
typedef struct list {
    char items[MAXITEMS][96];
    char *p[MAXITEMS];
    int n;
} list;

static void join(list *l, const char *sep, char *dst, size_t cap) {
    for (int i = 0; i < l->n; i++) l->p[i] = l->items[i];
    qsort(l->p, (size_t)l->n, sizeof l->p[0], cmp);
    size_t n = 0;
    dst[0] = 0;
    for (int i = 0; i < l->n && n < cap; i++) n += (size_t)snprintf(dst + n, cap - n, "%s%s", i ? sep : "", l->p[i]);
}

/* walk: the depths in visit order, then the steps sorted. */
typedef struct walkstate {
    char depths[256];
    size_t dn;
    list steps;
} walkstate;

static bool visit(const cube_step *s, void *ctx) {
    walkstate *w = ctx;
    w->dn += (size_t)snprintf(w->depths + w->dn, sizeof w->depths - w->dn, w->dn ? " %d" : "%d", (int)s->depth);
    if (w->steps.n == MAXITEMS) return false;
    char c[48], f[48];
    co(c, sizeof c, s->coord);
    co(f, sizeof f, s->from);
    char *dst = w->steps.items[w->steps.n++];
    if (s->depth > 0) snprintf(dst, 96, "%s@%d<%s", c, (int)s->depth, f);
    else snprintf(dst, 96, "%s@%d", c, (int)s->depth);
    return true;
}

static cube_status walk(const char *name, const int32_t *start, cube_walk_options o) {
    static walkstate w;
    memset(&w, 0, sizeof w);
    cube_status st = cube_walk(start, &o, visit, &w);
    if (st != CUBE_OK) return st;
    char s[2048];
    join(&w.steps, " ", s, sizeof s);
    say("walk %s: %s | %s", name, w.depths, s);
    return CUBE_OK;
}

static cube_status edges(const char *name, const int32_t *c, cube_dir dir, const char *label) {
    static list l;
    l.n = 0;
    cube_edges it;
    cube_edge e;
    cube_status st = cube_edges_open(&it, c, dir, label);
    while (cube_edges_next(&it, &e) && l.n < MAXITEMS) {
        char f[48], t[48];
        co(f, sizeof f, e.from);
        co(t, sizeof t, e.to);
        snprintf(l.items[l.n++], 96, "%s>%s %.*s cost=%lld v=%.*s", f, t, (int)e.label_len, e.label, cost(e.weight),
                 (int)e.value_len, (const char *)e.value);
    }
    if (st == CUBE_OK) st = cube_edges_close(&it);
    if (st != CUBE_OK) return st;
    char s[2048];
    join(&l, "; ", s, sizeof s);
    say("edges %s: %s", name, s);
    return CUBE_OK;
}

static cube_status path(const char *name, const int32_t *from, const int32_t *to, const char *label, cube_dir dir) {
    cube_path p;
    cube_status st = cube_shortest_path(from, to, label, dir, &p);
    if (st == CUBE_NOT_FOUND) {
        say("path %s: none", name);
        return CUBE_OK;
    }
    if (st != CUBE_OK) return st;
    char s[1024];
    size_t n = 0;
    int d = cube_dims();
    for (uint32_t i = 0; i < p.n; i++) {
        char c[48];
        co(c, sizeof c, p.coords + i * (uint32_t)d);
        n += (size_t)snprintf(s + n, sizeof s - n, "%s%s", i ? " " : "", c);
    }
    say("path %s: %s cost=%lld", name, s, cost(p.weight));
    return CUBE_OK;
}

/* nearby: the neighbours, "c@cost=value" each, space-separated; the last
 * one alone when last is set. */
typedef struct nearstate {
    char s[2048];
    size_t n;
    int count;
    bool last;
} nearstate;

static bool neighbor(const cube_neighbor *nb, void *ctx) {
    nearstate *w = ctx;
    char c[48];
    co(c, sizeof c, nb->coord);
    if (w->last) w->n = 0;
    if (w->n < sizeof w->s)
        w->n += (size_t)snprintf(w->s + w->n, sizeof w->s - w->n, "%s%s@%lld=%.*s", w->n ? " " : "", c,
                                 cost(nb->dist), (int)nb->len, (const char *)nb->value);
    w->count++;
    return true;
}

static cube_status nearby(const char *name, const int32_t *c, int32_t k, double max_dist) {
    static nearstate w;
    memset(&w, 0, sizeof w);
    cube_status st = cube_nearby(c, k, max_dist, neighbor, &w);
    if (st != CUBE_OK) return st;
    say("nearby %s: %s", name, w.s);
    return CUBE_OK;
}

static cube_status path_hops(const char *name, const int32_t *from, const int32_t *to, int32_t hops) {
    cube_path p;
    cube_status st = cube_shortest_path_hops(from, to, "h", CUBE_OUT, hops, &p);
    if (st == CUBE_NOT_FOUND) {
        say("path %s: none", name);
        return CUBE_OK;
    }
    if (st != CUBE_OK) return st;
    char s[1024];
    size_t n = 0;
    int d = cube_dims();
    for (uint32_t i = 0; i < p.n; i++) {
        char c[48];
        co(c, sizeof c, p.coords + i * (uint32_t)d);
        n += (size_t)snprintf(s + n, sizeof s - n, "%s%s", i ? " " : "", c);
    }
    say("path %s: %s cost=%lld", name, s, cost(p.weight));
    return CUBE_OK;
}

static int32_t failed(const char *op, cube_status st) {
    char m[128];
    snprintf(m, sizeof m, "kitcheck: %s: %s", op, cube_status_string(st));
    return cube_fail(m);
}

#define TRY(op, call)                                                                                                  \
    do {                                                                                                               \
        cube_status st_ = (call);                                                                                      \
        if (st_ != CUBE_OK) return failed(op, st_);                                                                    \
    } while (0)

/* near is the run with the argument "near". */
static int32_t near(void) {
    static const int32_t o[2] = {0, 0}, b[2] = {37, -12}, corner[2] = {-50, 50}, to[2] = {9, 9};
    TRY("nearby", nearby("0,0 k=5", o, 5, CUBE_NO_BOUND));
    TRY("nearby", nearby("37,-12 k=12 max=10", b, 12, 10));
    TRY("nearby", nearby("-50,50 k=3", corner, 3, CUBE_NO_BOUND));
    TRY("nearby", nearby("0,0 k=3 max=0", o, 3, 0));
    TRY("nearby", nearby("37,-12 k=3 max=0", b, 3, 0));
    static nearstate all;
    memset(&all, 0, sizeof all);
    all.last = true;
    TRY("nearby", cube_nearby(o, 1000, CUBE_NO_BOUND, neighbor, &all));
    say("nearby 0,0 k=1000: n=%d last=%s", all.count, all.s);
    cube_status st = cube_nearby(o, 0, CUBE_NO_BOUND, neighbor, &all);
    say("nearby 0,0 k=0: %s", cube_status_string(st));

    static list l;
    l.n = 0;
    cube_region r;
    cube_point p;
    TRY("within", cube_within_open(&r, b, 15));
    while (cube_region_next(&r, &p) && l.n < MAXITEMS) {
        char c[48];
        co(c, sizeof c, p.coord);
        snprintf(l.items[l.n++], 96, "%s=%.*s", c, (int)p.len, (const char *)p.value);
    }
    TRY("within", cube_region_close(&r));
    char s[2048];
    join(&l, " ", s, sizeof s);
    say("within 37,-12 r=15: n=%d: %s", l.n, s);
    st = cube_within_open(&r, o, __builtin_nan(""));
    while (cube_region_next(&r, &p)) return cube_fail("kitcheck: a radius of NaN yielded a point");
    cube_region_close(&r);
    say("within 0,0 r=NaN: %s", cube_status_string(st));

    TRY("path", path_hops("0,0>9,9 h hops=1", o, to, 1));
    TRY("path", path_hops("0,0>9,9 h hops=2", o, to, 2));
    TRY("path", path_hops("0,0>9,9 h hops=3", o, to, 3));
    TRY("path", path_hops("0,0>9,9 h hops=0", o, to, 0));
    TRY("path", path_hops("9,9>0,0 h hops=2", to, o, 2));
    cube_path pa;
    st = cube_shortest_path_hops(o, to, "h", CUBE_OUT, -1, &pa);
    say("path 0,0>9,9 h hops=-1: %s", cube_status_string(st));
    return cube_output(out, (uint32_t)outn) == CUBE_OK ? 0 : 1;
}

/* fnv folds n bytes into the running FNV-1a hash h. */
static uint64_t fnv(uint64_t h, const void *p, size_t n) {
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211u;
    return h;
}

/* columns_one reads the iteration it with cube_region_columns in batches of
 * max_points, after its first lead points with cube_region_next (which reads
 * ahead: the columns start with what it buffered), and the iteration pts
 * with cube_region_next, and says whether they gave the same points in the
 * same order (compared by a hash of each sequence). */
static cube_status columns_one(const char *name, cube_region *it, cube_region *pts, uint32_t max_points, int lead) {
    uint64_t hp = 14695981039346656037u, hc = hp;
    int np = 0, nc = 0, size = 0, cw = 4 * cube_dims();
    cube_point p;
    while (cube_region_next(pts, &p)) {
        hp = fnv(fnv(fnv(hp, p.coord, (size_t)cw), &p.len, 4), p.value, p.len);
        np++;
    }
    cube_status st = cube_region_close(pts);
    if (st != CUBE_OK) return st;
    for (; lead > 0 && cube_region_next(it, &p); lead--) {
        hc = fnv(fnv(fnv(hc, p.coord, (size_t)cw), &p.len, 4), p.value, p.len);
        size += (int)p.len;
        nc++;
    }
    cube_columns c = {0};
    while (cube_region_columns(it, &c, max_points)) {
        const uint8_t *v = c.vals;
        for (uint32_t i = 0; i < c.n; i++) {
            hc = fnv(fnv(fnv(hc, c.coords + i * (uint32_t)cube_dims(), (size_t)cw), &c.lens[i], 4), v, c.lens[i]);
            v += c.lens[i];
            size += (int)c.lens[i];
            nc++;
        }
    }
    cube_columns_free(&c);
    st = cube_region_close(it);
    if (st != CUBE_OK) return st;
    say("columns %s: n=%d bytes=%d %s", name, nc, size, hp == hc && np == nc ? "same" : "differs");
    return CUBE_OK;
}

/* columns is the run with the argument "columns". */
static int32_t columns(void) {
    static const int32_t lo[2] = {-20, -20}, hi[2] = {20, 20}, b[2] = {37, -12}, elo[2] = {100, 100}, ehi[2] = {200, 200};
    cube_region it, pts;
    TRY("region", cube_region_open(&it, lo, hi));
    TRY("region", cube_region_open(&pts, lo, hi));
    TRY("columns", columns_one("region -20,-20..20,20", &it, &pts, 7, 3));
    TRY("within", cube_within_open(&it, b, 15));
    TRY("within", cube_within_open(&pts, b, 15));
    TRY("columns", columns_one("within 37,-12 r=15", &it, &pts, 1, 2));
    TRY("region", cube_region_open(&it, elo, ehi));
    TRY("region", cube_region_open(&pts, elo, ehi));
    TRY("columns", columns_one("region 100,100..200,200", &it, &pts, 0, 0));
    return cube_output(out, (uint32_t)outn) == CUBE_OK ? 0 : 1;
}

CUBE_RUN(void) {
    static const int32_t gone[2] = {5, 5}, a[2] = {0, 0}, c1[2] = {1, 1}, c2[2] = {2, 1};
    cube_log("kitcheck: start");
    uint32_t alen;
    const uint8_t *args = cube_args(&alen);
    if (args != NULL && alen == 4 && memcmp(args, "near", 4) == 0) return near();
    if (args != NULL && alen == 7 && memcmp(args, "columns", 7) == 0) return columns();
    if (args != NULL && alen == 3 && memcmp(args, "dfs", 3) == 0) {
        TRY("walk", walk("dfs 0,0 t 3", a, (cube_walk_options){.order = CUBE_DFS, .max_depth = 3, .label = "t"}));
        TRY("walk", walk("dfs 0,0 t 3 limit 3", a,
                         (cube_walk_options){.order = CUBE_DFS, .max_depth = 3, .label = "t", .limit = 3}));
        return cube_output(out, (uint32_t)outn) == CUBE_OK ? 0 : 1;
    }

    cube_status first = cube_del(gone), again;
    if (first != CUBE_OK && first != CUBE_NOT_FOUND) return failed("del", first);
    again = cube_del(gone);
    if (again != CUBE_OK && again != CUBE_NOT_FOUND) return failed("del", again);
    say("del 5,5: %s %s", first == CUBE_OK ? "true" : "false", again == CUBE_OK ? "true" : "false");
    const uint8_t *v;
    uint32_t vlen;
    cube_status st = cube_get(gone, &v, &vlen);
    if (st != CUBE_OK && st != CUBE_NOT_FOUND) return failed("get", st);
    say("get 5,5: %s", st == CUBE_OK ? "true" : "false");

    int32_t lo[2] = {0, 0}, hi[2] = {9, 9};
    cube_region r;
    cube_point p;
    int n = 0;
    TRY("region", cube_region_open(&r, lo, hi));
    while (cube_region_next(&r, &p)) n++;
    TRY("region", cube_region_close(&r));
    say("region 0,0..9,9: %d", n);

    /* An inverted box: region_open's status, nothing to iterate. */
    int32_t ilo[2] = {3, 0}, ihi[2] = {1, 5};
    st = cube_region_open(&r, ilo, ihi);
    while (cube_region_next(&r, &p)) return cube_fail("kitcheck: an inverted box yielded a point");
    cube_status cst = cube_region_close(&r);
    say("inverted: %s", cst == st ? cube_status_string(st) : "close disagrees with open");

    TRY("link", cube_link(c1, c2, "new", 0.25, "val", 3));
    TRY("edges", edges("1,1 out", c1, CUBE_OUT, NULL));
    TRY("edges", edges("2,1 both", c2, CUBE_BOTH, ""));
    TRY("edges", edges("0,0 out t", a, CUBE_OUT, "t"));
    first = cube_unlink(gone, a, "old");
    if (first != CUBE_OK && first != CUBE_NOT_FOUND) return failed("unlink", first);
    again = cube_unlink(gone, a, "old");
    if (again != CUBE_OK && again != CUBE_NOT_FOUND) return failed("unlink", again);
    say("unlink 5,5>0,0 old: %s %s", first == CUBE_OK ? "true" : "false", again == CUBE_OK ? "true" : "false");
    TRY("edges", edges("0,0 in", a, CUBE_IN, NULL));

    TRY("walk", walk("bfs 0,0 t 3", a, (cube_walk_options){.order = CUBE_BFS, .max_depth = 3, .label = "t"}));
    TRY("walk", walk("bfs 0,0 t 3 limit 3", a,
                     (cube_walk_options){.order = CUBE_BFS, .max_depth = 3, .label = "t", .limit = 3}));
    TRY("walk", walk("bfs 2,1 in t 5", c2, (cube_walk_options){.max_depth = 5, .dir = CUBE_IN, .label = "t"}));
    TRY("walk", walk("default 0,0", a, (cube_walk_options){0}));

    TRY("path", path("0,0>2,1 p", a, c2, "p", CUBE_OUT));
    TRY("path", path("2,1>0,0 p in", c2, a, "p", CUBE_IN));
    TRY("path", path("2,1>0,0 p", c2, a, "p", CUBE_OUT));
    TRY("path", path("0,0>0,0", a, a, NULL, CUBE_OUT));
    TRY("path", path("0,0>1,1 both", a, c1, "", CUBE_BOTH));
    char m[32];
    snprintf(m, sizeof m, "kitcheck: %d lines", lines);
    cube_log(m);
    return cube_output(out, (uint32_t)outn) == CUBE_OK ? 0 : 1;
}
