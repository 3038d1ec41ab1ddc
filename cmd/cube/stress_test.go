package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// TestStressCodeModes runs cube stress against a real daemon in both code
// modes and checks what each PROG cost the daemon: with distinct code
// (the default) every PROG registers a new version and logs a durable
// write; with --same-code only each client's first one does, and the rest
// log nothing.
//
// Deliberate break this test was seen to catch: stress sending the same
// code by default (the counter left out of the program text): "distinct
// code: 1 of N PROGs registered a new version".
func TestStressCodeModes(t *testing.T) {
	data := filepath.Join(shortDir(t), "data")
	sock := filepath.Join(data, "cube.sock")
	d, out := cubeProc(t, nil, "serve", "--data", data)
	defer func() { d.Process.Signal(syscall.SIGTERM); d.Wait() }()
	waitSocket(t, sock, out)
	cl := newClient(sock)
	defer cl.Close()
	synced := func() uint64 {
		t.Helper()
		js, err := cl.Do(context.Background(), "STATS").Text()
		if err != nil {
			t.Fatal(err)
		}
		var st struct {
			Store struct {
				SyncedLSN uint64 `json:"synced_lsn"`
			}
		}
		if err := json.Unmarshal([]byte(js), &st); err != nil {
			t.Fatal(err)
		}
		return st.Store.SyncedLSN
	}
	// One client: PROGs of one namespace register one at a time anyway,
	// and it makes the most pairs per client in the time given.
	const clients = 1
	for _, mode := range []struct {
		flags []string
		want  string
	}{
		{nil, modeDistinct},
		{[]string{"--same-code"}, modeSame},
	} {
		before := synced()
		args := append([]string{"stress", "-s", sock, "--duration", "2s", "--clients", strconv.Itoa(clients), "--json"}, mode.flags...)
		code, stdout, stderr := cubeRun(t, "", args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\n%s\n%s", args, code, stdout, stderr)
		}
		var r stressReport
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatal(err)
		}
		logged := synced() - before
		progs := r.Client["prog"].Calls
		t.Logf("%s: %d pairs, %.0f pairs/s, %d of %d PROGs new, %d log records", r.Mode, r.Pairs, r.PairsPerSec, r.NewVersions, progs, logged)
		if r.Mode != mode.want || r.Errors != 0 || r.Pairs < clients || progs < r.Pairs {
			t.Fatalf("%v: report %+v", args, r)
		}
		switch mode.want {
		case modeDistinct:
			// Each PROG a new version, and each one a record in the log
			// (the RO runs log nothing).
			if progs < 2 {
				t.Fatalf("distinct code: %d PROGs in %.1fs; the modes differ from the second on", progs, r.Duration)
			}
			if r.NewVersions != progs || logged < uint64(progs) {
				t.Fatalf("distinct code: %d of %d PROGs registered a new version, %d log records", r.NewVersions, progs, logged)
			}
		case modeSame:
			// The program p0, p1 of the first run is replaced once per
			// client, then every PROG is a hash compare.
			if r.NewVersions != clients || logged > uint64(clients)+4 {
				t.Fatalf("identical code: %d of %d PROGs registered a new version, %d log records", r.NewVersions, progs, logged)
			}
		}
		// The text report names the mode too.
		var e env
		var sb strings.Builder
		e.stdout = &sb
		(&stressCommand{env: &e}).print(r, false)
		if !strings.Contains(sb.String(), mode.want) {
			t.Fatalf("text report does not say %q:\n%s", mode.want, sb.String())
		}
	}
}
