package gemini

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"iter"
	"time"

	"google.golang.org/genai"

	"github.com/agentloop/agentloop/internal/httpx"
	"github.com/agentloop/agentloop/internal/toolcalls"
	"github.com/agentloop/agentloop/providers"
)

// streamer turns one streamGenerateContent response into stream events.
type streamer struct {
	httpx.Out // Builder, Key: the message, and the key it must never carry

	p      *Provider
	client *genai.Client
	model  providers.Model
	name   string

	open    providers.StreamEventType // the kind of the open text or thinking block, if any
	filled  bool                      // it has text
	signed  bool                      // it carries a signature
	calls   int
	idBase  string // for the ids of calls the server sent without one
	usage   providers.Usage
	finish  genai.FinishReason
	message string // the finish message
	blocked string // why the prompt was blocked
}

// chunks is a pulled response stream with its first chunk.
type chunks struct {
	first *genai.GenerateContentResponse
	next  func() (*genai.GenerateContentResponse, error, bool)
	stop  func()
}

func (s *streamer) run(ctx context.Context, contents []*genai.Content, config *genai.GenerateContentConfig) {
	defer s.Recover("gemini", s.used)
	if !s.Emit(s.Builder.Start()) {
		return
	}
	c, err := httpx.Retry(ctx, s.p.opts.HTTPOptions, func() (*chunks, error) {
		next, stop := iter.Pull2(s.client.Models.GenerateContentStream(ctx, s.name, contents, config))
		first, err, ok := next()
		if err != nil || !ok {
			stop()
			if err == nil {
				err = httpx.ErrIncomplete
			}
			return nil, apiError(err, true)
		}
		return &chunks{first: first, next: next, stop: stop}, nil
	})
	if err != nil {
		s.Fail(ctx, err, s.used())
		return
	}
	defer c.stop()
	for r, err, ok := c.first, error(nil), true; ok; r, err, ok = c.next() {
		if err != nil {
			s.Fail(ctx, apiError(err, false), s.used())
			return
		}
		if !s.chunk(r) {
			return
		}
	}
	s.done(ctx)
}

// chunk applies one response chunk; it reports false when the consumer
// stopped.
func (s *streamer) chunk(r *genai.GenerateContentResponse) bool {
	if u := r.UsageMetadata; u != nil { // the last one counts
		s.usage = providers.Usage{Input: int(u.PromptTokenCount - u.CachedContentTokenCount),
			Output: int(u.CandidatesTokenCount + u.ThoughtsTokenCount), CacheRead: int(u.CachedContentTokenCount),
			Reasoning: int(u.ThoughtsTokenCount), TotalTokens: int(u.TotalTokenCount)}
	}
	if pf := r.PromptFeedback; pf != nil && pf.BlockReason != "" {
		s.blocked = string(pf.BlockReason)
		if pf.BlockReasonMessage != "" {
			s.blocked += ": " + pf.BlockReasonMessage
		}
	}
	for _, c := range r.Candidates {
		if c == nil || c.Index != 0 {
			continue
		}
		if c.Content != nil {
			for _, part := range c.Content.Parts {
				if part != nil && !s.part(part) {
					return false
				}
			}
		}
		if c.FinishReason != "" {
			s.finish, s.message = c.FinishReason, c.FinishMessage
		}
	}
	return true
}

// part applies one part. A part that carries a thought signature keeps it
// on a block of its own, as the API asks (signed parts are not merged with
// others).
func (s *streamer) part(p *genai.Part) bool {
	var sig string
	if len(p.ThoughtSignature) > 0 {
		sig = base64.StdEncoding.EncodeToString(p.ThoughtSignature)
	}
	if fc := p.FunctionCall; fc != nil {
		return s.call(fc, sig)
	}
	start, delta := s.Builder.TextStart, s.Builder.TextDelta
	kind := providers.StreamTextStart
	if p.Thought {
		start, delta, kind = s.Builder.ThinkingStart, s.Builder.ThinkingDelta, providers.StreamThinkingStart
	}
	if s.open != kind || s.signed || (sig != "" && s.filled) {
		if p.Text == "" && sig == "" {
			return true
		}
		if !s.Emit(start()) {
			return false
		}
		s.open, s.filled, s.signed = kind, false, false
	}
	if p.Text != "" {
		if !s.Emit(delta(p.Text)) {
			return false
		}
		s.filled = true
	}
	if sig != "" {
		s.Builder.SignAt(s.Builder.Open(), sig)
		s.signed = true
	}
	return true
}

// call adds a function call, which Gemini sends whole.
func (s *streamer) call(fc *genai.FunctionCall, sig string) bool {
	s.open = "" // a call closes the open block
	id := fc.ID
	if id == "" {
		if s.idBase == "" {
			b := make([]byte, 4)
			_, _ = rand.Read(b)
			s.idBase = "call_" + hex.EncodeToString(b)
		}
		id = fmt.Sprintf("%s_%d", s.idBase, s.calls)
	}
	s.calls++
	ev := s.Builder.ToolCallStart(id, fc.Name)
	if !s.Emit(ev) {
		return false
	}
	if sig != "" {
		s.Builder.SignAt(ev.ContentIndex, sig)
	}
	args := toolcalls.New(-1)
	text := argsText(fc.Args)
	if preview, ok := args.Write(text); ok && !s.Emit(s.Builder.ToolCallDeltaAt(ev.ContentIndex, text, preview)) {
		return false
	}
	return s.Emit(args.End(s.Builder, ev.ContentIndex))
}

// done ends the message by the finish reason.
func (s *streamer) done(ctx context.Context) {
	usage := s.used()
	switch {
	case ctx.Err() != nil:
		s.Fail(ctx, ctx.Err(), s.used())
	case s.blocked != "":
		s.Emit(s.Builder.Fail(providers.StopReasonError, "the prompt was blocked: "+s.blocked, usage))
	case s.finish == "":
		s.Fail(ctx, httpx.ErrIncomplete, s.used())
	case s.finish == genai.FinishReasonStop || s.finish == genai.FinishReasonUnspecified:
		reason := providers.StopReasonStop
		if s.calls > 0 {
			reason = providers.StopReasonToolUse
		}
		s.Emit(s.Builder.Done(reason, usage))
	case s.finish == genai.FinishReasonMaxTokens:
		s.Emit(s.Builder.Done(providers.StopReasonLength, usage))
	default:
		msg := "the server stopped the response: " + string(s.finish)
		if s.message != "" && s.message != string(s.finish) {
			msg += ": " + s.message
		}
		s.Emit(s.Builder.Fail(providers.StopReasonError, httpx.Redact(msg, s.Key), usage))
	}
}

// apiError turns the SDK's error into the provider's: before the first
// chunk, an HTTP refusal with the server's message and retry delay; after,
// the server's error.
func apiError(err error, first bool) error {
	var ae genai.APIError
	if !errors.As(err, &ae) {
		return err
	}
	msg := ae.Message
	if ae.Status != "" {
		msg = ae.Status + ": " + msg
	}
	if !first || ae.Code < 300 {
		return &httpx.ServerError{Message: msg}
	}
	return &httpx.HTTPError{Status: ae.Code, Message: msg, RetryAfter: retryDelay(ae.Details)}
}

// retryDelay reads the wait a Google API error asks for (RetryInfo).
func retryDelay(details []map[string]any) time.Duration {
	for _, d := range details {
		if s, ok := d["retryDelay"].(string); ok {
			if v, err := time.ParseDuration(s); err == nil {
				return v
			}
		}
	}
	return 0
}

// used is the usage so far, priced.
func (s *streamer) used() providers.Usage { return s.model.Priced(s.usage) }
