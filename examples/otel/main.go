// Command otel traces an agent's run with OpenTelemetry and prints the
// spans to standard output: the run (invoke_agent), each model call
// (chat), each tool call (execute_tool) under it, with the GenAI
// attributes. Send them to any OTLP collector instead by swapping the
// exporter (see the README).
//
//	go run ./examples/otel [-provider anthropic]
//
// Without an API key (see providers/auto) a scripted model calls two tools
// in parallel and one that does not exist, then answers.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/loop"
	agentotel "github.com/agentloop/agentloop/loop/otel"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/auto"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

type cityArgs struct {
	City string `json:"city"`
}

func main() {
	name := flag.String("provider", "", "the provider: "+strings.Join(auto.Names, ", ")+" (default: the first whose key is set)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, *name); err != nil {
		fmt.Fprintln(os.Stderr, "otel:", err)
		os.Exit(1)
	}
}

// run traces one prompt, writing the spans to out as JSON.
func run(ctx context.Context, out io.Writer, name string) error {
	exporter, err := stdouttrace.New(stdouttrace.WithWriter(out), stdouttrace.WithPrettyPrint())
	if err != nil {
		return err
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exporter))
	defer tp.Shutdown(context.Background())
	tracer := agentotel.New(agentotel.Options{TracerProvider: tp, AgentName: "weather"})

	weather := tools.Must(tools.New(tools.Config{Name: "weather", Description: "Current weather for a city"},
		func(ctx context.Context, in cityArgs) (string, error) {
			return in.City + ": 4°C, light rain", nil
		}))
	var provider providers.Provider = faux.New(
		faux.Reply(faux.Call("c1", "weather", map[string]any{"city": "Oslo"}), faux.Call("c2", "weather", map[string]any{"city": "Bergen"}),
			faux.Call("c3", "forecast", map[string]any{"city": "Oslo"})),
		faux.Reply(faux.Text("Oslo and Bergen: 4°C with light rain.")))
	model := providers.Model{ID: "scripted", Provider: "faux"}
	live, m, ok, err := auto.FromEnv(ctx, name)
	switch {
	case err != nil:
		return err
	case ok:
		provider, model = live, m
	}
	a, err := agent.New(agent.Options{Config: loop.Config{Provider: provider, Model: model, Hooks: []loop.Hooks{tracer.Hooks()}}, Tools: []*tools.Tool{weather}})
	if err != nil {
		return err
	}
	return a.Prompt(ctx, "What's the weather in Oslo and Bergen?")
}
