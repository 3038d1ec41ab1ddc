;; nearloop: calls nearby (k = 10, no bound) once for each centre in its
;; args and outputs the number of neighbours found in all, as a u32; the
;; nearby benchmark (plugins) and TestNearLoop use it.
;; args, copied to address 0: u32 n, then n centres of dims() i32s each.
;; Rebuild: wat2wasm nearloop.wat -o nearloop.wasm
(module
  (import "cube_v1" "args_len" (func $args_len (result i32)))
  (import "cube_v1" "args_read" (func $args_read (param i32 i32) (result i32)))
  (import "cube_v1" "output_write" (func $output_write (param i32 i32) (result i32)))
  (import "cube_v1" "dims" (func $dims (result i32)))
  (import "cube_v1" "nearby" (func $nearby (param i32 i32 f64 i32 i32 i32 i32) (result i32)))
  (memory 4)
  ;; args at 0 (up to 128 KiB), results at 0x20000 (64 KiB), out-pointers at 0x30000
  (func (export "run") (result i32) (local $n i32) (local $p i32) (local $cw i32) (local $sum i32)
    (if (i32.gt_u (call $args_len) (i32.const 0x20000)) (then (return (i32.const 1))))
    (drop (call $args_read (i32.const 0) (i32.const 0x20000)))
    (local.set $n (i32.load (i32.const 0)))
    (local.set $cw (i32.shl (call $dims) (i32.const 2)))
    (local.set $p (i32.const 4))
    (block $done (loop $next
      (br_if $done (i32.eqz (local.get $n)))
      (if (call $nearby (local.get $p) (i32.const 10) (f64.const inf)
                        (i32.const 0x20000) (i32.const 0x10000) (i32.const 0x30000) (i32.const 0x30004))
        (then (return (i32.const 2))))
      (local.set $sum (i32.add (local.get $sum) (i32.load (i32.const 0x30000))))
      (local.set $p (i32.add (local.get $p) (local.get $cw)))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br $next)))
    (i32.store (i32.const 0x30008) (local.get $sum))
    (drop (call $output_write (i32.const 0x30008) (i32.const 4)))
    (i32.const 0)))
