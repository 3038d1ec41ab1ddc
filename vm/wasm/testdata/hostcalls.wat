;; hostcalls: calls dims() as many times as args' first i32 says; the host
;; call cost benchmark. Rebuild: wat2wasm hostcalls.wat -o hostcalls.wasm
(module
  (import "cube_v1" "args_read" (func $args_read (param i32 i32) (result i32)))
  (import "cube_v1" "dims" (func $dims (result i32)))
  (memory 1)
  (func (export "run") (result i32) (local $n i32)
    (drop (call $args_read (i32.const 0) (i32.const 4)))
    (local.set $n (i32.load (i32.const 0)))
    (block $d (loop $l
      (br_if $d (i32.eqz (local.get $n)))
      (drop (call $dims))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br $l)))
    (i32.const 0)))
