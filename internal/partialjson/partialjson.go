// Package partialjson salvages a best-effort value from a prefix of JSON
// text, the way streamed tool-call arguments arrive: {"path":"a.go","con
// yields {"path":"a.go","con":...} minus the unfinished key, an unfinished
// string keeps what it has, unfinished literals are completed, and
// unfinished containers are closed.
//
// [Parse] also reports whether the text was complete JSON, which the
// OpenAI provider uses to refuse tool calls whose arguments were cut off.
// [Stream] accumulates fragments and refreshes its preview only when the
// text has doubled since the last one, so a whole stream of n bytes costs
// O(n) parsing, not a re-parse of the prefix per fragment.
package partialjson

import (
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/agentloop/agentloop/internal/jsonnum"
)

// MaxDepth bounds nesting; deeper input is not salvaged.
const MaxDepth = 512

// Parse returns the value of text and whether text is complete JSON. For
// text that is not, it returns the best-effort value of the longest usable
// prefix, or nil when nothing can be salvaged. Empty text is the empty
// object. Raw control characters and stray backslashes inside strings (a
// common model mistake) are repaired first; the repaired text counts as
// complete when it is valid JSON. Parse never panics.
func Parse(text string) (v any, complete bool) {
	if strings.TrimSpace(text) == "" {
		return map[string]any{}, true
	}
	if v, ok := strict(text); ok {
		return v, true
	}
	repaired := repair(text)
	if repaired != text {
		if v, ok := strict(repaired); ok {
			return v, true
		}
	}
	if v, err := partial(text); err == nil {
		return v, false
	}
	if repaired != text {
		if v, err := partial(repaired); err == nil {
			return v, false
		}
	}
	return nil, false
}

// ParseObject is Parse for tool arguments: the value as an object, or an
// empty object when the salvaged value is not one.
func ParseObject(text string) (map[string]any, bool) {
	v, complete := Parse(text)
	if m, ok := v.(map[string]any); ok {
		return m, complete
	}
	return map[string]any{}, complete && v == nil
}

// strict parses complete JSON text. Numbers take their normal form (see
// internal/jsonnum): a float64, or, for an integer beyond ±2^53, a
// json.Number holding its digits, so that it is never rounded.
func strict(text string) (any, bool) {
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, false // more than one value
	}
	return normalize(v)
}

// normalize gives the numbers of a freshly decoded value their normal
// form, in place; it reports false for a number past float64's range.
func normalize(v any) (any, bool) {
	switch x := v.(type) {
	case json.Number:
		return jsonnum.Normal(string(x))
	case map[string]any:
		for k, e := range x {
			n, ok := normalize(e)
			if !ok {
				return nil, false
			}
			x[k] = n
		}
	case []any:
		for i, e := range x {
			n, ok := normalize(e)
			if !ok {
				return nil, false
			}
			x[i] = n
		}
	}
	return v, true
}

// preview is Parse without the verdict: the best-effort value, skipping the
// strict pass (the prefix parser yields the same value for complete text).
func preview(text string) any {
	if v, err := partial(text); err == nil {
		return v
	}
	if r := repair(text); r != text {
		if v, err := partial(r); err == nil {
			return v
		}
	}
	return nil
}

// repair escapes raw control characters inside strings and doubles
// backslashes that do not start a valid escape. It returns text itself when
// nothing needed repair.
func repair(text string) string {
	var b strings.Builder
	inString := false
	last := 0 // text[last:i] is pending, unchanged
	flush := func(i int, with string) {
		if b.Len() == 0 {
			b.Grow(len(text) + 16)
		}
		b.WriteString(text[last:i])
		b.WriteString(with)
		last = i + 1
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		if !inString {
			inString = c == '"'
			continue
		}
		switch {
		case c == '"':
			inString = false
		case c == '\\':
			if i+1 < len(text) && validEscape(text[i+1:]) {
				if text[i+1] == 'u' {
					i += 5
				} else {
					i++
				}
			} else {
				flush(i, `\\`)
			}
		case c < 0x20:
			switch c {
			case '\b':
				flush(i, `\b`)
			case '\f':
				flush(i, `\f`)
			case '\n':
				flush(i, `\n`)
			case '\r':
				flush(i, `\r`)
			case '\t':
				flush(i, `\t`)
			default:
				flush(i, `\u00`+string("0123456789abcdef"[c>>4])+string("0123456789abcdef"[c&15]))
			}
		}
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

func validEscape(s string) bool {
	switch s[0] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		return len(s) >= 5 && isHex(s[1]) && isHex(s[2]) && isHex(s[3]) && isHex(s[4])
	}
	return false
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

var (
	errSyntax = errors.New("partialjson: syntax error")
	errDepth  = errors.New("partialjson: nesting too deep")
)

// parser reads a prefix of JSON; reaching the end of the text inside a
// value yields what was read so far.
type parser struct {
	s     string
	i     int
	depth int
}

func partial(text string) (any, error) {
	p := &parser{s: text}
	p.ws()
	if p.i >= len(p.s) {
		return nil, errSyntax
	}
	return p.value()
}

func (p *parser) eof() bool { return p.i >= len(p.s) }

func (p *parser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value() (any, error) {
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object()
	case c == '[':
		return p.array()
	case c == '"':
		s, _, err := p.str()
		return s, err
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	default:
		return p.literal()
	}
}

func (p *parser) enter() error {
	if p.depth++; p.depth > MaxDepth {
		return errDepth
	}
	return nil
}

func (p *parser) object() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.i++ // {
	m := map[string]any{}
	for {
		p.ws()
		if p.eof() {
			return m, nil
		}
		if p.s[p.i] == '}' {
			p.i++
			return m, nil
		}
		if len(m) > 0 || p.s[p.i] == ',' {
			if p.s[p.i] != ',' {
				return nil, errSyntax
			}
			p.i++
			p.ws()
			if p.eof() {
				return m, nil
			}
		}
		if p.s[p.i] != '"' {
			return nil, errSyntax
		}
		key, closed, err := p.str()
		if err != nil {
			return nil, err
		}
		p.ws()
		if !closed || p.eof() {
			return m, nil // an unfinished key is dropped
		}
		if p.s[p.i] != ':' {
			return nil, errSyntax
		}
		p.i++
		p.ws()
		if p.eof() {
			return m, nil
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		m[key] = v
	}
}

func (p *parser) array() (any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	p.i++ // [
	a := []any{}
	for {
		p.ws()
		if p.eof() {
			return a, nil
		}
		if p.s[p.i] == ']' {
			p.i++
			return a, nil
		}
		if len(a) > 0 {
			if p.s[p.i] != ',' {
				return nil, errSyntax
			}
			p.i++
			p.ws()
			if p.eof() {
				return a, nil
			}
		}
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
	}
}

// str reads a string starting at the opening quote. closed reports whether
// the closing quote was reached; an unfinished escape at the end is
// dropped.
func (p *parser) str() (s string, closed bool, err error) {
	p.i++ // "
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return b.String(), true, nil
		case c == '\\':
			if p.i+1 >= len(p.s) {
				p.i = len(p.s)
				return b.String(), false, nil
			}
			e := p.s[p.i+1]
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, n, ok := p.unicode(p.i)
				if !ok {
					if p.i+n >= len(p.s) {
						p.i = len(p.s)
						return b.String(), false, nil
					}
					return "", false, errSyntax
				}
				b.WriteRune(r)
				p.i += n
				continue
			default:
				return "", false, errSyntax
			}
			p.i += 2
		case c < 0x20:
			return "", false, errSyntax
		default:
			j := p.i + 1
			for j < len(p.s) && p.s[j] != '"' && p.s[j] != '\\' && p.s[j] >= 0x20 {
				j++
			}
			b.WriteString(p.s[p.i:j])
			p.i = j
		}
	}
	return b.String(), false, nil
}

