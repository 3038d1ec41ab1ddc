package vmtest

import (
	"math"
	"slices"

	"github.com/cubelinux/cube/vm"
)

// A geographic host (NewGeoHost) measures as the engine's geo namespaces
// do: the haversine on a sphere of the mean Earth radius, 6,371,008.8 m,
// over (longitude, latitude) in 1e-7 degree. The formula is the engine's,
// operation for operation (vm imports nothing of the engine), so that
// the reference host and the engine agree on every distance to the bit,
// and by brute force, so that the engine's search has something to be
// compared with.

const (
	geoScale    = 10_000_000
	earthRadius = 6_371_008.8
	unitRad     = math.Pi / 180 / geoScale
)

func geoInRange(c []int32) bool {
	return c[0] >= -180*geoScale && c[0] <= 180*geoScale && c[1] >= -90*geoScale && c[1] <= 90*geoScale
}

// geoDist is the distance in metres from a (a query's centre) to b.
func geoDist(a, b []int32) float64 {
	cosA := math.Cos(float64(a[1]) * unitRad)
	dlat := float64(int64(b[1])-int64(a[1])) * unitRad
	dlon := float64(int64(b[0])-int64(a[0])) * unitRad
	sLat, sLon := math.Sin(dlat/2), math.Sin(dlon/2)
	h := sLat*sLat + cosA*math.Cos(float64(b[1])*unitRad)*sLon*sLon
	return 2 * earthRadius * math.Asin(math.Sqrt(min(h, 1)))
}

// geoNearby is Nearby on a geographic host; the caller holds mu.
func (h *Host) geoNearby(c []int32, k int, maxDist float64) []vm.Neighbor {
	var all []vm.Neighbor
	for _, key := range h.st.sortedKeys() {
		p := decode(key)
		d := geoDist(c, p)
		if maxDist > 0 && d > maxDist {
			continue
		}
		all = append(all, vm.Neighbor{Coord: p, Value: h.st.values[key], Dist: d})
	}
	// Stable: equal distances keep the coordinate order.
	slices.SortStableFunc(all, func(a, b vm.Neighbor) int {
		switch {
		case a.Dist < b.Dist:
			return -1
		case a.Dist > b.Dist:
			return 1
		}
		return 0
	})
	return all[:min(k, len(all))]
}
