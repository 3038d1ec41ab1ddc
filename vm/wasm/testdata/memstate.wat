;; memstate: a stateless module (instrument.Stateless: no start function,
;; tables, element segments or mutable globals; no _initialize), whose
;; Fresh instances the sandbox resets between runs rather than closes. It
;; reports the memory a run starts from, then dirties it. The output is
;; three i32s, read as the run starts:
;;   a word of memory no data segment sets   (initially 0)
;;   the word the data segment sets          (initially "init")
;;   memory.size in pages                    (initially 1)
;; Then the run writes both words. With one or more argument bytes it then
;; grows memory by a page; with two or more it returns status 1 (a guest
;; error); with three or more it traps.
;; Rebuild: wat2wasm memstate.wat -o memstate.wasm
(module
  (import "cube_v1" "args_len" (func $args_len (result i32)))
  (import "cube_v1" "output_write" (func $output_write (param i32 i32) (result i32)))
  (memory 1)
  (data (i32.const 2000) "init")
  (global $two i32 (i32.const 2)) ;; immutable: allowed
  (func (export "run") (result i32)
    (local $n i32)
    (local.set $n (call $args_len))
    (i32.store (i32.const 100) (i32.load (i32.const 1000)))
    (i32.store (i32.const 104) (i32.load (i32.const 2000)))
    (i32.store (i32.const 108) (memory.size))
    (drop (call $output_write (i32.const 100) (i32.const 12)))
    (i32.store (i32.const 1000) (i32.const 0xc0ffee))
    (i32.store (i32.const 2000) (i32.const 0x54524944)) ;; "DIRT"
    (if (i32.ge_u (local.get $n) (i32.const 1)) (then (drop (memory.grow (i32.const 1)))))
    (if (i32.ge_u (local.get $n) (i32.const 3)) (then unreachable))
    (i32.ge_u (local.get $n) (global.get $two))))
