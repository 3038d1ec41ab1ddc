package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/server"
)

// serveCommand is "cube serve": the daemon.
type serveCommand struct {
	*env
	listen, authFile, metrics, syncMode  string
	maxClients, maxUnix                  int
	noEventLoop                          bool
	idle, unixIdle, reqTimeout, authTime time.Duration
	maxEvalTimeout                       time.Duration
	maxEvalMemory                        int64
	jsInProcess                          bool
	cluster                              clusterFlags
}

func serveCmd(e *env) *cobra.Command {
	c := &serveCommand{env: e}
	cmd := &cobra.Command{
		Use:   "serve [--data DIR] [--socket PATH] [--listen ADDR] [--auth-file F] [flags]",
		Short: "Run the daemon on a data directory",
		Long: `Runs the daemon on the data directory (--data, $CUBE_DATA or ./cube.data),
making a store there if there is none. It listens on DIR/cube.sock (mode
0600), or on --socket PATH, and, with --listen, on TCP too, where
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

Cluster mode (--cluster, docs/CLUSTER.md): writes go to the leader (a
follower answers MOVED 0 leader-addr). Reads on the leader are
linearizable. A follower answers a read only if its store holds every
write acknowledged more than --max-stale ago (default 500ms; 0: followers
answer no reads), else redirects it to the leader with MOVED, or answers
TRYAGAIN while no leader is known; INFO cluster shows how stale it is.`,
		Example: `  cube serve --data world.data
  cube serve --data world.data --sync interval --metrics 127.0.0.1:9100
  CUBE_AUTH=secret cube serve --data world.data --listen 127.0.0.1:6380`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return c.Run(cmd.Context()) },
	}
	f := cmd.Flags()
	f.StringVar(&c.listen, "listen", "", "TCP address; requires a token")
	f.StringVar(&c.authFile, "auth-file", "", "file holding the AUTH token (default $CUBE_AUTH)")
	f.StringVar(&c.metrics, "metrics", "", "address for Prometheus metrics")
	f.StringVar(&c.syncMode, "sync", "always", "always, interval or none")
	f.IntVar(&c.maxClients, "max-clients", server.DefaultMaxClients, "most open TCP connections")
	f.IntVar(&c.maxUnix, "max-unix-clients", server.DefaultMaxUnixClients, "most open Unix socket connections")
	f.DurationVar(&c.idle, "idle-timeout", server.DefaultIdleTimeout, "close TCP connections idle this long (0: never)")
	f.DurationVar(&c.unixIdle, "unix-idle-timeout", 0, "close Unix socket connections idle this long (0: never)")
	f.DurationVar(&c.reqTimeout, "request-timeout", server.DefaultRequestTimeout, "time a request may take to arrive, from its first byte")
	f.DurationVar(&c.authTime, "auth-timeout", server.DefaultAuthTimeout, "time a TCP connection may take to AUTH")
	f.DurationVar(&c.maxEvalTimeout, "max-eval-timeout", server.DefaultMaxEvalTimeout, "longest TIMEOUT an EVAL may ask for")
	f.Int64Var(&c.maxEvalMemory, "max-eval-memory", server.DefaultMaxEvalMemory>>20, "largest MEMORY (MiB) an EVAL may ask for")
	f.BoolVar(&c.jsInProcess, "js-in-process", false, "run JavaScript inside the daemon (only for code you trust: its memory and time limits are then best effort)")
	f.BoolVar(&c.noEventLoop, "no-event-loop", false, "serve each Unix socket connection from a goroutine, as TCP ones, instead of the event loop (for comparison)")
	f.MarkHidden("no-event-loop")
	c.cluster.add(f)
	return cmd
}

