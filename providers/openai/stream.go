package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentloop/agentloop/internal/partialjson"
	"github.com/agentloop/agentloop/providers"
)

// streamer turns one Chat Completions stream into stream events.
type streamer struct {
	p       *Provider
	model   providers.Model
	key     string
	maxArgs int // argument bytes kept per tool call; -1 for no cap
	b       *providers.Builder
	yield   func(providers.StreamEvent) bool
	stopped bool // the consumer stopped reading

	calls   map[int]*callState
	lastIdx int // the index of the call the last fragment went to; -1 before any
	usage   providers.Usage
	finish  string
}

// callState assembles one tool call from its fragments.
type callState struct {
	id       string // as the server sent it first
	block    int    // content index in the message
	args     partialjson.Stream
	overflow bool // the argument text passed MaxArgumentBytes
	total    int  // bytes of argument text received, kept or not
}

func (s *streamer) emit(e providers.StreamEvent) bool {
	if s.stopped {
		return false
	}
	if !s.yield(e) {
		s.stopped = true
	}
	return !s.stopped
}

func (s *streamer) run(ctx context.Context, body []byte) {
	defer func() {
		// A panic in a dependency must not escape the provider.
		if r := recover(); r != nil && !s.stopped {
			s.emit(s.b.Fail(providers.StopReasonError, s.redact(fmt.Sprintf("openai provider: panic: %v", r)), s.usage))
		}
	}()
	if !s.emit(s.b.Start()) {
		return
	}
	stream, err := s.open(ctx, body)
	if err != nil {
		s.fail(ctx, err)
		return
	}
	defer stream.Close()
	s.calls, s.lastIdx = map[int]*callState{}, -1
	events := newSSEReader(stream, s.p.opts.MaxLineBytes)
	for {
		ev, err := events.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			s.fail(ctx, err)
			return
		}
		if bytes.Equal(bytes.TrimSpace(ev.data), []byte("[DONE]")) {
			break
		}
		var c chunk
		if err := json.Unmarshal(ev.data, &c); err != nil {
			s.fail(ctx, fmt.Errorf("%w: %w", errMalformed, err))
			return
		}
		if !s.chunk(c) {
			return
		}
		if c.Error != nil && (ev.name == "error" || s.finish == "") {
			// The server's error, mid-stream: what arrived is kept.
			s.fail(ctx, &streamError{message: c.Error.message()})
			return
		}
		if ev.name == "error" {
			s.fail(ctx, &streamError{message: strings.TrimSpace(string(ev.data))})
			return
		}
	}
	if ctx.Err() != nil {
		s.fail(ctx, ctx.Err())
		return
	}
	if s.finish == "" {
		s.fail(ctx, errIncomplete)
		return
	}
	s.done()
}

var (
	errIncomplete = errors.New("the stream ended before the response was complete")
	errMalformed  = errors.New("malformed stream chunk")
)

// streamError is an error the server reported inside a stream.
type streamError struct{ message string }

func (e *streamError) Error() string { return "provider error: " + e.message }

// chunk applies one streamed chunk; it reports false when the consumer
// stopped.
func (s *streamer) chunk(c chunk) bool {
	if u := c.Usage; u != nil {
		s.usage = u.usage()
	} else if c.XGroq != nil && c.XGroq.Usage != nil {
		s.usage = c.XGroq.Usage.usage()
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		d := ch.Delta
		for _, text := range []string{d.ReasoningContent, d.Reasoning, d.ReasoningText} {
			if text != "" && !s.emit(s.b.ThinkingDelta(text)) {
				return false
			}
		}
		for _, text := range []string{d.Content, d.Refusal} {
			if text != "" && !s.emit(s.b.TextDelta(text)) {
				return false
			}
		}
		for pos, tc := range d.ToolCalls {
			if !s.toolCallDelta(pos, tc) {
				return false
			}
		}
		if ch.FinishReason != "" {
			s.finish = ch.FinishReason
		}
	}
	return true
}

