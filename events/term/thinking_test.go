package term

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
)

// stream feeds p a message: reasoning in two pieces, then text in two.
func stream(p *Printer) {
	ctx := context.Background()
	b := providers.NewBuilder(providers.Model{ID: "m"})
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
