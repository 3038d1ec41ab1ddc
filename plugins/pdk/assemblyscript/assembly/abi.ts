// The imports of cube's WebAssembly ABI v1 (docs/ABI.md §3). Pointers are
// offsets into this module's memory. Prefer the wrappers in index.ts.

@external("cube_v1", "args_len") export declare function args_len(): i32;
@external("cube_v1", "args_read") export declare function args_read(buf: usize, cap: u32): i32;
@external("cube_v1", "output_write") export declare function output_write(data: usize, len: u32): i32;
@external("cube_v1", "log") export declare function log(msg: usize, len: u32): i32;
@external("cube_v1", "set_error") export declare function set_error(msg: usize, len: u32): i32;
@external("cube_v1", "dims") export declare function dims(): i32;
@external("cube_v1", "get") export declare function get(coord: usize, val: usize, cap: u32, lenOut: usize): i32;
@external("cube_v1", "put") export declare function put(coord: usize, val: usize, len: u32): i32;
@external("cube_v1", "del") export declare function del(coord: usize): i32;
@external("cube_v1", "region_open") export declare function region_open(min: usize, max: usize, cursorOut: usize): i32;
@external("cube_v1", "region_next") export declare function region_next(cursor: u32, buf: usize, cap: u32, nOut: usize, bytesOut: usize): i32;
@external("cube_v1", "cursor_close") export declare function cursor_close(cursor: u32): i32;
@external("cube_v1", "edges_open") export declare function edges_open(coord: usize, dir: u32, label: usize, labelLen: u32, cursorOut: usize): i32;
@external("cube_v1", "edges_next") export declare function edges_next(cursor: u32, buf: usize, cap: u32, nOut: usize, bytesOut: usize): i32;
@external("cube_v1", "link") export declare function link(from: usize, to: usize, label: usize, labelLen: u32, weight: f64, val: usize, valLen: u32): i32;
@external("cube_v1", "unlink") export declare function unlink(from: usize, to: usize, label: usize, labelLen: u32): i32;
@external("cube_v1", "walk") export declare function walk(start: usize, order: u32, maxDepth: i32, dir: u32, label: usize, labelLen: u32, limit: i32, buf: usize, cap: u32, neededOut: usize): i32;
@external("cube_v1", "shortest_path") export declare function shortest_path(from: usize, to: usize, label: usize, labelLen: u32, dir: u32, weightOut: usize, buf: usize, cap: u32, neededOut: usize): i32;
// Added to v1 later (docs/ABI.md §9); a module imports them only if it calls
// the wrappers that use them.
@external("cube_v1", "shortest_path_hops") export declare function shortest_path_hops(from: usize, to: usize, label: usize, labelLen: u32, dir: u32, maxHops: i32, weightOut: usize, buf: usize, cap: u32, neededOut: usize): i32;
@external("cube_v1", "nearby") export declare function nearby(centre: usize, k: i32, maxDist: f64, buf: usize, cap: u32, nOut: usize, neededOut: usize): i32;
@external("cube_v1", "within_open") export declare function within_open(centre: usize, r: f64, cursorOut: usize): i32;
@external("cube_v1", "region_columns") export declare function region_columns(cursor: u32, coords: usize, lens: usize, vals: usize, capPoints: u32, valsCap: u32, nOut: usize, vbytesOut: usize): i32;
