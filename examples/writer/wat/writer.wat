;; writer: doubles every decimal integer stored in a box, written by hand
;; against docs/ABI.md. Arguments: two corners, min then max
;; (2 x dims little-endian int32). Output: "wrote=<values written>". A value
;; counts if it is an optional '-' and 1 to 18 ASCII digits; doubles wrap at
;; 64 bits. The whole region is read first, its records laid end to end from
;; 0x10000 on (memory grows as needed), and only then written.
;;
;; Rebuild: wat2wasm writer.wat -o writer.wasm
(module
  (import "cube_v1" "args_len" (func $args_len (result i32)))
  (import "cube_v1" "args_read" (func $args_read (param i32 i32) (result i32)))
  (import "cube_v1" "dims" (func $dims (result i32)))
  (import "cube_v1" "region_open" (func $region_open (param i32 i32 i32) (result i32)))
  (import "cube_v1" "region_next" (func $region_next (param i32 i32 i32 i32 i32) (result i32)))
  (import "cube_v1" "cursor_close" (func $cursor_close (param i32) (result i32)))
  (import "cube_v1" "put" (func $put (param i32 i32 i32) (result i32)))
  (import "cube_v1" "output_write" (func $output_write (param i32 i32) (result i32)))
  (import "cube_v1" "set_error" (func $set_error (param i32 i32) (result i32)))
  ;; 0..63 corners, 64 cursor, 68 n, 72 bytes, 160.. output and value text,
  ;; 256.. strings, 4064..4095 digits, 0x10000.. every record of the region
  (memory 2)
  (global $val (mut i64) (i64.const 0))
  (data (i32.const 256) "writer: bad arguments")
  (data (i32.const 288) "wrote=")
  (data (i32.const 304) "writer: region failed")

  (func $fail (param $msg i32) (param $len i32) (result i32)
    (drop (call $set_error (local.get $msg) (local.get $len)))
    (i32.const 1))

  ;; $parse reports whether [p, p+n) is a decimal integer; its value goes
  ;; to $val.
  (func $parse (param $p i32) (param $n i32) (result i32)
    (local $neg i32) (local $end i32) (local $v i64) (local $c i32)
    (if (i32.and (i32.ne (local.get $n) (i32.const 0))
                 (i32.eq (i32.load8_u (local.get $p)) (i32.const 45)))
      (then (local.set $neg (i32.const 1))
            (local.set $p (i32.add (local.get $p) (i32.const 1)))
            (local.set $n (i32.sub (local.get $n) (i32.const 1)))))
    (if (i32.or (i32.eqz (local.get $n)) (i32.gt_u (local.get $n) (i32.const 18)))
      (then (return (i32.const 0))))
    (local.set $end (i32.add (local.get $p) (local.get $n)))
    (loop $digit
      (local.set $c (i32.sub (i32.load8_u (local.get $p)) (i32.const 48)))
      (if (i32.gt_u (local.get $c) (i32.const 9)) (then (return (i32.const 0))))
      (local.set $v (i64.add (i64.mul (local.get $v) (i64.const 10)) (i64.extend_i32_u (local.get $c))))
      (local.set $p (i32.add (local.get $p) (i32.const 1)))
      (br_if $digit (i32.lt_u (local.get $p) (local.get $end))))
    (global.set $val (select (i64.sub (i64.const 0) (local.get $v)) (local.get $v) (local.get $neg)))
    (i32.const 1))

  ;; $itoa writes v in decimal at dst and returns the length.
  (func $itoa (param $v i64) (param $dst i32) (result i32)
    (local $u i64) (local $p i32) (local $n i32)
    (local.set $u (local.get $v))
    (if (i64.lt_s (local.get $v) (i64.const 0))
      (then (local.set $u (i64.sub (i64.const 0) (local.get $v)))))
    (local.set $p (i32.const 4096))
    (loop $d
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (i32.store8 (local.get $p) (i32.add (i32.const 48) (i32.wrap_i64 (i64.rem_u (local.get $u) (i64.const 10)))))
      (local.set $u (i64.div_u (local.get $u) (i64.const 10)))
      (br_if $d (i64.ne (local.get $u) (i64.const 0))))
    (if (i64.lt_s (local.get $v) (i64.const 0))
      (then (local.set $p (i32.sub (local.get $p) (i32.const 1)))
            (i32.store8 (local.get $p) (i32.const 45))))
    (local.set $n (i32.sub (i32.const 4096) (local.get $p)))
    (memory.copy (local.get $dst) (local.get $p) (local.get $n))
    (local.get $n))

  (func (export "run") (result i32)
    (local $cw i32) (local $p i32) (local $end i32) (local $len i32)
    (local $st i32) (local $count i64) (local $short i32) (local $n i32)
    (local.set $cw (i32.shl (call $dims) (i32.const 2)))
    (if (i32.ne (call $args_len) (i32.shl (local.get $cw) (i32.const 1)))
      (then (return (call $fail (i32.const 256) (i32.const 21)))))
    (drop (call $args_read (i32.const 0) (i32.const 64)))
    (if (call $region_open (i32.const 0) (local.get $cw) (i32.const 64))
      (then (return (call $fail (i32.const 304) (i32.const 21)))))
    ;; read: records go end to end from 0x10000 to $end
    (local.set $end (i32.const 0x10000))
    (block $done
      (loop $batch
        ;; keep at least 64 KiB free for the next batch
        (if (i32.lt_u (i32.sub (i32.shl (memory.size) (i32.const 16)) (local.get $end)) (i32.const 0x10000))
          (then (if (i32.lt_s (memory.grow (i32.const 1)) (i32.const 0))
                  (then (return (call $fail (i32.const 304) (i32.const 21)))))))
        (local.set $st (call $region_next (i32.load (i32.const 64)) (local.get $end)
          (i32.sub (i32.shl (memory.size) (i32.const 16)) (local.get $end))
          (i32.const 68) (i32.const 72)))
        (if (i32.eq (local.get $st) (i32.const 2))
          (then
            (local.set $short (i32.sub (i32.add (local.get $end) (i32.load (i32.const 72)))
                                       (i32.shl (memory.size) (i32.const 16))))
            (if (i32.lt_s (memory.grow (i32.shr_u (i32.add (local.get $short) (i32.const 0xffff)) (i32.const 16)))
                          (i32.const 0))
              (then (return (call $fail (i32.const 304) (i32.const 21)))))
            (br $batch)))
        (if (local.get $st) (then (return (call $fail (i32.const 304) (i32.const 21)))))
        (br_if $done (i32.eqz (i32.load (i32.const 68))))
        (local.set $end (i32.add (local.get $end) (i32.load (i32.const 72))))
        (br $batch)))
    (drop (call $cursor_close (i32.load (i32.const 64))))
    ;; write
    (local.set $p (i32.const 0x10000))
    (block $written
      (loop $rec
        (br_if $written (i32.ge_u (local.get $p) (local.get $end)))
        (local.set $len (i32.load (i32.add (local.get $p) (local.get $cw))))
        (if (call $parse (i32.add (i32.add (local.get $p) (local.get $cw)) (i32.const 4)) (local.get $len))
          (then
            (local.set $n (call $itoa (i64.shl (global.get $val) (i64.const 1)) (i32.const 160)))
            (if (call $put (local.get $p) (i32.const 160) (local.get $n))
              (then (return (i32.const 1))))
            (local.set $count (i64.add (local.get $count) (i64.const 1)))))
        (local.set $p (i32.add (local.get $p)
          (i32.and (i32.add (i32.add (local.get $cw) (local.get $len)) (i32.const 7)) (i32.const -4))))
        (br $rec)))
    (memory.copy (i32.const 160) (i32.const 288) (i32.const 6))
    (local.set $n (i32.add (i32.const 6) (call $itoa (local.get $count) (i32.const 166))))
    (if (call $output_write (i32.const 160) (local.get $n))
      (then (return (i32.const 1))))
    (i32.const 0)))
