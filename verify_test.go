package cube_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/cubelinux/cube"
)

// TestVerify: Verify passes a sound store, reporting its checkpoint and
// log, and names a flipped byte of the checkpoint as corruption, changing
// nothing. Seen failing with the report's checkpoint names left as full
// paths, and with Verify's error dropped.
func TestVerify(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	db := open(t, dir, cube.Options{})
	ns, err := db.CreateNamespace(ctx, "v", cube.NamespaceOptions{Dims: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := range int32(10) {
		if err := ns.Put(ctx, []int32{i}, []byte("value")); err != nil {
			t.Fatal(err)
		}
	}
	ci, err := db.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.Put(ctx, []int32{99}, []byte("after")); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	rep, err := cube.Verify(dir, cube.VerifyOptions{})
	if err != nil {
		t.Fatalf("verify of a sound store: %v", err)
	}
	if len(rep.Checkpoints) == 0 || rep.Checkpoints[0].File != ci.File || rep.CheckpointOps == 0 || rep.LogLastLSN == 0 || rep.Encrypted {
		t.Fatalf("report: %+v (checkpoint written: %s)", rep, ci.File)
	}

	last := filepath.Join(dir, "checkpoint", rep.Checkpoints[len(rep.Checkpoints)-1].File)
	b, err := os.ReadFile(last)
	if err != nil {
		t.Fatal(err)
	}
	b[len(b)/2] ^= 1
	if err := os.WriteFile(last, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = cube.Verify(dir, cube.VerifyOptions{})
	var ce *cube.CorruptionError
	if !cube.IsCorruption(err) || !errors.As(err, &ce) || ce.File != last {
		t.Fatalf("verify of a flipped byte in %s: %v", last, err)
	}
	if after, _ := os.ReadFile(last); string(after) != string(b) {
		t.Fatal("verify changed the file")
	}
}
