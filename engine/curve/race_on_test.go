//go:build race

package curve_test

// raceEnabled: under -race sync.Pool drops items on purpose, so allocation
// counts are meaningless.
const raceEnabled = true
