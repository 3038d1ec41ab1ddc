//go:build wasip1

// Command walk follows, from a start, the lightest outgoing edge until the
// value at the current coordinate equals the target; with the Go guest kit
// (plugins/pdk/go). Arguments: the start (dims little-endian int32), then
// the target bytes. Output: the path, "x,y x,y ...". Ties on weight go to
// the smaller destination coordinate, then the smaller label (bytewise). A
// dead end, or 64 coordinates without the target, fails with
// "walk: not found".
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"slices"
	"strconv"
	"strings"

	pdk "github.com/cubelinux/cube/plugins/pdk/go"
)

//go:generate env GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags=-s -o walk.wasm .

//go:wasmexport run
func run() int32 { return pdk.Run(walk) }

const maxPath = 64

var errNotFound = errors.New("walk: not found")

func walk() error {
	a, d := pdk.Args(), pdk.Dims()
	if len(a) < 4*d {
		return errors.New("walk: bad arguments")
	}
	at := make([]int32, d)
	for i := range at {
		at[i] = int32(binary.LittleEndian.Uint32(a[4*i:]))
	}
	target := a[4*d:]
	var path []string
	for {
		path = append(path, text(at))
		v, ok, err := pdk.Get(at)
		if err != nil {
			return err
		}
		if ok && bytes.Equal(v, target) {
			return pdk.OutputString(strings.Join(path, " "))
		}
		if len(path) == maxPath {
			return errNotFound
		}
		var best *pdk.Edge
		for e := range pdk.Edges(at, pdk.Out, "") {
			if best == nil || better(e, *best) {
				best = &pdk.Edge{To: slices.Clone(e.To), Label: e.Label, Weight: e.Weight}
			}
		}
		if err := pdk.Err(); err != nil {
			return err
		}
		if best == nil {
			return errNotFound
		}
		at = best.To
	}
}

// better reports whether a beats b: lighter, then a smaller destination,
// then a smaller label.
func better(a, b pdk.Edge) bool {
	if a.Weight != b.Weight {
		return a.Weight < b.Weight
	}
	if c := slices.Compare(a.To, b.To); c != 0 {
		return c < 0
	}
	return a.Label < b.Label
}

func text(c []int32) string {
	s := make([]string, len(c))
	for i, x := range c {
		s[i] = strconv.Itoa(int(x))
	}
	return strings.Join(s, ",")
}

func main() {}
