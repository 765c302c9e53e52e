package mcp

import (
	"bytes"
	"encoding/json"
)

// kind is what a message turned out to be.
type kind int

const (
	unknown kind = iota
	answer       // a response: an id and a result or an error
	notice       // a notification or a request: a method
)

// The marks a reduced page of tools carries for list and keep (see
// idScanner): a tool too large becomes a stub with metaTooLarge (its
// size) in its _meta; a page cut short has metaCut ({"size", "dropped"}).
const (
	metaTooLarge = "agentloop/tooLarge"
	metaTooDeep  = "agentloop/tooDeep"
	metaCut      = "agentloop/cut"
)

// maxToolDepth is how deeply a tool's definition may nest (objects and
// arrays, the definition's own braces included). A deeper one becomes a
// stub with metaTooDeep, and is left out: the SDK decodes no message that
// nests more than 1000 levels deep, and one such tool would otherwise
// fail its whole page.
const maxToolDepth = 512

// maxFrames is how deep the scanner follows the structure of a message;
// deeper levels are only counted.
const maxFrames = 8

// frame is an object or array the scanner is in.
type frame struct {
	array bool
	state int    // objects: expectKey, inKey, afterKey, inValue; arrays: expectKey (a value), inValue
	key   []byte // objects: the key being read or last read, its first 16 bytes
}

const (
	expectKey = iota
	inKey
	afterKey
	inValue
)

// idScanner follows a JSON-RPC message past Limits.MaxMessageBytes byte
// by byte without keeping it whole. It keeps its top-level "id" (when
// short) and which of "result", "error" and "method" it has; and when it
// answers with a page of tools (result.tools), the page reduced to the
// bound: each tool of at most maxTool bytes as it is, a larger one as a
// stub (its name and size), until the tools kept reach maxKept bytes —
// the rest are dropped and counted, so what is kept is what came first.
type idScanner struct {
	skip       bool // not followed, only counted
	size       int64
	first      byte // the first byte that is not space
	stack      []frame
	deep       int // levels below the stack's last
	inString   bool
	escaped    bool
	closed     bool // the top-level value ended
	afterClose bool // something other than space followed it
	broken     bool // more closed than opened

	id               []byte
	idBad            bool
	answers, method  bool
	capture          *[]byte // the value being kept: id, cursor or a tool's name
	capLimit, capAt  int     // its bound, and its depth
	capBad           bool    // the value was too long or not a scalar
	cursorBad        bool
	cursor, elemName []byte

	maxTool, maxKept int
	maxTools         int    // tools kept at most (0: no bound but maxKept)
	stubs            int    // tools kept as stubs
	count            int    // tools kept
	page             bool   // result.tools was an array
	kept             []byte // the tools kept (and stubs), comma-separated
	full             bool   // the tools kept reached maxKept
	dropped          int    // tools after that
	inElem, elemBig  bool
	elemDeep         bool // the tool being read nests past maxToolDepth
	elem             []byte
	elemStart        int64
}

func (sc *idScanner) depth() int { return len(sc.stack) + sc.deep }

// frame is the innermost level followed, or nil below them.
func (sc *idScanner) frame() *frame {
	if sc.deep > 0 || len(sc.stack) == 0 {
		return nil
	}
	return &sc.stack[len(sc.stack)-1]
}

