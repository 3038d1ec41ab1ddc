// Package conformance is the one table of programs, data, arguments and
// expected outcomes that every build of the example programs must satisfy:
// the Go, C, AssemblyScript and hand-written WAT modules under examples/ and
// their JavaScript twins, on the in-memory reference host (vm/vmtest) and on
// the real engine.
//
// The three programs are the examples' contract:
//
//   - aggregate: the arguments are two corners (min then max, 2 x dims
//     little-endian int32). Every value in the box that is a decimal integer
//     (an optional '-' and 1 to 18 ASCII digits, so that parsing never
//     overflows) is added, wrapping at 64 bits; other values are skipped.
//     The output is "sum=<sum> count=<number of integers added>".
//
//   - walk: the arguments are a start coordinate (dims little-endian int32)
//     followed by a target value. From the start, while the value at the
//     current coordinate is not the target, the program follows the outgoing
//     edge (any label) of least weight, ties broken by the smaller
//     destination coordinate (lexicographically, as signed integers) and then
//     by the smaller label (bytewise). The output is the path,
//     coordinates separated by spaces and axes by commas ("0,0 1,0 1,1").
//     A dead end, or a path that reaches 64 coordinates without meeting the
//     target, is a guest error "walk: not found".
//
//   - writer: the arguments are two corners, as for aggregate. Every integer
//     value in the box (same rule) is replaced by its double, written in
//     decimal (wrapping at 64 bits). The program reads the whole region
//     before it writes. The output is "wrote=<number of values written>".
//
//   - kitcheck: a check of the guest kits rather than an example (Go, C,
//     AssemblyScript and JavaScript; no WAT). It calls every kit function
//     the others leave out — delete, link, unlink, edges, walk (BFS and
//     DFS), shortest path, log — and opens a region over an inverted box,
//     which each kit must report in its own way (Go: an error that
//     errors.Is ErrBadArgument, cleared with ClearErr; C: the status
//     CUBE_BAD_ARGUMENT; AssemblyScript: a Failure with BadArgument,
//     cleared with clearFailure; JavaScript: a TypeError) without failing
//     the run. The output is one line per call (kitcheckWant in
//     kitcheck.go); edges and walk steps are sorted and a walk also prints
//     its depths in visit order, which on the table's symmetric tree do
//     not depend on the order a host lists edges in. Weights print as
//     round(100 w). With the argument "dfs" it runs only the depth-first
//     walks (a case of its own, which the real engine fails: see
//     Case.EngineBug). With the argument "near" it runs only the distance
//     queries and hop-bounded paths (nearModel in near.go): nearby with and
//     without a bound (0 meaning the centre alone), a k larger than the
//     namespace, within a radius (points sorted), hop-bounded shortest
//     paths, and k = 0, a NaN radius and a negative hop bound, each
//     reported by the kit as a bad argument without failing the run. Its
//     data is random points no two of which lie at the same distance from
//     a query's centre, so the engine's answers must equal the brute-force
//     ones of the reference host exactly. With the argument "columns" it
//     reads a box in batches of 7, a radius in batches of 1 and an empty
//     box with each kit's column reader (region_columns; JavaScript's
//     columns()) and with its point iterator, and prints
//     "columns <query>: n=<points> bytes=<value bytes> same" when the two
//     agree point for point (columnsModel in columns.go). CheckColumns
//     (columns.go) checks region_columns itself at every capacity edge.
//
// Malformed arguments (a length other than the program expects) are a guest
// error "<program>: bad arguments".
//
// The choice of a greedy walk, rather than a breadth-first search, is
// deliberate: its result does not depend on the order in which a host lists
// edges, so the engine (curve order) and vmtest (sorted order) must agree.
package conformance
