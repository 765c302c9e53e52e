// Package loop is agentloop's stateless agent loop: one run from prompts to
// agent_end. It streams the model's response, checks and runs the tool
// calls in it, appends their results in call order, and calls the model
// again until it is done, publishing every step through an [events.Sink].
//
// Before any tool body runs, each call must pass, in order: the response
// was not cut off by the token limit; the tool exists; its arguments fit the
// schema after coercion; the policy hook allows it; the run is not
// cancelled. A "no" at any step becomes an error result the model reads,
// never a failed run.
package loop

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// Errors returned by Continue for a context it cannot continue from.
var (
	ErrNoMessages        = errors.New("Cannot continue: no messages in context")
	ErrContinueAssistant = errors.New("Cannot continue from message role: assistant")
	errMissingProvider   = errors.New("loop: Config.Provider is nil")
)

// Run starts a run with prompts appended to c's transcript, publishing every
// event to emit, and returns the messages the run produced (the prompts
// included). c is not modified.
//
// Model failures and cancellation end the run normally: the last message
// then has stop reason error or aborted. Run returns a Go error only when
// the run cannot go on in a way the transcript can express: a hook that
// fails, a provider that refuses the request, a panic outside a tool. It
// then emits no agent_end; callers that own state (like agent.Agent) close
// the run themselves.
func Run(ctx context.Context, prompts []providers.Message, c Context, cfg Config, emit events.Sink) ([]providers.Message, error) {
	r, err := newRun(ctx, c, cfg, emit)
	if err != nil {
		return nil, err
	}
	r.c.Messages = append(c.Messages[:len(c.Messages):len(c.Messages)], prompts...)
	r.newFrom = len(c.Messages)
	return r.guard(func() error {
		r.emit(events.AgentStart{})
		r.emit(events.TurnStart{})
		for _, p := range prompts {
			r.emit(events.MessageStart{Message: p})
			r.emit(events.MessageEnd{Message: p})
		}
		return r.loop()
	})
}

// Continue resumes a run from c's transcript as it stands, whose last
// message must not be an assistant message (it is usually a tool result or
// a user message added since). It returns the messages the run produced.
func Continue(ctx context.Context, c Context, cfg Config, emit events.Sink) ([]providers.Message, error) {
	if len(c.Messages) == 0 {
		return nil, ErrNoMessages
	}
	if c.Messages[len(c.Messages)-1].Role() == providers.RoleAssistant {
		return nil, ErrContinueAssistant
	}
	r, err := newRun(ctx, c, cfg, emit)
	if err != nil {
		return nil, err
	}
	r.c.Messages = c.Messages[:len(c.Messages):len(c.Messages)]
	r.newFrom = len(c.Messages)
	return r.guard(func() error {
		r.emit(events.AgentStart{})
		r.emit(events.TurnStart{})
		return r.loop()
	})
}

// run is the state of one run.
type run struct {
	ctx    context.Context
	cfg    Config
	sink   events.Sink
	emitMu sync.Mutex
	c      Context
	byName map[string]*tools.Tool
	specs  []providers.ToolSpec
	// The run's new messages are r.c.Messages[newFrom:], until
	// PrepareNextTurn replaces the context; from then on they are kept
	// apart, in detached.
	newFrom  int
	detached []providers.Message
	apart    bool
	stream   streamed                         // the response being consumed
	scratch  []*call                          // the call lists of the batch running; see lists
	yield    func(providers.StreamEvent) bool // r.onStreamEvent, made once
	req      providers.Request                // the model call's request, reused
}

func newRun(ctx context.Context, c Context, cfg Config, emit events.Sink) (*run, error) {
	if cfg.Provider == nil {
		return nil, errMissingProvider
	}
	if emit == nil {
		emit = func(context.Context, events.Event) {}
	}
	r := &run{ctx: ctx, cfg: cfg, sink: emit}
	r.setContext(c)
	return r, nil
}

func (r *run) setContext(c Context) {
	r.c = c
	r.byName = make(map[string]*tools.Tool, len(c.Tools))
	r.specs = make([]providers.ToolSpec, 0, len(c.Tools))
	for _, t := range c.Tools {
		if t == nil {
			continue
		}
		if _, dup := r.byName[t.Name]; !dup {
			r.byName[t.Name] = t
		}
		r.specs = append(r.specs, t.Spec())
	}
}

