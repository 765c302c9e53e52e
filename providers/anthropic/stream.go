package anthropic

import (
	"context"
	"errors"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/ssestream"

	"github.com/agentloop/agentloop/internal/httpx"
	"github.com/agentloop/agentloop/internal/toolcalls"
	"github.com/agentloop/agentloop/providers"
)

type eventStream = ssestream.Stream[sdk.MessageStreamEventUnion]

// streamer turns one Messages API response (and its continuations after
// pause_turn) into stream events.
type streamer struct {
	httpx.Out // Builder, Key: the message, and the key it must never carry

	p       *Provider
	model   providers.Model
	maxArgs int

	usage  providers.Usage // of the responses before this one
	cur    providers.Usage // of this response
	reason sdk.StopReason
	blocks map[int64]*block // this response's open blocks, by its index
	turn   turn             // this response's blocks, to send back after pause_turn
}

// block is a content block of the response being read.
type block struct {
	kind  string // text, thinking, tool_use
	index int    // in the message
	sig   strings.Builder
	args  *toolcalls.Args
}

func (s *streamer) run(ctx context.Context, params sdk.MessageNewParams) {
	defer s.Recover("anthropic", s.total)
	if !s.Emit(s.Builder.Start()) {
		return
	}
	for turn := 0; ; turn++ {
		stream, err := s.open(ctx, params)
		if err != nil {
			s.Fail(ctx, err, s.total())
			return
		}
		err = s.read(stream)
		stream.Close()
		switch {
		case s.Stopped():
			return
		case err != nil:
			s.Fail(ctx, err, s.total())
			return
		case s.reason == sdk.StopReasonPauseTurn && turn < s.p.opts.MaxContinuations:
			// The server paused its own long turn: send it back to go on.
			s.usage, s.cur = s.total(), providers.Usage{}
			params.Messages = append(params.Messages, s.turn.message())
			continue
		}
		s.finish()
		return
	}
}

// open sends the request, retrying before the first event, and returns the
// stream with its first event current.
func (s *streamer) open(ctx context.Context, params sdk.MessageNewParams) (*eventStream, error) {
	return httpx.Retry(ctx, s.p.opts.HTTPOptions, func() (*eventStream, error) {
		st := s.p.client.Messages.NewStreaming(ctx, params, option.WithAPIKey(s.Key))
		if st.Next() {
			return st, nil
		}
		err := st.Err()
		st.Close()
		if err == nil {
			err = httpx.ErrIncomplete
		}
		return nil, apiError(err)
	})
}

// read handles the events of one response, the current one first, up to
// message_stop. Each event costs in proportion to its own size, never to
// what came before it.
func (s *streamer) read(st *eventStream) error {
	s.blocks, s.reason = map[int64]*block{}, ""
	s.turn.reset()
	for {
		ev := st.Current()
		s.turn.event(ev) // for a continuation only: the calls are assembled by s
		if !s.event(ev) {
			return nil
		}
		if ev.Type == "message_stop" {
			return nil
		}
		if !st.Next() {
			break
		}
	}
	if err := st.Err(); err != nil {
		return apiError(err)
	}
	return httpx.ErrIncomplete // no message_stop: never a clean stop
}

// event applies one event; it reports false when the consumer stopped.
func (s *streamer) event(ev sdk.MessageStreamEventUnion) bool {
	switch ev.Type {
	case "message_start":
		u := ev.Message.Usage
		s.cur = providers.Usage{Input: int(u.InputTokens), Output: int(u.OutputTokens),
			CacheRead: int(u.CacheReadInputTokens), CacheWrite: int(u.CacheCreationInputTokens)}
	case "content_block_start":
		return s.start(ev.Index, ev.ContentBlock)
	case "content_block_delta":
		return s.delta(ev.Index, ev.Delta)
	case "content_block_stop":
		return s.stop(ev.Index)
	case "message_delta":
		s.reason = ev.Delta.StopReason
		// Counts are cumulative: each one given replaces the last.
		s.cur.Output = int(ev.Usage.OutputTokens)
		if ev.Usage.JSON.InputTokens.Valid() {
			s.cur.Input = int(ev.Usage.InputTokens)
		}
		if ev.Usage.JSON.CacheReadInputTokens.Valid() {
			s.cur.CacheRead = int(ev.Usage.CacheReadInputTokens)
		}
		if ev.Usage.JSON.CacheCreationInputTokens.Valid() {
			s.cur.CacheWrite = int(ev.Usage.CacheCreationInputTokens)
		}
	}
	return true
}

