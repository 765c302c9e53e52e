package openai

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
	"github.com/agentloop/agentloop/tools"
)

type pathArgs struct {
	Path    string `json:"path"`
	Content string `json:"content,omitempty"`
}

// TestTruncatedCallThroughLoop: finish_reason length in the middle of a
// tool call's arguments; the loop runs no body and tells the model, whose
// next request carries the refusal.
func TestTruncatedCallThroughLoop(t *testing.T) {
	s := newServer(t, reply{fixture: "length-mid-args.sse"}, reply{fixture: "done-text.sse"})
	ran := false
	write := tools.Must(tools.New(tools.Config{Name: "write", Description: "Write a file"}, func(context.Context, pathArgs) (tools.Result, error) {
		ran = true
		return tools.TextResult("written"), nil
	}))
	msgs, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("write a.txt")},
		loop.Conversation{Tools: []*tools.Tool{write}}, loop.Config{Provider: s.provider(Options{}), Model: testModel}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ran {
		t.Fatal("a truncated call ran")
	}
	second := s.requests()[1]["messages"].([]any)
	toolMsg := second[2].(map[string]any)
	if toolMsg["role"] != "tool" || toolMsg["tool_call_id"] != "call_w" || !strings.Contains(toolMsg["content"].(string), "output token limit") {
		t.Fatalf("the model was not told: %v", toolMsg)
	}
	if last := msgs[len(msgs)-1].(providers.AssistantMessage); last.Text() != "All done." {
		t.Fatalf("last %q", last.Text())
	}
}

// TestAgentTwoTurns: a real agent over two model calls; the server checks
// that the tool results come back in call order with the right ids.
func TestAgentTwoTurns(t *testing.T) {
	s := newServer(t, reply{fixture: "tools-interleaved.sse"}, reply{fixture: "done-text.sse"})
	var checkErr error
	var mu sync.Mutex
	s.check = func(n int, body map[string]any) {
		if n != 1 {
			return
		}
		msgs := body["messages"].([]any)
		var got []string
		for _, m := range msgs {
			m := m.(map[string]any)
			if m["role"] == "tool" {
				got = append(got, fmt.Sprint(m["tool_call_id"], "=", m["content"]))
			}
		}
		asst := msgs[1].(map[string]any)
		calls := asst["tool_calls"].([]any)
		mu.Lock()
		defer mu.Unlock()
		if strings.Join(got, ",") != "call_a=read a.go,call_b=list src" || len(calls) != 2 {
			checkErr = fmt.Errorf("tool messages %v, calls %v", got, calls)
		}
	}
	read := tools.Must(tools.New(tools.Config{Name: "read", Description: "Read"}, func(_ context.Context, a pathArgs) (tools.Result, error) {
		return tools.TextResult("read " + a.Path), nil
	}))
	type dirArgs struct {
		Dir string `json:"dir"`
	}
	list := tools.Must(tools.New(tools.Config{Name: "list", Description: "List"}, func(_ context.Context, a dirArgs) (tools.Result, error) {
		return tools.TextResult("list " + a.Dir), nil
	}))
	a, err := agent.New(agent.Options{Config: loop.Config{Provider: s.provider(Options{}), Model: testModel}, Tools: []*tools.Tool{read, list}})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Prompt(context.Background(), providers.NewUserText("look around")); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if checkErr != nil {
		t.Fatal(checkErr)
	}
	if n := len(a.State().Messages); n != 5 {
		t.Fatalf("%d messages", n)
	}
}

// TestTranscriptRepair: a cancelled run's unanswered call gets a synthetic
// result, never-valid arguments go out as {}, and a result that answers no
// call is left out of the request.
func TestTranscriptRepair(t *testing.T) {
	cut := providers.ToolCall{ID: "c2", Name: "write", Arguments: map[string]any{"path": "half"}, Incomplete: true}
	msgs := []providers.Message{
		providers.NewUserText("go"),
		providers.AssistantMessage{Content: []providers.Content{
			providers.ToolCall{ID: "c1", Name: "read", Arguments: map[string]any{"path": "a"}}, cut}, StopReason: providers.StopReasonToolUse},
		providers.ToolResultMessage{ToolCallID: "c1", ToolName: "read", Content: []providers.Content{providers.Text{Text: "ok"}}},
		providers.AssistantMessage{StopReason: providers.StopReasonAborted, ErrorMessage: "Request was aborted"},
		providers.ToolResultMessage{ToolCallID: "zz", ToolName: "ghost", Content: []providers.Content{providers.Text{Text: "?"}}},
		providers.NewUserText("again"),
	}
	out := convertMessages("", testModel, msgs)
	var roles []string
	for _, m := range out {
		roles = append(roles, m.Role+":"+m.ToolCallID)
	}
	if got := strings.Join(roles, ","); got != "user:,assistant:,tool:c1,tool:c2,user:" {
		t.Fatalf("roles %s", got)
	}
	if out[1].ToolCalls[1].Function.Arguments != "{}" || out[1].ToolCalls[0].Function.Arguments != `{"path":"a"}` {
		t.Fatalf("arguments %+v", out[1].ToolCalls)
	}
	if out[3].Content != kit.MissingResultText {
		t.Fatalf("synthetic result %q", out[3].Content)
	}
	if out[4].Content != "again" {
		t.Fatalf("after the results: %q", out[4].Content)
	}
}

