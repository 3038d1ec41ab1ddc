// kitcheck: calls every cube function the other examples leave out — del,
// link, unlink, edges, walk (BFS and DFS), path, log — and the inverted-box
// error path (a TypeError), and prints what each returned. Its twins in Go,
// C and AssemblyScript must print the same text; the contract is in
// plugins/pdk/conformance's doc. With the argument "dfs" it runs only the
// depth-first walks; with "columns", only region and within read with
// columns() against their iterators; with "near", only the distance
// queries (nearby, within) and hop-bounded paths.
function co(c) { return c.join(","); }
function cost(w) { return String(Math.round(w * 100)); }
function sorted(a) { return a.slice().sort(); }

function steps(ss) {
  const d = [], s = [];
  for (const st of ss) {
    d.push(String(st.depth));
    s.push(co(st.c) + "@" + st.depth + (st.depth > 0 ? "<" + co(st.from) : ""));
  }
  return d.join(" ") + " | " + sorted(s).join(" ");
}

function edges(c, dir, label) {
  const s = [];
  for (const e of cube.edges(c, { dir: dir, label: label })) {
    s.push(co(e.from) + ">" + co(e.to) + " " + e.label + " cost=" + cost(e.weight) + " v=" + (e.v === null ? "" : e.v));
  }
  return sorted(s).join("; ");
}

function path(from, to, label, dir) {
  const p = cube.path(from, to, { label: label, dir: dir });
  if (p === null) return "none";
  return p.coords.map(co).join(" ") + " cost=" + cost(p.weight);
}

function neighbors(ns) {
  return ns.map(function (n) { return co(n.c) + "@" + cost(n.d) + "=" + n.v; }).join(" ");
}

function badArgument(f) {
  try {
    f();
    return "no error";
  } catch (e) {
    return e instanceof TypeError ? "bad argument" : String(e);
  }
}

function near() {
  const out = [], o = [0, 0], b = [37, -12], corner = [-50, 50];
  out.push("nearby 0,0 k=5: " + neighbors(cube.nearby(o, 5)));
  out.push("nearby 37,-12 k=12 max=10: " + neighbors(cube.nearby(b, 12, { maxDist: 10 })));
  out.push("nearby -50,50 k=3: " + neighbors(cube.nearby(corner, 3)));
  out.push("nearby 0,0 k=3 max=0: " + neighbors(cube.nearby(o, 3, { maxDist: 0 })));
  out.push("nearby 37,-12 k=3 max=0: " + neighbors(cube.nearby(b, 3, { maxDist: 0 })));
  const all = cube.nearby(o, 1000);
  out.push("nearby 0,0 k=1000: n=" + all.length + " last=" + neighbors(all.slice(-1)));
  out.push("nearby 0,0 k=0: " + badArgument(function () { cube.nearby(o, 0); }));
  const s = [];
  for (const p of cube.within(b, 15)) s.push(co(p.c) + "=" + p.v);
  out.push("within 37,-12 r=15: n=" + s.length + ": " + sorted(s).join(" "));
  out.push("within 0,0 r=NaN: " + badArgument(function () { for (const p of cube.within(o, NaN)) break; }));
  for (const hops of [1, 2, 3, 0]) {
    out.push("path 0,0>9,9 h hops=" + hops + ": " + pathHops([0, 0], [9, 9], hops));
  }
  out.push("path 9,9>0,0 h hops=2: " + pathHops([9, 9], [0, 0], 2));
  out.push("path 0,0>9,9 h hops=-1: " + badArgument(function () { cube.path(o, [9, 9], { label: "h", maxHops: -1 }); }));
  return out.join("\n");
}

function pathHops(from, to, hops) {
  const p = cube.path(from, to, { label: "h", maxHops: hops });
  if (p === null) return "none";
  return p.coords.map(co).join(" ") + " cost=" + cost(p.weight);
}

