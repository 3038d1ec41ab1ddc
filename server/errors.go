package server

import "errors"

// Errors returned by New and Serve. Test for them with errors.Is.
var (
	// ErrSocketInUse: another process is accepting connections on the
	// socket path. Stop it, or give this daemon another socket.
	ErrSocketInUse = errors.New("server: socket is in use by a running daemon")
	// ErrNotSocket: the socket path exists and is not a socket, so it is
	// left alone rather than deleted.
	ErrNotSocket = errors.New("server: socket path exists and is not a socket")
	// ErrNoAuth: a TCP listener was asked for without an auth token.
	ErrNoAuth = errors.New("server: --listen needs an auth token (--auth-file FILE or CUBE_AUTH)")
	// ErrNoListener: neither a socket nor a TCP address was given.
	ErrNoListener = errors.New("server: nothing to listen on (set Options.Socket or Options.Listen)")
	// ErrClosed: Serve was called twice, or after Shutdown.
	ErrClosed = errors.New("server: closed")
)
