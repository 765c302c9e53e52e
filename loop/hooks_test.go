package loop

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// TestBeforeHooksCompose: policy bundles run in order, each sees the
// arguments as the previous one left them (checked again, so coerced), and
// the first "no" wins: later hooks are not called for that call.
func TestBeforeHooksCompose(t *testing.T) {
	type seen struct{ hook, call, label string }
	for _, tt := range []struct {
		name    string
		first   BeforeResult
		firstEr error
		want    []seen // what the hooks saw, in order
		body    string // the label the body received, "" when it did not run
		outcome events.Outcome
		text    string
	}{
		{"rewrite seen by the next", BeforeResult{Args: map[string]any{"label": 7}},
			nil, []seen{{"1", "a", "orig"}, {"2", "a", "7"}, {"3", "a", "7"}}, "7", events.OutcomeOK, "echo 7"},
		{"first block wins", BeforeResult{Block: true, Reason: "no by 1"},
			nil, []seen{{"1", "a", "orig"}}, "", events.OutcomeBlocked, "no by 1"},
		{"a failed recheck ends the chain", BeforeResult{Args: map[string]any{"label": []any{}}},
			nil, []seen{{"1", "a", "orig"}}, "", events.OutcomeInvalid, "Validation failed"},
		{"an error ends the chain", BeforeResult{},
			errors.New("policy down"), []seen{{"1", "a", "orig"}}, "", events.OutcomeBlocked, "policy down"},
		{"all allow", BeforeResult{},
			nil, []seen{{"1", "a", "orig"}, {"2", "a", "orig"}, {"3", "a", "orig"}}, "orig", events.OutcomeOK, "echo orig"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var got []seen
			hook := func(name string, res BeforeResult, err error) Hooks {
				return Hooks{BeforeToolCall: func(_ context.Context, c BeforeCall) (BeforeResult, error) {
					got = append(got, seen{name, c.Call.ID, fmt.Sprint(c.Args["label"])})
					return res, err
				}}
			}
			var ran string
			echo := echoTool(t, "echo", func(_ context.Context, a labelArgs) (tools.Result, error) {
				ran = a.Label
				return tools.TextResult("echo " + a.Label), nil
			})
			p := faux.New(faux.Reply(faux.Call("a", "echo", map[string]any{"label": "orig"})), faux.Reply())
			cfg := Config{Hooks: []Hooks{hook("1", tt.first, tt.firstEr), {}, hook("2", BeforeResult{}, nil), hook("3", BeforeResult{}, nil)}}
			msgs, rec := runLoop(t, context.Background(), p, []*tools.Tool{echo}, cfg)
			if !slices.Equal(got, tt.want) {
				t.Errorf("hooks saw %v, want %v", got, tt.want)
			}
			if ran != tt.body {
				t.Errorf("body got %q, want %q", ran, tt.body)
			}
			if ends := rec.ends(); len(ends) != 1 || ends[0].Outcome != tt.outcome {
				t.Errorf("ends %+v", ends)
			}
			if tr := msgs[2].(providers.ToolResultMessage); !strings.Contains(tr.Text(), tt.text) {
				t.Errorf("result %q, want %q in it", tr.Text(), tt.text)
			}
		})
	}
}

// TestAfterHooksCompose: after-call bundles run in order, each seeing the
// result as the previous one left it; an error ends the chain.
func TestAfterHooksCompose(t *testing.T) {
	var seen []string
	after := func(name string, err error) Hooks {
		return Hooks{AfterToolCall: func(_ context.Context, c AfterCall) (AfterResult, error) {
			text := providers.TextOf(c.Result.Content)
			seen = append(seen, name+":"+text)
			if err != nil {
				return AfterResult{}, err
			}
			return AfterResult{Content: []providers.Content{providers.Text{Text: text + "+" + name}}}, nil
		}}
	}
	p := faux.New(faux.Reply(faux.Call("a", "echo", map[string]any{"label": "x"})), faux.Reply())
	msgs, _ := runLoop(t, context.Background(), p, []*tools.Tool{echoTool(t, "echo", nil)},
		Config{Hooks: []Hooks{after("1", nil), after("2", nil), after("3", errors.New("after failed")), after("4", nil)}})
	if want := []string{"1:echo x", "2:echo x+1", "3:echo x+1+2"}; !slices.Equal(seen, want) {
		t.Fatalf("hooks saw %q, want %q", seen, want)
	}
	if tr := msgs[2].(providers.ToolResultMessage); !tr.IsError || tr.Text() != "after failed" {
		t.Fatalf("result %q (error %v)", tr.Text(), tr.IsError)
	}
}

