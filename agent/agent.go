// Package agent provides Agent, which owns a conversation: its transcript,
// its one active run, the queues of steering and follow-up messages, and
// the subscribers that watch it.
//
// An Agent runs the loop of package loop on a snapshot of its state and
// folds the run's events back into that state as they are published: the
// transcript grows on every message_end, the in-flight message follows the
// stream, pending tool calls follow tool_execution_start and _end.
// Subscribers see every event after the state has absorbed it.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// Errors returned for calls the agent's state does not allow.
var (
	// ErrBusy is returned by Prompt, Continue, Reset and SetMessages while
	// a run is active. Use Steer or FollowUp to queue messages for the
	// active run, or Wait for it to end.
	ErrBusy = errors.New("agent: already processing a prompt; use Steer or FollowUp to queue messages, or Wait for completion")
	// ErrNoMessages is returned by Continue on an empty transcript.
	ErrNoMessages = errors.New("agent: no messages to continue from")
	// ErrContinueAssistant is returned by Continue when the transcript ends
	// with an assistant message and no message is queued.
	ErrContinueAssistant = errors.New("agent: cannot continue from message role: assistant")
)

// QueueMode says how many queued messages a run takes at each point where
// it picks them up.
type QueueMode int

const (
	// OneAtATime delivers the oldest queued message only; the rest wait
	// for the next turn. It is the default.
	OneAtATime QueueMode = iota
	// All delivers every queued message at once.
	All
)

// Options configure an Agent. Provider and Model are required for a run;
// everything else is optional.
type Options struct {
	SystemPrompt string
	Model        providers.Model
	Provider     providers.Provider
	Tools        []*tools.Tool
	// Messages is the initial transcript, for example a loaded session.
	Messages []providers.Message
	// StreamOptions are the request options; StreamOptions.APIKey is the
	// key used when GetAPIKey is nil.
	StreamOptions providers.Options
	GetAPIKey     func(ctx context.Context, provider string) (string, error)

	BeforeToolCall func(ctx context.Context, call loop.BeforeToolCall) (loop.BeforeResult, error)
	AfterToolCall  func(ctx context.Context, call loop.AfterToolCall) (loop.AfterResult, error)
	// TransformContext rewrites the transcript for one request only.
	TransformContext func(ctx context.Context, messages []providers.Message) ([]providers.Message, error)
	// ConvertToLLM turns the transcript into provider messages; nil keeps
	// user, assistant and tool-result messages (loop.StandardMessages).
	ConvertToLLM        func(ctx context.Context, messages []providers.Message) ([]providers.Message, error)
	PrepareNextTurn     func(ctx context.Context, turn loop.Turn) (loop.TurnUpdate, error)
	ShouldStopAfterTurn func(ctx context.Context, turn loop.Turn) bool

	ToolExecution    tools.Mode
	MaxParallelTools int
	ToolTimeout      time.Duration
	SteeringMode     QueueMode
	FollowUpMode     QueueMode

	// Logger receives subscriber panics; nil means slog.Default().
	Logger *slog.Logger
}

// Agent owns a conversation and at most one active run. All methods are
// safe for concurrent use.
type Agent struct {
	bus events.Bus

	mu       sync.Mutex
	opts     Options
	messages []providers.Message
	steering []providers.Message
	followUp []providers.Message
	active   *activeRun
	// Run state, folded from events.
	streaming providers.Message
	pending   []string
	errorMsg  string
}

type activeRun struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// New returns an idle Agent.
func New(opts Options) *Agent {
	a := &Agent{opts: opts, messages: slices.Clone(opts.Messages)}
	a.opts.Tools = slices.Clone(opts.Tools)
	a.opts.Messages = nil
	a.bus.Logger = opts.Logger
	return a
}

// Subscribe registers fn for every event of every run and returns a function
// that removes it. Subscribers are called in subscription order, one event
// at a time, with the run's context; a run is over only when every
// subscriber has returned from its agent_end. A panicking subscriber is
// logged; the others still receive the event.
func (a *Agent) Subscribe(fn func(ctx context.Context, e events.Event)) (unsubscribe func()) {
	return a.bus.Subscribe(fn)
}