// emit publishes one event; it serializes the goroutines of parallel tool
// bodies so the sink sees one total order.
func (r *run) emit(e events.Event) {
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	r.sink(r.ctx, e)
}

// guard runs body and turns a panic on the run's goroutine into an error.
func (r *run) guard(body func() error) (msgs []providers.Message, err error) {
	defer func() {
		if p := recover(); p != nil {
			msgs, err = r.newMessages(), fmt.Errorf("loop: panic: %v\n%s", p, debug.Stack())
		}
	}()
	if err := body(); err != nil {
		return r.newMessages(), err
	}
	return r.newMessages(), nil
}

func (r *run) append(m providers.Message) {
	r.c.Messages = append(r.c.Messages, m)
	if r.apart {
		r.detached = append(r.detached, m)
	}
}

// newMessages returns the messages the run has added so far, as a slice
// with no room to append into.
func (r *run) newMessages() []providers.Message {
	if r.apart {
		return r.detached[:len(r.detached):len(r.detached)]
	}
	return r.c.Messages[r.newFrom:len(r.c.Messages):len(r.c.Messages)]
}

// loop is the main loop of SPEC §2.3: turns while there are tool results or
// steering messages to answer, then follow-ups, then the end.
func (r *run) loop() error {
	pending := r.poll(r.cfg.SteeringMessages)
	first := true
	for {
		continueTools := true
		for continueTools || len(pending) > 0 {
			if !first {
				r.emit(events.TurnStart{})
			}
			first = false
			for _, m := range pending {
				r.emit(events.MessageStart{Message: m})
				r.emit(events.MessageEnd{Message: m})
				r.append(m)
			}
			pending = nil
			a, err := r.streamAssistant()
			if err != nil {
				return err
			}
			if a.StopReason == providers.StopReasonError || a.StopReason == providers.StopReasonAborted {
				r.emit(events.TurnEnd{Message: a, ToolResults: []providers.ToolResultMessage{}})
				r.emit(events.AgentEnd{Messages: r.newMessages()})
				return nil
			}
			results := []providers.ToolResultMessage{}
			continueTools = false
			if a.HasToolCalls() {
				var terminate bool
				results, terminate = r.executeToolCalls(a)
				continueTools = !terminate
			}
			r.emit(events.TurnEnd{Message: a, ToolResults: results})
			turn := Turn{Message: a, ToolResults: results, Context: r.c, NewMessages: r.newMessages()}
			if err := r.prepareNextTurn(turn); err != nil {
				return err
			}
			if r.cfg.ShouldStopAfterTurn != nil && r.cfg.ShouldStopAfterTurn(r.ctx, turn) {
				r.emit(events.AgentEnd{Messages: r.newMessages()})
				return nil
			}
			pending = r.poll(r.cfg.SteeringMessages)
		}
		if pending = r.poll(r.cfg.FollowUpMessages); len(pending) == 0 {
			break
		}
	}
	r.emit(events.AgentEnd{Messages: r.newMessages()})
	return nil
}

func (r *run) poll(f func(context.Context) []providers.Message) []providers.Message {
	if f == nil {
		return nil
	}
	return f(r.ctx)
}

func (r *run) prepareNextTurn(turn Turn) error {
	if r.cfg.PrepareNextTurn == nil {
		return nil
	}
	u, err := r.cfg.PrepareNextTurn(r.ctx, turn)
	if err != nil {
		return fmt.Errorf("loop: PrepareNextTurn: %w", err)
	}
	if u.Context != nil {
		c := *u.Context
		c.Messages = c.Messages[:len(c.Messages):len(c.Messages)]
		if !r.apart {
			r.detached, r.apart = slices.Clone(r.newMessages()), true
		}
		r.setContext(c)
	}
	if u.Model != nil {
		r.cfg.Model = *u.Model
	}
	if u.Reasoning != nil {
		r.cfg.Options.Reasoning = *u.Reasoning
	}
	return nil
}
