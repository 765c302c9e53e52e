package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/agentloop/agentloop/internal/toolcheck"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// Steering is the queue of messages for the active run: it picks them up
// after the current turn's tool calls, before its next model call (by
// Options.SteeringMode). With no run active they wait for the next one.
func (a *Agent) Steering() Queue { return &a.steering }

// FollowUps is the queue of messages that start another turn when the run
// would otherwise end (by Options.FollowUpMode).
func (a *Agent) FollowUps() Queue { return &a.followUps }

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

// Reset clears the transcript, both queues and the last error. The other
// options stay. It returns ErrBusy while a run is active.
func (a *Agent) Reset() error {
	a.cfgMu.Lock()
	defer a.cfgMu.Unlock()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.active != nil {
		return ErrBusy
	}
	a.messages = nil
	a.steering.Clear()
	a.followUps.Clear()
	a.streaming, a.pending, a.errorMsg = inflight{}, nil, ""
	a.gen++
	return nil
}

// Configure is the one way to change an agent's options between runs.
// f receives a copy of the current options, whose Messages field holds
// the transcript; what f leaves there becomes the options of the runs to
// come, and its Messages the transcript:
//
//	err := a.Configure(func(o *agent.Options) {
//		o.Model = bigger
//		o.Tools = append(o.Tools, search)
//	})
//
// The options are checked as New checks them: options New would refuse
// change nothing, and Configure returns New's error. A run's options are
// fixed for its whole life: while a run is active Configure returns
// ErrBusy without calling f, and it returns ErrBusy, changing nothing,
// when a run started while f ran. A nil f is refused. f runs on the
// caller's goroutine with the agent unlocked, but calls to Configure (and
// Reset and LoadSession) are taken one at a time: f must not call those
// three. A panic in f reaches the caller and changes nothing.
func (a *Agent) Configure(f func(*Options)) error {
	if f == nil {
		return errors.New("agent: Configure needs a function to edit the options")
	}
	a.cfgMu.Lock()
	defer a.cfgMu.Unlock()
	a.mu.Lock()
	if a.active != nil {
		a.mu.Unlock()
		return ErrBusy
	}
	o, gen := a.options(), a.gen
	a.mu.Unlock()

	f(&o)
	if err := check(o); err != nil {
		return err
	}
	msgs := slices.Clone(o.Messages)
	o = own(o)

	a.mu.Lock()
	defer a.mu.Unlock()
	if a.active != nil || a.gen != gen {
		return ErrBusy
	}
	a.opts, a.messages = o, msgs
	a.gen++
	return nil
}

// options returns a copy of the agent's options, Messages holding a copy
// of the transcript. a.mu is held.
func (a *Agent) options() Options {
	o := a.opts
	o.Tools = slices.Clone(o.Tools)
	o.Hooks = slices.Clone(o.Hooks)
	o.Messages = slices.Clone(a.messages)
	return o
}

// check refuses options no run could use, as New documents.
func check(o Options) error {
	if o.Provider == nil {
		return loop.ErrNoProvider
	}
	if err := toolcheck.Check(o.Tools); err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	for i, m := range o.Messages {
		if m == nil {
			return fmt.Errorf("agent: Options.Messages[%d] is nil", i)
		}
	}
	return nil
}

// own returns o as the agent keeps it: its lists copied, so the caller's
// later changes to them change nothing here, and no transcript (the agent
// keeps that apart).
func own(o Options) Options {
	o.Tools = slices.Clone(o.Tools)
	o.Hooks = slices.Clone(o.Hooks)
	o.Messages = nil
	return o
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
