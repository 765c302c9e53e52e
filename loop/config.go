package loop

import (
	"context"
	"time"

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

// Config configures a run. Provider and Model are required; every hook is
// optional. Hooks are called on the run's goroutine unless noted, with the
// run's context.
type Config struct {
	// Provider streams the model's responses.
	Provider providers.Provider
	// Model is the model each request names.
	Model providers.Model
	// RequestOptions are the request options (max tokens, temperature,
	// reasoning effort, the argument cap). RequestOptions.APIKey is the key
	// used when GetAPIKey is nil or returns "".
	RequestOptions providers.RequestOptions

	// GetAPIKey resolves the API key before every model call, so that
	// short-lived keys can be refreshed.
	GetAPIKey func(ctx context.Context, provider string) (string, error)
	// TransformMessages rewrites the transcript for one request only (to
	// prune or inject); the result is not written back.
	TransformMessages func(ctx context.Context, messages []providers.Message) ([]providers.Message, error)
	// ConvertToLLM turns the transcript into the messages a provider
	// understands, dropping or translating custom messages. It runs after
	// TransformMessages, before every model call. Nil passes messages
	// through unchanged.
	ConvertToLLM func(ctx context.Context, messages []providers.Message) ([]providers.Message, error)

	// SteeringMessages is polled before the first model call and after
	// every turn; what it returns enters the transcript before the next
	// model call.
	SteeringMessages func(ctx context.Context) []providers.Message
	// FollowUpMessages is polled when the run would otherwise end; what it
	// returns starts another turn.
	FollowUpMessages func(ctx context.Context) []providers.Message

	// ToolExecution is tools.Parallel (the default) or tools.Sequential. A
	// batch also runs sequentially when any tool it calls asks for it.
	ToolExecution tools.Mode
	// MaxParallelTools bounds how many tool bodies run at once; 0 means no
	// limit.
	MaxParallelTools int
	// MaxToolCalls bounds the tool calls of one assistant message: the
	// calls past it are refused with a message saying so, and none of them
	// runs. 0 means DefaultMaxToolCalls, negative means no limit.
	MaxToolCalls int
	// MaxTurns bounds the model calls of one run. A run that reaches it
	// with tool results still to answer ends with an error message (stop
	// reason error; the error is ErrMaxTurns) after the turn's results are
	// stored; a run whose model is done ends as usual. 0 means no limit.
	MaxTurns int
	// ToolSources supply tools that may change during a run (an MCP
	// server's, say), offered beside the conversation's Tools. The loop
	// reads them before each model call, never in the middle of a batch,
	// and publishes an events.ToolsChanged when the set changed since the
	// run's last call. A source's tool named like a tool of the
	// conversation (or of an earlier source) is left out, and named in
	// that event's Hidden (before the first model call too).
	ToolSources []tools.Source
	// ToolTimeout bounds each tool body that has no Timeout of its own; 0
	// means no limit. A body that outlives its timeout gets an error result
	// and its late result is discarded.
	ToolTimeout time.Duration
	// MaxResultBytes caps the content of one tool result sent back to the
	// model, every kind of block counted at its size as sent (text, an
	// image's encoded data). A result whose text passes it becomes an error
	// result saying so; images that do not fit beside the rest are each
	// replaced by OmittedImageText. Details larger than the cap are dropped.
	// It holds for every executed call's result (the body's, an error
	// result, one AfterToolCall rewrote) and the body's progress reports; a
	// refusal's text past it is cut to head and tail. 0 means
	// DefaultMaxResultBytes, negative means no cap. (The cap on a call's
	// arguments is a request option: RequestOptions.MaxArgumentBytes.)
	MaxResultBytes int

	// BeforeToolCall is the policy gate. It runs after validation and may
	// block the call or replace its arguments (which are then validated
	// again). It may run on any goroutine but never concurrently with
	// itself within one run.
	BeforeToolCall func(ctx context.Context, call BeforeCall) (BeforeResult, error)
	// AfterToolCall sees every executed call's result and may override
	// parts of it. In parallel mode it runs on the goroutine of the call's
	// body, concurrently with other calls.
	AfterToolCall func(ctx context.Context, call AfterCall) (AfterResult, error)

	// Output, when not nil, asks every model call for its answer as JSON
	// fitting a schema, from providers that offer it natively
	// (providers.StructuredOutput). agent.Ask sets it.
	Output *providers.OutputFormat

	// Compactor decides what of a long conversation each request carries
	// (package loop/compact: trim, summarise, shorten old results). It runs
	// before each model call, before TransformMessages; what it stores (a
	// summary) joins the transcript, what it did is an events.Compacted.
	// nil sends the whole transcript.
	Compactor Compactor
	// MaxRunTokens and MaxRunCost bound what one run may spend: the tokens
	// of its model calls (input, cache and output) and their cost in
	// dollars (from the model's prices). A run that reaches one with tool
	// results still to answer ends after they are stored, with an error
	// message (ErrTokenBudget, ErrCostBudget); 0 means no bound.
	MaxRunTokens int
	MaxRunCost   float64

	// StepContext, when set, gives the loop the context each step runs in,
	// derived from the one it is given, so that a tracer's spans reach
	// what the step does: the run (its context is the one events carry),
	// each model call (the provider's request), each tool body (what the
	// body starts, through an instrumented HTTP client, say). Package
	// loop/otel sets it.
	StepContext func(ctx context.Context, step Step) context.Context

	// PrepareNextTurn runs after every completed turn and may replace the
	// conversation, the model or the reasoning level for the next one.
	PrepareNextTurn func(ctx context.Context, turn Turn) (TurnUpdate, error)
	// ShouldStopAfterTurn ends the run gracefully after the turn when it
	// returns true; steering and follow-up messages are not polled then.
	ShouldStopAfterTurn func(ctx context.Context, turn Turn) bool
}

// Step is a step of a run, for Config.StepContext.
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

// The defaults of Config's limits.
const (
	// DefaultMaxResultBytes is the default cap on a tool result's content.
	DefaultMaxResultBytes = 1 << 20
	// DefaultMaxToolCalls is the default cap on one message's tool calls.
	DefaultMaxToolCalls = 128
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

// BeforeCall is what the policy hook (Config.BeforeToolCall) sees of a
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

// AfterCall is what the after-call hook (Config.AfterToolCall) sees of a
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
