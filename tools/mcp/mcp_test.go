package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// testServer is an in-memory MCP server; Dial connects a new session to
// it each time, as a process or an HTTP server would.
type testServer struct {
	srv      *sdk.Server
	mu       sync.Mutex
	sessions []*sdk.ServerSession
}

func newTestServer() *testServer {
	return &testServer{srv: sdk.NewServer(&sdk.Implementation{Name: "test", Version: "1"}, nil)}
}

func (s *testServer) dial(ctx context.Context) (sdk.Transport, error) {
	ct, st := sdk.NewInMemoryTransports()
	ss, err := s.srv.Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.sessions = append(s.sessions, ss)
	s.mu.Unlock()
	return ct, nil
}

// drop ends the server's side of every session, as a crash would.
func (s *testServer) drop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ss := range s.sessions {
		ss.Close()
	}
	s.sessions = nil
}

func (s *testServer) add(name, schema string, h sdk.ToolHandler) {
	s.srv.AddTool(&sdk.Tool{Name: name, Description: name + " tool", InputSchema: json.RawMessage(schema)}, h)
}

func text(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}

const sumSchema = `{"type":"object","properties":{"a":{"type":"integer"},"b":{"type":"integer"}},"required":["a","b"],"additionalProperties":false}`

func connect(t *testing.T, opts Options, servers ...Server) *Toolset {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	ts, err := Connect(context.Background(), opts, servers...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ts.Close() })
	return ts
}

func run(t *testing.T, ts *Toolset, replies ...providers.AssistantMessage) ([]providers.Message, []events.Event) {
	t.Helper()
	var mu sync.Mutex
	var evs []events.Event
	cfg := loop.Config{Provider: faux.New(replies...), Model: providers.Model{ID: "m"}, ToolSources: []tools.Source{ts}}
	msgs, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("go")}, loop.Conversation{}, cfg,
		func(_ context.Context, e events.Event) { mu.Lock(); evs = append(evs, e); mu.Unlock() })
	if err != nil {
		t.Fatal(err)
	}
	return msgs, evs
}

func resultText(t *testing.T, msgs []providers.Message, id string) (string, bool) {
	t.Helper()
	for _, m := range msgs {
		if tr, ok := m.(providers.ToolResultMessage); ok && tr.ToolCallID == id {
			return tr.Text(), tr.IsError
		}
	}
	t.Fatalf("no result for %s", id)
	return "", false
}

// TestPreflightBeforeTheServer: arguments that do not fit the server's
// schema get the full validation listing and never reach the server; a
// corrected call does (numeric strings coerced on the way).
func TestPreflightBeforeTheServer(t *testing.T) {
	s := newTestServer()
	var calls atomic.Int32
	s.add("sum", sumSchema, func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		calls.Add(1)
		var in struct{ A, B int }
		_ = json.Unmarshal(req.Params.Arguments, &in)
		return text(strings.Repeat("", 0) + jsonNum(in.A+in.B)), nil
	})
	ts := connect(t, Options{}, Server{Name: "calc", Dial: s.dial})
	msgs, _ := run(t, ts,
		faux.Reply(faux.Call("bad", "sum", map[string]any{"a": "two", "c": 1})),
		faux.Reply(faux.Call("good", "sum", map[string]any{"a": "2", "b": 3})),
		faux.Reply(faux.Text("5")))
	got, isErr := resultText(t, msgs, "bad")
	if !isErr || !strings.HasPrefix(got, `Validation failed for tool "sum":`) || !strings.Contains(got, "  - a: ") || !strings.Contains(got, "  - root: ") {
		t.Fatalf("bad call: %q", got)
	}
	if got, isErr := resultText(t, msgs, "good"); isErr || got != "5" || calls.Load() != 1 {
		t.Fatalf("good call: %q (error %v), server called %d times", got, isErr, calls.Load())
	}
}

