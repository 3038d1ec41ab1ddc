;; deeprec: a recursion 5,000 calls deep that returns, well within the
;; stack budget even at its floor (a program with one page of memory).
;; Rebuild: wat2wasm deeprec.wat -o deeprec.wasm
(module
  (memory 1)
  (func $f (param $n i32) (result i32)
    (if (result i32) (i32.eqz (local.get $n))
      (then (i32.const 0))
      (else (i32.add (call $f (i32.sub (local.get $n) (i32.const 1))) (i32.const 1)))))
  (func (export "run") (result i32)
    (i32.sub (call $f (i32.const 5000)) (i32.const 5000))))
