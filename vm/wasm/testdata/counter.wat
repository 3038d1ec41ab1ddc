;; counter: a global incremented by every run and written as output, to
;; show whether state survives between runs. Has _initialize, which sets the
;; global to 100.
;; Rebuild: wat2wasm counter.wat -o counter.wasm
(module
  (import "cube_v1" "output_write" (func $output_write (param i32 i32) (result i32)))
  (memory 1)
  (global $n (mut i32) (i32.const 0))
  (func (export "_initialize") (global.set $n (i32.const 100)))
  (func (export "run") (result i32)
    (global.set $n (i32.add (global.get $n) (i32.const 1)))
    (i32.store (i32.const 0) (global.get $n))
    (drop (call $output_write (i32.const 0) (i32.const 4)))
    (i32.const 0)))
