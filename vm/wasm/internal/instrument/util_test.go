package instrument_test

import (
	"math"
	"strconv"

	"github.com/tetratelabs/wazero/api"
)

// canonical formats a result, with every NaN alike: NaN payloads may
// differ between two compilations of the same code.
func canonical(t api.ValueType, v uint64) string {
	switch t {
	case api.ValueTypeF32:
		if f := math.Float32frombits(uint32(v)); f != f {
			return "nan"
		}
	case api.ValueTypeF64:
		if f := math.Float64frombits(v); f != f {
			return "nan"
		}
	}
	return strconv.FormatUint(v, 16)
}
