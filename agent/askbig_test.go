package agent

import (
	"context"
	"encoding/json"
	"errors"
	"iter"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/internal/harness/heapwatch"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/providers/kit"
)

// bulky is a scripted model that streams each of its replies in pieces of
// 1 MiB, as a server would, and records the size of what each request
// carries, keeping none of it.
type bulky struct {
	replies []providers.AssistantMessage

	mu       sync.Mutex
	i        int
	requests []sizes
}

// sizes is what a request carried: its last message's text (the
// correction), and the text and argument bytes of all its messages.
type sizes struct{ last, total int }

func (p *bulky) Stream(_ context.Context, req *providers.Request) (iter.Seq[providers.StreamEvent], error) {
	p.mu.Lock()
	var s sizes
	for _, m := range req.Messages {
		s.last = messageBytes(m)
		s.total += s.last
	}
	p.requests = append(p.requests, s)
	reply := providers.AssistantMessage{Content: []providers.Content{providers.Text{Text: "nothing more"}}}
	if p.i < len(p.replies) {
		reply = p.replies[p.i]
	}
	p.i++
	p.mu.Unlock()
	return func(yield func(providers.StreamEvent) bool) {
		b := kit.NewBuilder(providers.Model{ID: "bulky"})
		if !yield(b.Start()) {
			return
		}
		for _, c := range reply.Content {
			switch c := c.(type) {
			case providers.Text:
				yield(b.TextStart())
				for piece := range pieces(c.Text) {
					yield(b.TextDelta(piece))
				}
				yield(b.TextEnd())
			case providers.ToolCall:
				yield(b.ToolCallStart(c.ID, c.Name))
				for piece := range pieces(c.RawArguments) {
					yield(b.ToolCallDelta(piece, nil))
				}
				yield(b.ToolCallEnd(c.Arguments, true))
			}
		}
		reason := providers.StopReasonStop
		if reply.HasToolCalls() {
			reason = providers.StopReasonToolUse
		}
		yield(b.Done(reason, providers.Usage{}))
	}, nil
}

func (p *bulky) sent() []sizes {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]sizes(nil), p.requests...)
}

func pieces(s string) iter.Seq[string] {
	return func(yield func(string) bool) {
		for len(s) > 0 {
			n := min(len(s), 1<<20)
			if !yield(s[:n]) {
				return
			}
			s = s[n:]
		}
	}
}

func messageBytes(m providers.Message) int {
	var content []providers.Content
	switch m := m.(type) {
	case providers.UserMessage:
		content = m.Content
	case providers.AssistantMessage:
		content = m.Content
	case providers.ToolResultMessage:
		content = m.Content
	}
	n := 0
	for _, c := range content {
		switch c := c.(type) {
		case providers.Text:
			n += len(c.Text)
		case providers.ToolCall:
			n += len(c.RawArguments)
		}
	}
	return n
}

// hugeAnswer is an answer of about n bytes that parses but does not fit
// invoice: its number is a number, its total a long string.
func hugeAnswer(n int) string {
	return `{"number":7,"total":"` + strings.Repeat("9", n) + `","paid":true}`
}

// askHuge asks for an invoice from a model whose first answer is n bytes
// that do not fit, then a good one; it returns the peak heap above the
// base while asking, and what the requests carried.
func askHuge(tb testing.TB, mode AskMode, n int) (peak uint64, sent []sizes) {
	good := `{"number":"INV-7","total":120.5,"paid":true}`
	answer := hugeAnswer(n)
	var replies []providers.AssistantMessage
	if mode == AskNative {
		replies = []providers.AssistantMessage{{Content: []providers.Content{providers.Text{Text: answer}}},
			{Content: []providers.Content{providers.Text{Text: good}}}}
	} else {
		replies = []providers.AssistantMessage{
			{Content: []providers.Content{providers.ToolCall{ID: "a", Name: "final_answer", RawArguments: answer,
				Arguments: map[string]any{"number": 7.0, "total": answer[20 : len(answer)-13], "paid": true}}}},
			{Content: []providers.Content{providers.ToolCall{ID: "b", Name: "final_answer", RawArguments: good,
				Arguments: map[string]any{"number": "INV-7", "total": 120.5, "paid": true}}}}}
	}
	p := &bulky{replies: replies}
	a := newAgent(p)
	var got invoice
	var err error
	max, base := heapwatch.Peak(time.Millisecond, func() {
		got, err = AskWith[invoice](context.Background(), a, "Which invoice?", AskOptions{Mode: mode})
	})
	if err != nil || got.Number != "INV-7" {
		tb.Fatalf("answer %+v, %v", got, err)
	}
	return max - min(base, max), p.sent()
}

