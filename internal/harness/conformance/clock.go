package conformance

import (
	"context"
	"sync"
	"time"
)

// clock is the scripted tools' virtual clock. A body that "sleeps" waits
// for the clock to reach its wake-up time, and the clock moves only when
// nothing else can happen: every body of the batch is either asleep or
// finished (its tool_execution_end published). It then wakes the sleeper
// due first.
//
// So bodies end in the order of their scripted delays, however busy the
// machine is and however the scheduler interleaves the bodies' goroutines,
// and a scenario takes no real time. Bodies due at the same instant wake
// one after another in no particular order, as the comparison rules allow.
//
// The clock learns what is outstanding from the loop's events: a call is
// outstanding from its tool_execution_start to its tool_execution_end. The
// loop publishes every start of a parallel batch (and the end of every call
// its preflight refuses) before any body runs, so a body that has not yet
// been scheduled is already counted.
type clock struct {
	mu          sync.Mutex
	now         time.Duration
	outstanding int
	sleepers    []*sleeper
}

type sleeper struct {
	at   time.Duration
	wake chan struct{}
}

// started and ended follow the loop's tool events.
func (c *clock) started() {
	c.mu.Lock()
	c.outstanding++
	c.mu.Unlock()
}

func (c *clock) ended() {
	c.mu.Lock()
	c.outstanding--
	c.advance()
	c.mu.Unlock()
}

// sleep waits until the clock has moved d past now, or ctx is done; it
// reports whether the full time passed.
func (c *clock) sleep(ctx context.Context, d time.Duration) bool {
	c.mu.Lock()
	s := &sleeper{at: c.now + d, wake: make(chan struct{})}
	c.sleepers = append(c.sleepers, s)
	c.advance()
	c.mu.Unlock()
	select {
	case <-s.wake:
		return true
	case <-ctx.Done():
		c.mu.Lock()
		defer c.mu.Unlock()
		for i, o := range c.sleepers {
			if o == s {
				c.sleepers = append(c.sleepers[:i], c.sleepers[i+1:]...)
				return false
			}
		}
		return true // woken at the same moment: the sleep was over
	}
}

// advance wakes the first sleeper when every outstanding call sleeps.
// The caller holds c.mu.
func (c *clock) advance() {
	if len(c.sleepers) == 0 || len(c.sleepers) < c.outstanding {
		return
	}
	first := 0
	for i, s := range c.sleepers {
		if s.at < c.sleepers[first].at {
			first = i
		}
	}
	s := c.sleepers[first]
	c.sleepers = append(c.sleepers[:first], c.sleepers[first+1:]...)
	c.now = s.at
	close(s.wake)
}
