// The AssemblyScript guest kit for cube's WebAssembly ABI v1
// (docs/ABI.md). Coordinates are i32[] of dims() elements, values
// Uint8Array; not-found is null or false; failures of the host (a limit, a
// write in a read-only run, a store error) are kept in `failure` and fail
// the run when it returns through `run`:
//
//   import * as cube from "<path>/plugins/pdk/assemblyscript/assembly";
//
//   export function run(): i32 { return cube.run(count); }
//
//   function count(): string | null {        // an error message, or null
//     let n = 0;
//     const r = new cube.Region([0, 0], [9, 9]);
//     while (r.next()) n++;                   // r.coord, r.value
//     cube.outputString(n.toString());
//     return null;
//   }
//
// Build with the pinned compiler (package.json), routing `abort` (failed
// assertions, out-of-bounds array accesses) to the run's error; the path is
// this file's, relative to the entry file, without ".ts":
//
//   asc prog.ts --runtime incremental -O3 --noAssert \
//       --use abort=<path>/plugins/pdk/assemblyscript/assembly/index/abort -o prog.wasm
//
// (or see examples/*/as/build.sh).
import * as abi from "./abi";

export enum Status {
  OK = 0,
  NotFound = 1,
  TooSmall = 2,
  Limit = 3,
  ReadOnly = 4,
  Aborted = 5,
  BadArgument = 6,
  Error = 7,
}

export enum Direction {
  Out = 0,
  In = 1,
  Both = 2,
}

export enum Order {
  BFS = 0,
  DFS = 1,
}

/** A failed host call: the operation and the status it got. */
export class Failure {
  constructor(public op: string, public status: Status) {}

  get message(): string {
    return "pdk: " + this.op + ": " + statusText(this.status);
  }
}

export function statusText(s: Status): string {
  switch (s) {
    case Status.OK: return "ok";
    case Status.NotFound: return "not found";
    case Status.TooSmall: return "buffer too small";
    case Status.Limit: return "a limit of the run was reached";
    case Status.ReadOnly: return "write in a read-only run";
    case Status.Aborted: return "the run was cancelled or ran out of time";
    case Status.BadArgument: return "bad argument";
    case Status.Error: return "the store failed";
  }
  return "unknown status " + (<i32>s).toString();
}

/** The run's first failed host call, or null. Reset by `run`. */
export let failure: Failure | null = null;

/**
 * clearFailure returns the run's first failed host call and forgets it, for
 * a program that handles the failure itself, such as Status.BadArgument from
 * a Region over an inverted box (min > max on some axis), which does not
 * fail the run. (An importing module cannot assign `failure`.) After
 * Status.Limit or Status.ReadOnly the run has failed whatever it does.
 */
export function clearFailure(): Failure | null {
  const f = failure;
  failure = null;
  return f;
}

/** failed records a failure (the first one wins) and returns false. */
function failed(op: string, st: i32): bool {
  if (failure === null) failure = new Failure(op, <Status>st);
  return false;
}

// Out-pointers of host calls: 8-aligned scratch words.
const out0 = memory.data(16, 8);
const out1 = out0 + 8;

let argsCache: Uint8Array | null = null;
let dimsCache: i32 = 0;

/**
 * run runs the program's body and returns what `run` must return: 0 on
 * success; otherwise the body's message (or the first failure's) becomes
 * the run's error.
 */
export function run(body: () => string | null): i32 {
  failure = null;
  argsCache = null;
  dimsCache = 0;
  let msg = body();
  if (msg === null && failure !== null) msg = failure!.message;
  if (msg === null) return 0;
  fail(msg);
  return 1;
}

/** fail sets the run's error message (for use outside `run`). */
export function fail(msg: string): void {
  const b = String.UTF8.encode(msg);
  abi.set_error(changetype<usize>(b), <u32>b.byteLength);
}

