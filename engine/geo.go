package engine

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// A geographic namespace (NamespaceOptions.Geo) is a 2-D namespace whose
// coordinates are (longitude, latitude) in units of 1e-7 degree, as int32,
// the fixed point OpenStreetMap stores: exact for any coordinate written
// with at most 7 decimals, about 1.1 cm at the equator, and ±180° is
// 1.8e9, inside int32. Longitudes lie in [-180, 180] and latitudes in
// [-90, 90]; a write outside is refused (ErrGeoRange). Distances on it are
// metres on a sphere of radius EarthRadius, by the haversine formula
// (GeoDistance), and Nearby, Within and CountWithin measure with it.
//
// Those queries read lat/lon boxes that hold the spherical cap of the
// radius and keep the points GeoDistance puts inside it, so their answers
// are exactly what GeoDistance over every point would give. The box of a
// cap of angular radius δ around latitude φ spans φ±δ in latitude and
// ±asin(sin δ / cos φ) in longitude; when the cap holds a pole (φ+δ
// reaches ±90°) it spans every longitude, and when it crosses the
// antimeridian it is cut into two boxes, one each side. Boxes are widened
// by a margin far above the rounding of the float arithmetic (a
// billionth of the radius plus a few units), so that no point the
// haversine puts inside lies outside them.

// GeoScale is the number of coordinate units in one degree of a geo
// namespace: coordinates are degrees × 1e7, rounded.
const GeoScale = 10_000_000

// EarthRadius is the radius, in metres, of the sphere geo namespaces
// measure on: the mean Earth radius of IUGG (R1 = (2a+b)/3 of WGS 84).
// Distances on the sphere differ from those on the ellipsoid by up to
// about 0.5%.
const EarthRadius = 6_371_008.8

// The ranges of a geo coordinate, in units.
const (
	geoMaxLon = 180 * GeoScale
	geoMaxLat = 90 * GeoScale
)

// ErrGeoRange: a coordinate of a geo namespace outside longitude
// [-180, 180] or latitude [-90, 90].
var ErrGeoRange = errors.New("engine: coordinate outside longitude [-180, 180] / latitude [-90, 90]")

// unitRad is one coordinate unit in radians.
const unitRad = math.Pi / 180 / GeoScale

// checkGeo refuses a coordinate of a geo namespace out of range. c has
// 2 axes (checked before).
func checkGeo(c []int32) error {
	if c[0] < -geoMaxLon || c[0] > geoMaxLon || c[1] < -geoMaxLat || c[1] > geoMaxLat {
		return fmt.Errorf("%w: got longitude %s, latitude %s (a geo namespace stores (longitude, latitude) in units of 1e-7 degree, longitude first: -1800000000..1800000000, -900000000..900000000)",
			ErrGeoRange, FormatDegrees(c[0]), FormatDegrees(c[1]))
	}
	return nil
}

// GeoDistance returns the distance in metres between two coordinates of
// a geo namespace, (longitude, latitude) in 1e-7 degree, on the sphere of
// radius EarthRadius, by the haversine formula. It is the distance
// Nearby, Within and CountWithin use on a geo namespace, to the last bit.
func GeoDistance(a, b []int32) float64 {
	pa, pb := toPkey(a), toPkey(b)
	return geoDist(&pa, &pb, math.Cos(float64(pa[1])*unitRad))
}

// geoHav returns the haversine of the angle between a and b, given the
// cosine of a's latitude (the query's centre, computed once).
func geoHav(a, b *pkey, cosA float64) float64 {
	// The differences are taken on the integers, exactly, before
	// becoming angles: a float difference of two near latitudes would
	// lose the digits that make a short distance.
	dlat := float64(int64(b[1])-int64(a[1])) * unitRad
	dlon := float64(int64(b[0])-int64(a[0])) * unitRad
	sLat, sLon := math.Sin(dlat/2), math.Sin(dlon/2)
	return sLat*sLat + cosA*math.Cos(float64(b[1])*unitRad)*sLon*sLon
}

// havDist turns a haversine into metres.
func havDist(h float64) float64 {
	return 2 * EarthRadius * math.Asin(math.Sqrt(min(h, 1)))
}

func geoDist(a, b *pkey, cosA float64) float64 { return havDist(geoHav(a, b, cosA)) }

// geoBox is one box of a cap's cover, in units.
type geoBox struct{ min, max [2]int32 }

