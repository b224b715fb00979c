package openai

import (
	"runtime"
	"strings"
	"testing"
)

// TestToolCallAssemblyIsLinear feeds the arguments of one call in 4-byte
// fragments, as a stream does, at two sizes: the bytes allocated must
// grow with the size, not with its square (string += made 1 MiB take 16 s).
func TestToolCallAssemblyIsLinear(t *testing.T) {
	allocated := func(size int) uint64 {
		var asm toolCallAssembler
		first := callFragment{hasIndex: true, id: jsonText{raw: []byte("call_1")}, name: jsonText{raw: []byte("save")}}
		frag := callFragment{hasIndex: true, args: jsonText{raw: []byte("abcd")}}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		asm.add(&first)
		for range size / 4 {
			asm.add(&frag)
		}
		calls := asm.calls()
		runtime.ReadMemStats(&after)
		if len(calls) != 1 || len(calls[0].Arguments) != size || !strings.HasPrefix(calls[0].Arguments, "abcdabcd") {
			t.Fatalf("assembled %d calls, %d bytes of arguments", len(calls), len(calls[0].Arguments))
		}
		return after.TotalAlloc - before.TotalAlloc
	}
	small, large := allocated(256<<10), allocated(1<<20)
	// Linear: about 4× for 4× the size. Quadratic would be about 16×.
	if ratio := float64(large) / float64(small); ratio > 8 {
		t.Errorf("assembling 1 MiB allocated %d bytes, %.1f× what 256 KiB did (%d): not linear", large, ratio, small)
	}
	if large > 8<<20 {
		t.Errorf("assembling 1 MiB of arguments allocated %d bytes", large)
	}
}
