// Package loop is agentloop's stateless agent loop: one run from prompts to
// agent_end. It streams the model's response, checks and runs the tool
// calls in it, appends their results in call order, and calls the model
// again until it is done, publishing every step to an [events.Handler].
//
//	cfg := loop.Config{Provider: p, Model: m, Hooks: []loop.Hooks{{BeforeToolCall: policy}}}
//	msgs, err := loop.Run(ctx, prompts, loop.Conversation{Tools: ts}, cfg, handler)
//
// A run always ends with agent_end, and Run returns a [*RunError] when the
// run ended without the model finishing: the model or provider failed, the
// run was cancelled (errors.Is context.Canceled, or
// context.DeadlineExceeded for a context that timed out), or a hook or the
// loop itself failed. The messages Run returns hold everything that
// happened either way. Package agent keeps the transcript across runs.
//
// Before any tool body runs, each call must pass, in order: the response
// was not cut off by the token limit; the tool exists; its arguments
// arrived whole and within bounds; they fit the schema after coercion; the
// policy hooks (Hooks.BeforeToolCall) allow the call; the run is not
// cancelled. A "no" at any step becomes an error result the model reads,
// never a failed run; the texts are this package's constants and
// formatting functions, and the README lists them. The bodies of the calls
// that pass run in parallel, each starting at once (bounded only by
// Limits.MaxParallelTools); each end event goes out as its body finishes,
// and the results enter the transcript in call order. A tool that panics
// gives the model "panic: VALUE" and the developer the stack, in
// Config.Logger (slog.Default when nil) and in the result's details.
//
// A [Config] says what to run, how far it may go ([Limits], whose zero
// value is a set of finite defaults; [NoLimit] turns one off) and what it
// calls along the way: [Hooks] bundles, composed in order by the rule on
// each field (tracing, agent.Ask and a policy each add one), and a
// [Queue] of steering and follow-up messages from outside the run.
package loop

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"slices"
	"sync"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/internal/toolcheck"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// Errors for runs that cannot start. No event is published for them.
var (
	// ErrNoMessages: Continue needs a transcript to continue from.
	ErrNoMessages = errors.New("loop: cannot continue: no messages")
	// ErrContinueAssistant: Continue cannot continue from an assistant
	// message (the model already answered; add a user message).
	ErrContinueAssistant = errors.New("loop: cannot continue from an assistant message")
	// ErrNoProvider: Config.Provider is nil.
	ErrNoProvider = errors.New("loop: Config.Provider is nil")
)

// ErrMaxTurns is the cause (RunError.Err) of a run that reached
// Limits.MaxTurns with tool results still to answer.
var ErrMaxTurns = errors.New("loop: the run reached Limits.MaxTurns")

// RunError reports a run that ended without the model finishing. Message
// is the run's last message (its stop reason is error or aborted, and
// ErrorMessage says what happened); the run's messages hold everything
// before it.
//
// Err is the cause: for an aborted run the context's error, so that
// errors.Is(err, context.Canceled) holds for a cancelled run (an Abort, a
// cancel func) and errors.Is(err, context.DeadlineExceeded) for one whose
// context timed out (context.WithTimeout, WithDeadline): test for both to
// catch every abort; the error of a hook, a provider or the loop that
// failed; nil when the model or its provider reported the failure in the
// response itself.
type RunError struct {
	Message providers.AssistantMessage
	Err     error
}

// Error returns "loop: run aborted: ..." or "loop: run failed: ...".
func (e *RunError) Error() string {
	if e.Message.StopReason == providers.StopReasonAborted {
		return "loop: run aborted: " + e.Message.ErrorMessage
	}
	return "loop: run failed: " + e.Message.ErrorMessage
}

// Unwrap returns the cause.
func (e *RunError) Unwrap() error { return e.Err }

// Run starts a run with prompts appended to conv's transcript, publishing
// every event to emit (which may be nil), and returns the messages the run
// produced, the prompts included. conv is not modified. Each event's
// envelope holds its place in the run (events.Seq: the run's own events
// numbered from 1, a streamed message's and a tool body's updates under
// the event that opened them; a provider's second start begins the
// message's next attempt) and an empty path; a run nested in a tool call
// publishes through events.Nest to get its caller's path.
//
// A run that starts always ends with agent_end. The error is nil when the
// model finished (stop, tool use ended by a terminating tool, a stop
// condition); a *RunError otherwise. Invalid arguments (no provider, a
// tool not built by package tools, two tools of one name) return an error
// before any event.
func Run(ctx context.Context, prompts []providers.Message, conv Conversation, cfg Config, emit events.Handler) ([]providers.Message, error) {
	r, err := newRun(ctx, conv, cfg, emit)
	if err != nil {
		return nil, err
	}
	r.c.Messages = append(conv.Messages[:len(conv.Messages):len(conv.Messages)], prompts...)
	r.newFrom = len(conv.Messages)
	return r.guard(func() error {
		r.start()
		for _, p := range prompts {
			r.emit(events.MessageStart{Message: p})
			r.emit(events.MessageEnd{Message: p})
		}
		return r.loop()
	})
}

