package compact

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
)

// TestTexts: the texts the model reads, word for word.
func TestTexts(t *testing.T) {
	for got, want := range map[string]string{
		SummaryLead:        "Summary of the earlier conversation:\n",
		LeftOutText:        "[Earlier messages of this conversation were left out to fit the context window.]",
		SummaryCutText:     "\n[… the rest of the summary was cut to fit the context window …]",
		SummarySoFar:       "Summary so far:\n",
		SummaryAfter:       "\n\nWhat came after:\n",
		SummaryLeftOut:     "[earlier messages left out]",
		SummaryInstruction: "\nSummarise the conversation above.",
		DefaultSummaryPrompt: "You summarise conversations between a user and an AI assistant that uses tools, so that the assistant can go on " +
			"without the full history. Keep what the user asked for, decisions made, facts learned from tools (file names, values, errors), " +
			"and what is still to do. Write plain prose, at most a few hundred words. Do not call tools.",
	} {
		if got != want {
			t.Errorf("%q, want %q", got, want)
		}
	}
}

// calls is a transcript of a prompt and n turns of tool calls with
// results of size bytes.
func calls(n, size int) []providers.Message {
	msgs := []providers.Message{providers.NewUserText("read the pages")}
	for i := range n {
		id := fmt.Sprint("c", i)
		msgs = append(msgs, faux.Reply(faux.Text("next"), faux.Call(id, "fetch", map[string]any{"n": i})),
			providers.ToolResultMessage{ToolCallID: id, ToolName: "fetch", Content: []providers.Content{providers.Text{Text: fmt.Sprintf("page %d %s", i, strings.Repeat("x", size))}}})
	}
	return msgs
}

// TestSummaryBound: a 50 MB summary from the model is cut to its bound
// (a share of the window, and MaxSummaryBytes), ends with SummaryCutText,
// and the request that sends it fits the window; a stored summary past
// the bound (an older session's) is cut when sent.
func TestSummaryBound(t *testing.T) {
	mb := strings.Repeat("é", 1<<19) // 1 MB, two bytes a character
	for _, tc := range []struct {
		name   string
		s      Summarize
		window int
		want   int // the bound in bytes
		huge   string
	}{
		{"a fifth of a small window", Summarize{}, 3000, (int(0.2*(3000-750))-4)*4 - len(SummaryLead), mb},
		{"a share asked for", Summarize{SummaryShare: 0.1}, 3000, (int(0.1*(3000-750))-4)*4 - len(SummaryLead), mb},
		{"32 KiB of a large window, of 50 MB", Summarize{}, 1 << 20, 32 << 10, strings.Repeat(mb, 50)},
		{"MaxSummaryBytes", Summarize{MaxSummaryBytes: 1000}, 1 << 20, 1000, mb},
	} {
		t.Run(tc.name, func(t *testing.T) {
			huge := tc.huge
			p := &faux.Provider{ChunkSize: 1 << 16} // the rest is not read once past the bound
			p.Push(faux.Reply(faux.Text(huge)))
			model := providers.Model{ID: "m", ContextWindow: tc.window}
			budget := tc.window - tc.window/4
			transcript := calls(40, max(200, budget*4/30)) // past the threshold
			out, err := tc.s.Compact(context.Background(), loop.CompactInput{Transcript: transcript, Model: model, Provider: p})
			if err != nil {
				t.Fatal(err)
			}
			stored, ok := out.Store.(providers.SummaryMessage)
			if !ok {
				t.Fatalf("no summary stored: %+v", out.Event)
			}
			if len(stored.Summary) > tc.want || len(stored.Summary) < tc.want-8 || !strings.HasSuffix(stored.Summary, SummaryCutText) || !utf8.ValidString(stored.Summary) {
				t.Fatalf("a summary of %d bytes, want at most %d ending with the cut text", len(stored.Summary), tc.want)
			}
			if n := sum(out.Send); n > budget {
				t.Fatalf("the request holds %d tokens, over %d", n, budget)
			}
			// Stored by an older version past the bound: cut when sent.
			old := append(append(transcript[:len(transcript):len(transcript)], providers.SummaryMessage{Summary: huge, Through: len(transcript) - 2}),
				providers.NewUserText("and now?"))
			out, err = Trim{}.Compact(context.Background(), loop.CompactInput{Transcript: old, Model: model})
			if err != nil {
				t.Fatal(err)
			}
			lead := out.Send[0].(providers.UserMessage).Text()
			if n := sum(out.Send); n > budget || !strings.HasPrefix(lead, SummaryLead+"éé") || !strings.HasSuffix(lead, SummaryCutText) {
				t.Fatalf("an old summary sent in %d tokens of %d: %.60q", n, budget, lead)
			}
		})
	}
}

