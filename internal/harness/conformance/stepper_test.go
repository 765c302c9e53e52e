package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// scenarios loads every scenario of testdata.
func scenarios(t *testing.T) map[string]Scenario {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios (%v)", err)
	}
	out := make(map[string]Scenario, len(files))
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var s Scenario
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		out[strings.TrimSuffix(filepath.Base(file), ".json")] = s
	}
	return out
}

// differs compares a produced trace with the golden one by the suite's
// rule (Compare), as TestConformance does.
func differs(t *testing.T, name string, s Scenario, trace []any) string {
	t.Helper()
	var got []json.RawMessage
	for _, line := range trace {
		b, err := marshal(line)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, b)
	}
	want, err := readLines(filepath.Join("testdata", "golden", name+".jsonl"))
	if err != nil {
		t.Fatalf("golden trace: %v", err)
	}
	return Compare(s, want, got)
}

// TestConformanceStepped plays every scenario under the Stepper, whose
// coroutines run one at a time in an order drawn from a seed, on a virtual
// clock, and compares each trace with the golden one by the same rule as
// the normal runner.
func TestConformanceStepped(t *testing.T) {
	for name, s := range scenarios(t) {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			for seed := range uint64(4) {
				rt := NewStepper(seed)
				trace, err := PlayStepped(s, rt, nil)
				rt.Close()
				if err != nil {
					t.Fatalf("seed %d: play: %v", seed, err)
				}
				if diff := differs(t, name, s, trace); diff != "" {
					t.Fatalf("seed %d: %s: trace differs from the reference at %s", seed, s.About, diff)
				}
				if _, live := rt.Started(); live != 0 {
					t.Fatalf("seed %d: %d coroutines left after Close", seed, live)
				}
			}
		})
	}
}

// TestSteppedLoopOwnsNothing plays every scenario under the Stepper and,
// at every event, looks at every goroutine of the process: none was
// started by the loop (or an errgroup, or a timer), none waits on a
// channel, a select or a sleep in the loop's own code, and every message's
// timestamp is the virtual clock's. Not parallel: it reads the whole
// process's goroutines.
func TestSteppedLoopOwnsNothing(t *testing.T) {
	defer goleak.VerifyNone(t)
	buf := make([]byte, 1<<20)
	parallel := 0
	for name, s := range scenarios(t) {
		rt := NewStepper(7)
		var problems []string
		observe := func(e events.Event) {
			n := runtime.Stack(buf, true)
			problems = append(problems, ownedByLoop(string(buf[:n]))...)
			for _, ts := range stamps(e) {
				if at := time.UnixMilli(ts); at.Before(Epoch) || at.After(rt.Now()) {
					problems = append(problems, fmt.Sprintf("%T stamped %v, not by the virtual clock (%v)", e, at.UTC(), rt.Now()))
				}
			}
		}
		if _, err := PlayStepped(s, rt, observe); err != nil {
			t.Fatalf("%s: play: %v", name, err)
		}
		rt.Close()
		if len(problems) > 0 {
			t.Errorf("%s: %d problems; the first: %s", name, len(problems), problems[0])
		}
		if started, _ := rt.Started(); started > 1 {
			parallel++
		}
	}
	if parallel < 5 {
		t.Fatalf("only %d scenarios ran bodies through the Stepper", parallel)
	}
}

