;; stack: unbounded recursion, which must exhaust the stack and trap.
;; Rebuild: wat2wasm stack.wat -o stack.wasm
(module
  (func $f (param $n i64) (result i64)
    (i64.add (call $f (i64.add (local.get $n) (i64.const 1))) (i64.const 1)))
  (func (export "run") (result i32)
    (drop (call $f (i64.const 0)))
    (i32.const 0)))