// columnsOf reads a region or radius with columns({max}) and says whether
// it gave the points of the same query read point by point, in order.
function columnsOf(name, cols, points, max) {
  const want = [];
  for (const p of points) want.push(co(p.c) + "=" + p.v);
  let n = 0, size = 0, same = true;
  for (;;) {
    const b = cols.columns({ max: max, values: "bytes" });
    if (b.n === 0) break;
    for (let i = 0; i < b.n; i++) {
      const c = b.c.map(function (axis) { return axis[i]; });
      let v = "";
      for (let k = b.off[i]; k < b.off[i + 1]; k++) v += String.fromCharCode(b.v[k]);
      same = same && n < want.length && want[n] === co(c) + "=" + v;
      n++;
      size += b.off[i + 1] - b.off[i];
    }
  }
  return "columns " + name + ": n=" + n + " bytes=" + size + " " + (same && n === want.length ? "same" : "differs");
}

function columns() {
  const lo = [-20, -20], hi = [20, 20], b = [37, -12], elo = [100, 100], ehi = [200, 200];
  return [
    columnsOf("region -20,-20..20,20", cube.region(lo, hi), cube.region(lo, hi), 7),
    columnsOf("within 37,-12 r=15", cube.within(b, 15), cube.within(b, 15), 1),
    columnsOf("region 100,100..200,200", cube.region(elo, ehi), cube.region(elo, ehi), 1000),
  ].join("\n");
}

function run() {
  const gone = [5, 5], a = [0, 0], c1 = [1, 1], c2 = [2, 1];
  const out = [];
  cube.log("kitcheck: start");
  if (cube.args === "near") return near();
  if (cube.args === "columns") return columns();
  if (cube.args === "dfs") {
    out.push("walk dfs 0,0 t 3: " + steps(cube.walk(a, { order: "dfs", depth: 3, label: "t" })));
    out.push("walk dfs 0,0 t 3 limit 3: " + steps(cube.walk(a, { order: "dfs", depth: 3, label: "t", limit: 3 })));
    return out.join("\n");
  }
  const first = cube.del(gone), again = cube.del(gone);
  out.push("del 5,5: " + first + " " + again);
  out.push("get 5,5: " + (cube.getBytes(gone) !== null));
  let n = 0;
  for (const p of cube.region([0, 0], [9, 9])) n++;
  out.push("region 0,0..9,9: " + n);
  try {
    cube.region([3, 0], [1, 5]);
    out.push("inverted: no error");
  } catch (e) {
    out.push("inverted: " + (e instanceof TypeError ? "bad argument" : String(e)));
  }
  cube.link(c1, c2, "new", { weight: 0.25, value: "val" });
  out.push("edges 1,1 out: " + edges(c1, "out", ""));
  out.push("edges 2,1 both: " + edges(c2, "both", ""));
  out.push("edges 0,0 out t: " + edges(a, "out", "t"));
  const u1 = cube.unlink(gone, a, "old"), u2 = cube.unlink(gone, a, "old");
  out.push("unlink 5,5>0,0 old: " + u1 + " " + u2);
  out.push("edges 0,0 in: " + edges(a, "in", ""));
  out.push("walk bfs 0,0 t 3: " + steps(cube.walk(a, { order: "bfs", depth: 3, label: "t" })));
  out.push("walk bfs 0,0 t 3 limit 3: " + steps(cube.walk(a, { order: "bfs", depth: 3, label: "t", limit: 3 })));
  out.push("walk bfs 2,1 in t 5: " + steps(cube.walk(c2, { depth: 5, dir: "in", label: "t" })));
  out.push("walk default 0,0: " + steps(cube.walk(a)));
  out.push("path 0,0>2,1 p: " + path(a, c2, "p", "out"));
  out.push("path 2,1>0,0 p in: " + path(c2, a, "p", "in"));
  out.push("path 2,1>0,0 p: " + path(c2, a, "p", "out"));
  out.push("path 0,0>0,0: " + path(a, a, "", "out"));
  out.push("path 0,0>1,1 both: " + path(a, c1, "", "both"));
  cube.log("kitcheck: " + out.length + " lines");
  return out.join("\n");
}
