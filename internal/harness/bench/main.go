// Command bench runs the side-by-side workloads of the reference's
// bench.mjs through our loop and prints one JSON line per workload with the
// same fields: workload, calls, events, ms, us_per_call, events_per_s,
// heap_mb. long-run also reports the wall time of its first and last 200
// turns, to show that a turn's cost does not grow with the transcript.
//
//	go run ./internal/harness/bench [-runs 5]
//
// Each workload runs -runs times; the line printed is the median by ms.
// With -reference DIR (a folder holding the reference's bench.mjs after
// npm install), the reference runs too, alternating with ours on the same
// machine, and a ratio line follows each workload:
//
//	go run ./internal/harness/bench -runs 9 -reference ../shared/reference
//
// Before each measured run, the workload runs unmeasured for -warmup
// (20 ms by default; 0 turns it off). While the reference runs, this
// process sits idle, and a measurement that starts on a CPU waking from
// idle is slower by a third or more on a shared virtual machine; the
// reference starts measuring right after its own start-up, on a busy CPU.
// The workloads themselves are built exactly as bench.mjs builds them,
// during the measured run.
//
// long-run's line also carries "nogc": its first- and last-200-turn times
// measured again with the collector off. With it on, the one or two
// collections of a run mark the whole transcript, and whichever 200-turn
// window they overlap pays for that; with it off, what remains is the
// turn's own cost.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/agentloop/agentloop/events"
	"github.com/agentloop/agentloop/loop"
	agentotel "github.com/agentloop/agentloop/loop/otel"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/kit"
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

// Stream yields the next scripted response.
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
		content = append(content, providers.ToolCall{ID: "t" + strconv.Itoa(turn) + "_" + strconv.Itoa(k), Name: names[k%4],
			Arguments: map[string]any{"path": "src/file" + strconv.Itoa(k) + ".go", "line": line, "mode": "r"}})
	}
	return message(content, providers.StopReasonToolUse)
}

func done() iter.Seq[providers.StreamEvent] {
	return message([]providers.Content{providers.Text{Text: "done"}}, providers.StopReasonStop)
}

