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
// MaxValueSize 0 means DefaultMaxValueSize.
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
