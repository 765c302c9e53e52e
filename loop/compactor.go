package loop

import (
	"context"
	"fmt"
	"time"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
)

// A Compactor decides what of a long conversation the next request
// carries, so that it fits the model's context window (Config.Compactor;
// package loop/compact has strategies). What it sends must be a request
// every provider's server accepts: it starts with a user message, and
// never separates a tool call from its result.
type Compactor interface {
	Compact(ctx context.Context, in CompactInput) (CompactOutput, error)
}

// CompactInput is what a Compactor decides from.
type CompactInput struct {
	// Transcript is the run's conversation as it stands; read-only.
	Transcript []providers.Message
	Model      providers.Model
	Provider   providers.Provider // for a request of its own (a summary)
	Options    providers.RequestOptions
	// APIKey is the key of the model call being compacted for (a
	// GetAPIKey hook's; empty for the provider's own): a request of the
	// compactor's own sets it as its providers.Request.APIKey.
	APIKey       string
	SystemPrompt string
	Tools        []providers.ToolSpec
	// Now is the run's clock (Runtime.Now) for what the Compactor stamps
	// (a summary's Timestamp, its own request's Time); the zero time, under
	// the default runtime, means the wall clock (providers.Now).
	Now time.Time
}

// CompactOutput is what a Compactor decided.
type CompactOutput struct {
	// Send is what the request carries instead of the transcript; nil
	// sends the transcript.
	Send []providers.Message
	// Store, when not nil, joins the transcript first (a
	// providers.SummaryMessage, say), published like any message.
	Store providers.Message
	// Event, when not nil, says what was done; the loop publishes it.
	Event *events.Compacted
}

// The causes of a run stopped by a budget (RunError.Err).
var (
	ErrTokenBudget = fmt.Errorf("loop: the run reached Limits.MaxRunTokens")
	ErrCostBudget  = fmt.Errorf("loop: the run reached Limits.MaxRunCost")
)

// compact runs the Compactor, storing and publishing what it asks, and
// returns the messages to send.
func (r *run) compact(msgs []providers.Message, key string) ([]providers.Message, error) {
	out, err := r.cfg.Compactor.Compact(r.ctx, CompactInput{Transcript: msgs, Model: r.cfg.Model, Provider: r.cfg.Provider,
		Options: r.cfg.RequestOptions, APIKey: key, SystemPrompt: r.c.SystemPrompt, Tools: r.specs, Now: r.nowTime()})
	if err != nil {
		return nil, fmt.Errorf("loop: Compactor: %w", err)
	}
	if out.Store != nil {
		r.emit(events.MessageStart{Message: out.Store})
		r.emit(events.MessageEnd{Message: out.Store})
		r.append(out.Store)
	}
	if out.Event != nil {
		r.emit(*out.Event)
	}
	if out.Send == nil {
		return r.c.Messages[:len(r.c.Messages):len(r.c.Messages)], nil
	}
	return out.Send, nil
}

// spend adds a response's usage to the run's, and reports the budget it
// reached, if any.
func (r *run) spend(u providers.Usage) error {
	r.spent.Input += u.Input + u.CacheRead + u.CacheWrite
	r.spent.Output += u.Output
	r.spent.Cost.Total += u.Cost.Total
	maxTokens, maxCost := limit(r.cfg.Limits.MaxRunTokens, DefaultMaxRunTokens), r.cfg.Limits.MaxRunCost
	switch tokens := r.spent.Input + r.spent.Output; {
	case tokens >= maxTokens:
		return fmt.Errorf("%w (%d tokens of %d)", ErrTokenBudget, tokens, maxTokens)
	case maxCost > 0 && r.spent.Cost.Total >= maxCost:
		return fmt.Errorf("%w ($%.4f of $%.4f)", ErrCostBudget, r.spent.Cost.Total, maxCost)
	}
	return nil
}
