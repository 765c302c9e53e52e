package compact

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
)

// The tests in this file replay issue #25 items 15 to 18 on odd shapes of
// run, driving the strategies directly (as the loop does, storing what
// they ask) so that thousands of requests stay quick.

// summariser plays the model asked for summaries, in one of several
// hostile ways.
type summariser struct {
	how      string // "ok", "fail", "error", "empty", "huge", "nothing", "go-error", "spaces", "flaky"
	budget   int    // what a summary request may hold (its prompt included)
	n        int
	over     int
	overNote string
	latest   string
}

func (s *summariser) Stream(ctx context.Context, req *providers.Request) (iter.Seq[providers.StreamEvent], error) {
	s.n++
	if n := len(req.SystemPrompt)/4 + sum(req.Messages); n > s.budget {
		s.over++
		s.overNote = fmt.Sprintf("summary request %d holds ~%d tokens, over %d", s.n, n, s.budget)
	}
	how := s.how
	if how == "flaky" {
		how = []string{"ok", "fail", "empty", "huge"}[s.n%4]
	}
	text := fmt.Sprintf("SUMMARY-%d ", s.n)
	switch how {
	case "go-error":
		return nil, errors.New("no connection")
	case "nothing":
		return func(func(providers.StreamEvent) bool) {}, nil
	case "fail":
		p := faux.New()
		p.PushFunc(func(context.Context, *providers.Request) (providers.AssistantMessage, error) {
			return providers.AssistantMessage{}, errors.New(strings.Repeat("boom ", 20_000))
		})
		return p.Stream(ctx, req)
	case "empty":
		text = ""
	case "spaces":
		text = strings.Repeat(" \n", 1000)
	case "huge":
		text += strings.Repeat("h", 256<<10)
	default:
		text += "ok"
	}
	if strings.TrimSpace(text) != "" {
		s.latest = text
	}
	return faux.New(faux.Reply(faux.Text(text))).Stream(ctx, req)
}

// shape is a run's messages after request n: what the model answered and
// what the tools and the user said next.
type shape func(n int) []providers.Message

func call(id string) providers.AssistantMessage {
	return faux.Reply(faux.Call(id, "fetch", map[string]any{"id": id}))
}

func resultOf(id string, size int) providers.ToolResultMessage {
	return providers.ToolResultMessage{ToolCallID: id, ToolName: "fetch", Content: []providers.Content{providers.Text{Text: strings.Repeat("r", size)}}}
}

var shapes = map[string]struct {
	start []providers.Message
	next  shape
}{
	"many tiny turns": {[]providers.Message{providers.NewUserText("go")}, func(n int) []providers.Message {
		return []providers.Message{faux.Reply(faux.Text("k")), providers.NewUserText("n")}
	}},
	"a huge single result": {[]providers.Message{providers.NewUserText("go")}, func(n int) []providers.Message {
		id := fmt.Sprint("c", n)
		size := 200
		if n == 30 {
			size = 400 << 10
		}
		return []providers.Message{call(id), resultOf(id, size)}
	}},
	"starting with an assistant call": {[]providers.Message{call("c0"), resultOf("c0", 100)}, func(n int) []providers.Message {
		id := fmt.Sprint("c", n)
		return []providers.Message{call(id), resultOf(id, 300)}
	}},
	"starting with an orphan result": {[]providers.Message{resultOf("gone", 100), providers.NewUserText("go")}, func(n int) []providers.Message {
		id := fmt.Sprint("c", n)
		return []providers.Message{call(id), resultOf(id, 300)}
	}},
	"calls with parallel results": {[]providers.Message{providers.NewUserText("go")}, func(n int) []providers.Message {
		a, b := fmt.Sprint("a", n), fmt.Sprint("b", n)
		return []providers.Message{faux.Reply(faux.Call(a, "fetch", map[string]any{}), faux.Call(b, "fetch", map[string]any{})), resultOf(a, 500), resultOf(b, 900)}
	}},
	"long user prompts": {[]providers.Message{providers.NewUserText("go")}, func(n int) []providers.Message {
		return []providers.Message{faux.Reply(faux.Text("ok")), providers.NewUserText(strings.Repeat("u", 1500))}
	}},
}

