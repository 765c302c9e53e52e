package providers

import "testing"

// BenchmarkTextDelta is one streamed text delta: the event and its
// immutable snapshot of the message.
func BenchmarkTextDelta(b *testing.B) {
	bl := NewBuilder(Model{ID: "m", API: "a", Provider: "p"})
	bl.Start()
	bl.TextStart()
	b.ReportAllocs()
	for b.Loop() {
		if ev := bl.TextDelta("x"); ev.Message == nil {
			b.Fatal("no snapshot")
		}
	}
}
