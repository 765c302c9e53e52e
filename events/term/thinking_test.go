package term

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
	"github.com/agentloop/agentloop/tools"
)

// stream feeds p a message: reasoning in two pieces, then text in two.
func stream(p *Printer) {
	ctx := context.Background()
	b := kit.NewBuilder(providers.Model{ID: "m"})
	b.Start()
	b.ThinkingStart()
	p.Handle(ctx, events.MessageUpdate{Stream: b.ThinkingDelta("The user wants ")})
	p.Handle(ctx, events.MessageUpdate{Stream: b.ThinkingDelta("the weather.")})
	p.Handle(ctx, events.MessageUpdate{Stream: b.ThinkingEnd("sig")})
	b.TextStart()
	p.Handle(ctx, events.MessageUpdate{Stream: b.TextDelta("Let me ")})
	p.Handle(ctx, events.MessageUpdate{Stream: b.TextDelta("look.")})
	p.Handle(ctx, events.MessageEnd{Message: providers.AssistantMessage{StopReason: providers.StopReasonStop}})
}

// TestThinking: reasoning is printed on its own line before the text,
// dimmed only on a terminal, and left out with HideThinking.
func TestThinking(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		dim  bool
		want string
	}{
		{"shown", Options{}, false, "thinking: The user wants the weather.\nassistant: Let me look.\n"},
		{"shown on a terminal", Options{}, true, "\x1b[2mthinking: The user wants the weather.\x1b[0m\nassistant: Let me look.\n"},
		{"hidden", Options{HideThinking: true}, true, "assistant: Let me look.\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out strings.Builder
			p := NewWith(&out, tt.opts)
			p.dim = tt.dim // a strings.Builder is no terminal: say it is one
			stream(p)
			if got := out.String(); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestDimOnlyOnTerminals: escape codes go to a character device unless
// Plain; never to a file or a buffer.
func TestDimOnlyOnTerminals(t *testing.T) {
	file, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	dev, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0) // a character device, as a terminal is
	if err != nil {
		t.Fatal(err)
	}
	defer dev.Close()
	for _, tc := range []struct {
		name string
		p    *Printer
		dim  bool
	}{
		{"buffer", New(&strings.Builder{}), false},
		{"file", New(file), false},
		{"character device", New(dev), true},
		{"character device, Plain", NewWith(dev, Options{Plain: true}), false},
	} {
		if tc.p.dim != tc.dim {
			t.Errorf("%s: dim = %v, want %v", tc.name, tc.p.dim, tc.dim)
		}
	}
}

// TestThinkingWithoutDeltas: reasoning that arrives whole at its end is
// printed; redacted reasoning is named, not shown as an empty line.
func TestThinkingWithoutDeltas(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		end  func(b *kit.Builder) providers.StreamEvent
		want string
	}{
		{"redacted", func(b *kit.Builder) providers.StreamEvent { return b.ThinkingRedacted("opaque") }, "thinking: (redacted by the provider)\nassistant: ok\n"},
		{"whole at the end", func(b *kit.Builder) providers.StreamEvent {
			ev := b.ThinkingEnd("")
			ev.Content = "All at once."
			return ev
		}, "thinking: All at once.\nassistant: ok\n"},
		{"empty", func(b *kit.Builder) providers.StreamEvent { return b.ThinkingEnd("") }, "assistant: ok\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out strings.Builder
			p := New(&out)
			b := kit.NewBuilder(providers.Model{ID: "m"})
			b.Start()
			b.ThinkingStart()
			p.Handle(ctx, events.MessageUpdate{Stream: tc.end(b)})
			b.TextStart()
			p.Handle(ctx, events.MessageUpdate{Stream: b.TextDelta("ok")})
			p.Handle(ctx, events.MessageEnd{})
			if got := out.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
			out.Reset()
			p = NewWith(&out, Options{HideThinking: true})
			b = kit.NewBuilder(providers.Model{ID: "m"})
			b.Start()
			b.ThinkingStart()
			p.Handle(ctx, events.MessageUpdate{Stream: tc.end(b)})
			if out.Len() != 0 {
				t.Errorf("HideThinking printed %q", out.String())
			}
		})
	}
}

// TestControlCharacters: escape sequences and carriage returns from the
// model, a tool or a server never reach the terminal.
func TestControlCharacters(t *testing.T) {
	const evil = "a\x1b]52;c;cHduZWQ=\x07b\rc\u009b2Jd\x7f"
	var out strings.Builder
	p := NewWith(&out, Options{})
	p.dim = true // the printer's own escapes are allowed
	ctx := context.Background()
	b := kit.NewBuilder(providers.Model{ID: "m"})
	b.Start()
	b.ThinkingStart()
	p.Handle(ctx, events.MessageUpdate{Stream: b.ThinkingDelta(evil)})
	p.Handle(ctx, events.MessageUpdate{Stream: b.ThinkingEnd("")})
	b.TextStart()
	p.Handle(ctx, events.MessageUpdate{Stream: b.TextDelta(evil)})
	p.Handle(ctx, events.ToolExecutionStart{ToolCallID: "c1", ToolName: evil, Args: map[string]any{"k": evil}})
	p.Handle(ctx, events.ToolExecutionEnd{ToolCallID: "c1", ToolName: evil, Result: tools.TextResult(evil)})
	p.Handle(ctx, events.MessageEnd{Message: providers.AssistantMessage{StopReason: providers.StopReasonError, ErrorMessage: evil}})
	p.Handle(ctx, events.Compacted{Strategy: evil, Note: evil})
	p.Handle(ctx, events.ToolsChanged{Added: []string{evil}})
	got := strings.ReplaceAll(strings.ReplaceAll(out.String(), dimOn, ""), dimOff, "")
	if i := strings.IndexFunc(got, isControl); i >= 0 {
		t.Fatalf("a control character at %d reached the output:\n%q", i, got)
	}
	if !strings.Contains(got, "a\uFFFD]52;c;cHduZWQ=\uFFFDb\uFFFDc\uFFFD2Jd\uFFFD") {
		t.Errorf("the text around the controls is lost:\n%q", got)
	}
}
