package cube

import "github.com/cubelinux/cube/engine"

// NearbyOptions bound Namespace.Nearby: MaxDist leaves out points
// farther than it (a point at exactly MaxDist stays; metres on a geo
// namespace); 0 means no bound.
type NearbyOptions = engine.NearbyOptions

// Neighbor is one point Namespace.Nearby found: its coordinate, value and
// Euclidean distance from the centre (rounded to a float64; the order of
// the results is by the exact distance, ties in curve order), or on a geo
// namespace its GeoDistance in metres.
type Neighbor = engine.Neighbor

// WithinOptions bound Namespace.Within: at most Limit points, 0 = all.
type WithinOptions = engine.WithinOptions
