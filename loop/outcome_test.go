package loop

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// TestBodyOutcomes: how a body that gives up ends. A body that returns
// because the run was cancelled ends aborted, not failed, and the model
// still reads the body's own words; a body whose own timeout passed ends
// timeout, even when the run is cancelled too; a body that fails on its
// own while the run goes on ends failed.
func TestBodyOutcomes(t *testing.T) {
	boom := errors.New("disk on fire")
	// waitCancel returns the run's cancellation once the body's context
	// is done; cancel is called as the body starts.
	waitCancel := func(ret func(ctx context.Context) error) tools.Func[labelArgs, tools.Result] {
		return func(ctx context.Context, _ labelArgs) (tools.Result, error) {
			cancelRun(ctx)()
			<-ctx.Done()
			return tools.Result{}, ret(ctx)
		}
	}
	tests := []struct {
		name    string
		cfg     tools.Config
		body    tools.Func[labelArgs, tools.Result]
		cancel  bool // the body cancels the run
		outcome events.Outcome
		text    string
	}{
		{"cancelled, ctx error", tools.Config{}, waitCancel(func(ctx context.Context) error { return ctx.Err() }), true, events.OutcomeAborted, "context canceled"},
		{"cancelled, ctx error, with a timeout", tools.Config{Timeout: time.Hour}, waitCancel(func(ctx context.Context) error { return ctx.Err() }), true, events.OutcomeAborted, "context canceled"},
		{"cancelled, wrapped", tools.Config{}, waitCancel(func(ctx context.Context) error { return errors.Join(errors.New("fetch: stopped"), ctx.Err()) }), true, events.OutcomeAborted, "fetch: stopped\ncontext canceled"},
		{"cancelled, its own error", tools.Config{}, waitCancel(func(context.Context) error { return errors.New("gave up") }), true, events.OutcomeAborted, "gave up"},
		{"cancelled, an error result", tools.Config{}, waitCancel(func(context.Context) error { return tools.ErrorResult(tools.TextResult("partial: 3 of 9")) }), true, events.OutcomeAborted, "partial: 3 of 9"},
		{"own timeout, honoured", tools.Config{Timeout: 10 * time.Millisecond}, func(ctx context.Context, _ labelArgs) (tools.Result, error) {
			<-ctx.Done()
			return tools.Result{}, ctx.Err()
		}, false, events.OutcomeTimeout, "Tool w timed out after 10ms"},
		{"own error, run going on", tools.Config{}, func(context.Context, labelArgs) (tools.Result, error) { return tools.Result{}, boom }, false, events.OutcomeFailed, "disk on fire"},
		{"own error result, run going on", tools.Config{}, func(context.Context, labelArgs) (tools.Result, error) {
			return tools.Result{}, tools.ErrorResult(tools.TextResult("no such file"))
		}, false, events.OutcomeFailed, "no such file"},
		{"panic, run going on", tools.Config{}, func(context.Context, labelArgs) (tools.Result, error) { panic("bug") }, false, events.OutcomeFailed, "panic: bug"},
	}
	for _, tt := range tests {
		for _, mode := range []tools.Mode{tools.Parallel, tools.Sequential} {
			t.Run(tt.name+"/"+mode.String(), func(t *testing.T) {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				ctx = context.WithValue(ctx, cancelKey{}, cancel)
				cfg := tt.cfg
				cfg.Name = "w"
				w := toolWith(t, cfg, tt.body)
				p := faux.New(faux.Reply(faux.Call("a", "w", map[string]any{"label": "1"})), faux.Reply(faux.Text("done")))
				msgs, rec := runLoop(t, ctx, p, []*tools.Tool{w}, Config{ToolExecution: mode})
				ends := rec.ends()
				if len(ends) != 1 || ends[0].Outcome != tt.outcome || !ends[0].IsError {
					t.Fatalf("ends %+v, want one error ending %s", ends, tt.outcome)
				}
				if tr := msgs[2].(providers.ToolResultMessage); !tr.IsError || tr.Text() != tt.text {
					t.Fatalf("the model reads %q, want %q", tr.Text(), tt.text)
				}
				if tt.cancel != (ctx.Err() != nil) {
					t.Fatalf("run cancelled: %v", ctx.Err())
				}
			})
		}
	}
}

// TestTimeoutAfterCancel: a body that ignores cancellation is let go when
// its own timeout passes, and ends timeout even though the run was
// cancelled meanwhile.
func TestTimeoutAfterCancel(t *testing.T) {
	release := make(chan struct{})
	exited := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := toolWith(t, tools.Config{Name: "w", Timeout: 20 * time.Millisecond}, func(ctx context.Context, _ labelArgs) (tools.Result, error) {
		defer close(exited)
		cancel()
		<-release
		return tools.TextResult("late"), nil
	})
	p := faux.New(faux.Reply(faux.Call("a", "w", map[string]any{"label": "1"})), faux.Reply())
	msgs, rec := runLoop(t, ctx, p, []*tools.Tool{w}, Config{})
	close(release)
	<-exited
	if ends := rec.ends(); len(ends) != 1 || ends[0].Outcome != events.OutcomeTimeout {
		t.Fatalf("ends %+v", ends)
	}
	if tr := msgs[2].(providers.ToolResultMessage); tr.Text() != "Tool w timed out after 20ms" {
		t.Fatalf("result %q", tr.Text())
	}
}

