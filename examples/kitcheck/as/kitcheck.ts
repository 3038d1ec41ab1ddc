// kitcheck: calls every function of the AssemblyScript guest kit
// (plugins/pdk/assemblyscript) that the other examples leave out — del,
// link, unlink, Edges, walk (BFS and DFS), shortestPath, log — and the
// inverted-box error path (a BadArgument failure, cleared with
// clearFailure), and prints what each returned. Its twins in Go, C and
// JavaScript must print the same text; the contract is in
// plugins/pdk/conformance's doc. With the argument "dfs" it runs only the
// depth-first walks; with "columns", only Region's and Within's columns()
// against their next(); with "near", only the distance queries (nearby,
// Within) and hop-bounded paths (shortestPathHops).
//
// Rebuild: ./build.sh kitcheck (from this directory)
import * as cube from "../../../plugins/pdk/assemblyscript/assembly";

export function run(): i32 {
  return cube.run(kitcheck);
}

function co(c: i32[]): string {
  return c.join(",");
}

function cost(w: f64): string {
  return (<i64>Math.round(w * 100)).toString();
}

function steps(ss: cube.Step[]): string {
  const d = new Array<string>(0);
  const s = new Array<string>(0);
  for (let i = 0; i < ss.length; i++) {
    const st = ss[i];
    d.push(st.depth.toString());
    let t = co(st.coord) + "@" + st.depth.toString();
    if (st.depth > 0) t += "<" + co(st.from);
    s.push(t);
  }
  s.sort();
  return d.join(" ") + " | " + s.join(" ");
}

function edges(c: i32[], dir: cube.Direction, label: string): string | null {
  const s = new Array<string>(0);
  const e = new cube.Edges(c, dir, label);
  while (e.next()) {
    s.push(co(e.from) + ">" + co(e.to) + " " + e.label + " cost=" + cost(e.weight) + " v=" +
      String.UTF8.decodeUnsafe(e.value.dataStart, <usize>e.value.length));
  }
  if (e.status != cube.Status.OK) return null;
  s.sort();
  return s.join("; ");
}

function path(from: i32[], to: i32[], label: string, dir: cube.Direction): string {
  const p = cube.shortestPath(from, to, label, dir);
  if (p === null) return "none";
  const s = new Array<string>(0);
  for (let i = 0; i < p.coords.length; i++) s.push(co(p.coords[i]));
  return s.join(" ") + " cost=" + cost(p.weight);
}

function walk(name: string, start: i32[], order: cube.Order, depth: i32, dir: cube.Direction, label: string,
              limit: i32): string | null {
  const ss = cube.walk(start, order, depth, dir, label, limit);
  if (ss === null) return null;
  return "walk " + name + ": " + steps(ss);
}

function neighbors(ns: cube.Neighbor[], from: i32): string {
  const s = new Array<string>(0);
  for (let i = from; i < ns.length; i++) {
    const n = ns[i];
    s.push(co(n.coord) + "@" + cost(n.dist) + "=" + String.UTF8.decodeUnsafe(n.value.dataStart, <usize>n.value.length));
  }
  return s.join(" ");
}

/** badArgument clears the failure a call left and names it. */
function badArgument(): string {
  const f = cube.clearFailure();
  if (f === null) return "no failure";
  return f.status == cube.Status.BadArgument ? "bad argument" : f.message;
}

function pathHops(from: i32[], to: i32[], hops: i32): string {
  const p = cube.shortestPathHops(from, to, "h", cube.Direction.Out, hops);
  if (p === null) return "none";
  const s = new Array<string>(0);
  for (let i = 0; i < p.coords.length; i++) s.push(co(p.coords[i]));
  return s.join(" ") + " cost=" + cost(p.weight);
}

