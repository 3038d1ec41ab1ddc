package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/server"
	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// verbCommand sends one daemon command and prints its reply: what
// "cube [-s SOCKET] put ns 1 2 v" runs (daemon.go).
type verbCommand struct{ *env }

func (c *verbCommand) Run(ctx context.Context, args []string) error {
	cl, done, err := c.connect(ctx)
	if err != nil {
		return err
	}
	defer done()
	a := make([]any, len(args))
	for i, s := range args {
		a[i] = s
	}
	v, err := c.do(ctx, cl, a...)
	if err != nil && !errors.Is(err, redis.Nil) {
		return err
	}
	if errors.Is(err, redis.Nil) {
		v = nil
	}
	return c.print(v)
}

// do sends one command and follows a cluster follower's redirect: a
// node that is not the leader answers a write with "MOVED 0 host:port",
// and the command goes there, over TCP with the token in $CUBE_AUTH, as
// redis-cli -c follows it. Without a token the error says how to send it.
func (e *env) do(ctx context.Context, cl *redis.Client, args ...any) (any, error) {
	v, err := cl.Do(ctx, args...).Result()
	addr, moved := movedTo(err)
	if !moved {
		return v, err
	}
	token := strings.TrimSpace(e.getenv("CUBE_AUTH"))
	if token == "" {
		return nil, fmt.Errorf("this node is a follower: the cluster's leader, at %s, takes writes; set CUBE_AUTH to the cluster's token and cube sends them there, or run the command on the leader's socket", addr)
	}
	leader := redis.NewClient(clientOptions("tcp", addr, token, 1))
	defer leader.Close()
	v, err = leader.Do(ctx, args...).Result()
	if addr2, moved := movedTo(err); moved {
		return nil, fmt.Errorf("the leader moved again (%s sent this to %s): the cluster is electing one; try again", addr, addr2)
	}
	return v, err
}

// movedTo reports the address of a "MOVED slot host:port" error.
func movedTo(err error) (string, bool) {
	if err == nil {
		return "", false
	}
	f := strings.Fields(err.Error())
	if len(f) != 3 || f[0] != "MOVED" {
		return "", false
	}
	return f[2], true
}

func (c *verbCommand) print(v any) error {
	if c.json {
		b, err := json.Marshal(jsonable(v))
		if err != nil {
			return err
		}
		fmt.Fprintf(c.stdout, "%s\n", b)
		return nil
	}
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			fmt.Fprintln(c.stdout, inline(e))
		}
	case map[any]any:
		keys := make([]string, 0, len(x))
		m := map[string]any{}
		for k, v := range x {
			ks := fmt.Sprint(k)
			keys = append(keys, ks)
			m[ks] = v
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(c.stdout, "%s: %s\n", k, inline(m[k]))
		}
	default:
		fmt.Fprintln(c.stdout, inline(v))
	}
	return nil
}

// inline formats a reply element on one line: arrays of integers (a
// coordinate) joined by spaces, other arrays by tabs, nil as (nil).
func inline(v any) string {
	switch x := v.(type) {
	case nil:
		return "(nil)"
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case []any:
		sep := "\t"
		if coordLike(x) {
			sep = " "
		}
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = inline(e)
		}
		return strings.Join(parts, sep)
	case map[any]any:
		b, _ := json.Marshal(jsonable(x))
		return string(b)
	}
	return fmt.Sprint(v)
}

// coordLike reports whether an array reads as a coordinate: integers, or
// the two decimal strings (longitude latitude) of a GEO namespace.
func coordLike(x []any) bool {
	ints, decimals := true, len(x) == 2
	for _, e := range x {
		if _, ok := e.(int64); !ok {
			ints = false
		}
		if s, ok := e.(string); !ok || !isDecimal(s) {
			decimals = false
		}
	}
	return ints || decimals
}