// geoCover returns the boxes (one or two) that hold every point within
// r metres of c, by GeoDistance. r is >= 0 (or +Inf).
func geoCover(c *pkey, r float64) []geoBox {
	world := []geoBox{{min: [2]int32{-geoMaxLon, -geoMaxLat}, max: [2]int32{geoMaxLon, geoMaxLat}}}
	// The margin: 1e-9 of the radius and 1e-11 radian (60 µm), far above
	// the float rounding of the haversine (a few 1e-16, relative).
	delta := r/EarthRadius*(1+1e-9) + 1e-11
	if delta >= math.Pi {
		return world
	}
	const pad = 2 // units added each side after rounding outwards
	lat := float64(c[1]) * unitRad
	latLo := int64(math.Floor((lat-delta)/unitRad)) - pad
	latHi := int64(math.Ceil((lat+delta)/unitRad)) + pad
	latLo, latHi = max(latLo, -geoMaxLat), min(latHi, geoMaxLat)
	full := func() []geoBox {
		return []geoBox{{min: [2]int32{-geoMaxLon, int32(latLo)}, max: [2]int32{geoMaxLon, int32(latHi)}}}
	}
	if lat+delta >= math.Pi/2 || lat-delta <= -math.Pi/2 {
		return full() // the cap holds a pole: every longitude
	}
	s := math.Sin(delta) / math.Cos(lat)
	if s >= 1 {
		return full()
	}
	dlon := math.Asin(s)*(1+1e-9) + 1e-11
	du := int64(math.Ceil(dlon/unitRad)) + pad
	if du >= geoMaxLon {
		return full()
	}
	lo, hi := int64(c[0])-du, int64(c[0])+du
	box := func(lo, hi int64) geoBox {
		return geoBox{min: [2]int32{int32(lo), int32(latLo)}, max: [2]int32{int32(hi), int32(latHi)}}
	}
	// -180 and 180 are one meridian: a box that reaches either goes on
	// from the other.
	switch {
	case hi >= geoMaxLon:
		return []geoBox{box(-geoMaxLon, hi-2*geoMaxLon), box(lo, geoMaxLon)}
	case lo <= -geoMaxLon:
		return []geoBox{box(-geoMaxLon, hi), box(lo+2*geoMaxLon, geoMaxLon)}
	}
	return []geoBox{box(lo, hi)}
}

// ParseDegrees reads an angle in decimal degrees ("2.3522", "-0.1278",
// "48") into units of 1e-7 degree, exactly: the digits are read as a
// decimal, never through a float, so a value written with at most 7
// decimals comes back as written. More decimals are rounded to 7 (half
// away from zero). It does not check the range (see a geo namespace's
// writes).
//
// # Errors
//
// Anything but an optional sign, digits and at most one decimal point,
// or a value beyond ±214.7483647 (outside int32).
func ParseDegrees(s string) (int32, error) {
	bad := func() (int32, error) {
		return 0, fmt.Errorf("%w: %q is not decimal degrees (like 2.3522 or -33.8688)", ErrGeoRange, s)
	}
	t := s
	neg := false
	if t != "" && (t[0] == '-' || t[0] == '+') {
		neg = t[0] == '-'
		t = t[1:]
	}
	whole, frac, _ := strings.Cut(t, ".")
	if whole == "" && frac == "" || !digits(whole) || !digits(frac) || len(whole) > 4 {
		return bad()
	}
	var v int64
	if whole != "" {
		v, _ = strconv.ParseInt(whole, 10, 64)
	}
	for i := range 7 {
		v *= 10
		if i < len(frac) {
			v += int64(frac[i] - '0')
		}
	}
	if len(frac) > 7 && frac[7] >= '5' {
		v++
	}
	if neg {
		v = -v
	}
	if v < math.MinInt32 || v > math.MaxInt32 {
		return bad()
	}
	return int32(v), nil
}

func digits(s string) bool {
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// FormatDegrees writes units of 1e-7 degree as decimal degrees, exactly,
// without trailing zeros: 23522000 is "2.3522", -1278000 is "-0.1278",
// 480000000 is "48".
func FormatDegrees(v int32) string {
	x := int64(v)
	var b []byte
	if x < 0 {
		b = append(b, '-')
		x = -x
	}
	b = strconv.AppendInt(b, x/GeoScale, 10)
	if f := x % GeoScale; f != 0 {
		s := strconv.FormatInt(f+GeoScale, 10)[1:] // 7 digits, leading zeros kept
		b = append(b, '.')
		b = append(b, strings.TrimRight(s, "0")...)
	}
	return string(b)
}