// TestAPIKeyNeverLeaks runs failing servers that echo the key and checks
// that it appears in no event, error, log line or saved session.
func TestAPIKeyNeverLeaks(t *testing.T) {
	const key = "sk-live-SECRET-abcdef123456"
	echo := `{"error":{"message":"Incorrect API key provided: ` + key + `","type":"invalid_request_error"}}`
	for _, rep := range []reply{
		{status: 401, body: echo},
		{status: 500, body: "upstream said: Bearer " + key},
		{status: 400, body: strings.Repeat("x", 290) + key}, // the key straddles the cut
		{status: 400, body: strings.Repeat("é", 140) + "Bearer " + key + strings.Repeat("y", 400)},
		{body: "data: {\"error\":{\"message\":\"bad key " + key + "\",\"type\":\"x\"}}\n\n"},
		{fixture: "malformed.sse"},
	} {
		s := newServer(t, rep)
		var logs bytes.Buffer
		var seen bytes.Buffer
		a, err := agent.New(agent.Options{
			Config: loop.Config{Provider: s.provider(Options{APIKey: key, HTTPOptions: providers.HTTPOptions{MaxRetries: -1}}), Model: testModel,
				Logger: slog.New(slog.NewTextHandler(&logs, nil))},
		})
		if err != nil {
			t.Fatal(err)
		}
		a.Subscribe(func(_ context.Context, e events.Event) {
			b, _ := events.Marshal(e)
			seen.Write(b)
		})
		err = a.Prompt(context.Background(), providers.NewUserText("hi"))
		var session bytes.Buffer
		_ = a.SaveSession(&session)
		all := seen.String() + logs.String() + session.String() + a.State().ErrorMessage + fmt.Sprint(err)
		for i := 0; i+8 <= len(key); i++ { // no 8 bytes of the key, anywhere
			if strings.Contains(all, key[i:i+8]) {
				t.Fatalf("the key leaked (%q): %s", key[i:i+8], all)
			}
		}
		if a.State().ErrorMessage == "" {
			t.Fatal("no error reported")
		}
		if s.auth[0] != "Bearer "+key {
			t.Fatal("the key was not sent")
		}
	}
}

// TestMalformedChunksNeverPanic feeds the stream parser arbitrary chunks.
func TestMalformedChunksNeverPanic(t *testing.T) {
	for _, body := range []string{
		"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":-5,\"function\":{\"arguments\":\"{\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n",
		"data: {\"choices\":null}\n\ndata: [DONE]\n\n",
		"data: []\n\n",
		"data: \"str\"\n\n",
		"event: ping\n\n: comment\n\ndata: {\"choices\":[]}\n\n",
	} {
		s := newServer(t, reply{body: body})
		m := final(stream(t, context.Background(), s.provider(Options{HTTPOptions: providers.HTTPOptions{MaxRetries: -1}}), nil))
		raw, _ := json.Marshal(m)
		if len(raw) == 0 {
			t.Fatal("no message")
		}
	}
}

// TestTruthfulRefusalsThroughLoop: arguments that arrive whole but are not
// an object, and arguments past the request's cap, reach the model as what
// they are (a validation error naming the root; the size and the limit),
// not as "not complete JSON".
func TestTruthfulRefusalsThroughLoop(t *testing.T) {
	call := func(i int, id, args string) string { return toolChunk(i, id, "write", args) }
	big := `{"path":"` + strings.Repeat("p", 3000) + `"}`
	body := sseChunk(`{"role":"assistant","content":""}`, "") + call(0, "arr", `[1, 2]`) +
		call(1, "big", big[:1500]) + call(1, "big", big[1500:]) + sseChunk(`{}`, "tool_calls") + "data: [DONE]\n\n"
	s := newServer(t, reply{body: body}, reply{fixture: "done-text.sse"})
	ran := false
	write := tools.Must(tools.New(tools.Config{Name: "write"}, func(context.Context, pathArgs) (string, error) {
		ran = true
		return "written", nil
	}))
	cfg := loop.Config{Provider: s.provider(Options{}), Model: testModel, RequestOptions: providers.RequestOptions{MaxArgumentBytes: 1000}}
	if _, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("go")}, loop.Conversation{Tools: []*tools.Tool{write}}, cfg, nil); err != nil {
		t.Fatal(err)
	}
	if ran {
		t.Fatal("a refused call ran")
	}
	got := map[string]string{}
	for _, m := range s.requests()[1]["messages"].([]any) {
		if m := m.(map[string]any); m["role"] == "tool" {
			got[m["tool_call_id"].(string)] = m["content"].(string)
		}
	}
	if want := "Validation failed for tool \"write\":\n  - root: must be object\n\nReceived arguments:\n[\n  1,\n  2\n]"; got["arr"] != want {
		t.Errorf("array arguments: %q", got["arr"])
	}
	if want := fmt.Sprintf("its arguments are %d bytes, more than the limit of 1000 bytes", len(big)); !strings.Contains(got["big"], want) {
		t.Errorf("oversized arguments: %q", got["big"])
	}
}

