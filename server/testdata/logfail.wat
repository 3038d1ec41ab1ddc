;; logfail: logs two lines, then fails with an error message, so that a
;; failed run's error reply can be seen to carry the end of its log.
;; Rebuild: wat2wasm logfail.wat -o logfail.wasm
(module
  (import "cube_v1" "log" (func $log (param i32 i32) (result i32)))
  (import "cube_v1" "set_error" (func $set_error (param i32 i32) (result i32)))
  (memory 1)
  (data (i32.const 100) "looking")
  (data (i32.const 200) "the store said no")
  (data (i32.const 300) "gave up")
  (func (export "run") (result i32)
    (drop (call $log (i32.const 100) (i32.const 7)))
    (drop (call $log (i32.const 200) (i32.const 17)))
    (drop (call $set_error (i32.const 300) (i32.const 7)))
    (i32.const 1)))
