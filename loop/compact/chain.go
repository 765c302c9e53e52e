package compact

import (
	"context"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
)

// Chain runs strategies in order, each on what the one before would send,
// and reports what they did as one event. A strategy that stores a summary
// (Summarize) must come first: its summary stands for the transcript's
// messages, not for another strategy's selection. ShortenResults goes last,
// so that it reads only what is sent.
func Chain(strategies ...loop.Compactor) loop.Compactor { return chain(strategies) }

type chain []loop.Compactor

// Compact implements loop.Compactor.
func (c chain) Compact(ctx context.Context, in loop.CompactInput) (loop.CompactOutput, error) {
	var out loop.CompactOutput
	var ev *events.Compacted
	for i, s := range c {
		o, err := s.Compact(ctx, in)
		if err != nil {
			return loop.CompactOutput{}, err
		}
		if i == 0 {
			out.Store = o.Store
		}
		if o.Send != nil {
			out.Send, in.Transcript = o.Send, o.Send
		}
		if e := o.Event; e != nil {
			if ev == nil {
				ev = &events.Compacted{Before: e.Before}
			} else {
				ev.Strategy += "+"
			}
			ev.Strategy += e.Strategy
			ev.After = e.After
			ev.Dropped += e.Dropped
			ev.Shortened += e.Shortened
			ev.Summarized += e.Summarized
			if e.Note != "" {
				if ev.Note != "" {
					ev.Note += "; "
				}
				ev.Note += e.Note
			}
		}
	}
	out.Event = ev
	return out, nil
}
