package loop

import (
	"context"
	"log/slog"
	"time"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// Conversation is what a run works on: the system prompt, the transcript so
// far and the tools the model may call.
type Conversation struct {
	SystemPrompt string
	Messages     []providers.Message
	Tools        []*tools.Tool
}

// Config configures a run in three parts: what to run (the fields from
// Provider to Output), how far it may go (Limits), and what it calls along
// the way (Hooks, Queue). Provider and Model are required; the zero value
// of everything else is safe: every limit has a finite default, no hook
// is called, no message is queued.
//
//	cfg := loop.Config{
//		Provider: provider,
//		Model:    model,
//		Limits:   loop.Limits{MaxTurns: 20},
//		Hooks:    []loop.Hooks{tracer.Hooks(), {BeforeToolCall: policy}},
//	}
type Config struct {
	// Provider streams the model's responses.
	Provider providers.Provider
	// Model is the model each request names.
	Model providers.Model
	// RequestOptions are the request options (max tokens, temperature,
	// reasoning effort, the argument cap). The key is the Provider's own,
	// or a GetAPIKey hook's (providers.Request.APIKey says which wins).
	RequestOptions providers.RequestOptions
	// ToolExecution is tools.Parallel (the default) or tools.Sequential. A
	// batch also runs sequentially when any tool it calls asks for it.
	ToolExecution tools.Mode
	// ToolSources supply tools that may change during a run (an MCP
	// server's, say), offered beside the conversation's Tools. The loop
	// reads them before each model call, never in the middle of a batch,
	// and publishes an events.ToolsChanged when the set changed since the
	// run's last call. A source's tool named like a tool of the
	// conversation (or of an earlier source) is left out, and named in
	// that event's Hidden (before the first model call too).
	ToolSources []tools.Source
	// Compactor decides what of a long conversation each request carries
	// (package loop/compact: trim, summarise, shorten old results). It runs
	// before each model call, before the TransformMessages hooks; what it
	// stores (a summary) joins the transcript, what it did is an
	// events.Compacted. nil sends the whole transcript.
	Compactor Compactor
	// Output, when not nil, asks every model call for its answer as JSON
	// fitting a schema, from providers that offer it natively
	// (providers.StructuredOutput). agent.Ask sets it.
	Output *providers.OutputFormat

	// Limits bound the run; its zero value is a set of finite defaults.
	Limits Limits
	// Hooks are the bundles of hook functions the run calls, composed in
	// slice order by the rules documented on each field of Hooks. Package
	// loop/otel contributes one, agent.Ask another, a policy a third.
	Hooks []Hooks
	// Queue supplies the messages that arrive while the run goes on
	// (steering) and those that start another turn when it would end
	// (follow-ups); nil means none. An agent.Agent supplies its queues.
	Queue Queue
	// Runtime drives the run: its clock, how a parallel batch's bodies
	// start, how the loop waits for a body with a timeout. nil is the
	// default runtime (the wall clock, goroutines, channels and timers); a
	// workflow engine supplies its own (see Runtime).
	Runtime Runtime
	// Logger receives what the developer should see and the model should
	// not: a panic in a tool body, a hook or the provider, with its stack.
	// nil means slog.Default(). API keys are never logged.
	Logger *slog.Logger
}

// Queue supplies messages from outside a run. The loop calls it on the
// run's goroutine with the run's context: Steering before the first model
// call and after every turn (what it returns enters the transcript before
// the next model call), FollowUp when the run would otherwise end (what it
// returns starts another turn). Neither is called after a
// ShouldStopAfterTurn hook stopped the run, nor after Limits.MaxTurns.
type Queue interface {
	Steering(ctx context.Context) []providers.Message
	FollowUp(ctx context.Context) []providers.Message
}

// NoLimit, as the value of a field of Limits, turns that limit off. Any
// negative value does the same.
const NoLimit = -1

// Limits bound what one run may do. The zero value of every field is a
// documented, finite default, never "no limit": a run that forgets
// MaxTurns ends, a tool body that forgets a timeout is stopped, a run that
// forgets a budget has one. NoLimit turns a limit off explicitly.
type Limits struct {
	// MaxTurns bounds the model calls of one run. A run that reaches it
	// with tool results still to answer ends with an error message (stop
	// reason error; the error is ErrMaxTurns) after the turn's results are
	// stored; a run whose model is done ends as usual. 0 means
	// DefaultMaxTurns.
	MaxTurns int
	// MaxToolCalls bounds the tool calls of one assistant message: the
	// calls past it are refused with a message saying so, and none of them
	// runs. 0 means DefaultMaxToolCalls.
	MaxToolCalls int
	// MaxParallelTools bounds how many tool bodies of a parallel batch run
	// at once. 0 (like NoLimit) starts every prepared body of the batch at
	// once; they are bounded by the calls one message may make
	// (MaxToolCalls).
	MaxParallelTools int
	// ToolTimeout bounds each tool body that has no Timeout of its own
	// (tools.Config.Timeout, which wins; a negative one is NoLimit). 0
	// means DefaultToolTimeout. At the timeout the body's context ends and
	// a body that gives up gets an error result saying it timed out, with outcome
	// events.OutcomeTimeout.
	//
	// A timeout that is set (the tool's, or this field) also lets go of a
	// body that ignores its context: the run goes on at the deadline and
	// the body's late result is discarded; that costs a goroutine per
	// call. The default costs no goroutine: it ends the body's context
	// (one timer serves many calls), and a body that ignores its context
	// is waited for.
	ToolTimeout time.Duration
	// MaxResultBytes caps the content of one tool result sent back to the
	// model, every kind of block counted at its size as sent (text, an
	// image's encoded data). A result whose text passes it becomes an error
	// result saying so; images that do not fit beside the rest are each
	// replaced by OmittedImageText. Details larger than the cap are dropped.
	// It holds for every executed call's result (the body's, an error
	// result, one an AfterToolCall hook rewrote) and the body's progress
	// reports; a refusal's text past it is cut to head and tail. 0 means
	// DefaultMaxResultBytes. (The cap on a call's arguments is a request
	// option: RequestOptions.MaxArgumentBytes.)
	MaxResultBytes int
	// MaxRunTokens bounds the tokens of one run's model calls (input,
	// cache and output). A run that reaches it with tool results still to
	// answer ends after they are stored, with an error message
	// (ErrTokenBudget). 0 means DefaultMaxRunTokens.
	MaxRunTokens int
	// MaxRunCost bounds the run's cost in dollars, from the model's
	// prices, as MaxRunTokens bounds its tokens (ErrCostBudget). 0 means
	// no bound in dollars beyond the token budget, which always applies
	// unless it is NoLimit: prices differ too much between models for one
	// default.
	MaxRunCost float64
}

// The defaults of Limits.
const (
	// DefaultMaxTurns is the default bound on a run's model calls: room
	// for long tool-using tasks, and an end to a model that never stops
	// calling tools.
	DefaultMaxTurns = 100
	// DefaultMaxToolCalls is the default cap on one message's tool calls.
	DefaultMaxToolCalls = 128
	// DefaultToolTimeout is the default bound on one tool body: longer
	// than a build, a test suite or a slow API call takes, short enough
	// that a body that hangs does not hold a conversation for good.
	DefaultToolTimeout = 5 * time.Minute
	// DefaultMaxResultBytes is the default cap on a tool result's content.
	DefaultMaxResultBytes = 1 << 20
	// DefaultMaxRunTokens is the default token budget of a run: about
	// fifty model calls that each fill a 200,000-token context window, or
	// DefaultMaxTurns calls at half of it.
	DefaultMaxRunTokens = 10_000_000
)

// limit resolves a cap: 0 is the default, negative is none.
func limit(v, def int) int {
	switch {
	case v == 0:
		return def
	case v < 0:
		return int(^uint(0) >> 1)
	}
	return v
}

// Hooks is a bundle of hook functions; every field is optional. A run
// takes any number of bundles (Config.Hooks) and composes them in slice
// order, each hook by the rule on its field, as net/http/httptrace
// composes ClientTraces: tracing, a typed answer, a policy and (to come)
// approvals each add a bundle, and none wraps another.
//
// Hooks are called on the run's goroutine with the run's context unless
// noted. A hook that panics is treated as one that returned an error (the
// panic and its stack are logged); an error fails the run unless noted.
//
// Put policy bundles before an approval bundle: a call a policy blocks or
// rewrites is never put to a person, and a person approves the arguments
// that will run.
type Hooks struct {
	// GetAPIKey resolves the API key before every model call, so that
	// short-lived keys can be refreshed. Bundles are asked in order; the
	// first non-empty key wins and the rest are not asked; it is the
	// call's providers.Request.APIKey, and a Compactor's summary request
	// for that call carries it too (CompactInput.APIKey). With none, the
	// provider uses its own key (providers.Request.APIKey states the whole
	// rule). Asked once per model call: after the ConvertToLLM hooks, or
	// before the Compactor when there is one.
	GetAPIKey func(ctx context.Context, provider string) (string, error)
	// TransformMessages rewrites the transcript for one request only (to
	// prune or inject); the result is not written back. Chained: each
	// bundle's gets the previous one's result.
	TransformMessages func(ctx context.Context, messages []providers.Message) ([]providers.Message, error)
	// ConvertToLLM turns the transcript into the messages a provider
	// understands, dropping or translating custom messages
	// (StandardMessages is the usual one). Chained like TransformMessages,
	// after all of them, before every model call. With none, messages go
	// through unchanged.
	ConvertToLLM func(ctx context.Context, messages []providers.Message) ([]providers.Message, error)

	// BeforeToolCall is a policy gate. It runs after a call's arguments
	// passed the tool's checks and may block the call or replace its
	// arguments. Bundles run in order and each sees the arguments as the
	// previous one left them: replacement arguments are checked again
	// before the next hook sees them (arguments that fail the checks fail
	// the call). The first block, error or failed check wins: the call is
	// refused and later hooks are not called. A cancelled run refuses the
	// call after any hook. It may run on any goroutine but never
	// concurrently with itself within one run; an error refuses the call
	// and does not fail the run.
	BeforeToolCall func(ctx context.Context, call BeforeCall) (BeforeResult, error)
	// AfterToolCall sees every executed call's result and may override
	// parts of it. Bundles run in order, each seeing the result as the
	// previous one left it; an error (which does not fail the run) makes
	// the call an error result and later hooks are not called. In a
	// parallel batch it runs on the goroutine of the call's body,
	// concurrently with other calls.
	AfterToolCall func(ctx context.Context, call AfterCall) (AfterResult, error)

	// StepContext gives the loop the context each step runs in, derived
	// from the one it is given, so that a tracer's spans reach what the
	// step does: the run (its context is the one events carry), each model
	// call (the provider's request), each tool body (what the body starts,
	// through an instrumented HTTP client, say). Nested in order: the
	// first bundle's context is the outermost. Package loop/otel sets it.
	StepContext func(ctx context.Context, step Step) context.Context

	// PrepareNextTurn runs after every completed turn and may replace the
	// conversation, the model or the reasoning level for the next one.
	// Bundles run in order; each update is applied before the next bundle
	// sees the turn (its Conversation then the updated one).
	PrepareNextTurn func(ctx context.Context, turn Turn) (TurnUpdate, error)
	// ShouldStopAfterTurn ends the run gracefully after the turn when it
	// returns true; the queue is not polled then. Every bundle's hook is
	// called, in order, after every PrepareNextTurn; the run stops if any
	// returned true.
	ShouldStopAfterTurn func(ctx context.Context, turn Turn) bool

	// OnEvent sees every event of the run, in order, before the handler
	// given to Run, with the context the run's events carry. Bundles are
	// called in order. It may be called from a tool body's goroutine, but
	// never concurrently within one run; a panic is logged and the run
	// goes on, to end with an error saying so.
	OnEvent events.Handler
}

// Step is a step of a run, for Hooks.StepContext.
type Step struct {
	Kind StepKind
	// Model is the model of the run or of the model call.
	Model providers.Model
	// Call is the tool call, for a StepTool.
	Call providers.ToolCall
}

// StepKind says which step a Step is.
type StepKind int

// The kinds of steps.
const (
	StepRun   StepKind = iota // the whole run, from agent_start to agent_end
	StepModel                 // one model call
	StepTool                  // one tool body
)

// BeforeCall is what the policy hook (Hooks.BeforeToolCall) sees of a
// call whose arguments passed the tool's checks.
type BeforeCall struct {
	// Assistant is the message that made the call.
	Assistant providers.AssistantMessage
	// Call is the tool call as the model sent it.
	Call providers.ToolCall
	// Args is a copy of the checked (coerced, validated) arguments:
	// changing it has no effect. Read a struct tool's arguments with
	// tools.Decode; return replacement arguments in BeforeResult.Args.
	Args map[string]any
	// Conversation is the run's conversation at this point.
	Conversation Conversation
}

// BeforeResult is the policy hook's decision. The zero value allows the
// call.
type BeforeResult struct {
	// Block refuses the call; the model receives Reason as an error result.
	Block bool
	// Reason is the text the model sees; empty means
	// "Tool execution was blocked".
	Reason string
	// Terminate marks a blocked call's result as asking the run to stop.
	Terminate bool
	// Args, when not nil, replaces the arguments. They go through the
	// tool's checks again before the body runs; arguments that fail them
	// fail the call.
	Args map[string]any
}

// AfterCall is what the after-call hook (Hooks.AfterToolCall) sees of a
// call whose body ran.
type AfterCall struct {
	// Assistant is the message that made the call.
	Assistant providers.AssistantMessage
	// Call is the tool call as the model sent it.
	Call providers.ToolCall
	// Args is a copy of the arguments the body received.
	Args map[string]any
	// Result and IsError are the body's outcome.
	Result  tools.Result
	IsError bool
	// Conversation is the run's conversation at this point.
	Conversation Conversation
}

// AfterResult overrides parts of a result; nil fields keep the original.
type AfterResult struct {
	Content   []providers.Content
	Details   any
	IsError   *bool
	Terminate *bool
	Usage     *providers.Usage
}

// Turn describes a completed turn to PrepareNextTurn and
// ShouldStopAfterTurn.
type Turn struct {
	// Message is the turn's assistant message.
	Message providers.AssistantMessage
	// ToolResults are its tool results, in call order.
	ToolResults []providers.ToolResultMessage
	// Conversation is the run's conversation, already holding the turn's
	// messages.
	Conversation Conversation
	// NewMessages is what the run would return if it ended now.
	NewMessages []providers.Message
}

// TurnUpdate changes the run for the next turn; nil fields keep the
// current value.
type TurnUpdate struct {
	Conversation *Conversation
	Model        *providers.Model
	Reasoning    *string
}

// StandardMessages is the usual ConvertToLLM: it keeps user, assistant and
// tool-result messages and drops everything else (an application's own
// message types). It returns messages itself when there is nothing to drop.
func StandardMessages(_ context.Context, messages []providers.Message) ([]providers.Message, error) {
	keep := func(m providers.Message) bool {
		switch m.Role() {
		case providers.RoleUser, providers.RoleAssistant, providers.RoleToolResult:
			return true
		}
		return false
	}
	for i, m := range messages {
		if keep(m) {
			continue
		}
		out := append(make([]providers.Message, 0, len(messages)-1), messages[:i]...)
		for _, m := range messages[i+1:] {
			if keep(m) {
				out = append(out, m)
			}
		}
		return out, nil
	}
	return messages, nil
}
