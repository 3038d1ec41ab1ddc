// aggregate: the sum of the decimal integers stored in a box, with the
// AssemblyScript guest kit (plugins/pdk/assemblyscript). Arguments: two
// corners, min then max (2 x dims little-endian int32). Output:
// "sum=<sum> count=<integers added>"; a value counts if it is an optional
// '-' and 1 to 18 ASCII digits; the sum wraps at 64 bits.
//
// Rebuild: ./build.sh aggregate (from this directory)
import * as cube from "../../../plugins/pdk/assemblyscript/assembly";

export function run(): i32 {
  return cube.run(aggregate);
}

function aggregate(): string | null {
  const a = cube.args();
  const d = cube.dims();
  if (a.length != 8 * d) return "aggregate: bad arguments";
  const view = new DataView(a.buffer, a.byteOffset, a.length);
  const min = new Array<i32>(d);
  const max = new Array<i32>(d);
  for (let i = 0; i < d; i++) {
    min[i] = view.getInt32(4 * i, true);
    max[i] = view.getInt32(4 * (d + i), true);
  }
  let sum: i64 = 0;
  let count: i64 = 0;
  const r = new cube.Region(min, max);
  while (r.next()) {
    if (isInt(r.value)) {
      sum += parsed;
      count++;
    }
  }
  cube.outputString("sum=" + sum.toString() + " count=" + count.toString());
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
