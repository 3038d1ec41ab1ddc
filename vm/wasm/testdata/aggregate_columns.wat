;; aggregate_columns: aggregate.wat's sum read through region_columns: args
;; are min and max corners (2 x dims x i32); sums the first 8 bytes of every
;; value in the box as a little-endian i64 (values shorter than 8 bytes count
;; 0) and outputs i64 sum, i64 count. Each call fills up to 1024 points: the
;; coordinates (unused here), a u32 length per point, and the values one
;; after another, so a value starts where the one before it ends.
;; Rebuild: wat2wasm aggregate_columns.wat -o aggregate_columns.wasm
(module
  (import "cube_v1" "args_read" (func $args_read (param i32 i32) (result i32)))
  (import "cube_v1" "dims" (func $dims (result i32)))
  (import "cube_v1" "region_open" (func $region_open (param i32 i32 i32) (result i32)))
  (import "cube_v1" "region_columns" (func $region_columns (param i32 i32 i32 i32 i32 i32 i32 i32) (result i32)))
  (import "cube_v1" "cursor_close" (func $cursor_close (param i32) (result i32)))
  (import "cube_v1" "output_write" (func $output_write (param i32 i32) (result i32)))
  (memory 2)
  ;; 0..63 args, 64 cursor, 68 n, 72 value bytes, 80 sum, 88 count,
  ;; 0x4000 coordinates (1024 x up to 32 bytes), 0xc000 lengths (1024 x 4),
  ;; 0x10000 values (64 KiB)
  (func (export "run") (result i32)
    (local $lp i32) (local $end i32) (local $vp i32) (local $len i32) (local $n i32)
    (local $sum i64) (local $count i64)
    (if (call $args_read (i32.const 0) (i32.const 64)) (then (return (i32.const 1))))
    (if (call $region_open (i32.const 0) (i32.shl (call $dims) (i32.const 2)) (i32.const 64))
      (then (return (i32.const 2))))
    (block $end (loop $batch
      (if (call $region_columns (i32.load (i32.const 64)) (i32.const 0x4000) (i32.const 0xc000)
            (i32.const 0x10000) (i32.const 1024) (i32.const 0x10000) (i32.const 68) (i32.const 72))
        (then (return (i32.const 3))))
      (local.set $n (i32.load (i32.const 68)))
      (br_if $end (i32.eqz (local.get $n)))
      (local.set $count (i64.add (local.get $count) (i64.extend_i32_u (local.get $n))))
      (local.set $lp (i32.const 0xc000))
      (local.set $end (i32.add (i32.const 0xc000) (i32.shl (local.get $n) (i32.const 2))))
      (local.set $vp (i32.const 0x10000))
      (loop $point
        (local.set $len (i32.load (local.get $lp)))
        (if (i32.ge_u (local.get $len) (i32.const 8))
          (then (local.set $sum (i64.add (local.get $sum) (i64.load (local.get $vp))))))
        (local.set $vp (i32.add (local.get $vp) (local.get $len)))
        (local.set $lp (i32.add (local.get $lp) (i32.const 4)))
        (br_if $point (i32.lt_u (local.get $lp) (local.get $end))))
      (br $batch)))
    (drop (call $cursor_close (i32.load (i32.const 64))))
    (i64.store (i32.const 80) (local.get $sum))
    (i64.store (i32.const 88) (local.get $count))
    (drop (call $output_write (i32.const 80) (i32.const 16)))
    (i32.const 0)))