// Channel subscribes a channel with room for size events, for a consumer on
// its own goroutine. A full channel makes the run wait for the consumer
// (backpressure, never loss); call cancel when done reading, or the run
// will wait for it. See events.Bus.Channel.
func (a *Agent) Channel(size int) (<-chan events.Event, func()) { return a.bus.Channel(size) }

// Prompt starts a run with a user message holding text and images, and
// returns when the run has fully ended (subscribers included). See
// PromptMessages.
func (a *Agent) Prompt(ctx context.Context, text string, images ...providers.Image) error {
	content := []providers.Content{providers.Text{Text: text}}
	for _, img := range images {
		content = append(content, img)
	}
	return a.PromptMessages(ctx, providers.UserMessage{Content: content, Timestamp: providers.Now()})
}

// PromptMessages starts a run with the given messages and returns when it
// has fully ended. While a run is active it returns ErrBusy at once.
//
// A model failure or an abort is not an error: the run ends with an
// assistant message whose stop reason is error or aborted, and State
// reports its error message. PromptMessages returns an error only when the
// run failed outside the loop's contract (a provider that refused the
// request, a failing hook, a panic); the agent then closes the run with a
// synthesized error message, so it never stays busy.
func (a *Agent) PromptMessages(ctx context.Context, msgs ...providers.Message) error {
	r, c, cfg, err := a.start(ctx, false)
	if err != nil {
		return err
	}
	return a.finish(r, func(emit events.Sink) error {
		_, err := loop.Run(r.ctx, msgs, c, cfg, emit)
		return err
	})
}

// Continue resumes from the transcript as it stands. When it ends with a
// user or tool-result message, the loop continues from it. When it ends
// with an assistant message, Continue starts a run with the queued steering
// messages (by the steering mode), or else the queued follow-up messages;
// with none queued it returns ErrContinueAssistant.
func (a *Agent) Continue(ctx context.Context) error {
	a.mu.Lock()
	switch {
	case a.active != nil:
		a.mu.Unlock()
		return ErrBusy
	case len(a.messages) == 0:
		a.mu.Unlock()
		return ErrNoMessages
	}
	if a.messages[len(a.messages)-1].Role() != providers.RoleAssistant {
		a.mu.Unlock()
		r, c, cfg, err := a.start(ctx, false)
		if err != nil {
			return err
		}
		return a.finish(r, func(emit events.Sink) error {
			_, err := loop.Continue(r.ctx, c, cfg, emit)
			return err
		})
	}
	skipFirstPoll := true
	queued := drain(&a.steering, a.opts.SteeringMode)
	if len(queued) == 0 {
		skipFirstPoll = false
		queued = drain(&a.followUp, a.opts.FollowUpMode)
	}
	a.mu.Unlock()
	if len(queued) == 0 {
		return ErrContinueAssistant
	}
	r, c, cfg, err := a.start(ctx, skipFirstPoll)
	if err != nil {
		// Busy after all: put the messages back, oldest first.
		a.mu.Lock()
		if skipFirstPoll {
			a.steering = append(queued, a.steering...)
		} else {
			a.followUp = append(queued, a.followUp...)
		}
		a.mu.Unlock()
		return err
	}
	return a.finish(r, func(emit events.Sink) error {
		_, err := loop.Run(r.ctx, queued, c, cfg, emit)
		return err
	})
}

// run is one active run as the agent drives it.
type run struct {
	ctx     context.Context
	active  *activeRun
	started bool // agent_start was published
}