// isDecimal reports whether s is a decimal number as the daemon writes
// degrees: an optional minus, digits, and a fraction.
func isDecimal(s string) bool {
	s = strings.TrimPrefix(s, "-")
	whole, frac, dot := strings.Cut(s, ".")
	if whole == "" || dot && frac == "" {
		return false
	}
	for _, r := range whole + frac {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// jsonable turns RESP3 maps (map[any]any) into map[string]any.
func jsonable(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonable(e)
		}
		return out
	case map[any]any:
		out := map[string]any{}
		for k, e := range x {
			out[fmt.Sprint(k)] = jsonable(e)
		}
		return out
	}
	return v
}

// socketPath is -s, $CUBE_SOCKET, or the data directory's cube.sock.
func (e *env) socketPath() (path string, explicit bool) {
	if e.socket != "" {
		return e.socket, true
	}
	if s := e.getenv("CUBE_SOCKET"); s != "" {
		return s, true
	}
	return filepath.Join(e.dataDir(), server.SocketName), false
}

func newClient(sock string) *redis.Client {
	return redis.NewClient(clientOptions("unix", sock, "", 4))
}

// clientOptions are the CLI's for a connection to a daemon.
func clientOptions(network, addr, token string, pool int) *redis.Options {
	return &redis.Options{
		Network: network, Addr: addr, Password: token, Protocol: 3, DisableIdentity: true,
		ReadTimeout: -1, WriteTimeout: time.Minute, PoolSize: pool, MaxRetries: -1,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}
}

// connect returns a client for the daemon at the socket. Without -s or
// $CUBE_SOCKET and with no daemon at the data directory's socket, it opens
// the data directory itself and serves it in this process on a private
// socket for the duration of the command, so every verb also works on an
// embedded store. That store must exist: a verb never makes one.
func (e *env) connect(ctx context.Context) (*redis.Client, func(), error) {
	return e.dial(ctx, mustExist)
}

// connectCreating is connect for import, which makes the store (and says
// so) when the data directory has none.
func (e *env) connectCreating(ctx context.Context) (*redis.Client, func(), error) {
	return e.dial(ctx, mayCreate)
}

// viaDaemon reports whether connect will talk to a daemon rather than
// open the data directory itself.
func (e *env) viaDaemon() bool {
	sock, explicit := e.socketPath()
	return explicit || daemonAt(sock)
}

func (e *env) dial(ctx context.Context, use storeUse) (*redis.Client, func(), error) {
	sock, _ := e.socketPath()
	if e.viaDaemon() {
		cl := newClient(sock)
		if err := cl.Ping(ctx).Err(); err != nil {
			cl.Close()
			return nil, nil, fmt.Errorf("no daemon at %s: %w (start one with 'cube serve', or drop -s to use the data directory directly)", sock, err)
		}
		return cl, func() { cl.Close() }, nil
	}
	return e.embedded(ctx, use)
}

func daemonAt(sock string) bool {
	c, err := net.DialTimeout("unix", sock, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// embedded opens the data directory and serves it on a private socket.
// With use mustExist a directory without a store is an error.
func (e *env) embedded(ctx context.Context, use storeUse) (*redis.Client, func(), error) {
	dir := e.dataDir()
	db, err := e.openStore(dir, cube.Options{}, use)
	if err != nil {
		if errors.Is(err, cube.ErrLocked) {
			return nil, nil, fmt.Errorf("data directory %s is in use by another process, and no daemon answers on its socket", dir)
		}
		var ns *noStore
		if errors.As(err, &ns) {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("open %s: %w", dir, err)
	}
	tmp, err := os.MkdirTemp("", "cube-cli-")
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	sock := filepath.Join(tmp, "cube.sock")
	srv, err := server.New(db, server.Options{Socket: sock, Version: version()})
	if err != nil {
		db.Close()
		os.RemoveAll(tmp)
		return nil, nil, err
	}
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx) }()
	cl := newClient(sock)
	return cl, func() {
		cl.Close()
		cancel()
		<-served
		db.Close()
		os.RemoveAll(tmp)
	}, nil
}
