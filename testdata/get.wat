;; get: args are a coordinate (dims x i32); output the value stored there,
;; or "none". The benchmark's "read args, one get, write output".
;; Rebuild: wat2wasm get.wat -o get.wasm
(module
  (import "cube_v1" "args_read" (func $args_read (param i32 i32) (result i32)))
  (import "cube_v1" "get" (func $get (param i32 i32 i32 i32) (result i32)))
  (import "cube_v1" "output_write" (func $output_write (param i32 i32) (result i32)))
  (memory 1)
  (data (i32.const 64) "none")
  (func (export "run") (result i32)
    (if (call $args_read (i32.const 0) (i32.const 32)) (then (return (i32.const 1))))
    (if (i32.eqz (call $get (i32.const 0) (i32.const 128) (i32.const 1024) (i32.const 32)))
      (then (drop (call $output_write (i32.const 128) (i32.load (i32.const 32)))))
      (else (drop (call $output_write (i32.const 64) (i32.const 4)))))
    (i32.const 0)))