/** near is the run with the argument "near". */
function near(): string | null {
  const o: i32[] = [0, 0];
  const b: i32[] = [37, -12];
  const corner: i32[] = [-50, 50];
  const to: i32[] = [9, 9];
  const out = new Array<string>(0);
  const names = ["0,0 k=5", "37,-12 k=12 max=10", "-50,50 k=3", "0,0 k=3 max=0", "37,-12 k=3 max=0"];
  const centres = [o, b, corner, o, b];
  const ks: i32[] = [5, 12, 3, 3, 3];
  const maxes: f64[] = [Infinity, 10, Infinity, 0, 0];
  for (let i = 0; i < names.length; i++) {
    const ns = cube.nearby(centres[i], ks[i], maxes[i]);
    if (ns === null) return null;
    out.push("nearby " + names[i] + ": " + neighbors(ns, 0));
  }
  const all = cube.nearby(o, 1000);
  if (all === null) return null;
  out.push("nearby 0,0 k=1000: n=" + all.length.toString() + " last=" + neighbors(all, all.length - 1));
  cube.nearby(o, 0);
  out.push("nearby 0,0 k=0: " + badArgument());

  const s = new Array<string>(0);
  const w = new cube.Within(b, 15);
  while (w.next()) s.push(co(w.coord) + "=" + String.UTF8.decodeUnsafe(w.value.dataStart, <usize>w.value.length));
  if (w.status != cube.Status.OK) return null;
  s.sort();
  out.push("within 37,-12 r=15: n=" + s.length.toString() + ": " + s.join(" "));
  const bad = new cube.Within(o, NaN);
  if (bad.next()) return "kitcheck: a radius of NaN yielded a point";
  out.push("within 0,0 r=NaN: " + badArgument());

  const hops: i32[] = [1, 2, 3, 0];
  for (let i = 0; i < hops.length; i++) {
    const p = pathHops(o, to, hops[i]);
    if (cube.failure !== null) return null;
    out.push("path 0,0>9,9 h hops=" + hops[i].toString() + ": " + p);
  }
  const back = pathHops(to, o, 2);
  if (cube.failure !== null) return null;
  out.push("path 9,9>0,0 h hops=2: " + back);
  pathHops(o, to, -1);
  out.push("path 0,0>9,9 h hops=-1: " + badArgument());
  cube.outputString(out.join("\n"));
  return null;
}

/** byNext reads a Region or Within with next(), a "c=v" string a point. */
function byNext<T>(it: T): string[] {
  const s = new Array<string>(0);
  while (it.next()) s.push(co(it.coord) + "=" + String.UTF8.decodeUnsafe(it.value.dataStart, <usize>it.value.length));
  return s;
}

/** byColumns reads a Region or Within with columns(max) and says whether it
 * gave the points of want, in order. */
function byColumns<T>(name: string, it: T, max: u32, want: string[]): string {
  let n = 0;
  let size: u32 = 0;
  let same = true;
  const d = cube.dims();
  while (it.columns(max)) {
    let off: usize = 0;
    for (let i = 0; i < <i32>it.n; i++) {
      const l = it.lens[i];
      const c = new Array<i32>(d);
      for (let k = 0; k < d; k++) c[k] = it.coords[i * d + k];
      const v = String.UTF8.decodeUnsafe(it.vals.dataStart + off, <usize>l);
      off += l;
      same = same && n < want.length && want[n] == co(c) + "=" + v;
      n++;
      size += l;
    }
  }
  const verdict = same && n == want.length ? "same" : "differs";
  return "columns " + name + ": n=" + n.toString() + " bytes=" + size.toString() + " " + verdict;
}

/** columns is the run with the argument "columns". */
function columns(): string | null {
  const out = new Array<string>(0);
  const lo: i32[] = [-20, -20];
  const hi: i32[] = [20, 20];
  const b: i32[] = [37, -12];
  const elo: i32[] = [100, 100];
  const ehi: i32[] = [200, 200];
  out.push(byColumns("region -20,-20..20,20", new cube.Region(lo, hi), 7, byNext(new cube.Region(lo, hi))));
  if (cube.failure !== null) return null;
  out.push(byColumns("within 37,-12 r=15", new cube.Within(b, 15), 1, byNext(new cube.Within(b, 15))));
  if (cube.failure !== null) return null;
  out.push(byColumns("region 100,100..200,200", new cube.Region(elo, ehi), 0, byNext(new cube.Region(elo, ehi))));
  if (cube.failure !== null) return null;
  cube.outputString(out.join("\n"));
  return null;
}

