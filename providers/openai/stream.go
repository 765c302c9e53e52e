package openai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	goopenai "github.com/sashabaranov/go-openai"

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

	calls  map[int]*callState
	usage  providers.Usage
	finish goopenai.FinishReason
}

// callState assembles one tool call from its fragments.
type callState struct {
	block    int // content index in the message
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

func (s *streamer) run(ctx context.Context, client *goopenai.Client, body goopenai.ChatCompletionRequest) {
	defer func() {
		// A panic in a dependency must not escape the provider.
		if r := recover(); r != nil && !s.stopped {
			s.emit(s.b.Fail(providers.StopReasonError, s.redact(fmt.Sprintf("openai provider: panic: %v", r)), s.usage))
		}
	}()
	if !s.emit(s.b.Start()) {
		return
	}
	stream, err := s.open(ctx, client, body)
	if err != nil {
		s.fail(ctx, err)
		return
	}
	defer stream.Close()
	s.calls = map[int]*callState{}
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			s.fail(ctx, err)
			return
		}
		if !s.chunk(resp) {
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

var errIncomplete = errors.New("the stream ended before the response was complete")

// open starts the stream, retrying rate limits and server errors.
func (s *streamer) open(ctx context.Context, client *goopenai.Client, body goopenai.ChatCompletionRequest) (*goopenai.ChatCompletionStream, error) {
	o := s.p.opts
	for attempt := 0; ; attempt++ {
		var retryAfter string
		rctx := context.WithValue(ctx, retryAfterKey{}, &retryAfter)
		stream, err := client.CreateChatCompletionStream(rctx, body)
		if err == nil {
			return stream, nil
		}
		if ctx.Err() != nil || o.MaxRetries < 0 || attempt >= o.MaxRetries || !retryable(err) {
			return nil, err
		}
		wait := o.RetryBaseDelay << attempt
		wait = wait/2 + rand.N(wait/2+1) // jitter: [wait/2, wait]
		if ra, ok := parseRetryAfter(retryAfter, time.Now()); ok {
			wait = ra
		}
		if wait > o.MaxRetryDelay {
			return nil, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

// retryable reports whether a failed request may be tried again: rate
// limits, server errors and connection failures.
func retryable(err error) bool {
	if code := statusOf(err); code != 0 {
		return code == http.StatusTooManyRequests || code >= 500
	}
	return !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

func statusOf(err error) int {
	var api *goopenai.APIError
	if errors.As(err, &api) {
		return api.HTTPStatusCode
	}
	var req *goopenai.RequestError
	if errors.As(err, &req) {
		return req.HTTPStatusCode
	}
	return 0
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs >= 0 {
		return time.Duration(secs * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// chunk applies one streamed chunk; it reports false when the consumer
// stopped.
func (s *streamer) chunk(resp goopenai.ChatCompletionStreamResponse) bool {
	if u := resp.Usage; u != nil {
		cached := 0
		if u.PromptTokensDetails != nil {
			cached = u.PromptTokensDetails.CachedTokens
		}
		s.usage = providers.Usage{Input: u.PromptTokens - cached, Output: u.CompletionTokens, CacheRead: cached, TotalTokens: u.TotalTokens}
	}
	for _, ch := range resp.Choices {
		if ch.Index != 0 {
			continue
		}
		d := ch.Delta
		if d.ReasoningContent != "" && !s.emit(s.b.ThinkingDelta(d.ReasoningContent)) {
			return false
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

func (s *streamer) toolCallDelta(pos int, tc goopenai.ToolCall) bool {
	idx := pos
	if tc.Index != nil {
		idx = *tc.Index
	}
	st := s.calls[idx]
	if st == nil {
		id := tc.ID
		if id == "" {
			id = "call_" + strconv.Itoa(idx)
		}
		ev := s.b.ToolCallStart(id, tc.Function.Name)
		st = &callState{block: ev.ContentIndex}
		s.calls[idx] = st
		if !s.emit(ev) {
			return false
		}
	}
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
	if s.finish == goopenai.FinishReasonContentFilter {
		s.emit(s.b.Fail(providers.StopReasonError, "the provider's content filter stopped the response", usage))
		return
	}
	reason := providers.StopReasonStop
	switch {
	case s.finish == goopenai.FinishReasonLength:
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
// redact removes the key from a body before it is cut, so that a cut can
// never leave part of the key behind.
func describe(err error, redact func(string) string) string {
	var api *goopenai.APIError
	if errors.As(err, &api) {
		if api.HTTPStatusCode > 0 {
			return fmt.Sprintf("HTTP %d: %s", api.HTTPStatusCode, api.Message)
		}
		return "provider error: " + api.Message
	}
	var req *goopenai.RequestError
	if errors.As(err, &req) {
		body := redact(strings.TrimSpace(string(req.Body)))
		if len(body) > maxErrorBody {
			cut := maxErrorBody
			for cut > 0 && !utf8.RuneStart(body[cut]) {
				cut--
			}
			body = body[:cut] + "..."
		}
		if body == "" && req.Err != nil {
			body = req.Err.Error()
		}
		return fmt.Sprintf("HTTP %d: %s", req.HTTPStatusCode, body)
	}
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	if errors.As(err, &syn) || errors.As(err, &typ) {
		return "malformed stream chunk: " + err.Error()
	}
	if errors.Is(err, errIncomplete) {
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
