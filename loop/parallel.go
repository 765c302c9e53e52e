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
	if r.cfg.MaxParallelTools > 0 {
		g.SetLimit(r.cfg.MaxParallelTools)
	}
	for _, c := range prepared {
		g.Go(func() error {
			r.execute(a, c)
			r.emitEnd(c)
			return nil
		})
	}
	_ = g.Wait()
}
