// walk: from a start, follow the lightest outgoing edge until the value at
// the current coordinate equals the target; with the AssemblyScript guest
// kit (plugins/pdk/assemblyscript). Arguments: the start (dims little-endian
// int32), then the target bytes. Output: the path, "x,y x,y ...". Ties on
// weight go to the smaller destination coordinate, then the smaller label
// (bytewise, as UTF-8). A dead end, or 64 coordinates without the target,
// fails with "walk: not found".
//
// Rebuild: ./build.sh walk (from this directory)
import * as cube from "../../../plugins/pdk/assemblyscript/assembly";

const MAX_PATH = 64;

export function run(): i32 {
  return cube.run(walk);
}

function walk(): string | null {
  const a = cube.args();
  const d = cube.dims();
  if (a.length < 4 * d) return "walk: bad arguments";
  const view = new DataView(a.buffer, a.byteOffset, a.length);
  let at = new Array<i32>(d);
  for (let i = 0; i < d; i++) at[i] = view.getInt32(4 * i, true);
  const target = a.subarray(4 * d);
  const path = new Array<string>(0);
  for (;;) {
    path.push(at.join(","));
    const v = cube.get(at);
    if (cube.failure !== null) return null;
    if (v !== null && equal(v, target)) {
      cube.outputString(path.join(" "));
      return null;
    }
    if (path.length == MAX_PATH) break;
    let have = false;
    let weight: f64 = 0;
    let to = new Array<i32>(d);
    let label = new Uint8Array(0);
    const e = new cube.Edges(at, cube.Direction.Out, "");
    while (e.next()) {
      const l = Uint8Array.wrap(String.UTF8.encode(e.label));
      if (have && !better(e.weight, e.to, l, weight, to, label)) continue;
      have = true;
      weight = e.weight;
      to = e.to.slice(0);
      label = l;
    }
    if (e.status != cube.Status.OK) return null;
    if (!have) break;
    at = to;
  }
  return "walk: not found";
}

function equal(a: Uint8Array, b: Uint8Array): bool {
  if (a.length != b.length) return false;
  return memory.compare(a.dataStart, b.dataStart, a.length) == 0;
}

// better reports whether (w, to, label) beats the best so far: lighter,
// then a smaller destination, then a smaller label.
function better(w: f64, to: i32[], label: Uint8Array, bw: f64, bto: i32[], blabel: Uint8Array): bool {
  if (w != bw) return w < bw;
  for (let i = 0; i < to.length; i++) {
    if (to[i] != bto[i]) return to[i] < bto[i];
  }
  const n = min(label.length, blabel.length);
  for (let i = 0; i < n; i++) {
    if (label[i] != blabel[i]) return label[i] < blabel[i];
  }
  return label.length < blabel.length;
}
