// Package term prints a run's events for a terminal: the model's
// reasoning (dimmed) and the assistant's text as they stream, one line per
// tool call when it starts (its arguments) and one when it ends (its
// duration and the first paragraph of its result), and the error of a run
// that stopped.
//
//	a.Subscribe(term.New(os.Stdout).Handle)
//
// The output looks like this:
//
//	thinking: The user wants today's weather; look it up.
//	assistant: Let me look that up.
//	  → weather {"city":"Oslo"}
//	  ✓ weather (301ms): Oslo: 4°C, light rain
//
// NewWith takes Options: HideThinking leaves the reasoning out.
package term

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
)

// Printer writes events to a terminal. Its Handle method is an
// events.Handler; it is safe for concurrent use.
type Printer struct {
	w    io.Writer
	opts Options
	dim  bool // reasoning is dimmed with escape codes

	mu         sync.Mutex
	started    map[string]time.Time
	inText     bool
	inThinking bool
}

// Options configure a Printer. The zero value prints everything, the
// reasoning dimmed when w is a terminal.
type Options struct {
	// HideThinking leaves the model's reasoning out. By default it is
	// printed as it streams, after "thinking: ".
	HideThinking bool
	// Plain writes no escape codes: the reasoning is not dimmed. Output
	// that is not a terminal (an *os.File on a character device) is
	// always plain.
	Plain bool
}

// SGR escape codes: dim, and back to normal.
const (
	dimOn  = "\x1b[2m"
	dimOff = "\x1b[0m"
)

// New returns a Printer writing to w with the zero Options.
func New(w io.Writer) *Printer { return NewWith(w, Options{}) }

// NewWith returns a Printer writing to w as opts say.
func NewWith(w io.Writer, opts Options) *Printer {
	return &Printer{w: w, opts: opts, dim: !opts.Plain && isTerminal(w), started: map[string]time.Time{}}
}

// isTerminal reports whether w is a character device, as a terminal is.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Handle prints one event; subscribe it to an agent or pass it to a run.
func (p *Printer) Handle(_ context.Context, e events.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e := e.(type) {
	case events.MessageUpdate:
		switch e.Stream.Type {
		case providers.StreamThinkingDelta:
			if p.opts.HideThinking || e.Stream.Delta == "" {
				return
			}
			if !p.inThinking {
				p.endText()
				if p.dim {
					fmt.Fprint(p.w, dimOn)
				}
				fmt.Fprint(p.w, "thinking: ")
				p.inThinking = true
			}
			fmt.Fprint(p.w, e.Stream.Delta)
		case providers.StreamThinkingEnd:
			if p.inThinking {
				p.endText()
			}
		case providers.StreamTextDelta:
			if !p.inText {
				p.endText()
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

// endText ends the line of streamed text or reasoning, if one is open.
func (p *Printer) endText() {
	if p.inThinking && p.dim {
		fmt.Fprint(p.w, dimOff)
	}
	if p.inText || p.inThinking {
		fmt.Fprintln(p.w)
		p.inText, p.inThinking = false, false
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
