//go:build !linux

package jsproc

const hardMemory = false

func limitData(int64) {}

func dataSize() int64 { return 0 }

type dataMeter struct{}

func newDataMeter() *dataMeter { return &dataMeter{} }

func (*dataMeter) grown() int64 { return 0 }

func lowerPriority() {}