/** abort sends failed assertions and runtime errors to the run's error
 * and log, then traps. Build with `--use abort=<path to this file>/index/abort`,
 * or the module imports env.abort, which cube refuses. */
export function abort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  let m = "abort: " + (message !== null ? message : "");
  if (fileName !== null) m += " at " + fileName + ":" + line.toString() + ":" + column.toString();
  fail(m);
  log(m); // a trap does not carry set_error's message; the log does
  unreachable();
}

export function dims(): i32 {
  if (dimsCache == 0) dimsCache = abi.dims();
  return dimsCache;
}

/** args returns the run's argument bytes (shared; do not modify). */
export function args(): Uint8Array {
  if (argsCache === null) {
    const n = abi.args_len();
    const a = new Uint8Array(n);
    if (n > 0) abi.args_read(a.dataStart, <u32>n);
    argsCache = a;
  }
  return argsCache!;
}

/** output appends bytes to the run's result; false if the run failed. */
export function output(b: Uint8Array): bool {
  const st = abi.output_write(b.dataStart, <u32>b.length);
  return st == 0 || failed("output", st);
}

/** outputString appends s, as UTF-8, to the run's result. */
export function outputString(s: string): bool {
  const b = String.UTF8.encode(s);
  const st = abi.output_write(changetype<usize>(b), <u32>b.byteLength);
  return st == 0 || failed("output", st);
}

/** log adds a line to the run's log. */
export function log(s: string): void {
  const b = String.UTF8.encode(s);
  abi.log(changetype<usize>(b), <u32>b.byteLength);
}

/** coordPtr checks that c has dims() elements and returns its address. */
function coordPtr(c: i32[]): usize {
  if (c.length != dims()) {
    throw new Error("coordinate has " + c.length.toString() + " elements, want " + dims().toString());
  }
  return c.dataStart;
}

/** get returns the value at c, or null if there is none (or the host failed:
 * see `failure`). */
export function get(c: i32[]): Uint8Array | null {
  const k = coordPtr(c);
  let buf = new Uint8Array(256);
  for (;;) {
    const st = abi.get(k, buf.dataStart, <u32>buf.length, out0);
    if (st == Status.OK) return buf.subarray(0, load<u32>(out0));
    if (st == Status.NotFound) return null;
    if (st != Status.TooSmall) {
      failed("get", st);
      return null;
    }
    buf = new Uint8Array(load<u32>(out0));
  }
  return null; // not reached
}

/** getString returns the value at c decoded as UTF-8, or null. */
export function getString(c: i32[]): string | null {
  const v = get(c);
  return v === null ? null : String.UTF8.decodeUnsafe(v.dataStart, <usize>v.length);
}

/** put writes (replaces) the value at c in the run's transaction; false if
 * it failed (see `failure`). */
export function put(c: i32[], v: Uint8Array): bool {
  const st = abi.put(coordPtr(c), v.dataStart, <u32>v.length);
  return st == 0 || failed("put", st);
}

/** putString writes s, as UTF-8, at c. */
export function putString(c: i32[], s: string): bool {
  const b = String.UTF8.encode(s);
  const st = abi.put(coordPtr(c), changetype<usize>(b), <u32>b.byteLength);
  return st == 0 || failed("put", st);
}

/** del removes the value at c and reports whether there was one. */
export function del(c: i32[]): bool {
  const st = abi.del(coordPtr(c));
  if (st == Status.NotFound) return false;
  return st == 0 || failed("del", st);
}

/** A batch reader over a region or edge cursor. (Composition, not an
 * abstract base class: asc 0.28 mis-dispatched an abstract method here.) */
class Batches {
  cursor: u32 = 0;
  open: bool = false;
  buf: ArrayBuffer = new ArrayBuffer(65536);
  left: u32 = 0;
  off: usize = 0;
  status: Status = Status.OK;
  op: string = "";

  constructor(public edges: bool) {}

