// Package cube is the embedding facade: a durable coordinate store whose
// namespaces hold values at integer coordinates and labelled edges, plus
// the programs (WebAssembly or JavaScript) registered in them.
//
//	db, err := cube.Open(dir, cube.Options{})
//	ns, err := db.CreateNamespace(ctx, "world", cube.NamespaceOptions{Dims: 3})
//	err = ns.Put(ctx, []int32{1, 2, 3}, []byte("hello"))
//	info, err := db.Prog(ctx, "world", "greet", cube.JS, []byte(`function run(a) { return cube.get([1,2,3]) }`), cube.ProgOptions{ReadOnly: true})
//	res, err := db.Run(ctx, "world", "greet", nil)
//	fmt.Printf("%s: %s\n", info.Name, res.Output) // greet: hello
//
// The engine package is the store itself (values, regions, edges, walks,
// transactions, durability); the plugins package is the program registry
// (versions, runs as transactions, telemetry). This package puts them
// together and is what servers, the CLI and the REPL open.
package cube
