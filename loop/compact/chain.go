package compact

import (
	"context"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
)

// Chain runs strategies one after the other, each on what the one before
// would send, and reports what they did as one event. Summarize runs first
// wherever it stands (its summary stands for the transcript's messages, not
// for another strategy's selection), so Chain(Summarize{},
// ShortenResults{}) and Chain(ShortenResults{}, Summarize{}) send the same;
// a second Summarize in a chain only trims. What the chain sends is checked
// against the smallest window of its strategies and trimmed if it still
// does not fit (and, with ShortenResults in the chain, the newest results
// shortened if they alone do not). The common case:
//
//	compact.Chain(compact.Summarize{}, compact.ShortenResults{OlderThan: 4})
func Chain(strategies ...loop.Compactor) loop.Compactor {
	var c chain
	summarized := false
	for _, s := range strategies {
		switch v := s.(type) {
		case Summarize:
			if summarized {
				c = append(c, v.trimmer())
				continue
			}
			summarized = true
			c = append(chain{v}, c...)
		case *Summarize:
			if v == nil || summarized {
				if v != nil {
					c = append(c, v.trimmer())
				}
				continue
			}
			summarized = true
			c = append(chain{*v}, c...)
		case nil:
		default:
			c = append(c, s)
		}
	}
	return c
}

type chain []loop.Compactor

// Compact implements loop.Compactor.
func (c chain) Compact(ctx context.Context, in loop.CompactInput) (loop.CompactOutput, error) {
	var out loop.CompactOutput
	var ev *events.Compacted
	view, w, keep := in.Transcript, 0, 0
	for _, s := range c {
		step := in
		step.Transcript = view
		var o loop.CompactOutput
		var err error
		if v, ok := s.(viewer); ok {
			o, err = v.view(ctx, step)
			if sw := v.windowOf(in); sw > 0 && (w == 0 || sw < w) {
				w = sw
			}
			if r, ok := s.(ShortenResults); ok && keep == 0 {
				keep = r.keep()
			} else if r, ok := s.(*ShortenResults); ok && keep == 0 {
				keep = r.keep()
			}
		} else {
			step.Transcript = finish(view) // a strategy of another package reads requests
			o, err = s.Compact(ctx, step)
		}
		if err != nil {
			return loop.CompactOutput{}, err
		}
		if out.Store == nil {
			out.Store = o.Store
		}
		if o.Send != nil {
			view = o.Send
		}
		ev = merge(ev, o.Event)
	}
	out.Send, out.Event = view, ev
	return fit(in, out, w, keep), nil
}

// merge adds what one strategy did to what the chain did so far.
func merge(ev, e *events.Compacted) *events.Compacted {
	if e == nil {
		return ev
	}
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
	return ev
}