  /** start keeps the status of region_open, within_open or edges_open. */
  start(op: string, st: i32): void {
    this.op = op;
    if (st == Status.OK) {
      this.cursor = load<u32>(out0);
      this.open = true;
    } else {
      this.status = <Status>st;
      failed(op, st);
    }
  }

  /** nextBatch calls region_next or edges_next, growing the buffer while
   * a single record does not fit, and returns the status. */
  nextBatch(): i32 {
    let st = Status.TooSmall;
    while (st == Status.TooSmall) {
      const b = changetype<usize>(this.buf);
      const cap = <u32>this.buf.byteLength;
      if (this.edges) {
        st = abi.edges_next(this.cursor, b, cap, out0, out1);
      } else {
        st = abi.region_next(this.cursor, b, cap, out0, out1);
      }
      if (st == Status.TooSmall) this.buf = new ArrayBuffer(<i32>load<u32>(out1));
    }
    return st;
  }

  /** advance makes sure a record is at `off`; false at the end. */
  advance(): bool {
    if (!this.open) return false;
    if (this.left > 0) return true;
    const st = this.nextBatch();
    if (st != Status.OK) {
      this.status = <Status>st;
      failed(this.op, st);
      this.close();
      return false;
    }
    this.left = load<u32>(out0);
    this.off = changetype<usize>(this.buf);
    if (this.left == 0) {
      this.close();
      return false;
    }
    return true;
  }

  // The columns of the last nextColumns.
  coords: Int32Array = new Int32Array(0);
  lens: Uint32Array = new Uint32Array(0);
  vbuf: ArrayBuffer = new ArrayBuffer(65536);

  /** nextColumns reads the next batch of up to maxPoints points (1024 if
   * 0) with region_columns, growing the value buffer while one value does
   * not fit, and returns how many it read and their values' bytes in
   * out1; 0 at the end or on failure. */
  nextColumns(maxPoints: u32): u32 {
    if (!this.open) return 0;
    if (this.left > 0) {
      // records of region_next still wait in buf: mixing would reorder
      this.status = Status.BadArgument;
      failed(this.op, Status.BadArgument);
      this.close();
      return 0;
    }
    if (maxPoints == 0) maxPoints = 1024;
    if (<u32>this.lens.length < maxPoints) {
      this.lens = new Uint32Array(<i32>maxPoints);
      this.coords = new Int32Array(<i32>maxPoints * dims());
    }
    let st = Status.TooSmall;
    while (st == Status.TooSmall) {
      st = abi.region_columns(this.cursor, this.coords.dataStart, this.lens.dataStart, changetype<usize>(this.vbuf),
        maxPoints, <u32>this.vbuf.byteLength, out0, out1);
      if (st == Status.TooSmall) this.vbuf = new ArrayBuffer(<i32>load<u32>(out1));
    }
    if (st != Status.OK) {
      this.status = <Status>st;
      failed(this.op, st);
      this.close();
      return 0;
    }
    const n = load<u32>(out0);
    if (n == 0) this.close();
    return n;
  }

  /** wrap views n bytes at p (inside buf) as a Uint8Array. */
  wrap(p: usize, n: u32): Uint8Array {
    return Uint8Array.wrap(this.buf, <i32>(p - changetype<usize>(this.buf)), <i32>n);
  }

  close(): void {
    if (this.open) abi.cursor_close(this.cursor);
    this.open = false;
  }
}

/** Points is what Region and Within share: a point iteration read with
 * next (point records) or columns (region_columns). */
export class Points {
  coord: i32[];
  value: Uint8Array = new Uint8Array(0);
  protected b: Batches = new Batches(false);

  constructor() {
    this.coord = new Array<i32>(dims());
  }

  /** The iteration's status: OK while it runs and after a clean end. */
  get status(): Status {
    return this.b.status;
  }

  /** close ends the iteration early (it also ends by itself). */
  close(): void {
    this.b.close();
  }

