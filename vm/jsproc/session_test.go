package jsproc_test

import (
	"context"
	"errors"
	"testing"

	"github.com/cubelinux/cube/vm"
	"github.com/cubelinux/cube/vm/jsproc"
	"github.com/cubelinux/cube/vm/vmtest"
)

// TestSessionsPastTheLimitEvictTheIdlest: a daemon with more connections
// than session workers keeps serving; the longest idle session gives up
// its worker, and its next eval says its state was dropped (it used to be
// refused outright past 64). Catches: eviction of a busy or the newest
// session, and an evicted session that silently starts over.
func TestSessionsPastTheLimitEvictTheIdlest(t *testing.T) {
	p := newPool(t, jsproc.Options{MaxSessions: 2})
	h := vmtest.NewHost(2)
	ctx := context.Background()
	eval := func(s *jsproc.Session, code string) (string, error) {
		c, err := s.EvalArgs(ctx, h, code, nil)
		return string(c.Output), err
	}
	a, b, c := p.NewSession(vm.Limits{}), p.NewSession(vm.Limits{}), p.NewSession(vm.Limits{})
	defer a.Close()
	defer b.Close()
	defer c.Close()
	for i, s := range []*jsproc.Session{a, b} {
		if _, err := eval(s, "var mine = "+string(rune('1'+i))); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := eval(a, "mine"); err != nil { // a is now the more recent
		t.Fatal(err)
	}
	if _, err := eval(c, "var mine = 3"); err != nil {
		t.Fatalf("a third session past a limit of 2: %v", err)
	}
	if got, err := eval(a, "mine"); err != nil || got != "1" {
		t.Fatalf("a (recently used) lost its state: %q %v", got, err)
	}
	_, err := eval(b, "mine")
	if !errors.Is(err, jsproc.ErrSessionEvicted) {
		t.Fatalf("b (the idlest) after eviction: %v, want ErrSessionEvicted", err)
	}
	if got, err := eval(b, "typeof mine"); err != nil || got != "undefined" {
		t.Fatalf("b after the notice: %q %v, want a fresh scope", got, err)
	}
	if st := p.Stats(); st.Workers > 3 {
		t.Errorf("%d workers alive for 2 session places", st.Workers)
	}
}
