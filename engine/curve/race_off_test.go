//go:build !race

package curve_test

const raceEnabled = false
