package loop

import (
	"cmp"
	"fmt"
	"iter"
	"runtime/debug"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
)

// errNoFinal is the error message of a response whose stream ended without
// a done or error event.
const errNoFinal = "provider stream ended without a final message"

// closeCalls marks the tool calls of a cut-off message as incomplete, so
// that they can never run, without changing the snapshot they came from.
func closeCalls(content []providers.Content) []providers.Content {
	out := make([]providers.Content, len(content))
	for i, c := range content {
		if tc, ok := c.(providers.ToolCall); ok {
			tc.Incomplete = true
			c = tc
		}
		out[i] = c
	}
	return out
}

// streamAssistant makes one model call and publishes the response's
// message events. The final message is appended to the context and to the
// run's new messages; it is returned both as a value and boxed, so that the
// message is boxed into an interface only once.
func (r *run) streamAssistant() (providers.AssistantMessage, error) {
	if len(r.cfg.ToolSources) > 0 {
		r.refreshTools()
	}
	msgs := r.c.Messages[:len(r.c.Messages):len(r.c.Messages)]
	// One key per model call, asked for once: first when a compactor may
	// make a request of its own (a summary) with it, else last.
	var key string
	var err error
	if r.cfg.Compactor != nil {
		if key, err = r.apiKey(); err != nil {
			return providers.AssistantMessage{}, err
		}
		if msgs, err = r.compact(msgs, key); err != nil {
			return providers.AssistantMessage{}, err
		}
	}
	if msgs, err = r.shape(msgs); err != nil {
		return providers.AssistantMessage{}, err
	}
	if r.cfg.Compactor == nil {
		if key, err = r.apiKey(); err != nil {
			return providers.AssistantMessage{}, err
		}
	}
	// The request is the run's, reused from call to call: a provider may
	// not keep it past its sequence (see providers.Provider).
	r.req = providers.Request{Model: r.cfg.Model, SystemPrompt: r.c.SystemPrompt, Messages: msgs, Tools: r.specs, Options: r.cfg.RequestOptions, APIKey: key, Output: r.cfg.Output, Time: r.nowTime()}
	ctx, err := r.stepContext(r.ctx, Step{Kind: StepModel, Model: r.cfg.Model})
	if err != nil {
		return providers.AssistantMessage{}, err
	}
	seq, err := r.cfg.Provider.Stream(ctx, &r.req)
	if err != nil {
		return providers.AssistantMessage{}, fmt.Errorf("loop: provider: %w", err)
	}
	st := r.consume(seq)
	a := r.finalMessage(st.final, cmp.Or(st.last.Partial(), st.start))
	if st.final == nil && st.fault != nil {
		a.ErrorMessage = "provider failed: " + st.fault.Error()
	}
	var boxed providers.Message = a
	if st.start == nil {
		r.emit(events.MessageStart{Message: boxed})
	}
	r.append(boxed)
	r.emit(events.MessageEnd{Message: boxed})
	return a, nil
}

// streamed is what consume saw of one response.
type streamed struct {
	start *providers.AssistantMessage // from start
	last  providers.StreamEvent       // the last update
	final *providers.AssistantMessage // from done or error
	fault error                       // the provider panicked
}

// consume reads the provider's events, publishing the start and updates,
// until the final message. A provider that panics while streaming is a
// failed response (fault), not a crashed run; a panic after the final
// message is ignored. The state lives in the run and the yield function is
// made once per run, so a response costs no allocation here.
func (r *run) consume(seq iter.Seq[providers.StreamEvent]) streamed {
	st := &r.stream
	*st = streamed{}
	if r.yield == nil {
		r.yield = r.onStreamEvent
	}
	func() {
		defer func() {
			if p := recover(); p != nil && st.final == nil {
				st.fault = fmt.Errorf("panic: %v", p)
				r.logger().Error("loop: the provider panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			}
		}()
		seq(r.yield)
	}()
	return *st
}

// onStreamEvent handles one event of the response being consumed. It
// asks for no more once the final message has arrived, and ignores a
// provider that goes on anyway.
func (r *run) onStreamEvent(ev providers.StreamEvent) bool {
	st := &r.stream
	if st.final != nil {
		return false
	}
	switch ev.Type {
	case providers.StreamStart:
		switch {
		case ev.Message == nil:
		case st.start == nil:
			st.start = ev.Message
			r.emit(events.MessageStart{Message: *ev.Message})
		default:
			// A start after the first begins the message again: the
			// provider retried or failed over mid-stream. It goes out as
			// the first update of the next attempt, so a consumer drops
			// what the earlier attempt streamed (events.Envelope.Attempt).
			st.start, st.last = ev.Message, providers.StreamEvent{}
			r.newAttempt()
			r.emitIn(&r.msg, events.MessageUpdate{Stream: ev})
		}
	case providers.StreamDone, providers.StreamError:
		st.final = ev.Message
	default:
		if st.start != nil {
			st.last = ev
			r.emitIn(&r.msg, events.MessageUpdate{Stream: ev})
		}
	}
	return st.final == nil
}

// finalMessage normalizes the message a stream ended with. A stream that
// ended without one yields an error message keeping what had arrived (the
// last partial snapshot).
func (r *run) finalMessage(final, partial *providers.AssistantMessage) providers.AssistantMessage {
	if final == nil {
		a := providers.AssistantMessage{API: r.cfg.Model.API, Provider: r.cfg.Model.Provider, Model: r.cfg.Model.ID, Timestamp: r.now()}
		if partial != nil {
			a = *partial
			a.Content = closeCalls(a.Content)
		}
		a.StopReason, a.ErrorMessage = providers.StopReasonError, errNoFinal
		if r.ctx.Err() != nil {
			a.StopReason, a.ErrorMessage = providers.StopReasonAborted, providers.AbortedMessage
		}
		return a
	}
	a := *final
	if a.StopReason == "" || a.StopReason == providers.StopReasonPending {
		a.StopReason = providers.StopReasonStop
		if a.HasToolCalls() {
			a.StopReason = providers.StopReasonToolUse
		}
	}
	return a
}
