// walk: from a start, follow the lightest outgoing edge until the value
// at the current coordinate equals the target.
// Arguments: the start (dims little-endian int32), then the target bytes.
// Output: the path, "x,y x,y ...". Ties on weight go to the smaller
// destination coordinate, then the smaller label. A dead end, or 64
// coordinates without the target, fails with "walk: not found".
const MAX_PATH = 64;

function cmpCoord(a, b) {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

function better(a, b) {
  if (a.weight !== b.weight) return a.weight < b.weight;
  const c = cmpCoord(a.to, b.to);
  if (c !== 0) return c < 0;
  return a.label < b.label;
}

function equal(a, b) {
  if (a === null || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

function run() {
  const a = cube.argsBytes, d = cube.dims;
  if (a.length < 4 * d) throw new Error("walk: bad arguments");
  const v = new DataView(a.buffer, a.byteOffset, a.length);
  let at = [];
  for (let i = 0; i < d; i++) at.push(v.getInt32(4 * i, true));
  const target = a.subarray(4 * d);
  const path = [];
  for (;;) {
    path.push(at.join(","));
    if (equal(cube.getBytes(at), target)) return path.join(" ");
    if (path.length === MAX_PATH) break;
    let best = null;
    for (const e of cube.edges(at, { dir: "out" })) {
      if (best === null || better(e, best)) best = e;
    }
    if (best === null) break;
    at = best.to;
  }
  throw new Error("walk: not found");
}
