;; initlog: an _initialize that prints "init" (WASI fd_write), so a test
;; can see that every fresh run's log has it, the first run's too (whose
;; instance may be Compile's trial one). run does nothing.
;; Rebuild: wat2wasm initlog.wat -o initlog.wasm
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory 1)
  (data (i32.const 16) "init\n")
  (func (export "_initialize")
    ;; iovec at 0: {ptr 16, len 5}; bytes written to 8
    (i32.store (i32.const 0) (i32.const 16))
    (i32.store (i32.const 4) (i32.const 5))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))))
  (func (export "run") (result i32) (i32.const 0)))
