// Package instrument rewrites a WebAssembly module so that its own code
// bounds its call stack and checks the run's deadline at every function
// entry.
//
// wazero has no stack size option: its compiled code grows a Go-allocated
// stack up to a fixed ceiling (~84 MB of stack, ~170 MB allocated on the
// way). Rewrite gives every function a frame cost, computed statically in
// 8-byte slots (params, locals and the highest operand stack the body can
// reach, a v128 counting two, plus FrameSlots), keeps the sum of the costs
// of the calls in progress in a new exported global and traps when it
// passes a budget.
//
// The decoder reads every instruction wazero 1.12 accepts with its 2.0
// core features (numeric, memory, bulk memory, reference types,
// multi-value blocks, 0xfc and 0xfd prefixes) and tail calls, exactly as
// wazero reads them (a 0xfd sub-opcode is one byte there, not a LEB128),
// so that the code it instruments is the code wazero compiles. The tests
// rewrite every module of wazero's own spec test suites, and a fuzz target
// compares the behaviour of modules before and after.
//
// # Calibration
//
// Measured on wazero 1.12's compiler (amd64), a plain recursive function
// costs 13 slots (104 bytes) and takes 40 bytes of wazero's stack; one with
// 64 i64 locals live across its call costs 77 slots (616 bytes) and takes
// 505: a slot stands for 3 to 7 bytes of real stack, so budget*8 bytes
// bounds the stack these shapes use.
package instrument
