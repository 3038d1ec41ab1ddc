;; startloop: a start function that never returns.
;; Rebuild: wat2wasm startloop.wat -o startloop.wasm
(module
  (func $start (loop $l (br $l)))
  (start $start)
  (func (export "run") (result i32) (i32.const 0)))
