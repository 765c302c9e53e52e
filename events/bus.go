package events

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// Handler receives events: a Bus's subscriber, or the function a run
// publishes to (see loop.Run), which calls it from one goroutine at a time,
// in the run's order, with the run's context. A consumer of events offers
// its Handler as a method named Handle: Bus.Handle here, term.Printer,
// sse.Broker and natsbus.Publisher in their packages.
type Handler func(ctx context.Context, e Event)

// Bus delivers events to subscribers. Handle calls every handler in
// subscription order before it returns, and publishes one event at a time,
// so every subscriber sees the same total order even when events are
// published from several goroutines. A handler that panics is logged and
// skipped; the other handlers still receive the event.
//
// The zero value is ready to use. A Bus must not be copied after first use.
type Bus struct {
	// Logger receives handler panics; nil means slog.Default().
	Logger *slog.Logger

	publish sync.Mutex                    // held for the whole of one Handle
	edit    sync.Mutex                    // serializes changes to subs
	subs    atomic.Pointer[[]*subscriber] // copy on write
	nextID  uint64
}

type subscriber struct {
	id uint64
	h  Handler
}

// Subscribe registers h and returns a function that removes it. The
// returned function may be called more than once, from any goroutine,
// including from inside a handler.
func (b *Bus) Subscribe(h Handler) (unsubscribe func()) {
	b.edit.Lock()
	b.nextID++
	s := &subscriber{id: b.nextID, h: h}
	var next []*subscriber
	if cur := b.subs.Load(); cur != nil {
		next = append(next, *cur...)
	}
	next = append(next, s)
	b.subs.Store(&next)
	b.edit.Unlock()
	var once sync.Once
	return func() { once.Do(func() { b.remove(s.id) }) }
}

func (b *Bus) remove(id uint64) {
	b.edit.Lock()
	defer b.edit.Unlock()
	cur := b.subs.Load()
	if cur == nil {
		return
	}
	next := make([]*subscriber, 0, len(*cur))
	for _, s := range *cur {
		if s.id != id {
			next = append(next, s)
		}
	}
	b.subs.Store(&next)
}

// Channel subscribes a channel with room for size events (at least 1), for a
// consumer on its own goroutine. When the channel is full, Handle waits for
// the consumer: backpressure, not loss. The wait ends when the consumer
// reads or calls the returned cancel function, which also closes the
// channel; a consumer that stops reading must call cancel, or the
// publishing run will wait for it.
func (b *Bus) Channel(size int) (<-chan Event, func()) {
	ch := make(chan Event, max(size, 1))
	done := make(chan struct{})
	unsubscribe := b.Subscribe(func(_ context.Context, e Event) {
		select {
		case ch <- e:
		case <-done:
		}
	})
	var once sync.Once
	cancel := func() {
		once.Do(func() {
			close(done) // release a Handle waiting on a full channel
			unsubscribe()
			// No Handle can be sending once we hold the publish lock and
			// the subscriber is gone.
			if b.publish.TryLock() {
				close(ch)
				b.publish.Unlock()
				return
			}
			// Called from a handler while a Handle is running: close
			// once that Handle is over.
			go func() {
				b.publish.Lock()
				close(ch)
				b.publish.Unlock()
			}()
		})
	}
	return ch, cancel
}

// Handle delivers e to every subscriber, in subscription order, and
// returns when all of them have it. It is a [Handler]. A handler must not
// publish on the same bus: publishing is one event at a time, so it would
// wait for itself.
func (b *Bus) Handle(ctx context.Context, e Event) {
	b.publish.Lock()
	defer b.publish.Unlock()
	subs := b.subs.Load()
	if subs == nil {
		return
	}
	for _, s := range *subs {
		b.deliver(ctx, s, e)
	}
}

func (b *Bus) deliver(ctx context.Context, s *subscriber, e Event) {
	defer func() {
		if r := recover(); r != nil {
			log := b.Logger
			if log == nil {
				log = slog.Default()
			}
			log.Error("agentloop: event handler panicked", "event", string(e.Type()),
				"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
		}
	}()
	s.h(ctx, e)
}

// Len reports the number of subscribers.
func (b *Bus) Len() int {
	if s := b.subs.Load(); s != nil {
		return len(*s)
	}
	return 0
}
