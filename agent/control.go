package agent

import (
	"context"
	"fmt"
	"slices"

	"github.com/agentloop/agentloop/internal/toolcheck"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// Steer queues messages for the active run: it picks them up after the
// current turn's tool calls, before its next model call (by the steering
// mode). With no run active they wait for the next one. Safe to call at any
// time, from any goroutine.
func (a *Agent) Steer(msgs ...providers.Message) {
	a.mu.Lock()
	a.steering = append(a.steering, msgs...)
	a.mu.Unlock()
}

// SteerText queues a user text message; see Steer.
func (a *Agent) SteerText(text string) { a.Steer(providers.NewUserText(text)) }

// FollowUp queues messages that start another turn when the run would
// otherwise end (by the follow-up mode).
func (a *Agent) FollowUp(msgs ...providers.Message) {
	a.mu.Lock()
	a.followUp = append(a.followUp, msgs...)
	a.mu.Unlock()
}

// FollowUpText queues a user text message; see FollowUp.
func (a *Agent) FollowUpText(text string) { a.FollowUp(providers.NewUserText(text)) }

// ClearSteeringQueue drops the queued steering messages.
func (a *Agent) ClearSteeringQueue() {
	a.mu.Lock()
	a.steering = nil
	a.mu.Unlock()
}

// ClearFollowUpQueue drops the queued follow-up messages.
func (a *Agent) ClearFollowUpQueue() {
	a.mu.Lock()
	a.followUp = nil
	a.mu.Unlock()
}

// ClearAllQueues drops every queued message.
func (a *Agent) ClearAllQueues() {
	a.mu.Lock()
	a.steering, a.followUp = nil, nil
	a.mu.Unlock()
}

// HasQueuedMessages reports whether any steering or follow-up message is
// waiting.
func (a *Agent) HasQueuedMessages() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.steering)+len(a.followUp) > 0
}

// Abort cancels the active run. Tools, hooks and the provider see their
// context cancelled; the run ends with an aborted message. With no run
// active it does nothing.
func (a *Agent) Abort() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.active != nil {
		a.active.cancel()
	}
}

// Wait blocks until no run is active (its subscribers included), or until
// ctx is done.
func (a *Agent) Wait(ctx context.Context) error {
	a.mu.Lock()
	r := a.active
	a.mu.Unlock()
	if r == nil {
		return nil
	}
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Reset clears the transcript, the queues and the last error. The system
// prompt, model and tools stay. It returns ErrBusy while a run is active.
func (a *Agent) Reset() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.active != nil {
		return ErrBusy
	}
	a.messages, a.steering, a.followUp = nil, nil, nil
	a.streaming, a.pending, a.errorMsg = inflight{}, nil, ""
	return nil
}

// SetSystemPrompt sets the system prompt used from the next run on.
func (a *Agent) SetSystemPrompt(p string) {
	a.mu.Lock()
	a.opts.SystemPrompt = p
	a.mu.Unlock()
}

// SetModel sets the model used from the next run on.
func (a *Agent) SetModel(m providers.Model) {
	a.mu.Lock()
	a.opts.Model = m
	a.mu.Unlock()
}

// SetTools replaces the tools (a copy of the list) from the next run on.
// It refuses a list a run would refuse (see loop.CheckTools) and keeps the
// tools it had.
func (a *Agent) SetTools(ts ...*tools.Tool) error {
	if err := toolcheck.Check(ts); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	a.mu.Lock()
	a.opts.Tools = slices.Clone(ts)
	a.mu.Unlock()
	return nil
}

// SetRequestOptions sets the request options (max tokens, temperature,
// reasoning effort, ...) used from the next run on.
func (a *Agent) SetRequestOptions(o providers.RequestOptions) {
	a.mu.Lock()
	a.opts.RequestOptions = o
	a.mu.Unlock()
}

// SetQueueModes sets the steering and follow-up queue modes.
func (a *Agent) SetQueueModes(steering, followUp QueueMode) {
	a.mu.Lock()
	a.opts.SteeringMode, a.opts.FollowUpMode = steering, followUp
	a.mu.Unlock()
}

// SetMessages replaces the transcript with a copy of msgs. It returns
// ErrBusy while a run is active.
func (a *Agent) SetMessages(msgs []providers.Message) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.active != nil {
		return ErrBusy
	}
	a.messages = slices.Clone(msgs)
	return nil
}

// State is a snapshot of an agent. It shares no mutable memory with the
// agent: changing it changes nothing there. The messages themselves are
// immutable values shared with the transcript.
type State struct {
	SystemPrompt string
	Model        providers.Model
	Tools        []*tools.Tool
	Messages     []providers.Message
	// IsStreaming is true from the start of a run until its last
	// subscriber has returned from agent_end.
	IsStreaming bool
	// StreamingMessage is the message in flight, nil between messages.
	StreamingMessage providers.Message
	// PendingToolCalls are the ids of tool calls started and not yet ended.
	PendingToolCalls []string
	// ErrorMessage is the error of the last failed or aborted turn.
	ErrorMessage string
}

// State returns a snapshot of the agent.
func (a *Agent) State() State {
	a.mu.Lock()
	defer a.mu.Unlock()
	return State{
		SystemPrompt: a.opts.SystemPrompt, Model: a.opts.Model, Tools: slices.Clone(a.opts.Tools),
		Messages: slices.Clone(a.messages), IsStreaming: a.active != nil, StreamingMessage: a.streaming.message(),
		PendingToolCalls: slices.Clone(a.pending), ErrorMessage: a.errorMsg,
	}
}
