package openai

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"time"
)

// boundedBody is a stream's body with the provider's limits: it fails past
// MaxResponseBytes, and ends the request when a read waits longer than
// IdleTimeout.
type boundedBody struct {
	body   io.ReadCloser
	cancel context.CancelCauseFunc
	ctx    context.Context
	left   int64 // bytes still allowed
	limit  int64
	idle   time.Duration
	timer  *time.Timer
	once   sync.Once
}

func newBoundedBody(body io.ReadCloser, cancel context.CancelCauseFunc, ctx context.Context, o Options) *boundedBody {
	b := &boundedBody{body: body, cancel: cancel, ctx: ctx, left: o.MaxResponseBytes, limit: o.MaxResponseBytes, idle: o.IdleTimeout}
	b.timer = time.AfterFunc(b.idle, func() { cancel(errIdleTimeout) })
	return b
}

func (b *boundedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, &limitError{what: "the response", limit: b.limit, name: "MaxResponseBytes"}
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	b.timer.Reset(b.idle)
	n, err := b.body.Read(p)
	b.left -= int64(n)
	if err != nil && !errors.Is(err, io.EOF) {
		if c := context.Cause(b.ctx); errors.Is(c, errIdleTimeout) {
			err = c
		}
	}
	return n, err
}

// Close releases the response and its timer.
func (b *boundedBody) Close() error {
	b.once.Do(func() {
		b.timer.Stop()
		b.cancel(nil)
	})
	return b.body.Close()
}

// sseEvent is one event of the stream: its name ("" for the default,
// "error" for the error event some servers send) and its data lines,
// joined with newlines.
type sseEvent struct {
	name string
	data []byte
}

// sseReader reads Server-Sent Events with a bound on the length of a line.
type sseReader struct {
	r       *bufio.Reader
	maxLine int
	data    bytes.Buffer
}

func newSSEReader(r io.Reader, maxLine int) *sseReader {
	return &sseReader{r: bufio.NewReaderSize(r, min(maxLine, 64<<10)), maxLine: maxLine}
}

// next returns the next event with data, or io.EOF after the last one. A
// stream that ends without a blank line after its last data still yields
// that event. The event's data is valid until the next call.
func (s *sseReader) next() (sseEvent, error) {
	var name string
	s.data.Reset()
	for {
		line, err := s.line()
		if err != nil && !errors.Is(err, io.EOF) {
			return sseEvent{}, err
		}
		switch {
		case len(line) == 0: // the end of an event
			if s.data.Len() > 0 {
				return sseEvent{name: name, data: s.data.Bytes()}, nil
			}
			name = ""
		case line[0] == ':': // a comment
		default:
			field, value, _ := bytes.Cut(line, []byte{':'})
			value = bytes.TrimPrefix(value, []byte{' '})
			switch string(field) {
			case "data":
				if s.data.Len() > 0 {
					s.data.WriteByte('\n')
				}
				s.data.Write(value)
			case "event":
				name = string(value)
			}
		}
		if err != nil { // end of the stream
			if s.data.Len() > 0 {
				return sseEvent{name: name, data: s.data.Bytes()}, nil
			}
			return sseEvent{}, io.EOF
		}
	}
}

// line reads one line without its line ending, refusing one longer than
// maxLine.
func (s *sseReader) line() ([]byte, error) {
	var long []byte // a line longer than the reader's buffer
	for {
		chunk, err := s.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(chunk) > s.maxLine {
				return nil, &limitError{what: "an SSE line", limit: int64(s.maxLine), name: "MaxLineBytes"}
			}
			long = append(long, chunk...)
			continue
		}
		if long != nil {
			chunk = append(long, chunk...)
		}
		if len(chunk) > s.maxLine+2 {
			return nil, &limitError{what: "an SSE line", limit: int64(s.maxLine), name: "MaxLineBytes"}
		}
		chunk = bytes.TrimRight(chunk, "\r\n")
		return chunk, err
	}
}
