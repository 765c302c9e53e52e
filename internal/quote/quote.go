// Package quote cuts long texts that the model reads back to a bounded
// excerpt: their head and their tail around a note saying how much was
// left out.
package quote

import (
	"fmt"
	"unicode/utf8"
)

// Marker is the note that stands for the n bytes left out of the middle
// of an excerpt. The model reads it (agent.ExcerptMarker documents it).
func Marker(n int) string {
	return fmt.Sprintf("\n[... %d bytes left out ...]\n", n)
}

// Excerpt returns s when it is at most max bytes, or its head and its
// tail, at most max bytes in all, around Marker, cut at rune boundaries.
func Excerpt(s string, max int) string {
	if len(s) <= max {
		return s
	}
	return Join(s, s, len(s), max)
}

// Join is the excerpt of a text of n bytes, more than max, from its first
// bytes (head) and its last (tail), each at least max/2 bytes and a rune
// (utf8.UTFMax) longer when the text has them; the text itself need never
// be put together.
func Join(head, tail string, n, max int) string {
	h := min(len(head), max/2)
	for h > 0 && h < len(head) && !utf8.RuneStart(head[h]) {
		h--
	}
	t := len(tail) - min(len(tail), max-max/2)
	for t > 0 && t < len(tail) && !utf8.RuneStart(tail[t]) {
		t++
	}
	return head[:h] + Marker(n-h-(len(tail)-t)) + tail[t:]
}
