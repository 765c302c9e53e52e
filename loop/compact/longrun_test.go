package compact

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// wireRules reports what one of the four wires (Chat Completions,
// Responses, Anthropic Messages, Gemini) would refuse in a request, or
// what it would silently drop: the request starts with a user message
// (Anthropic and Gemini want one first); an assistant message follows a
// user message or tool results (Gemini wants a function-call turn right
// after a user turn or a function response); a call's results follow its
// assistant message before anything else; a result answers a call of the
// assistant message right before it; no message of a type no wire sends
// (a stored summary sent as is would be dropped).
func wireRules(msgs []providers.Message) error {
	if len(msgs) == 0 {
		return fmt.Errorf("an empty request")
	}
	if _, ok := msgs[0].(providers.UserMessage); !ok {
		return fmt.Errorf("the request starts with a %s message", msgs[0].Role())
	}
	open := map[string]bool{}
	var prev providers.Role
	for i, m := range msgs {
		switch m := m.(type) {
		case providers.UserMessage:
			if len(open) > 0 {
				return fmt.Errorf("message %d: calls %v without results", i, open)
			}
		case providers.AssistantMessage:
			if len(open) > 0 {
				return fmt.Errorf("message %d: calls %v without results", i, open)
			}
			if prev != providers.RoleUser && prev != providers.RoleToolResult {
				return fmt.Errorf("message %d: an assistant message after a %q message", i, prev)
			}
			for _, c := range m.ToolCalls() {
				open[c.ID] = true
			}
		case providers.ToolResultMessage:
			if !open[m.ToolCallID] {
				return fmt.Errorf("message %d: result %s answers no call of the assistant message before", i, m.ToolCallID)
			}
			delete(open, m.ToolCallID)
		default:
			return fmt.Errorf("message %d: a %s message no wire sends", i, m.Role())
		}
		prev = m.Role()
	}
	if len(open) > 0 {
		return fmt.Errorf("calls %v without results at the end", open)
	}
	return nil
}

// longRun is a scripted model for long runs that counts what a compactor
// got wrong: requests over the window (its own requests for a summary
// too), requests a wire would refuse, requests after a summary was stored
// that do not send it (a lost summary), and summary requests that do not
// build on the summary before (a summary starting over).
type longRun struct {
	window int // what a request's system prompt, tools and messages may hold
	// messages, when not 0, is what a request's messages may hold (a
	// strategy's Window), a summary request's prompt included.
	messages int
	// summaryBytes is how long the model's summaries are.
	summaryBytes int

	mu                                      sync.Mutex
	requests, summaries                     int
	over, overSummary, refused, lost, again int
	latest                                  string // the newest summary made
	first                                   []string
}

func (r *longRun) count(req *providers.Request) int {
	n := len(req.SystemPrompt) / 4
	for _, t := range req.Tools {
		n += (len(t.Name) + len(t.Description) + len(t.Parameters)) / 4
	}
	return n + sum(req.Messages)
}

func (r *longRun) provider() *faux.Provider {
	p := &faux.Provider{ChunkSize: 1 << 20}
	p.Default = func(_ context.Context, req *providers.Request) (providers.AssistantMessage, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		if req.SystemPrompt == DefaultSummaryPrompt {
			r.summaries++
			if r.count(req) > r.window || r.messages > 0 && r.count(req) > r.messages {
				r.overSummary++
				r.note("summary request %d holds ~%d tokens, over %d (%d): %.300q", r.summaries, r.count(req), r.window, len(req.SystemPrompt), req.Messages[0].(providers.UserMessage).Text())
			}
			if text := req.Messages[0].(providers.UserMessage).Text(); r.latest != "" && !strings.HasPrefix(text, SummarySoFar+r.latest+" ") {
				r.again++
				r.note("summary request %d does not build on %s: %.80q", r.summaries, r.latest, text)
			}
			r.latest = fmt.Sprint("SUMMARY-", r.summaries)
			return faux.Reply(faux.Text(r.latest + " " + strings.Repeat("s", max(r.summaryBytes, 200)))), nil
		}
		r.requests++
		if n := r.count(req); n > r.window || r.messages > 0 && sum(req.Messages) > r.messages {
			r.over++
			r.note("request %d holds ~%d tokens, over %d", r.requests, n, r.window)
		}
		if err := wireRules(req.Messages); err != nil {
			r.refused++
			r.note("request %d: %v", r.requests, err)
		}
		if r.latest != "" {
			if u, ok := req.Messages[0].(providers.UserMessage); !ok || !strings.HasPrefix(u.Text(), SummaryLead+r.latest+" ") {
				r.lost++
				r.note("request %d does not send the latest summary", r.requests)
			}
		}
		reply := r.reply(r.requests)
		reply.Usage = providers.Usage{Input: r.count(req), Output: Tokens(reply)} // what a server would report
		return reply, nil
	}
	return p
}

