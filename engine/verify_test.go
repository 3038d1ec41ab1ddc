package engine_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"github.com/cubelinux/cube/engine"
	"github.com/cubelinux/cube/engine/vfs"
)

// TestVerifyUnfinishedRekey cuts a rekey at every operation that changes
// the disk (the process is killed there, the machine loses power there,
// or only that operation fails) and runs Verify under both keys on what
// is left, before anything opens it.
// Verify must change nothing, never call the store damaged, pass only
// under the key that rules (the one Open accepts), and, while the rekey's
// leftovers are there, say that a rekey did not finish in every refusal
// (and flag the pass of an uncommitted one).
//
// Deliberate breaks this test was seen to catch (each made, run, failed,
// restored):
//   - verifyRekeyCommitted returning nil at once (Verify blind to a
//     committed rekey): killed at operation 22 of 54, right after the
//     commit, the old key passes though the new one rules;
//   - the rekey.tmp check looking for another name: killed at operation
//     5, the staged rekey passes unflagged (UnfinishedRekey false).
func TestVerifyUnfinishedRekey(t *testing.T) {
	for _, tc := range rekeyCases {
		t.Run(tc.name, func(t *testing.T) {
			base := vfs.NewMem()
			want := buildRekeyStore(t, base, tc.oldKey)

			var total atomic.Int64
			if _, err := engine.Rekey(ctx, "/d", tc.oldKey, tc.newKey, engine.RekeyOptions{
				FS: vfs.NewFaulty(copyMem(t, base), vfs.InjectorFunc(func(op vfs.Op) error {
					if changesDisk(op) {
						total.Add(1)
					}
					return nil
				})),
			}); err != nil {
				t.Fatal(err)
			}
			n := int(total.Load())
			states := map[string]int{}
			for k := 1; k <= n; k++ {
				for _, mode := range []string{"killed", "power loss", "one error"} {
					where := fmt.Sprintf("%s at operation %d of %d", mode, k, n)
					mem := copyMem(t, base)
					var count atomic.Int64
					fsys := vfs.NewFaulty(mem, vfs.InjectorFunc(func(op vfs.Op) error {
						if !changesDisk(op) {
							if mode != "one error" && count.Load() >= int64(k) {
								return syscall.EIO
							}
							return nil
						}
						if c := count.Add(1); c == int64(k) || (mode != "one error" && c > int64(k)) {
							return syscall.EIO
						}
						return nil
					}))
					engine.Rekey(ctx, "/d", tc.oldKey, tc.newKey, engine.RekeyOptions{FS: fsys})
					if mode == "power loss" {
						mem.CrashClean()
					}
					tmp, committed := exists(t, mem, "/d/rekey.tmp"), exists(t, mem, "/d/rekey")
					state := "no leftovers"
					switch {
					case committed:
						state = "committed"
					case tmp:
						state = "staged"
					}
					states[state]++

					// Which key rules: the one an open (of a copy) accepts.
					var rules []byte
					for _, key := range [][]byte{tc.oldKey, tc.newKey} {
						if got, err := openDump(t, copyMem(t, mem), key); err == nil {
							if got != want {
								t.Fatalf("%s: under %s the store holds\n%s", where, keyName(key), got)
							}
							rules = key
						}
					}
					for _, key := range [][]byte{tc.oldKey, tc.newKey} {
						before, _ := treeState(t, mem)
						rep, err := engine.Verify("/d", engine.VerifyOptions{FS: mem, EncryptionKey: key})
						if after, _ := treeState(t, mem); after != before {
							t.Fatalf("%s (%s): Verify under %s changed the directory", where, state, keyName(key))
						}
						if engine.IsCorruption(err) {
							t.Fatalf("%s (%s): Verify under %s calls the store damaged: %v", where, state, keyName(key), err)
						}
						switch {
						case committed:
							if err == nil || !strings.Contains(err.Error(), "did not finish") {
								t.Fatalf("%s (%s): Verify under %s: %v, want a refusal saying the rekey did not finish", where, state, keyName(key), err)
							}
							if bytes.Equal(key, rules) != strings.Contains(err.Error(), "(the key given)") {
								t.Fatalf("%s (%s): Verify under %s, while %s rules: %v", where, state, keyName(key), keyName(rules), err)
							}
						case bytes.Equal(key, rules):
							if err != nil {
								t.Fatalf("%s (%s): Verify under %s, the key that rules: %v", where, state, keyName(key), err)
							}
							if rep.UnfinishedRekey != tmp {
								t.Fatalf("%s (%s): Verify's report says UnfinishedRekey %v", where, state, rep.UnfinishedRekey)
							}
						default:
							if err == nil {
								t.Fatalf("%s (%s): Verify passes under %s, but %s rules", where, state, keyName(key), keyName(rules))
							}
							if tmp && !strings.Contains(err.Error(), "did not finish") {
								t.Fatalf("%s (%s): Verify under %s does not say a rekey did not finish: %v", where, state, keyName(key), err)
							}
						}
					}
				}
			}
			// The cuts must reach every state, or the test proves less
			// than it says.
			for _, s := range []string{"no leftovers", "staged", "committed"} {
				if states[s] == 0 {
					t.Fatalf("no cut left the store %s: %v", s, states)
				}
			}
			t.Logf("%d operations, states after the cuts: %v", n, states)
		})
	}
}

func exists(t *testing.T, fsys vfs.FS, p string) bool {
	t.Helper()
	_, err := fsys.Stat(p)
	return err == nil
}
