package loop

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// changing is a tool source whose set a test replaces.
type changing struct {
	mu      sync.Mutex
	set     []*tools.Tool
	version uint64
}

func (c *changing) Tools() ([]*tools.Tool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.set, c.version
}

func (c *changing) replace(set ...*tools.Tool) {
	c.mu.Lock()
	c.set, c.version = set, c.version+1
	c.mu.Unlock()
}

// TestToolSourcesChangeBetweenTurns: a source's new set is offered from
// the next model call on, never to the batch in flight (a body that
// changes the set still finishes its batch with the tools it started
// with); the change is a tools_changed event; a source's tool named like
// the conversation's is left out.
func TestToolSourcesChangeBetweenTurns(t *testing.T) {
	src := &changing{}
	oldTool := echoTool(t, "old", nil)
	newTool := echoTool(t, "new", nil)
	clash := echoTool(t, "mine", nil)
	swap := echoTool(t, "swap", func(ctx context.Context, _ labelArgs) (tools.Result, error) {
		src.replace(newTool, clash) // mid-batch: the batch goes on as it began
		return tools.TextResult("swapped"), nil
	})
	src.replace(oldTool)
	var offered [][]string
	p := &faux.Provider{}
	p.Default = func(_ context.Context, req *providers.Request) (providers.AssistantMessage, error) {
		var names []string
		for _, s := range req.Tools {
			names = append(names, s.Name)
		}
		offered = append(offered, names)
		switch len(offered) {
		case 1:
			return faux.Reply(faux.Call("a", "swap", map[string]any{"label": "x"}), faux.Call("b", "old", map[string]any{"label": "y"})), nil
		case 2:
			return faux.Reply(faux.Call("c", "new", map[string]any{"label": "z"})), nil
		}
		return faux.Reply(faux.Text("done")), nil
	}
	rec := &recorder{}
	cfg := cfgFor(p)
	cfg.ToolSources = []tools.Source{src}
	cfg.ToolExecution = tools.Sequential // swap runs before old: old is gone from the source by then
	mine := echoTool(t, "mine", nil)
	msgs, err := Run(context.Background(), []providers.Message{providers.NewUserText("go")}, Conversation{Tools: []*tools.Tool{mine, swap}}, cfg, rec.sink)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"mine", "swap", "old"}, {"mine", "swap", "new"}, {"mine", "swap", "new"}}
	if !slices.EqualFunc(offered, want, slices.Equal) {
		t.Fatalf("offered %v, want %v", offered, want)
	}
	var changes []events.ToolsChanged
	for _, e := range rec.all() {
		if c, ok := e.(events.ToolsChanged); ok {
			changes = append(changes, c)
		}
	}
	if len(changes) != 1 || !slices.Equal(changes[0].Added, []string{"new"}) || !slices.Contains(changes[0].Removed, "old") {
		t.Fatalf("changes %+v", changes)
	}
	for _, m := range msgs {
		if tr, ok := m.(providers.ToolResultMessage); ok && tr.IsError {
			t.Errorf("call %s failed: %s", tr.ToolCallID, tr.Text())
		}
	}
}

// TestErrorResultCarriesContent: a body's tools.ErrorResult becomes an
// error result with that content (an image included), not the error's text.
func TestErrorResultCarriesContent(t *testing.T) {
	img := providers.Image{Data: "iVBORw0KGgo=", MIMEType: "image/png"}
	failing := echoTool(t, "shot", func(context.Context, labelArgs) (tools.Result, error) {
		return tools.Result{}, tools.ErrorResult(tools.Result{Content: []providers.Content{providers.Text{Text: "the page crashed"}, img}})
	})
	p := faux.New(faux.Reply(faux.Call("a", "shot", map[string]any{"label": "x"})), faux.Reply(faux.Text("ok")))
	msgs, err := Run(context.Background(), []providers.Message{providers.NewUserText("go")}, Conversation{Tools: []*tools.Tool{failing}}, cfgFor(p), nil)
	if err != nil {
		t.Fatal(err)
	}
	tr := msgs[2].(providers.ToolResultMessage)
	if !tr.IsError || tr.Text() != "the page crashed" || len(tr.Content) != 2 || tr.Content[1] != providers.Content(img) {
		t.Fatalf("result %+v", tr)
	}
}

// TestToolSourcesHiddenNames: a source's tool named like a tool before it
// is left out and said so (tools_changed's Hidden), before the first
// model call and again when that changes; the user is not left guessing
// why a server's tool is never offered.
func TestToolSourcesHiddenNames(t *testing.T) {
	src := &changing{}
	src.replace(echoTool(t, "mine", nil), echoTool(t, "theirs", nil))
	calls := 0
	p := &faux.Provider{}
	p.Default = func(context.Context, *providers.Request) (providers.AssistantMessage, error) {
		calls++
		if calls == 1 {
			src.replace(echoTool(t, "theirs", nil))
			return faux.Reply(faux.Call("a", "mine", map[string]any{"label": "x"})), nil
		}
		return faux.Reply(faux.Text("done")), nil
	}
	rec := &recorder{}
	cfg := cfgFor(p)
	cfg.ToolSources = []tools.Source{src}
	if _, err := Run(context.Background(), []providers.Message{providers.NewUserText("go")}, Conversation{Tools: []*tools.Tool{echoTool(t, "mine", nil)}}, cfg, rec.sink); err != nil {
		t.Fatal(err)
	}
	var changes []events.ToolsChanged
	for _, e := range rec.all() {
		if c, ok := e.(events.ToolsChanged); ok {
			changes = append(changes, c)
		}
	}
	if len(changes) != 2 ||
		!slices.Equal(changes[0].Hidden, []string{"mine"}) || changes[0].Added != nil || !slices.Equal(changes[0].Tools, []string{"mine", "theirs"}) ||
		changes[1].Hidden == nil || len(changes[1].Hidden) != 0 {
		t.Fatalf("changes %+v", changes)
	}
}
