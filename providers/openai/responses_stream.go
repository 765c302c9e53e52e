package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/agentloop/agentloop/internal/httpx"
	"github.com/agentloop/agentloop/internal/toolcalls"
	"github.com/agentloop/agentloop/providers"
)

// responseStreamer turns one Responses API stream into stream events.
type responseStreamer struct {
	httpx.Out // Builder, Key: the message, and the key it must never carry

	p       *Responses
	model   providers.Model
	maxArgs int

	items map[string]*outputItem // by item id
	calls int
	usage providers.Usage
}

// outputItem is an output item being streamed.
type outputItem struct {
	kind  string // message, reasoning, function_call
	block int    // its block in the message, once it has one (-1 before)
	parts int    // reasoning summary parts begun
	args  *toolcalls.Args
}

// responseEvent is the part of a stream event the provider reads.
type responseEvent struct {
	Type     string          `json:"type"`
	ItemID   string          `json:"item_id"`
	Delta    string          `json:"delta"`
	Item     json.RawMessage `json:"item"`
	Response *struct {
		Status            string                   `json:"status"`
		Error             *responseError           `json:"error"`
		IncompleteDetails *struct{ Reason string } `json:"incomplete_details"`
		Usage             *responseUsage           `json:"usage"`
	} `json:"response"`
	Arguments string         `json:"arguments"`
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	Error     *responseError `json:"error"`
}