// TestRunDeadlineIsNoToolTimeout: a run whose own deadline passes while a
// body with a long timeout waits is cancelled: the call ends aborted, not
// timeout, and the model is not told the tool timed out.
func TestRunDeadlineIsNoToolTimeout(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	w := toolWith(t, tools.Config{Name: "w", Timeout: time.Hour}, func(ctx context.Context, _ labelArgs) (tools.Result, error) {
		<-ctx.Done()
		return tools.Result{}, ctx.Err()
	})
	p := faux.New(faux.Reply(faux.Call("a", "w", map[string]any{"label": "1"})), faux.Reply())
	msgs, rec := runLoop(t, ctx, p, []*tools.Tool{w}, Config{})
	if ends := rec.ends(); len(ends) != 1 || ends[0].Outcome != events.OutcomeAborted {
		t.Fatalf("ends %+v", ends)
	}
	// The body's words, or (on a machine so slow that the deadline passed
	// before the body started) the loop's.
	if tr := msgs[2].(providers.ToolResultMessage); tr.Text() != "context deadline exceeded" && tr.Text() != AbortedText {
		t.Fatalf("result %q", tr.Text())
	}
}

type cancelKey struct{}

// cancelRun returns the run's cancel function, which the test put in its
// context.
func cancelRun(ctx context.Context) context.CancelFunc {
	return ctx.Value(cancelKey{}).(context.CancelFunc)
}

// TestHookOutcomes: hooks do not turn a cancelled call into a failure. An
// after-call hook that passes IsError through keeps the body's outcome
// (aborted, timeout); a hook that gives up because the run was cancelled
// ends the call aborted, with its own words; one that fails while the run
// goes on is a failure (after) or a block (before).
func TestHookOutcomes(t *testing.T) {
	honour := func(ctx context.Context, _ labelArgs) (tools.Result, error) {
		<-ctx.Done()
		return tools.Result{}, ctx.Err()
	}
	cancelling := func(ctx context.Context, _ labelArgs) (tools.Result, error) {
		cancelRun(ctx)()
		<-ctx.Done()
		return tools.Result{}, ctx.Err()
	}
	fine := func(context.Context, labelArgs) (tools.Result, error) { return tools.TextResult("fine"), nil }
	passThrough := func(_ context.Context, c AfterCall) (AfterResult, error) {
		return AfterResult{IsError: &c.IsError}, nil
	}
	tests := []struct {
		name    string
		timeout time.Duration
		body    tools.Func[labelArgs, tools.Result]
		before  func(context.Context, BeforeCall) (BeforeResult, error)
		after   func(context.Context, AfterCall) (AfterResult, error)
		outcome events.Outcome
		text    string
	}{
		{"after passes a cancelled body's error through", 0, cancelling, nil, passThrough, events.OutcomeAborted, "context canceled"},
		{"after passes a timeout through", 10 * time.Millisecond, honour, nil, passThrough, events.OutcomeTimeout, "Tool w timed out after 10ms"},
		{"after gives up on the cancelled run", 0, fine, nil, func(ctx context.Context, _ AfterCall) (AfterResult, error) {
			cancelRun(ctx)()
			return AfterResult{}, ctx.Err()
		}, events.OutcomeAborted, "context canceled"},
		{"after fails, the run going on", 0, fine, nil, func(context.Context, AfterCall) (AfterResult, error) {
			return AfterResult{}, errors.New("audit log down")
		}, events.OutcomeFailed, "audit log down"},
		{"after makes an error ok", 0, cancelling, nil, func(context.Context, AfterCall) (AfterResult, error) {
			no := false
			return AfterResult{IsError: &no, Content: []providers.Content{providers.Text{Text: "stopped as asked"}}}, nil
		}, events.OutcomeOK, "stopped as asked"},
		{"before gives up on the cancelled run", 0, fine, func(ctx context.Context, _ BeforeCall) (BeforeResult, error) {
			cancelRun(ctx)()
			return BeforeResult{}, ctx.Err()
		}, nil, events.OutcomeAborted, "context canceled"},
		{"before fails, the run going on", 0, fine, func(context.Context, BeforeCall) (BeforeResult, error) {
			return BeforeResult{}, errors.New("policy server down")
		}, nil, events.OutcomeBlocked, "policy server down"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			ctx = context.WithValue(ctx, cancelKey{}, cancel)
			w := toolWith(t, tools.Config{Name: "w", Timeout: tt.timeout}, tt.body)
			p := faux.New(faux.Reply(faux.Call("a", "w", map[string]any{"label": "1"})), faux.Reply(faux.Text("done")))
			msgs, rec := runLoop(t, ctx, p, []*tools.Tool{w}, Config{Hooks: []Hooks{{BeforeToolCall: tt.before, AfterToolCall: tt.after}}})
			if ends := rec.ends(); len(ends) != 1 || ends[0].Outcome != tt.outcome {
				t.Fatalf("ends %+v, want %s", ends, tt.outcome)
			}
			if tr := msgs[2].(providers.ToolResultMessage); tr.Text() != tt.text {
				t.Fatalf("the model reads %q, want %q", tr.Text(), tt.text)
			}
		})
	}
}
