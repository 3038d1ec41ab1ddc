//go:build !wasip1

package pdk_test

import (
	"errors"
	"testing"

	pdk "github.com/cubelinux/cube/plugins/pdk/go"
)

// TestNotWASM: built for the host, the kit compiles and every call fails
// with ErrNotWASM instead of pretending.
func TestNotWASM(t *testing.T) {
	if _, _, err := pdk.Get([]int32{}); !errors.Is(err, pdk.ErrNotWASM) {
		t.Errorf("Get: %v", err)
	}
	if err := pdk.Put([]int32{}, []byte("v")); !errors.Is(err, pdk.ErrNotWASM) {
		t.Errorf("Put: %v", err)
	}
	if err := pdk.OutputString("x"); !errors.Is(err, pdk.ErrNotWASM) {
		t.Errorf("Output: %v", err)
	}
	if _, _, err := pdk.Get([]int32{1}); !errors.Is(err, pdk.ErrDims) {
		t.Errorf("Get with a wrong coordinate: %v", err)
	}
	if _, err := pdk.Nearby([]int32{}, 3, 0); !errors.Is(err, pdk.ErrNotWASM) {
		t.Errorf("Nearby: %v", err)
	}
	if _, _, err := pdk.ShortestPathWith([]int32{}, []int32{}, pdk.PathOptions{MaxHops: 2}); !errors.Is(err, pdk.ErrNotWASM) {
		t.Errorf("ShortestPathWith: %v", err)
	}
	for range pdk.Within([]int32{}, 1) {
		t.Fatal("a radius without a host yielded")
	}
	if err := pdk.ClearErr(); !errors.Is(err, pdk.ErrNotWASM) {
		t.Errorf("Err after a failed within: %v", err)
	}
	for range pdk.RegionColumns([]int32{}, []int32{}, 4) {
		t.Fatal("region columns without a host yielded")
	}
	if err := pdk.ClearErr(); !errors.Is(err, pdk.ErrNotWASM) {
		t.Errorf("Err after failed region columns: %v", err)
	}
	for range pdk.WithinColumns([]int32{}, 1, 0) {
		t.Fatal("radius columns without a host yielded")
	}
	if err := pdk.ClearErr(); !errors.Is(err, pdk.ErrNotWASM) {
		t.Errorf("Err after failed radius columns: %v", err)
	}
	for range pdk.Region([]int32{}, []int32{}) {
		t.Fatal("a region without a host yielded")
	}
	if !errors.Is(pdk.Err(), pdk.ErrNotWASM) {
		t.Errorf("Err after a failed region: %v", pdk.Err())
	}
	if err := pdk.ClearErr(); !errors.Is(err, pdk.ErrNotWASM) {
		t.Errorf("ClearErr after a failed region: %v", err)
	}
	if err := pdk.Err(); err != nil {
		t.Errorf("Err after ClearErr: %v", err)
	}
	// A failed iteration the body cleared does not fail the run; one it
	// left does.
	handled := func() error {
		for range pdk.Region([]int32{}, []int32{}) {
		}
		_ = pdk.ClearErr()
		return nil
	}
	if st := pdk.Run(handled); st != 0 {
		t.Errorf("Run of a body that cleared its failure: %d", st)
	}
	left := func() error {
		for range pdk.Region([]int32{}, []int32{}) {
		}
		return nil
	}
	if st := pdk.Run(left); st != 1 {
		t.Errorf("Run of a body that left a failed iteration: %d", st)
	}
	if st := pdk.Run(func() error { return nil }); st != 0 {
		t.Errorf("Run of a body that succeeds: %d", st)
	}
	if st := pdk.Run(func() error { return errors.New("boom") }); st != 1 {
		t.Errorf("Run of a body that fails: %d", st)
	}
}
