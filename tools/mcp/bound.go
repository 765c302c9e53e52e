package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Every message from a server passes a boundedReader before the SDK
// decodes it, so no message past Limits.MaxMessageBytes is ever held. An
// answer to a request that is too large is read on without being kept,
// only its "id" noted, and the SDK gets a small answer for that id in its
// place: for a call's result an error saying so, so the call learns
// exactly what happened; for a page of tools the page reduced to the
// bound (see idScanner). The connection lives on. A
// notification or request from the server that is too large is dropped;
// anything else too large ends the connection.

// codeTooLarge is the JSON-RPC error code of the stand-in answer, with
// tooLargeMessage as its message and {"size": N} as its data.
const (
	codeTooLarge    = -32099
	tooLargeMessage = "agentloop: the answer was larger than Limits.MaxMessageBytes"
)

// codeTooDeep is the JSON-RPC error code of the stand-in for an answer
// that nests more than maxMessageDepth levels deep, with tooDeepMessage
// as its message: the SDK decodes no message nested past 1000 levels, and
// would take the answer for a broken connection.
const (
	codeTooDeep     = -32098
	tooDeepMessage  = "agentloop: the answer nested too deeply"
	maxMessageDepth = 900
)

// tooDeep reports whether err is the stand-in for an answer nested past
// maxMessageDepth.
func tooDeep(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && je.Code == codeTooDeep && je.Message == tooDeepMessage
}

// tooLarge reports whether err is the stand-in for an answer past the
// bound, and the answer's size in bytes.
func tooLarge(err error) (int64, bool) {
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != codeTooLarge || je.Message != tooLargeMessage {
		return 0, false
	}
	var d struct {
		Size int64 `json:"size"`
	}
	if json.Unmarshal(je.Data, &d) != nil {
		return 0, false
	}
	return d.Size, true
}

// framing is how a stream divides into messages.
type framing int

const (
	lines framing = iota // newline-delimited JSON (stdio)
	sse                  // server-sent events: a message per data line
	whole                // the stream is one message (an HTTP JSON body)
)

// boundedReader passes the messages of r through, replacing each one
// past max bytes (see above).
type boundedReader struct {
	r        *bufio.Reader
	framed   framing
	max      int
	maxTool  int // a tool's definition within a page reduced to the bound
	maxTools int // the tools a page keeps (Limits.MaxTools, and one to tell there were more)
	server   string
	warn     func(msg string, args ...any)

	buf []byte // the message being read
	out []byte // what Read returns next
	err error  // returned once out is empty
}

func newBoundedReader(r io.Reader, framed framing, lim Limits, server string, warn func(string, ...any)) *boundedReader {
	return &boundedReader{r: bufio.NewReaderSize(r, 64<<10), framed: framed, max: lim.MaxMessageBytes, maxTool: 2 * lim.MaxToolBytes, maxTools: lim.MaxTools + 1, server: server, warn: warn}
}

func (b *boundedReader) Read(p []byte) (int, error) {
	for len(b.out) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		b.fill()
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	return n, nil
}

// next returns the next piece of the stream, and whether it ends a
// message (a line). It is valid until the next call.
func (b *boundedReader) next() ([]byte, bool, error) {
	if b.framed == whole {
		chunk, err := b.r.Peek(b.r.Size())
		if len(chunk) > 0 {
			_, _ = b.r.Discard(len(chunk))
			return chunk, false, nil
		}
		return nil, false, err
	}
	chunk, err := b.r.ReadSlice('\n')
	switch {
	case err == nil:
		return chunk, true, nil
	case errors.Is(err, bufio.ErrBufferFull):
		return chunk, false, nil
	}
	return chunk, false, err
}

// fill reads the next message into out, or the stand-in for it.
func (b *boundedReader) fill() {
	b.buf = b.buf[:0]
	if cap(b.buf) > 1<<20 { // a large message held once is not kept held
		b.buf = nil
	}
	var sc *idScanner
	for {
		chunk, end, err := b.next()
		if sc == nil && len(b.buf)+len(chunk) > b.max {
			sc = b.scanner(b.buf, chunk)
			b.buf = b.buf[:0]
		} else if sc != nil {
			sc.write(chunk)
		} else {
			b.buf = append(b.buf, chunk...)
		}
		if !end && err == nil {
			continue
		}
		b.out = b.buf
		if sc != nil {
			b.out = b.standIn(sc)
		} else if len(b.buf) > scanFrom || nestsDeeper(b.buf, maxToolDepth) {
			b.out = b.reduce(b.buf)
		}
		if err != nil && b.err == nil {
			b.err = err
		}
		return
	}
}

