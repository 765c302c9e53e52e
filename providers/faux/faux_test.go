package faux_test

import (
	"context"
	"errors"
	"testing"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
)

func collect(t *testing.T, p *faux.Provider, ctx context.Context) []providers.StreamEvent {
	t.Helper()
	seq, err := p.Stream(ctx, &providers.Request{Model: providers.Model{ID: "m", API: "faux", Provider: "faux"},
		Messages: []providers.Message{providers.NewUserText("hi")}})
	if err != nil {
		t.Fatal(err)
	}
	var evs []providers.StreamEvent
	for e := range seq {
		evs = append(evs, e)
	}
	return evs
}

func TestStreamsBlocks(t *testing.T) {
	p := faux.New(faux.Reply(faux.Text("hello world"), faux.Call("c1", "read", map[string]any{"p": "x"})))
	evs := collect(t, p, context.Background())
	var types []providers.StreamEventType
	for _, e := range evs {
		types = append(types, e.Type)
	}
	if types[0] != providers.StreamStart || types[len(types)-1] != providers.StreamDone {
		t.Fatalf("types %v", types)
	}
	final := evs[len(evs)-1].Message
	if final.Text() != "hello world" || final.StopReason != providers.StopReasonToolUse || final.Model != "m" {
		t.Fatalf("final %+v", final)
	}
	if got := p.Requests(); len(got) != 1 || got[0].Messages[0].(providers.UserMessage).Text() != "hi" {
		t.Fatalf("requests %v", got)
	}
}

func TestScriptedFailures(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p := faux.New(faux.Reply(faux.Text("x")))
	if e := collect(t, p, ctx); e[len(e)-1].Message.ErrorMessage != providers.AbortedMessage || e[len(e)-1].Reason != providers.StopReasonAborted {
		t.Fatalf("cancelled: %+v", e[len(e)-1])
	}
	empty := faux.New()
	if e := collect(t, empty, context.Background()); e[len(e)-1].Message.ErrorMessage != faux.EmptyMessage {
		t.Fatalf("empty: %+v", e[len(e)-1].Message)
	}
	failing := faux.New(faux.Failure("upstream 500"))
	failing.PushFunc(func(context.Context, *providers.Request) (providers.AssistantMessage, error) {
		return providers.AssistantMessage{}, errors.New("step failed")
	})
	if e := collect(t, failing, context.Background()); e[len(e)-1].Type != providers.StreamError || e[len(e)-1].Message.ErrorMessage != "upstream 500" {
		t.Fatalf("failure: %+v", e[len(e)-1])
	}
	if e := collect(t, failing, context.Background()); e[len(e)-1].Message.ErrorMessage != "step failed" {
		t.Fatalf("step error: %+v", e[len(e)-1])
	}
}

func TestConsumerMayStopEarly(t *testing.T) {
	p := faux.New(faux.Reply(faux.Text("a long text to stream in chunks")))
	seq, _ := p.Stream(context.Background(), &providers.Request{})
	n := 0
	for range seq {
		if n++; n == 3 {
			break
		}
	}
}
