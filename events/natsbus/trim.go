package natsbus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"unicode/utf8"
)

// HeaderTrimmed, on an event message, says the event was larger than the
// publisher's MaxEventBytes and its longest strings were cut to fit; its
// value is the event's size before, in bytes. Each cut string ends with a
// marker saying how much of it was cut.
const HeaderTrimmed = "Agentloop-Trimmed"

// trim makes an event's JSON fit in limit bytes by cutting its longest
// strings (a tool's output, a message's text, an image's data) to one
// length, the longest that fits, each cut marked. The event keeps its
// shape, so a subscriber decodes it as usual. It reports false when even
// strings cut to nothing leave the event too large.
func trim(data []byte, limit int) ([]byte, bool) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil, false
	}
	// The type and the envelope's path say what the event is and where it
	// comes from: they are kept whole, and only the rest is cut.
	whole := map[string]any{}
	if m, ok := v.(map[string]any); ok {
		for _, k := range []string{"type", "path"} {
			if x, ok := m[k]; ok {
				whole[k] = x
				delete(m, k)
			}
		}
	}
	cut := func(n int) any {
		c := cutStrings(v, n)
		if m, ok := c.(map[string]any); ok {
			for k, x := range whole {
				m[k] = x
			}
		}
		return c
	}
	longest := 0
	walkStrings(v, func(s string) string { longest = max(longest, len(s)); return s })
	var best []byte
	lo, hi := 0, longest // find the largest cut length that fits
	for lo <= hi {
		mid := lo + (hi-lo)/2
		out, err := json.Marshal(cut(mid))
		if err == nil && len(out) <= limit {
			best, lo = out, mid+1
		} else {
			hi = mid - 1
		}
	}
	return best, best != nil
}

// cutStrings returns a copy of v with every string longer than n bytes cut
// to at most n (on a character boundary) and marked.
func cutStrings(v any, n int) any {
	return walkStrings(copyJSON(v), func(s string) string {
		if len(s) <= n {
			return s
		}
		k := n
		for k > 0 && !utf8.RuneStart(s[k]) {
			k--
		}
		return s[:k] + fmt.Sprintf("…[%d bytes cut: the event was over the bus's size limit]", len(s)-k)
	})
}

// walkStrings replaces every string value in v (not object keys) by f's
// result, in place, and returns v.
func walkStrings(v any, f func(string) string) any {
	switch x := v.(type) {
	case string:
		return f(x)
	case map[string]any:
		for k, e := range x {
			x[k] = walkStrings(e, f)
		}
	case []any:
		for i, e := range x {
			x[i] = walkStrings(e, f)
		}
	}
	return v
}

func copyJSON(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = copyJSON(e)
		}
		return m
	case []any:
		s := make([]any, len(x))
		for i, e := range x {
			s[i] = copyJSON(e)
		}
		return s
	}
	return v
}
