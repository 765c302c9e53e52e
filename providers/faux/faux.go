// Package faux is a scripted [providers.Provider] for tests, examples and
// offline runs. Queue the assistant messages the "model" should return, or
// functions that compute them from the request; each call to Stream takes
// the next one and streams it as real events: start, then for every block
// its start, deltas and end, then done (or error for a message whose stop
// reason is error or aborted).
//
// A cancelled context yields stop reason aborted with the error message
// [providers.AbortedMessage]; an empty queue yields stop reason error with
// "no scripted response left". Every request is recorded for inspection.
//
// A tool call is scripted as the model writes one, by the tool's name;
// the loop runs the tool and the next queued reply follows its result:
//
//	model := faux.New(
//		faux.Reply(faux.Call("c1", "weather", map[string]any{"city": "Oslo"})),
//		faux.Reply(faux.Text("It is 4°C in Oslo.")),
//	)
//
// A typed answer for agent.Ask is scripted the same way: the Provider
// offers no structured output, so Ask asks through a tool named
// "final_answer" (AskOptions.Name) whose arguments are the answer:
//
//	faux.Reply(faux.Call("a1", "final_answer", map[string]any{"number": "INV-7", "paid": true}))
package faux

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"sync"
	"time"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
)

// EmptyMessage is the error message of a call made when no scripted
// response is left. A cancelled call reports [providers.AbortedMessage].
const EmptyMessage = "no scripted response left"

// API and ProviderName are the Model.API and Model.Provider that
// Provider's Model method sets.
const (
	API          = "faux"
	ProviderName = "faux"
)

// Step computes one scripted response from the request. A Step that returns
// an error streams a failed message carrying the error's text.
type Step func(ctx context.Context, req *providers.Request) (providers.AssistantMessage, error)

// Provider is the scripted model. The zero value is ready to use and streams
// text in chunks of four characters without pausing. It is safe for
// concurrent use.
type Provider struct {
	// ChunkSize is the number of characters (runes) per delta; 0 means 4.
	ChunkSize int
	// Delay is a pause before each delta, to make streaming visible in
	// demos. It ends early when the context is cancelled.
	Delay time.Duration
	// Default, when set, answers requests once the queue is empty (for
	// offline demos that never run dry) instead of the "no scripted
	// response left" error.
	Default Step

	mu       sync.Mutex
	steps    []Step
	requests []providers.Request
}

// New returns a Provider with the given responses queued.
func New(responses ...providers.AssistantMessage) *Provider {
	p := &Provider{}
	p.Push(responses...)
	return p
}

// Model returns the scripted model called id: its API API and its
// provider ProviderName. The scripted provider streams whatever Model a
// request names (it sends nothing anywhere), so tests may use any.
func (p *Provider) Model(id string) providers.Model {
	return providers.Model{ID: id, API: API, Provider: ProviderName}
}

// Push queues responses, returned in order by later calls.
func (p *Provider) Push(responses ...providers.AssistantMessage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range responses {
		p.steps = append(p.steps, func(context.Context, *providers.Request) (providers.AssistantMessage, error) {
			return r, nil
		})
	}
}

// PushFunc queues steps that compute their response from the request.
func (p *Provider) PushFunc(steps ...Step) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.steps = append(p.steps, steps...)
}

// Pending reports how many responses are still queued.
func (p *Provider) Pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.steps)
}

// Requests returns a copy of every request received so far, in order.
func (p *Provider) Requests() []providers.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]providers.Request(nil), p.requests...)
}

func (p *Provider) next(req *providers.Request) Step {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := *req
	r.Messages = append([]providers.Message(nil), req.Messages...)
	p.requests = append(p.requests, r)
	if len(p.steps) == 0 {
		return p.Default
	}
	s := p.steps[0]
	p.steps = p.steps[1:]
	return s
}

// Stream implements [providers.Provider].
func (p *Provider) Stream(ctx context.Context, req *providers.Request) (iter.Seq[providers.StreamEvent], error) {
	step := p.next(req)
	return func(yield func(providers.StreamEvent) bool) {
		b := kit.ForRequest(req)
		if !yield(b.Start()) {
			return
		}
		if ctx.Err() != nil {
			yield(b.Fail(providers.StopReasonAborted, providers.AbortedMessage, providers.Usage{}))
			return
		}
		if step == nil {
			yield(b.Fail(providers.StopReasonError, EmptyMessage, providers.Usage{}))
			return
		}
		msg, err := safeStep(ctx, step, req)
		if err != nil {
			yield(b.Fail(providers.StopReasonError, err.Error(), providers.Usage{}))
			return
		}
		p.play(ctx, b, msg, yield)
	}, nil
}