// ownedByLoop lists the goroutines of a runtime.Stack dump that the loop
// started, or that wait on a channel, a select or a timer in the loop's
// own code.
func ownedByLoop(dump string) []string {
	var out []string
	for _, g := range strings.Split(dump, "\n\n") {
		header, frames, _ := strings.Cut(g, "\n")
		for _, l := range strings.Split(frames, "\n") {
			if rest, ok := strings.CutPrefix(l, "created by "); ok {
				for _, owner := range []string{"github.com/agentloop/agentloop/loop.", "golang.org/x/sync/errgroup.", "time.goFunc"} {
					if strings.HasPrefix(rest, owner) {
						out = append(out, "a goroutine created by "+rest)
					}
				}
			}
		}
		waits := false
		for _, state := range []string{"[chan receive", "[chan send", "[select", "[sleep", "[sync.Cond.Wait", "[sync.WaitGroup.Wait"} {
			waits = waits || strings.Contains(header, state)
		}
		if !waits {
			continue
		}
		// The first frame outside the runtime and the standard library's
		// synchronisation says whose wait it is.
		for _, l := range strings.Split(frames, "\n") {
			if l == "" || strings.HasPrefix(l, "\t") || strings.HasPrefix(l, "runtime.") || strings.HasPrefix(l, "sync.") ||
				strings.HasPrefix(l, "time.") || strings.HasPrefix(l, "internal/") {
				continue
			}
			if strings.HasPrefix(l, "github.com/agentloop/agentloop/loop.") {
				out = append(out, "a goroutine waits in "+l+" "+header)
			}
			break
		}
	}
	return out
}

// stamps returns the timestamps of the messages an event carries.
func stamps(e events.Event) []int64 {
	var out []int64
	add := func(m providers.Message) {
		switch m := m.(type) {
		case providers.AssistantMessage:
			out = append(out, m.Timestamp)
		case providers.ToolResultMessage:
			out = append(out, m.Timestamp)
		case providers.SummaryMessage:
			out = append(out, m.Timestamp)
		}
	}
	switch e := e.(type) {
	case events.MessageStart:
		add(e.Message)
	case events.MessageEnd:
		add(e.Message)
	case events.MessageUpdate:
		if e.Stream.Message != nil {
			add(*e.Stream.Message)
		}
	case events.TurnEnd:
		add(e.Message)
		for _, r := range e.ToolResults {
			add(r)
		}
	}
	return out
}