// Run serves until SIGTERM, SIGINT or SHUTDOWN, then drains and
// checkpoints. The data directory is --data and the socket --socket (the
// global flags, which here say where to serve rather than whom to ask).
func (c *serveCommand) Run(ctx context.Context) error {
	data, sock := c.dataDir(), c.socket
	if c.maxClients < 1 || c.maxUnix < 1 {
		return usagef("serve: --max-clients and --max-unix-clients must be at least 1")
	}
	if c.idle < 0 || c.unixIdle < 0 || c.reqTimeout <= 0 || c.authTime <= 0 {
		return usagef("serve: --request-timeout and --auth-timeout must be positive, --idle-timeout and --unix-idle-timeout 0 (never) or positive")
	}
	if c.maxEvalTimeout < time.Millisecond || c.maxEvalMemory < 1 {
		return usagef("serve: --max-eval-timeout must be at least 1ms and --max-eval-memory at least 1 (MiB)")
	}
	if c.idle == 0 {
		c.idle = -1 // server.Options: negative is never, zero the default
	}
	mode, err := parseSync(c.syncMode)
	if err != nil {
		return err
	}
	token := strings.TrimSpace(c.getenv("CUBE_AUTH"))
	if c.authFile != "" {
		b, err := os.ReadFile(c.authFile)
		if err != nil {
			return fmt.Errorf("serve: read auth file: %w", err)
		}
		token = strings.TrimSpace(string(b))
		if token == "" {
			return fmt.Errorf("serve: auth file %s is empty", c.authFile)
		}
	}
	if c.listen != "" && token == "" {
		return usagef("serve: --listen needs a token: --auth-file FILE or CUBE_AUTH")
	}
	if err := c.cluster.check(c.listen); err != nil {
		return err
	}
	mode = c.cluster.storeSync(mode)
	if sock == "" {
		sock = filepath.Join(data, server.SocketName)
	}
	log := slog.New(slog.NewTextHandler(c.stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	var worker []string
	if !c.jsInProcess {
		if worker, err = jsWorkerCommand(); err != nil {
			return fmt.Errorf("serve: %w (or run JavaScript in process with --js-in-process)", err)
		}
	}
	db, err := c.openStore(data, cube.Options{Sync: mode, Logger: log, JSWorker: worker}, mayCreate)
	if err != nil {
		if errors.Is(err, cube.ErrLocked) {
			return fmt.Errorf("serve: data directory %s is in use by another process (a running daemon, or a program with it open); stop it, or give this daemon another --data", data)
		}
		return fmt.Errorf("serve: open %s: %w", data, err)
	}
	// Drained: checkpoint so the next start replays little, then close,
	// before the socket goes (AfterDrain), so that a socket that is gone
	// means a store another process may open (cube shutdown waits for it).
	// Cluster mode: Raft becomes the store's Replicator before anything
	// writes, and stops before the store closes.
	node, err := c.cluster.start(ctx, db, data, token, log, c.stderr)
	if err != nil {
		db.Close()
		return fmt.Errorf("serve: %w", err)
	}
	var closeErr error
	var closeOnce sync.Once
	closeStore := func() {
		closeOnce.Do(func() {
			if node != nil {
				if err := node.Close(); err != nil {
					log.Warn("cluster: stop Raft", "err", err)
				}
			}
			if _, err := db.Checkpoint(context.Background()); err != nil {
				log.Warn("checkpoint at shutdown", "err", err)
			}
			closeErr = db.Close()
		})
	}
	srv, err := server.New(db, server.Options{
		AfterDrain: closeStore,
		Socket:     sock, Listen: c.listen, AuthToken: token,
		MaxClients: c.maxClients, MaxUnixClients: c.maxUnix,
		IdleTimeout: c.idle, UnixIdleTimeout: c.unixIdle,
		RequestTimeout: c.reqTimeout, AuthTimeout: c.authTime,
		MaxEvalTimeout: c.maxEvalTimeout, MaxEvalMemory: c.maxEvalMemory << 20,
		Version: version(), Logger: log,
		Cluster: clusterOf(node), NoEventLoop: c.noEventLoop,
	})
	if err != nil {
		closeStore()
		return fmt.Errorf("serve: %w", err)
	}
	if c.metrics != "" {
		ln, err := net.Listen("tcp", c.metrics)
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
	addrs := []any{"data", data, "socket", sock, "sync", mode.String()}
	if c.listen != "" {
		addrs = append(addrs, "tcp", c.listen)
	}
	log.Info("cube serving", addrs...)
	serveErr := srv.Serve(ctx)
	if serveErr != nil {
		log.Warn("drain", "err", serveErr)
	}
	closeStore() // done already, unless Serve failed before its drain
	if closeErr != nil {
		return fmt.Errorf("serve: close: %w", closeErr)
	}
	log.Info("cube stopped")
	return nil
}

func parseSync(s string) (cube.SyncMode, error) {
	switch s {
	case "always", "":
		return cube.SyncAlways, nil
	case "interval":
		return cube.SyncInterval, nil
	case "none":
		return cube.SyncNone, nil
	}
	return 0, usagef("--sync must be always, interval or none, got %q", s)
}
