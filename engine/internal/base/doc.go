// Package base holds what the engine and its file formats (the log, the
// checkpoints) share and must agree on: the one marker for damaged bytes
// on disk. It imports only the standard library, so every package of the
// engine can use it.
package base
