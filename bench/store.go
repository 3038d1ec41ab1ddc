package main

import "context"

// A store loads the dataset once and answers the queries it supports;
// each kind of query is an interface of its own, and a store that lacks
// one gets a dash in the table.
type store interface {
	name() string
	// load writes the dataset and leaves the store at rest (checkpointed,
	// flushed, compacted: whatever the store's own word for it is).
	load(ctx context.Context, d *dataset) error
	close() error
}

type boxer interface {
	box(ctx context.Context, lo, hi point, a *answer) error
}

type getter interface {
	get(ctx context.Context, p point, a *answer) error
}

// nearester returns the k nearest 3-D points (appended to out), their
// values added to a.
type nearester interface {
	nearest(ctx context.Context, c point, k int, out []point, a *answer) ([]point, error)
}

type withiner interface {
	within(ctx context.Context, c point, r float64, a *answer) error
}

// The same two on the 2-D set (dataset.flat).
type flatNearester interface {
	flatNearest(ctx context.Context, c point, k int, out []point, a *answer) ([]point, error)
}

type flatWithiner interface {
	flatWithin(ctx context.Context, c point, r float64, a *answer) error
}

type walker interface {
	walk(ctx context.Context, start point, hops int) (walkAnswer, error)
}

type pather interface {
	path(ctx context.Context, from, to point, hops int) ([]point, float64, bool, error)
}
