package loop

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

func TestOmittedImageText(t *testing.T) {
	const want = "[An image was left out here: with it, the tool result would pass the limit on what can be sent back. Ask for fewer or smaller images.]"
	if OmittedImageText != want {
		t.Fatalf("OmittedImageText = %q", OmittedImageText)
	}
	if got := oversizedResultText("shot", 5000, 4096); got != "Tool shot returned 5000 bytes of content, more than the limit of 4096 bytes that can be sent back. "+
		"Ask for less (a narrower query, a range, a summary)." {
		t.Fatalf("oversizedResultText = %q", got)
	}
}

// TestResultCapCountsEveryKind plays tools that return huge content of
// every kind, straight, as error results and through AfterToolCall, under
// a cap of 4096 bytes: what the model reads, the call's outcome, and that
// what is kept stays within the cap.
func TestResultCapCountsEveryKind(t *testing.T) {
	const max = 4096
	img := func(n int) providers.Image {
		return providers.Image{Data: strings.Repeat("A", n), MIMEType: "image/png"}
	}
	text := func(n int) providers.Text { return providers.Text{Text: strings.Repeat("t", n)} }
	omitted := providers.Text{Text: OmittedImageText}
	tooLarge := func(n int) []providers.Content {
		return []providers.Content{providers.Text{Text: oversizedResultText("t", n, max)}}
	}
	ok := func(c ...providers.Content) func(context.Context, labelArgs) (tools.Result, error) {
		return func(context.Context, labelArgs) (tools.Result, error) { return tools.Result{Content: c}, nil }
	}
	failing := func(c ...providers.Content) func(context.Context, labelArgs) (tools.Result, error) {
		return func(context.Context, labelArgs) (tools.Result, error) {
			return tools.Result{}, tools.ErrorResult(tools.Result{Content: c})
		}
	}
	many := func(n int, b providers.Content) []providers.Content { return slices.Repeat([]providers.Content{b}, n) }
	tests := []struct {
		name    string
		body    func(context.Context, labelArgs) (tools.Result, error)
		after   []providers.Content // AfterToolCall's replacement content
		want    []providers.Content
		isError bool
		outcome events.Outcome
	}{
		{"a huge image alone", ok(img(15000)), nil, []providers.Content{omitted}, false, events.OutcomeOK},
		{"an image that fits", ok(text(100), img(3000)), nil, []providers.Content{text(100), img(3000)}, false, events.OutcomeOK},
		{"what fits stays, in order", ok(text(100), img(5000), img(1000), text(10), img(2000), img(800), img(500)), nil,
			[]providers.Content{text(100), omitted, img(1000), text(10), img(2000), omitted, img(500)}, false, events.OutcomeOK},
		{"text leaves no room for the image", ok(text(3000), img(2000)), nil, []providers.Content{text(3000), omitted}, false, events.OutcomeOK},
		{"too much text", ok(text(5000)), nil, tooLarge(5016), true, events.OutcomeResultTooLarge},
		{"text and images, text too much", ok(text(4200), img(100)), nil, tooLarge(4216 + 125), true, events.OutcomeResultTooLarge},
		{"a flood of empty blocks", ok(many(300, providers.Text{})...), nil, tooLarge(300 * 16), true, events.OutcomeResultTooLarge},
		{"a flood of small images", ok(many(300, img(20))...), nil, tooLarge(300 * 45), true, events.OutcomeResultTooLarge},
		{"huge thinking", ok(providers.Thinking{Thinking: strings.Repeat("h", 5000)}), nil, tooLarge(5016), true, events.OutcomeResultTooLarge},
		{"a huge tool call block", ok(providers.ToolCall{ID: "x", Name: "y", Arguments: map[string]any{"k": strings.Repeat("v", 5000)}}), nil,
			tooLarge(16 + 2 + 2 + 5 + 5002), true, events.OutcomeResultTooLarge},
		{"an error result's image", failing(text(20), img(15000)), nil, []providers.Content{text(20), omitted}, true, events.OutcomeFailed},
		{"an error result's text", failing(text(9000)), nil, tooLarge(9016), true, events.OutcomeResultTooLarge},
		{"rewritten by the hook to a huge image", ok(text(5)), []providers.Content{img(15000), text(5)}, []providers.Content{omitted, text(5)}, false, events.OutcomeOK},
		{"rewritten by the hook to huge text", ok(text(5)), []providers.Content{text(9000)}, tooLarge(9016), true, events.OutcomeResultTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := echoTool(t, "t", tt.body)
			cfg := Config{Limits: Limits{MaxResultBytes: max}}
			if tt.after != nil {
				cfg.Hooks = []Hooks{{AfterToolCall: func(context.Context, AfterCall) (AfterResult, error) { return AfterResult{Content: tt.after}, nil }}}
			}
			p := faux.New(faux.Reply(faux.Call("a", "t", map[string]any{"label": "1"})), faux.Reply())
			msgs, rec := runLoop(t, context.Background(), p, []*tools.Tool{w}, cfg)
			tr := msgs[2].(providers.ToolResultMessage)
			if !slices.Equal(tr.Content, tt.want) || tr.IsError != tt.isError {
				t.Fatalf("the model reads %.300v (error %v), want %.300v", tr.Content, tr.IsError, tt.want)
			}
			if ends := rec.ends(); len(ends) != 1 || ends[0].Outcome != tt.outcome || !slices.Equal(ends[0].Result.Content, tt.want) {
				t.Fatalf("end %+.300v, want outcome %s", ends, tt.outcome)
			}
			sent := 0
			for _, b := range tr.Content {
				switch b := b.(type) {
				case providers.Text:
					sent += len(b.Text)
				case providers.Image:
					sent += len(b.Data)
				}
			}
			if sent > max {
				t.Fatalf("%d bytes sent back, over the cap of %d", sent, max)
			}
		})
	}
}