// scanner starts to follow a message past the bound from its first
// bytes, read and chunk.
func (b *boundedReader) scanner(read, chunk []byte) *idScanner {
	sc := &idScanner{maxTool: b.maxTool, maxTools: b.maxTools, maxKept: max(b.max-8<<10, b.max/2)}
	if b.framed == sse {
		head := read
		if len(head) < len("data: ") {
			head, chunk = append(head, chunk...), nil
		}
		rest, ok := bytes.CutPrefix(head, []byte("data:"))
		if !ok {
			sc.skip = true // another field: dropped
			sc.size = int64(len(head) + len(chunk))
			return sc
		}
		read, _ = bytes.CutPrefix(rest, []byte(" "))
	}
	sc.write(read)
	sc.write(chunk)
	return sc
}

// scanFrom is the size from which a message within the bound is read
// for a page of tools to reduce: a smaller one costs the SDK little.
const scanFrom = 64 << 10

// reduce returns msg, or when it is a page of tools with more than
// Limits.MaxTools tools or a tool too large or too deep, the page reduced (see
// idScanner): decoding a hundred thousand tools, or a tool's schema of
// megabytes, costs the SDK far more memory than their bytes.
func (b *boundedReader) reduce(msg []byte) []byte {
	payload, prefix := msg, []byte(nil)
	if b.framed == sse {
		rest, ok := bytes.CutPrefix(msg, []byte("data:"))
		if !ok {
			return msg
		}
		payload, prefix = bytes.TrimPrefix(rest, []byte(" ")), []byte("data: ")
	}
	sc := &idScanner{maxTool: b.maxTool, maxTools: b.maxTools, maxKept: b.max}
	sc.write(payload)
	id, k := sc.what()
	if k != answer {
		return msg
	}
	page, ok := payload, true
	if sc.dropped > 0 || sc.stubs > 0 {
		page, ok = sc.reducedPage(id)
	}
	if !ok {
		page = payload
	}
	if nestsDeeper(page, maxMessageDepth) { // the SDK would not decode it
		data, _ := json.Marshal(map[string]any{"depth": maxMessageDepth})
		page, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
			"error": map[string]any{"code": codeTooDeep, "message": tooDeepMessage, "data": json.RawMessage(data)}})
	} else if len(page) == len(payload) {
		return msg
	}
	out := append(prefix, page...)
	if b.framed != whole {
		out = append(out, '\n')
	}
	return out
}

// standIn returns what replaces a message past the bound: an error
// answer for its id, or nothing (a notification, a request, a field of
// an event), or it sets b.err when it cannot tell what the message was.
func (b *boundedReader) standIn(sc *idScanner) []byte {
	if sc.skip {
		b.warn("mcp: a line of an event stream past Limits.MaxMessageBytes was dropped", "server", b.server, "bytes", sc.size)
		return nil
	}
	id, k := sc.what()
	switch k {
	case answer:
		msg, ok := sc.reducedPage(id)
		if !ok {
			data, _ := json.Marshal(map[string]any{"size": sc.size})
			msg, _ = json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
				"error": map[string]any{"code": codeTooLarge, "message": tooLargeMessage, "data": json.RawMessage(data)}})
		}
		switch b.framed {
		case lines:
			msg = append(msg, '\n')
		case sse:
			msg = append(append([]byte("data: "), msg...), '\n')
		}
		return msg
	case notice:
		b.warn("mcp: a notification or request past Limits.MaxMessageBytes was dropped", "server", b.server, "bytes", sc.size, "max", b.max)
		return nil
	}
	b.err = fmt.Errorf("mcp: server %q sent a message of %d bytes, more than the %d allowed (Limits.MaxMessageBytes), that answers no request", b.server, sc.size, b.max)
	b.warn("mcp: connection ended", "server", b.server, "err", b.err)
	return nil
}

// boundedBody is an HTTP response body behind a boundedReader.
type boundedBody struct {
	*boundedReader
	io.Closer
}

// boundedBodyOf wraps an HTTP response's body: an event stream is framed
// by lines, anything else is one message.
func (s *server) boundedBodyOf(body io.ReadCloser, contentType string) io.ReadCloser {
	framed := whole
	if strings.HasPrefix(strings.ToLower(strings.TrimSpace(contentType)), "text/event-stream") {
		framed = sse
	}
	return boundedBody{newBoundedReader(body, framed, s.ts.opts.Limits, s.spec.Name, s.ts.opts.Logger.Warn), body}
}
