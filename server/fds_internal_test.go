package server

import (
	"log/slog"
	"testing"
)

// TestFitFDs: the budgets fit the open-file limit with fdReserve to spare;
// TCP gives way first, the Unix budget keeps up to half the room.
//
// Caught: lowering the Unix budget first (nu = room - tcp: the 10000 case
// leaves the socket 1 connection).
func TestFitFDs(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, tt := range []struct{ limit, tcp, unix, wantTCP, wantUnix int }{
		{0, 10000, 1024, 10000, 1024},       // unknown: unchanged
		{1 << 20, 10000, 1024, 10000, 1024}, // room for both
		{10000, 10000, 1024, 8720, 1024},    // TCP gives way
		{1024, 10000, 1024, 384, 384},       // halves
		{100, 10000, 1024, 1, 1},            // a tiny limit still serves
		{20000, 10000, 10000, 9872, 9872},   // half each
	} {
		gt, gu := fitFDs(log, tt.limit, tt.tcp, tt.unix)
		if gt != tt.wantTCP || gu != tt.wantUnix {
			t.Errorf("fitFDs(%d, %d, %d) = %d, %d; want %d, %d", tt.limit, tt.tcp, tt.unix, gt, gu, tt.wantTCP, tt.wantUnix)
		}
		if tt.limit > 0 && gt+gu > max(tt.limit-fdReserve, 2) {
			t.Errorf("limit %d: budgets %d + %d leave less than %d files", tt.limit, gt, gu, fdReserve)
		}
	}
}
