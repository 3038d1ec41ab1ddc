package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/server"
)

type serveCommand struct{ *env }

func (c *serveCommand) Usage() string {
	return `usage: cube serve [--data DIR] [--socket PATH] [--listen ADDR] [--auth-file F]
                  [--metrics ADDR] [--sync always|interval|none]
                  [--max-clients N] [--max-unix-clients N] [--idle-timeout D]
                  [--unix-idle-timeout D] [--request-timeout D] [--auth-timeout D]
                  [--max-eval-timeout D] [--max-eval-memory MIB]

Runs the daemon on the data directory (--data, $CUBE_DATA or ./cube.data).
It listens on DIR/cube.sock (mode 0600) and, with --listen, on TCP too, where
every connection must AUTH with the token from --auth-file or $CUBE_AUTH.
SIGTERM or SIGINT (or the SHUTDOWN command) drains in-flight commands,
checkpoints, removes the socket and exits 0.

--sync always (default) acknowledges a write after it is on disk; interval
syncs every 250 ms (a crash loses at most about that); none is for bulk loads.
--metrics ADDR serves Prometheus metrics at http://ADDR/metrics.

Limits on clients: --max-clients bounds TCP connections and --max-unix-clients
the socket's, a budget of its own, so network clients never lock the owner
out. A TCP connection must authenticate within --auth-timeout (default 5s)
and may send only 4 KiB requests until it has; every request must arrive
whole within --request-timeout (default 10s) of its first byte; idle TCP
connections close after --idle-timeout (default 5m, 0 never), socket ones
after --unix-idle-timeout (default 0, never: a REPL keeps its session state
in its connection).

Limits on scripts: EVAL runs under 1s and 64 MiB unless it asks for more
with TIMEOUT ms and MEMORY mib, which may not pass --max-eval-timeout
(default 1m) and --max-eval-memory (default 1024 MiB). Programs' limits are
set when they are registered (PROG ... TIMEOUT ms MEMORY mib).
`
}