func jsonNum(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestResults: text, images, embedded resources (text and binary), links,
// structured content and isError map onto the result.
func TestResults(t *testing.T) {
	s := newTestServer()
	s.add("many", `{"type":"object"}`, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{
			&sdk.TextContent{Text: "hello"},
			&sdk.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///a.txt", Text: "file text"}},
			&sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: "file:///b.bin", MIMEType: "application/octet-stream", Blob: []byte{1, 2, 3}}},
			&sdk.ResourceLink{URI: "file:///c", Name: "c"},
		}}, nil
	})
	s.add("structured", `{"type":"object"}`, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{Content: []sdk.Content{}, StructuredContent: map[string]any{"temp": 4}}, nil
	})
	s.add("fails", `{"type":"object"}`, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "disk full"}}}, nil
	})
	ts := connect(t, Options{}, Server{Name: "r", Dial: s.dial})
	msgs, _ := run(t, ts, faux.Reply(faux.Call("1", "many", nil), faux.Call("2", "structured", nil), faux.Call("3", "fails", nil)), faux.Reply(faux.Text("ok")))
	var many providers.ToolResultMessage
	for _, m := range msgs {
		if tr, ok := m.(providers.ToolResultMessage); ok && tr.ToolCallID == "1" {
			many = tr
		}
	}
	if len(many.Content) != 5 || many.Content[1] != providers.Content(providers.Image{Data: "iVBORw==", MIMEType: "image/png"}) ||
		!strings.Contains(many.Text(), "file text") || !strings.Contains(many.Text(), "[resource file:///b.bin, application/octet-stream, 3 bytes]") ||
		!strings.Contains(many.Text(), "[resource c: file:///c]") || many.IsError {
		t.Fatalf("content %+v", many.Content)
	}
	if got, isErr := resultText(t, msgs, "2"); got != `{"temp":4}` || isErr {
		t.Fatalf("structured: %q", got)
	}
	if got, isErr := resultText(t, msgs, "3"); got != "disk full" || !isErr {
		t.Fatalf("isError: %q %v", got, isErr)
	}
}

// TestNamespaces: with two servers, names carry the server's; names the
// providers would refuse are made valid; calls reach the right server
// under its own names; a schema that cannot be checked leaves its tool out
// and says why.
func TestNamespaces(t *testing.T) {
	one, two := newTestServer(), newTestServer()
	one.add("echo", `{"type":"object"}`, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("one"), nil })
	two.add("echo", `{"type":"object"}`, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("two"), nil })
	two.add("read.file", `{"type":"object"}`, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("read"), nil })
	two.add("broken", `{"type":"object","properties":{"a":{"$ref":"#/$defs/missing"}}}`, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("never"), nil })
	ts := connect(t, Options{}, Server{Name: "one", Dial: one.dial}, Server{Name: "two", Dial: two.dial})
	set, _ := ts.Tools()
	var names []string
	for _, tl := range set {
		names = append(names, tl.Name())
	}
	if strings.Join(names, ",") != "one__echo,two__echo,two__read_file" {
		t.Fatalf("names %v", names)
	}
	if err := ts.Refused()["two/broken"]; err == nil || !strings.Contains(err.Error(), "missing") {
		t.Fatalf("refused %v", ts.Refused())
	}
	msgs, _ := run(t, ts, faux.Reply(faux.Call("a", "one__echo", nil), faux.Call("b", "two__echo", nil), faux.Call("c", "two__read_file", nil)), faux.Reply(faux.Text("ok")))
	for id, want := range map[string]string{"a": "one", "b": "two", "c": "read"} {
		if got, _ := resultText(t, msgs, id); got != want {
			t.Errorf("%s: %q, want %q", id, got, want)
		}
	}
}

// TestListChangesBetweenTurns: a server that adds a tool while a call
// runs offers it from the next model call on, with a tools_changed event.
func TestListChangesBetweenTurns(t *testing.T) {
	s := newTestServer()
	changed := make(chan struct{}, 1)
	s.add("grow", `{"type":"object"}`, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		s.add("fresh", `{"type":"object"}`, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("new"), nil })
		select { // the client has listed again: the next turn will see it
		case <-changed:
		case <-time.After(30 * time.Second):
			return nil, errors.New("the client never listed the tools again")
		}
		return text("grown"), nil
	})
	ts := connect(t, Options{OnChange: func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}}, Server{Name: "g", Dial: s.dial})
	msgs, evs := run(t, ts, faux.Reply(faux.Call("a", "grow", nil)), faux.Reply(faux.Call("b", "fresh", nil)), faux.Reply(faux.Text("ok")))
	if got, isErr := resultText(t, msgs, "b"); got != "new" || isErr {
		t.Fatalf("the new tool: %q", got)
	}
	var seen bool
	for _, e := range evs {
		if c, ok := e.(events.ToolsChanged); ok && strings.Join(c.Added, ",") == "fresh" {
			seen = true
		}
	}
	if !seen {
		t.Fatal("no tools_changed event")
	}
}

