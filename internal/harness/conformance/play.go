package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// Play runs a scenario through loop.Run and returns its normalized trace,
// one JSON-ready value per line.
func Play(s Scenario) ([]any, error) { return play(s, nil, nil) }

// PlayStepped is Play under rt (the scripted tools sleep on its clock),
// calling observe, when not nil, with every event as the handler gets it.
// The caller closes rt.
func PlayStepped(s Scenario, rt *Stepper, observe func(events.Event)) ([]any, error) {
	return play(s, rt, observe)
}

func play(s Scenario, rt *Stepper, observe func(events.Event)) ([]any, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	p := &player{s: s, rt: rt, order: map[string]json.RawMessage{}}
	model := faux.New()
	for _, r := range s.Responses {
		m, err := p.response(r)
		if err != nil {
			return nil, err
		}
		model.Push(m)
	}
	toolset := make([]*tools.Tool, 0, len(s.Tools))
	for _, st := range s.Tools {
		t, err := p.tool(st)
		if err != nil {
			return nil, err
		}
		toolset = append(toolset, t)
	}
	hooks := loop.Hooks{ConvertToLLM: loop.StandardMessages}
	if s.BeforeToolCall != nil {
		hooks.BeforeToolCall = p.before(cancel)
	}
	if s.AfterToolCall != nil {
		hooks.AfterToolCall = p.after
	}
	cfg := loop.Config{
		Provider: model,
		Model:    providers.Model{ID: "faux", API: "faux", Provider: "faux", ContextWindow: 1000, MaxTokens: 100},
		Hooks:    []loop.Hooks{hooks},
		Queue:    queue{steering: p.queued(s.Steering), followUp: p.queued(s.FollowUp)},
	}
	if rt != nil {
		cfg.Runtime = rt
	}
	if s.ToolExecution == "sequential" {
		cfg.ToolExecution = tools.Sequential
	}
	prompt := providers.UserMessage{Content: []providers.Content{providers.Text{Text: s.Prompt}}}
	_, err := loop.Run(ctx, []providers.Message{prompt}, loop.Conversation{SystemPrompt: s.SystemPrompt, Tools: toolset}, cfg,
		func(_ context.Context, e events.Event) {
			if observe != nil {
				observe(e)
			}
			// Every event is numbered without gaps (events.Seq); the
			// envelope is ours, so the trace leaves it out.
			if err := p.seq.Check(e); err != nil && p.seqErr == nil {
				p.seqErr = err
			}
			switch e.(type) {
			case events.TurnEnd:
				p.mu.Lock()
				p.turnsEnded++
				p.mu.Unlock()
			case events.ToolExecutionStart:
				p.clock.started()
			case events.ToolExecutionEnd:
				p.clock.ended()
			}
			if n := p.normalize(e); n != nil {
				p.trace = append(p.trace, n)
			}
		})
	var failed *loop.RunError // a failed or aborted run is part of the trace
	if err != nil && !errors.As(err, &failed) {
		return nil, err
	}
	if p.seqErr != nil {
		return nil, p.seqErr
	}
	sort.Slice(p.executed, func(i, j int) bool { return p.executed[i].ID < p.executed[j].ID })
	calls := make([]any, len(p.executed))
	for i, e := range p.executed {
		calls[i] = obj("toolCallId", e.ID, "args", e.Args)
	}
	contexts := []any{}
	for _, req := range model.Requests() {
		roles := []any{}
		for _, m := range req.Messages {
			role := string(m.Role())
			if tr, ok := m.(providers.ToolResultMessage); ok {
				role += ":" + tr.ToolCallID
			}
			roles = append(roles, role)
		}
		contexts = append(contexts, roles)
	}
	return append(p.trace, obj("type", "executed", "calls", calls), obj("type", "llm_calls", "contexts", contexts)), nil
}

type execution struct {
	ID   string
	Args any
}

type player struct {
	s          Scenario
	mu         sync.Mutex
	turnsEnded int
	trace      []any
	seq        events.SeqCheck // the run's numbering, checked event by event
	seqErr     error
	executed   []execution
	clock      clock    // the scripted tools' time
	rt         *Stepper // when not nil, their time instead
	// order holds each call's raw arguments, to write $args with the
	// model's key order as the reference does.
	order map[string]json.RawMessage
}

func (p *player) response(r Response) (providers.AssistantMessage, error) {
	m := providers.AssistantMessage{StopReason: providers.StopReason(r.StopReason), ErrorMessage: r.ErrorMessage}
	for _, b := range r.Content {
		switch b.Type {
		case "text":
			m.Content = append(m.Content, providers.Text{Text: b.Text})
		case "toolCall":
			var args map[string]any
			if len(b.Arguments) > 0 {
				if err := json.Unmarshal(b.Arguments, &args); err != nil {
					return m, fmt.Errorf("call %s: arguments: %w", b.ID, err)
				}
			}
			p.order[b.ID] = b.Arguments
			m.Content = append(m.Content, faux.Call(b.ID, b.Name, args))
		}
	}
	return m, nil
}