func (c *serveCommand) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	fs.Usage = func() { fmt.Fprint(c.stderr, c.Usage()) }
	data := fs.String("data", c.dataDir(), "data directory")
	sock := fs.String("socket", "", "Unix socket (default DIR/cube.sock)")
	listen := fs.String("listen", "", "TCP address; requires a token")
	authFile := fs.String("auth-file", "", "file holding the AUTH token")
	metrics := fs.String("metrics", "", "address for Prometheus metrics")
	syncMode := fs.String("sync", "always", "always, interval or none")
	maxClients := fs.Int("max-clients", server.DefaultMaxClients, "most open TCP connections")
	maxUnix := fs.Int("max-unix-clients", server.DefaultMaxUnixClients, "most open Unix socket connections")
	idle := fs.Duration("idle-timeout", server.DefaultIdleTimeout, "close TCP connections idle this long (0: never)")
	unixIdle := fs.Duration("unix-idle-timeout", 0, "close Unix socket connections idle this long (0: never)")
	reqTimeout := fs.Duration("request-timeout", server.DefaultRequestTimeout, "time a request may take to arrive, from its first byte")
	authTimeout := fs.Duration("auth-timeout", server.DefaultAuthTimeout, "time a TCP connection may take to AUTH")
	maxEvalTimeout := fs.Duration("max-eval-timeout", server.DefaultMaxEvalTimeout, "longest TIMEOUT an EVAL may ask for")
	maxEvalMemory := fs.Int64("max-eval-memory", server.DefaultMaxEvalMemory>>20, "largest MEMORY (MiB) an EVAL may ask for")
	jsInProcess := fs.Bool("js-in-process", false, "run JavaScript inside the daemon (only for code you trust: its memory and time limits are then best effort)")
	if err := fs.Parse(args); err != nil {
		return usagef("serve: %v", err)
	}
	if fs.NArg() > 0 {
		return usagef("serve: unexpected argument %q", fs.Arg(0))
	}
	if *maxClients < 1 || *maxUnix < 1 {
		return usagef("serve: --max-clients and --max-unix-clients must be at least 1")
	}
	if *idle < 0 || *unixIdle < 0 || *reqTimeout <= 0 || *authTimeout <= 0 {
		return usagef("serve: --request-timeout and --auth-timeout must be positive, --idle-timeout and --unix-idle-timeout 0 (never) or positive")
	}
	if *maxEvalTimeout < time.Millisecond || *maxEvalMemory < 1 {
		return usagef("serve: --max-eval-timeout must be at least 1ms and --max-eval-memory at least 1 (MiB)")
	}
	if *idle == 0 {
		*idle = -1 // server.Options: negative is never, zero the default
	}
	mode, err := parseSync(*syncMode)
	if err != nil {
		return err
	}
	token := strings.TrimSpace(c.getenv("CUBE_AUTH"))
	if *authFile != "" {
		b, err := os.ReadFile(*authFile)
		if err != nil {
			return fmt.Errorf("serve: read auth file: %w", err)
		}
		token = strings.TrimSpace(string(b))
		if token == "" {
			return fmt.Errorf("serve: auth file %s is empty", *authFile)
		}
	}
	if *listen != "" && token == "" {
		return usagef("serve: --listen needs a token: --auth-file FILE or CUBE_AUTH")
	}
	if *sock == "" {
		*sock = filepath.Join(*data, server.SocketName)
	}
	log := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var worker []string
	if !*jsInProcess {
		if worker, err = jsWorkerCommand(); err != nil {
			return fmt.Errorf("serve: %w (or run JavaScript in process with --js-in-process)", err)
		}
	}
	db, err := c.openStore(*data, cube.Options{Engine: engine.Options{Sync: mode}, Logger: log, JSWorker: worker}, true)
	if err != nil {
		if errors.Is(err, engine.ErrLocked) {
			return fmt.Errorf("serve: data directory %s is in use by another process (a running daemon, or a program with it open); stop it, or give this daemon another --data", *data)
		}
		return fmt.Errorf("serve: open %s: %w", *data, err)
	}
	srv, err := server.New(db, server.Options{
		Socket: *sock, Listen: *listen, AuthToken: token,
		MaxClients: *maxClients, MaxUnixClients: *maxUnix,
		IdleTimeout: *idle, UnixIdleTimeout: *unixIdle,
		RequestTimeout: *reqTimeout, AuthTimeout: *authTimeout,
		MaxEvalTimeout: *maxEvalTimeout, MaxEvalMemory: *maxEvalMemory << 20,
		Version: version(), Logger: log,
	})
	if err != nil {
		db.Close()
		return fmt.Errorf("serve: %w", err)
	}
	if *metrics != "" {
		ln, err := net.Listen("tcp", *metrics)
		if err != nil {
			db.Close()
			return fmt.Errorf("serve: metrics listener: %w", err)
		}
		mux := http.NewServeMux()
		mux.Handle("/metrics", srv.MetricsHandler())
		hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
		go hs.Serve(ln)
		defer hs.Close()
		log.Info("metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	}
	addrs := []any{"data", *data, "socket", *sock, "sync", mode.String()}
	if *listen != "" {
		addrs = append(addrs, "tcp", *listen)
	}
	log.Info("cube serving", addrs...)
	serveErr := srv.Serve(ctx)
	if serveErr != nil {
		log.Warn("drain", "err", serveErr)
	}
	// Drained: checkpoint so the next start replays little, then close.
	if _, err := db.Checkpoint(context.Background()); err != nil {
		log.Warn("checkpoint at shutdown", "err", err)
	}
	if err := db.Close(); err != nil {
		return fmt.Errorf("serve: close: %w", err)
	}
	log.Info("cube stopped")
	return nil
}

func parseSync(s string) (engine.SyncMode, error) {
	switch s {
	case "always", "":
		return engine.SyncAlways, nil
	case "interval":
		return engine.SyncInterval, nil
	case "none":
		return engine.SyncNone, nil
	}
	return 0, usagef("--sync must be always, interval or none, got %q", s)
}
