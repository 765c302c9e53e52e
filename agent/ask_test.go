package agent

import (
	"context"
	"errors"
	"github.com/agentloop/agentloop/loop"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

type invoice struct {
	Number string  `json:"number"`
	Total  float64 `json:"total"`
	Paid   bool    `json:"paid"`
}

var answerText = func(s string) providers.AssistantMessage { return faux.Reply(faux.Text(s)) }

// TestAsk: typed answers through the final-answer tool and natively, on
// the first try and after corrections; the model may use tools first.
func TestAsk(t *testing.T) {
	good := map[string]any{"number": "INV-7", "total": 120.5, "paid": true}
	lookup := tools.Must(tools.New(tools.Config{Name: "lookup"}, func(context.Context, struct {
		ID string `json:"id"`
	}) (string, error) {
		return "INV-7, 120.50, paid", nil
	}))
	tests := []struct {
		name    string
		mode    AskMode
		replies []providers.AssistantMessage
		turns   int // model calls
	}{
		{"tool, first try", AskTool, []providers.AssistantMessage{faux.Reply(faux.Call("a", "final_answer", good))}, 1},
		{"tool, corrected", AskTool, []providers.AssistantMessage{
			faux.Reply(faux.Call("a", "final_answer", map[string]any{"number": "INV-7", "total": "lots"})),
			faux.Reply(faux.Call("b", "final_answer", good))}, 2},
		{"tool, after a tool call", AskTool, []providers.AssistantMessage{
			faux.Reply(faux.Call("l", "lookup", map[string]any{"id": "7"})),
			faux.Reply(faux.Call("a", "final_answer", map[string]any{"number": "INV-7", "total": "120.5", "paid": "true"}))}, 2},
		{"tool, prose first", AskTool, []providers.AssistantMessage{answerText("It is INV-7."), faux.Reply(faux.Call("a", "final_answer", good))}, 2},
		{"native, first try", AskNative, []providers.AssistantMessage{answerText(`{"number":"INV-7","total":120.5,"paid":true}`)}, 1},
		{"native, fenced and coerced", AskNative, []providers.AssistantMessage{answerText("```json\n{\"number\":\"INV-7\",\"total\":\"120.5\",\"paid\":true}\n```")}, 1},
		{"native, corrected", AskNative, []providers.AssistantMessage{answerText(`{"number":"INV-7","total":"lots"}`),
			answerText(`{"number":"INV-7","total":120.5,"paid":true}`)}, 2},
		{"native, cut off then whole", AskNative, []providers.AssistantMessage{cut(`{"number":"INV-7","total":120.5,"paid":true}`),
			answerText(`{"number":"INV-7","total":120.5,"paid":true}`)}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := faux.New(tt.replies...)
			a := newAgent(p, lookup)
			got, err := AskWith[invoice](context.Background(), a, "Which invoice?", AskOptions{Mode: tt.mode})
			if err != nil {
				t.Fatal(err)
			}
			if got != (invoice{Number: "INV-7", Total: 120.5, Paid: true}) {
				t.Fatalf("answer %+v", got)
			}
			if n := len(p.Requests()); n != tt.turns {
				t.Fatalf("%d model calls, want %d", n, tt.turns)
			}
		})
	}
}

// cut is an answer cut off at the token limit, whose JSON parses anyway.
func cut(text string) providers.AssistantMessage {
	m := answerText(text)
	m.StopReason = providers.StopReasonLength
	return m
}

// TestAskGivesUp: answers that never fit end in an AnswerError with the
// last answer and its violations, after MaxAttempts; each correction
// request carries the preflight's listing.
func TestAskGivesUp(t *testing.T) {
	bad := map[string]any{"number": 7}
	p := faux.New(faux.Reply(faux.Call("a", "final_answer", bad)), faux.Reply(faux.Call("b", "final_answer", bad)), faux.Reply(faux.Call("c", "final_answer", bad)),
		faux.Reply(faux.Text("never asked")))
	a := newAgent(p)
	_, err := AskWith[invoice](context.Background(), a, "Which invoice?", AskOptions{Mode: AskTool, MaxAttempts: 3})
	var ae *AnswerError
	if !errors.As(err, &ae) || ae.Attempts != 3 || !strings.Contains(ae.Problem, `Validation failed for tool "final_answer"`) ||
		!strings.Contains(ae.Problem, "  - total: ") || ae.Answer != `{"number":7}` {
		t.Fatalf("error %v (%+v)", err, ae)
	}
	if len(p.Requests()) != 3 {
		t.Fatalf("%d model calls", len(p.Requests()))
	}
	// Natively, the correction carries the listing too.
	n := faux.New(answerText(`{"number":"x"}`), answerText(`{"number":"x"}`))
	_, err = AskWith[invoice](context.Background(), newAgent(n), "?", AskOptions{Mode: AskNative, MaxAttempts: 2})
	reqs := n.Requests()
	fix := reqs[1].Messages[len(reqs[1].Messages)-1].(providers.UserMessage).Text()
	if !errors.As(err, &ae) || !strings.Contains(fix, "does not fit the schema") || !strings.Contains(fix, "  - total: ") {
		t.Fatalf("native: %v; the correction %q", err, fix)
	}
	if reqs[0].Output == nil || !strings.Contains(string(reqs[0].Output.Schema), `"total"`) {
		t.Fatalf("the native request carries no schema: %+v", reqs[0].Output)
	}
}

// TestAskKeepsTheCallersBundles: Ask adds a bundle of its own; the
// caller's hooks still see every turn, and the caller's options are the
// same after it.
func TestAskKeepsTheCallersBundles(t *testing.T) {
	p := faux.New(faux.Reply(faux.Call("a", "final_answer", map[string]any{"number": "INV-7"})),
		faux.Reply(faux.Call("b", "final_answer", map[string]any{"number": "INV-7", "total": 1.0, "paid": true})))
	turns := 0
	a := mustNew(Options{Config: loop.Config{Provider: p, Model: model, Hooks: []loop.Hooks{{
		ShouldStopAfterTurn: func(context.Context, loop.Turn) bool { turns++; return false },
	}}}})
	if _, err := AskWith[invoice](context.Background(), a, "Which invoice?", AskOptions{Mode: AskTool}); err != nil {
		t.Fatal(err)
	}
	if turns != 2 {
		t.Fatalf("the caller's hook saw %d turns, want 2", turns)
	}
	a.mu.Lock()
	n := len(a.opts.Hooks)
	a.mu.Unlock()
	if n != 1 {
		t.Fatalf("the agent's options hold %d bundles after Ask, want 1", n)
	}
}
