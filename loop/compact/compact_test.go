package compact

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

type fetchArgs struct {
	N int `json:"n"`
}

var fetch = tools.Must(tools.New(tools.Config{Name: "fetch"}, func(_ context.Context, in fetchArgs) (string, error) {
	return fmt.Sprintf("page %d: %s", in.N, strings.Repeat("lorem ipsum ", 35)), nil
}))

// paired reports a request that holds a call without its result or a
// result without its call.
func paired(msgs []providers.Message) error {
	open := map[string]bool{}
	for _, m := range msgs {
		switch m := m.(type) {
		case providers.AssistantMessage:
			if len(open) > 0 {
				return fmt.Errorf("calls %v without results", open)
			}
			for _, c := range m.ToolCalls() {
				open[c.ID] = true
			}
		case providers.ToolResultMessage:
			if !open[m.ToolCallID] {
				return fmt.Errorf("result %s without its call", m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		default:
			if len(open) > 0 {
				return fmt.Errorf("calls %v without results", open)
			}
		}
	}
	return nil
}

func same(a, b []providers.Message) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestThousandTurns: a thousand turns of tool calls in a small window: no
// request passes the window, none separates a call from its result, the
// newest turns always go verbatim.
func TestThousandTurns(t *testing.T) {
	const window, keep = 2000, 4
	var mu sync.Mutex
	var transcript []providers.Message // as the run publishes it
	requests := 0
	p := &faux.Provider{}
	p.Default = func(_ context.Context, req *providers.Request) (providers.AssistantMessage, error) {
		mu.Lock()
		defer mu.Unlock()
		requests++
		if n := sum(req.Messages); n > window {
			t.Errorf("request %d holds ~%d tokens, over the window of %d", requests, n, window)
		}
		if err := paired(req.Messages); err != nil {
			t.Errorf("request %d: %v", requests, err)
		}
		if n := min(keep, len(transcript)); !same(req.Messages[len(req.Messages)-n:], transcript[len(transcript)-n:]) {
			t.Errorf("request %d: the newest %d messages are not verbatim", requests, n)
		}
		if requests == 1000 {
			return faux.Reply(faux.Text("done")), nil
		}
		return faux.Reply(faux.Text("next"), faux.Call(fmt.Sprint("c", requests), "fetch", map[string]any{"n": requests})), nil
	}
	compacted := 0
	cfg := loop.Config{Provider: p, Model: providers.Model{ID: "m"}, Compactor: Trim{Window: window, KeepFirst: true}, Limits: loop.Limits{MaxTurns: 1000}}
	msgs, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("read the thousand pages")}, loop.Conversation{Tools: []*tools.Tool{fetch}}, cfg,
		func(_ context.Context, e events.Event) {
			mu.Lock()
			defer mu.Unlock()
			switch e := e.(type) {
			case events.MessageEnd:
				transcript = append(transcript, e.Message)
			case events.Compacted:
				compacted++
			}
		})
	if err != nil {
		t.Fatal(err)
	}
	if requests != 1000 || len(msgs) != 2000 || compacted < 900 {
		t.Fatalf("%d requests, %d messages, %d compactions", requests, len(msgs), compacted)
	}
}

