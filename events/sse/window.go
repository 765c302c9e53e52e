package sse

// window is a log whose oldest items are dropped from the front. What
// kept returns stays as it was: nothing is ever written over an item, so
// a stream may read the items it took under the Broker's lock after
// letting go of it, while the log moves on. The dropped items are let go
// when the log moves to a fresh array, once they are half of it or hold
// a quarter of the bound's bytes (so the memory held past the bound stays
// under a quarter of it, plus one item).
type window[T any] struct {
	items   []T
	head    int // items[head:] are kept
	dropped int // bytes of items[:head]
}

func (w *window[T]) push(x T) { w.items = append(w.items, x) }

// len is the number of items kept.
func (w *window[T]) len() int { return len(w.items) - w.head }

func (w *window[T]) oldest() T { return w.items[w.head] }

// kept returns the items kept, oldest first. Appending to it copies.
func (w *window[T]) kept() []T {
	s := w.items[w.head:]
	return s[:len(s):len(s)]
}

// drop forgets the oldest item, size bytes; max is the bound in bytes.
// Moving to a fresh array costs the items kept, after dropping as many or
// max/4 bytes: O(1) per item or byte, amortized.
func (w *window[T]) drop(size, max int) {
	w.head++
	w.dropped += size
	if w.head > len(w.items)/2 || w.dropped > max/4 {
		fresh := make([]T, w.len())
		copy(fresh, w.items[w.head:])
		w.items, w.head, w.dropped = fresh, 0, 0
	}
}
