package agent

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/agentloop/agentloop/providers"
)

// MaxSessionLine is the longest line ReadSession accepts (64 MiB): one
// message with large images inline.
const MaxSessionLine = 64 << 20

// SessionError reports a line of a session that could not be read.
type SessionError struct {
	Line int // 1-based
	Err  error
}

// Error says which line failed and why.
func (e *SessionError) Error() string { return fmt.Sprintf("session line %d: %v", e.Line, e.Err) }

// Unwrap returns the decoding error.
func (e *SessionError) Unwrap() error { return e.Err }

// WriteSession writes messages as JSONL: one message per line, with the
// reference's field names, so a conversation can resume in another process
// (or in the reference implementation).
func WriteSession(w io.Writer, messages []providers.Message) error {
	bw := bufio.NewWriter(w)
	for i, m := range messages {
		b, err := json.Marshal(m)
		if err != nil {
			return fmt.Errorf("session message %d: %w", i, err)
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// ReadSession reads a JSONL session written by WriteSession. Blank lines
// are skipped. On a line that does not decode (a corrupt or truncated last
// line after a crash, say) it returns the messages read before it together
// with a *SessionError naming the line.
func ReadSession(r io.Reader) ([]providers.Message, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4<<10), MaxSessionLine)
	var msgs []providers.Message
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		m, err := providers.UnmarshalMessage(b)
		if err != nil {
			return msgs, &SessionError{Line: line, Err: err}
		}
		msgs = append(msgs, m)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			err = fmt.Errorf("line longer than %d bytes", MaxSessionLine)
		}
		return msgs, &SessionError{Line: line + 1, Err: err}
	}
	return msgs, nil
}

// SaveSession writes the agent's transcript with WriteSession.
func (a *Agent) SaveSession(w io.Writer) error {
	return WriteSession(w, a.State().Messages)
}

// LoadSession replaces the transcript with the session read from r. A
// session with a bad line is refused whole: the transcript stays as it
// was, and the *SessionError says which line failed (use ReadSession to
// salvage the messages before it). It returns ErrBusy while a run is
// active.
func (a *Agent) LoadSession(r io.Reader) error {
	msgs, err := ReadSession(r)
	if err != nil {
		return err
	}
	return a.Configure(func(o *Options) { o.Messages = msgs })
}
