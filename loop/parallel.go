package loop

import (
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/agentloop/agentloop/providers"
)

// startStagger is how long a body may run before the next one starts;
// see runTogether.
const startStagger = 2 * time.Millisecond

// runTogether runs the prepared calls' bodies together under an errgroup.
// No body returns an error to the group: one failing body must not cancel
// its siblings.
//
// Bodies start in call order, each when the previous one has returned or
// has run for startStagger, whichever comes first (sooner, if hand-overs
// ran late and the batch is behind a schedule of one start every
// startStagger). Bodies that wait on anything (I/O, timers, other
// goroutines) therefore run together, started startStagger apart, so that
// bodies that wait equally long end in call order, as in the reference.
// Bodies that return at once run one after another on the goroutine
// already running, with no hand-off between goroutines: a body that
// outlives startStagger keeps its goroutine, and the group takes the
// bodies after it on a new one.
//
// Each end event goes out when its body finishes, except during the start
// phase: a body that returns before every body has started has its end
// held until then, and the held ends go out in call order. That is the
// reference's order, where every body runs its synchronous part (its first
// updates, say) before any end is published.
//
// With MaxParallelTools set, every body has a goroutine of the group's,
// at most that many at once, and nothing is held.
func (r *run) runTogether(a providers.AssistantMessage, prepared []*call) {
	b := batch{r: r, a: a, calls: prepared, starting: true, held: r.spare(2), start: time.Now()}
	if r.cfg.MaxParallelTools > 0 {
		b.g.SetLimit(r.cfg.MaxParallelTools)
		b.starting = false
		for _, c := range prepared {
			b.g.Go(func() error {
				r.execute(a, c)
				b.finish(c)
				return nil
			})
		}
	} else {
		b.drive(0)
	}
	_ = b.g.Wait()
}

// batch is one message's prepared calls running together.
type batch struct {
	r     *run
	a     providers.AssistantMessage
	calls []*call
	g     errgroup.Group

	start time.Time // when the first body started

	mu       sync.Mutex
	starting bool    // not every body has started yet: ends are held
	held     []*call // ends held during the start phase
}

// due returns when body i must start at the latest, after the batch's
// start, given that body i-1 started at prev: startStagger after it, or
// earlier if hand-overs ran late and body i is behind the batch's schedule
// of one start every startStagger. Lateness does not add up.
func due(i int, prev time.Duration) time.Duration {
	return min(prev+startStagger, time.Duration(i)*startStagger)
}

// finish publishes c's end, or holds it during the start phase.
func (b *batch) finish(c *call) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.starting {
		b.held = append(b.held, c)
		return
	}
	b.r.emitEnd(c)
}

// allStarted ends the start phase: the held ends go out in call order.
func (b *batch) allStarted() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.starting = false
	slices.SortFunc(b.held, func(x, y *call) int { return x.index - y.index })
	for _, c := range b.held {
		b.r.emitEnd(c)
	}
	b.held = b.held[:0]
}

// The states of the body a driver is running.
const (
	bodyRunning  = iota
	bodyReturned // returned within startStagger: the driver goes on
	bodyOutlived // ran past startStagger: the next bodies went elsewhere
)

// driver starts bodies one after another on one goroutine; see drive. One
// timer watches all the bodies it runs: bodies that return at once cost a
// clock reading each, not a timer.
type driver struct {
	b     *batch
	timer *time.Timer

	mu    sync.Mutex
	cur   int           // index of the body running, or of the last one
	since time.Duration // when it started, after the batch's start
	state int
	done  bool // the driver has left; the timer must not fire again
}

// drive runs the bodies from i on, one after another on this goroutine,
// until one outlives startStagger: the group takes the bodies after it,
// and this goroutine only finishes the one it is running.
func (b *batch) drive(i int) {
	d := &driver{b: b}
	defer d.leave()
	for ; i < len(b.calls); i++ {
		d.mu.Lock()
		d.cur, d.state, d.since = i, bodyRunning, time.Since(b.start) // a monotonic reading only
		d.mu.Unlock()
		if d.timer == nil { // a driver taking over late may have to hand over at once
			d.timer = time.AfterFunc(due(i+1, d.since)-d.since, d.watch)
		}
		c := b.calls[i]
		b.r.execute(b.a, c)
		d.mu.Lock()
		goOn := d.state == bodyRunning
		if goOn {
			d.state = bodyReturned
		}
		d.mu.Unlock()
		b.finish(c)
		if !goOn {
			return
		}
		if i == len(b.calls)-1 {
			b.allStarted()
		}
	}
}

func (d *driver) leave() {
	d.mu.Lock()
	d.done = true
	d.mu.Unlock()
	if d.timer != nil {
		d.timer.Stop()
	}
}

// watch runs when the timer fires. When the next body is due, the next
// bodies start on a new goroutine of the group; otherwise the timer is set
// for when it will be. It holds d.mu while handing over, so the driver,
// which takes d.mu once its body returns, cannot leave before the group
// counts the new goroutine.
func (d *driver) watch() {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.done, d.state == bodyOutlived:
		return
	case d.state == bodyReturned: // between two bodies
		d.timer.Reset(startStagger)
		return
	}
	next := d.cur + 1
	if now, at := time.Since(d.b.start), due(next, d.since); now < at {
		d.timer.Reset(at - now)
		return
	}
	d.state = bodyOutlived
	if next == len(d.b.calls) {
		d.b.allStarted()
		return
	}
	d.b.g.Go(func() error { d.b.drive(next); return nil })
}
