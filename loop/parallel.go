package loop

import (
	"golang.org/x/sync/errgroup"

	"github.com/agentloop/agentloop/providers"
)

// runTogether runs the prepared calls' bodies at once, each on a goroutine
// of an errgroup, bounded only by MaxParallelTools. No body waits for
// another body or for a timer to start. Each end event goes out as soon as
// its body and the after-call hook have finished; the caller appends the
// result messages in call order once every body is done.
//
// No body returns an error to the group: one failing body must not cancel
// its siblings.
func (r *run) runTogether(a providers.AssistantMessage, prepared []*call) {
	var g errgroup.Group
	inline := prepared[len(prepared)-1]
	if r.cfg.Limits.MaxParallelTools > 0 {
		g.SetLimit(r.cfg.Limits.MaxParallelTools)
		inline = nil
	}
	for _, c := range prepared {
		if c == inline {
			break
		}
		g.Go(func() error {
			r.finish(a, c)
			return nil
		})
	}
	if inline != nil {
		// With no limit, the last body runs on this goroutine, which would
		// otherwise only wait: it starts as the others do, right after them.
		r.finish(a, inline)
	}
	_ = g.Wait()
}

// finish runs a prepared call's body and publishes its end.
func (r *run) finish(a providers.AssistantMessage, c *call) {
	r.execute(a, c)
	r.emitEnd(c)
}
