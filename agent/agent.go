// Package agent provides Agent, which owns a conversation: its transcript,
// its one active run, the queues of steering and follow-up messages, and
// the subscribers that watch it.
//
// An Agent runs the loop of package loop on a snapshot of its state and
// folds the run's events back into that state as they are published: the
// transcript grows on every message_end, the in-flight message follows the
// stream, pending tool calls follow tool_execution_start and _end.
// Subscribers see every event after the state has absorbed it.
//
//	a, err := agent.New(agent.Options{
//		Config: loop.Config{
//			Provider: provider,
//			Model:    model,
//			Hooks:    []loop.Hooks{{BeforeToolCall: policy}},
//		},
//		SystemPrompt: "You are a concise assistant.",
//		Tools:        []*tools.Tool{weather},
//	})
//	if err != nil {
//		return err // no provider, or a tool no run could use
//	}
//	a.Subscribe(term.New(os.Stdout).Handle) // or any events.Handler
//	err = a.Prompt(ctx, "What's the weather in Oslo?")
//	// err is a *loop.RunError when the run ended failed or aborted;
//	// a.State().Messages holds the transcript either way.
//
// One run is active at a time: while it is, Prompt returns ErrBusy, and
// Steer and FollowUp queue messages for it. Abort cancels it. SaveSession
// and LoadSession keep a conversation across processes.
package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/internal/toolcheck"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// ErrBusy is returned by Prompt, Continue, Reset and SetMessages while a
// run is active. Use Steer or FollowUp to queue messages for the active
// run, or Wait for it to end.
var ErrBusy = errors.New("agent: a run is active; use Steer or FollowUp to queue messages, or Wait for it to end")

// QueueMode says how many queued messages a run takes at each point where
// it picks them up.
type QueueMode int

const (
	// QueueOneAtATime delivers the oldest queued message only; the rest
	// wait for the next turn. It is the default.
	QueueOneAtATime QueueMode = iota
	// QueueAll delivers every queued message at once.
	QueueAll
)

// Options configure an Agent. Config.Provider and Config.Model are
// required; everything else is optional.
type Options struct {
	// Config is the loop's configuration: what to run, its limits, its
	// hook bundles, its logger (which also receives subscriber panics).
	// The agent adds to it for each run and takes nothing away:
	//   - its queues (Steer, FollowUp) feed the run first; Config.Queue,
	//     if set, is polled after them and its messages follow theirs;
	//   - when no bundle has a ConvertToLLM hook, a last bundle keeps user,
	//     assistant and tool-result messages (loop.StandardMessages);
	//   - Ask adds a bundle of its own after Config.Hooks.
	loop.Config

	SystemPrompt string
	Tools        []*tools.Tool
	// Messages is the initial transcript, for example a loaded session.
	Messages []providers.Message

	// SteeringMode and FollowUpMode say how many queued messages a run
	// takes at a time; the default is one.
	SteeringMode QueueMode
	FollowUpMode QueueMode
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
	streaming inflight
	pending   []string
	errorMsg  string
}

// inflight is the message being streamed: the message its start announced,
// then the last update, whose partial message is put together only when
// State asks for it (so following a stream costs the agent O(1) an event).
type inflight struct {
	start  providers.Message
	update providers.StreamEvent
}

// message is the message in flight, or nil.
func (f inflight) message() providers.Message {
	if m := f.update.Partial(); m != nil {
		return *m
	}
	return f.start
}

