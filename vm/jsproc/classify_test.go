package jsproc

import "testing"

func TestRuntimeFault(t *testing.T) {
	gc := "SIGSEGV: segmentation violation\nPC=0x437d3d m=5 sigcode=1 addr=0x0\n\ngoroutine 0 gp=0x19aab0dda40 m=5 mp=0x19aab99c008 [idle]:\nruntime.(*spanQueue).tryDrain(0x19a00001000?)\n"
	user := "SIGSEGV: segmentation violation\nPC=0x1 m=5\n\ngoroutine 7 gp=0x1 m=5 [running]:\ngithub.com/dop251/goja.(*vm).run(0x1)\n"
	if !runtimeFault(gc) {
		t.Error("a fault in the runtime's GC is not recognised")
	}
	if runtimeFault(user) {
		t.Error("a fault in goja is taken for the runtime's")
	}
	if !outOfMemory("fatal error: runtime: out of memory\n") || outOfMemory("panic: boom") {
		t.Error("outOfMemory misreads")
	}
}