// Continue resumes a run from conv's transcript as it stands, whose last
// message must not be an assistant message (it is usually a tool result or
// a user message added since). It returns the messages the run produced,
// and its error, as Run does.
func Continue(ctx context.Context, conv Conversation, cfg Config, emit events.Handler) ([]providers.Message, error) {
	if len(conv.Messages) == 0 {
		return nil, ErrNoMessages
	}
	if conv.Messages[len(conv.Messages)-1].Role() == providers.RoleAssistant {
		return nil, ErrContinueAssistant
	}
	r, err := newRun(ctx, conv, cfg, emit)
	if err != nil {
		return nil, err
	}
	r.c.Messages = conv.Messages[:len(conv.Messages):len(conv.Messages)]
	r.newFrom = len(conv.Messages)
	return r.guard(func() error {
		r.start()
		return r.loop()
	})
}

// run is the state of one run.
type run struct {
	ctx    context.Context
	cfg    Config
	rt     Runtime // cfg.Runtime; nil: the default runtime (wall.go)
	h      hooks   // cfg.Hooks, gathered by kind
	sink   events.Handler
	emitMu sync.Mutex
	seq    uint64 // the last own event's number (events.Seq.N); under emitMu
	msg    stream // the stream of the message in flight; under emitMu
	c      Conversation
	byName map[string]*tools.Tool
	specs  []providers.ToolSpec
	// versions are the ToolSources' versions the tool set was built from.
	versions []uint64
	// hidden are the sources' tools left out for a name taken before
	// them; hiddenNews says they changed since a tools_changed said so.
	hidden     []string
	hiddenNews bool
	// The run's new messages are r.c.Messages[newFrom:], until
	// PrepareNextTurn replaces the conversation; from then on they are
	// kept apart, in detached.
	newFrom   int
	detached  []providers.Message
	apart     bool
	turns     int             // model calls made
	spent     providers.Usage // the run's model calls' usage, for the budgets
	started   bool            // agent_start was published
	inTurn    bool            // a turn_start was published and its turn_end not yet
	handlerP  any             // the first panic of the event handler or an OnEvent hook, if any
	deadlines deadlines       // the default tool timeout's contexts
	workers   workers         // the parallel bodies' goroutines (wall.go)

	stream  streamed                         // the response being consumed
	scratch []*call                          // the call lists of the batch running; see lists
	yield   func(providers.StreamEvent) bool // r.onStreamEvent, made once
	req     providers.Request                // the model call's request, reused
}

func newRun(ctx context.Context, conv Conversation, cfg Config, emit events.Handler) (*run, error) {
	if cfg.Provider == nil {
		return nil, ErrNoProvider
	}
	if emit == nil {
		emit = func(context.Context, events.Event) {}
	}
	r := &run{cfg: cfg, rt: cfg.Runtime, h: gather(cfg.Hooks), sink: emit}
	var err error
	if r.ctx, err = r.stepContext(ctx, Step{Kind: StepRun, Model: cfg.Model}); err != nil {
		return nil, err
	}
	if err := r.setConversation(conv); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *run) setConversation(c Conversation) error {
	if err := toolcheck.Check(c.Tools); err != nil {
		return fmt.Errorf("loop: %w", err)
	}
	r.c = c
	r.buildTools()
	return nil
}

// buildTools makes the run's tool set: the conversation's tools, then each
// source's that is valid and not named like one before it (those are
// hidden, and a tools_changed event names them).
func (r *run) buildTools() {
	r.byName = make(map[string]*tools.Tool, len(r.c.Tools))
	r.specs = make([]providers.ToolSpec, 0, len(r.c.Tools))
	add := func(t *tools.Tool) bool {
		if t.Err() != nil {
			return true
		}
		if r.byName[t.Name()] != nil {
			return false
		}
		r.byName[t.Name()] = t
		r.specs = append(r.specs, t.Spec())
		return true
	}
	for _, t := range r.c.Tools {
		add(t)
	}
	r.versions = r.versions[:0]
	var hidden []string
	for _, src := range r.cfg.ToolSources {
		set, v := src.Tools()
		r.versions = append(r.versions, v)
		for _, t := range set {
			if !add(t) {
				hidden = append(hidden, t.Name())
			}
		}
	}
	slices.Sort(hidden)
	hidden = slices.Compact(hidden)
	if !slices.Equal(hidden, r.hidden) {
		r.hidden, r.hiddenNews = hidden, true
	}
}

