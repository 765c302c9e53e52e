package natsbus_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/events/natsbus"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
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
	sub, err := srv.connect(t).Subscribe(context.Background(), run, 1, col.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Stop()
	a, pub := worker(t, srv.connect(t), run, release, started)
	if err := a.Prompt(context.Background(), providers.NewUserText("go")); err != nil {
		t.Fatal(err)
	}
	first := pub.Seq()
	if err := pub.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	b, pub2 := worker(t, srv.connect(t), run, release, make(chan struct{})) // the restarted worker
	if err := b.Prompt(context.Background(), providers.NewUserText("again")); err != nil {
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
	bus := srv.connect(t)
	for _, id := range []string{"", "x/y", "a\x00b", "a.b", "a b", strings.Repeat("r", natsbus.MaxIDLength+1)} {
		if natsbus.CheckRunID(id) == nil {
			t.Errorf("%.20q accepted", id)
		}
		if _, err := bus.Publisher(context.Background(), id, natsbus.PublisherOptions{}); err == nil {
			t.Errorf("Publisher accepted %.20q", id)
		}
		if err := bus.Send(context.Background(), id, natsbus.Command{Type: natsbus.CommandAbort}); err == nil {
			t.Errorf("Send accepted %.20q", id)
		}
		if _, err := bus.Serve(context.Background(), "run", id, func(natsbus.Command) {}); err == nil {
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
	bus := srv.connect(t)
	got := map[string][]string{}
	var mu sync.Mutex
	arrived := make(chan struct{}, 2)
	serve := func(run, w string) func() {
		stop, err := bus.Serve(context.Background(), run, w, func(c natsbus.Command) {
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
		if err := bus.Send(context.Background(), run, natsbus.Command{Type: natsbus.CommandSteer, Text: "for " + run}); err != nil {
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

// TestPublishNeverBlocksTheRun: an event too large even with its strings
// cut fails at once; with the
// server gone for longer than the retry window, Publish still returns at
// once and Close reports every event that could not be published, the
// agent_end included, by name.
func TestPublishNeverBlocksTheRun(t *testing.T) {
	srv := startServer(t)
	bus := srv.connect(t)
	var logs syncBuffer
	pub, err := bus.Publisher(context.Background(), "run-bounded", natsbus.PublisherOptions{RetryFor: 100 * time.Millisecond, MaxEventBytes: 4096, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	many := make([]providers.Message, 500)
	for i := range many {
		many[i] = providers.NewUserText("x")
	}
	pub.Handle(context.Background(), events.AgentEnd{Messages: many})
	if pub.Failed() != 1 || !strings.Contains(logs.String(), "MaxEventBytes") {
		t.Fatalf("an oversized event: %d failed, log %q", pub.Failed(), logs.String())
	}
	srv.stop()
	returned := make(chan struct{})
	go func() {
		for _, e := range []events.Event{events.TurnStart{}, events.AgentEnd{}} {
			pub.Handle(context.Background(), e)
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

// TestOversizedEventsAreTrimmed: events over MaxEventBytes (a tool's
// large output, a long answer) arrive, in sequence, with their longest
// strings cut to fit and marked, flagged by a header; the run's own events
// keep everything.
func TestOversizedEventsAreTrimmed(t *testing.T) {
	srv := startServer(t)
	js := srv.jetstream(t)
	bus := newBus(t, js, natsbus.Options{})
	run := "run-trimmed"
	pub, err := bus.Publisher(context.Background(), run, natsbus.PublisherOptions{MaxEventBytes: 64 << 10, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer pub.Close(context.Background())
	var raw sync.Map // seq -> message
	sub, err := js.OrderedConsumer(context.Background(), natsbus.DefaultStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{bus.EventsSubject(run)}})
	if err != nil {
		t.Fatal(err)
	}
	stored := make(chan struct{}, 16)
	cc, err := sub.Consume(func(m jetstream.Msg) {
		raw.Store(m.Headers().Get(natsbus.HeaderSeq), m)
		stored <- struct{}{}
	})
	if err != nil {
		t.Fatal(err)
	}
	defer cc.Stop()
	col := newCollector(1)
	s, err := bus.Subscribe(context.Background(), run, 1, col.handle)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	output := strings.Repeat("line of output\n", 20000) // 300 KB
	answer := providers.AssistantMessage{Content: []providers.Content{providers.Text{Text: strings.Repeat("é", 100000)}}, StopReason: providers.StopReasonStop}
	end := events.ToolExecutionEnd{ToolCallID: "c1", ToolName: "run", Result: tools.TextResult(output)}
	pub.Handle(context.Background(), events.AgentStart{})
	pub.Handle(context.Background(), end)
	pub.Handle(context.Background(), events.MessageEnd{Message: answer})
	pub.Handle(context.Background(), events.AgentEnd{Messages: []providers.Message{answer}})
	col.wait(t)
	col.contiguous(t, 1)
	for range 4 { // the raw consumer is apart from the subscriber: wait for it too
		<-stored
	}
	if pub.Failed() != 0 || pub.Trimmed() != 3 || len(col.types) != 4 {
		t.Fatalf("failed %d, trimmed %d, delivered %v", pub.Failed(), pub.Trimmed(), col.types)
	}
	for seq := 2; seq <= 4; seq++ {
		v, _ := raw.Load(fmt.Sprint(seq))
		m, _ := v.(jetstream.Msg)
		if m == nil || len(m.Data()) > 64<<10 || m.Headers().Get(natsbus.HeaderTrimmed) == "" {
			t.Fatalf("event %d: not trimmed to fit, or not flagged", seq)
		}
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	got := col.msgs[0].(providers.AssistantMessage).Text()
	if !utf8.ValidString(got) || !strings.HasPrefix(got, "éé") || !strings.Contains(got, "bytes cut: the event was over the bus's size limit]") {
		t.Fatalf("the trimmed answer: %.80q…", got)
	}
	if answer.Text() != strings.Repeat("é", 100000) || providers.TextOf(end.Result.Content) != output {
		t.Fatal("the run's own events changed")
	}
}

// TestForgedSequenceDoesNotSilence: a message claiming a sequence ahead of
// the run, in the middle of it or as the first message a subscriber sees,
// never silences the subscriber: far ahead it is skipped, a little ahead it
// is delivered until the run's own sequence shows it up; either way it is
// counted, and every event of the run is delivered, in order, once.
// (Forged before the publisher starts, it makes the publisher continue from
// it: numbers jump, nothing is lost.)
func TestForgedSequenceDoesNotSilence(t *testing.T) {
	srv := startServer(t)
	js := srv.jetstream(t)
	bus := newBus(t, js, natsbus.Options{})
	forge := func(run, seq string) {
		forged := nats.NewMsg(bus.EventsSubject(run))
		forged.Data = []byte(`{"type":"turn_start"}`)
		forged.Header.Set(natsbus.HeaderSeq, seq)
		if _, err := js.PublishMsg(context.Background(), forged); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		name, seq string
		first     bool // forged before the run's first event
		delivered int  // of the forged ones
		bad       uint64
		want      []uint64
	}{
		{"far ahead mid-run", "999999999999", false, 0, 1, []uint64{1, 2, 3, 4}},
		{"a little ahead mid-run", "40", false, 1, 1, []uint64{1, 2, 3, 4}},
		{"far ahead, first", "999999999999", true, 1, 1, []uint64{1, 2, 3, 4}},
		{"a little ahead, first", "9", true, 1, 1, []uint64{1, 2, 3, 4}},
		{"before the publisher starts", "999", false, 1, 0, []uint64{1000, 1001, 1002, 1003}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			run := "run-forged-" + strings.ReplaceAll(tt.name, " ", "-")
			run = strings.ReplaceAll(run, ",", "")
			if tt.want[0] != 1 {
				forge(run, tt.seq)
			}
			pub, err := bus.Publisher(context.Background(), run, natsbus.PublisherOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if tt.first {
				forge(run, tt.seq)
			}
			defer pub.Close(context.Background())
			col := newCollector(1)
			sub, err := bus.Subscribe(context.Background(), run, 1, col.handle)
			if err != nil {
				t.Fatal(err)
			}
			defer sub.Stop()
			pub.Handle(context.Background(), events.AgentStart{})
			if !tt.first && tt.want[0] == 1 {
				waitFor(t, func() bool { return sub.Last() == 1 })
				forge(run, tt.seq)
			}
			pub.Handle(context.Background(), events.TurnStart{})
			pub.Handle(context.Background(), events.TurnStart{})
			pub.Handle(context.Background(), events.AgentEnd{})
			col.wait(t)
			if sub.Bad() != tt.bad {
				t.Fatalf("bad %d, want %d", sub.Bad(), tt.bad)
			}
			col.mu.Lock()
			defer col.mu.Unlock()
			var genuine []uint64
			for _, s := range col.seqs {
				if fmt.Sprint(s) != tt.seq {
					genuine = append(genuine, s)
				}
			}
			if !slices.Equal(genuine, tt.want) || len(col.seqs) != 4+tt.delivered {
				t.Fatalf("delivered %v: the run's own %v in order, and %d forged", col.seqs, tt.want, tt.delivered)
			}
		})
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
