// Command quickstart runs an agent with three tools built from Go structs.
//
// With OPENAI_API_KEY set it talks to OpenAI, or to any server that speaks
// Chat Completions (vLLM, Ollama, llama.cpp, …) named by OPENAI_BASE_URL;
// OPENAI_MODEL picks the model. Without a key (or with -offline), a
// scripted model plays a conversation that shows the loop's contract at
// work: a parallel turn whose calls finish out of order, a call the policy
// blocks, a call with invalid arguments that the model then corrects, and
// a final answer.
//
//	go run ./examples/quickstart [-offline]
//
// It imports providers/openai only, so it builds quickly and small; for
// Anthropic or Gemini import providers/anthropic or providers/gemini the
// same way (examples/chat takes any of them).
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
	_ "time/tzdata" // time_in works on machines without a zoneinfo database

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/events/term"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/providers/openai"
	"github.com/agentloop/agentloop/tools"
)

type weatherArgs struct {
	City string `json:"city" jsonschema:"description=City name, e.g. Oslo"`
	Unit string `json:"unit,omitempty" jsonschema:"enum=celsius,enum=fahrenheit,description=Temperature unit (default celsius)"`
}

type timeArgs struct {
	Zone string `json:"zone" jsonschema:"description=IANA time zone, e.g. Europe/Oslo"`
}

type noteArgs struct {
	Path string `json:"path" jsonschema:"description=Where to save the note, relative to ./notes"`
	Text string `json:"text"`
}

func main() {
	offline := flag.Bool("offline", false, "use the scripted model even when OPENAI_API_KEY is set")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := run(ctx, os.Stdout, *offline); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// run plays the conversation with the endpoint OPENAI_API_KEY names, or
// offline with the scripted model, printing it to out, and returns the
// agent's transcript.
func run(ctx context.Context, out io.Writer, offline bool) ([]providers.Message, error) {
	weather, err := tools.New(tools.Config{Name: "weather", Description: "Current weather for a city"},
		func(ctx context.Context, in weatherArgs) (string, error) {
			if err := pause(ctx, 300*time.Millisecond); err != nil { // a slow upstream API
				return "", err
			}
			temp := map[string]int{"oslo": 4, "bergen": 7}[strings.ToLower(in.City)]
			if in.Unit == "fahrenheit" {
				return fmt.Sprintf("%s: %d°F, light rain", in.City, temp*9/5+32), nil
			}
			return fmt.Sprintf("%s: %d°C, light rain", in.City, temp), nil
		})
	if err != nil {
		return nil, err
	}
	clock, err := tools.New(tools.Config{Name: "time_in", Description: "Current local time in a time zone"},
		func(ctx context.Context, in timeArgs) (string, error) {
			loc, err := time.LoadLocation(in.Zone)
			if err != nil {
				return "", fmt.Errorf("unknown time zone %q", in.Zone)
			}
			return time.Now().In(loc).Format("15:04 MST"), nil
		})
	if err != nil {
		return nil, err
	}
	note, err := tools.New(tools.Config{Name: "save_note", Description: "Save a note under ./notes"},
		func(_ context.Context, in noteArgs) (string, error) {
			return fmt.Sprintf("saved %s to notes/%s (dry run)", count(len(in.Text), "byte"), in.Path), nil
		})
	if err != nil {
		return nil, err
	}
	// The policy: notes stay inside ./notes. The hook reads the call's
	// checked arguments as the tool's own struct.
	notesOnly := func(_ context.Context, c loop.BeforeCall) (loop.BeforeResult, error) {
		if c.Call.Name != "save_note" {
			return loop.BeforeResult{}, nil
		}
		in, err := tools.Decode[noteArgs](c.Args)
		if err != nil || filepath.IsAbs(in.Path) || strings.HasPrefix(filepath.Clean(in.Path), "..") {
			return loop.BeforeResult{Block: true, Reason: "notes must stay inside ./notes; " + in.Path + " is outside"}, nil
		}
		return loop.BeforeResult{}, nil
	}

	scripted := &faux.Provider{Delay: 15 * time.Millisecond, ChunkSize: 3}
	scripted.Push(script()...)
	var provider providers.Provider = scripted
	model := providers.Model{ID: "scripted", Provider: "faux"}
	if live, m, ok := openai.FromEnv(); ok && !offline {
		provider, model = live, m
		fmt.Fprintf(out, "agentloop quickstart: using %s at %s\n", model.ID, endpoint())
	} else {
		fmt.Fprintln(out, "agentloop quickstart: OPENAI_API_KEY is not set (or -offline), so a scripted model (providers/faux) plays the assistant.")
	}

	a, err := agent.New(agent.Options{
		Config:       loop.Config{Provider: provider, Model: model, Hooks: []loop.Hooks{{BeforeToolCall: notesOnly}}},
		SystemPrompt: "You are a concise assistant. Use the tools when they help.",
		Tools:        []*tools.Tool{weather, clock, note},
	})
	if err != nil {
		return nil, err
	}
	a.Subscribe(term.New(out).Handle)

	prompt := "What's the weather in Oslo and Bergen, what time is it in Oslo, and save a note about it?"
	fmt.Fprintln(out, "user:", prompt)
	err = a.Prompt(ctx, providers.NewUserText(prompt))
	return a.State().Messages, err
}

// script is the scripted model's side of the conversation.
func script() []providers.AssistantMessage {
	return []providers.AssistantMessage{
		faux.Reply(faux.Text("Let me look that up."),
			faux.Call("call_1", "weather", map[string]any{"city": "Oslo"}),
			faux.Call("call_2", "time_in", map[string]any{"zone": "Europe/Oslo"}),
			faux.Call("call_3", "weather", map[string]any{"town": "Bergen", "unit": "kelvin"}),
			faux.Call("call_4", "save_note", map[string]any{"path": "/etc/motd", "text": "Oslo 4°C"})),
		faux.Reply(faux.Text("I used the wrong arguments for Bergen and a path outside ./notes; retrying."),
			faux.Call("call_5", "weather", map[string]any{"city": "Bergen", "unit": "celsius"}),
			faux.Call("call_6", "save_note", map[string]any{"path": "weather.txt", "text": "Oslo 4°C, Bergen 7°C"})),
		faux.Reply(faux.Text("Oslo is 4°C and Bergen 7°C, both with light rain. I saved a note to notes/weather.txt.")),
	}
}

// endpoint is where the OpenAI provider sends its requests, without the key.
func endpoint() string {
	if base := os.Getenv("OPENAI_BASE_URL"); base != "" {
		return base
	}
	return "OpenAI's API"
}

func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// count is n and the noun, plural unless n is 1: "1 message", "3 messages".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
