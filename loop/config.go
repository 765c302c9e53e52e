package loop

import (
	"context"
	"time"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// Context is what a run works on: the system prompt, the transcript so far
// and the tools the model may call.
type Context struct {
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
	// Options are the request options (max tokens, temperature, ...).
	// Options.APIKey is the key used when GetAPIKey is nil or returns "".
	Options providers.Options

	// GetAPIKey resolves the API key before every model call, so that
	// short-lived keys can be refreshed.
	GetAPIKey func(ctx context.Context, provider string) (string, error)
	// TransformContext rewrites the transcript for one request only (to
	// prune or inject); the result is not written back.
	TransformContext func(ctx context.Context, messages []providers.Message) ([]providers.Message, error)
	// ConvertToLLM turns the transcript into the messages a provider
	// understands, dropping or translating custom messages. It runs after
	// TransformContext, before every model call. Nil passes messages
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
	// ToolTimeout bounds each tool body that has no Timeout of its own; 0
	// means no limit. A body that outlives its timeout gets an error result
	// and its late result is discarded.
	ToolTimeout time.Duration
	// MaxResultBytes caps the text of one tool result sent back to the
	// model; a larger result becomes an error result saying so. 0 means
	// DefaultMaxResultBytes, negative means no cap.
	MaxResultBytes int
	// MaxArgumentBytes caps the argument text of one streamed tool call; a
	// call beyond it is refused before validation. 0 means
	// DefaultMaxArgumentBytes, negative means no cap.
	MaxArgumentBytes int

	// BeforeToolCall is the policy gate. It runs after validation and may
	// block the call or replace its arguments (which are then validated
	// again). It may run on any goroutine but never concurrently with
	// itself within one run.
	BeforeToolCall func(ctx context.Context, call BeforeToolCall) (BeforeResult, error)
	// AfterToolCall sees every executed call's result and may override
	// parts of it. In parallel mode it runs on the goroutine of the call's
	// body, concurrently with other calls.
	AfterToolCall func(ctx context.Context, call AfterToolCall) (AfterResult, error)

	// PrepareNextTurn runs after every completed turn and may replace the
	// context, the model or the reasoning level for the next one.
	PrepareNextTurn func(ctx context.Context, turn Turn) (TurnUpdate, error)
	// ShouldStopAfterTurn ends the run gracefully after the turn when it
	// returns true; steering and follow-up messages are not polled then.
	ShouldStopAfterTurn func(ctx context.Context, turn Turn) bool
}

// The default resource caps.
const (
	DefaultMaxResultBytes   = 1 << 20 // 1 MiB of text per tool result
	DefaultMaxArgumentBytes = 1 << 20 // 1 MiB of argument JSON per call
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

// BeforeToolCall is what the policy hook sees.
type BeforeToolCall struct {
	// Assistant is the message that made the call.
	Assistant providers.AssistantMessage
	// Call is the tool call as the model sent it.
	Call providers.ToolCall
	// Args is a deep copy of the validated, coerced arguments: changing it
	// has no effect. Return replacement arguments in BeforeResult.Args.
	Args any
	// Context is the run's context at this point.
	Context Context
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
	// Args, when not nil, replaces the arguments. They are validated again
	// before the body runs; invalid replacements fail the call.
	Args any
}

// AfterToolCall is what the after-call hook sees.
type AfterToolCall struct {
	Assistant providers.AssistantMessage
	Call      providers.ToolCall
	// Args are the arguments the body received (a copy).
	Args    any
	Result  tools.Result
	IsError bool
	Context Context
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
	// Context is the run's context, already holding the turn's messages.
	Context Context
	// NewMessages is what the run would return if it ended now.
	NewMessages []providers.Message
}

// TurnUpdate changes the run for the next turn; nil fields keep the
// current value.
type TurnUpdate struct {
	Context   *Context
	Model     *providers.Model
	Reasoning *string
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
