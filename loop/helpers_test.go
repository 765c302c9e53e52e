package loop

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// recorder is a sink that keeps every event.
type recorder struct {
	mu     sync.Mutex
	events []events.Event
}

func (r *recorder) sink(_ context.Context, e events.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) all() []events.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]events.Event(nil), r.events...)
}

func (r *recorder) types() []string {
	var out []string
	for _, e := range r.all() {
		if e.Type() != events.TypeMessageUpdate {
			out = append(out, string(e.Type()))
		}
	}
	return out
}

// ends returns the tool_execution_end events, in order.
func (r *recorder) ends() []events.ToolExecutionEnd {
	var out []events.ToolExecutionEnd
	for _, e := range r.all() {
		if end, ok := e.(events.ToolExecutionEnd); ok {
			out = append(out, end)
		}
	}
	return out
}

type labelArgs struct {
	Label string `json:"label"`
}

func echoTool(t testing.TB, name string, body tools.Func[labelArgs, tools.Result]) *tools.Tool {
	t.Helper()
	return toolWith(t, tools.Config{Name: name, Description: name}, body)
}

// toolWith is echoTool with a configuration of its own.
func toolWith(t testing.TB, cfg tools.Config, body tools.Func[labelArgs, tools.Result]) *tools.Tool {
	t.Helper()
	if body == nil {
		body = func(_ context.Context, a labelArgs) (tools.Result, error) {
			return tools.TextResult("echo " + a.Label), nil
		}
	}
	return tools.Must(tools.New(cfg, body))
}

func cfgFor(p providers.Provider) Config {
	return Config{Provider: p, Model: providers.Model{ID: "faux", Provider: "faux", API: "faux"}}
}

// runLoop runs the loop on the prompt "go" and fails the test on any error
// but a *RunError (a run that ended failed or aborted, which tests check
// through the messages).
func runLoop(t testing.TB, ctx context.Context, p providers.Provider, ts []*tools.Tool, cfg Config) ([]providers.Message, *recorder) {
	t.Helper()
	if cfg.Provider == nil {
		cfg.Provider = p
	}
	if cfg.Model.ID == "" {
		cfg.Model = cfgFor(p).Model
	}
	rec := &recorder{}
	msgs, err := Run(ctx, []providers.Message{providers.NewUserText("go")}, Conversation{Tools: ts}, cfg, rec.sink)
	var re *RunError
	if err != nil && !errors.As(err, &re) {
		t.Fatalf("Run: %v", err)
	}
	return msgs, rec
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// last returns the final message of a run.
func last(msgs []providers.Message) providers.Message { return msgs[len(msgs)-1] }

var _ = faux.New
