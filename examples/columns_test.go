package examples_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/cubelinux/cube"
	"github.com/cubelinux/cube/plugins/pdk/conformance"
	"github.com/cubelinux/cube/vm"
)

// TestColumnsEngine runs the conformance check of region_columns
// (conformance.CheckColumns) through the real thing: columns.wasm
// registered with db.Prog and run with db.Run on a namespace holding the
// check's data. Read-only, the engine hands the host whole stretches of
// its run and the host copies them in bulk; read-write, the transaction's
// scan comes a point at a time. Both must give exactly region_next's
// points at every capacity.
//
// Breaks it caught (plugins' FillColumns): a stretch's coordinates copied
// from its start rather than from the cursor's position in it (points
// after a full buffer got the coordinates of earlier ones); a value
// longer than what is left of the value buffer reported as status 2 when
// points were already taken (the guest's retry found the wrong point).
func TestColumnsEngine(t *testing.T) {
	ctx := context.Background()
	db := memDB(t)
	if err := loadEngine(ctx, db, "cols", conformance.ColumnsData()); err != nil {
		t.Fatal(err)
	}
	code, err := os.ReadFile("../" + conformance.ColumnsFile)
	if err != nil {
		t.Fatal(err)
	}
	for _, ro := range []bool{true, false} {
		name := map[bool]string{true: "read-only", false: "read-write"}[ro]
		t.Run(name, func(t *testing.T) {
			lim := vm.Limits{Timeout: time.Minute, ReadOnly: ro}
			if _, err := db.Prog(ctx, "cols", name, vm.WASM, code, cube.ProgOptions{ReadOnly: ro, Limits: lim}); err != nil {
				t.Fatal(err)
			}
			err := conformance.CheckColumns(func(args []byte) ([]byte, error) {
				res, err := db.Run(ctx, "cols", name, args)
				return res.Output, err
			})
			if err != nil {
				t.Fatal(err)
			}
		})
	}
}
