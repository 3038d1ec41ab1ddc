package cube

import (
	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/curve"
	"github.com/cubelinux/cube/vm"
)

// The plain values a caller fills in or reads back: options, infos,
// edges, paths, walk steps, kinds and limits. They are the engine's and
// vm's own types under cube's names (aliases), because a value carries no
// behaviour to hide and a copy of each would only add conversions on
// every call. The handles a caller holds (DB, Namespace, Tx, Session) and
// what runs return (Result, Completion, Stats) are cube's own types.

// NamespaceOptions describe a namespace at creation; they never change.
// Dims is 1 to MaxDims; Curve is Hilbert (the zero value) or Morton;
// MaxValueSize 0 means DefaultMaxValueSize; Geo makes a geographic
// namespace (see GeoScale).
type NamespaceOptions = engine.NamespaceOptions

// NamespaceInfo describes a namespace and what it holds.
type NamespaceInfo = engine.NamespaceInfo

// Curve is the space-filling curve that orders a namespace's
// coordinates.
type Curve = curve.Kind

// The curves.
const (
	Hilbert Curve = curve.Hilbert // the default: consecutive keys are neighbouring cells
	Morton  Curve = curve.Morton  // Z-order: cheaper to compute, longer scans
)

// ParseCurve maps "hilbert" or "morton" (any case, surrounding space
// ignored) to a Curve.
//
// # Errors
//
// Any other name returns an error that says which names are known.
func ParseCurve(s string) (Curve, error) { return curve.ParseKind(s) }

// Limits of the store.
const (
	MaxDims             = engine.MaxDims             // dimensions of a namespace, at most
	MaxNameLen          = engine.MaxNameLen          // bytes of a namespace name or edge label, at most
	DefaultMaxValueSize = engine.DefaultMaxValueSize // a value's size limit when NamespaceOptions leave it 0
)

// A geographic namespace (NamespaceOptions{Geo: true}) has 2 dimensions,
// (longitude, latitude), each an int32 in units of 1e-7 degree (GeoScale
// units per degree: exact for any coordinate written with 7 decimals,
// about 1.1 cm), refuses writes outside longitude [-180, 180] and
// latitude [-90, 90] (ErrGeoRange), and measures Nearby, Within and
// CountWithin in metres on a sphere of radius EarthRadius (GeoDistance),
// across the antimeridian and over the poles.
const (
	GeoScale    = engine.GeoScale    // coordinate units in one degree of a geo namespace
	EarthRadius = engine.EarthRadius // metres: the mean Earth radius geo distances use
)

// GeoDistance returns the distance in metres between two coordinates of
// a geo namespace, by the haversine formula: the distance its Nearby and
// Within use, to the last bit.
func GeoDistance(a, b []int32) float64 { return engine.GeoDistance(a, b) }

// ParseDegrees reads decimal degrees ("2.3522", "-33.8688") into units of
// 1e-7 degree exactly, from the digits (never through a float); more
// than 7 decimals round half away from zero. It does not check the
// range.
func ParseDegrees(s string) (int32, error) { return engine.ParseDegrees(s) }

// FormatDegrees writes units of 1e-7 degree as decimal degrees, exactly,
// without trailing zeros (23522000 is "2.3522").
func FormatDegrees(v int32) string { return engine.FormatDegrees(v) }

// Edge is a directed, labelled edge From -[Label]-> To with a weight and
// optional bytes.
type Edge = engine.Edge

// Path is a least-weight path: its coordinates, start to end, and its
// total weight.
type Path = engine.Path

// Step is one node a walk reached.
type Step = engine.Step

// WalkOptions bound a built-in walk. The zero value walks one hop of
// outgoing edges of any label with no limit on the number of nodes.
type WalkOptions = engine.WalkOptions

// PathOptions choose the edges ShortestPathWith follows (Label, Direction)
// and bound the edges a path may have (MaxHops; 0 = no bound).
type PathOptions = engine.PathOptions

// Direction selects which edges of a coordinate to follow.
type Direction = engine.Direction

// The directions.
const (
	Out  Direction = engine.Out  // edges leaving the coordinate
	In   Direction = engine.In   // edges arriving at it
	Both Direction = engine.Both // both
)

// Order is the visiting order of a walk.
type Order = engine.Order

// The orders.
const (
	BFS Order = engine.BFS // breadth first: nodes by increasing depth
	DFS Order = engine.DFS // depth first
)

// SyncMode says when a write is acknowledged relative to fsync.
type SyncMode = engine.SyncMode

// The sync modes; see engine.SyncMode for what a crash can lose in each.
const (
	SyncAlways   SyncMode = engine.SyncAlways   // the default: acknowledged once on disk
	SyncInterval SyncMode = engine.SyncInterval // synced every Options.SyncInterval
	SyncNone     SyncMode = engine.SyncNone     // synced at checkpoints and Close only
)

// CheckpointInfo describes one checkpoint written.
type CheckpointInfo = engine.CheckpointInfo

// Latency summarizes a latency histogram.
type Latency = engine.Latency

// RecoveryReport says what Open found and did.
type RecoveryReport = engine.RecoveryReport

// Kind names a program's runtime.
type Kind = vm.Kind

// The program kinds.
const (
	WASM Kind = vm.WASM // a WebAssembly module (ABI v1)
	JS   Kind = vm.JS   // JavaScript defining run(args)
)

// Limits bound one run of a program. The zero value of each field means
// its default (DefaultTimeout, ...); a negative value means no limit, for
// trusted programs only.
type Limits = vm.Limits

// Isolation says whether each run of a program starts from a fresh
// instance. The zero value is Fresh.
type Isolation = vm.Isolation

// The isolations.
const (
	Fresh Isolation = vm.Fresh // every run in a new instance: nothing leaks between runs
	Reuse Isolation = vm.Reuse // an instance kept per concurrent run (WASM guests slow to start)
)

// Defaults for the zero fields of Limits.
const (
	DefaultTimeout     = vm.DefaultTimeout
	DefaultMemoryBytes = vm.DefaultMemoryBytes
	DefaultOutputBytes = vm.DefaultOutputBytes
	DefaultWrites      = vm.DefaultWrites
	DefaultHostCalls   = vm.DefaultHostCalls
)