  /** The batch of the last columns(): n points; point i has the coordinate
   * coords[i * dims() ..] and a value of lens[i] bytes, the values one
   * after another in vals. Valid until the next columns(). */
  n: u32 = 0;
  get coords(): Int32Array {
    return this.b.coords;
  }
  get lens(): Uint32Array {
    return this.b.lens;
  }
  vals: Uint8Array = new Uint8Array(0);

  /** columns reads the next batch of up to maxPoints points (1024 if 0)
   * as columns (region_columns: one host call a batch, no record around
   * each value), for loops that read many points and little of each;
   * false at the end or on failure. Do not mix it with next on one
   * iteration (Status.BadArgument while next holds records). */
  columns(maxPoints: u32 = 0): bool {
    this.n = this.b.nextColumns(maxPoints);
    if (this.n == 0) return false;
    this.vals = Uint8Array.wrap(this.b.vbuf, 0, <i32>load<u32>(out1));
    return true;
  }

  /** next moves to the next point; false at the end or on failure. */
  next(): bool {
    const v = nextPoint(this.b, this.coord);
    if (v === null) return false;
    this.value = v;
    return true;
  }
}


/**
 * Region iterates the points in the box [min, max], reading many per host
 * call:
 *
 *   const r = new cube.Region(min, max);
 *   while (r.next()) { r.coord; r.value; }
 *
 * coord and value are valid until the next call of next.
 */
export class Region extends Points {
  constructor(min: i32[], max: i32[]) {
    super();
    this.b.start("region", abi.region_open(coordPtr(min), coordPtr(max), out0));
  }
}

/** nextPoint decodes the next point record of b into coord and returns its
 * value; null at the end or on failure. */
function nextPoint(b: Batches, coord: i32[]): Uint8Array | null {
  if (!b.advance()) return null;
  const p = b.off;
  const d = coord.length;
  for (let i = 0; i < d; i++) unchecked((coord[i] = load<i32>(p + (<usize>i << 2))));
  const cw = <usize>d << 2;
  const n = load<u32>(p + cw);
  b.off = p + ((cw + 4 + n + 3) & ~3);
  b.left--;
  return b.wrap(p + cw + 4, n);
}

/**
 * Within iterates the points at distance at most r from a centre (a point
 * at exactly r is inside; Infinity for every point), reading many per host
 * call, like Region:
 *
 *   const w = new cube.Within(centre, 100);
 *   while (w.next()) { w.coord; w.value; }
 *
 * The order is the namespace's curve order; do not depend on it. Distances
 * are Euclidean over the coordinates (metres on the sphere in a GEO
 * namespace). An r that is NaN or negative fails with Status.BadArgument.
 */
export class Within extends Points {
  constructor(centre: i32[], r: f64) {
    super();
    this.b.start("within", abi.within_open(coordPtr(centre), r, out0));
  }
}

/** A point nearby found: its distance from the centre, coordinate and
 * value (its own copy). */
export class Neighbor {
  constructor(public dist: f64, public coord: i32[], public value: Uint8Array) {}
}

/**
 * nearby returns the k points nearest to centre, nearest first (points at
 * the same distance in curve order), leaving out those farther than
 * maxDist (a point at exactly maxDist stays; Infinity for no bound, 0 for
 * the point at centre alone); fewer than k when there are fewer. null if
 * the host failed (see `failure`): Status.BadArgument for k < 1 or a
 * maxDist that is NaN or negative.
 */
