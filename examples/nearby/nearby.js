// nearby: the places in a box around a point, one per line, sorted.
//
// Argument: "lng,lat,r" in degrees, for a 2-dimensional namespace that
// stores places at (lng, lat) x 10^4, as `cube import --latlng` and
// `cube demo` do. The box is [lng-r, lng+r] x [lat-r, lat+r].
// Output: one line per place. A value that is a JSON object with a name
// (what --latlng stores) prints as "name (country)"; any other value
// prints as it is.
const SCALE = 1e4;

function label(v) {
  try {
    const o = JSON.parse(v);
    if (o !== null && typeof o === "object" && typeof o.name === "string") {
      return o.country ? o.name + " (" + o.country + ")" : o.name;
    }
  } catch (e) {
    // not JSON: the value itself
  }
  return v;
}

function run() {
  const parts = cube.args.split(",").map(Number);
  if (parts.length !== 3 || parts.some((x) => !Number.isFinite(x)) || parts[2] < 0) {
    throw new Error('nearby: the argument is "lng,lat,r" in degrees, e.g. "2.35,48.85,0.1"; got ' + JSON.stringify(cube.args));
  }
  const [lng, lat, r] = parts;
  const at = (d) => Math.round(d * SCALE);
  const out = [];
  for (const p of cube.region([at(lng - r), at(lat - r)], [at(lng + r), at(lat + r)])) {
    out.push(label(p.v));
  }
  return out.sort().join("\n");
}
