;; columns: reads a whole region or radius and outputs its points as
;; region_next's packed point records (docs/ABI.md §4), however it read
;; them, so that tests can compare region_columns with region_next at any
;; buffer sizes.
;;
;; args: u32 mode, u32 cap_points, u32 vals_cap, u32 kind, f64 r, then
;; coordinates: kind 0 a box (min then max), kind 1 a centre and radius r.
;; mode 0 reads with region_next into a buffer of vals_cap bytes (outputs
;; the records as they come), mode 1 with region_columns (cap_points,
;; vals_cap), mode 2 alternates the two on one cursor. On status 2 it
;; retries that one call with room for one point of the size the status
;; reported, which must then fit exactly. Any other status s ends the run
;; with 10 + s, a call that did not fit after the retry with 9.
;; Rebuild: wat2wasm columns.wat -o columns.wasm
(module
  (import "cube_v1" "args_read" (func $args_read (param i32 i32) (result i32)))
  (import "cube_v1" "dims" (func $dims (result i32)))
  (import "cube_v1" "region_open" (func $region_open (param i32 i32 i32) (result i32)))
  (import "cube_v1" "within_open" (func $within_open (param i32 f64 i32) (result i32)))
  (import "cube_v1" "region_next" (func $region_next (param i32 i32 i32 i32 i32) (result i32)))
  (import "cube_v1" "region_columns" (func $region_columns (param i32 i32 i32 i32 i32 i32 i32 i32) (result i32)))
  (import "cube_v1" "cursor_close" (func $cursor_close (param i32) (result i32)))
  (import "cube_v1" "output_write" (func $output_write (param i32 i32) (result i32)))
  ;; 0 args (256 bytes), 0x100 cursor, 0x104 n, 0x108 bytes, 0x300 zeros,
  ;; 0x1000 coordinates (1024 x up to 32 bytes), 0x9000 lengths (1024 x 4),
  ;; 0x10000 values or records (up to 448 KiB)
  (memory 8)
  (global $cw (mut i32) (i32.const 0))

  ;; next reads with region_next; returns n (0: the end) or -status.
  (func $next (param $cap i32) (result i32) (local $st i32)
    (local.set $st (call $region_next (i32.load (i32.const 0x100)) (i32.const 0x10000) (local.get $cap)
      (i32.const 0x104) (i32.const 0x108)))
    (if (i32.eq (local.get $st) (i32.const 2))
      (then
        (local.set $st (call $region_next (i32.load (i32.const 0x100)) (i32.const 0x10000)
          (i32.load (i32.const 0x108)) (i32.const 0x104) (i32.const 0x108)))
        (if (i32.or (local.get $st) (i32.ne (i32.load (i32.const 0x104)) (i32.const 1)))
          (then (return (i32.const -9))))))
    (if (local.get $st) (then (return (i32.sub (i32.const 0) (i32.add (local.get $st) (i32.const 10))))))
    (if (i32.load (i32.const 0x104))
      (then (drop (call $output_write (i32.const 0x10000) (i32.load (i32.const 0x108))))))
    (i32.load (i32.const 0x104)))

  ;; cols reads with region_columns and outputs the points as records;
  ;; returns n (0: the end) or -status.
  (func $cols (param $capn i32) (param $capv i32) (result i32)
    (local $st i32) (local $i i32) (local $n i32) (local $len i32) (local $vp i32)
    (local.set $st (call $region_columns (i32.load (i32.const 0x100)) (i32.const 0x1000) (i32.const 0x9000)
      (i32.const 0x10000) (local.get $capn) (local.get $capv) (i32.const 0x104) (i32.const 0x108)))
    (if (i32.eq (local.get $st) (i32.const 2))
      (then
        (if (i32.load (i32.const 0x104)) (then (return (i32.const -9))))
        (local.set $st (call $region_columns (i32.load (i32.const 0x100)) (i32.const 0x1000) (i32.const 0x9000)
          (i32.const 0x10000) (i32.const 1) (i32.load (i32.const 0x108)) (i32.const 0x104) (i32.const 0x108)))
        (if (i32.or (local.get $st) (i32.ne (i32.load (i32.const 0x104)) (i32.const 1)))
          (then (return (i32.const -9))))))
    (if (local.get $st) (then (return (i32.sub (i32.const 0) (i32.add (local.get $st) (i32.const 10))))))
    (local.set $n (i32.load (i32.const 0x104)))
    (local.set $vp (i32.const 0x10000))
    (block $done (loop $point
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (local.set $len (i32.load (i32.add (i32.const 0x9000) (i32.shl (local.get $i) (i32.const 2)))))
      (drop (call $output_write (i32.add (i32.const 0x1000) (i32.mul (local.get $i) (global.get $cw))) (global.get $cw)))
      (drop (call $output_write (i32.add (i32.const 0x9000) (i32.shl (local.get $i) (i32.const 2))) (i32.const 4)))
      (drop (call $output_write (local.get $vp) (local.get $len)))
      (drop (call $output_write (i32.const 0x300)
        (i32.and (i32.sub (i32.const 0) (i32.add (i32.add (global.get $cw) (i32.const 4)) (local.get $len))) (i32.const 3))))
      (local.set $vp (i32.add (local.get $vp) (local.get $len)))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $point)))
    ;; the values used exactly *vbytes_out bytes
    (if (i32.ne (i32.sub (local.get $vp) (i32.const 0x10000)) (i32.load (i32.const 0x108)))
      (then (return (i32.const -8))))
    (local.get $n))

  (func (export "run") (result i32) (local $st i32) (local $got i32) (local $k i32)
    (global.set $cw (i32.shl (call $dims) (i32.const 2)))
    (drop (call $args_read (i32.const 0) (i32.const 0x100)))
    (if (i32.load (i32.const 12))
      (then (local.set $st (call $within_open (i32.const 24) (f64.load (i32.const 16)) (i32.const 0x100))))
      (else (local.set $st (call $region_open (i32.const 24) (i32.add (i32.const 24) (global.get $cw)) (i32.const 0x100)))))
    (if (local.get $st) (then (return (i32.add (local.get $st) (i32.const 20)))))
    (loop $more
      (block $read
        (if (i32.eqz (i32.load (i32.const 0)))
          (then (local.set $got (call $next (i32.load (i32.const 8)))) (br $read)))
        (if (i32.eq (i32.load (i32.const 0)) (i32.const 1))
          (then (local.set $got (call $cols (i32.load (i32.const 4)) (i32.load (i32.const 8)))) (br $read)))
        (local.set $k (i32.add (local.get $k) (i32.const 1)))
        (if (i32.and (local.get $k) (i32.const 1))
          (then (local.set $got (call $next (i32.load (i32.const 8)))))
          (else (local.set $got (call $cols (i32.load (i32.const 4)) (i32.load (i32.const 8)))))))
      (if (i32.lt_s (local.get $got) (i32.const 0)) (then (return (i32.sub (i32.const 0) (local.get $got)))))
      (br_if $more (local.get $got)))
    ;; after the end, the end again, and then the cursor closes once
    (if (call $cols (i32.const 4) (i32.const 64)) (then (return (i32.const 7))))
    (if (call $cursor_close (i32.load (i32.const 0x100))) (then (return (i32.const 6))))
    (i32.const 0)))
