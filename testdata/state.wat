;; state: reports the state a run starts from, then dirties all of it.
;; The output is eight i32s, little-endian, read as the run starts (the
;; last one just after it grows memory):
;;   a word of memory no data segment sets   (initially 0)
;;   the word the data segment sets          (initially "init")
;;   the mutable global                      (initially 5)
;;   what table slot 0's function returns    (initially 7: $seven)
;;   what table slot 1's function returns    (initially -1: a null slot)
;;   memory.size in pages                    (initially 1)
;;   a word of the second page, 0 without it (initially 0)
;;   a word of the page memory.grow then adds (always 0: a new page)
;; Then the run writes both words, sets the global to 42, points both table
;; slots at $nine (table.set), grows memory by a page (memory.grow) and
;; writes into the new page. With any argument bytes it then traps, after
;; writing.
;; Rebuild: wat2wasm state.wat -o state.wasm
(module
  (import "cube_v1" "args_len" (func $args_len (result i32)))
  (import "cube_v1" "output_write" (func $output_write (param i32 i32) (result i32)))
  (type $ret (func (result i32)))
  (memory 1)
  (data (i32.const 2000) "init")
  (global $g (mut i32) (i32.const 5))
  (table $t 2 funcref)
  (elem (table $t) (i32.const 0) func $seven)
  (elem declare func $nine)
  (func $seven (result i32) (i32.const 7))
  (func $nine (result i32) (i32.const 9))
  ;; slot returns what table slot i's function returns, or -1 if it is null.
  (func $slot (param $i i32) (result i32)
    (if (result i32) (ref.is_null (table.get $t (local.get $i)))
      (then (i32.const -1))
      (else (call_indirect $t (type $ret) (local.get $i)))))
  (func (export "run") (result i32)
    (local $new i32) ;; an address in the page memory.grow adds
    (i32.store (i32.const 100) (i32.load (i32.const 1000)))
    (i32.store (i32.const 104) (i32.load (i32.const 2000)))
    (i32.store (i32.const 108) (global.get $g))
    (i32.store (i32.const 112) (call $slot (i32.const 0)))
    (i32.store (i32.const 116) (call $slot (i32.const 1)))
    (i32.store (i32.const 120) (memory.size))
    (i32.store (i32.const 124)
      (if (result i32) (i32.gt_u (memory.size) (i32.const 1))
        (then (i32.load (i32.const 65544)))
        (else (i32.const 0))))
    (i32.store (i32.const 1000) (i32.const 0xc0ffee))
    (i32.store (i32.const 2000) (i32.const 0x54524944)) ;; "DIRT"
    (global.set $g (i32.const 42))
    (table.set $t (i32.const 0) (ref.func $nine))
    (table.set $t (i32.const 1) (ref.func $nine))
    (local.set $new (i32.add (i32.shl (memory.grow (i32.const 1)) (i32.const 16)) (i32.const 8)))
    (i32.store (i32.const 128) (i32.load (local.get $new)))
    (i32.store (local.get $new) (i32.const 0xbeef))
    (drop (call $output_write (i32.const 100) (i32.const 32)))
    (if (call $args_len) (then unreachable))
    (i32.const 0)))
