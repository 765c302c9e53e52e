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
//	err = a.Prompt(ctx, providers.NewUserText("What's the weather in Oslo?"))
//	// err is a *loop.RunError when the run ended failed or aborted;
//	// a.State().Messages holds the transcript either way.
//
// One run is active at a time: while it is, Prompt returns ErrBusy, and
// the queues (Steering, FollowUps) take messages for it. Abort cancels it.
// Configure changes the options between runs. SaveSession and LoadSession
// keep a conversation across processes, as JSONL with the reference's field
// names. Prompt's error is a *loop.RunError when the run ended failed or
// aborted: errors.Is(err, context.Canceled) for an abort or a cancelled
// context, context.DeadlineExceeded for one that timed out (test for both).
// A consumer on its own goroutine can use Channel: when it falls behind,
// the run waits for it (backpressure, never loss).
//
// # Typed answers
//
// [Ask] runs a prompt and returns the model's final answer as a T, whose
// schema comes from T as a struct tool's does:
//
//	type Invoice struct {
//		Vendor string  `json:"vendor"`
//		Date   string  `json:"date" jsonschema:"pattern=^[0-9]{4}-[0-9]{2}-[0-9]{2}$"`
//		Total  float64 `json:"total"`
//	}
//	inv, err := agent.Ask[Invoice](ctx, a, "Extract the invoice's fields:\n\n"+doc)
//	// err is an *AnswerError when no answer fit within AskOptions.MaxAttempts (3)
//
// The model may use the agent's tools first. The answer is asked for
// natively where the provider offers structured output (Chat Completions'
// response_format json_schema, strict when the schema allows it; the
// Responses API's text.format; Gemini's responseJsonSchema) and through a
// final_answer tool elsewhere (Anthropic; with providers/faux, script the
// answer as a call to final_answer, see ExampleAsk). A server that accepts
// response_format but ignores it answers in prose, and the error then says
// to ask with AskOptions{Mode: AskTool}. Either way the answer goes
// through the coercion and validation of tool arguments; one that does not
// fit goes back with the preflight's listing and the model tries again,
// and one cut off at the token limit is never accepted, even if its JSON
// parses. An answer is held to RequestOptions.MaxArgumentBytes (1 MiB)
// either way, and a correction quotes at most [MaxQuotedAnswerBytes] of it,
// head and tail. Every attempt is a turn in the events and the transcript.
// The texts the model reads are this package's constants (asktext.go),
// listed in the README. go run ./examples/extract shows a wrong first
// answer corrected.
package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// ErrBusy is returned by Prompt, Continue, Ask, Configure, Reset and
// LoadSession while a run is active. Push messages on the Steering or
// FollowUps queue for the active run, or Wait for it to end.
var ErrBusy = errors.New("agent: a run is active; push messages on its Steering or FollowUps queue, or Wait for it to end")

// Options configure an Agent. Config.Provider and Config.Model are
// required; everything else is optional.
type Options struct {
	// Config is the loop's configuration: what to run, its limits, its
	// hook bundles, its logger (which also receives subscriber panics).
	// The agent adds to it for each run and takes nothing away:
	//   - its queues (Steering, FollowUps) feed the run first; Config.Queue,
	//     if set, is polled after them and its messages follow theirs;
	//   - when no bundle has a ConvertToLLM hook, a last bundle keeps user,
	//     assistant and tool-result messages (loop.StandardMessages);
	//   - Ask adds a bundle of its own after Config.Hooks.
	loop.Config

	SystemPrompt string
	Tools        []*tools.Tool
	// Messages is the transcript: the initial one for New (for example a
	// loaded session), the current one in Configure. The agent keeps a
	// copy; a nil message is refused.
	Messages []providers.Message

	// SteeringMode and FollowUpMode say how many queued messages a run
	// takes at a time; the default is one.
	SteeringMode QueueMode
	FollowUpMode QueueMode
}

