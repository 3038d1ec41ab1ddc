;; walk: from a start, follow the lightest outgoing edge until the value at
;; the current coordinate equals the target; written by hand against
;; docs/ABI.md. Arguments: the start (dims little-endian int32), then the
;; target bytes. Output: the path, "x,y x,y ...". Ties on weight go to the
;; smaller destination coordinate (signed, axis by axis), then the smaller
;; label (bytewise). A dead end, or 64 coordinates without the target, fails
;; with "walk: not found".
;;
;; Rebuild: wat2wasm walk.wat -o walk.wasm
(module
  (import "cube_v1" "args_len" (func $args_len (result i32)))
  (import "cube_v1" "args_read" (func $args_read (param i32 i32) (result i32)))
  (import "cube_v1" "dims" (func $dims (result i32)))
  (import "cube_v1" "get" (func $get (param i32 i32 i32 i32) (result i32)))
  (import "cube_v1" "edges_open" (func $edges_open (param i32 i32 i32 i32 i32) (result i32)))
  (import "cube_v1" "edges_next" (func $edges_next (param i32 i32 i32 i32 i32) (result i32)))
  (import "cube_v1" "cursor_close" (func $cursor_close (param i32) (result i32)))
  (import "cube_v1" "output_write" (func $output_write (param i32 i32) (result i32)))
  (import "cube_v1" "set_error" (func $set_error (param i32 i32) (result i32)))
  ;; 0..31 current coordinate, 32..63 best next coordinate, 64 cursor,
  ;; 68 n, 72 bytes, 76 value length, 80 best weight (f64), 88 best label
  ;; length, 256.. strings, 4064..4095 digits, 0x2000..0x3fff path text,
  ;; 0x4000..0x4fff best label, 0x10000.. arguments, then at $buf one
  ;; buffer for values and edge records (memory grows as needed)
  (memory 2)
  (global $buf (mut i32) (i32.const 0))
  (data (i32.const 256) "walk: bad arguments")
  (data (i32.const 288) "walk: not found")
  (data (i32.const 304) "walk: host call failed")

  (func $fail (param $msg i32) (param $len i32) (result i32)
    (drop (call $set_error (local.get $msg) (local.get $len)))
    (i32.const 1))

  ;; $room grows memory so that [0, end) is inside it; false if it cannot.
  (func $room (param $end i32) (result i32)
    (local $short i32)
    (local.set $short (i32.sub (local.get $end) (i32.shl (memory.size) (i32.const 16))))
    (if (i32.le_s (local.get $short) (i32.const 0)) (then (return (i32.const 1))))
    (i32.ge_s (memory.grow (i32.shr_u (i32.add (local.get $short) (i32.const 0xffff)) (i32.const 16)))
              (i32.const 0)))

  ;; $cap is the room left from $buf to the end of memory.
  (func $cap (result i32)
    (i32.sub (i32.shl (memory.size) (i32.const 16)) (global.get $buf)))

  ;; $memeq compares n bytes at a and b.
  (func $memeq (param $a i32) (param $b i32) (param $n i32) (result i32)
    (block $diff
      (loop $byte
        (if (i32.eqz (local.get $n)) (then (return (i32.const 1))))
        (br_if $diff (i32.ne (i32.load8_u (local.get $a)) (i32.load8_u (local.get $b))))
        (local.set $a (i32.add (local.get $a) (i32.const 1)))
        (local.set $b (i32.add (local.get $b) (i32.const 1)))
        (local.set $n (i32.sub (local.get $n) (i32.const 1)))
        (br $byte)))
    (i32.const 0))

  ;; $cmp compares n bytes at a and b as unsigned bytes: -1, 0 or 1.
  (func $cmp (param $a i32) (param $b i32) (param $n i32) (result i32)
    (local $x i32) (local $y i32)
    (loop $byte
      (if (i32.eqz (local.get $n)) (then (return (i32.const 0))))
      (local.set $x (i32.load8_u (local.get $a)))
      (local.set $y (i32.load8_u (local.get $b)))
      (if (i32.ne (local.get $x) (local.get $y))
        (then (return (select (i32.const -1) (i32.const 1) (i32.lt_u (local.get $x) (local.get $y))))))
      (local.set $a (i32.add (local.get $a) (i32.const 1)))
      (local.set $b (i32.add (local.get $b) (i32.const 1)))
      (local.set $n (i32.sub (local.get $n) (i32.const 1)))
      (br $byte))
    (i32.const 0))

  ;; $better reports whether the edge record at r beats the best so far
  ;; (weight, then destination, then label).
  (func $better (param $r i32) (param $cw i32) (result i32)
    (local $w f64) (local $i i32) (local $x i32) (local $y i32)
    (local $la i32) (local $lb i32) (local $c i32)
    (local.set $w (f64.load (local.get $r)))
    (if (f64.ne (local.get $w) (f64.load (i32.const 80)))
      (then (return (f64.lt (local.get $w) (f64.load (i32.const 80))))))
    (loop $axis
      (if (i32.lt_u (local.get $i) (local.get $cw))
        (then
          (local.set $x (i32.load (i32.add (i32.add (local.get $r) (i32.const 16)) (i32.add (local.get $cw) (local.get $i)))))
          (local.set $y (i32.load (i32.add (i32.const 32) (local.get $i))))
          (if (i32.ne (local.get $x) (local.get $y))
            (then (return (i32.lt_s (local.get $x) (local.get $y)))))
          (local.set $i (i32.add (local.get $i) (i32.const 4)))
          (br $axis))))
    (local.set $la (i32.load (i32.add (local.get $r) (i32.const 8))))
    (local.set $lb (i32.load (i32.const 88)))
    (local.set $c (call $cmp (i32.add (i32.add (local.get $r) (i32.const 16)) (i32.shl (local.get $cw) (i32.const 1)))
                             (i32.const 0x4000)
                             (select (local.get $la) (local.get $lb) (i32.lt_u (local.get $la) (local.get $lb)))))
    (if (local.get $c) (then (return (i32.lt_s (local.get $c) (i32.const 0)))))
    (i32.lt_u (local.get $la) (local.get $lb)))

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
    (local $cw i32) (local $tlen i32) (local $st i32) (local $steps i32)
    (local $out i32) (local $i i32) (local $have i32) (local $p i32)
    (local $n i32) (local $cur i32) (local $size i32)
    (local.set $cw (i32.shl (call $dims) (i32.const 2)))
    (local.set $tlen (i32.sub (call $args_len) (local.get $cw)))
    (if (i32.lt_s (local.get $tlen) (i32.const 0))
      (then (return (call $fail (i32.const 256) (i32.const 19)))))
    ;; arguments at 0x10000, the buffer after them, 8-aligned
    (global.set $buf (i32.and (i32.add (i32.add (i32.const 0x10000) (call $args_len)) (i32.const 7)) (i32.const -8)))
    (if (i32.eqz (call $room (i32.add (global.get $buf) (i32.const 0x10000))))
      (then (return (call $fail (i32.const 304) (i32.const 22)))))
    (drop (call $args_read (i32.const 0x10000) (call $args_len)))
    (memory.copy (i32.const 0) (i32.const 0x10000) (local.get $cw))
    (local.set $out (i32.const 0x2000))
    (loop $step
      ;; append the current coordinate to the path
      (if (local.get $steps)
        (then (i32.store8 (local.get $out) (i32.const 32))
              (local.set $out (i32.add (local.get $out) (i32.const 1)))))
      (local.set $i (i32.const 0))
      (loop $axis
        (if (local.get $i)
          (then (i32.store8 (local.get $out) (i32.const 44))
                (local.set $out (i32.add (local.get $out) (i32.const 1)))))
        (local.set $out (i32.add (local.get $out)
          (call $itoa (i64.extend_i32_s (i32.load (local.get $i))) (local.get $out))))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br_if $axis (i32.lt_u (local.get $i) (local.get $cw))))
      (local.set $steps (i32.add (local.get $steps) (i32.const 1)))
      ;; is the value here the target?
      (block $differs
        (loop $get
          (local.set $st (call $get (i32.const 0) (global.get $buf) (call $cap) (i32.const 76)))
          (br_if $differs (i32.eq (local.get $st) (i32.const 1)))
          (if (i32.eq (local.get $st) (i32.const 2))
            (then
              (br_if $differs (i32.ne (i32.load (i32.const 76)) (local.get $tlen)))
              (if (i32.eqz (call $room (i32.add (global.get $buf) (local.get $tlen))))
                (then (return (call $fail (i32.const 304) (i32.const 22)))))
              (br $get)))
          (if (local.get $st) (then (return (call $fail (i32.const 304) (i32.const 22))))))
        (br_if $differs (i32.ne (i32.load (i32.const 76)) (local.get $tlen)))
        (br_if $differs (i32.eqz (call $memeq (global.get $buf)
                                    (i32.add (i32.const 0x10000) (local.get $cw)) (local.get $tlen))))
        (if (call $output_write (i32.const 0x2000) (i32.sub (local.get $out) (i32.const 0x2000)))
          (then (return (i32.const 1))))
        (return (i32.const 0)))
      (if (i32.eq (local.get $steps) (i32.const 64))
        (then (return (call $fail (i32.const 288) (i32.const 15)))))
      ;; pick the best outgoing edge
      (if (call $edges_open (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 0) (i32.const 64))
        (then (return (call $fail (i32.const 304) (i32.const 22)))))
      (local.set $cur (i32.load (i32.const 64)))
      (local.set $have (i32.const 0))
      (block $end
        (loop $batch
          (local.set $st (call $edges_next (local.get $cur) (global.get $buf) (call $cap) (i32.const 68) (i32.const 72)))
          (if (i32.eq (local.get $st) (i32.const 2))
            (then
              (if (i32.eqz (call $room (i32.add (global.get $buf) (i32.load (i32.const 72)))))
                (then (return (call $fail (i32.const 304) (i32.const 22)))))
              (br $batch)))
          (if (local.get $st) (then (return (call $fail (i32.const 304) (i32.const 22)))))
          (local.set $n (i32.load (i32.const 68)))
          (br_if $end (i32.eqz (local.get $n)))
          (local.set $p (global.get $buf))
          (loop $rec
            (if (i32.or (i32.eqz (local.get $have)) (call $better (local.get $p) (local.get $cw)))
              (then
                (local.set $have (i32.const 1))
                (f64.store (i32.const 80) (f64.load (local.get $p)))
                (memory.copy (i32.const 32) (i32.add (i32.add (local.get $p) (i32.const 16)) (local.get $cw)) (local.get $cw))
                (i32.store (i32.const 88) (i32.load (i32.add (local.get $p) (i32.const 8))))
                (memory.copy (i32.const 0x4000)
                  (i32.add (i32.add (local.get $p) (i32.const 16)) (i32.shl (local.get $cw) (i32.const 1)))
                  (i32.load (i32.const 88)))))
            ;; records are align(16 + 2cw + label_len + value_len, 8) bytes
            (local.set $size (i32.add (i32.add (i32.const 16) (i32.shl (local.get $cw) (i32.const 1)))
              (i32.add (i32.load (i32.add (local.get $p) (i32.const 8))) (i32.load (i32.add (local.get $p) (i32.const 12))))))
            (local.set $p (i32.add (local.get $p) (i32.and (i32.add (local.get $size) (i32.const 7)) (i32.const -8))))
            (local.set $n (i32.sub (local.get $n) (i32.const 1)))
            (br_if $rec (local.get $n)))
          (br $batch)))
      (drop (call $cursor_close (local.get $cur)))
      (if (i32.eqz (local.get $have))
        (then (return (call $fail (i32.const 288) (i32.const 15)))))
      (memory.copy (i32.const 0) (i32.const 32) (local.get $cw))
      (br $step))
    (unreachable)))