// queue is the scenario's steering and follow-up messages as a loop.Queue.
type queue struct {
	steering, followUp func(context.Context) []providers.Message
}

func (q queue) Steering(ctx context.Context) []providers.Message { return q.steering(ctx) }
func (q queue) FollowUp(ctx context.Context) []providers.Message { return q.followUp(ctx) }

func (p *player) queued(list []QueuedMessage) func(context.Context) []providers.Message {
	sent := make([]bool, len(list))
	return func(context.Context) []providers.Message {
		p.mu.Lock()
		defer p.mu.Unlock()
		var out []providers.Message
		for i, q := range list {
			if !sent[i] && q.AfterTurn <= p.turnsEnded {
				sent[i] = true
				out = append(out, providers.UserMessage{Content: []providers.Content{providers.Text{Text: q.Text}}})
			}
		}
		return out
	}
}

func (p *player) tool(st ScriptedTool) (*tools.Tool, error) {
	body := func(ctx context.Context, args map[string]any) (tools.Result, error) {
		id := tools.CallID(ctx)
		p.mu.Lock()
		p.executed = append(p.executed, execution{id, args}) // the body's own copy
		p.mu.Unlock()
		for _, u := range st.Updates {
			tools.ReportProgress(ctx, tools.TextResult(u))
		}
		if st.DelayMs > 0 {
			if ctx.Err() != nil {
				return tools.Result{}, errors.New("aborted")
			}
			if !p.sleep(ctx, time.Duration(st.DelayMs)*time.Millisecond) {
				return tools.Result{}, errors.New("aborted")
			}
		}
		if st.Throws != "" {
			return tools.Result{}, errors.New(st.Throws)
		}
		text := "ok"
		if st.Result != nil {
			text = *st.Result
		}
		text = strings.Replace(text, "$args", orderedJSON(args, p.order[id]), 1)
		res := tools.TextResult(text)
		res.Details = map[string]any{}
		res.Terminate = st.Terminate
		return res, nil
	}
	cfg := tools.Config{Name: st.Name, Description: st.Description}
	if st.ExecutionMode == "sequential" {
		cfg.Mode = tools.Sequential
	}
	switch st.PrepareArguments {
	case "oldNewToEdits":
		cfg.PrepareArguments = oldNewToEdits
	case "throws":
		cfg.PrepareArguments = func(map[string]any) (map[string]any, error) { return nil, errors.New("prepareArguments failed") }
	}
	return tools.NewJSON(cfg, st.Parameters, body)
}

// oldNewToEdits lifts {..., oldText, newText} without edits into
// {..., edits: [{oldText, newText}]}.
func oldNewToEdits(m map[string]any) (map[string]any, error) {
	_, hasOld := m["oldText"]
	if _, hasEdits := m["edits"]; !hasOld || hasEdits {
		return m, nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		if k != "oldText" && k != "newText" {
			out[k] = v
		}
	}
	// Like the reference's object literal: a missing newText stays missing.
	edit := map[string]any{}
	for _, k := range []string{"oldText", "newText"} {
		if v, ok := m[k]; ok {
			edit[k] = v
		}
	}
	out["edits"] = []any{edit}
	return out, nil
}

func (p *player) before(cancel context.CancelFunc) func(context.Context, loop.BeforeCall) (loop.BeforeResult, error) {
	return func(_ context.Context, c loop.BeforeCall) (loop.BeforeResult, error) {
		for _, r := range p.s.BeforeToolCall {
			if r.ToolCallID != c.Call.ID {
				continue
			}
			switch r.Action {
			case "block":
				return loop.BeforeResult{Block: true, Reason: r.Reason}, nil
			case "abort":
				cancel()
			case "throw":
				return loop.BeforeResult{}, errors.New(r.Message)
			}
		}
		return loop.BeforeResult{}, nil
	}
}

func (p *player) after(_ context.Context, c loop.AfterCall) (loop.AfterResult, error) {
	for _, r := range p.s.AfterToolCall {
		if r.ToolCallID != c.Call.ID {
			continue
		}
		var out loop.AfterResult
		if r.Content != nil {
			out.Content = []providers.Content{providers.Text{Text: *r.Content}}
		}
		out.IsError, out.Terminate = r.IsError, r.Terminate
		if r.Throws != "" {
			return out, errors.New(r.Throws)
		}
		return out, nil
	}
	return loop.AfterResult{}, nil
}

// sleep waits d on the scripted tools' clock, or until ctx ends; it
// reports whether the full time passed.
func (p *player) sleep(ctx context.Context, d time.Duration) bool {
	if p.rt != nil {
		return p.rt.Sleep(ctx, d)
	}
	return p.clock.sleep(ctx, d)
}