// toolCallDelta applies one fragment of a tool call. A fragment names its
// call by index; one without an index (some servers send none) continues
// the last call unless it carries a new id, which starts another.
func (s *streamer) toolCallDelta(pos int, tc toolCallDelta) bool {
	idx := pos
	switch {
	case tc.Index != nil:
		idx = *tc.Index
	case s.lastIdx >= 0 && (tc.ID == "" || tc.ID == s.calls[s.lastIdx].id):
		idx = s.lastIdx
	case s.lastIdx >= 0:
		idx = s.lastIdx + 1
	}
	st := s.calls[idx]
	if st == nil {
		id := tc.ID
		if id == "" {
			id = "call_" + strconv.Itoa(idx)
		}
		ev := s.b.ToolCallStart(id, tc.Function.Name)
		st = &callState{block: ev.ContentIndex, id: tc.ID}
		s.calls[idx] = st
		s.lastIdx = idx
		if !s.emit(ev) {
			return false
		}
	}
	s.lastIdx = idx
	frag := tc.Function.Arguments
	st.total += len(frag)
	if frag == "" || st.overflow {
		return true
	}
	if max := s.maxArgs; max >= 0 && len(st.args.Text())+len(frag) > max {
		st.overflow = true // keep what fits; the call will not run
		return true
	}
	return s.emit(s.b.ToolCallDeltaAt(st.block, frag, st.args.Write(frag)))
}

// done closes the tool calls and finishes the message.
func (s *streamer) done() {
	idx := make([]int, 0, len(s.calls))
	for i := range s.calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		st := s.calls[i]
		if st.overflow {
			if !s.emit(s.b.ToolCallOverflowAt(st.block, st.total)) {
				return
			}
			continue
		}
		args, complete := st.args.Final()
		if !s.emit(s.b.ToolCallEndAt(st.block, args, complete || wholeJSON(st.args.Text()))) {
			return
		}
	}
	usage := s.model.Priced(s.usage)
	if s.finish == "content_filter" {
		s.emit(s.b.Fail(providers.StopReasonError, "the provider's content filter stopped the response", usage))
		return
	}
	reason := providers.StopReasonStop
	switch {
	case s.finish == "length":
		reason = providers.StopReasonLength
	case len(s.calls) > 0:
		// Decided from the assembled message, not from what the server
		// claimed.
		reason = providers.StopReasonToolUse
	}
	s.emit(s.b.Done(reason, usage))
}

// fail ends the message with the error, keeping what arrived.
func (s *streamer) fail(ctx context.Context, err error) {
	if ctx.Err() != nil {
		s.emit(s.b.Fail(providers.StopReasonAborted, providers.AbortedMessage, s.model.Priced(s.usage)))
		return
	}
	s.emit(s.b.Fail(providers.StopReasonError, s.redact(describe(err, s.redact)), s.model.Priced(s.usage)))
}

// maxErrorBody is how much of an error response's body a message quotes.
const maxErrorBody = 300

// describe says what went wrong in words the model and the user can use.
// redact removes the key from a server's text before it is cut, so that a
// cut can never leave part of the key behind.
func describe(err error, redact func(string) string) string {
	var he *httpError
	if errors.As(err, &he) {
		msg := redact(he.message)
		if len(msg) > maxErrorBody {
			cut := maxErrorBody
			for cut > 0 && !utf8.RuneStart(msg[cut]) {
				cut--
			}
			msg = msg[:cut] + "..."
		}
		if msg == "" {
			msg = http.StatusText(he.status)
		}
		return fmt.Sprintf("HTTP %d: %s", he.status, msg)
	}
	var se *streamError
	var le *limitError
	switch {
	case errors.As(err, &se), errors.As(err, &le), errors.Is(err, errIncomplete), errors.Is(err, errMalformed),
		errors.Is(err, errIdleTimeout), errors.Is(err, errHeaderTimeout), errors.Is(err, errCompressed):
		return err.Error()
	}
	return "stream failed: " + err.Error()
}

// redact removes the API key from text that may echo it.
func (s *streamer) redact(text string) string {
	if len(s.key) >= 4 {
		text = strings.ReplaceAll(text, s.key, "[redacted]")
	}
	return text
}

// wholeJSON reports whether text is complete JSON of any kind. Arguments
// that are, but are not an object (an array, a string), came through
// whole: the loop refuses them with a validation error naming the root,
// not as a cut-off call.
func wholeJSON(text string) bool { return json.Valid([]byte(text)) }