// TestResultCapDetails: details the transcript would keep are dropped
// when they pass the cap on their own, whatever their shape; the content
// stays.
func TestResultCapDetails(t *testing.T) {
	type report struct{ Rows []string }
	huge := strings.Repeat("d", 5000)
	tests := []struct {
		name    string
		details any
		kept    bool
	}{
		{"small map", map[string]any{"rows": 3}, true},
		{"map with a huge string", map[string]any{"blob": huge}, false},
		{"deep list", []any{[]any{map[string]any{"a": []any{huge}}}}, false},
		{"many small keys", func() map[string]any {
			m := map[string]any{}
			for i := range 2000 {
				m[strings.Repeat("k", 4)+string(rune('a'+i%26))+strings.Repeat("x", i%7)+string(rune(i))] = i
			}
			return m
		}(), false},
		{"a struct", report{Rows: []string{huge}}, false},
		{"a small struct", report{Rows: []string{"a"}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := echoTool(t, "t", func(context.Context, labelArgs) (tools.Result, error) {
				return tools.Result{Content: []providers.Content{providers.Text{Text: "ok"}}, Details: tt.details}, nil
			})
			p := faux.New(faux.Reply(faux.Call("a", "t", map[string]any{"label": "1"})), faux.Reply())
			msgs, _ := runLoop(t, context.Background(), p, []*tools.Tool{w}, Config{Limits: Limits{MaxResultBytes: 4096}})
			tr := msgs[2].(providers.ToolResultMessage)
			if tr.IsError || tr.Text() != "ok" || (tr.Details != nil) != tt.kept {
				t.Fatalf("result %q error %v, details kept %v, want %v", tr.Text(), tr.IsError, tr.Details != nil, tt.kept)
			}
		})
	}
}

// TestResultCapLeavesToolsContent: cutting a result builds a new content
// list; the list the tool returned (which it may reuse) is untouched. No
// cap passes everything.
func TestResultCapLeavesToolsContent(t *testing.T) {
	shared := []providers.Content{providers.Image{Data: strings.Repeat("A", 9000), MIMEType: "image/png"}, providers.Text{Text: "caption"}}
	orig := slices.Clone(shared)
	w := echoTool(t, "t", func(context.Context, labelArgs) (tools.Result, error) { return tools.Result{Content: shared}, nil })
	for _, tt := range []struct {
		max  int
		want []providers.Content
	}{{4096, []providers.Content{providers.Text{Text: OmittedImageText}, providers.Text{Text: "caption"}}}, {-1, orig}} {
		p := faux.New(faux.Reply(faux.Call("a", "t", map[string]any{"label": "1"})), faux.Reply())
		msgs, _ := runLoop(t, context.Background(), p, []*tools.Tool{w}, Config{Limits: Limits{MaxResultBytes: tt.max}})
		if got := msgs[2].(providers.ToolResultMessage).Content; !slices.Equal(got, tt.want) {
			t.Fatalf("max %d: content %.200v", tt.max, got)
		}
		if !slices.Equal(shared, orig) {
			t.Fatal("the tool's own content list was changed")
		}
	}
}

// TestResultCapPartials: progress reports are held to the cap as results
// are: an image that does not fit is replaced, text that does not fit
// says so; a report that fits is published as it is.
func TestResultCapPartials(t *testing.T) {
	w := echoTool(t, "t", func(ctx context.Context, _ labelArgs) (tools.Result, error) {
		tools.ReportProgress(ctx, tools.Result{Content: []providers.Content{providers.Text{Text: "frame"}, providers.Image{Data: strings.Repeat("A", 9000), MIMEType: "image/png"}}})
		tools.ReportProgress(ctx, tools.TextResult(strings.Repeat("l", 9000)))
		tools.ReportProgress(ctx, tools.TextResult("half way"))
		return tools.TextResult("ok"), nil
	})
	p := faux.New(faux.Reply(faux.Call("a", "t", map[string]any{"label": "1"})), faux.Reply())
	_, rec := runLoop(t, context.Background(), p, []*tools.Tool{w}, Config{Limits: Limits{MaxResultBytes: 4096}})
	var got [][]providers.Content
	for _, e := range rec.all() {
		if u, ok := e.(events.ToolExecutionUpdate); ok {
			got = append(got, u.Partial.Content)
		}
	}
	want := [][]providers.Content{
		{providers.Text{Text: "frame"}, providers.Text{Text: OmittedImageText}},
		{providers.Text{Text: oversizedResultText("t", 9016, 4096)}},
		{providers.Text{Text: "half way"}},
	}
	if len(got) != len(want) {
		t.Fatalf("%d updates", len(got))
	}
	for i := range want {
		if !slices.Equal(got[i], want[i]) {
			t.Fatalf("update %d: %.200v", i, got[i])
		}
	}
}
