;; loop: spins forever in a loop. Rebuild: wat2wasm loop.wat -o loop.wasm
(module
  (func (export "run") (result i32)
    (loop $l (br $l))
    (i32.const 0)))
