//go:build !linux

package server

import (
	"context"
	"net"
	"time"
)

// The event loop is Linux only (epoll); elsewhere a goroutine serves each
// connection.
type loop struct{}

type loopConn struct {
	stats []doneCmd
	began time.Time
}

func newLoop(*Server, context.Context) *loop { return nil }
func (*loop) add(*conn, net.Conn) bool       { return false }
func (*loop) startDrain()                    {}
func (*loop) kill()                          {}
func (*loop) wait()                          {}
