;; aggregate: the sum of the decimal integers stored in a box, written by
;; hand against docs/ABI.md. Arguments: two corners, min then max
;; (2 x dims little-endian int32). Output: "sum=<sum> count=<integers added>";
;; a value counts if it is an optional '-' and 1 to 18 ASCII digits; the sum
;; wraps at 64 bits. Region records are read in batches into the memory from
;; 0x10000 on, which grows when a single record does not fit.
;;
;; Rebuild: wat2wasm aggregate.wat -o aggregate.wasm
(module
  (import "cube_v1" "args_len" (func $args_len (result i32)))
  (import "cube_v1" "args_read" (func $args_read (param i32 i32) (result i32)))
  (import "cube_v1" "dims" (func $dims (result i32)))
  (import "cube_v1" "region_open" (func $region_open (param i32 i32 i32) (result i32)))
  (import "cube_v1" "region_next" (func $region_next (param i32 i32 i32 i32 i32) (result i32)))
  (import "cube_v1" "cursor_close" (func $cursor_close (param i32) (result i32)))
  (import "cube_v1" "output_write" (func $output_write (param i32 i32) (result i32)))
  (import "cube_v1" "set_error" (func $set_error (param i32 i32) (result i32)))
  ;; 0..63 corners, 64 cursor, 68 n, 72 bytes, 160.. output text,
  ;; 256.. strings, 4064..4095 digits, 0x10000.. region records
  (memory 2)
  (global $val (mut i64) (i64.const 0))
  (data (i32.const 256) "aggregate: bad arguments")
  (data (i32.const 288) "sum=")
  (data (i32.const 296) " count=")
  (data (i32.const 304) "aggregate: region failed")

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

  ;; $fill reads the next batch of records to 0x10000 and returns
  ;; region_next's status; when one record does not fit, memory grows.
  (func $fill (param $cur i32) (result i32)
    (local $st i32) (local $short i32)
    (loop $retry
      (local.set $st (call $region_next (local.get $cur) (i32.const 0x10000)
        (i32.sub (i32.shl (memory.size) (i32.const 16)) (i32.const 0x10000))
        (i32.const 68) (i32.const 72)))
      (if (i32.eq (local.get $st) (i32.const 2))
        (then
          (local.set $short (i32.sub (i32.add (i32.const 0x10000) (i32.load (i32.const 72)))
                                     (i32.shl (memory.size) (i32.const 16))))
          (if (i32.lt_s (memory.grow (i32.shr_u (i32.add (local.get $short) (i32.const 0xffff)) (i32.const 16)))
                        (i32.const 0))
            (then (return (local.get $st))))
          (br $retry))))
    (local.get $st))

  (func (export "run") (result i32)
    (local $cw i32) (local $p i32) (local $n i32) (local $len i32)
    (local $sum i64) (local $count i64) (local $o i32)
    (local.set $cw (i32.shl (call $dims) (i32.const 2)))
    (if (i32.ne (call $args_len) (i32.shl (local.get $cw) (i32.const 1)))
      (then (return (call $fail (i32.const 256) (i32.const 24)))))
    (drop (call $args_read (i32.const 0) (i32.const 64)))
    (if (call $region_open (i32.const 0) (local.get $cw) (i32.const 64))
      (then (return (call $fail (i32.const 304) (i32.const 24)))))
    (block $end
      (loop $batch
        (if (call $fill (i32.load (i32.const 64)))
          (then (return (call $fail (i32.const 304) (i32.const 24)))))
        (local.set $n (i32.load (i32.const 68)))
        (br_if $end (i32.eqz (local.get $n)))
        (local.set $p (i32.const 0x10000))
        (loop $rec
          (local.set $len (i32.load (i32.add (local.get $p) (local.get $cw))))
          (if (call $parse (i32.add (i32.add (local.get $p) (local.get $cw)) (i32.const 4)) (local.get $len))
            (then (local.set $sum (i64.add (local.get $sum) (global.get $val)))
                  (local.set $count (i64.add (local.get $count) (i64.const 1)))))
          ;; records are align(cw + 4 + len, 4) bytes
          (local.set $p (i32.add (local.get $p)
            (i32.and (i32.add (i32.add (local.get $cw) (local.get $len)) (i32.const 7)) (i32.const -4))))
          (local.set $n (i32.sub (local.get $n) (i32.const 1)))
          (br_if $rec (local.get $n)))
        (br $batch)))
    (drop (call $cursor_close (i32.load (i32.const 64))))
    (memory.copy (i32.const 160) (i32.const 288) (i32.const 4))
    (local.set $o (i32.add (i32.const 164) (call $itoa (local.get $sum) (i32.const 164))))
    (memory.copy (local.get $o) (i32.const 296) (i32.const 7))
    (local.set $o (i32.add (local.get $o) (i32.const 7)))
    (local.set $o (i32.add (local.get $o) (call $itoa (local.get $count) (local.get $o))))
    (if (call $output_write (i32.const 160) (i32.sub (local.get $o) (i32.const 160)))
      (then (return (i32.const 1))))
    (i32.const 0)))