// BenchmarkAskHugeAnswer: the peak heap of an Ask whose model first
// answers 60 MB that do not fit, natively and through the final-answer
// tool, and the size of the correction and of the next request.
func BenchmarkAskHugeAnswer(b *testing.B) {
	for _, mode := range []struct {
		name string
		mode AskMode
	}{{"native", AskNative}, {"tool", AskTool}} {
		b.Run(mode.name, func(b *testing.B) {
			var peak uint64
			var sent []sizes
			for b.Loop() {
				peak, sent = askHuge(b, mode.mode, 60<<20)
			}
			b.ReportMetric(float64(peak)/1e6, "peak-MB")
			b.ReportMetric(float64(sent[1].last)/1e6, "correction-MB")
			b.ReportMetric(float64(sent[1].total)/1e6, "request2-MB")
		})
	}
}

// TestAskHugeAnswer: a model whose first answer is 4 MiB that do not fit
// gets a correction that quotes a bounded excerpt of it, natively and
// through the final-answer tool; the next request carries the answer once
// (it is in the transcript) and the correction; the heap stays within a
// few times the answer.
func TestAskHugeAnswer(t *testing.T) {
	const n = 4 << 20
	for _, tt := range []struct {
		name string
		mode AskMode
	}{{"native", AskNative}, {"tool", AskTool}} {
		t.Run(tt.name, func(t *testing.T) {
			peak, sent := askHuge(t, tt.mode, n)
			if len(sent) != 2 {
				t.Fatalf("%d requests", len(sent))
			}
			if sent[1].last > MaxQuotedAnswerBytes+1024 {
				t.Fatalf("the correction is %d bytes", sent[1].last)
			}
			if sent[1].total > n+64<<10 {
				t.Fatalf("the second request carries %d bytes for an answer of %d", sent[1].total, n)
			}
			if peak > 6*n {
				t.Fatalf("peak heap %d bytes for an answer of %d", peak, n)
			}
		})
	}
}

// TestAskOversizedAnswer: native answers over the cap on tool arguments
// are refused unread, in the words the model reads, quoting head and tail;
// the final-answer tool's are refused by the preflight. AnswerError holds
// bounded excerpts.
func TestAskOversizedAnswer(t *testing.T) {
	const max = 4096
	answer := hugeAnswer(10000) // 10035 bytes
	head, tail := answer[:MaxQuotedAnswerBytes/2], answer[len(answer)-MaxQuotedAnswerBytes/2:]
	wantFix := "Your answer is 10035 bytes, more than the limit of 4096 bytes. It was:\n\n" + head +
		"\n[... 1843 bytes left out ...]\n" + tail + "\n\nAnswer again, more briefly, with JSON that fits the schema."
	// The native answer in three blocks: the excerpt is the same.
	split := providers.AssistantMessage{Content: []providers.Content{providers.Text{Text: answer[:3]}, providers.Text{Text: answer[3:9000]}, providers.Text{Text: answer[9000:]}}}
	for _, reply := range []providers.AssistantMessage{answerText(answer), split} {
		p := faux.New(reply, reply)
		a := mustNew(Options{Config: loop.Config{Provider: p, Model: model, RequestOptions: providers.RequestOptions{MaxArgumentBytes: max}}})
		_, err := AskWith[invoice](context.Background(), a, "?", AskOptions{Mode: AskNative, MaxAttempts: 2})
		reqs := p.Requests()
		if fix := reqs[1].Messages[len(reqs[1].Messages)-1].(providers.UserMessage).Text(); fix != wantFix {
			t.Fatalf("the correction:\n%.400q\nwant\n%.400q", fix, wantFix)
		}
		var ae *AnswerError
		if !errors.As(err, &ae) || ae.Problem != "the answer is 10035 bytes, more than the limit of 4096 bytes" ||
			len(ae.Answer) > max+64 || !strings.HasPrefix(ae.Answer, answer[:2048]) || !strings.HasSuffix(ae.Answer, answer[len(answer)-2048:]) {
			t.Fatalf("error %v (answer of %d bytes)", err, len(ae.Answer))
		}
	}
	// Through the tool: the preflight's refusal; the answer kept as an
	// excerpt of the cap's size.
	p := faux.New(faux.Reply(faux.Call("a", "final_answer", map[string]any{"number": 7, "total": strings.Repeat("9", 10000)})))
	a := mustNew(Options{Config: loop.Config{Provider: p, Model: model, RequestOptions: providers.RequestOptions{MaxArgumentBytes: max}}})
	_, err := AskWith[invoice](context.Background(), a, "?", AskOptions{Mode: AskTool, MaxAttempts: 1})
	var ae *AnswerError
	if !errors.As(err, &ae) || ae.Problem != `Tool call "final_answer" was not executed: its arguments are 10023 bytes, more than the limit of 4096 bytes.` ||
		len(ae.Answer) > max+64 || !strings.Contains(ae.Answer, "bytes left out") {
		t.Fatalf("error %v", err)
	}
}