// refreshTools rebuilds the tool set when a source changed since the last
// model call, and says so with a tools_changed event; the event also
// comes when the sources' tools hidden by others' names changed (before
// the first model call too).
func (r *run) refreshTools() {
	changed := false
	for i, src := range r.cfg.ToolSources {
		if _, v := src.Tools(); i >= len(r.versions) || v != r.versions[i] {
			changed = true
		}
	}
	if !changed && !r.hiddenNews {
		return
	}
	before := r.byName
	if changed {
		r.buildTools()
	}
	e := events.ToolsChanged{Tools: make([]string, 0, len(r.specs))}
	for _, s := range r.specs {
		e.Tools = append(e.Tools, s.Name)
		if before[s.Name] == nil {
			e.Added = append(e.Added, s.Name)
		}
	}
	for name := range before {
		if r.byName[name] == nil {
			e.Removed = append(e.Removed, name)
		}
	}
	slices.Sort(e.Removed)
	news := r.hiddenNews
	if news {
		// Non-nil when empty: none is hidden any more.
		e.Hidden, r.hiddenNews = append([]string{}, r.hidden...), false
	}
	if len(e.Added) > 0 || len(e.Removed) > 0 || news {
		r.emit(e)
	}
}

// emit publishes one event to the OnEvent hooks, then the handler; it
// serializes the goroutines of parallel tool bodies so they see one total
// order. A panicking handler or hook does not stop the run: the run goes
// on, and ends with an error saying so.
//
// Every event gets its envelope here, under the lock, so the numbers
// follow the order the handler sees (see seq.go).
func (r *run) emit(e events.Event) { r.publish(e, nil, nil) }

// publish is emit for an event of the stream in (nil: an own event) that
// opens the stream opens (nil: none; an assistant message's message_start
// opens r.msg itself).
func (r *run) publish(e events.Event, in, opens *stream) {
	r.emitMu.Lock()
	defer r.emitMu.Unlock()
	defer func() {
		if p := recover(); p != nil {
			r.handlerPanicked(p)
		}
	}()
	// A new variable, so that e, which does not escape, can stay on the
	// caller's stack: the event is boxed once, with its envelope.
	ev := events.WithEnvelope(e, r.envelope(in))
	switch ev.(type) {
	case events.AgentStart:
		r.started = true
	case events.TurnStart:
		r.inTurn = true
	case events.TurnEnd:
		r.inTurn = false
	case events.MessageStart:
		r.msg = stream{n: r.seq}
	}
	if opens != nil {
		*opens = stream{n: r.seq}
	}
	for _, f := range r.h.onEvent {
		r.deliver(f, ev)
	}
	r.sink(r.ctx, ev)
}

// deliver calls one OnEvent hook: a panic in it does not keep the event
// from the hooks after it or the handler.
func (r *run) deliver(h events.Handler, e events.Event) {
	defer func() {
		if p := recover(); p != nil {
			r.handlerPanicked(p)
		}
	}()
	h(r.ctx, e)
}

