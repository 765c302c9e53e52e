package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/agentloop/agentloop/internal/httpx"
	"github.com/agentloop/agentloop/internal/toolcalls"
	"github.com/agentloop/agentloop/providers"
)

// streamer turns one Chat Completions stream into stream events.
type streamer struct {
	httpx.Out // Builder, Key: the message, and the key it must never carry

	p       *Provider
	model   providers.Model
	maxArgs int // argument bytes kept per tool call; -1 for no cap

	calls   map[int]*callState
	lastIdx int // the index of the call the last fragment went to; -1 before any
	usage   providers.Usage
	finish  string
}

// callState assembles one tool call from its fragments.
type callState struct {
	id    string // as the server sent it first
	block int    // content index in the message
	args  *toolcalls.Args
}

func (s *streamer) run(ctx context.Context, body []byte) {
	defer s.Recover("openai", s.used)
	if !s.Emit(s.Builder.Start()) {
		return
	}
	stream, err := post(ctx, s.p.client, s.p.opts, "/chat/completions", s.Key, body)
	if err != nil {
		s.Fail(ctx, err, s.used())
		return
	}
	defer stream.Close()
	s.calls, s.lastIdx = map[int]*callState{}, -1
	events := httpx.NewSSEReader(stream, s.p.opts.MaxLineBytes, s.p.opts.MaxEventBytes)
	for {
		ev, err := events.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			s.Fail(ctx, err, s.used())
			return
		}
		if bytes.Equal(bytes.TrimSpace(ev.Data), []byte("[DONE]")) {
			break
		}
		var c chunk
		if err := json.Unmarshal(ev.Data, &c); err != nil {
			s.Fail(ctx, fmt.Errorf("%w: %w", httpx.ErrMalformed, err), s.used())
			return
		}
		if !s.chunk(c) {
			return
		}
		if c.Error != nil && (ev.Name == "error" || s.finish == "") {
			// The server's error, mid-stream: what arrived is kept.
			s.Fail(ctx, &httpx.ServerError{Message: c.Error.message()}, s.used())
			return
		}
		if ev.Name == "error" {
			s.Fail(ctx, &httpx.ServerError{Message: strings.TrimSpace(string(ev.Data))}, s.used())
			return
		}
	}
	if ctx.Err() != nil {
		s.Fail(ctx, ctx.Err(), s.used())
		return
	}
	if s.finish == "" {
		s.Fail(ctx, httpx.ErrIncomplete, s.used())
		return
	}
	s.done()
}

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
			if text != "" && !s.Emit(s.Builder.ThinkingDelta(text)) {
				return false
			}
		}
		for _, text := range []string{d.Content, d.Refusal} {
			if text != "" && !s.Emit(s.Builder.TextDelta(text)) {
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
		ev := s.Builder.ToolCallStart(id, tc.Function.Name)
		st = &callState{block: ev.ContentIndex, id: tc.ID, args: toolcalls.New(s.maxArgs)}
		s.calls[idx] = st
		s.lastIdx = idx
		if !s.Emit(ev) {
			return false
		}
	}
	s.lastIdx = idx
	frag := tc.Function.Arguments
	preview, ok := st.args.Write(frag)
	if !ok {
		return true
	}
	return s.Emit(s.Builder.ToolCallDeltaAt(st.block, frag, preview))
}

// done closes the tool calls and finishes the message.
func (s *streamer) done() {
	idx := make([]int, 0, len(s.calls))
	for i := range s.calls {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		if st := s.calls[i]; !s.Emit(st.args.End(s.Builder, st.block)) {
			return
		}
	}
	usage := s.used()
	if s.finish == "content_filter" {
		s.Emit(s.Builder.Fail(providers.StopReasonError, "the provider's content filter stopped the response", usage))
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
	s.Emit(s.Builder.Done(reason, usage))
}

// fail ends the message with the error, keeping what arrived.

// used is the usage so far, priced.
func (s *streamer) used() providers.Usage { return s.model.Priced(s.usage) }