// reply is the model's answer to main request n.
func (r *longRun) reply(n int) providers.AssistantMessage {
	{
		switch {
		case n%10 == 0: // the run ends; the next prompt starts another
			return faux.Reply(faux.Text(fmt.Sprintf("answer %d: %s", n, strings.Repeat("prose ", 40))))
		case n%7 == 0: // two calls, one of them large
			return faux.Reply(faux.Text("reading two"), faux.Call(fmt.Sprint("c", n), "fetch", map[string]any{"n": n}),
				faux.Call(fmt.Sprint("c", n, "b"), "fetch", map[string]any{"n": -n}))
		default:
			return faux.Reply(faux.Call(fmt.Sprint("c", n), "fetch", map[string]any{"n": n}))
		}
	}
}

func (r *longRun) note(format string, args ...any) {
	if len(r.first) < 3 {
		r.first = append(r.first, fmt.Sprintf(format, args...))
	}
}

// sized answers a fetch with a page of a size that depends on n: most
// small, every fifth a few thousand bytes, negative ones large.
var sized = tools.Must(tools.New(tools.Config{Name: "fetch", Description: "Fetches page n."}, func(_ context.Context, in fetchArgs) (string, error) {
	size := 300
	switch {
	case in.N < 0:
		size = 6000
	case in.N%5 == 0:
		size = 2500
	}
	return fmt.Sprintf("page %d: %s", in.N, strings.Repeat("lorem ipsum ", size/12)), nil
}))

// TestLongRuns: every strategy and every order of a chain, over a
// thousand turns of prompts and tool calls in a small window: no request
// (a summary's included) passes the window, none breaks a wire's rules,
// none after a summary leaves it out, no summary starts over.
func TestLongRuns(t *testing.T) {
	const contextWindow, reserve, turns = 3000, 400, 1000
	strategies := []struct {
		name     string
		c        loop.Compactor
		messages int
		summary  int // the summaries' length
	}{
		{"trim", Trim{}, 0, 0},
		{"trim keeping the first", Trim{KeepFirst: true}, 0, 0},
		{"summarize", Summarize{}, 0, 0},
		{"shorten results", ShortenResults{OlderThan: 2}, 0, 0},
		{"summarize+shorten", Chain(Summarize{}, ShortenResults{OlderThan: 2}), 0, 0},
		{"shorten+summarize", Chain(ShortenResults{OlderThan: 2}, Summarize{}), 0, 0},
		{"trim+shorten", Chain(Trim{}, ShortenResults{OlderThan: 2}), 0, 0},
		{"shorten+trim", Chain(ShortenResults{OlderThan: 2}, Trim{}), 0, 0},
		{"summarize+trim", Chain(Summarize{}, Trim{KeepFirst: true}), 0, 0},
		{"trim+summarize", Chain(Trim{KeepFirst: true}, Summarize{}), 0, 0},
		{"shorten+summarize+trim", Chain(ShortenResults{OlderThan: 2}, Summarize{}, Trim{KeepFirst: true}), 0, 0},
		{"summarize twice", Chain(Summarize{}, ShortenResults{}, Summarize{Keep: 0.3}), 0, 0},
		{"summaries of 100 KB", Chain(Summarize{}, ShortenResults{OlderThan: 2}), 0, 100 << 10},
		{"summarize with a window", Summarize{Window: 2400, KeepTurns: 6}, 2400, 0},
		{"summarize and shorten with a window", Chain(Summarize{Window: 1200, KeepTurns: 6}, ShortenResults{Window: 1200}), 1200, 0},
		{"chains with windows", Chain(ShortenResults{Window: 1400}, Trim{Window: 1600}, Summarize{Window: 1400}), 1400, 0},
	}
	for _, tc := range strategies {
		t.Run(tc.name, func(t *testing.T) {
			r := &longRun{window: contextWindow - reserve, messages: tc.messages, summaryBytes: tc.summary}
			cfg := loop.Config{Provider: r.provider(), Model: providers.Model{ID: "m", ContextWindow: contextWindow, MaxTokens: reserve}, Compactor: tc.c, Limits: loop.Limits{MaxTurns: 100}}
			conv := loop.Conversation{SystemPrompt: "You read pages. " + strings.Repeat("Be brief. ", 30), Tools: []*tools.Tool{sized}}
			for i := 0; r.requests < turns; i++ {
				msgs, err := loop.Run(context.Background(), []providers.Message{providers.NewUserText(fmt.Sprintf("prompt %d: read on", i))}, conv, cfg,
					func(context.Context, events.Event) {})
				if err != nil {
					t.Fatal(err)
				}
				conv.Messages = append(conv.Messages, msgs...)
			}
			t.Logf("%d requests, %d summaries: %d over the window, %d summary requests over it, %d refused by a wire, %d without the latest summary, %d summaries starting over",
				r.requests, r.summaries, r.over, r.overSummary, r.refused, r.lost, r.again)
			if r.over+r.overSummary+r.refused+r.lost+r.again > 0 {
				t.Errorf("violations, the first: %q", r.first)
			}
		})
	}
}
