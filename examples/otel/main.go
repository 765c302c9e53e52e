// Command otel traces an agent's run with OpenTelemetry and prints the
// spans as a tree: the run (invoke_agent), each model call (chat) and each
// tool call (execute_tool) under it, with their GenAI attributes.
//
//	go run ./examples/otel [-offline]
//
// With OPENAI_API_KEY set the model is OpenAI's, or that of the Chat
// Completions server OPENAI_BASE_URL names (OPENAI_MODEL picks it).
// Without a key (or with -offline) a scripted model calls two tools in
// parallel and one that does not exist, then answers.
//
// The spans are collected in memory here to be printed. To send them to a
// collector (Jaeger, Tempo, Honeycomb, any OTLP endpoint), give
// sdktrace.NewTracerProvider an OTLP exporter instead:
//
//	exp, err := otlptracegrpc.New(ctx) // go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc; reads OTEL_EXPORTER_OTLP_ENDPOINT
//	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
//	defer tp.Shutdown(ctx) // flushes the batch
package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/loop"
	agentotel "github.com/agentloop/agentloop/loop/otel"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/providers/openai"
	"github.com/agentloop/agentloop/tools"
)

type cityArgs struct {
	City string `json:"city"`
}

func main() {
	offline := flag.Bool("offline", false, "use the scripted model even when OPENAI_API_KEY is set")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := run(ctx, os.Stdout, *offline); err != nil {
		fmt.Fprintln(os.Stderr, "otel:", err)
		os.Exit(1)
	}
}

// run traces one prompt and prints its spans to out as a tree. offline
// uses the scripted model even when a key is set.
func run(ctx context.Context, out io.Writer, offline bool) error {
	var spans collector
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(&spans))
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
	if live, m, ok := openai.FromEnv(); ok && !offline {
		provider, model = live, m
		fmt.Fprintf(out, "otel: using %s at %s\n", model.ID, endpoint())
	} else {
		fmt.Fprintln(out, "otel: OPENAI_API_KEY is not set (or -offline), so a scripted model answers.")
	}
	a, err := agent.New(agent.Options{Config: loop.Config{Provider: provider, Model: model, Hooks: []loop.Hooks{tracer.Hooks()}}, Tools: []*tools.Tool{weather}})
	if err != nil {
		return err
	}
	runErr := a.Prompt(ctx, providers.NewUserText("What's the weather in Oslo and Bergen?"))
	if err := tp.Shutdown(ctx); err != nil {
		return err
	}
	printTree(out, spans.all())
	fmt.Fprintln(out, "(to send spans to a collector, give the tracer provider an OTLP exporter: see this example's doc comment)")
	return runErr
}

// collector is a SpanExporter that keeps the spans in memory.
type collector struct {
	mu    sync.Mutex
	spans []sdktrace.ReadOnlySpan
}

func (c *collector) ExportSpans(_ context.Context, spans []sdktrace.ReadOnlySpan) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spans = append(c.spans, spans...)
	return nil
}

func (c *collector) Shutdown(context.Context) error { return nil }

func (c *collector) all() []sdktrace.ReadOnlySpan {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.spans)
}

// printTree prints spans under their parents, in the order they started:
// one line with the name, duration and status, one with the attributes.
func printTree(out io.Writer, spans []sdktrace.ReadOnlySpan) {
	known := map[trace.SpanID]bool{}
	for _, s := range spans {
		known[s.SpanContext().SpanID()] = true
	}
	children := map[trace.SpanID][]sdktrace.ReadOnlySpan{} // the zero id holds the roots
	for _, s := range spans {
		parent := s.Parent().SpanID()
		if !known[parent] {
			parent = trace.SpanID{}
		}
		children[parent] = append(children[parent], s)
	}
	for _, list := range children {
		slices.SortStableFunc(list, func(a, b sdktrace.ReadOnlySpan) int {
			return cmp.Or(a.StartTime().Compare(b.StartTime()), strings.Compare(a.Name(), b.Name()))
		})
	}
	var walk func(id trace.SpanID, indent string)
	walk = func(id trace.SpanID, indent string) {
		for i, s := range children[id] {
			branch, next := "├── ", "│   "
			if i == len(children[id])-1 {
				branch, next = "└── ", "    "
			}
			if id == (trace.SpanID{}) {
				branch, next = "", ""
			}
			status := ""
			if s.Status().Code == codes.Error {
				status = "  ERROR " + s.Status().Description
			}
			fmt.Fprintf(out, "%s%s  %v%s\n", indent+branch, s.Name(), s.EndTime().Sub(s.StartTime()).Round(time.Microsecond), status)
			var attrs []string
			for _, kv := range s.Attributes() {
				attrs = append(attrs, string(kv.Key)+"="+kv.Value.String())
			}
			bar := "│ "
			if len(children[s.SpanContext().SpanID()]) == 0 {
				bar = "  "
			}
			fmt.Fprintf(out, "%s%s %s\n", indent+next, bar, strings.Join(attrs, " "))
			walk(s.SpanContext().SpanID(), indent+next)
		}
	}
	walk(trace.SpanID{}, "")
}

// endpoint is where the OpenAI provider sends its requests, without the key.
func endpoint() string {
	if base := os.Getenv("OPENAI_BASE_URL"); base != "" {
		return base
	}
	return "OpenAI's API"
}
