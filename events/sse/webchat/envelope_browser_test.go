package webchat_test

import (
	"context"
	"github.com/agentloop/agentloop/internal/harness/browser"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/events/sse"
	"github.com/agentloop/agentloop/events/sse/webchat"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
)

// headless starts headless Chromium for one test. Without Chromium the
// test is skipped and says so on stdout; in CI (CI set) it fails, since
// .ci/run installs the browser.
func headless(t *testing.T) context.Context {
	t.Helper()
	return browser.New(t)
}

// TestPageDropsASupersededAttempt drives the page in headless Chromium: the
// text a model attempt streamed disappears from the bubble when the next
// attempt starts, only the new attempt's text is shown, and a nested run's
// events on the same stream change nothing on the page (neither its text
// nor its end, which would mark the run idle).
func TestPageDropsASupersededAttempt(t *testing.T) {
	broker := sse.New(256)
	guard := webchat.NewGuard()
	srv := httptest.NewServer(webchat.Handler(webchat.Backend{
		Guard:  guard,
		Events: broker,
		Send:   func(context.Context, string) (string, error) { return "sent", nil },
		Stop:   func(context.Context) error { return nil },
	}))
	defer srv.Close()
	defer broker.Close()
	ctx := headless(t)
	bg := context.Background()
	own := func(n uint64) events.Envelope { return events.Envelope{Seq: events.Seq{N: n}} }
	in := func(sub uint64, attempt int) events.Envelope {
		return events.Envelope{Seq: events.Seq{N: 3, Sub: sub}, Attempt: attempt}
	}
	kid := func(n uint64) events.Envelope { return events.Envelope{Seq: events.Seq{N: n}, Path: []string{"c9"}} }
	wait := func(what, js string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(30*time.Second))); err != nil {
			t.Fatalf("waiting for %s: %v", what, err)
		}
	}
	bubble := `(document.querySelector('.msg.assistant') || {}).textContent`

	if err := chromedp.Do(ctx, chromedp.Navigate(guard.URL(srv.URL+"/")), chromedp.WaitVisible(chromedp.ID("input"))); err != nil {
		t.Fatal(err)
	}
	broker.Handle(bg, events.AgentStart{Envelope: own(1)})
	wait("the run to show", `document.querySelector('#status.busy') !== null`)

	first := kit.NewBuilder(providers.Model{ID: "m1"})
	broker.Handle(bg, events.TurnStart{Envelope: own(2)})
	broker.Handle(bg, events.MessageStart{Envelope: own(3), Message: *first.Start().Message})
	broker.Handle(bg, events.MessageUpdate{Envelope: in(1, 0), Stream: first.TextStart()})
	broker.Handle(bg, events.MessageUpdate{Envelope: in(2, 0), Stream: first.TextDelta("half an answ")})
	wait("the first attempt's text", bubble+` === "half an answ"`)

	child := kit.NewBuilder(providers.Model{ID: "child"})
	broker.Handle(bg, events.AgentStart{Envelope: kid(1)})
	broker.Handle(bg, events.MessageStart{Envelope: kid(2), Message: *child.Start().Message})
	child.TextStart()
	broker.Handle(bg, events.MessageUpdate{Envelope: events.Envelope{Seq: events.Seq{N: 2, Sub: 1}, Path: []string{"c9"}}, Stream: child.TextDelta("child text")})
	broker.Handle(bg, events.MessageEnd{Envelope: kid(3), Message: *child.Snapshot()})
	broker.Handle(bg, events.AgentEnd{Envelope: kid(4)})

	second := kit.NewBuilder(providers.Model{ID: "m2"})
	broker.Handle(bg, events.MessageUpdate{Envelope: in(1, 1), Stream: second.Start()})
	broker.Handle(bg, events.MessageUpdate{Envelope: in(2, 1), Stream: second.TextStart()})
	broker.Handle(bg, events.MessageUpdate{Envelope: in(3, 1), Stream: second.TextDelta("Whole.")})
	broker.Handle(bg, events.MessageUpdate{Envelope: in(3, 0), Stream: first.TextDelta("er")}) // the old attempt, late
	wait("the second attempt's text alone", bubble+` === "Whole."`)
	marker := "marker"
	broker.Handle(bg, events.ToolExecutionStart{Envelope: own(4), ToolCallID: marker, ToolName: marker})
	wait("every event before the marker", `document.querySelector('.tool-card[data-call-id="marker"]') !== null`)

	type pageState struct {
		Bubbles int    `json:"bubbles"`
		Log     string `json:"log"`
		Busy    bool   `json:"busy"`
	}
	state, err := chromedp.Run(ctx, chromedp.Evaluate[pageState](`({bubbles: document.querySelectorAll('.msg.assistant').length, log: document.getElementById('log').textContent,
		busy: document.querySelector('#status.busy') !== null})`))
	if err != nil {
		t.Fatal(err)
	}
	if state.Bubbles != 1 || !state.Busy {
		t.Fatalf("%d assistant bubbles, busy %v: %q", state.Bubbles, state.Busy, state.Log)
	}
	for _, gone := range []string{"half", "child text", "Whole.er"} {
		if strings.Contains(state.Log, gone) {
			t.Fatalf("the page shows %q: %q", gone, state.Log)
		}
	}
}