// TestSteppedLimitsAndTimeouts runs the loop under the Stepper with the
// bounds that need a clock or a fan-out: MaxParallelTools, a tool's own
// timeout on a body that ignores cancellation, Limits.ToolTimeout on one
// that gives up, and the default timeout. Virtual time says how long each
// took.
func TestSteppedLimitsAndTimeouts(t *testing.T) {
	defer goleak.VerifyNone(t)
	type outcome struct {
		how  events.Outcome
		text string
		at   time.Duration // virtual time at the end event
	}
	tests := []struct {
		name     string
		calls    int
		limits   loop.Limits
		timeout  time.Duration // the tool's own
		sleep    time.Duration
		obstin   bool // the body ignores cancellation
		want     []outcome
		mostOnce int
	}{
		{name: "max parallel", calls: 5, limits: loop.Limits{MaxParallelTools: 2}, sleep: 10 * time.Millisecond, mostOnce: 2,
			want: []outcome{{events.OutcomeOK, "slept", 10 * time.Millisecond}, {events.OutcomeOK, "slept", 10 * time.Millisecond},
				{events.OutcomeOK, "slept", 20 * time.Millisecond}, {events.OutcomeOK, "slept", 20 * time.Millisecond},
				{events.OutcomeOK, "slept", 30 * time.Millisecond}}},
		{name: "all at once", calls: 3, sleep: 10 * time.Millisecond, mostOnce: 3,
			want: []outcome{{events.OutcomeOK, "slept", 10 * time.Millisecond}, {events.OutcomeOK, "slept", 10 * time.Millisecond},
				{events.OutcomeOK, "slept", 10 * time.Millisecond}}},
		{name: "own timeout, body ignores it", calls: 2, timeout: 50 * time.Millisecond, sleep: time.Hour, obstin: true, mostOnce: 2,
			want: []outcome{{events.OutcomeTimeout, "Tool nap timed out after 50ms", 50 * time.Millisecond},
				{events.OutcomeTimeout, "Tool nap timed out after 50ms", 50 * time.Millisecond}}},
		{name: "limits timeout, body gives up", calls: 1, limits: loop.Limits{ToolTimeout: time.Second}, sleep: time.Hour,
			want: []outcome{{events.OutcomeTimeout, "Tool nap timed out after 1s", time.Second}}},
		{name: "default timeout", calls: 2, sleep: time.Hour, mostOnce: 2,
			want: []outcome{{events.OutcomeTimeout, "Tool nap timed out after " + loop.DefaultToolTimeout.String(), loop.DefaultToolTimeout},
				{events.OutcomeTimeout, "Tool nap timed out after " + loop.DefaultToolTimeout.String(), loop.DefaultToolTimeout}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := NewStepper(3)
			nap, err := tools.NewJSON(tools.Config{Name: "nap", Description: "sleeps", Timeout: tt.timeout},
				json.RawMessage(`{"type":"object"}`), func(ctx context.Context, _ map[string]any) (tools.Result, error) {
					wait := ctx
					if tt.obstin {
						wait = context.Background()
					}
					if !rt.Sleep(wait, tt.sleep) {
						return tools.Result{}, ctx.Err()
					}
					return tools.TextResult("slept"), nil
				})
			if err != nil {
				t.Fatal(err)
			}
			var content []providers.Content
			for i := range tt.calls {
				content = append(content, faux.Call(fmt.Sprint("c", i), "nap", map[string]any{}))
			}
			model := faux.New(providers.AssistantMessage{Content: content}, providers.AssistantMessage{Content: []providers.Content{faux.Text("done")}})
			var got []outcome
			cfg := loop.Config{Provider: model, Model: providers.Model{ID: "faux", API: "faux", Provider: "faux"}, Limits: tt.limits, Runtime: rt}
			msgs, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("go")}, loop.Conversation{Tools: []*tools.Tool{nap}}, cfg,
				func(_ context.Context, e events.Event) {
					if end, ok := e.(events.ToolExecutionEnd); ok {
						got = append(got, outcome{end.Outcome, end.Result.Text(), rt.Now().Sub(Epoch)})
					}
				})
			rt.Close()
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Fatalf("ends:\n got %v\nwant %v", got, tt.want)
			}
			if tt.mostOnce > 0 && rt.MostAtOnce() != tt.mostOnce {
				t.Fatalf("at most %d bodies ran at once, want %d", rt.MostAtOnce(), tt.mostOnce)
			}
			if _, live := rt.Started(); live != 0 {
				t.Fatalf("%d coroutines left after Close", live)
			}
			for _, m := range msgs {
				var ts int64
				switch m := m.(type) {
				case providers.AssistantMessage:
					ts = m.Timestamp
				case providers.ToolResultMessage:
					ts = m.Timestamp
				default:
					continue
				}
				if at := time.UnixMilli(ts); at.Before(Epoch) || at.After(rt.Now()) {
					t.Fatalf("%s stamped %v, not by the virtual clock", m.Role(), at.UTC())
				}
			}
		})
	}
}

// TestOwnedByLoopSeesTheDefaultRuntime shows that the checks of
// TestSteppedLoopOwnsNothing can fail: under the default runtime the
// bodies of a parallel batch run on the loop's worker goroutines, the
// run's goroutine waits for them in the loop, and messages carry the wall
// clock.
func TestOwnedByLoopSeesTheDefaultRuntime(t *testing.T) {
	s := scenarios(t)["03-parallel-order"]
	buf := make([]byte, 1<<20)
	var goroutines, clock int
	_, err := play(s, nil, func(e events.Event) {
		n := runtime.Stack(buf, true)
		goroutines += len(ownedByLoop(string(buf[:n])))
		for _, ts := range stamps(e) {
			if time.UnixMilli(ts).After(Epoch.Add(24 * time.Hour)) {
				clock++
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if goroutines == 0 || clock == 0 {
		t.Fatalf("the default runtime went unseen: %d goroutine findings, %d wall-clock stamps", goroutines, clock)
	}
}
