package checkpoint_test

import (
	"fmt"
	"log"
	"path/filepath"

	"github.com/cubelinux/cube/engine/internal/checkpoint"
	"github.com/cubelinux/cube/engine/vfs"
)

// A base checkpoint, made current by the manifest, then read back as
// recovery would.
func Example() {
	fs := vfs.NewMem()
	dir := "data"
	fs.MkdirAll(dir, 0o755)

	h := checkpoint.Header{Kind: checkpoint.Base, LSN: 42}
	name := checkpoint.FileName(h)
	w, err := checkpoint.Create(fs, filepath.Join(dir, name), h, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer w.Abort()
	for _, rec := range []string{"ns:a", "v:1", "v:2"} {
		if err := w.Add([]byte(rec)); err != nil {
			log.Fatal(err)
		}
	}
	if _, err := w.Finish(); err != nil {
		log.Fatal(err)
	}
	if err := checkpoint.WriteManifest(fs, dir, checkpoint.Manifest{Base: name, LSN: 42, Seq: 1}); err != nil {
		log.Fatal(err)
	}

	m, _, err := checkpoint.ReadManifest(fs, dir)
	if err != nil {
		log.Fatal(err)
	}
	for _, file := range m.Files() {
		r, h, err := checkpoint.Open(fs, filepath.Join(dir, file), nil)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(file, h.Kind, h.LSN)
		for rec, err := range r.All() {
			if err != nil {
				log.Fatal(err)
			}
			fmt.Printf("  %s\n", rec)
		}
		r.Close()
	}
	fmt.Println("replay the log after", m.LSN)
	// Output:
	// base-00000000000000000042.ckpt base 42
	//   ns:a
	//   v:1
	//   v:2
	// replay the log after 42
}
