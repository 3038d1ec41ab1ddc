;; aggregate: args are min and max corners (2 x dims x i32). Sums the first 8
;; bytes of every value in the box as a little-endian i64 (values shorter than
;; 8 bytes count 0) and outputs i64 sum, i64 count. Reads the region through
;; region_next's packed records, 64 KiB per call.
;; Rebuild: wat2wasm aggregate.wat -o aggregate.wasm
(module
  (import "cube_v1" "args_read" (func $args_read (param i32 i32) (result i32)))
  (import "cube_v1" "dims" (func $dims (result i32)))
  (import "cube_v1" "region_open" (func $region_open (param i32 i32 i32) (result i32)))
  (import "cube_v1" "region_next" (func $region_next (param i32 i32 i32 i32 i32) (result i32)))
  (import "cube_v1" "cursor_close" (func $cursor_close (param i32) (result i32)))
  (import "cube_v1" "output_write" (func $output_write (param i32 i32) (result i32)))
  (memory 2)
  ;; 0..63 args, 64 cursor, 68 n, 72 bytes, 80 sum, 88 count, 0x10000.. buffer
  (func (export "run") (result i32)
    (local $cw i32) (local $p i32) (local $n i32) (local $len i32) (local $st i32)
    (local.set $cw (i32.shl (call $dims) (i32.const 2)))
    (if (call $args_read (i32.const 0) (i32.const 64)) (then (return (i32.const 1))))
    (if (call $region_open (i32.const 0) (local.get $cw) (i32.const 64)) (then (return (i32.const 2))))
    (block $end (loop $batch
      (local.set $st (call $region_next (i32.load (i32.const 64)) (i32.const 0x10000) (i32.const 0x10000) (i32.const 68) (i32.const 72)))
      (if (local.get $st) (then (return (i32.const 3))))
      (local.set $n (i32.load (i32.const 68)))
      (br_if $end (i32.eqz (local.get $n)))
      (local.set $p (i32.const 0x10000))
      (loop $rec
        (local.set $len (i32.load (i32.add (local.get $p) (local.get $cw))))
        (if (i32.ge_u (local.get $len) (i32.const 8))
          (then (i64.store (i32.const 80) (i64.add (i64.load (i32.const 80))
                  (i64.load (i32.add (i32.add (local.get $p) (local.get $cw)) (i32.const 4))))))) 
        (i64.store (i32.const 88) (i64.add (i64.load (i32.const 88)) (i64.const 1)))
        ;; next record: p += align4(cw + 4 + len)
        (local.set $p (i32.add (local.get $p)
          (i32.and (i32.add (i32.add (local.get $cw) (local.get $len)) (i32.const 7)) (i32.const -4))))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br_if $rec (local.get $n)))
      (br $batch)))
    (drop (call $cursor_close (i32.load (i32.const 64))))
    (drop (call $output_write (i32.const 80) (i32.const 16)))
    (i32.const 0)))
