// aggregate: the sum of the decimal integers stored in a box.
// Arguments: two corners, min then max (2 x dims little-endian int32).
// Output: "sum=<sum> count=<integers added>"; values that are not an
// optional '-' and 1 to 18 digits are skipped; the sum wraps at 64 bits.
const INT = /^-?[0-9]{1,18}$/;

function corners(name) {
  const a = cube.argsBytes, d = cube.dims;
  if (a.length !== 8 * d) throw new Error(name + ": bad arguments");
  const v = new DataView(a.buffer, a.byteOffset, a.length);
  const c = [];
  for (let i = 0; i < 2 * d; i++) c.push(v.getInt32(4 * i, true));
  return [c.slice(0, d), c.slice(d)];
}

function run() {
  const [min, max] = corners("aggregate");
  let sum = 0n, count = 0;
  for (const p of cube.region(min, max)) {
    if (INT.test(p.v)) {
      sum = BigInt.asIntN(64, sum + BigInt(p.v));
      count++;
    }
  }
  return "sum=" + sum + " count=" + count;
}