// Agent owns a conversation and at most one active run. All methods are
// safe for concurrent use.
type Agent struct {
	bus       events.Bus
	steering  queue
	followUps queue
	cfgMu     sync.Mutex // one Configure (Reset, LoadSession) at a time

	mu       sync.Mutex
	opts     Options
	messages []providers.Message
	gen      uint64 // counts runs started and transcripts replaced
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
// provider (loop.ErrNoProvider), a tool not built by package tools, two
// tools of one name, a nil message in the transcript.
func New(opts Options) (*Agent, error) {
	if err := check(opts); err != nil {
		return nil, err
	}
	a := &Agent{opts: own(opts), messages: slices.Clone(opts.Messages)}
	a.bus.Logger = opts.Logger
	return a, nil
}

// Subscribe registers h for every event of every run and returns a
// function that removes it; a nil h is ignored. Subscribers are called in
// subscription order, one event at a time, with the run's context; a run
// is over only when every subscriber has returned from its agent_end. A
// panicking subscriber is logged; the others still receive the event.
func (a *Agent) Subscribe(h events.Handler) (unsubscribe func()) {
	if h == nil {
		return func() {}
	}
	return a.bus.Subscribe(h)
}

// Channel subscribes a channel with room for size events, for a consumer on
// its own goroutine. A full channel makes the run wait for the consumer
// (backpressure, never loss); call cancel when done reading, or the run
// will wait for it. See events.Bus.Channel.
func (a *Agent) Channel(size int) (<-chan events.Event, func()) { return a.bus.Channel(size) }

// Prompt starts a run with msgs and returns when it has fully ended
// (subscribers included). While a run is active it returns ErrBusy at
// once; with no message, or a nil one, it returns an error and starts
// nothing. A user's text is providers.NewUserText("..."); a message with
// images is a providers.UserMessage whose Content holds them.
//
// The error is nil when the model finished. A run that ended failed or
// aborted returns a *loop.RunError holding its last message; for a run
// cancelled (Abort, or ctx's cancel func) errors.Is(err, context.Canceled)
// holds, and for one whose ctx timed out errors.Is(err,
// context.DeadlineExceeded) does. The transcript keeps everything that
// happened either way.
func (a *Agent) Prompt(ctx context.Context, msgs ...providers.Message) error {
	if err := checkPrompt(msgs); err != nil {
		return err
	}
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
// Prompt's.
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
	skipFirstPoll, from := true, &a.steering
	queued := a.steering.take(a.opts.SteeringMode)
	if len(queued) == 0 {
		skipFirstPoll, from = false, &a.followUps
		queued = a.followUps.take(a.opts.FollowUpMode)
	}
	a.mu.Unlock()
	if len(queued) == 0 {
		return loop.ErrContinueAssistant
	}
	r, c, cfg, err := a.start(ctx, skipFirstPoll)
	if err != nil {
		from.putBack(queued) // busy after all
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
	a.gen++
	a.streaming, a.pending, a.errorMsg = inflight{}, nil, ""
	o := a.opts
	c := loop.Conversation{SystemPrompt: o.SystemPrompt, Messages: slices.Clip(slices.Clone(a.messages)), Tools: slices.Clone(o.Tools)}
	cfg := o.Config
	cfg.Hooks = slices.Clip(cfg.Hooks) // the run's additions go to a copy
	if !slices.ContainsFunc(cfg.Hooks, func(h loop.Hooks) bool { return h.ConvertToLLM != nil }) {
		cfg.Hooks = append(cfg.Hooks, loop.Hooks{ConvertToLLM: loop.StandardMessages})
	}
	cfg.Queue = &runQueue{a: a, skip: skipFirstSteeringPoll, next: o.Queue}
	return r, c, cfg, nil
}

// runQueue feeds a run from the agent's queues (by their modes), then from
// Options.Queue, if any. It is a loop.Queue.
type runQueue struct {
	a    *Agent
	skip bool // the first steering poll: Continue took those messages
	next loop.Queue
}

func (q *runQueue) Steering(ctx context.Context) []providers.Message {
	if q.skip {
		q.skip = false
		return nil
	}
	q.a.mu.Lock()
	mode := q.a.opts.SteeringMode
	q.a.mu.Unlock()
	out := q.a.steering.take(mode)
	if q.next != nil {
		out = append(out, q.next.Steering(ctx)...)
	}
	return out
}

func (q *runQueue) FollowUp(ctx context.Context) []providers.Message {
	q.a.mu.Lock()
	mode := q.a.opts.FollowUpMode
	q.a.mu.Unlock()
	out := q.a.followUps.take(mode)
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
		a.bus.Handle(ctx, e)
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

// checkPrompt refuses a prompt with no message or a nil one.
func checkPrompt(msgs []providers.Message) error {
	if len(msgs) == 0 {
		return errors.New("agent: Prompt needs a message")
	}
	for i, m := range msgs {
		if m == nil {
			return fmt.Errorf("agent: Prompt's message %d is nil", i)
		}
	}
	return nil
}