// handlerPanicked keeps the first panic of the handler or an OnEvent hook,
// for the run's error, and logs each with its stack.
func (r *run) handlerPanicked(p any) {
	if r.handlerP == nil {
		r.handlerP = p
	}
	r.logger().Error("loop: an event handler panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
}

func (r *run) start() {
	r.emit(events.AgentStart{})
	r.emit(events.TurnStart{})
}

// guard runs body and returns the run's messages and error. A failure the
// run has not closed itself (a hook's error, a panic on the run's
// goroutine) is closed here: a message carrying the error, turn_end and
// agent_end.
func (r *run) guard(body func() error) (msgs []providers.Message, err error) {
	defer func() {
		r.deadlines.release()
		r.workers.stop()
		if p := recover(); p != nil {
			r.logger().Error("loop: the run panicked", "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = r.close(fmt.Errorf("loop: panic: %v\n%s", p, debug.Stack()))
		}
		if err == nil && r.handlerP != nil {
			err = fmt.Errorf("loop: the event handler panicked: %v", r.handlerP)
		}
		msgs = r.newMessages()
	}()
	err = body()
	var closed *RunError
	if err != nil && !errors.As(err, &closed) {
		err = r.close(err)
	}
	return nil, err
}

// close ends a run that failed outside the model's response with the
// closing events a subscriber expects, and returns its RunError.
func (r *run) close(cause error) error {
	reason := providers.StopReasonError
	if r.ctx.Err() != nil {
		reason = providers.StopReasonAborted
	}
	m := r.cfg.Model
	msg := providers.AssistantMessage{Content: []providers.Content{}, API: m.API, Provider: m.Provider,
		Model: m.ID, StopReason: reason, ErrorMessage: cause.Error(), Timestamp: r.now()}
	if !r.started {
		r.emit(events.AgentStart{})
	}
	if !r.inTurn {
		r.emit(events.TurnStart{})
	}
	var boxed providers.Message = msg
	r.emit(events.MessageStart{Message: boxed})
	r.append(boxed)
	r.emit(events.MessageEnd{Message: boxed})
	r.emit(events.TurnEnd{Message: msg, ToolResults: []providers.ToolResultMessage{}})
	r.emit(events.AgentEnd{Messages: r.newMessages()})
	return &RunError{Message: msg, Err: cause}
}

// failed is the RunError of a response that ended with stop reason error
// or aborted.
func (r *run) failed(a providers.AssistantMessage) error {
	var cause error
	if a.StopReason == providers.StopReasonAborted {
		if cause = r.ctx.Err(); cause == nil {
			cause = context.Canceled
		}
	}
	return &RunError{Message: a, Err: cause}
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
	pending := r.steering()
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
			r.turns++
			a, err := r.streamAssistant()
			if err != nil {
				return err
			}
			if a.StopReason == providers.StopReasonError || a.StopReason == providers.StopReasonAborted {
				r.emit(events.TurnEnd{Message: a, ToolResults: []providers.ToolResultMessage{}})
				r.emit(events.AgentEnd{Messages: r.newMessages()})
				return r.failed(a)
			}
			results := []providers.ToolResultMessage{}
			continueTools = false
			if a.HasToolCalls() {
				var terminate bool
				results, terminate = r.executeToolCalls(a)
				continueTools = !terminate
			}
			r.emit(events.TurnEnd{Message: a, ToolResults: results})
			turn := Turn{Message: a, ToolResults: results, Conversation: r.c, NewMessages: r.newMessages()}
			if err := r.prepareNextTurn(&turn); err != nil {
				return err
			}
			if r.shouldStop(turn) {
				r.emit(events.AgentEnd{Messages: r.newMessages()})
				return nil
			}
			if over := r.spend(a.Usage); over != nil && continueTools {
				return r.close(over) // the results are stored; the model will not answer them
			}
			if r.turns >= limit(r.cfg.Limits.MaxTurns, DefaultMaxTurns) {
				if continueTools { // the model has results to answer
					return r.close(fmt.Errorf("%w (%d model calls)", ErrMaxTurns, r.turns))
				}
				r.emit(events.AgentEnd{Messages: r.newMessages()}) // done; queued messages wait
				return nil
			}
			pending = r.steering()
		}
		if pending = r.followUp(); len(pending) == 0 {
			break
		}
	}
	r.emit(events.AgentEnd{Messages: r.newMessages()})
	return nil
}

func (r *run) steering() []providers.Message {
	if r.cfg.Queue == nil {
		return nil
	}
	return r.cfg.Queue.Steering(r.ctx)
}

func (r *run) followUp() []providers.Message {
	if r.cfg.Queue == nil {
		return nil
	}
	return r.cfg.Queue.FollowUp(r.ctx)
}

// prepareNextTurn runs the PrepareNextTurn hooks in order, applying each
// update before the next hook sees the turn. turn is updated in place.
func (r *run) prepareNextTurn(turn *Turn) error {
	for _, f := range r.h.prepare {
		u, err := f(r.ctx, *turn)
		if err != nil {
			return fmt.Errorf("loop: PrepareNextTurn: %w", err)
		}
		if err := r.update(u); err != nil {
			return err
		}
		turn.Conversation, turn.NewMessages = r.c, r.newMessages()
	}
	return nil
}

// update applies one PrepareNextTurn hook's update.
func (r *run) update(u TurnUpdate) error {
	if u.Conversation != nil {
		c := *u.Conversation
		c.Messages = c.Messages[:len(c.Messages):len(c.Messages)]
		if !r.apart {
			r.detached, r.apart = slices.Clone(r.newMessages()), true
		}
		if err := r.setConversation(c); err != nil {
			return fmt.Errorf("loop: PrepareNextTurn: %w", err)
		}
	}
	if u.Model != nil {
		r.cfg.Model = *u.Model
	}
	if u.Reasoning != nil {
		r.cfg.RequestOptions.Reasoning = *u.Reasoning
	}
	return nil
}
