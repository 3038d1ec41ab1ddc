;; recurse: an exponential call tree (2^62 calls) with no loop anywhere, which
;; a deadline checked only at loop headers would never stop.
;; Rebuild: wat2wasm recurse.wat -o recurse.wasm
(module
  (func $f (param $n i32)
    (if (local.get $n) (then
      (call $f (i32.sub (local.get $n) (i32.const 1)))
      (call $f (i32.sub (local.get $n) (i32.const 1))))))
  (func (export "run") (result i32)
    (call $f (i32.const 62))
    (i32.const 0)))