func (sc *idScanner) write(p []byte) {
	base := sc.size
	sc.size += int64(len(p))
	if sc.skip {
		return
	}
	for i := 0; i < len(p); i++ {
		if sc.inString && !sc.escaped && !sc.keeping() {
			// Nothing of this string is kept but by the tool being
			// read: skip to its end.
			j := bytes.IndexAny(p[i:], `"\`)
			seg := p[i:]
			if j >= 0 {
				seg = p[i : i+j]
			}
			sc.addElem(seg...)
			if j < 0 {
				return
			}
			i += j
		}
		sc.byte(p[i], base+int64(i))
	}
}

// keeping reports a key or a kept value is being read.
func (sc *idScanner) keeping() bool {
	if f := sc.frame(); f != nil && !f.array && f.state == inKey {
		return true
	}
	return sc.capture != nil && sc.depth() == sc.capAt
}

func (sc *idScanner) addElem(b ...byte) {
	if !sc.inElem || sc.elemBig || sc.elemDeep {
		return
	}
	if len(sc.elem)+len(b) > sc.maxTool {
		sc.elemBig, sc.elem = true, nil
		return
	}
	sc.elem = append(sc.elem, b...)
}

// take keeps c where it belongs: the tool being read, the key being
// read (key: c is part of it), the value being kept.
func (sc *idScanner) take(c byte, key bool) {
	sc.addElem(c)
	if f := sc.frame(); key && f != nil && len(f.key) < 16 {
		f.key = append(f.key, c)
	}
	if sc.capture != nil && sc.depth() == sc.capAt && !sc.capBad {
		if len(*sc.capture) >= sc.capLimit {
			sc.capBad = true
			return
		}
		*sc.capture = append(*sc.capture, c)
	}
}

func (sc *idScanner) byte(c byte, at int64) {
	f := sc.frame()
	if sc.inString {
		closing := !sc.escaped && c == '"'
		sc.take(c, f != nil && !f.array && f.state == inKey && !closing)
		switch {
		case sc.escaped:
			sc.escaped = false
		case c == '\\':
			sc.escaped = true
		case closing:
			sc.inString = false
			if f != nil && !f.array && f.state == inKey {
				f.state = afterKey
			}
		}
		return
	}
	if c == ' ' || c == '\t' || c == '\r' || c == '\n' {
		return
	}
	if sc.first == 0 {
		sc.first = c
	}
	if sc.closed || sc.broken {
		sc.afterClose = true
		return
	}
	if f != nil && f.array && f.state == expectKey && c != ']' {
		f.state = inValue // a value of the array begins
		if c == '{' && sc.atTools() && !sc.inElem {
			sc.inElem, sc.elemBig, sc.elemDeep, sc.elem, sc.elemName, sc.elemStart = true, false, false, sc.elem[:0], nil, at
		}
	}
	switch c {
	case '"':
		sc.inString = true
		if f != nil && !f.array && f.state == expectKey {
			f.state, f.key = inKey, f.key[:0]
			sc.addElem(c)
			return
		}
		sc.take(c, false)
	case '{', '[':
		sc.take(c, false)
		if sc.capture != nil && sc.depth() == sc.capAt {
			sc.capBad = true
		}
		if sc.inElem && sc.depth()-2 > maxToolDepth { // the tool's own brace is at depth 3
			sc.elemDeep, sc.elem = true, nil
		}
		if len(sc.stack) < maxFrames && sc.deep == 0 {
			sc.stack = append(sc.stack, frame{array: c == '['})
			if c == '[' && sc.atTools() {
				sc.page = true
			}
		} else {
			sc.deep++
		}
	case '}', ']':
		sc.addElem(c)
		if sc.capture != nil && sc.depth() == sc.capAt {
			sc.endCapture()
		}
		switch {
		case sc.deep > 0:
			sc.deep--
		case len(sc.stack) > 0:
			sc.stack = sc.stack[:len(sc.stack)-1]
		default:
			sc.broken = true
			return
		}
		if sc.depth() == 0 {
			sc.closed = true
		}
		if sc.inElem && sc.depth() == 3 {
			sc.endElem(at - sc.elemStart + 1)
		}
	case ':':
		sc.addElem(c)
		if f != nil && !f.array && f.state == afterKey {
			f.state = inValue
			sc.value(string(f.key))
		}
	case ',':
		sc.addElem(c)
		if sc.capture != nil && sc.depth() == sc.capAt {
			sc.endCapture()
		}
		if f != nil {
			f.state = expectKey
		}
	default:
		sc.take(c, false)
	}
}

// value notes a key whose value matters, and starts to keep the value
// when it is one kept.
func (sc *idScanner) value(key string) {
	keep := func(into *[]byte, limit int) {
		*into = (*into)[:0]
		sc.capture, sc.capLimit, sc.capAt, sc.capBad = into, limit, sc.depth(), false
	}
	switch d := sc.depth(); {
	case d == 1 && key == "id":
		keep(&sc.id, 128)
	case d == 1 && (key == "result" || key == "error"):
		sc.answers = true
	case d == 1 && key == "method":
		sc.method = true
	case d == 2 && key == "nextCursor" && string(sc.stack[0].key) == "result":
		keep(&sc.cursor, 4096)
	case d == 4 && key == "name" && sc.inElem:
		keep(&sc.elemName, 256)
	}
}

// endCapture ends the value being kept, noting when it was too long or
// not a scalar.
func (sc *idScanner) endCapture() {
	switch sc.capture {
	case &sc.id:
		sc.idBad = sc.capBad
	case &sc.cursor:
		sc.cursorBad = sc.capBad
	case &sc.elemName:
		if sc.capBad {
			sc.elemName = nil
		}
	}
	sc.capture = nil
}

// atTools reports the scanner is in result.tools.
func (sc *idScanner) atTools() bool {
	s := sc.stack
	return sc.deep == 0 && len(s) == 3 && !s[0].array && string(s[0].key) == "result" &&
		!s[1].array && string(s[1].key) == "tools" && s[2].array
}

// endElem decides on the tool just read, of size bytes.
func (sc *idScanner) endElem(size int64) {
	sc.inElem = false
	item := sc.elem
	stub := sc.elemBig || sc.elemDeep
	if stub {
		name := sc.elemName
		if len(name) == 0 || name[0] != '"' || !json.Valid(name) {
			name = []byte(`""`)
		}
		meta, _ := json.Marshal(map[string]any{metaTooLarge: size})
		if sc.elemDeep {
			meta, _ = json.Marshal(map[string]any{metaTooDeep: maxToolDepth})
		}
		item = append(append(append([]byte(`{"name":`), name...), `,"inputSchema":{"type":"object"},"_meta":`...), meta...)
		item = append(item, '}')
	}
	if sc.full || len(sc.kept)+len(item)+1 > sc.maxKept || sc.maxTools > 0 && sc.count == sc.maxTools {
		sc.full = true
		sc.dropped++
		return
	}
	sc.count++
	if stub {
		sc.stubs++
	}
	if len(sc.kept) > 0 {
		sc.kept = append(sc.kept, ',')
	}
	sc.kept = append(sc.kept, item...)
}

// what says what the message was, and its id when it is an answer.
func (sc *idScanner) what() (json.RawMessage, kind) {
	if sc.first != '{' || !sc.closed || sc.afterClose {
		return nil, unknown
	}
	if sc.method {
		return nil, notice
	}
	if sc.answers && !sc.idBad && len(sc.id) > 0 && json.Valid(sc.id) && (sc.id[0] == '"' || sc.id[0] == '-' || sc.id[0] >= '0' && sc.id[0] <= '9') {
		return json.RawMessage(sc.id), answer
	}
	return nil, unknown
}

// reducedPage returns the page of tools that stands in for the message,
// when it was one.
func (sc *idScanner) reducedPage(id json.RawMessage) ([]byte, bool) {
	if !sc.page || sc.inElem {
		return nil, false
	}
	out := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	out = append(out, `,"result":{"tools":[`...)
	out = append(out, sc.kept...)
	out = append(out, ']')
	if len(sc.cursor) > 0 && !sc.cursorBad && sc.cursor[0] == '"' && json.Valid(sc.cursor) {
		out = append(append(out, `,"nextCursor":`...), sc.cursor...)
	}
	if sc.dropped > 0 {
		meta, _ := json.Marshal(map[string]any{metaCut: map[string]any{"size": sc.size, "dropped": sc.dropped}})
		out = append(append(out, `,"_meta":`...), meta...)
	}
	out = append(out, `}}`...)
	// The tools kept are the server's bytes: when they are not JSON, the
	// page is no page.
	return out, json.Valid(out)
}

// nestsDeeper reports whether the JSON text msg nests objects and arrays
// more than n levels deep, reading no further than it takes to know.
func nestsDeeper(msg []byte, n int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range msg {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > n {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}
