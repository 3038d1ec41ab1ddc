;; writetrap: for a 3-dimensional namespace. args: a coordinate (3 x i32)
;; and a mode (i32). Puts "written" at the coordinate and at the next 9
;; coordinates along axis 2, links the first to the last, then:
;; mode 0 succeeds, 1 traps (unreachable), 2 returns status 7 with an error
;; message, 3 loops forever (for timeouts and crashes).
;; Rebuild: wat2wasm writetrap.wat -o writetrap.wasm
(module
  (import "cube_v1" "args_read" (func $args_read (param i32 i32) (result i32)))
  (import "cube_v1" "put" (func $put (param i32 i32 i32) (result i32)))
  (import "cube_v1" "link" (func $link (param i32 i32 i32 i32 f64 i32 i32) (result i32)))
  (import "cube_v1" "set_error" (func $set_error (param i32 i32) (result i32)))
  (memory 1)
  (data (i32.const 100) "written")
  (data (i32.const 200) "guest gave up")
  ;; 0..11 coordinate, 12 mode, 32..43 moving coordinate
  (func (export "run") (result i32)
    (local $i i32)
    (if (call $args_read (i32.const 0) (i32.const 16)) (then (return (i32.const 8))))
    (i64.store (i32.const 32) (i64.load (i32.const 0)))
    (i32.store (i32.const 40) (i32.load (i32.const 8)))
    (loop $w
      (if (call $put (i32.const 32) (i32.const 100) (i32.const 7)) (then (return (i32.const 9))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (if (i32.lt_u (local.get $i) (i32.const 10)) (then
        (i32.store (i32.const 40) (i32.add (i32.load (i32.const 40)) (i32.const 1)))
        (br $w))))
    (if (call $link (i32.const 0) (i32.const 32) (i32.const 100) (i32.const 4) (f64.const 1.5) (i32.const 0) (i32.const 0))
      (then (return (i32.const 9))))
    (if (i32.eq (i32.load (i32.const 12)) (i32.const 1)) (then unreachable))
    (if (i32.eq (i32.load (i32.const 12)) (i32.const 2)) (then
      (drop (call $set_error (i32.const 200) (i32.const 13)))
      (return (i32.const 7))))
    (if (i32.eq (i32.load (i32.const 12)) (i32.const 3)) (then (loop $forever (br $forever))))
    (i32.const 0)))
