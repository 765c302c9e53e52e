package loop

import (
	"context"
	"errors"
	"runtime"
	"testing"
	"time"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// TestForgottenLimitsEnd: a run that forgets MaxTurns or its token budget
// ends at the documented default; NoLimit turns each off.
func TestForgottenLimitsEnd(t *testing.T) {
	const turns = DefaultMaxTurns + 20
	for _, tt := range []struct {
		name   string
		limits Limits
		usage  providers.Usage
		err    error // nil: the run ends as the model does
		calls  int   // model calls made
	}{
		{"turns: the default", Limits{}, providers.Usage{}, ErrMaxTurns, DefaultMaxTurns},
		{"turns: NoLimit", Limits{MaxTurns: NoLimit}, providers.Usage{}, nil, turns + 1},
		{"tokens: the default", Limits{MaxTurns: NoLimit}, providers.Usage{Input: DefaultMaxRunTokens / 4}, ErrTokenBudget, 4},
		{"tokens: NoLimit", Limits{MaxTurns: NoLimit, MaxRunTokens: NoLimit}, providers.Usage{Input: DefaultMaxRunTokens / 4}, nil, turns + 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := faux.New()
			for i := range turns {
				r := faux.Reply(faux.Call("c"+string(rune('a'+i%26))+string(rune('0'+i/26)), "echo", map[string]any{"label": "x"}))
				r.Usage = tt.usage
				p.Push(r)
			}
			p.Push(faux.Reply(faux.Text("done")))
			cfg := cfgFor(p)
			cfg.Limits = tt.limits
			_, err := Run(context.Background(), []providers.Message{providers.NewUserText("go")},
				Conversation{Tools: []*tools.Tool{echoTool(t, "echo", nil)}}, cfg, nil)
			if (tt.err == nil) != (err == nil) || tt.err != nil && !errors.Is(err, tt.err) {
				t.Fatalf("err %v, want %v", err, tt.err)
			}
			if got := len(p.Requests()); got != tt.calls {
				t.Fatalf("%d model calls, want %d", got, tt.calls)
			}
		})
	}
}

// TestDefaultToolTimeout: a body whose tool has no timeout and whose run
// sets none runs under DefaultToolTimeout, on the run's own goroutine (the
// default costs no goroutine); NoLimit (the run's or the tool's) leaves
// its context without a deadline, and the tool's own timeout wins.
func TestDefaultToolTimeout(t *testing.T) {
	for _, tt := range []struct {
		name       string
		own, limit time.Duration
		want       time.Duration // 0: no deadline
		slack      time.Duration
	}{
		{"the default", 0, 0, DefaultToolTimeout, DefaultToolTimeout / 16},
		{"the run's NoLimit", 0, NoLimit, 0, 0},
		{"the tool's NoLimit", NoLimit, time.Hour, 0, 0},
		{"the run's", 0, time.Hour, time.Hour, 0},
		{"the tool's own wins", 2 * time.Hour, time.Hour, 2 * time.Hour, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var deadline time.Time
			var ok bool
			var before, during int
			var start time.Time
			w := toolWith(t, tools.Config{Name: "w", Timeout: tt.own}, func(ctx context.Context, _ labelArgs) (tools.Result, error) {
				during = runtime.NumGoroutine()
				deadline, ok = ctx.Deadline()
				return tools.TextResult("ok"), nil
			})
			p := faux.New(faux.Reply(faux.Call("a", "w", map[string]any{"label": "x"})), faux.Reply())
			before, start = runtime.NumGoroutine(), time.Now()
			runLoop(t, context.Background(), p, []*tools.Tool{w}, Config{Limits: Limits{ToolTimeout: tt.limit}})
			if ok != (tt.want > 0) {
				t.Fatalf("deadline %v, want one: %v", deadline, tt.want > 0)
			}
			if tt.want > 0 {
				if left := deadline.Sub(start); left < tt.want || left > tt.want+tt.slack+time.Minute {
					t.Fatalf("the body had %v, want %v (+%v)", left, tt.want, tt.slack)
				}
			}
			if tt.own == 0 && tt.limit == 0 && during != before {
				t.Fatalf("%d goroutines in the body, %d before the run", during, before)
			}
		})
	}
}

// TestDeadlinesShareAndRenew: one context serves the bodies that start
// while its deadline is at least d away; once it has passed, the next body
// gets a new one that gives it at least d.
func TestDeadlinesShareAndRenew(t *testing.T) {
	var shared deadlines
	defer shared.release()
	if a, b := shared.get(context.Background(), time.Hour), shared.get(context.Background(), time.Hour); a != b {
		t.Fatal("two bodies started together got two contexts")
	}
	var dl deadlines
	defer dl.release()
	const d = 16 * time.Millisecond
	a := dl.get(context.Background(), d)
	<-a.Done() // its deadline passed
	if !errors.Is(a.Err(), context.DeadlineExceeded) {
		t.Fatalf("err %v", a.Err())
	}
	start := time.Now()
	c := dl.get(context.Background(), d)
	if c == a {
		t.Fatal("a body got a context whose deadline has passed")
	}
	// (Not c.Err(): on a loaded machine c's own 16 ms may pass before the
	// check; its deadline, measured from before it was made, is the proof.)
	if dead, _ := c.Deadline(); dead.Sub(start) < d {
		t.Fatalf("a new body has %v, want at least %v", dead.Sub(start), d)
	}
	if len(dl.live) != 1 {
		t.Fatalf("%d contexts kept, want the live one", len(dl.live))
	}
}
