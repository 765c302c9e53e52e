package mcp_test

import (
	"context"
	"fmt"
	"log/slog"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
	"github.com/agentloop/agentloop/tools/mcp"
)

type weatherIn struct {
	City string `json:"city" jsonschema:"the city to report on"`
}

// An MCP server's tools, offered to an agent. The server here is the
// official go-sdk's, in memory; a real one is attached with Command (a
// process over stdio) or URL (streamable HTTP) instead of Dial. The
// model's call is checked against the tool's input schema before it
// reaches the server, as a Go tool's is.
func Example() {
	server := sdk.NewServer(&sdk.Implementation{Name: "weather", Version: "1.0.0"}, nil)
	sdk.AddTool(server, &sdk.Tool{Name: "forecast", Description: "Today's weather in a city"},
		func(_ context.Context, _ *sdk.CallToolRequest, in weatherIn) (*sdk.CallToolResult, any, error) {
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: in.City + ": 4°C, light rain"}}}, nil, nil
		})
	dial := func(ctx context.Context) (sdk.Transport, error) {
		client, srv := sdk.NewInMemoryTransports()
		if _, err := server.Connect(ctx, srv, nil); err != nil {
			return nil, err
		}
		return client, nil
	}

	ctx := context.Background()
	ts, err := mcp.Connect(ctx, mcp.Options{Logger: slog.New(slog.DiscardHandler)}, mcp.Server{Name: "weather", Dial: dial})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer ts.Close()
	set, _ := ts.Tools()
	for _, t := range set {
		fmt.Println("tool:", t.Spec().Name)
	}

	model := faux.New(
		faux.Reply(faux.Call("c1", "forecast", map[string]any{"city": "Oslo"})),
		faux.Reply(faux.Text("Bring an umbrella.")),
	)
	a, err := agent.New(agent.Options{Config: loop.Config{
		Provider: model, Model: providers.Model{ID: "scripted"}, ToolSources: []tools.Source{ts}}})
	if err != nil {
		panic(err)
	}
	a.Subscribe(func(_ context.Context, e events.Event) {
		if end, ok := e.(events.ToolExecutionEnd); ok {
			fmt.Printf("%s -> %s\n", end.ToolName, providers.TextOf(end.Result.Content))
		}
	})
	if err := a.Prompt(ctx, providers.NewUserText("Weather in Oslo?")); err != nil {
		panic(err)
	}
	fmt.Println(model.Requests()[0].Tools[0].Name, "was offered to the model")
	// Output:
	// tool: forecast
	// forecast -> Oslo: 4°C, light rain
	// forecast was offered to the model
}
