package loop

import (
	"fmt"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
)

// errNoFinal is the error message of a response whose stream ended without
// a done or error event.
const errNoFinal = "provider stream ended without a final message"

// streamAssistant makes one model call and publishes the response's
// message events. The final message is appended to the context and to the
// run's new messages; it is returned both as a value and boxed, so that the
// message is boxed into an interface only once.
func (r *run) streamAssistant() (providers.AssistantMessage, error) {
	msgs := r.c.Messages[:len(r.c.Messages):len(r.c.Messages)]
	var err error
	if r.cfg.TransformContext != nil {
		if msgs, err = r.cfg.TransformContext(r.ctx, msgs); err != nil {
			return providers.AssistantMessage{}, fmt.Errorf("loop: TransformContext: %w", err)
		}
	}
	if r.cfg.ConvertToLLM != nil {
		if msgs, err = r.cfg.ConvertToLLM(r.ctx, msgs); err != nil {
			return providers.AssistantMessage{}, fmt.Errorf("loop: ConvertToLLM: %w", err)
		}
	}
	opts := r.cfg.Options
	if r.cfg.GetAPIKey != nil {
		key, err := r.cfg.GetAPIKey(r.ctx, r.cfg.Model.Provider)
		if err != nil {
			return providers.AssistantMessage{}, fmt.Errorf("loop: GetAPIKey: %w", err)
		}
		if key != "" {
			opts.APIKey = key
		}
	}
	req := &providers.Request{Model: r.cfg.Model, SystemPrompt: r.c.SystemPrompt, Messages: msgs, Tools: r.specs, Options: opts}
	seq, err := r.cfg.Provider.Stream(r.ctx, req)
	if err != nil {
		return providers.AssistantMessage{}, fmt.Errorf("loop: provider: %w", err)
	}
	started := false
	var final *providers.AssistantMessage
	for ev := range seq {
		switch ev.Type {
		case providers.StreamStart:
			if started || ev.Message == nil {
				continue
			}
			started = true
			r.emit(events.MessageStart{Message: *ev.Message})
		case providers.StreamDone, providers.StreamError:
			final = ev.Message
		default:
			if started && ev.Message != nil {
				r.emit(events.MessageUpdate{Stream: ev})
			}
		}
		if final != nil {
			break
		}
	}
	a := r.finalMessage(final)
	var boxed providers.Message = a
	if !started {
		r.emit(events.MessageStart{Message: boxed})
	}
	r.append(boxed)
	r.emit(events.MessageEnd{Message: boxed})
	return a, nil
}

// finalMessage normalizes the message a stream ended with.
func (r *run) finalMessage(final *providers.AssistantMessage) providers.AssistantMessage {
	if final == nil {
		reason := providers.StopReasonError
		text := errNoFinal
		if r.ctx.Err() != nil {
			reason, text = providers.StopReasonAborted, "Request was aborted"
		}
		return providers.AssistantMessage{API: r.cfg.Model.API, Provider: r.cfg.Model.Provider, Model: r.cfg.Model.ID,
			StopReason: reason, ErrorMessage: text, Timestamp: providers.Now()}
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
