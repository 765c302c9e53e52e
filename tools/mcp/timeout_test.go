package mcp

import (
	"context"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// TestServerToolTimeoutIsEachToolsTimeout: Server.ToolTimeout is the
// Timeout of each of that server's tools and of no other server's.
func TestServerToolTimeoutIsEachToolsTimeout(t *testing.T) {
	servers := []Server{
		{Name: "run", ToolTimeout: 0},             // the run's Limits.ToolTimeout
		{Name: "slow", ToolTimeout: time.Hour},    // its own
		{Name: "forever", ToolTimeout: -1},        // no limit
		{Name: "fast", ToolTimeout: time.Second},  // its own, shorter
		{Name: "other", ToolTimeout: time.Minute}, // not the previous one's
	}
	want := map[string]time.Duration{}
	for i := range servers {
		s := newTestServer()
		s.add("a", `{"type":"object"}`, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("ok"), nil })
		s.add("b", `{"type":"object"}`, func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("ok"), nil })
		servers[i].Dial = s.dial
		want[servers[i].Name+"__a"] = servers[i].ToolTimeout
		want[servers[i].Name+"__b"] = servers[i].ToolTimeout
	}
	set, _ := connect(t, Options{}, servers...).Tools()
	if len(set) != len(want) {
		t.Fatalf("%d tools, want %d", len(set), len(want))
	}
	for _, tool := range set {
		if d, ok := want[tool.Name()]; !ok || tool.Timeout() != d {
			t.Errorf("%s: Timeout %v, want %v (known %v)", tool.Name(), tool.Timeout(), d, ok)
		}
	}
}

// TestToolTimeoutLevels: an MCP tool's call ends at the server's
// ToolTimeout when it has one (whatever the run's), and at the run's
// Limits.ToolTimeout when it has none; the server sees the cancellation
// either way.
func TestToolTimeoutLevels(t *testing.T) {
	tests := []struct {
		name         string
		server, loop time.Duration
	}{
		{"the server's wins over a longer run default", 50 * time.Millisecond, time.Hour},
		{"the run's applies to a server without one", 0, 50 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newTestServer()
			cancelled := make(chan struct{}, 1)
			s.add("wait", `{"type":"object"}`, func(ctx context.Context, _ *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
				<-ctx.Done()
				cancelled <- struct{}{}
				return nil, ctx.Err()
			})
			ts := connect(t, Options{}, Server{Name: "w", Dial: s.dial, ToolTimeout: tt.server})
			cfg := loop.Config{
				Provider:    faux.New(faux.Reply(faux.Call("c", "wait", nil)), faux.Reply(faux.Text("ok"))),
				Model:       providers.Model{ID: "m"},
				ToolSources: []tools.Source{ts},
				Limits:      loop.Limits{ToolTimeout: tt.loop},
			}
			msgs, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("go")}, loop.Conversation{}, cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got, isErr := resultText(t, msgs, "c"); !isErr || !strings.Contains(got, "timed out after 50ms") {
				t.Fatalf("result %q (error %v), want a timeout after 50ms", got, isErr)
			}
			waitFor(t, cancelled, "the server never saw the timeout's cancellation")
		})
	}
}
