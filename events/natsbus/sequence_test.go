package natsbus

import (
	"slices"
	"testing"
)

// TestSequencer: which numbers a subscriber delivers, and how many it
// counts as bad, for genuine runs (with lost events and repeats) and for
// forged numbers anywhere, the first message included.
func TestSequencer(t *testing.T) {
	const far = MaxGap + 100
	tests := []struct {
		name    string
		from    uint64
		in      []uint64
		deliver []uint64
		bad     uint64
	}{
		{"in order", 1, []uint64{1, 2, 3}, []uint64{1, 2, 3}, 0},
		{"repeats", 1, []uint64{1, 2, 2, 1, 3}, []uint64{1, 2, 3}, 0},
		{"a lost event", 1, []uint64{1, 2, 4, 5}, []uint64{1, 2, 4, 5}, 0},
		{"aged out: the stream starts late", 1, []uint64{500, 501, 502}, []uint64{500, 501, 502}, 0},
		{"resumed", 3, []uint64{1, 2, 3, 4}, []uint64{3, 4}, 0},
		{"forged far ahead mid-run", 1, []uint64{1, 2, far, 3}, []uint64{1, 2, 3}, 1},
		{"forged ahead mid-run", 1, []uint64{1, 2, 90, 3, 4}, []uint64{1, 2, 90, 3, 4}, 1},
		{"forged first", 1, []uint64{far, 1, 2, 3}, []uint64{far, 1, 2, 3}, 1},
		{"forged first, then its successor", 1, []uint64{900, 901, 1, 2}, []uint64{900, 901, 1, 2}, 1},
		{"lost events, then a forged one from before the gap", 1, []uint64{1, 2, 5, 6, 3, 7}, []uint64{1, 2, 5, 6, 3, 7}, 1},
		{"forged first, near", 1, []uint64{5, 1, 2, 3, 4, 5, 6}, []uint64{5, 1, 2, 3, 4, 5, 6}, 1},
		{"two forged jumps", 1, []uint64{1, 70, 80, 2, 3}, []uint64{1, 70, 80, 2, 3}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := sequencer{last: tt.from - 1}
			var got []uint64
			for _, n := range tt.in {
				if s.accept(n) {
					got = append(got, n)
				}
			}
			if !slices.Equal(got, tt.deliver) || s.bad != tt.bad {
				t.Fatalf("delivered %v, bad %d; want %v, bad %d", got, s.bad, tt.deliver, tt.bad)
			}
		})
	}
}
