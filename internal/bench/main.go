// Command bench runs the side-by-side workloads of the reference's
// bench.mjs through our loop and prints one JSON line per workload with the
// same fields: workload, calls, events, ms, us_per_call, events_per_s,
// heap_mb. long-run also reports the wall time of its first and last 200
// turns, to show that a turn's cost does not grow with the transcript.
//
//	go run ./internal/bench [-runs 5]
//
// Each workload runs -runs times; the line printed is the median by ms.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"iter"
	"os"
	"runtime"
	"runtime/pprof"
	"sort"
	"time"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/tools"
)

type args struct {
	Path  string `json:"path"`
	Line  int    `json:"line"`
	Mode  string `json:"mode,omitempty" jsonschema:"enum=r,enum=w"`
	Force bool   `json:"force,omitempty"`
}

var model = providers.Model{ID: "faux", API: "faux", Provider: "faux", ContextWindow: 1e9, MaxTokens: 1e6}

// scripted is a provider whose i-th call streams script(i), generating
// each event as the loop asks for it, as a real provider does.
type scripted func(i int) iter.Seq[providers.StreamEvent]

type provider struct {
	script scripted
	calls  int
}

func (p *provider) Stream(_ context.Context, _ *providers.Request) (iter.Seq[providers.StreamEvent], error) {
	seq := p.script(p.calls)
	p.calls++
	return seq, nil
}

func message(content []providers.Content, reason providers.StopReason) iter.Seq[providers.StreamEvent] {
	return func(yield func(providers.StreamEvent) bool) {
		base := &providers.AssistantMessage{API: "faux", Provider: "faux", Model: "faux", StopReason: providers.StopReasonPending}
		if !yield(providers.StreamEvent{Type: providers.StreamStart, Message: base}) {
			return
		}
		final := &providers.AssistantMessage{API: "faux", Provider: "faux", Model: "faux", StopReason: reason, Content: content}
		yield(providers.StreamEvent{Type: providers.StreamDone, Reason: reason, Message: final})
	}
}

var names = []string{"read", "stat", "grep", "list"}

func toolTurn(turn, calls int) iter.Seq[providers.StreamEvent] {
	content := make([]providers.Content, 0, calls)
	for k := range calls {
		var line any = 42.0
		if k%2 == 1 {
			line = "42"
		}
		content = append(content, providers.ToolCall{ID: fmt.Sprintf("t%d_%d", turn, k), Name: names[k%4],
			Arguments: map[string]any{"path": fmt.Sprintf("src/file%d.go", k), "line": line, "mode": "r"}})
	}
	return message(content, providers.StopReasonToolUse)
}

func done() iter.Seq[providers.StreamEvent] {
	return message([]providers.Content{providers.Text{Text: "done"}}, providers.StopReasonStop)
}

func streamed() iter.Seq[providers.StreamEvent] {
	return func(yield func(providers.StreamEvent) bool) {
		b := providers.NewBuilder(model)
		if !yield(b.Start()) || !yield(b.TextStart()) {
			return
		}
		for range 20000 {
			if !yield(b.TextDelta("x")) {
				return
			}
		}
		if !yield(b.TextEnd()) || !yield(b.ToolCallStart("s1", "read")) {
			return
		}
		for range 2000 {
			if !yield(b.ToolCallDelta("a", nil)) {
				return
			}
		}
		_ = yield(b.ToolCallEnd(map[string]any{"path": "a", "line": 1.0}, true)) &&
			yield(b.Done(providers.StopReasonToolUse, providers.Usage{}))
	}
}

type result struct {
	Workload   string   `json:"workload"`
	Calls      int      `json:"calls"`
	Events     int      `json:"events"`
	Ms         float64  `json:"ms"`
	UsPerCall  *float64 `json:"us_per_call"`
	EventsPerS int      `json:"events_per_s"`
	HeapMB     float64  `json:"heap_mb"`
	First200Ms *float64 `json:"first200_ms,omitempty"`
	Last200Ms  *float64 `json:"last200_ms,omitempty"`
}

func run(name string, script scripted, expect int, toolset []*tools.Tool) (result, error) {
	runtime.GC()
	var turnEnds []time.Time
	nevents := 0
	sink := func(_ context.Context, e events.Event) {
		nevents++
		if _, ok := e.(events.TurnEnd); ok {
			turnEnds = append(turnEnds, time.Now())
		}
	}
	cfg := loop.Config{Provider: &provider{script: script}, Model: model}
	prompt := providers.UserMessage{Content: []providers.Content{providers.Text{Text: "go"}}}
	t0 := time.Now()
	msgs, err := loop.Run(context.Background(), []providers.Message{prompt}, loop.Context{Tools: toolset}, cfg, sink)
	elapsed := time.Since(t0)
	if err != nil {
		return result{}, err
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	calls := 0
	for _, m := range msgs {
		if m.Role() == providers.RoleToolResult {
			calls++
		}
	}
	if calls != expect {
		return result{}, fmt.Errorf("%s: expected %d calls, got %d", name, expect, calls)
	}
	msf := float64(elapsed.Microseconds()) / 1000
	r := result{Workload: name, Calls: calls, Events: nevents, Ms: round(msf, 1),
		EventsPerS: int(float64(nevents) / elapsed.Seconds()), HeapMB: round(float64(ms.HeapAlloc)/(1<<20), 1)}
	if calls > 0 {
		u := round(msf*1000/float64(calls), 2)
		r.UsPerCall = &u
	}
	if len(turnEnds) > 400 {
		first := round(float64(turnEnds[199].Sub(t0).Microseconds())/1000, 2)
		n := len(turnEnds) - 1 // the last turn is the final answer
		last := round(float64(turnEnds[n-1].Sub(turnEnds[n-201]).Microseconds())/1000, 2)
		r.First200Ms, r.Last200Ms = &first, &last
	}
	return r, nil
}

func round(f float64, digits int) float64 {
	p := 1.0
	for range digits {
		p *= 10
	}
	return float64(int64(f*p+0.5)) / p
}

func main() {
	runs := flag.Int("runs", 5, "runs per workload; the median is printed")
	only := flag.String("only", "", "run only this workload")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to this file")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		_ = pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	toolset := make([]*tools.Tool, len(names))
	for i, n := range names {
		toolset[i] = tools.Must(tools.New(n, n, func(context.Context, string, args, tools.UpdateFunc) (tools.Result, error) {
			return tools.TextResult("ok"), nil
		}))
	}
	workloads := []struct {
		name   string
		script scripted
		expect int
	}{
		{"tool-heavy", func(i int) iter.Seq[providers.StreamEvent] {
			if i < 200 {
				return toolTurn(i, 8)
			}
			return done()
		}, 1600},
		{"long-run", func(i int) iter.Seq[providers.StreamEvent] {
			if i < 2000 {
				return toolTurn(i, 1)
			}
			return done()
		}, 2000},
		{"stream", func(i int) iter.Seq[providers.StreamEvent] {
			if i > 0 {
				return done()
			}
			return streamed()
		}, 1},
	}
	enc := json.NewEncoder(os.Stdout)
	for _, w := range workloads {
		if *only != "" && w.name != *only {
			continue
		}
		var rs []result
		for range *runs {
			r, err := run(w.name, w.script, w.expect, toolset)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return
			}
			rs = append(rs, r)
		}
		sort.Slice(rs, func(i, j int) bool { return rs[i].Ms < rs[j].Ms })
		_ = enc.Encode(rs[len(rs)/2])
	}
}
