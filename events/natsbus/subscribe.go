package natsbus

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentloop/agentloop/events"
)

// Subscription delivers a run's events until stopped.
type Subscription struct {
	cc  jetstream.ConsumeContext
	mu  sync.Mutex
	seq sequencer
}

// MaxGap is the largest jump in sequence a subscriber accepts: events lost
// by a publisher leave gaps, but a message that claims to be far ahead of
// the run (a forged one) would silence the subscriber, so it is skipped and
// counted (Bad) instead. A smaller jump is delivered, and undone if the
// run's sequence then goes on from before it (see Bad).
const MaxGap = 1 << 16

// Subscribe delivers the run's events from sequence from (1 for all of
// them), in order and each once, to h, on a goroutine of the NATS client:
// first what the stream holds, then live. h must not block for long.
//
// It reads with an ordered consumer, which JetStream recreates after
// reconnects and server restarts, and drops anything at or below the last
// sequence it delivered; a sequence that jumps is judged as MaxGap says.
func (b *Bus) Subscribe(ctx context.Context, runID string, from uint64, h func(seq uint64, e events.Event)) (*Subscription, error) {
	if err := CheckRunID(runID); err != nil {
		return nil, err
	}
	c, err := b.js.OrderedConsumer(ctx, b.stream, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{b.EventsSubject(runID)},
		DeliverPolicy:  jetstream.DeliverAllPolicy,
	})
	if err != nil {
		return nil, fmt.Errorf("natsbus: subscribe %s: %w", runID, err)
	}
	s := &Subscription{seq: sequencer{last: max(from, 1) - 1}}
	s.cc, err = c.Consume(func(m jetstream.Msg) {
		seq, err := strconv.ParseUint(m.Headers().Get(HeaderSeq), 10, 64)
		s.mu.Lock()
		defer s.mu.Unlock()
		if err != nil {
			s.seq.bad++
			return
		}
		e, err := events.Unmarshal(m.Data())
		if err != nil {
			if seq > s.seq.last {
				s.seq.bad++
			}
			return
		}
		if s.seq.accept(seq) {
			h(seq, e)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("natsbus: subscribe %s: %w", runID, err)
	}
	return s, nil
}

// Bad reports how many messages broke the run's sequence: undecodable or
// unnumbered ones and those too far ahead (skipped), and jumps the run's
// own events then contradicted (a forged message that was delivered before
// the genuine sequence showed it up; the sequence passed to the handler
// then goes back to the run's).
func (s *Subscription) Bad() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq.bad
}

// Last reports the sequence number of the last event delivered.
func (s *Subscription) Last() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.seq.last
}

// Stop ends the subscription.
func (s *Subscription) Stop() { s.cc.Stop() }