type responseError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type responseUsage struct {
	InputTokens        int `json:"input_tokens"`
	OutputTokens       int `json:"output_tokens"`
	TotalTokens        int `json:"total_tokens"`
	InputTokensDetails struct {
		CachedTokens     int `json:"cached_tokens"`
		CacheWriteTokens int `json:"cache_write_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
}

// itemHead is what the provider reads of an output item.
type itemHead struct {
	Type      string `json:"type"`
	ID        string `json:"id"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Phase     string `json:"phase"`
}

func (s *responseStreamer) run(ctx context.Context, body []byte) {
	defer s.Recover("openai responses", s.used)
	if !s.Emit(s.Builder.Start()) {
		return
	}
	stream, err := post(ctx, s.p.client, s.p.opts, "/responses", s.Key, body)
	if err != nil {
		s.Fail(ctx, err, s.used())
		return
	}
	defer stream.Close()
	s.items = map[string]*outputItem{}
	events := httpx.NewSSEReader(stream, s.p.opts.MaxLineBytes, s.p.opts.MaxEventBytes)
	for {
		ev, err := events.Next()
		if errors.Is(err, io.EOF) || err == nil && bytes.Equal(bytes.TrimSpace(ev.Data), []byte("[DONE]")) {
			break
		}
		if err != nil {
			s.Fail(ctx, err, s.used())
			return
		}
		var e responseEvent
		if err := json.Unmarshal(ev.Data, &e); err != nil {
			s.Fail(ctx, fmt.Errorf("%w: %w", httpx.ErrMalformed, err), s.used())
			return
		}
		if done, ok := s.event(ctx, e); done || !ok {
			return
		}
	}
	if ctx.Err() != nil {
		s.Fail(ctx, ctx.Err(), s.used())
		return
	}
	s.Fail(ctx, httpx.ErrIncomplete, s.used()) // no terminal event: never a clean stop
}

// event applies one event. done reports a terminal event (the message is
// finished); ok false that the consumer stopped.
func (s *responseStreamer) event(ctx context.Context, e responseEvent) (done, ok bool) {
	switch e.Type {
	case "response.output_item.added":
		return false, s.added(e.Item)
	case "response.output_text.delta", "response.refusal.delta":
		if it := s.items[e.ItemID]; it != nil && it.kind == "message" && e.Delta != "" {
			if it.block < 0 {
				if !s.Emit(s.Builder.TextStart()) {
					return false, false
				}
				it.block = s.Builder.Open()
			}
			return false, s.Emit(s.Builder.TextDelta(e.Delta))
		}
	case "response.reasoning_summary_part.added":
		if it := s.items[e.ItemID]; it != nil {
			if it.parts++; it.parts > 1 {
				return false, s.Emit(s.Builder.ThinkingDelta("\n\n"))
			}
		}
	case "response.reasoning_summary_text.delta", "response.reasoning_text.delta":
		if it := s.items[e.ItemID]; it != nil && it.kind == "reasoning" && e.Delta != "" {
			return false, s.Emit(s.Builder.ThinkingDelta(e.Delta))
		}
	case "response.function_call_arguments.delta":
		if it := s.items[e.ItemID]; it != nil && it.args != nil {
			if preview, ok := it.args.Write(e.Delta); ok {
				return false, s.Emit(s.Builder.ToolCallDeltaAt(it.block, e.Delta, preview))
			}
		}
	case "response.function_call_arguments.done":
		if it := s.items[e.ItemID]; it != nil && it.args != nil && it.args.Text() == "" && e.Arguments != "" {
			if preview, ok := it.args.Write(e.Arguments); ok { // a server that sent no deltas
				return false, s.Emit(s.Builder.ToolCallDeltaAt(it.block, e.Arguments, preview))
			}
		}
	case "response.output_item.done":
		return false, s.itemDone(e.Item)
	case "response.completed":
		s.setUsage(e)
		reason := providers.StopReasonStop
		if s.calls > 0 {
			reason = providers.StopReasonToolUse
		}
		return true, s.Emit(s.Builder.Done(reason, s.used()))
	case "response.incomplete":
		s.setUsage(e)
		why := ""
		if e.Response != nil && e.Response.IncompleteDetails != nil {
			why = e.Response.IncompleteDetails.Reason
		}
		if why == "max_output_tokens" {
			return true, s.Emit(s.Builder.Done(providers.StopReasonLength, s.used()))
		}
		return true, s.Emit(s.Builder.Fail(providers.StopReasonError, httpx.Redact("the response is incomplete: "+why, s.Key), s.used()))
	case "response.failed":
		s.setUsage(e)
		msg := "the response failed"
		if e.Response != nil && e.Response.Error != nil {
			msg = errorText(e.Response.Error.Code, e.Response.Error.Message)
		}
		s.Fail(ctx, &httpx.ServerError{Message: msg}, s.used())
		return true, true
	case "error":
		if e.Error != nil {
			e.Code, e.Message = e.Error.Code, e.Error.Message
		}
		s.Fail(ctx, &httpx.ServerError{Message: errorText(e.Code, e.Message)}, s.used())
		return true, true
	}
	return false, true
}

func errorText(code, message string) string {
	if code != "" && message != "" {
		return code + ": " + message
	}
	return code + message
}

// added opens what an output item needs: a thinking block for reasoning, a
// tool call for a function call (a message's text block opens with its
// first text).
func (s *responseStreamer) added(raw json.RawMessage) bool {
	var h itemHead
	if json.Unmarshal(raw, &h) != nil {
		return true
	}
	it := &outputItem{kind: h.Type, block: -1}
	switch h.Type {
	case "reasoning":
		if !s.Emit(s.Builder.ThinkingStart()) {
			return false
		}
		it.block = s.Builder.Open()
	case "function_call":
		ev := s.Builder.ToolCallStart(h.CallID, h.Name)
		it.block, it.args = ev.ContentIndex, toolcalls.New(s.maxArgs)
		s.calls++
		if !s.Emit(ev) {
			return false
		}
		s.Builder.SignAt(it.block, h.ID) // kept even if the call is cut off
	case "message":
	default:
		return true // the server's own tools (web search, ...)
	}
	s.items[h.ID] = it
	return true
}

// itemDone closes an output item's block, keeping what must go back with
// it: a reasoning item whole, a message's id and phase, a call's item id.
func (s *responseStreamer) itemDone(raw json.RawMessage) bool {
	var h itemHead
	if json.Unmarshal(raw, &h) != nil {
		return true
	}
	it := s.items[h.ID]
	if it == nil {
		return true
	}
	delete(s.items, h.ID)
	switch it.kind {
	case "reasoning":
		if it.block == s.Builder.Open() {
			return s.Emit(s.Builder.ThinkingEnd(string(raw)))
		}
		s.Builder.SignAt(it.block, string(raw)) // closed already: a message item began first
	case "message":
		if it.block >= 0 && it.block == s.Builder.Open() {
			sig, _ := json.Marshal(textSignature{ID: h.ID, Phase: h.Phase})
			s.Builder.SignAt(it.block, string(sig))
			return s.Emit(s.Builder.TextEnd())
		}
	case "function_call":
		if it.args.Text() == "" && h.Arguments != "" {
			if preview, ok := it.args.Write(h.Arguments); ok && !s.Emit(s.Builder.ToolCallDeltaAt(it.block, h.Arguments, preview)) {
				return false
			}
		}
		return s.Emit(it.args.End(s.Builder, it.block))
	}
	return true
}

func (s *responseStreamer) setUsage(e responseEvent) {
	if e.Response == nil || e.Response.Usage == nil {
		return
	}
	u := e.Response.Usage
	cached := u.InputTokensDetails.CachedTokens
	s.usage = providers.Usage{Input: u.InputTokens - cached, Output: u.OutputTokens, CacheRead: cached,
		CacheWrite: u.InputTokensDetails.CacheWriteTokens, Reasoning: u.OutputTokensDetails.ReasoningTokens, TotalTokens: u.TotalTokens}
}

// used is the usage so far, priced.
func (s *responseStreamer) used() providers.Usage { return s.model.Priced(s.usage) }
