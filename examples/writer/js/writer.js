// writer: doubles every decimal integer stored in a box.
// Arguments: two corners, min then max (2 x dims little-endian int32).
// Output: "wrote=<values written>". The whole region is read before the
// first write; doubles wrap at 64 bits.
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
  const [min, max] = corners("writer");
  const todo = cube.region(min, max).toArray().filter((p) => INT.test(p.v));
  for (const p of todo) {
    cube.put(p.c, String(BigInt.asIntN(64, 2n * BigInt(p.v))));
  }
  return "wrote=" + todo.length;
}