function kitcheck(): string | null {
  const gone: i32[] = [5, 5];
  const a: i32[] = [0, 0];
  const c1: i32[] = [1, 1];
  const c2: i32[] = [2, 1];
  const out = new Array<string>(0);
  cube.log("kitcheck: start");
  const args = cube.args();
  if (args.length == 4 && args[0] == 0x6e && args[1] == 0x65 && args[2] == 0x61 && args[3] == 0x72) return near(); // "near"
  if (args.length == 7 && String.UTF8.decodeUnsafe(args.dataStart, 7) == "columns") return columns();
  if (args.length == 3 && args[0] == 0x64 && args[1] == 0x66 && args[2] == 0x73) { // "dfs"
    let w = walk("dfs 0,0 t 3", a, cube.Order.DFS, 3, cube.Direction.Out, "t", 0);
    if (w === null) return null;
    out.push(w);
    w = walk("dfs 0,0 t 3 limit 3", a, cube.Order.DFS, 3, cube.Direction.Out, "t", 3);
    if (w === null) return null;
    out.push(w);
    cube.outputString(out.join("\n"));
    return null;
  }

  const first = cube.del(gone);
  const again = cube.del(gone);
  if (cube.failure !== null) return null;
  out.push("del 5,5: " + first.toString() + " " + again.toString());
  const v = cube.get(gone);
  if (cube.failure !== null) return null;
  out.push("get 5,5: " + (v !== null).toString());
  let n = 0;
  const r = new cube.Region([0, 0], [9, 9]);
  while (r.next()) n++;
  if (r.status != cube.Status.OK) return null;
  out.push("region 0,0..9,9: " + n.toString());

  // An inverted box: nothing to iterate, and a BadArgument failure that
  // this program handles and clears.
  const inv = new cube.Region([3, 0], [1, 5]);
  if (inv.next()) return "kitcheck: an inverted box yielded a point";
  const f = cube.clearFailure();
  if (f !== null && f.status == cube.Status.BadArgument && inv.status == cube.Status.BadArgument) {
    out.push("inverted: bad argument");
  } else {
    out.push("inverted: " + (f === null ? "no failure" : f.message));
  }

  if (!cube.link(c1, c2, "new", 0.25, Uint8Array.wrap(String.UTF8.encode("val")))) return null;
  let e = edges(c1, cube.Direction.Out, "");
  if (e === null) return null;
  out.push("edges 1,1 out: " + e);
  e = edges(c2, cube.Direction.Both, "");
  if (e === null) return null;
  out.push("edges 2,1 both: " + e);
  e = edges(a, cube.Direction.Out, "t");
  if (e === null) return null;
  out.push("edges 0,0 out t: " + e);
  const u1 = cube.unlink(gone, a, "old");
  const u2 = cube.unlink(gone, a, "old");
  if (cube.failure !== null) return null;
  out.push("unlink 5,5>0,0 old: " + u1.toString() + " " + u2.toString());
  e = edges(a, cube.Direction.In, "");
  if (e === null) return null;
  out.push("edges 0,0 in: " + e);

  let w = walk("bfs 0,0 t 3", a, cube.Order.BFS, 3, cube.Direction.Out, "t", 0);
  if (w === null) return null;
  out.push(w);
  w = walk("bfs 0,0 t 3 limit 3", a, cube.Order.BFS, 3, cube.Direction.Out, "t", 3);
  if (w === null) return null;
  out.push(w);
  w = walk("bfs 2,1 in t 5", c2, cube.Order.BFS, 5, cube.Direction.In, "t", 0);
  if (w === null) return null;
  out.push(w);
  const ss = cube.walk(a); // the defaults
  if (ss === null) return null;
  out.push("walk default 0,0: " + steps(ss));

  out.push("path 0,0>2,1 p: " + path(a, c2, "p", cube.Direction.Out));
  out.push("path 2,1>0,0 p in: " + path(c2, a, "p", cube.Direction.In));
  out.push("path 2,1>0,0 p: " + path(c2, a, "p", cube.Direction.Out));
  out.push("path 0,0>0,0: " + path(a, a, "", cube.Direction.Out));
  out.push("path 0,0>1,1 both: " + path(a, c1, "", cube.Direction.Both));
  if (cube.failure !== null) return null;
  cube.log("kitcheck: " + out.length.toString() + " lines");
  cube.outputString(out.join("\n"));
  return null;
}