// TestAttackCompactionShapes: every strategy and chain order, on odd
// shapes of run and with summaries that fail, come back empty or huge:
// no request passes the window (unless its newest message alone does), a
// wire would refuse none, none after a summary was stored leaves it out,
// no summary request passes the window.
func TestAttackCompactionShapes(t *testing.T) {
	const contextWindow, reserve = 3000, 400
	system := "You read pages. " + strings.Repeat("Be brief. ", 30)
	strategies := map[string]loop.Compactor{
		"trim":                   Trim{},
		"trim keeping the first": Trim{KeepFirst: true},
		"summarize":              Summarize{},
		"shorten":                ShortenResults{},
		"summarize+shorten":      Chain(Summarize{}, ShortenResults{}),
		"shorten+summarize":      Chain(ShortenResults{}, Summarize{}),
		"trim+summarize":         Chain(Trim{}, Summarize{}),
		"summarize+trim":         Chain(Summarize{}, Trim{KeepFirst: true}),
		"shorten+summarize+trim": Chain(ShortenResults{}, Summarize{}, Trim{}),
		"small windows":          Chain(Summarize{Window: 900, KeepTurns: 8}, ShortenResults{Window: 700}),
		"summarize, odd knobs":   Summarize{KeepTurns: 1000, Threshold: 0.01, Keep: 0.99, SummaryShare: 0.9, MaxSummaryBytes: 1 << 30},
		"trim keeping 1,000":     Trim{KeepTurns: 1000, KeepFirst: true},
		"shorten, odd knobs":     ShortenResults{OlderThan: -1, Keep: -5},
	}
	for name, c := range strategies {
		for shapeName, sh := range shapes {
			for _, how := range []string{"ok", "fail", "empty", "huge", "nothing", "go-error", "spaces", "flaky"} {
				switch {
				case !strings.Contains(name, "summarize") && how != "ok":
					continue
				case name != "summarize" && name != "summarize+shorten" && how != "ok" && how != "fail" && how != "flaky":
					continue // every way a summary fails, on the two main ones
				}
				t.Run(name+"/"+shapeName+"/"+how, func(t *testing.T) {
					in := loop.CompactInput{Model: providers.Model{ID: "m", ContextWindow: contextWindow, MaxTokens: reserve}, SystemPrompt: system}
					budget, summaryBudget := window(in, 0), window(in, 0)
					if name == "small windows" {
						budget, summaryBudget = 700, 900
					}
					s := &summariser{how: how, budget: summaryBudget}
					in.Provider = s
					transcript := append([]providers.Message(nil), sh.start...)
					var stored string
					var problems []string
					note := func(f string, a ...any) {
						if len(problems) < 3 {
							problems = append(problems, fmt.Sprintf(f, a...))
						}
					}
					steps := 100
					if how != "ok" {
						steps = 40 // past the first summaries, each way a summary fails
					}
					if shapeName == "many tiny turns" {
						steps *= 6
					}
					for n := range steps {
						in.Transcript = transcript
						out, err := c.Compact(context.Background(), in)
						if err != nil {
							t.Fatalf("request %d: %v", n, err)
						}
						newest := Tokens(transcript[len(transcript)-1])
						if out.Store != nil {
							sm, ok := out.Store.(providers.SummaryMessage)
							if !ok {
								t.Fatalf("stored a %T", out.Store)
							}
							if len(sm.Summary) > defaultSummaryBytes {
								note("request %d: a summary of %d bytes stored", n, len(sm.Summary))
							}
							stored = sm.Summary
							transcript = append(transcript, out.Store)
						}
						if out.Event != nil && len(out.Event.Note) > 4<<10 {
							note("request %d: an event note of %d bytes", n, len(out.Event.Note))
						}
						send := out.Send
						if send == nil {
							send = transcript
						}
						if err := wireRules(send); err != nil {
							note("request %d: %v", n, err)
						}
						if sum(send) > budget && newest <= budget/2 {
							note("request %d holds ~%d tokens, over %d", n, sum(send), budget)
						}
						if stored != "" {
							if u, ok := send[0].(providers.UserMessage); !ok || !strings.HasPrefix(u.Text(), SummaryLead+prefix(stored, 20)) {
								note("request %d does not send the latest summary", n)
							}
						}
						transcript = append(transcript, sh.next(n)...)
					}
					if strings.Contains(name, "summarize") && how == "ok" && s.n == 0 {
						note("no summary was asked for")
					}
					if s.over > 0 {
						note("%d summary requests over the window, the last: %s", s.over, s.overNote)
					}
					if len(problems) > 0 {
						t.Errorf("%d summary requests; problems: %q", s.n, problems)
					}
				})
			}
		}
	}
}

// TestAttackWindowSmallerThanTheSystemPrompt: a model whose window the
// system prompt and tools already fill still gets a request of the newest
// turn, not the whole transcript.
func TestAttackWindowSmallerThanTheSystemPrompt(t *testing.T) {
	var transcript []providers.Message
	for i := range 2000 {
		id := fmt.Sprint("c", i)
		transcript = append(transcript, providers.NewUserText("go"), call(id), resultOf(id, 400))
	}
	in := loop.CompactInput{Transcript: transcript, Model: providers.Model{ID: "m", ContextWindow: 1000, MaxTokens: 200},
		SystemPrompt: strings.Repeat("s", 8000), Provider: &summariser{how: "ok", budget: 1 << 30}}
	for name, c := range map[string]loop.Compactor{"trim": Trim{}, "summarize": Summarize{}, "shorten": ShortenResults{},
		"chain": Chain(Summarize{}, ShortenResults{})} {
		out, err := c.Compact(context.Background(), in)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		send := out.Send
		if send == nil {
			send = transcript
		}
		if err := wireRules(send); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if sm, ok := out.Store.(providers.SummaryMessage); out.Store != nil && (!ok || strings.TrimSpace(sm.Summary) == "") {
			t.Errorf("%s: stored %#v", name, out.Store)
		}
		if len(send) > 10 {
			t.Errorf("%s: a request of %d messages (~%d tokens) for a window the system prompt fills", name, len(send), sum(send))
		}
	}
}