// TestAskMisfitQuotesExcerpt: a native answer within the cap that does
// not fit is corrected with the listing and an excerpt of the answer as
// written, however it is shaped: long, or nested deep (whose indented
// text would be many times its size).
func TestAskMisfitQuotesExcerpt(t *testing.T) {
	deep := `{"number":7,"total":` + strings.Repeat("[", 90) + strings.Repeat("0,", 100000) + "0" + strings.Repeat("]", 90) + "}"
	for _, tt := range []struct{ name, answer string }{
		{"long", hugeAnswer(200000)},
		{"deep", deep},
		{"short", `{"number":7}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p := faux.New(answerText(tt.answer), answerText(tt.answer))
			_, err := AskWith[invoice](context.Background(), newAgent(p), "?", AskOptions{Mode: AskNative, MaxAttempts: 2})
			reqs := p.Requests()
			fix := reqs[1].Messages[len(reqs[1].Messages)-1].(providers.UserMessage).Text()
			listing := "Validation failed for tool \"final_answer\":\n  - "
			if !strings.HasPrefix(fix, "Your answer does not fit the schema.\n\n"+listing) || !strings.Contains(fix, "\n\nReceived arguments:\n"+tt.answer[:min(len(tt.answer), 100)]) ||
				!strings.HasSuffix(fix, tt.answer[len(tt.answer)-min(len(tt.answer), 100):]+"\n\nAnswer again with JSON only, correcting what is listed.") {
				t.Fatalf("the correction: %.600q", fix)
			}
			if len(fix) > MaxQuotedAnswerBytes+200 {
				t.Fatalf("the correction is %d bytes", len(fix))
			}
			if long := len(tt.answer) > MaxQuotedAnswerBytes/2; long != strings.Contains(fix, "bytes left out ...]") {
				t.Fatalf("excerpt marker: %v for %d bytes", !long, len(tt.answer))
			}
			var ae *AnswerError
			if !errors.As(err, &ae) || !strings.HasPrefix(ae.Problem, listing) || len(ae.Problem) > MaxQuotedAnswerBytes+64 {
				t.Fatalf("error %v", err)
			}
		})
	}
}

// TestAskToolMisfitBounded: a final-answer call within the argument cap
// but nested deep, whose validation listing would be a hundred times its
// size, comes back to the model cut to MaxResultBytes.
func TestAskToolMisfitBounded(t *testing.T) {
	nested := strings.Repeat("[", 90) + strings.Repeat("0,", 30000) + "0" + strings.Repeat("]", 90)
	raw := `{"number":"INV-7","total":` + nested + `,"paid":true}`
	var args map[string]any
	if err := json.Unmarshal([]byte(raw), &args); err != nil {
		t.Fatal(err)
	}
	p := &bulky{replies: []providers.AssistantMessage{
		{Content: []providers.Content{providers.ToolCall{ID: "a", Name: "final_answer", RawArguments: raw, Arguments: args}}}}}
	a := mustNew(Options{Config: loop.Config{Provider: p, Model: model, RequestOptions: providers.RequestOptions{MaxArgumentBytes: 128 << 10}, Limits: loop.Limits{MaxResultBytes: 16 << 10}}})
	_, err := AskWith[invoice](context.Background(), a, "?", AskOptions{Mode: AskTool, MaxAttempts: 2})
	sent := p.sent()
	var ae *AnswerError
	if !errors.As(err, &ae) || len(sent) != 2 || sent[1].last > 16<<10+64 || len(ae.Problem) > MaxQuotedAnswerBytes+64 {
		t.Fatalf("error %v; requests %v", err, sent)
	}
}
