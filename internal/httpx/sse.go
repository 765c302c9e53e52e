package httpx

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// Event is one event of a stream: its name ("" for the default) and its
// data lines, joined with newlines.
type Event struct {
	Name string
	Data []byte
}

// SSEReader reads Server-Sent Events with a bound on the length of a line
// and of an event.
type SSEReader struct {
	r        *bufio.Reader
	maxLine  int
	maxEvent int
	data     bytes.Buffer
}

// NewSSEReader reads events from r, refusing a line longer than maxLine
// and an event whose lines (comments included, line endings not) add up
// to more than maxEvent bytes.
func NewSSEReader(r io.Reader, maxLine, maxEvent int) *SSEReader {
	return &SSEReader{r: bufio.NewReaderSize(r, min(maxLine, 64<<10)), maxLine: maxLine, maxEvent: maxEvent}
}

// Next returns the next event with data, or io.EOF after the last one. A
// stream that ends without a blank line after its last data still yields
// that event. The event's data is valid until the next call.
func (s *SSEReader) Next() (Event, error) {
	var name string
	s.data.Reset()
	size := 0 // of the event so far
	for {
		line, err := s.line()
		if err != nil && !errors.Is(err, io.EOF) {
			return Event{}, err
		}
		if size += len(line); size > s.maxEvent {
			return Event{}, &LimitError{What: "an SSE event", Limit: int64(s.maxEvent), Name: "MaxEventBytes"}
		}
		switch {
		case len(line) == 0: // the end of an event
			if s.data.Len() > 0 {
				return Event{Name: name, Data: s.data.Bytes()}, nil
			}
			name, size = "", 0
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
				return Event{Name: name, Data: s.data.Bytes()}, nil
			}
			return Event{}, io.EOF
		}
	}
}

// line reads one line without its line ending, refusing one longer than
// maxLine.
func (s *SSEReader) line() ([]byte, error) {
	var long []byte // a line longer than the reader's buffer
	for {
		chunk, err := s.r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(chunk) > s.maxLine {
				return nil, &LimitError{What: "an SSE line", Limit: int64(s.maxLine), Name: "MaxLineBytes"}
			}
			long = append(long, chunk...)
			continue
		}
		if long != nil {
			chunk = append(long, chunk...)
		}
		if len(chunk) > s.maxLine+2 {
			return nil, &LimitError{What: "an SSE line", Limit: int64(s.maxLine), Name: "MaxLineBytes"}
		}
		chunk = bytes.TrimRight(chunk, "\r\n")
		return chunk, err
	}
}