// TestDroppedConnection: a call whose connection drops while it runs is
// an error the model can read and is never sent again; the next call
// connects again.
func TestDroppedConnection(t *testing.T) {
	s := newTestServer()
	var calls atomic.Int32
	s.add("work", `{"type":"object"}`, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		if calls.Add(1) == 1 {
			go s.drop() // the server goes away mid-call
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return text("done"), nil
	})
	ts := connect(t, Options{}, Server{Name: "flaky", Dial: s.dial})
	msgs, _ := run(t, ts, faux.Reply(faux.Call("a", "work", nil)), faux.Reply(faux.Call("b", "work", nil)), faux.Reply(faux.Text("ok")))
	if got, isErr := resultText(t, msgs, "a"); !isErr || got != "the connection to flaky was lost while the call was running; it may or may not have run" {
		t.Fatalf("the dropped call: %q", got)
	}
	if got, _ := resultText(t, msgs, "b"); got != "done" || calls.Load() != 2 {
		t.Fatalf("after reconnecting: %q, %d calls", got, calls.Load())
	}
}

// TestCancellationAndTimeout: cancelling the run, or the tool's timeout,
// cancels the call on the server (notifications/cancelled).
func TestCancellationAndTimeout(t *testing.T) {
	s := newTestServer()
	cancelled := make(chan struct{}, 2)
	started := make(chan struct{}, 2)
	s.add("wait", `{"type":"object"}`, func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		started <- struct{}{}
		<-ctx.Done()
		cancelled <- struct{}{}
		return nil, ctx.Err()
	})
	ts := connect(t, Options{}, Server{Name: "w", Dial: s.dial})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	cfg := loop.Config{Provider: faux.New(faux.Reply(faux.Call("a", "wait", nil))), Model: providers.Model{ID: "m"}, ToolSources: []tools.Source{ts}}
	if _, err := loop.Run(ctx, []providers.Message{providers.NewUserText("go")}, loop.Conversation{}, cfg, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("run: %v", err)
	}
	waitFor(t, cancelled, "the server never saw the run's cancellation")
	timed := connect(t, Options{}, Server{Name: "w", Dial: s.dial, ToolTimeout: 50 * time.Millisecond})
	msgs, _ := run(t, timed, faux.Reply(faux.Call("b", "wait", nil)), faux.Reply(faux.Text("ok")))
	if got, isErr := resultText(t, msgs, "b"); !isErr || !strings.Contains(got, "timed out") {
		t.Fatalf("timeout: %q", got)
	}
	waitFor(t, cancelled, "the server never saw the timeout's cancellation")
}

func waitFor(t *testing.T, c <-chan struct{}, why string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(30 * time.Second):
		t.Fatal(why)
	}
}

// TestProgress: the server's progress notifications become
// tool_execution_update events. (The server waits until each one is seen:
// the SDK may handle a notification after the result that followed it,
// and an update after the call's end is no longer published.)
func TestProgress(t *testing.T) {
	s := newTestServer()
	seen := make(chan struct{}, 2)
	s.add("slow", `{"type":"object"}`, func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		for i := 1; i <= 2; i++ {
			_ = req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: 2, Message: "step"})
			select {
			case <-seen:
			case <-time.After(30 * time.Second):
				return nil, errors.New("progress never seen")
			}
		}
		return text("done"), nil
	})
	ts := connect(t, Options{}, Server{Name: "p", Dial: s.dial})
	var updates []string
	cfg := loop.Config{Provider: faux.New(faux.Reply(faux.Call("a", "slow", nil)), faux.Reply(faux.Text("ok"))), Model: providers.Model{ID: "m"}, ToolSources: []tools.Source{ts}}
	_, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("go")}, loop.Conversation{}, cfg, func(_ context.Context, e events.Event) {
		if u, ok := e.(events.ToolExecutionUpdate); ok {
			updates = append(updates, providers.TextOf(u.Partial.Content))
			seen <- struct{}{}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(updates, ",") != "1/2: step,2/2: step" {
		t.Fatalf("updates %q", updates)
	}
}

// TestCloseLeavesNothing: after Close no goroutine of the Toolset or the
// SDK is left.
func TestCloseLeavesNothing(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := newTestServer()
	s.add("echo", `{"type":"object"}`, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("x"), nil })
	ts, err := Connect(context.Background(), Options{}, Server{Name: "e", Dial: s.dial})
	if err != nil {
		t.Fatal(err)
	}
	run(t, ts, faux.Reply(faux.Call("a", "echo", nil)), faux.Reply(faux.Text("ok")))
	ts.Close()
	s.drop()
}
