package httpx

import (
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// MaxQuotedBytes bounds an error message that may quote a server (its
// refusal, an error event, a chunk it could not read): Quote cuts a longer
// one to this many bytes, marker included.
const MaxQuotedBytes = 2 << 10

// minRun is the shortest run of a key's characters Redact removes: no 8
// characters of the key in a row survive, in any of the forms it reads.
const minRun = 8

// maxDecodes bounds how many layers of escaping Redact looks through.
const maxDecodes = 4

// Quote returns text fit for an error message the model, the events and a
// saved session carry: the key removed (Redact), then cut to MaxQuotedBytes
// with a marker saying how long the text was. Quote of a quoted text is
// the text itself.
func Quote(text, key string) string { return quote(text, key, MaxQuotedBytes) }

// quote is Quote with a bound of max bytes.
func quote(text, key string, max int) string {
	total := len(text)
	// The key is removed from a window a little longer than what is kept,
	// so that no part of it survives at the cut.
	if window := 4 * max; len(text) > window {
		text = text[:window]
	}
	text = Redact(text, key)
	if total <= max && len(text) <= max {
		return text
	}
	marker := " [... cut from " + strconv.Itoa(total) + " bytes]"
	cut := min(len(text), max-len(marker))
	for cut > 0 && cut < len(text) && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return text[:cut] + marker
}

// Redact removes key from text that may echo it, in whatever form the text
// carries it: as is, in another case, JSON-escaped (\u0073, \/),
// URL-escaped (%73), as an HTML character reference (&#115;),
// \x-escaped, those nested up to four deep, or encoded whole in hex or
// base64 (standard or URL alphabet, at any alignment). Every run of 8 or
// more of the key's characters in a row (all of a shorter key), in any of
// those forms, becomes "[redacted]", escapes and all. A key shorter than 4
// bytes is left alone. Forms it does not read (a key spelled out with
// spaces between its characters, encrypted, or split across two
// messages) are beyond it.
func Redact(text, key string) string {
	if len(key) < 4 || text == "" {
		return text
	}
	sets := keyForms(key)
	cover := make([]bool, len(text)) // the bytes of text that carry the key
	found := false
	v := view{text: []byte(text), from: make([]int32, len(text)), to: make([]int32, len(text))}
	for i := range v.from {
		v.from[i], v.to[i] = int32(i), int32(i+1)
	}
	for pass := 0; ; pass++ {
		for _, s := range sets {
			found = s.mark(v, cover) || found
		}
		if pass == maxDecodes {
			break
		}
		next, ok := v.decode()
		if !ok {
			break
		}
		v = next
	}
	if !found {
		return text
	}
	var b strings.Builder
	for i := 0; i < len(text); {
		if !cover[i] {
			j := i
			for j < len(text) && !cover[j] {
				j++
			}
			b.WriteString(text[i:j])
			i = j
			continue
		}
		for i < len(text) && cover[i] {
			i++
		}
		b.WriteString("[redacted]")
	}
	return b.String()
}

// gramSet is every run of n characters of one form of the key, folded to
// lower case.
type gramSet struct {
	n     int
	grams map[string]bool
}

func keyForms(key string) []gramSet {
	n := min(minRun, len(key))
	plain := gramSet{n: n, grams: map[string]bool{}}
	plain.add(key)
	if len(key) < minRun {
		return []gramSet{plain}
	}
	enc := gramSet{n: minRun, grams: map[string]bool{}}
	enc.add(hex.EncodeToString([]byte(key)))
	for align := range 3 {
		// The characters of base64 that carry the key's bits alone,
		// whatever surrounds it.
		padded := append(make([]byte, align), key...)
		s := base64.RawStdEncoding.EncodeToString(padded)
		first, last := (8*align+5)/6, 8*len(padded)/6
		if last > first {
			enc.add(s[first:last])
			enc.add(strings.NewReplacer("+", "-", "/", "_").Replace(s[first:last]))
		}
	}
	return []gramSet{plain, enc}
}

func (g gramSet) add(form string) {
	form = lowerASCII(form)
	for i := 0; i+g.n <= len(form); i++ {
		g.grams[form[i:i+g.n]] = true
	}
}

// mark sets cover over the text that the grams found in v came from.
func (g gramSet) mark(v view, cover []bool) bool {
	if len(v.text) < g.n {
		return false
	}
	low := []byte(lowerASCII(string(v.text)))
	found := false
	for i := 0; i+g.n <= len(low); i++ {
		if g.grams[string(low[i:i+g.n])] {
			for j := v.from[i]; j < v.to[i+g.n-1]; j++ {
				cover[j] = true
			}
			found = true
		}
	}
	return found
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// view is text with one more layer of escapes decoded; from and to give,
// for each of its bytes, the span of the original text it came from.
type view struct {
	text     []byte
	from, to []int32
}

// decode decodes one layer of escapes; ok is false when there were none.
func (v view) decode() (out view, ok bool) {
	t := v.text
	for i := 0; i < len(t); {
		r, size := unescape(t, i)
		if size == 0 {
			out.text = append(out.text, t[i])
			out.from, out.to = append(out.from, v.from[i]), append(out.to, v.to[i])
			i++
			continue
		}
		ok = true
		var buf [utf8.UTFMax]byte
		enc := buf[:1]
		if r > utf8.MaxRune { // a byte as is: %xx and \xhh may be parts of UTF-8
			buf[0] = byte(r - utf8.MaxRune - 1)
		} else {
			enc = buf[:utf8.EncodeRune(buf[:], r)]
		}
		for _, c := range enc {
			out.text = append(out.text, c)
			out.from, out.to = append(out.from, v.from[i]), append(out.to, v.to[i+size-1])
		}
		i += size
	}
	return out, ok
}

// unescape reads the escape at t[i:], if any: the character (or byte, as a
// negative offset from utf8.MaxRune+1) it stands for and its length.
func unescape(t []byte, i int) (rune, int) {
	rest := t[i:]
	switch rest[0] { // not + for a space: a key has none, and may have a +
	case '%':
		if b, ok := hexByte(rest[1:]); ok {
			return byteRune(b), 3
		}
	case '\\':
		if len(rest) < 2 {
			return 0, 0
		}
		switch rest[1] {
		case 'u':
			r, ok := hex4(rest[2:])
			if !ok {
				return 0, 0
			}
			if utf16.IsSurrogate(r) && len(rest) >= 12 && rest[6] == '\\' && rest[7] == 'u' {
				if r2, ok := hex4(rest[8:]); ok {
					if c := utf16.DecodeRune(r, r2); c != utf8.RuneError {
						return c, 12
					}
				}
			}
			return r, 6
		case 'x':
			if b, ok := hexByte(rest[2:]); ok {
				return byteRune(b), 4
			}
		case '"', '\\', '/', '\'':
			return rune(rest[1]), 2
		case 'b':
			return '\b', 2
		case 'f':
			return '\f', 2
		case 'n':
			return '\n', 2
		case 'r':
			return '\r', 2
		case 't':
			return '\t', 2
		}
	case '&':
		if len(rest) > 3 && rest[1] == '#' {
			end := strings.IndexByte(string(rest[:min(len(rest), 12)]), ';')
			if end < 3 {
				return 0, 0
			}
			num, base := string(rest[2:end]), 10
			if num[0] == 'x' || num[0] == 'X' {
				num, base = num[1:], 16
			}
			if n, err := strconv.ParseUint(num, base, 21); err == nil && n <= utf8.MaxRune {
				return rune(n), end + 1
			}
		}
	}
	return 0, 0
}

// byteRune carries a decoded byte through decode, which writes it as is.
func byteRune(b byte) rune {
	if b < utf8.RuneSelf {
		return rune(b)
	}
	return utf8.MaxRune + 1 + rune(b)
}

func hexByte(s []byte) (byte, bool) {
	if len(s) < 2 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(s[:2]), 16, 8)
	return byte(v), err == nil
}

func hex4(s []byte) (rune, bool) {
	if len(s) < 4 {
		return 0, false
	}
	v, err := strconv.ParseUint(string(s[:4]), 16, 16)
	return rune(v), err == nil
}