// start claims the agent for a run and builds the loop's context and
// configuration from the current options.
func (a *Agent) start(ctx context.Context, skipFirstSteeringPoll bool) (*run, loop.Context, loop.Config, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.active != nil {
		return nil, loop.Context{}, loop.Config{}, ErrBusy
	}
	rctx, cancel := context.WithCancel(ctx)
	r := &run{ctx: rctx, active: &activeRun{cancel: cancel, done: make(chan struct{})}}
	a.active = r.active
	a.streaming, a.pending, a.errorMsg = nil, nil, ""
	o := a.opts
	c := loop.Context{SystemPrompt: o.SystemPrompt, Messages: slices.Clip(slices.Clone(a.messages)), Tools: slices.Clone(o.Tools)}
	convert := o.ConvertToLLM
	if convert == nil {
		convert = loop.StandardMessages
	}
	skip := skipFirstSteeringPoll
	cfg := loop.Config{
		Provider: o.Provider, Model: o.Model, Options: o.StreamOptions, GetAPIKey: o.GetAPIKey,
		TransformContext: o.TransformContext, ConvertToLLM: convert,
		BeforeToolCall: o.BeforeToolCall, AfterToolCall: o.AfterToolCall,
		PrepareNextTurn: o.PrepareNextTurn, ShouldStopAfterTurn: o.ShouldStopAfterTurn,
		ToolExecution: o.ToolExecution, MaxParallelTools: o.MaxParallelTools, ToolTimeout: o.ToolTimeout,
		SteeringMessages: func(context.Context) []providers.Message {
			a.mu.Lock()
			defer a.mu.Unlock()
			if skip {
				skip = false
				return nil
			}
			return drain(&a.steering, a.opts.SteeringMode)
		},
		FollowUpMessages: func(context.Context) []providers.Message {
			a.mu.Lock()
			defer a.mu.Unlock()
			return drain(&a.followUp, a.opts.FollowUpMode)
		},
	}
	return r, c, cfg, nil
}

// finish drives the run to its end: it runs body with the agent's sink,
// closes a failed run with a synthesized message, and releases the agent.
func (a *Agent) finish(r *run, body func(events.Sink) error) (err error) {
	emit := func(ctx context.Context, e events.Event) {
		if _, ok := e.(events.AgentStart); ok {
			r.started = true
		}
		a.reduce(e)
		a.bus.Publish(ctx, e)
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("agent: panic: %v", p)
			a.fail(r, emit, err)
		}
		a.mu.Lock()
		a.streaming, a.pending, a.active = nil, nil, nil
		a.mu.Unlock()
		r.active.cancel()
		close(r.active.done)
	}()
	if err = body(emit); err != nil {
		a.fail(r, emit, err)
		return fmt.Errorf("agent: run failed: %w", err)
	}
	return nil
}

// fail publishes the closing events of a run the loop could not finish: an
// assistant message carrying the error, its turn_end and agent_end.
func (a *Agent) fail(r *run, emit events.Sink, cause error) {
	a.mu.Lock()
	m := a.opts.Model
	a.mu.Unlock()
	reason := providers.StopReasonError
	if r.ctx.Err() != nil {
		reason = providers.StopReasonAborted
	}
	msg := providers.AssistantMessage{Content: []providers.Content{providers.Text{}}, API: m.API, Provider: m.Provider,
		Model: m.ID, StopReason: reason, ErrorMessage: cause.Error(), Timestamp: providers.Now()}
	if !r.started {
		emit(r.ctx, events.AgentStart{})
		emit(r.ctx, events.TurnStart{})
	}
	emit(r.ctx, events.MessageStart{Message: msg})
	emit(r.ctx, events.MessageEnd{Message: msg})
	emit(r.ctx, events.TurnEnd{Message: msg, ToolResults: []providers.ToolResultMessage{}})
	emit(r.ctx, events.AgentEnd{Messages: []providers.Message{msg}})
}

// reduce folds one event into the agent's state before subscribers see it.
func (a *Agent) reduce(e events.Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch e := e.(type) {
	case events.MessageStart:
		a.streaming = e.Message
	case events.MessageUpdate:
		if e.Stream.Message != nil {
			a.streaming = *e.Stream.Message
		}
	case events.MessageEnd:
		a.streaming = nil
		a.messages = append(a.messages, e.Message)
	case events.ToolExecutionStart:
		a.pending = append(slices.Clip(a.pending), e.ToolCallID)
	case events.ToolExecutionEnd:
		if i := slices.Index(a.pending, e.ToolCallID); i >= 0 {
			a.pending = slices.Delete(slices.Clone(a.pending), i, i+1)
		}
	case events.TurnEnd:
		if e.Message.ErrorMessage != "" {
			a.errorMsg = e.Message.ErrorMessage
		}
	case events.AgentEnd:
		a.streaming = nil
	}
}

func drain(q *[]providers.Message, mode QueueMode) []providers.Message {
	if len(*q) == 0 {
		return nil
	}
	if mode == All {
		out := *q
		*q = nil
		return out
	}
	out := []providers.Message{(*q)[0]}
	*q = slices.Clone((*q)[1:])
	return out
}
