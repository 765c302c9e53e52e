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
// NewWith takes Options: HideThinking leaves the reasoning out. Control
// characters in what the model, tools and servers wrote (escape
// sequences, carriage returns) are printed as U+FFFD, never sent to the
// terminal.
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
			fmt.Fprint(p.w, clean(e.Stream.Delta))
		case providers.StreamThinkingEnd:
			if p.inThinking {
				p.endText()
			} else if !p.opts.HideThinking {
				p.wholeThinking(e.Stream)
			}
		case providers.StreamTextDelta:
			if !p.inText {
				p.endText()
				fmt.Fprint(p.w, "assistant: ")
				p.inText = true
			}
			fmt.Fprint(p.w, clean(e.Stream.Delta))
		}
	case events.MessageEnd:
		p.endText()
		if a, ok := e.Message.(providers.AssistantMessage); ok && a.ErrorMessage != "" {
			fmt.Fprintf(p.w, "assistant stopped (%s): %s\n", a.StopReason, clean(a.ErrorMessage))
		}
	case events.ToolExecutionStart:
		p.endText()
		p.started[e.ToolCallID] = time.Now()
		fmt.Fprintf(p.w, "  → %s %s\n", clean(e.ToolName), clean(compact(e.Args)))
	case events.ToolExecutionEnd:
		p.endText()
		d := time.Since(p.started[e.ToolCallID]).Round(time.Millisecond)
		mark := "✓"
		if e.IsError {
			mark = "✗"
		}
		fmt.Fprintf(p.w, "  %s %s (%v): %s\n", mark, clean(e.ToolName), d, summary(clean(providers.TextOf(e.Result.Content))))
	case events.Compacted:
		p.endText()
		fmt.Fprintf(p.w, "  [compacted (%s): ~%d → ~%d tokens; %d dropped, %d shortened, %d summarised%s]\n",
			clean(e.Strategy), e.Before, e.After, e.Dropped, e.Shortened, e.Summarized, clean(noteOf(e.Note)))
	case events.ToolsChanged:
		p.endText()
		if len(e.Added)+len(e.Removed) > 0 {
			fmt.Fprintf(p.w, "  tools changed: +%v -%v\n", clean(fmt.Sprint(e.Added)), clean(fmt.Sprint(e.Removed)))
		}
		if len(e.Hidden) > 0 {
			fmt.Fprintf(p.w, "  tools hidden by others of the same name: %v\n", clean(fmt.Sprint(e.Hidden)))
		}
	}
}

// wholeThinking prints a reasoning block that ended without deltas: its
// whole text, or a line saying the provider sent it encrypted only.
func (p *Printer) wholeThinking(ev providers.StreamEvent) {
	text := clean(ev.Content)
	if text == "" {
		m := ev.Partial()
		if m == nil || ev.ContentIndex >= len(m.Content) {
			return
		}
		th, ok := m.Content[ev.ContentIndex].(providers.Thinking)
		if !ok || !th.Redacted {
			return
		}
		text = "(redacted by the provider)"
	}
	p.endText()
	if p.dim {
		text = dimOn + "thinking: " + text + dimOff
	} else {
		text = "thinking: " + text
	}
	fmt.Fprintln(p.w, text)
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

// clean makes text from outside (the model, tools, servers) safe to
// print: control characters other than newline and tab, which could move
// the cursor, rewrite lines or send terminal commands (escape sequences),
// print as U+FFFD.
func clean(s string) string {
	if !strings.ContainsFunc(s, isControl) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if isControl(r) {
			return '\uFFFD'
		}
		return r
	}, s)
}

func isControl(r rune) bool {
	return (r < 0x20 && r != '\n' && r != '\t') || (r >= 0x7f && r <= 0x9f)
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