// TestExactIntegersThroughLoop: integers over the whole int64 and uint64
// range reach a tool's fields exactly from a real stream, and one past a
// field's range is refused with a validation failure naming the field.
func TestExactIntegersThroughLoop(t *testing.T) {
	call := func(i int, id, args string) string { return toolChunk(i, id, "ids", args) }
	body := sseChunk(`{"role":"assistant","content":""}`, "") +
		call(0, "exact", `{"i64":9223372036854775807,"neg":-9223372036854775808,"u64":18446744073709551615,"odd":9007199254740993,"text":"9223372036854775806"}`) +
		call(1, "over", `{"i64":9223372036854775808,"neg":0,"u64":0,"odd":0,"text":"0"}`) +
		sseChunk(`{}`, "tool_calls") + "data: [DONE]\n\n"
	s := newServer(t, reply{body: body}, reply{fixture: "done-text.sse"})
	type ids struct {
		I64  int64  `json:"i64"`
		Neg  int64  `json:"neg"`
		U64  uint64 `json:"u64"`
		Odd  int64  `json:"odd"`
		Text int64  `json:"text"` // a numeric string, coerced
	}
	var got []ids
	tool := tools.Must(tools.New(tools.Config{Name: "ids"}, func(_ context.Context, in ids) (string, error) {
		got = append(got, in)
		return "ok", nil
	}))
	cfg := loop.Config{Provider: s.provider(Options{}), Model: testModel, ToolExecution: tools.Sequential}
	msgs, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("go")}, loop.Conversation{Tools: []*tools.Tool{tool}}, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := ids{I64: math.MaxInt64, Neg: math.MinInt64, U64: math.MaxUint64, Odd: 9007199254740993, Text: 9223372036854775806}
	if len(got) != 1 || got[0] != want {
		t.Fatalf("the body got %+v, want %+v", got, want)
	}
	over := msgs[3].(providers.ToolResultMessage)
	if !over.IsError || !strings.HasPrefix(over.Text(), `Validation failed for tool "ids":`) ||
		!strings.Contains(over.Text(), "  - i64: must be an integer from -9223372036854775808 to 9223372036854775807") {
		t.Fatalf("out of range: %q", over.Text())
	}
}

// sseChunk is one Chat Completions stream chunk with the given delta and
// finish reason ("" for none).
func sseChunk(delta, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `data: {"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":` + f + "}]}\n\n"
}

// toolChunk is a chunk carrying a whole tool call.
func toolChunk(i int, id, name, args string) string {
	b, _ := json.Marshal(args)
	return sseChunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":%s}}]}`, i, id, name, b), "")
}

// BenchmarkManyCallsInOneMessage streams a message of n tool calls from a
// Chat Completions server through the loop (which runs the first
// MaxToolCalls and refuses the rest) and the follow-up answer. The time
// per call stays flat in n: streaming, checking and storing a message are
// linear in its calls.
func BenchmarkManyCallsInOneMessage(b *testing.B) {
	echo := tools.Must(tools.New(tools.Config{Name: "write"}, func(context.Context, pathArgs) (string, error) { return "ok", nil }))
	for _, n := range []int{500, 4000} {
		var body strings.Builder
		body.WriteString(sseChunk(`{"role":"assistant","content":""}`, ""))
		for i := range n {
			body.WriteString(toolChunk(i, fmt.Sprint("c", i), "write", `{"path":"p"}`))
		}
		body.WriteString(sseChunk(`{}`, "tool_calls") + "data: [DONE]\n\n")
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				s := newServer(b, reply{body: body.String()}, reply{fixture: "done-text.sse"})
				cfg := loop.Config{Provider: s.provider(Options{}), Model: testModel}
				b.StartTimer()
				msgs, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("go")}, loop.Conversation{Tools: []*tools.Tool{echo}}, cfg, nil)
				if err != nil || len(msgs) != n+3 {
					b.Fatalf("%d messages, %v", len(msgs), err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/call")
		})
	}
}
