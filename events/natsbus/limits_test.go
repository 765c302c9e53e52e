package natsbus_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/events/natsbus"
	"github.com/agentloop/agentloop/providers"
)

// TestWorkerRestartContinuesTheSequence: a second worker for the same run
// id (a restart) continues the run's sequence, so a subscriber sees every
// event of both runs once, in order.
func TestWorkerRestartContinuesTheSequence(t *testing.T) {
	srv := startServer(t)
	run := "run-restart-worker"
	release, started := make(chan struct{}), make(chan struct{})
	close(release)
	col := newCollector(2)
	sub, err := natsbus.Subscribe(context.Background(), srv.connect(t), run, 1, col.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	a, pub := worker(t, srv.connect(t), run, release, started)
	if err := a.Prompt(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	first := pub.Seq()
	if err := pub.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, pub2 := worker(t, srv.connect(t), run, release, make(chan struct{})) // the restarted worker
	if err := b.Prompt(context.Background(), "again"); err != nil {
		t.Fatal(err)
	}
	col.wait(t)
	col.contiguous(t, 1)
	if got := uint64(len(col.seqs)); got != pub2.Seq() || pub2.Seq() <= first {
		t.Fatalf("delivered %d events; the runs published %d then up to %d", got, first, pub2.Seq())
	}
}

// TestIDsWorkEverywhereOrNowhere: one rule for run and worker ids, checked
// by every entry point; ids that used to pass one and fail another are
// refused by all.
func TestIDsWorkEverywhereOrNowhere(t *testing.T) {
	srv := startServer(t)
	js := srv.connect(t)
	for _, id := range []string{"", "x/y", "a\x00b", "a.b", "a b", strings.Repeat("r", natsbus.MaxIDLength+1)} {
		if natsbus.CheckRunID(id) == nil {
			t.Errorf("%.20q accepted", id)
		}
		if _, err := natsbus.NewPublisher(context.Background(), js, id, natsbus.PublisherOptions{}); err == nil {
			t.Errorf("NewPublisher accepted %.20q", id)
		}
		if err := natsbus.Send(context.Background(), js, id, natsbus.Command{Type: natsbus.CommandAbort}); err == nil {
			t.Errorf("Send accepted %.20q", id)
		}
		if _, err := natsbus.Serve(context.Background(), js, "run", id, func(natsbus.Command) {}); err == nil {
			t.Errorf("Serve accepted the worker %.20q", id)
		}
	}
	if natsbus.CheckRunID(strings.Repeat("r", natsbus.MaxIDLength)) != nil || natsbus.CheckRunID("Run_1-a") != nil {
		t.Error("a valid id was refused")
	}
}

// TestConsumersDoNotCollide: run "a" with worker "b-c" and run "a-b" with
// worker "c" used to share one consumer; each now gets its own commands.
func TestConsumersDoNotCollide(t *testing.T) {
	srv := startServer(t)
	js := srv.connect(t)
	got := map[string][]string{}
	var mu sync.Mutex
	arrived := make(chan struct{}, 2)
	serve := func(run, w string) func() {
		stop, err := natsbus.Serve(context.Background(), js, run, w, func(c natsbus.Command) {
			mu.Lock()
			got[run] = append(got[run], c.Text)
			mu.Unlock()
			arrived <- struct{}{}
		})
		if err != nil {
			t.Fatal(err)
		}
		return stop
	}
	defer serve("a", "b-c")()
	defer serve("a-b", "c")()
	for _, run := range []string{"a", "a-b"} {
		if err := natsbus.Send(context.Background(), js, run, natsbus.Command{Type: natsbus.CommandSteer, Text: "for " + run}); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		select {
		case <-arrived:
		case <-time.After(30 * time.Second):
			t.Fatal("a command did not arrive")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if strings.Join(got["a"], ",") != "for a" || strings.Join(got["a-b"], ",") != "for a-b" {
		t.Fatalf("commands went to %v", got)
	}
}

// TestPublishNeverBlocksTheRun: an oversized event fails at once; with the
// server gone for longer than the retry window, Publish still returns at
// once and Close reports every event that could not be published, the
// agent_end included, by name.
func TestPublishNeverBlocksTheRun(t *testing.T) {
	srv := startServer(t)
	js := srv.connect(t)
	var logs syncBuffer
	pub, err := natsbus.NewPublisher(context.Background(), js, "run-bounded", natsbus.PublisherOptions{RetryFor: 100 * time.Millisecond, MaxEventBytes: 4096})
	if err != nil {
		t.Fatal(err)
	}
	pub.Logger = slog.New(slog.NewTextHandler(&logs, nil))
	huge := events.MessageEnd{Message: providers.NewUserText(strings.Repeat("x", 10000))}
	pub.Publish(context.Background(), huge)
	if pub.Failed() != 1 || !strings.Contains(logs.String(), "MaxEventBytes") {
		t.Fatalf("an oversized event: %d failed, log %q", pub.Failed(), logs.String())
	}
	srv.stop()
	returned := make(chan struct{})
	go func() {
		for _, e := range []events.Event{events.TurnStart{}, events.AgentEnd{}} {
			pub.Publish(context.Background(), e)
		}
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(30 * time.Second): // it returns at once; the retry window alone is 100 ms per event
		t.Fatal("Publish waited for the server")
	}
	if err := pub.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if pub.Failed() != 3 || !strings.Contains(logs.String(), "event=agent_end") {
		t.Fatalf("%d failed; log %q", pub.Failed(), logs.String())
	}
}

// TestForgedSequenceDoesNotSilence: a message claiming a sequence far
// ahead of the run is skipped and counted, and the run's events after it
// are still delivered.
func TestForgedSequenceDoesNotSilence(t *testing.T) {
	srv := startServer(t)
	js := srv.connect(t)
	run := "run-forged"
	pub, err := natsbus.NewPublisher(context.Background(), js, run, natsbus.PublisherOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close(context.Background())
	col := newCollector(1)
	sub, err := natsbus.Subscribe(context.Background(), js, run, 1, col.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	pub.Publish(context.Background(), events.AgentStart{})
	waitFor(t, func() bool { return sub.Last() == 1 })
	forged := nats.NewMsg(natsbus.EventsSubject(run))
	forged.Data = []byte(`{"type":"turn_start"}`)
	forged.Header.Set(natsbus.HeaderSeq, "999999999999")
	if _, err := js.PublishMsg(context.Background(), forged); err != nil {
		t.Fatal(err)
	}
	pub.Publish(context.Background(), events.TurnStart{})
	pub.Publish(context.Background(), events.AgentEnd{})
	col.wait(t)
	col.contiguous(t, 1)
	if sub.Bad() != 1 || len(col.seqs) != 3 {
		t.Fatalf("bad %d, delivered %v", sub.Bad(), col.seqs)
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// syncBuffer is a bytes.Buffer safe for the publisher's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
