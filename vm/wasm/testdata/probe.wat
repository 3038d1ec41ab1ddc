;; probe: calls cube_v1 functions with raw arguments taken from the run's
;; args, so tests (and FuzzHostCallArgs) can reach every host function with
;; any argument values through a real module.
;;
;; args, copied to address 0: u32 n, u32 pad, then n records of 88 bytes:
;; u32 function index (abiFuncs order), u32 pad, 10 x u64 raw arguments (an
;; i32 argument is the low 32 bits; link's weight, nearby's max_dist and
;; within_open's r are f64s). Bytes after the
;; records are free data that pointers may refer to.
;; output: n x i32 statuses, then memory [0x1000, 0x1400).
;; Rebuild: wat2wasm probe.wat -o probe.wasm
(module
  (import "cube_v1" "args_len" (func $args_len (result i32)))
  (import "cube_v1" "args_read" (func $args_read (param i32 i32) (result i32)))
  (import "cube_v1" "output_write" (func $output_write (param i32 i32) (result i32)))
  (import "cube_v1" "log" (func $log (param i32 i32) (result i32)))
  (import "cube_v1" "set_error" (func $set_error (param i32 i32) (result i32)))
  (import "cube_v1" "dims" (func $dims (result i32)))
  (import "cube_v1" "get" (func $get (param i32 i32 i32 i32) (result i32)))
  (import "cube_v1" "put" (func $put (param i32 i32 i32) (result i32)))
  (import "cube_v1" "del" (func $del (param i32) (result i32)))
  (import "cube_v1" "region_open" (func $region_open (param i32 i32 i32) (result i32)))
  (import "cube_v1" "region_next" (func $region_next (param i32 i32 i32 i32 i32) (result i32)))
  (import "cube_v1" "edges_open" (func $edges_open (param i32 i32 i32 i32 i32) (result i32)))
  (import "cube_v1" "edges_next" (func $edges_next (param i32 i32 i32 i32 i32) (result i32)))
  (import "cube_v1" "cursor_close" (func $cursor_close (param i32) (result i32)))
  (import "cube_v1" "link" (func $link (param i32 i32 i32 i32 f64 i32 i32) (result i32)))
  (import "cube_v1" "unlink" (func $unlink (param i32 i32 i32 i32) (result i32)))
  (import "cube_v1" "walk" (func $walk (param i32 i32 i32 i32 i32 i32 i32 i32 i32 i32) (result i32)))
  (import "cube_v1" "shortest_path" (func $shortest_path (param i32 i32 i32 i32 i32 i32 i32 i32 i32) (result i32)))
  (import "cube_v1" "nearby" (func $nearby (param i32 i32 f64 i32 i32 i32 i32) (result i32)))
  (import "cube_v1" "within_open" (func $within_open (param i32 f64 i32) (result i32)))
  (import "cube_v1" "shortest_path_hops" (func $shortest_path_hops (param i32 i32 i32 i32 i32 i32 i32 i32 i32 i32) (result i32)))
  (import "cube_v1" "region_columns" (func $region_columns (param i32 i32 i32 i32 i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func $a (param $rec i32) (param $k i32) (result i32)
    (i32.wrap_i64 (i64.load offset=8 (i32.add (local.get $rec) (i32.shl (local.get $k) (i32.const 3))))))
  (func $w (param $rec i32) (param $k i32) (result f64)
    (f64.load offset=8 (i32.add (local.get $rec) (i32.shl (local.get $k) (i32.const 3)))))
  (func $call (param $r i32) (result i32)
    (block $default
    (block $f21
    (block $f20
    (block $f19
    (block $f18
    (block $f17
    (block $f16
    (block $f15
    (block $f14
    (block $f13
    (block $f12
    (block $f11
    (block $f10
    (block $f9
    (block $f8
    (block $f7
    (block $f6
    (block $f5
    (block $f4
    (block $f3
    (block $f2
    (block $f1
    (block $f0
      (br_table $f0 $f1 $f2 $f3 $f4 $f5 $f6 $f7 $f8 $f9 $f10 $f11 $f12 $f13 $f14 $f15 $f16 $f17 $f18 $f19 $f20 $f21 $default (i32.load (local.get $r))))
    (return (call $args_len )))
    (return (call $args_read (call $a (local.get $r) (i32.const 0)) (call $a (local.get $r) (i32.const 1)))))
    (return (call $output_write (call $a (local.get $r) (i32.const 0)) (call $a (local.get $r) (i32.const 1)))))
    (return (call $log (call $a (local.get $r) (i32.const 0)) (call $a (local.get $r) (i32.const 1)))))
    (return (call $set_error (call $a (local.get $r) (i32.const 0)) (call $a (local.get $r) (i32.const 1)))))
    (return (call $dims )))
    (return (call $get (call $a (local.get $r) (i32.const 0)) (call $a (local.get $r) (i32.const 1)) (call $a (local.get $r) (i32.const 2)) (call $a (local.get $r) (i32.const 3)))))
    (return (call $put (call $a (local.get $r) (i32.const 0)) (call $a (local.get $r) (i32.const 1)) (call $a (local.get $r) (i32.const 2)))))
    (return (call $del (call $a (local.get $r) (i32.const 0)))))
    (return (call $region_open (call $a (local.get $r) (i32.const 0)) (call $a (local.get $r) (i32.const 1)) (call $a (local.get $r) (i32.const 2)))))
    (return (call $region_next (call $a (local.get $r) (i32.const 0)) (call $a (local.get $r) (i32.const 1)) (call $a (local.get $r) (i32.const 2)) (call $a (local.get $r) (i32.const 3)) (call $a (local.get $r) (i32.const 4)))))
    (return (call $edges_open (call $a (local.get $r) (i32.const 0)) (call $a (local.get $r) (i32.const 1)) (call $a (local.get $r) (i32.const 2)) (call $a (local.get $r) (i32.const 3)) (call $a (local.get $r) (i32.const 4)))))
    (return (call $edges_next (call $a (local.get $r) (i32.const 0)) (call $a (local.get $r) (i32.const 1)) (call $a (local.get $r) (i32.const 2)) (call $a (local.get $r) (i32.const 3)) (call $a (local.get $r) (i32.const 4)))))
    (return (call $cursor_close (call $a (local.get $r) (i32.const 0)))))
    (return (call $link (call $a (local.get $r) (i32.const 0)) (call $a (local.get $r) (i32.const 1)) (call $a (local.get $r) (i32.const 2)) (call $a (local.get $r) (i32.const 3)) (call $w (local.get $r) (i32.const 4)) (call $a (local.get $r) (i32.const 5)) (call $a (local.get $r) (i32.const 6)))))
    (return (call $unlink (call $a (local.get $r) (i32.const 0)) (call $a (local.get $r) (i32.const 1)) (call $a (local.get $r) (i32.const 2)) (call $a (local.get $r) (i32.const 3)))))
    (return (call $walk (call $a (local.get $r) (i32.const 0)) (call $a (local.get $r) (i32.const 1)) (call $a (local.get $r) (i32.const 2)) (call $a (local.get $r) (i32.const 3)) (call $a (local.get $r) (i32.const 4)) (call $a (local.get $r) (i32.const 5)) (call $a (local.get $r) (i32.const 6)) (call $a (local.get $r) (i32.const 7)) (call $a (local.get $r) (i32.const 8)) (call $a (local.get $r) (i32.const 9)))))
    (return (call $shortest_path (call $a (local.get $r) (i32.const 0)) (call $a (local.get $r) (i32.const 1)) (call $a (local.get $r) (i32.const 2)) (call $a (local.get $r) (i32.const 3)) (call $a (local.get $r) (i32.const 4)) (call $a (local.get $r) (i32.const 5)) (call $a (local.get $r) (i32.const 6)) (call $a (local.get $r) (i32.const 7)) (call $a (local.get $r) (i32.const 8)))))
    (return (call $nearby (call $a (local.get $r) (i32.const 0)) (call $a (local.get $r) (i32.const 1)) (call $w (local.get $r) (i32.const 2)) (call $a (local.get $r) (i32.const 3)) (call $a (local.get $r) (i32.const 4)) (call $a (local.get $r) (i32.const 5)) (call $a (local.get $r) (i32.const 6)))))
    (return (call $within_open (call $a (local.get $r) (i32.const 0)) (call $w (local.get $r) (i32.const 1)) (call $a (local.get $r) (i32.const 2)))))
    (return (call $shortest_path_hops (call $a (local.get $r) (i32.const 0)) (call $a (local.get $r) (i32.const 1)) (call $a (local.get $r) (i32.const 2)) (call $a (local.get $r) (i32.const 3)) (call $a (local.get $r) (i32.const 4)) (call $a (local.get $r) (i32.const 5)) (call $a (local.get $r) (i32.const 6)) (call $a (local.get $r) (i32.const 7)) (call $a (local.get $r) (i32.const 8)) (call $a (local.get $r) (i32.const 9)))))
    (return (call $region_columns (call $a (local.get $r) (i32.const 0)) (call $a (local.get $r) (i32.const 1)) (call $a (local.get $r) (i32.const 2)) (call $a (local.get $r) (i32.const 3)) (call $a (local.get $r) (i32.const 4)) (call $a (local.get $r) (i32.const 5)) (call $a (local.get $r) (i32.const 6)) (call $a (local.get $r) (i32.const 7)))))
    (i32.const -1))
  (func (export "run") (result i32) (local $i i32) (local $n i32)
    (drop (call $args_read (i32.const 0) (i32.const 0x1000)))
    (local.set $n (i32.load (i32.const 0)))
    (block $done (loop $next
      (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
      (i32.store offset=0x2000 (i32.shl (local.get $i) (i32.const 2))
        (call $call (i32.add (i32.const 8) (i32.mul (local.get $i) (i32.const 88)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $next)))
    (drop (call $output_write (i32.const 0x2000) (i32.shl (local.get $n) (i32.const 2))))
    (drop (call $output_write (i32.const 0x1000) (i32.const 0x400)))
    (i32.const 0)))