// unicode decodes \uXXXX (and a following low surrogate) at i. On failure n
// is how far it got, so the caller can tell an unfinished escape at the end
// of the text from a bad one.
func (p *parser) unicode(i int) (r rune, n int, ok bool) {
	hex4 := func(at int) (rune, bool) {
		if at+4 > len(p.s) {
			return 0, false
		}
		v, err := strconv.ParseUint(p.s[at:at+4], 16, 16)
		return rune(v), err == nil
	}
	r1, ok := hex4(i + 2)
	if !ok {
		return 0, len(p.s) - i, false
	}
	if utf16.IsSurrogate(r1) && strings.HasPrefix(p.s[i+6:], `\u`) {
		if r2, ok := hex4(i + 8); ok {
			if d := utf16.DecodeRune(r1, r2); d != utf8.RuneError {
				return d, 12, true
			}
		}
	}
	return r1, 6, true
}

func (p *parser) number() (any, error) {
	start := p.i
	for p.i < len(p.s) && strings.IndexByte("+-0123456789.eE", p.s[p.i]) >= 0 {
		p.i++
	}
	tok := p.s[start:p.i]
	if p.eof() {
		// An unfinished exponent is dropped; an unfinished fraction or a
		// lone sign cannot be salvaged.
		if k := strings.IndexAny(tok, "eE"); k >= 0 && strings.Trim(tok[k+1:], "+-") == "" {
			tok = tok[:k]
		}
		if strings.HasSuffix(tok, ".") || tok == "-" || tok == "" {
			return nil, errSyntax
		}
	}
	f, err := strconv.ParseFloat(tok, 64)
	if err != nil || !validNumber(tok) {
		return nil, errSyntax
	}
	return f, nil
}

func validNumber(tok string) bool { return json.Valid([]byte(tok)) }

func (p *parser) literal() (any, error) {
	for _, lit := range []struct {
		word string
		v    any
	}{{"true", true}, {"false", false}, {"null", nil}} {
		rest := p.s[p.i:]
		if strings.HasPrefix(rest, lit.word) {
			p.i += len(lit.word)
			return lit.v, nil
		}
		if len(rest) < len(lit.word) && strings.HasPrefix(lit.word, rest) {
			p.i = len(p.s)
			return lit.v, nil
		}
	}
	return nil, errSyntax
}

// Stream accumulates the argument text of one streamed tool call.
type Stream struct {
	buf      strings.Builder
	previewd int // length of the text at the last preview
}

// Write appends a fragment. When the text has at least doubled since the
// last preview (and for the first fragment), it returns a fresh best-effort
// preview of the arguments; otherwise nil. Over a whole stream the previews
// cost O(n) for n bytes.
func (s *Stream) Write(fragment string) map[string]any {
	s.buf.WriteString(fragment)
	n := s.buf.Len()
	if n == 0 || (s.previewd > 0 && n < 2*s.previewd) {
		return nil
	}
	s.previewd = n
	if m, ok := preview(s.buf.String()).(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

// Text returns the text so far.
func (s *Stream) Text() string { return s.buf.String() }

// Final parses the whole text: the arguments and whether they were
// complete JSON (an object, or empty).
func (s *Stream) Final() (map[string]any, bool) { return ParseObject(s.buf.String()) }
