package loop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

// hooks are a run's bundles, each kind of hook gathered in bundle order
// with the nil ones left out, so that a run with no hook of a kind pays
// nothing for it.
type hooks struct {
	getAPIKey  []func(context.Context, string) (string, error)
	transform  []func(context.Context, []providers.Message) ([]providers.Message, error)
	convert    []func(context.Context, []providers.Message) ([]providers.Message, error)
	before     []func(context.Context, BeforeCall) (BeforeResult, error)
	after      []func(context.Context, AfterCall) (AfterResult, error)
	step       []func(context.Context, Step) context.Context
	prepare    []func(context.Context, Turn) (TurnUpdate, error)
	shouldStop []func(context.Context, Turn) bool
	onEvent    []events.Handler
}

func gather(bundles []Hooks) hooks {
	var h hooks
	for _, b := range bundles {
		if b.GetAPIKey != nil {
			h.getAPIKey = append(h.getAPIKey, b.GetAPIKey)
		}
		if b.TransformMessages != nil {
			h.transform = append(h.transform, b.TransformMessages)
		}
		if b.ConvertToLLM != nil {
			h.convert = append(h.convert, b.ConvertToLLM)
		}
		if b.BeforeToolCall != nil {
			h.before = append(h.before, b.BeforeToolCall)
		}
		if b.AfterToolCall != nil {
			h.after = append(h.after, b.AfterToolCall)
		}
		if b.StepContext != nil {
			h.step = append(h.step, b.StepContext)
		}
		if b.PrepareNextTurn != nil {
			h.prepare = append(h.prepare, b.PrepareNextTurn)
		}
		if b.ShouldStopAfterTurn != nil {
			h.shouldStop = append(h.shouldStop, b.ShouldStopAfterTurn)
		}
		if b.OnEvent != nil {
			h.onEvent = append(h.onEvent, b.OnEvent)
		}
	}
	return h
}

// stepContext nests the bundles' step contexts, the first outermost. A
// hook that panics or returns nil is an error: the run cannot start, the
// model call fails the run, the tool call gets an error result. (A tool's
// step runs on its body's goroutine, where a panic must not escape.)
func (r *run) stepContext(ctx context.Context, s Step) (_ context.Context, err error) {
	if len(r.h.step) == 0 {
		return ctx, nil
	}
	defer func() {
		if err != nil {
			err = fmt.Errorf("loop: StepContext: %w", err)
		}
	}()
	defer r.recoverHook("StepContext", &err)
	for _, f := range r.h.step {
		if ctx = f(ctx, s); ctx == nil {
			return nil, errors.New("a hook returned a nil context")
		}
	}
	return ctx, nil
}

// apiKey asks the GetAPIKey hooks in order for a key; "" when none has one.
func (r *run) apiKey() (string, error) {
	for _, f := range r.h.getAPIKey {
		key, err := f(r.ctx, r.cfg.Model.Provider)
		if err != nil {
			return "", fmt.Errorf("loop: GetAPIKey: %w", err)
		}
		if key != "" {
			return key, nil
		}
	}
	return "", nil
}

// shape runs the TransformMessages hooks, then the ConvertToLLM hooks,
// each on the previous one's result.
func (r *run) shape(msgs []providers.Message) ([]providers.Message, error) {
	var err error
	for _, f := range r.h.transform {
		if msgs, err = f(r.ctx, msgs); err != nil {
			return nil, fmt.Errorf("loop: TransformMessages: %w", err)
		}
	}
	for _, f := range r.h.convert {
		if msgs, err = f(r.ctx, msgs); err != nil {
			return nil, fmt.Errorf("loop: ConvertToLLM: %w", err)
		}
	}
	return msgs, nil
}

// shouldStop calls every ShouldStopAfterTurn hook and reports whether any
// asked to stop.
func (r *run) shouldStop(turn Turn) bool {
	stop := false
	for _, f := range r.h.shouldStop {
		stop = f(r.ctx, turn) || stop
	}
	return stop
}

// logger is the run's logger.
func (r *run) logger() *slog.Logger {
	if r.cfg.Logger != nil {
		return r.cfg.Logger
	}
	return slog.Default()
}

// recoverHook turns a panic in a hook into the error "panic: VALUE" in
// *err, and logs the panic with its stack.
func (r *run) recoverHook(hook string, err *error) {
	if p := recover(); p != nil {
		*err = fmt.Errorf("panic: %v", p)
		r.logger().Error("loop: a hook panicked", "hook", hook, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
	}
}

// panicked logs a panic in a tool body, and returns the details its error
// result carries: the panic and the stack, for the developer (the model
// reads only "panic: VALUE").
func (r *run) panicked(c *call, pe *tools.PanicError) map[string]any {
	r.logger().Error("loop: a tool panicked", "tool", c.tc.Name, "call", c.tc.ID,
		"panic", fmt.Sprint(pe.Value), "stack", string(pe.Stack))
	return map[string]any{"panic": fmt.Sprint(pe.Value), "stack": string(pe.Stack)}
}