export function nearby(centre: i32[], k: i32, maxDist: f64 = Infinity): Neighbor[] | null {
  const c = coordPtr(centre);
  let buf = new ArrayBuffer(1024);
  let st: i32;
  do {
    st = abi.nearby(c, k, maxDist, changetype<usize>(buf), <u32>buf.byteLength, out0, out1);
    if (st == Status.TooSmall) buf = new ArrayBuffer(<i32>load<u32>(out1));
  } while (st == Status.TooSmall);
  if (st != Status.OK) {
    failed("nearby", st);
    return null;
  }
  const d = dims();
  const cw = <usize>d << 2;
  const n = <i32>load<u32>(out0);
  const out = new Array<Neighbor>(0);
  let p = changetype<usize>(buf);
  for (let i = 0; i < n; i++) {
    const vn = load<u32>(p + 8 + cw);
    const v = new Uint8Array(<i32>vn);
    memory.copy(v.dataStart, p + 12 + cw, vn);
    out.push(new Neighbor(load<f64>(p), readCoord(p + 8, d), v));
    p += (12 + cw + vn + 7) & ~7;
  }
  return out;
}

/**
 * Edges iterates the edges of a coordinate:
 *
 *   const e = new cube.Edges(c, cube.Direction.Out, "");
 *   while (e.next()) { e.to; e.weight; e.label; }
 *
 * The fields are valid until the next call of next.
 */
export class Edges {
  from: i32[];
  to: i32[];
  weight: f64 = 0;
  label: string = "";
  value: Uint8Array = new Uint8Array(0);
  private b: Batches = new Batches(true);

  constructor(c: i32[], dir: Direction = Direction.Out, label: string = "") {
    this.from = new Array<i32>(dims());
    this.to = new Array<i32>(dims());
    const l = String.UTF8.encode(label);
    this.b.start("edges", abi.edges_open(coordPtr(c), <u32>dir, changetype<usize>(l), <u32>l.byteLength, out0));
  }

  /** The iteration's status: OK while it runs and after a clean end. */
  get status(): Status {
    return this.b.status;
  }

  /** close ends the iteration early (it also ends by itself). */
  close(): void {
    this.b.close();
  }

  /** next moves to the next edge; false at the end or on failure. */
  next(): bool {
    const b = this.b;
    if (!b.advance()) return false;
    const p = b.off;
    const d = this.from.length;
    const cw = <usize>d << 2;
    this.weight = load<f64>(p);
    const ln = load<u32>(p + 8);
    const vn = load<u32>(p + 12);
    for (let i = 0; i < d; i++) {
      unchecked((this.from[i] = load<i32>(p + 16 + (<usize>i << 2))));
      unchecked((this.to[i] = load<i32>(p + 16 + cw + (<usize>i << 2))));
    }
    this.label = String.UTF8.decodeUnsafe(p + 16 + 2 * cw, ln);
    this.value = b.wrap(p + 16 + 2 * cw + ln, vn);
    b.off = p + ((16 + 2 * cw + ln + vn + 7) & ~7);
    b.left--;
    return true;
  }
}

/** link creates or replaces the edge from -[label]-> to. */
export function link(from: i32[], to: i32[], label: string, weight: f64 = 1, value: Uint8Array | null = null): bool {
  const l = String.UTF8.encode(label);
  const v = value !== null ? value!.dataStart : 0;
  const vn = value !== null ? value!.length : 0;
  const st = abi.link(coordPtr(from), coordPtr(to), changetype<usize>(l), <u32>l.byteLength, weight, v, <u32>vn);
  return st == 0 || failed("link", st);
}

/** unlink removes an edge and reports whether it existed. */
export function unlink(from: i32[], to: i32[], label: string): bool {
  const l = String.UTF8.encode(label);
  const st = abi.unlink(coordPtr(from), coordPtr(to), changetype<usize>(l), <u32>l.byteLength);
  if (st == Status.NotFound) return false;
  return st == 0 || failed("unlink", st);
}

/** A node reached by a walk; the start has depth 0 and from == coord. */
export class Step {
  constructor(public depth: i32, public coord: i32[], public from: i32[]) {}
}

function readCoord(p: usize, d: i32): i32[] {
  const c = new Array<i32>(d);
  for (let i = 0; i < d; i++) unchecked((c[i] = load<i32>(p + (<usize>i << 2))));
  return c;
}