func streamed() iter.Seq[providers.StreamEvent] {
	return func(yield func(providers.StreamEvent) bool) {
		b := kit.NewBuilder(model)
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
	// Growth is last200_ms / first200_ms: how much a turn's cost grew
	// from the start of the run to its end (target: at most 1.5).
	Growth *float64 `json:"growth,omitempty"`
	// FirstTurnUs and LastTurnUs are the median single-turn times of the
	// first and last 200 turns, in µs.
	FirstTurnUs *float64 `json:"first_turn_us,omitempty"`
	LastTurnUs  *float64 `json:"last_turn_us,omitempty"`
	// NoGC holds the first- and last-200-turn times and their ratio
	// measured again with the collector off: the turn's own cost, apart
	// from the collection that marks the whole transcript once it has
	// grown (see README "Performance").
	NoGC *window `json:"nogc,omitempty"`
}

type window struct {
	First200Ms float64 `json:"first200_ms"`
	Last200Ms  float64 `json:"last200_ms"`
	Growth     float64 `json:"growth"`
}

// observe instruments a run's config and event handler (the -otel flag's
// tracer), or leaves them as they are.
type observe func(loop.Config, events.Handler) (loop.Config, events.Handler)

// run runs one workload of at most turns model calls.
func run(name string, script scripted, expect, turns int, toolset []*tools.Tool, obs observe) (result, error) {
	runtime.GC()
	var turnEnds []time.Time
	nevents := 0
	sink := func(_ context.Context, e events.Event) {
		nevents++
		if _, ok := e.(events.TurnEnd); ok {
			turnEnds = append(turnEnds, time.Now())
		}
	}
	// The workloads make more model calls than loop.DefaultMaxTurns.
	cfg := loop.Config{Provider: &provider{script: script}, Model: model, Limits: loop.Limits{MaxTurns: turns}}
	var handler events.Handler = sink
	if obs != nil {
		cfg, handler = obs(cfg, sink)
	}
	prompt := providers.UserMessage{Content: []providers.Content{providers.Text{Text: "go"}}}
	t0 := time.Now()
	msgs, err := loop.Run(context.Background(), []providers.Message{prompt}, loop.Conversation{Tools: toolset}, cfg, handler)
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
		// The median single turn of each window: the turn's own cost,
		// without the GC cycles that land in one window or the other.
		perTurn := func(from, to int) float64 {
			var ds []float64
			for i := from; i < to; i++ {
				ds = append(ds, float64(turnEnds[i].Sub(turnEnds[i-1]).Nanoseconds())/1000)
			}
			sort.Float64s(ds)
			return round(ds[len(ds)/2], 2)
		}
		ft, lt := perTurn(1, 200), perTurn(n-200, n)
		r.FirstTurnUs, r.LastTurnUs = &ft, &lt
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
	reference := flag.String("reference", "", "folder of the reference's bench.mjs (with node_modules): run it too, alternating, and print the ratios")
	warmup := flag.Duration("warmup", 20*time.Millisecond, "before each measured run, run the workload unmeasured for this long")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to this file")
	withOtel := flag.Bool("otel", false, "instrument every run with loop/otel on the global (no-op) providers, to measure what it costs")
	flag.Parse()
	var obs observe
	if *withOtel {
		tr := agentotel.New(agentotel.Options{})
		obs = func(cfg loop.Config, sink events.Handler) (loop.Config, events.Handler) {
			cfg.Hooks = append(cfg.Hooks, tr.Hooks())
			return cfg, sink
		}
	}
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
		toolset[i] = tools.Must(tools.New(tools.Config{Name: n, Description: n}, func(context.Context, args) (tools.Result, error) {
			return tools.TextResult("ok"), nil
		}))
	}
	workloads := []struct {
		name   string
		script scripted
		expect int // tool calls
		turns  int // model calls
	}{
		{"tool-heavy", func(i int) iter.Seq[providers.StreamEvent] {
			if i < 200 {
				return toolTurn(i, 8)
			}
			return done()
		}, 1600, 201},
		{"long-run", func(i int) iter.Seq[providers.StreamEvent] {
			if i < 2000 {
				return toolTurn(i, 1)
			}
			return done()
		}, 2000, 2001},
		{"stream", func(i int) iter.Seq[providers.StreamEvent] {
			if i > 0 {
				return done()
			}
			return streamed()
		}, 1, 2},
	}
	enc := json.NewEncoder(os.Stdout)
	ours := map[string][]result{}
	theirs := map[string][]result{}
	for range *runs {
		if *reference != "" {
			rs, err := runReference(*reference)
			if err != nil {
				fmt.Fprintln(os.Stderr, "reference:", err)
				return
			}
			for _, r := range rs {
				theirs[r.Workload] = append(theirs[r.Workload], r)
			}
		}
		for _, w := range workloads {
			if *only != "" && w.name != *only {
				continue
			}
			for start := time.Now(); time.Since(start) < *warmup; {
				if _, err := run(w.name, w.script, w.expect, w.turns, toolset, obs); err != nil {
					fmt.Fprintln(os.Stderr, err)
					return
				}
			}
			r, err := run(w.name, w.script, w.expect, w.turns, toolset, obs)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return
			}
			ours[w.name] = append(ours[w.name], r)
		}
	}
	for _, w := range workloads {
		if len(ours[w.name]) == 0 {
			continue
		}
		mine := median(ours[w.name])
		if mine.First200Ms != nil {
			nogc, err := withoutGC(func() (result, error) { return run(w.name, w.script, w.expect, w.turns, toolset, obs) }, *runs)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return
			}
			mine.NoGC = nogc
		}
		_ = enc.Encode(mine)
		if ref := theirs[w.name]; len(ref) > 0 {
			r := median(ref)
			_ = enc.Encode(map[string]any{"workload": w.name, "reference_ms": r.Ms, "ms": mine.Ms,
				"ratio": round(r.Ms/mine.Ms, 1), "reference_heap_mb": r.HeapMB, "heap_mb": mine.HeapMB})
		}
	}
}

// median returns the run with the median wall time; the first- and
// last-200-turn times are medians of their own across the runs, since one
// GC cycle landing in a 1 ms window swings a single run's figure.
func median(rs []result) result {
	rs = append([]result(nil), rs...)
	sort.Slice(rs, func(i, j int) bool { return rs[i].Ms < rs[j].Ms })
	m := rs[len(rs)/2]
	if m.First200Ms != nil {
		med := func(get func(result) float64) *float64 {
			var xs []float64
			for _, r := range rs {
				xs = append(xs, get(r))
			}
			sort.Float64s(xs)
			return &xs[len(xs)/2]
		}
		m.First200Ms = med(func(r result) float64 { return *r.First200Ms })
		m.Last200Ms = med(func(r result) float64 { return *r.Last200Ms })
		m.FirstTurnUs = med(func(r result) float64 { return *r.FirstTurnUs })
		m.LastTurnUs = med(func(r result) float64 { return *r.LastTurnUs })
		f, l := *m.First200Ms, *m.Last200Ms
		g := round(l/f, 2)
		m.Growth = &g
	}
	return m
}

// withoutGC measures a workload's turn windows n times with the collector
// off and returns their medians.
func withoutGC(measure func() (result, error), n int) (*window, error) {
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var rs []result
	for range n {
		r, err := measure()
		if err != nil {
			return nil, err
		}
		rs = append(rs, r)
	}
	m := median(rs)
	return &window{First200Ms: *m.First200Ms, Last200Ms: *m.Last200Ms, Growth: *m.Growth}, nil
}

// runReference runs the reference's bench.mjs once and parses its lines.
func runReference(dir string) ([]result, error) {
	cmd := exec.Command("node", "--expose-gc", "bench.mjs")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return nil, err
	}
	var rs []result
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r result
		if json.Unmarshal([]byte(line), &r) == nil && r.Workload != "" {
			rs = append(rs, r)
		}
	}
	return rs, nil
}
