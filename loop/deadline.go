package loop

import (
	"context"
	"sync"
	"time"

	"github.com/agentloop/agentloop/tools"
)

// timeout is the bound on one run of t's body, and whether it was set (the
// tool's own Timeout, or Limits.ToolTimeout) rather than the default. A
// set bound of 0 is NoLimit.
func (r *run) timeout(t *tools.Tool) (d time.Duration, set bool) {
	for _, d := range [2]time.Duration{t.Timeout(), r.cfg.Limits.ToolTimeout} {
		switch {
		case d > 0:
			return d, true
		case d < 0:
			return 0, true
		}
	}
	return DefaultToolTimeout, false
}

// deadlines hands the bodies under the default timeout d a context that
// ends at least d and at most d+d/16 after they start: one context serves
// every body that starts while its deadline is at least d away, so the
// default costs a timer every d/16 of a run's time, not a timer (nor a
// goroutine) per call. Bodies in parallel share it under its lock.
type deadlines struct {
	mu    sync.Mutex
	ctx   context.Context
	renew time.Time // the last start ctx serves
	live  []deadline
}

type deadline struct {
	ctx    context.Context
	cancel context.CancelFunc
}

func (dl *deadlines) get(parent context.Context, d time.Duration) context.Context {
	now := time.Now()
	dl.mu.Lock()
	defer dl.mu.Unlock()
	if dl.ctx != nil && !now.After(dl.renew) {
		return dl.ctx
	}
	ctx, cancel := context.WithDeadline(parent, now.Add(d+d/16))
	// A context whose deadline passed has released its timer; the others
	// may still serve a body of this batch, so they stay until the run ends.
	kept := dl.live[:0]
	for _, l := range dl.live {
		if l.ctx.Err() == nil {
			kept = append(kept, l)
		}
	}
	dl.live = append(kept, deadline{ctx, cancel})
	dl.ctx, dl.renew = ctx, now.Add(d/16)
	return ctx
}

// release ends the contexts at the end of the run.
func (dl *deadlines) release() {
	dl.mu.Lock()
	defer dl.mu.Unlock()
	for _, l := range dl.live {
		l.cancel()
	}
	dl.live, dl.ctx = nil, nil
}