func (s *streamer) start(i int64, cb sdk.ContentBlockStartEventContentBlockUnion) bool {
	switch cb.Type {
	case "text":
		s.blocks[i] = &block{kind: "text"}
		return s.Emit(s.Builder.TextStart()) && (cb.Text == "" || s.Emit(s.Builder.TextDelta(cb.Text)))
	case "thinking":
		s.blocks[i] = &block{kind: "thinking"}
		s.blocks[i].sig.WriteString(cb.Signature)
		return s.Emit(s.Builder.ThinkingStart()) && (cb.Thinking == "" || s.Emit(s.Builder.ThinkingDelta(cb.Thinking)))
	case "redacted_thinking":
		return s.Emit(s.Builder.ThinkingStart()) && s.Emit(s.Builder.ThinkingRedacted(cb.Data))
	case "tool_use":
		ev := s.Builder.ToolCallStart(cb.ID, cb.Name)
		s.blocks[i] = &block{kind: "tool_use", index: ev.ContentIndex, args: toolcalls.New(s.maxArgs)}
		return s.Emit(ev)
	}
	return true // the server's own tools: not the client's to run
}

func (s *streamer) delta(i int64, d sdk.MessageStreamEventUnionDelta) bool {
	bl := s.blocks[i]
	if bl == nil {
		return true
	}
	switch d.Type {
	case "text_delta":
		return d.Text == "" || s.Emit(s.Builder.TextDelta(d.Text))
	case "thinking_delta":
		return d.Thinking == "" || s.Emit(s.Builder.ThinkingDelta(d.Thinking))
	case "signature_delta":
		bl.sig.WriteString(d.Signature)
	case "input_json_delta":
		if bl.args != nil {
			if preview, ok := bl.args.Write(d.PartialJSON); ok {
				return s.Emit(s.Builder.ToolCallDeltaAt(bl.index, d.PartialJSON, preview))
			}
		}
	}
	return true
}

func (s *streamer) stop(i int64) bool {
	bl := s.blocks[i]
	if bl == nil {
		return true
	}
	delete(s.blocks, i)
	switch bl.kind {
	case "text":
		return s.Emit(s.Builder.TextEnd())
	case "thinking":
		return s.Emit(s.Builder.ThinkingEnd(bl.sig.String()))
	}
	return s.Emit(bl.args.End(s.Builder, bl.index))
}

// finish ends the message by the response's stop reason.
func (s *streamer) finish() {
	usage := s.total()
	switch s.reason {
	case sdk.StopReasonToolUse:
		s.Emit(s.Builder.Done(providers.StopReasonToolUse, usage))
	case sdk.StopReasonMaxTokens:
		s.Emit(s.Builder.Done(providers.StopReasonLength, usage))
	case sdk.StopReasonRefusal:
		s.Emit(s.Builder.Fail(providers.StopReasonError, "the model declined to answer (stop reason refusal)", usage))
	case sdk.StopReasonModelContextWindowExceeded:
		s.Emit(s.Builder.Fail(providers.StopReasonError, "the conversation no longer fits the model's context window (stop reason model_context_window_exceeded)", usage))
	default: // end_turn, stop_sequence, a pause_turn not continued
		s.Emit(s.Builder.Done(providers.StopReasonStop, usage))
	}
}

func (s *streamer) total() providers.Usage {
	u := s.usage
	u.Input += s.cur.Input
	u.Output += s.cur.Output
	u.CacheRead += s.cur.CacheRead
	u.CacheWrite += s.cur.CacheWrite
	u.TotalTokens = 0
	return s.model.Priced(u)
}

// apiError turns the SDK's error into the provider's: an HTTP refusal with
// the server's message and requested wait, or the server's error event.
func apiError(err error) error {
	var ae *sdk.Error
	if !errors.As(err, &ae) {
		return err
	}
	msg := ae.Message
	if t := string(ae.Type()); t != "" && msg != "" {
		msg = t + ": " + msg
	}
	if msg == "" {
		msg = ae.RawJSON()
	}
	if ae.StatusCode >= 300 {
		he := &httpx.HTTPError{Status: ae.StatusCode, Message: msg}
		if ae.Response != nil {
			he.RetryAfter, _ = httpx.RetryAfter(ae.Response.Header, time.Now())
		}
		return he
	}
	return &httpx.ServerError{Message: msg}
}
