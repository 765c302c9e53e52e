package events

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestBusOrderAndUnsubscribe(t *testing.T) {
	var b Bus
	var log []string
	unA := b.Subscribe(func(_ context.Context, e Event) { log = append(log, "a:"+string(e.Type())) })
	b.Subscribe(func(_ context.Context, e Event) { log = append(log, "b:"+string(e.Type())) })
	b.Handle(context.Background(), AgentStart{})
	unA()
	unA() // idempotent
	b.Handle(context.Background(), TurnStart{})
	if got := strings.Join(log, ","); got != "a:agent_start,b:agent_start,b:turn_start" {
		t.Fatalf("deliveries %s", got)
	}
}

// TestBusTotalOrder publishes from many goroutines; every subscriber must
// see the same sequence.
func TestBusTotalOrder(t *testing.T) {
	var b Bus
	const subs, pubs, each = 4, 8, 200
	seqs := make([][]string, subs)
	for i := range subs {
		b.Subscribe(func(_ context.Context, e Event) {
			seqs[i] = append(seqs[i], e.(ToolExecutionStart).ToolCallID)
		})
	}
	var wg sync.WaitGroup
	for p := range pubs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				b.Handle(context.Background(), ToolExecutionStart{ToolCallID: string(rune('a'+p)) + string(rune(i))})
			}
		}()
	}
	wg.Wait()
	for i := 1; i < subs; i++ {
		if strings.Join(seqs[i], "|") != strings.Join(seqs[0], "|") {
			t.Fatalf("subscriber %d saw a different order", i)
		}
	}
	if len(seqs[0]) != pubs*each {
		t.Fatalf("%d deliveries", len(seqs[0]))
	}
}

func TestBusPanickingHandlerIsLogged(t *testing.T) {
	var buf bytes.Buffer
	b := Bus{Logger: slog.New(slog.NewTextHandler(&buf, nil))}
	got := 0
	b.Subscribe(func(context.Context, Event) { panic("handler exploded") })
	b.Subscribe(func(context.Context, Event) { got++ })
	b.Handle(context.Background(), AgentStart{})
	if got != 1 {
		t.Fatal("the handler after a panicking one did not receive the event")
	}
	if !strings.Contains(buf.String(), "handler exploded") || !strings.Contains(buf.String(), "agent_start") {
		t.Fatalf("log %q", buf.String())
	}
}

// TestChannelBackpressure: a full channel makes Handle wait for the
// consumer; nothing is dropped.
func TestChannelBackpressure(t *testing.T) {
	var b Bus
	ch, cancel := b.Channel(1)
	defer cancel()
	b.Handle(context.Background(), AgentStart{}) // fills the buffer
	published := make(chan struct{})
	go func() {
		b.Handle(context.Background(), TurnStart{})
		close(published)
	}()
	select {
	case <-published:
		t.Fatal("Handle returned while the channel was full")
	case <-time.After(50 * time.Millisecond): // wide margin: it must not return at all
	}
	if e := <-ch; e.Type() != TypeAgentStart {
		t.Fatalf("first %s", e.Type())
	}
	<-published
	if e := <-ch; e.Type() != TypeTurnStart {
		t.Fatalf("second %s", e.Type())
	}
}

// TestChannelCancelReleasesPublisher: cancelling a stalled channel
// subscription releases a waiting Handle and closes the channel.
func TestChannelCancelReleasesPublisher(t *testing.T) {
	var b Bus
	ch, cancel := b.Channel(1)
	b.Handle(context.Background(), AgentStart{})
	published := make(chan struct{})
	go func() {
		b.Handle(context.Background(), TurnStart{})
		close(published)
	}()
	cancel()
	<-published
	n := 0
	for range ch {
		n++
	}
	if n > 1 {
		t.Fatalf("%d events after cancel", n)
	}
	if b.Len() != 0 {
		t.Fatal("subscriber still registered")
	}
}

// TestChannelCancelFromHandler: a handler may cancel a channel while the
// Handle that called it runs. The channel keeps what it already had, closes
// once that Handle is over, and later events neither reach it nor panic
// on the closed channel.
func TestChannelCancelFromHandler(t *testing.T) {
	var b Bus
	ch, cancel := b.Channel(4)
	b.Subscribe(func(context.Context, Event) { cancel() })
	b.Handle(context.Background(), AgentStart{})
	b.Handle(context.Background(), TurnStart{})
	var got []Type
	timeout := time.After(10 * time.Second) // it closes at once
	for open := true; open; {
		select {
		case e, ok := <-ch:
			if open = ok; ok {
				got = append(got, e.Type())
			}
		case <-timeout:
			t.Fatalf("channel still open after %v", got)
		}
	}
	if len(got) != 1 || got[0] != TypeAgentStart {
		t.Fatalf("channel delivered %v, want only agent_start", got)
	}
}
