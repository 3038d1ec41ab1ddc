//go:build wasip1

// Command aggregate is the sum of the decimal integers stored in a box,
// with the Go guest kit (plugins/pdk/go). Arguments: two corners, min then
// max (2 x dims little-endian int32). Output: "sum=<sum> count=<integers
// added>"; a value counts if it is an optional '-' and 1 to 18 ASCII digits;
// the sum wraps at 64 bits.
package main

import (
	"encoding/binary"
	"errors"
	"strconv"

	pdk "github.com/cubelinux/cube/plugins/pdk/go"
)

//go:generate env GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -ldflags=-s -o aggregate.wasm .

//go:wasmexport run
func run() int32 { return pdk.Run(aggregate) }

func aggregate() error {
	min, max, err := corners("aggregate")
	if err != nil {
		return err
	}
	var sum, count int64
	for _, v := range pdk.Region(min, max) {
		if n, ok := parseInt(v); ok {
			sum += n
			count++
		}
	}
	return pdk.OutputString("sum=" + strconv.FormatInt(sum, 10) + " count=" + strconv.FormatInt(count, 10))
}

// corners decodes the arguments: two coordinates.
func corners(name string) (min, max []int32, err error) {
	a, d := pdk.Args(), pdk.Dims()
	if len(a) != 8*d {
		return nil, nil, errors.New(name + ": bad arguments")
	}
	c := make([]int32, 2*d)
	for i := range c {
		c[i] = int32(binary.LittleEndian.Uint32(a[4*i:]))
	}
	return c[:d], c[d:], nil
}

// parseInt reports the value of an optional '-' and 1 to 18 digits.
func parseInt(v []byte) (int64, bool) {
	d := v
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range d {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if v[0] == '-' {
		n = -n
	}
	return n, true
}

func main() {}
