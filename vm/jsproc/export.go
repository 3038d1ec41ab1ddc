package jsproc

// HardMemory reports whether a worker's memory limit is enforced by the
// kernel on this system (Linux); elsewhere only the in-process checks of
// vm/js bound a run's memory.
const HardMemory = hardMemory
