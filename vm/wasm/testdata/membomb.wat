;; membomb: grows memory a page at a time until memory.grow fails, then traps.
;; Rebuild: wat2wasm membomb.wat -o membomb.wasm
(module
  (memory 1)
  (func (export "run") (result i32)
    (loop $l
      (if (i32.ne (memory.grow (i32.const 1)) (i32.const -1)) (then (br $l))))
    unreachable))
