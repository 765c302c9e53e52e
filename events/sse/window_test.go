package sse

import (
	"slices"
	"testing"
)

// TestWindowKeepsWhatItGave: what kept returned never changes while the
// window moves on, and the dropped items it still holds stay under a
// quarter of the bound in bytes (plus one item) or half of its array.
func TestWindowKeepsWhatItGave(t *testing.T) {
	const max = 1000
	for _, size := range []int{1, 10, 100, 400} {
		var w window[int]
		bytes := 0
		var views [][]int
		var copies [][]int
		for i := range 2000 {
			w.push(i)
			bytes += size
			for w.len() > 1 && bytes > max {
				w.drop(size, max)
				bytes -= size
			}
			if i%7 == 0 {
				v := w.kept()
				views, copies = append(views, v), append(copies, slices.Clone(v))
			}
			if w.dropped > max/4+size || w.head > len(w.items)/2+1 {
				t.Fatalf("size %d: %d dropped bytes held, %d of %d items", size, w.dropped, w.head, len(w.items))
			}
		}
		for i := range views {
			if !slices.Equal(views[i], copies[i]) {
				t.Fatalf("size %d: view %d changed", size, i)
			}
		}
		if got := w.kept(); got[len(got)-1] != 1999 || len(got) != max/size {
			t.Fatalf("size %d: kept %d items, newest %d", size, len(got), got[len(got)-1])
		}
		if v := w.kept(); cap(v) != len(v) {
			t.Fatal("a view can be appended to in place")
		}
	}
}
