// Package term prints a run's events for a terminal: the assistant's text
// as it streams, one line per tool call when it starts (its arguments) and
// one when it ends (its duration and the first paragraph of its result),
// and the error of a run that stopped.
//
//	a.Subscribe(term.New(os.Stdout).Handle)
//
// The output looks like this:
//
//	assistant: Let me look that up.
//	  → weather {"city":"Oslo"}
//	  ✓ weather (301ms): Oslo: 4°C, light rain
package term

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
)

// Printer writes events to a terminal. Its Handle method is an
// events.Handler; it is safe for concurrent use.
type Printer struct {
	w io.Writer

	mu      sync.Mutex
	started map[string]time.Time
	inText  bool
}

// New returns a Printer writing to w.
func New(w io.Writer) *Printer { return &Printer{w: w, started: map[string]time.Time{}} }

// Handle prints one event; subscribe it to an agent or pass it to a run.
func (p *Printer) Handle(_ context.Context, e events.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e := e.(type) {
	case events.MessageUpdate:
		if e.Stream.Type == providers.StreamStart && e.Attempt > 0 {
			// The model was retried or failed over: what was printed of
			// the answer so far is superseded (events.Envelope.Attempt).
			p.endText()
			model := ""
			if m := e.Stream.Partial(); m != nil && m.Model != "" {
				model = ", " + m.Model
			}
			fmt.Fprintf(p.w, "  [the answer above is dropped; it starts again (attempt %d%s)]\n", e.Attempt+1, model)
		}
		if e.Stream.Type == providers.StreamTextDelta {
			if !p.inText {
				fmt.Fprint(p.w, "assistant: ")
				p.inText = true
			}
			fmt.Fprint(p.w, e.Stream.Delta)
		}
	case events.MessageEnd:
		p.endText()
		if a, ok := e.Message.(providers.AssistantMessage); ok && a.ErrorMessage != "" {
			fmt.Fprintf(p.w, "assistant stopped (%s): %s\n", a.StopReason, a.ErrorMessage)
		}
	case events.ToolExecutionStart:
		p.endText()
		p.started[e.ToolCallID] = time.Now()
		fmt.Fprintf(p.w, "  → %s %s\n", e.ToolName, compact(e.Args))
	case events.ToolExecutionEnd:
		p.endText()
		d := time.Since(p.started[e.ToolCallID]).Round(time.Millisecond)
		mark := "✓"
		if e.IsError {
			mark = "✗"
		}
		fmt.Fprintf(p.w, "  %s %s (%v): %s\n", mark, e.ToolName, d, summary(providers.TextOf(e.Result.Content)))
	case events.Compacted:
		p.endText()
		fmt.Fprintf(p.w, "  [compacted (%s): ~%d → ~%d tokens; %d dropped, %d shortened, %d summarised%s]\n",
			e.Strategy, e.Before, e.After, e.Dropped, e.Shortened, e.Summarized, noteOf(e.Note))
	case events.ToolsChanged:
		p.endText()
		fmt.Fprintf(p.w, "  tools changed: +%v -%v\n", e.Added, e.Removed)
	}
}

func (p *Printer) endText() {
	if p.inText {
		fmt.Fprintln(p.w)
		p.inText = false
	}
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// summary shortens a result to its first paragraph (a validation error's
// violation list, without the echoed arguments), indented under the line.
func summary(s string) string {
	para, rest, _ := strings.Cut(s, "\n\n")
	para = strings.ReplaceAll(para, "\n", "\n      ")
	if rest != "" {
		return para + "\n      …"
	}
	return para
}

func noteOf(note string) string {
	if note == "" {
		return ""
	}
	return "; " + note
}