func safeStep(ctx context.Context, step Step, req *providers.Request) (m providers.AssistantMessage, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("scripted step panicked: %v", r)
		}
	}()
	return step(ctx, req)
}

// play streams msg block by block; a cancelled context ends it with an
// aborted error event that keeps what was streamed.
func (p *Provider) play(ctx context.Context, b *kit.Builder, msg providers.AssistantMessage, yield func(providers.StreamEvent) bool) {
	aborted := func() bool {
		if ctx.Err() == nil {
			return false
		}
		yield(b.Fail(providers.StopReasonAborted, providers.AbortedMessage, msg.Usage))
		return true
	}
	for _, c := range msg.Content {
		if aborted() {
			return
		}
		var ok bool
		switch c := c.(type) {
		case providers.Text:
			ok = p.streamText(ctx, b.TextStart(), c.Text, b.TextDelta, func() providers.StreamEvent { return b.TextEnd() }, aborted, yield)
		case providers.Thinking:
			ok = p.streamText(ctx, b.ThinkingStart(), c.Thinking, b.ThinkingDelta, func() providers.StreamEvent { return b.ThinkingEnd(c.Signature) }, aborted, yield)
		case providers.ToolCall:
			raw, _ := json.Marshal(c.Arguments)
			args := c.Arguments
			ok = p.streamText(ctx, b.ToolCallStart(c.ID, c.Name), string(raw),
				func(d string) providers.StreamEvent { return b.ToolCallDelta(d, nil) },
				func() providers.StreamEvent { return b.ToolCallEnd(args, !c.Incomplete) }, aborted, yield)
		default:
			continue
		}
		if !ok {
			return
		}
	}
	switch msg.StopReason {
	case providers.StopReasonError, providers.StopReasonAborted:
		yield(b.Fail(msg.StopReason, msg.ErrorMessage, msg.Usage))
	case "", providers.StopReasonPending:
		reason := providers.StopReasonStop
		if msg.HasToolCalls() {
			reason = providers.StopReasonToolUse
		}
		yield(b.Done(reason, msg.Usage))
	default:
		yield(b.Done(msg.StopReason, msg.Usage))
	}
}

func (p *Provider) streamText(ctx context.Context, start providers.StreamEvent, text string,
	delta func(string) providers.StreamEvent, end func() providers.StreamEvent,
	aborted func() bool, yield func(providers.StreamEvent) bool) bool {
	if !yield(start) {
		return false
	}
	size := p.ChunkSize
	if size <= 0 {
		size = 4
	}
	runes := []rune(text)
	for i := 0; i < len(runes); i += size {
		if p.Delay > 0 {
			t := time.NewTimer(p.Delay)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
		if aborted() {
			return false
		}
		j := min(i+size, len(runes))
		if !yield(delta(string(runes[i:j]))) {
			return false
		}
	}
	return yield(end())
}

// Reply returns an assistant message holding the blocks, with stop reason
// toolUse when it holds a tool call and stop otherwise.
func Reply(blocks ...providers.Content) providers.AssistantMessage {
	m := providers.AssistantMessage{Content: blocks, StopReason: providers.StopReasonStop}
	if m.HasToolCalls() {
		m.StopReason = providers.StopReasonToolUse
	}
	return m
}

// Text returns a text block.
func Text(s string) providers.Text { return providers.Text{Text: s} }

// Call returns a tool-call block.
func Call(id, name string, args map[string]any) providers.ToolCall {
	if args == nil {
		args = map[string]any{}
	}
	return providers.ToolCall{ID: id, Name: name, Arguments: args}
}

// Failure returns a message that fails with stop reason error and the given
// error text, as a provider reports an upstream failure.
func Failure(errorMessage string) providers.AssistantMessage {
	return providers.AssistantMessage{StopReason: providers.StopReasonError, ErrorMessage: errorMessage}
}