// BenchmarkPrepareRequest: what Trim (with ShortenResults after it) costs
// per request over the first hundred turns and over the last hundred of a
// thousand: the same (its cost is that of what it sends).
func BenchmarkPrepareRequest(b *testing.B) {
	var transcript []providers.Message
	transcript = append(transcript, providers.NewUserText("go"))
	for i := range 1000 {
		transcript = append(transcript, faux.Reply(faux.Call(fmt.Sprint("c", i), "fetch", map[string]any{"n": i})),
			providers.ToolResultMessage{ToolCallID: fmt.Sprint("c", i), ToolName: "fetch", Content: []providers.Content{providers.Text{Text: strings.Repeat("x", 400)}}})
	}
	c := Chain(Trim{Window: 2000}, ShortenResults{})
	for _, at := range []struct {
		name string
		n    int
	}{{"first100", 200}, {"last100", 2000}} {
		b.Run(at.name, func(b *testing.B) {
			in := loop.CompactInput{Transcript: transcript[:at.n+1]}
			for b.Loop() {
				if _, err := c.Compact(context.Background(), in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// summarizer is a scripted model that answers summary requests with
// SUMMARY-n and records them.
type summarizer struct {
	mu        sync.Mutex
	summaries []string // the summary requests' text
	fail      bool
}

func (s *summarizer) provider() *faux.Provider {
	p := &faux.Provider{}
	p.Default = func(_ context.Context, req *providers.Request) (providers.AssistantMessage, error) {
		if req.SystemPrompt == DefaultSummaryPrompt {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.fail {
				return providers.AssistantMessage{}, errors.New("summary model down")
			}
			s.summaries = append(s.summaries, providers.TextOf(req.Messages[0].(providers.UserMessage).Content))
			return faux.Reply(faux.Text(fmt.Sprint("SUMMARY-", len(s.summaries)))), nil
		}
		return faux.Reply(faux.Text(strings.Repeat("an answer of some length. ", 20))), nil
	}
	return p
}

// TestSummaries: past the threshold the older part is summarised and the
// summary stored; a second summary covers the first and what came after,
// not the original messages; summaries survive a session's JSON; a failed
// summary falls back to trimming and says so.
func TestSummaries(t *testing.T) {
	s := &summarizer{}
	cfg := loop.Config{Provider: s.provider(), Model: providers.Model{ID: "m"}, Compactor: Summarize{Window: 800, KeepTurns: 2}}
	var transcript []providers.Message
	var notes []events.Compacted
	for i := range 12 {
		prompt := providers.NewUserText(fmt.Sprintf("question %d: %s", i, strings.Repeat("words ", 30)))
		msgs, err := loop.Run(context.Background(), []providers.Message{prompt}, loop.Conversation{Messages: transcript}, cfg, func(_ context.Context, e events.Event) {
			if c, ok := e.(events.Compacted); ok {
				notes = append(notes, c)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		transcript = append(transcript, msgs...)
	}
	if len(s.summaries) < 2 {
		t.Fatalf("%d summaries", len(s.summaries))
	}
	if second := s.summaries[1]; !strings.Contains(second, "SUMMARY-1") || strings.Contains(second, "question 0:") {
		t.Fatalf("the second summary request: %.300s", second)
	}
	var stored []providers.SummaryMessage
	for _, m := range transcript {
		if sm, ok := m.(providers.SummaryMessage); ok {
			stored = append(stored, sm)
		}
	}
	if len(stored) != len(s.summaries) || stored[0].Summary != "SUMMARY-1" || stored[1].Through <= stored[0].Through {
		t.Fatalf("stored summaries %+v", stored)
	}
	raw, _ := json.Marshal(stored[1])
	back, err := providers.UnmarshalMessage(raw)
	if err != nil || back.(providers.SummaryMessage) != stored[1] {
		t.Fatalf("a summary through JSON: %v %+v", err, back)
	}
	if notes[len(notes)-1].Strategy != "summarize" && notes[len(notes)-1].Strategy != "trim" {
		t.Fatalf("events %+v", notes)
	}
	// A failed summary trims instead, and says so.
	s.fail = true
	var note string
	_, err = loop.Run(context.Background(), []providers.Message{providers.NewUserText(strings.Repeat("more words ", 200))}, loop.Conversation{Messages: transcript}, cfg,
		func(_ context.Context, e events.Event) {
			if c, ok := e.(events.Compacted); ok {
				note = c.Strategy + ": " + c.Note
			}
		})
	if err != nil || !strings.HasPrefix(note, "trim: the summary failed") {
		t.Fatalf("a failed summary: %q, %v", note, err)
	}
}

// TestShortenResults: old and large results are cut to head and tail with
// a marker naming the call; the newest stay whole; the transcript is not
// touched.
func TestShortenResults(t *testing.T) {
	big := strings.Repeat("a", 5000) + "MIDDLE" + strings.Repeat("z", 5000)
	transcript := []providers.Message{providers.NewUserText("go"),
		faux.Reply(faux.Call("old", "fetch", nil)), providers.ToolResultMessage{ToolCallID: "old", ToolName: "fetch", Content: []providers.Content{providers.Text{Text: big}}},
		faux.Reply(faux.Call("new", "fetch", nil)), providers.ToolResultMessage{ToolCallID: "new", ToolName: "fetch", Content: []providers.Content{providers.Text{Text: big}}}}
	out, err := ShortenResults{OlderThan: 1, MaxBytes: 20000, Keep: 100}.Compact(context.Background(), loop.CompactInput{Transcript: transcript})
	if err != nil {
		t.Fatal(err)
	}
	old := out.Send[2].(providers.ToolResultMessage).Text()
	if strings.Contains(old, "MIDDLE") || !strings.Contains(old, "bytes of the result of call old cut") || !strings.HasPrefix(old, strings.Repeat("a", 100)) {
		t.Fatalf("old result %.200q", old)
	}
	if out.Send[4].(providers.ToolResultMessage).Text() != big || transcript[2].(providers.ToolResultMessage).Text() != big || out.Event.Shortened != 1 {
		t.Fatal("the newest result or the transcript was changed")
	}
}

// TestBudgetStopsAfterTheBatch: a run that spends its token budget in a
// turn with calls ends after their results are stored, with an error
// message saying which budget.
func TestBudgetStopsAfterTheBatch(t *testing.T) {
	first := faux.Reply(faux.Call("a", "fetch", map[string]any{"n": 1}), faux.Call("b", "fetch", map[string]any{"n": 2}))
	first.Usage = providers.Usage{Input: 900, Output: 200}
	cfg := loop.Config{Provider: faux.New(first, faux.Reply(faux.Text("never"))), Model: providers.Model{ID: "m"}, Limits: loop.Limits{MaxRunTokens: 1000}}
	msgs, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("go")}, loop.Conversation{Tools: []*tools.Tool{fetch}}, cfg, nil)
	var re *loop.RunError
	if !errors.As(err, &re) || !errors.Is(err, loop.ErrTokenBudget) {
		t.Fatalf("error %v", err)
	}
	if len(msgs) != 5 || msgs[2].Role() != providers.RoleToolResult || msgs[3].Role() != providers.RoleToolResult ||
		!strings.Contains(msgs[4].(providers.AssistantMessage).ErrorMessage, "MaxRunTokens") {
		t.Fatalf("messages %d: %+v", len(msgs), msgs[len(msgs)-1])
	}
	cost := faux.Reply(faux.Call("c", "fetch", map[string]any{"n": 1}))
	cost.Usage = providers.Usage{Input: 1000, Output: 1000}
	cfg = loop.Config{Provider: faux.New(cost), Model: providers.Model{ID: "m", Prices: providers.Prices{Input: 10, Output: 30}}, Limits: loop.Limits{MaxRunCost: 0.01}}
	cfg.Provider = faux.New(pricedReply(cost, cfg.Model))
	if _, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText("go")}, loop.Conversation{Tools: []*tools.Tool{fetch}}, cfg, nil); !errors.Is(err, loop.ErrCostBudget) {
		t.Fatalf("cost budget: %v", err)
	}
}

func pricedReply(m providers.AssistantMessage, model providers.Model) providers.AssistantMessage {
	m.Usage = model.Priced(m.Usage)
	return m
}

// TestSummaryThroughASession: a stored summary survives a saved and loaded
// session, and the next request after loading sends it in place of what it
// stands for.
func TestSummaryThroughASession(t *testing.T) {
	s := &summarizer{}
	cfg := loop.Config{Provider: s.provider(), Model: providers.Model{ID: "m"}, Compactor: Summarize{Window: 800, KeepTurns: 2}}
	a, err := agent.New(agent.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 8 {
		if err := a.Prompt(context.Background(), providers.NewUserText(fmt.Sprintf("question %d: %s", i, strings.Repeat("words ", 30)))); err != nil {
			t.Fatal(err)
		}
	}
	var session bytes.Buffer
	if err := a.SaveSession(&session); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(session.String(), `"role":"summary"`) {
		t.Fatal("no summary in the session")
	}
	p := &faux.Provider{}
	var first []providers.Message
	var summaryRequests []string
	p.Default = func(_ context.Context, req *providers.Request) (providers.AssistantMessage, error) {
		if req.SystemPrompt == DefaultSummaryPrompt { // the loaded conversation is past the threshold
			summaryRequests = append(summaryRequests, req.Messages[0].(providers.UserMessage).Text())
			return faux.Reply(faux.Text("SUMMARY-AFTER-LOAD")), nil
		}
		if first == nil {
			first = req.Messages
		}
		return faux.Reply(faux.Text("ok")), nil
	}
	cfg.Provider = p
	b, err := agent.New(agent.Options{Config: cfg})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.LoadSession(&session); err != nil {
		t.Fatal(err)
	}
	if err := b.Prompt(context.Background(), providers.NewUserText("and now?")); err != nil {
		t.Fatal(err)
	}
	lead := first[0].(providers.UserMessage).Text()
	if !strings.HasPrefix(lead, "Summary of the earlier conversation:\nSUMMARY-") {
		t.Fatalf("the first request after loading begins %q", lead)
	}
	for _, m := range first {
		if u, ok := m.(providers.UserMessage); ok && strings.HasPrefix(u.Text(), "question 0:") {
			t.Fatal("a summarised message was sent again")
		}
	}
	for _, r := range summaryRequests { // a new summary builds on the loaded one
		if !strings.Contains(r, "Summary so far:\nSUMMARY-") || strings.Contains(r, "question 0:") {
			t.Fatalf("a summary request after loading: %.200q", r)
		}
	}
}