type activeRun struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// New returns an idle Agent, or an error for options no run could use: no
// provider, a tool not built by package tools, two tools of one name.
func New(opts Options) (*Agent, error) {
	if opts.Provider == nil {
		return nil, loop.ErrNoProvider
	}
	if err := toolcheck.Check(opts.Tools); err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	a := &Agent{opts: opts, messages: slices.Clone(opts.Messages)}
	a.opts.Tools = slices.Clone(opts.Tools)
	a.opts.Hooks = slices.Clone(opts.Hooks)
	a.opts.Messages = nil
	a.bus.Logger = opts.Logger
	return a, nil
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
// has fully ended (subscribers included). While a run is active it returns
// ErrBusy at once.
//
// The error is nil when the model finished. A run that ended failed or
// aborted returns a *loop.RunError holding its last message; for a run
// cancelled (Abort, or ctx's cancel func) errors.Is(err, context.Canceled)
// holds, and for one whose ctx timed out errors.Is(err,
// context.DeadlineExceeded) does. The transcript keeps everything that
// happened either way.
func (a *Agent) PromptMessages(ctx context.Context, msgs ...providers.Message) error {
	r, c, cfg, err := a.start(ctx, false)
	if err != nil {
		return err
	}
	return a.finish(r, func(emit events.Handler) error {
		_, err := loop.Run(r.ctx, msgs, c, cfg, emit)
		return err
	})
}

// Continue resumes from the transcript as it stands. When it ends with a
// user or tool-result message, the loop continues from it. When it ends
// with an assistant message, Continue starts a run with the queued steering
// messages (by the steering mode), or else the queued follow-up messages;
// with none queued it returns loop.ErrContinueAssistant. Its error is
// PromptMessages'.
func (a *Agent) Continue(ctx context.Context) error {
	a.mu.Lock()
	switch {
	case a.active != nil:
		a.mu.Unlock()
		return ErrBusy
	case len(a.messages) == 0:
		a.mu.Unlock()
		return loop.ErrNoMessages
	}
	if a.messages[len(a.messages)-1].Role() != providers.RoleAssistant {
		a.mu.Unlock()
		r, c, cfg, err := a.start(ctx, false)
		if err != nil {
			return err
		}
		return a.finish(r, func(emit events.Handler) error {
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
		return loop.ErrContinueAssistant
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
	return a.finish(r, func(emit events.Handler) error {
		_, err := loop.Run(r.ctx, queued, c, cfg, emit)
		return err
	})
}

// run is one active run as the agent drives it.
type run struct {
	ctx    context.Context
	active *activeRun
}

// start claims the agent for a run and builds the loop's conversation and
// configuration from the current options.
func (a *Agent) start(ctx context.Context, skipFirstSteeringPoll bool) (*run, loop.Conversation, loop.Config, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.active != nil {
		return nil, loop.Conversation{}, loop.Config{}, ErrBusy
	}
	rctx, cancel := context.WithCancel(ctx)
	r := &run{ctx: rctx, active: &activeRun{cancel: cancel, done: make(chan struct{})}}
	a.active = r.active
	a.streaming, a.pending, a.errorMsg = inflight{}, nil, ""
	o := a.opts
	c := loop.Conversation{SystemPrompt: o.SystemPrompt, Messages: slices.Clip(slices.Clone(a.messages)), Tools: slices.Clone(o.Tools)}
	cfg := o.Config
	cfg.Hooks = slices.Clip(cfg.Hooks) // the run's additions go to a copy
	if !slices.ContainsFunc(cfg.Hooks, func(h loop.Hooks) bool { return h.ConvertToLLM != nil }) {
		cfg.Hooks = append(cfg.Hooks, loop.Hooks{ConvertToLLM: loop.StandardMessages})
	}
	cfg.Queue = &queue{a: a, skip: skipFirstSteeringPoll, next: o.Queue}
	return r, c, cfg, nil
}

// queue feeds a run from the agent's queues (by their modes), then from
// Options.Queue, if any. It is a loop.Queue.
type queue struct {
	a    *Agent
	skip bool // the first steering poll: Continue took those messages
	next loop.Queue
}

func (q *queue) Steering(ctx context.Context) []providers.Message {
	if q.skip {
		q.skip = false
		return nil
	}
	q.a.mu.Lock()
	out := drain(&q.a.steering, q.a.opts.SteeringMode)
	q.a.mu.Unlock()
	if q.next != nil {
		out = append(out, q.next.Steering(ctx)...)
	}
	return out
}

func (q *queue) FollowUp(ctx context.Context) []providers.Message {
	q.a.mu.Lock()
	out := drain(&q.a.followUp, q.a.opts.FollowUpMode)
	q.a.mu.Unlock()
	if q.next != nil {
		out = append(out, q.next.FollowUp(ctx)...)
	}
	return out
}

// finish drives the run to its end with the agent's handler, which folds
// each event into the agent's state before its subscribers see it, and
// releases the agent. The loop closes every run it starts with agent_end,
// failed ones included.
func (a *Agent) finish(r *run, body func(events.Handler) error) error {
	emit := func(ctx context.Context, e events.Event) {
		a.reduce(e)
		a.bus.Publish(ctx, e)
	}
	defer func() {
		a.mu.Lock()
		a.streaming, a.pending, a.active = inflight{}, nil, nil
		a.mu.Unlock()
		r.active.cancel()
		close(r.active.done)
	}()
	return body(emit)
}

// reduce folds one event into the agent's state before subscribers see it.
func (a *Agent) reduce(e events.Event) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch e := e.(type) {
	case events.MessageStart:
		a.streaming = inflight{start: e.Message}
	case events.MessageUpdate:
		a.streaming.update = e.Stream
	case events.MessageEnd:
		a.streaming = inflight{}
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
		a.streaming = inflight{}
	}
}

func drain(q *[]providers.Message, mode QueueMode) []providers.Message {
	if len(*q) == 0 {
		return nil
	}
	if mode == QueueAll {
		out := *q
		*q = nil
		return out
	}
	out := []providers.Message{(*q)[0]}
	*q = slices.Clone((*q)[1:])
	return out
}
