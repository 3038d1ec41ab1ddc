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
                  [--metrics ADDR] [--sync always|interval|none] [--max-clients N]
                  [--idle-timeout D]

Runs the daemon on the data directory (--data, $CUBE_DATA or ./cube.data).
It listens on DIR/cube.sock (mode 0600) and, with --listen, on TCP too, where
every connection must AUTH with the token from --auth-file or $CUBE_AUTH.
SIGTERM or SIGINT (or the SHUTDOWN command) drains in-flight commands,
checkpoints, removes the socket and exits 0.

--sync always (default) acknowledges a write after it is on disk; interval
syncs every 250 ms (a crash loses at most about that); none is for bulk loads.
--metrics ADDR serves Prometheus metrics at http://ADDR/metrics.
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
	maxClients := fs.Int("max-clients", server.DefaultMaxClients, "most open connections")
	idle := fs.Duration("idle-timeout", 0, "close connections idle this long (0: never)")
	if err := fs.Parse(args); err != nil {
		return usagef("serve: %v", err)
	}
	if fs.NArg() > 0 {
		return usagef("serve: unexpected argument %q", fs.Arg(0))
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
	db, err := cube.Open(*data, cube.Options{Engine: engine.Options{Sync: mode}, Logger: log})
	if err != nil {
		if errors.Is(err, engine.ErrLocked) {
			return fmt.Errorf("serve: data directory %s is in use by another process (a running daemon, or a program with it open); stop it, or give this daemon another --data", *data)
		}
		return fmt.Errorf("serve: open %s: %w", *data, err)
	}
	srv, err := server.New(db, server.Options{
		Socket: *sock, Listen: *listen, AuthToken: token, MaxClients: *maxClients,
		IdleTimeout: *idle, Version: version(), Logger: log,
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
