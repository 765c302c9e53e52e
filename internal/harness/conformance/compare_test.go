package conformance

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCompareOrderRules pins the ordering rules of "How traces are
// compared" on small traces: which swaps inside a batch are tolerated.
func TestCompareOrderRules(t *testing.T) {
	parallel := Scenario{Tools: []ScriptedTool{
		{Name: "fast"}, {Name: "near", DelayMs: 15}, {Name: "slow", DelayMs: 50},
	}}
	sequential := parallel
	sequential.ToolExecution = "sequential"
	start := func(id, name string) string {
		return `{"type":"tool_execution_start","toolCallId":"` + id + `","toolName":"` + name + `","args":{}}`
	}
	update := func(id, text string) string {
		return `{"type":"tool_execution_update","toolCallId":"` + id + `","text":"` + text + `"}`
	}
	end := func(id, name, text string) string {
		return `{"type":"tool_execution_end","toolCallId":"` + id + `","toolName":"` + name + `","isError":false,"text":"` + text + `"}`
	}
	executed := func(ids ...string) string {
		var calls []string
		for _, id := range ids {
			calls = append(calls, `{"toolCallId":"`+id+`","args":{}}`)
		}
		return `{"type":"executed","calls":[` + strings.Join(calls, ",") + `]}`
	}
	const closing = `{"type":"message_start","role":"toolResult","toolCallId":"a"}`
	for _, tc := range []struct {
		name      string
		s         Scenario
		want, got []string
		ok        bool
	}{
		{"identical", parallel,
			[]string{start("a", "fast"), start("b", "slow"), end("a", "fast", "ok"), end("b", "slow", "ok"), closing, executed("a", "b")},
			[]string{start("a", "fast"), start("b", "slow"), end("a", "fast", "ok"), end("b", "slow", "ok"), closing, executed("a", "b")},
			true},
		{"instant ends swap", parallel,
			[]string{start("a", "fast"), start("b", "fast"), end("a", "fast", "ok"), end("b", "fast", "ok"), closing, executed("a", "b")},
			[]string{start("a", "fast"), start("b", "fast"), end("b", "fast", "ok"), end("a", "fast", "ok"), closing, executed("a", "b")},
			true},
		{"ends under 20 ms apart swap", parallel,
			[]string{start("a", "fast"), start("b", "near"), end("a", "fast", "ok"), end("b", "near", "ok"), closing, executed("a", "b")},
			[]string{start("a", "fast"), start("b", "near"), end("b", "near", "ok"), end("a", "fast", "ok"), closing, executed("a", "b")},
			true},
		{"an update and an instant end swap", parallel,
			[]string{start("a", "fast"), start("b", "fast"), update("a", "u"), end("b", "fast", "ok"), end("a", "fast", "ok"), closing, executed("a", "b")},
			[]string{start("a", "fast"), start("b", "fast"), end("b", "fast", "ok"), update("a", "u"), end("a", "fast", "ok"), closing, executed("a", "b")},
			true},
		{"ends 50 ms apart keep order", parallel,
			[]string{start("a", "fast"), start("b", "slow"), end("a", "fast", "ok"), end("b", "slow", "ok"), closing, executed("a", "b")},
			[]string{start("a", "fast"), start("b", "slow"), end("b", "slow", "ok"), end("a", "fast", "ok"), closing, executed("a", "b")},
			false},
		{"an update before a slow end keeps order", parallel,
			[]string{start("a", "slow"), start("b", "fast"), update("b", "u"), end("a", "slow", "ok"), end("b", "fast", "ok"), closing, executed("a", "b")},
			[]string{start("a", "slow"), start("b", "fast"), end("a", "slow", "ok"), update("b", "u"), end("b", "fast", "ok"), closing, executed("a", "b")},
			false},
		{"one call's events keep order", parallel,
			[]string{start("a", "fast"), update("a", "u"), end("a", "fast", "ok"), closing, executed("a")},
			[]string{start("a", "fast"), end("a", "fast", "ok"), update("a", "u"), closing, executed("a")},
			false},
		{"starts keep order", parallel,
			[]string{start("a", "fast"), start("b", "fast"), end("a", "fast", "ok"), end("b", "fast", "ok"), closing, executed("a", "b")},
			[]string{start("b", "fast"), start("a", "fast"), end("a", "fast", "ok"), end("b", "fast", "ok"), closing, executed("a", "b")},
			false},
		{"a refused call's end is not a body's", parallel,
			[]string{start("a", "fast"), end("a", "fast", "no"), start("b", "fast"), end("b", "fast", "ok"), closing, executed("b")},
			[]string{start("a", "fast"), start("b", "fast"), end("a", "fast", "no"), end("b", "fast", "ok"), closing, executed("b")},
			false},
		{"sequential batches keep order", sequential,
			[]string{start("a", "fast"), start("b", "fast"), end("a", "fast", "ok"), end("b", "fast", "ok"), closing, executed("a", "b")},
			[]string{start("a", "fast"), start("b", "fast"), end("b", "fast", "ok"), end("a", "fast", "ok"), closing, executed("a", "b")},
			false},
		{"a different text", parallel,
			[]string{start("a", "fast"), end("a", "fast", "ok"), closing, executed("a")},
			[]string{start("a", "fast"), end("a", "fast", "ko"), closing, executed("a")},
			false},
		{"JSON texts compare parsed", parallel,
			[]string{start("a", "fast"), `{"type":"tool_execution_end","toolCallId":"a","toolName":"fast","isError":false,"text":"{\"x\":1,\"y\":2}"}`, closing, executed("a")},
			[]string{start("a", "fast"), `{"type":"tool_execution_end","toolCallId":"a","toolName":"fast","isError":false,"text":"{\"y\":2.0, \"x\":1}"}`, closing, executed("a")},
			true},
		{"a missing line", parallel,
			[]string{start("a", "fast"), end("a", "fast", "ok"), closing, executed("a")},
			[]string{start("a", "fast"), end("a", "fast", "ok"), closing},
			false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			diff := Compare(tc.s, raw(tc.want), raw(tc.got))
			if (diff == "") != tc.ok {
				t.Fatalf("Compare = %q, want agreement %v", diff, tc.ok)
			}
		})
	}
}

func raw(lines []string) []json.RawMessage {
	out := make([]json.RawMessage, len(lines))
	for i, l := range lines {
		out[i] = json.RawMessage(l)
	}
	return out
}

// TestCompareValidationTexts: a validation error is compared by its first
// line, its paths and the arguments it echoes; the wording may differ.
func TestCompareValidationTexts(t *testing.T) {
	text := func(listing string) string {
		b, _ := json.Marshal("Validation failed for tool \"t\":\n" + listing + "\n\nReceived arguments:\n{\"a\":1}")
		return `{"type":"tool_execution_end","toolCallId":"a","toolName":"t","isError":true,"text":` + string(b) + `}`
	}
	want := raw([]string{text("  - a: must be string\n  - b: must have required property 'b'")})
	if d := Compare(Scenario{}, want, raw([]string{text("  - b: is required\n  - a: expected a string")})); d != "" {
		t.Errorf("other wording, same paths: %s", d)
	}
	if d := Compare(Scenario{}, want, raw([]string{text("  - a: must be string")})); d == "" {
		t.Error("a path missing was accepted")
	}
}