// TestSummaryAtAnyDistance: a stored summary is sent however many
// messages came after it, and the next summary builds on it, never on the
// messages it stands for.
func TestSummaryAtAnyDistance(t *testing.T) {
	transcript := calls(20, 100)
	transcript = append(transcript, providers.SummaryMessage{Summary: "SUMMARY-OLD", Through: 21})
	transcript = append(transcript, calls(3000, 100)[1:]...)
	var asked string
	p := &faux.Provider{}
	p.Default = func(_ context.Context, req *providers.Request) (providers.AssistantMessage, error) {
		asked = req.Messages[0].(providers.UserMessage).Text()
		return faux.Reply(faux.Text("SUMMARY-NEW")), nil
	}
	in := loop.CompactInput{Transcript: transcript, Model: providers.Model{ID: "m", ContextWindow: 4000}, Provider: p}
	for _, c := range []loop.Compactor{Trim{}, Trim{KeepFirst: true}, ShortenResults{}, Chain(Trim{}, ShortenResults{})} {
		out, err := c.Compact(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		if lead := out.Send[0].(providers.UserMessage).Text(); lead != SummaryLead+"SUMMARY-OLD" {
			t.Fatalf("%T sends first %.80q", c, lead)
		}
	}
	out, err := Summarize{}.Compact(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(asked, SummarySoFar+"SUMMARY-OLD"+SummaryAfter+SummaryLeftOut+"\n") || strings.Contains(asked, "page 5 ") {
		t.Fatalf("the summary request: %.200q", asked)
	}
	if s := out.Store.(providers.SummaryMessage); s.Through <= 21 || out.Send[0].(providers.UserMessage).Text() != SummaryLead+"SUMMARY-NEW" {
		t.Fatalf("stored %+v, sent first %+v", s, out.Send[0])
	}
}

// TestRequestsStartWithTheUser: a trimmed request that would start with
// an assistant message (calls, or text) starts with LeftOutText; one that
// would start with results whose call was left out starts without them.
func TestRequestsStartWithTheUser(t *testing.T) {
	transcript := calls(200, 400)
	for _, c := range []loop.Compactor{Trim{Window: 1000}, Summarize{Window: 1000, Threshold: 1}, ShortenResults{Window: 1000},
		Chain(ShortenResults{Window: 1000}, Trim{Window: 1000})} {
		out, err := c.Compact(context.Background(), loop.CompactInput{Transcript: transcript})
		if err != nil {
			t.Fatal(err)
		}
		if err := wireRules(out.Send); err != nil || out.Send[0].(providers.UserMessage).Text() != LeftOutText {
			t.Fatalf("%T: %v, first %+v", c, err, out.Send[0])
		}
		if n := sum(out.Send); n > 1000 {
			t.Fatalf("%T: %d tokens", c, n)
		}
	}
	// The first user message kept, but not when it would take more than
	// half the window.
	big := append([]providers.Message{providers.NewUserText(strings.Repeat("task ", 1000))}, transcript[1:]...)
	for _, tc := range []struct {
		msgs  []providers.Message
		first string
	}{{transcript, "read the pages"}, {big, LeftOutText}} {
		out, _ := Trim{Window: 1500, KeepFirst: true}.Compact(context.Background(), loop.CompactInput{Transcript: tc.msgs})
		if got := out.Send[0].(providers.UserMessage).Text(); got != tc.first || sum(out.Send) > 1500 || wireRules(out.Send) != nil {
			t.Fatalf("first %.40q, %d tokens, %v", got, sum(out.Send), wireRules(out.Send))
		}
	}
}

// TestChainOrders: Summarize runs first wherever it stands in a chain.
func TestChainOrders(t *testing.T) {
	transcript := calls(100, 400)
	in := loop.CompactInput{Transcript: transcript, Model: providers.Model{ID: "m", ContextWindow: 4000},
		Provider: &faux.Provider{Default: func(context.Context, *providers.Request) (providers.AssistantMessage, error) {
			return faux.Reply(faux.Text("SUMMARY")), nil
		}}}
	a, err := Chain(Summarize{}, ShortenResults{OlderThan: 2}).Compact(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Chain(ShortenResults{OlderThan: 2}, Summarize{}).Compact(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	a.Store, b.Store = stamp(a.Store), stamp(b.Store)
	if a.Store == nil || !same([]providers.Message{a.Store}, []providers.Message{b.Store}) || !same(stamps(a.Send), stamps(b.Send)) {
		t.Fatalf("the orders differ:\n%+v\n%+v", a.Store, b.Store)
	}
}

func stamp(m providers.Message) providers.Message {
	if s, ok := m.(providers.SummaryMessage); ok {
		s.Timestamp = 0
		return s
	}
	return m
}

func stamps(msgs []providers.Message) []providers.Message {
	out := append([]providers.Message(nil), msgs...)
	if u, ok := out[0].(providers.UserMessage); ok {
		u.Timestamp = 0
		out[0] = u
	}
	return out
}

// TestSummaryRequestFits: a summary request holds no more than the
// window, its own prompt and framing counted, whatever the messages and
// the prompt; a message too long for it is sent as its head and tail; a
// prompt that leaves no room makes the summary fail, and Summarize trims.
func TestSummaryRequestFits(t *testing.T) {
	long := append(calls(30, 100), providers.NewUserText("HEAD"+strings.Repeat("y", 100_000)+"TAIL"), faux.Reply(faux.Text("ok")))
	long = append(long, calls(10, 100)[1:]...)
	for _, tc := range []struct {
		name, prompt string
		msgs         []providers.Message
		note         string // the event's note begins with it
	}{
		{"small messages", "", calls(200, 300), "messages summarised"},
		{"a message longer than the window", "", long, "messages summarised"},
		{"a long prompt", strings.Repeat("Summarise. ", 700), calls(200, 300), "messages summarised"},
		{"a prompt past the window", strings.Repeat("Summarise. ", 2000), calls(200, 300), "the summary failed (the summary prompt and the summary so far leave no room in the window)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var asked *providers.Request
			p := &faux.Provider{Default: func(_ context.Context, req *providers.Request) (providers.AssistantMessage, error) {
				asked = req
				return faux.Reply(faux.Text("SUMMARY")), nil
			}}
			s := Summarize{Window: 3000, Prompt: tc.prompt}
			out, err := s.Compact(context.Background(), loop.CompactInput{Transcript: tc.msgs, Model: providers.Model{ID: "m"}, Provider: p})
			if err != nil || out.Event == nil || !strings.Contains(out.Event.Note, tc.note) {
				t.Fatalf("%v, event %+v", err, out.Event)
			}
			if asked != nil {
				if n := len(asked.SystemPrompt)/4 + sum(asked.Messages); n > 3000 {
					t.Fatalf("the summary request holds %d tokens, over 3000", n)
				}
				if text := asked.Messages[0].(providers.UserMessage).Text(); tc.name == "a message longer than the window" && (!strings.Contains(text, "User: HEAD") || !strings.Contains(text, "TAIL\n")) {
					t.Fatalf("the long message is not sent as its head and tail: %.300q", text)
				}
			}
			if n := sum(out.Send); n > 3000 {
				t.Fatalf("the request holds %d tokens", n)
			}
		})
	}
}
