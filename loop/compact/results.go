package compact

import (
	"context"
	"fmt"
	"math"
	"unicode/utf8"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
)

// ShortenResults cuts tool results in a request down to their head and
// tail, with a marker saying how much of which call's result was cut: the
// results older than OlderThan assistant turns, and any larger than
// MaxBytes. The transcript keeps them whole. When what is left still does
// not fit the window, it is trimmed (as by Trim), and the event says so.
type ShortenResults struct {
	// Window is the tokens a request's messages may hold; 0 means the
	// model's context window less its output reserve, system prompt and
	// tools.
	Window int
	// OlderThan is how many of the newest assistant turns keep their
	// results whole; 0 means 4.
	OlderThan int
	// MaxBytes bounds any result's text in a request; 0 means 16 KiB.
	MaxBytes int
	// Keep is how many bytes of a shortened result's head and of its tail
	// stay; 0 means 256.
	Keep int
}

// Compact implements loop.Compactor.
func (s ShortenResults) Compact(ctx context.Context, in loop.CompactInput) (loop.CompactOutput, error) {
	out, err := s.view(ctx, in)
	if err != nil {
		return out, err
	}
	return fit(in, out, s.windowOf(in), s.keep()), nil
}

func (s ShortenResults) keep() int {
	if s.Keep <= 0 {
		return 256
	}
	return s.Keep
}

func (s ShortenResults) windowOf(in loop.CompactInput) int { return window(in, s.Window) }

// view shortens the results of the view in in.Transcript.
func (s ShortenResults) view(_ context.Context, in loop.CompactInput) (loop.CompactOutput, error) {
	older, maxBytes, keep := s.OlderThan, s.MaxBytes, s.Keep
	if older <= 0 {
		older = 4
	}
	if maxBytes <= 0 {
		maxBytes = 16 << 10
	}
	if keep <= 0 {
		keep = 256
	}
	var send []providers.Message
	shortened, saved := 0, 0
	turns := 0
	for i := len(in.Transcript) - 1; i >= 0; i-- {
		m := in.Transcript[i]
		switch m := m.(type) {
		case providers.AssistantMessage:
			turns++
		case providers.ToolResultMessage:
			if n := textBytes(m.Content); turns >= older && n > 2*keep+64 || n > maxBytes {
				if send == nil {
					send = append([]providers.Message(nil), in.Transcript...)
				}
				send[i] = shorten(m, keep)
				saved += Tokens(m) - Tokens(send[i])
				shortened++
			}
		}
	}
	if shortened == 0 {
		return loop.CompactOutput{}, nil
	}
	giveUp := math.MaxInt
	if w := s.windowOf(in); w > 0 {
		giveUp = 2 * w
	}
	before := estimateUpTo(in.Transcript, giveUp)
	return loop.CompactOutput{Send: send, Event: &events.Compacted{Strategy: "shorten-results", Before: before,
		After: before - saved, Shortened: shortened}}, nil
}

// shorten keeps a result's head and tail, marking the cut; its images go.
func shorten(m providers.ToolResultMessage, keep int) providers.ToolResultMessage {
	text := m.Text()
	head, tail := text[:keep], text[len(text)-keep:]
	for len(head) > 0 && !utf8.ValidString(head) {
		head = head[:len(head)-1]
	}
	for len(tail) > 0 && !utf8.ValidString(tail) {
		tail = tail[1:]
	}
	cut := len(text) - len(head) - len(tail)
	m.Content = []providers.Content{providers.Text{Text: fmt.Sprintf("%s\n[… %d bytes of the result of call %s cut to fit the context window …]\n%s", head, cut, m.ToolCallID, tail)}}
	return m
}

// textBytes is the length of a result's text, without putting it together.
func textBytes(content []providers.Content) int {
	n := 0
	for _, c := range content {
		if t, ok := c.(providers.Text); ok {
			n += len(t.Text)
		}
	}
	return n
}