type ctxKey string

// TestTurnHooksCompose: step contexts nest (the first bundle's outermost),
// transforms then conversions chain, the first non-empty key wins,
// PrepareNextTurn updates are seen by the next bundle, every
// ShouldStopAfterTurn is called and any true stops, and OnEvent hooks see
// every event in order before the run's handler.
func TestTurnHooksCompose(t *testing.T) {
	var log []string
	note := func(s string) { log = append(log, s) }
	bundle := func(name string, key string, stop bool) Hooks {
		return Hooks{
			StepContext: func(ctx context.Context, s Step) context.Context {
				if s.Kind != StepModel {
					return ctx
				}
				outer, _ := ctx.Value(ctxKey("outer")).(string)
				note("step " + name + " inside " + outer)
				return context.WithValue(ctx, ctxKey("outer"), name)
			},
			TransformMessages: func(_ context.Context, ms []providers.Message) ([]providers.Message, error) {
				note("transform " + name)
				return ms, nil
			},
			ConvertToLLM: func(_ context.Context, ms []providers.Message) ([]providers.Message, error) {
				note("convert " + name)
				return ms, nil
			},
			GetAPIKey: func(context.Context, string) (string, error) {
				note("key " + name)
				return key, nil
			},
			PrepareNextTurn: func(_ context.Context, turn Turn) (TurnUpdate, error) {
				note("prepare " + name + " sees " + turn.Conversation.SystemPrompt)
				c := turn.Conversation
				c.SystemPrompt = name
				return TurnUpdate{Conversation: &c}, nil
			},
			ShouldStopAfterTurn: func(context.Context, Turn) bool {
				note("stop? " + name)
				return stop
			},
			OnEvent: func(_ context.Context, e events.Event) {
				if e.Type() == events.TypeAgentEnd {
					note("event " + name)
				}
			},
		}
	}
	p := faux.New(faux.Reply(faux.Call("a", "echo", map[string]any{"label": "x"})), faux.Reply())
	cfg := cfgFor(p)
	cfg.Hooks = []Hooks{bundle("1", "", false), bundle("2", "key-2", true), bundle("3", "key-3", false)}
	_, err := Run(context.Background(), []providers.Message{providers.NewUserText("go")}, Conversation{SystemPrompt: "0",
		Tools: []*tools.Tool{echoTool(t, "echo", nil)}}, cfg, func(_ context.Context, e events.Event) {
		if e.Type() == events.TypeAgentEnd {
			note("handler")
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"transform 1", "transform 2", "transform 3", "convert 1", "convert 2", "convert 3",
		"key 1", "key 2", // the first non-empty key wins
		"step 1 inside ", "step 2 inside 1", "step 3 inside 2",
		"prepare 1 sees 0", "prepare 2 sees 1", "prepare 3 sees 2",
		"stop? 1", "stop? 2", "stop? 3", // all asked; 2 said stop
		"event 1", "event 2", "event 3", "handler",
	}
	if !slices.Equal(log, want) {
		t.Fatalf("calls:\n%s\nwant:\n%s", strings.Join(log, "\n"), strings.Join(want, "\n"))
	}
	if reqs := p.Requests(); len(reqs) != 1 || reqs[0].APIKey != "key-2" {
		t.Fatalf("requests %d, key %q", len(reqs), reqs[0].APIKey)
	}
}

// TestToolPanicStack: a panicking body's stack reaches the developer (the
// log, at Error, and the result's details) and not the model, which reads
// "panic: VALUE".
func TestToolPanicStack(t *testing.T) {
	var logs bytes.Buffer
	bad := echoTool(t, "bad", func(context.Context, labelArgs) (tools.Result, error) {
		var m map[string]int
		//lint:ignore SA5000 the panic is what the test is about
		m["x"] = 1 // assignment to entry in nil map
		return tools.Result{}, nil
	})
	p := faux.New(faux.Reply(faux.Call("a", "bad", map[string]any{"label": "x"})), faux.Reply())
	cfg := Config{Logger: slog.New(slog.NewTextHandler(&logs, nil))}
	msgs, _ := runLoop(t, context.Background(), p, []*tools.Tool{bad}, cfg)
	tr := msgs[2].(providers.ToolResultMessage)
	if !tr.IsError || tr.Text() != "panic: assignment to entry in nil map" {
		t.Fatalf("the model reads %q", tr.Text())
	}
	details, _ := tr.Details.(map[string]any)
	stack, _ := details["stack"].(string)
	if !strings.Contains(stack, "TestToolPanicStack") || details["panic"] != "assignment to entry in nil map" {
		t.Fatalf("details %v", tr.Details)
	}
	for _, want := range []string{"level=ERROR", "tool=bad", "call=a", "TestToolPanicStack"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, logs.String())
		}
	}
}

