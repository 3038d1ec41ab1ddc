;; initcalls: an _initialize that asks the store for its dims (cube_v1),
;; which in a run it may; run writes what it got as output, so a test can
;; see that a fresh run's instance was initialised in that run.
;; Rebuild: wat2wasm initcalls.wat -o initcalls.wasm
(module
  (import "cube_v1" "dims" (func $dims (result i32)))
  (import "cube_v1" "output_write" (func $output_write (param i32 i32) (result i32)))
  (memory 1)
  (global $dims (mut i32) (i32.const -1))
  (func (export "_initialize") (global.set $dims (call $dims)))
  (func (export "run") (result i32)
    (i32.store (i32.const 0) (global.get $dims))
    (drop (call $output_write (i32.const 0) (i32.const 4)))
    (i32.const 0)))
