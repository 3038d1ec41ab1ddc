// writer: doubles every decimal integer stored in a box, with the
// AssemblyScript guest kit (plugins/pdk/assemblyscript). Arguments: two
// corners, min then max (2 x dims little-endian int32). Output:
// "wrote=<values written>". A value counts if it is an optional '-' and 1 to
// 18 ASCII digits; doubles wrap at 64 bits. The whole region is read before
// the first write.
//
// Rebuild: ./build.sh writer (from this directory)
import * as cube from "../../../plugins/pdk/assemblyscript/assembly";

export function run(): i32 {
  return cube.run(writer);
}

class Point {
  constructor(public coord: i32[], public value: i64) {}
}

function writer(): string | null {
  const a = cube.args();
  const d = cube.dims();
  if (a.length != 8 * d) return "writer: bad arguments";
  const view = new DataView(a.buffer, a.byteOffset, a.length);
  const min = new Array<i32>(d);
  const max = new Array<i32>(d);
  for (let i = 0; i < d; i++) {
    min[i] = view.getInt32(4 * i, true);
    max[i] = view.getInt32(4 * (d + i), true);
  }
  const todo = new Array<Point>(0);
  const r = new cube.Region(min, max);
  while (r.next()) {
    if (isInt(r.value)) todo.push(new Point(r.coord.slice(0), parsed)); // r.coord is reused
  }
  if (r.status != cube.Status.OK) return null; // the run fails with the kit's failure
  for (let i = 0; i < todo.length; i++) {
    const p = todo[i];
    if (!cube.putString(p.coord, (p.value * 2).toString())) return null;
  }
  cube.outputString("wrote=" + todo.length.toString());
  return null;
}

let parsed: i64 = 0;

// isInt reports whether v is an optional '-' and 1 to 18 digits; the value
// goes to `parsed`.
function isInt(v: Uint8Array): bool {
  let i = 0;
  const neg = v.length > 0 && v[0] == 0x2d;
  if (neg) i = 1;
  const n = v.length - i;
  if (n == 0 || n > 18) return false;
  let x: i64 = 0;
  for (; i < v.length; i++) {
    const c = <i32>v[i] - 0x30;
    if (c < 0 || c > 9) return false;
    x = x * 10 + c;
  }
  parsed = neg ? -x : x;
  return true;
}
