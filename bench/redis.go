package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisStore is a redis-server of its own, started on a unix socket in
// the store's directory and stopped by its PID, holding the 2-D set as a
// GEO key: nearest and radius by GEOSEARCH. GEO is longitude and latitude
// on a sphere, so coordinate (x, y) is placed at (x, y) thousandths of a
// degree near (0, 0), where a unit is 111 m and the sphere's distortion
// is under 2e-4; each member is its exact coordinate, and the candidates
// Redis returns are filtered and ranked by their exact distance.
type redisStore struct {
	dir   string
	world int32
	cmd   *exec.Cmd
	rdb   *redis.Client
	n     int // members loaded
}

const (
	geoKey     = "pts"
	degPerUnit = 1e-3
	// metresPerUnit is a unit along a meridian on Redis's sphere
	// (radius 6372797.560856 m).
	metresPerUnit = 6372797.560856 * math.Pi / 180 * degPerUnit
)

func (s *redisStore) name() string { return "Redis GEO" }

func (s *redisStore) start(ctx context.Context) error {
	sock := filepath.Join(s.dir, "redis.sock")
	s.cmd = exec.Command("redis-server", "--port", "0", "--unixsocket", sock, "--unixsocketperm", "700",
		"--save", "", "--appendonly", "no", "--dir", s.dir, "--daemonize", "no", "--logfile", filepath.Join(s.dir, "redis.log"))
	if err := s.cmd.Start(); err != nil {
		return err
	}
	s.rdb = redis.NewClient(&redis.Options{Network: "unix", Addr: sock, Protocol: 2, DisableIdentity: true})
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := s.rdb.Ping(ctx).Err()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			log, _ := os.ReadFile(filepath.Join(s.dir, "redis.log"))
			return fmt.Errorf("redis-server did not answer on %s: %v\n%s", sock, err, log)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func member(p point) string {
	var b [8]byte
	binary.BigEndian.PutUint32(b[:], uint32(p[0]))
	binary.BigEndian.PutUint32(b[4:], uint32(p[1]))
	return string(b[:])
}

func unmember(m string) (point, error) {
	if len(m) != 8 {
		return point{}, fmt.Errorf("redis: member of %d bytes", len(m))
	}
	return point{int32(binary.BigEndian.Uint32([]byte(m[:4]))), int32(binary.BigEndian.Uint32([]byte(m[4:]))), 0}, nil
}

func (s *redisStore) load(ctx context.Context, d *dataset) error {
	if err := s.start(ctx); err != nil {
		return err
	}
	s.world = d.world
	const batch = 1000
	locs := make([]*redis.GeoLocation, 0, batch)
	for i := 0; i < len(d.flat); i += batch {
		locs = locs[:0]
		for _, p := range d.flat[i:min(i+batch, len(d.flat))] {
			locs = append(locs, &redis.GeoLocation{Name: member(p), Longitude: float64(p[0]) * degPerUnit, Latitude: float64(p[1]) * degPerUnit})
		}
		if err := s.rdb.GeoAdd(ctx, geoKey, locs...).Err(); err != nil {
			return err
		}
	}
	n, err := s.rdb.ZCard(ctx, geoKey).Result()
	if err != nil {
		return err
	}
	if int(n) != len(d.flat) {
		return fmt.Errorf("redis: %d members, want %d", n, len(d.flat))
	}
	s.n = int(n)
	return nil
}

// close stops the server by its PID: SIGTERM, then SIGKILL if it lingers.
func (s *redisStore) close() error {
	if s.rdb != nil {
		s.rdb.Close()
	}
	if s.cmd == nil || s.cmd.Process == nil {
		return nil
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-done
	}
	return nil
}

func (s *redisStore) search(ctx context.Context, c point, radiusUnits float64, count int) ([]redis.GeoLocation, error) {
	return s.rdb.GeoSearchLocation(ctx, geoKey, &redis.GeoSearchLocationQuery{
		GeoSearchQuery: redis.GeoSearchQuery{
			Longitude: float64(c[0]) * degPerUnit, Latitude: float64(c[1]) * degPerUnit,
			Radius: radiusUnits * metresPerUnit, RadiusUnit: "m", Sort: "ASC", Count: count,
		},
		WithDist: true,
	}).Result()
}

// flatWithin asks for a slightly larger circle (Redis measures on the
// sphere, from cells of its geohash) and keeps the points whose exact
// distance is within r.
func (s *redisStore) flatWithin(ctx context.Context, c point, r float64, a *answer) error {
	names, err := s.rdb.GeoSearch(ctx, geoKey, &redis.GeoSearchQuery{
		Longitude: float64(c[0]) * degPerUnit, Latitude: float64(c[1]) * degPerUnit,
		Radius: (r*1.001 + 0.05) * metresPerUnit, RadiusUnit: "m",
	}).Result()
	if err != nil {
		return err
	}
	r2 := int64(math.Floor(r * r))
	for _, m := range names {
		p, err := unmember(m)
		if err != nil {
			return err
		}
		if dist2(p, c) <= r2 {
			a.addPoint(p)
		}
	}
	return nil
}

// flatNearest is how a Redis user gets k nearest: GEOSEARCH ... ASC COUNT
// n within a radius guessed from the density, widened until it holds
// enough, with a few more than k so that the exact ranking is sure.
func (s *redisStore) flatNearest(ctx context.Context, c point, k int, out []point, a *answer) ([]point, error) {
	if s.n == 0 {
		return out, nil
	}
	density := float64(s.n) / (float64(s.world) * float64(s.world))
	radius := 2 * math.Sqrt(float64(k)/(math.Pi*density))
	count := k + 8
	for {
		locs, err := s.search(ctx, c, radius, count)
		if err != nil {
			return out, err
		}
		if len(locs) < count && radius < 2*float64(s.world) {
			radius *= 2
			continue
		}
		type cand struct {
			p  point
			d2 int64
		}
		cs := make([]cand, 0, len(locs))
		for _, l := range locs {
			p, err := unmember(l.Name)
			if err != nil {
				return out, err
			}
			cs = append(cs, cand{p, dist2(p, c)})
		}
		slices.SortFunc(cs, func(x, y cand) int { return int(x.d2 - y.d2) })
		kth := k
		if len(cs) < k {
			kth = len(cs)
		}
		// Sure only if Redis's farthest candidate is past the k-th exact
		// distance by more than its rounding.
		if len(locs) == count && kth > 0 && locs[len(locs)-1].Dist/metresPerUnit < math.Sqrt(float64(cs[kth-1].d2))+0.05 {
			count *= 2
			continue
		}
		for _, x := range cs[:kth] {
			out = append(out, x.p)
			a.addPoint(x.p)
		}
		return out, nil
	}
}

// redisAvailable reports whether redis-server is on the PATH.
func redisAvailable() bool {
	_, err := exec.LookPath("redis-server")
	return err == nil || !errors.Is(err, exec.ErrNotFound)
}