/** walk runs the store's built-in walk from start; null if it failed. */
export function walk(start: i32[], order: Order = Order.BFS, maxDepth: i32 = 1, dir: Direction = Direction.Out,
                     label: string = "", limit: i32 = 0): Step[] | null {
  const k = coordPtr(start);
  const l = String.UTF8.encode(label);
  let buf = new ArrayBuffer(4096);
  // (A do-while, not for (;;) with break: asc 0.28 then rejects the
  // function with TS2355, "must return a value".)
  let st: i32;
  do {
    st = abi.walk(k, <u32>order, maxDepth, <u32>dir, changetype<usize>(l), <u32>l.byteLength, limit,
      changetype<usize>(buf), <u32>buf.byteLength, out0);
    if (st == Status.TooSmall) buf = new ArrayBuffer(<i32>load<u32>(out0));
  } while (st == Status.TooSmall);
  if (st != Status.OK) {
    failed("walk", st);
    return null;
  }
  const d = dims();
  const size = 4 + 8 * d;
  const n = <i32>load<u32>(out0) / size;
  const steps = new Array<Step>(0);
  const base = changetype<usize>(buf);
  for (let i = 0; i < n; i++) {
    const p = base + <usize>(i * size);
    steps.push(new Step(load<i32>(p), readCoord(p + 4, d), readCoord(p + 4 + 4 * d, d)));
  }
  return steps;
}

/** A weighted path, start and end included. */
export class Path {
  constructor(public coords: i32[][], public weight: f64) {}
}

/** shortestPath returns the least-weight path, or null if there is none
 * (or the host failed: see `failure`). */
export function shortestPath(from: i32[], to: i32[], label: string = "", dir: Direction = Direction.Out): Path | null {
  const l = String.UTF8.encode(label);
  const d = dims();
  let buf = new ArrayBuffer(64 * 4 * d);
  let st: i32;
  do {
    st = abi.shortest_path(coordPtr(from), coordPtr(to), changetype<usize>(l), <u32>l.byteLength, <u32>dir,
      out1, changetype<usize>(buf), <u32>buf.byteLength, out0);
    if (st == Status.TooSmall) buf = new ArrayBuffer(<i32>load<u32>(out0));
  } while (st == Status.TooSmall);
  return pathOf(st, buf, d);
}

/** shortestPathHops is shortestPath among the paths of at most maxHops
 * edges (0: any number): the least weight with few enough edges, which may
 * weigh more than the unbounded path; null when no path is that short (or
 * the host failed: Status.BadArgument for a negative maxHops). */
export function shortestPathHops(from: i32[], to: i32[], label: string = "", dir: Direction = Direction.Out,
                                 maxHops: i32 = 0): Path | null {
  const l = String.UTF8.encode(label);
  const d = dims();
  let buf = new ArrayBuffer(64 * 4 * d);
  let st: i32;
  do {
    st = abi.shortest_path_hops(coordPtr(from), coordPtr(to), changetype<usize>(l), <u32>l.byteLength, <u32>dir,
      maxHops, out1, changetype<usize>(buf), <u32>buf.byteLength, out0);
    if (st == Status.TooSmall) buf = new ArrayBuffer(<i32>load<u32>(out0));
  } while (st == Status.TooSmall);
  return pathOf(st, buf, d);
}

/** pathOf decodes the answer of shortest_path or shortest_path_hops. */
function pathOf(st: i32, buf: ArrayBuffer, d: i32): Path | null {
  if (st == Status.NotFound) return null;
  if (st != Status.OK) {
    failed("shortest path", st);
    return null;
  }
  const n = <i32>load<u32>(out0) / (4 * d);
  const cs = new Array<i32[]>(0);
  for (let i = 0; i < n; i++) cs.push(readCoord(changetype<usize>(buf) + <usize>(i * 4 * d), d));
  return new Path(cs, load<f64>(out1));
}