// TestHookPanicIsLogged: a panicking policy hook refuses the call with
// "panic: VALUE" and its stack goes to the log.
func TestHookPanicIsLogged(t *testing.T) {
	var logs bytes.Buffer
	p := faux.New(faux.Reply(faux.Call("a", "echo", map[string]any{"label": "x"})), faux.Reply())
	cfg := Config{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Hooks: []Hooks{{
		BeforeToolCall: func(context.Context, BeforeCall) (BeforeResult, error) { panic("policy exploded") },
	}}}
	msgs, _ := runLoop(t, context.Background(), p, []*tools.Tool{echoTool(t, "echo", nil)}, cfg)
	if tr := msgs[2].(providers.ToolResultMessage); tr.Text() != "panic: policy exploded" {
		t.Fatalf("result %q", tr.Text())
	}
	if !strings.Contains(logs.String(), "hook=BeforeToolCall") || !strings.Contains(logs.String(), "TestHookPanicIsLogged") {
		t.Fatalf("log:\n%s", logs.String())
	}
}

// TestStepContextFaults: a StepContext hook that panics or returns nil
// never escapes: at a tool step (on a body's goroutine, in a parallel
// batch) the call gets an error result, at the model step the run fails,
// at the run step Run returns an error before any event.
func TestStepContextFaults(t *testing.T) {
	for _, fault := range []string{"panic", "nil"} {
		hook := func(at StepKind) Hooks {
			return Hooks{StepContext: func(ctx context.Context, s Step) context.Context {
				if s.Kind != at {
					return ctx
				}
				if fault == "panic" {
					panic("step exploded")
				}
				return nil
			}}
		}
		t.Run(fault+" at a tool step", func(t *testing.T) {
			p := faux.New(faux.Reply(faux.Call("a", "echo", map[string]any{"label": "1"}), faux.Call("b", "echo", map[string]any{"label": "2"})), faux.Reply())
			msgs, _ := runLoop(t, context.Background(), p, []*tools.Tool{echoTool(t, "echo", nil)}, Config{Logger: slog.New(slog.DiscardHandler), Hooks: []Hooks{hook(StepTool)}})
			for _, m := range msgs[2:4] {
				if tr := m.(providers.ToolResultMessage); !tr.IsError || !strings.HasPrefix(tr.Text(), "loop: StepContext: ") {
					t.Fatalf("result %q", tr.Text())
				}
			}
		})
		t.Run(fault+" at the model step", func(t *testing.T) {
			p := faux.New(faux.Reply())
			cfg := cfgFor(p)
			cfg.Logger, cfg.Hooks = slog.New(slog.DiscardHandler), []Hooks{hook(StepModel)}
			rec := &recorder{}
			_, err := Run(context.Background(), []providers.Message{providers.NewUserText("go")}, Conversation{}, cfg, rec.sink)
			var re *RunError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), "StepContext") || rec.types()[len(rec.types())-1] != "agent_end" {
				t.Fatalf("err %v, events %v", err, rec.types())
			}
		})
		t.Run(fault+" at the run step", func(t *testing.T) {
			cfg := cfgFor(faux.New(faux.Reply()))
			cfg.Logger, cfg.Hooks = slog.New(slog.DiscardHandler), []Hooks{hook(StepRun)}
			rec := &recorder{}
			if _, err := Run(context.Background(), []providers.Message{providers.NewUserText("go")}, Conversation{}, cfg, rec.sink); err == nil || len(rec.all()) != 0 {
				t.Fatalf("err %v, %d events", err, len(rec.all()))
			}
		})
	}
}
