;; writetrap: puts a value at the coordinate in args, links it to itself,
;; then traps if args has a 5th i32 that is non-zero, returns status 7 with an
;; error message if it is 2, and succeeds otherwise. (Coordinates: 1 dim.)
;; Rebuild: wat2wasm writetrap.wat -o writetrap.wasm
(module
  (import "cube_v1" "args_read" (func $args_read (param i32 i32) (result i32)))
  (import "cube_v1" "put" (func $put (param i32 i32 i32) (result i32)))
  (import "cube_v1" "link" (func $link (param i32 i32 i32 i32 f64 i32 i32) (result i32)))
  (import "cube_v1" "set_error" (func $set_error (param i32 i32) (result i32)))
  (memory 1)
  (data (i32.const 100) "written")
  (data (i32.const 200) "guest gave up")
  (func (export "run") (result i32)
    (drop (call $args_read (i32.const 0) (i32.const 8)))
    (if (call $put (i32.const 0) (i32.const 100) (i32.const 7)) (then (return (i32.const 9))))
    (if (call $link (i32.const 0) (i32.const 0) (i32.const 100) (i32.const 1) (f64.const 1.5) (i32.const 0) (i32.const 0))
      (then (return (i32.const 9))))
    (if (i32.eq (i32.load (i32.const 4)) (i32.const 2)) (then
      (drop (call $set_error (i32.const 200) (i32.const 13)))
      (return (i32.const 7))))
    (if (i32.load (i32.const 4)) (then unreachable))
    (i32.const 0)))
