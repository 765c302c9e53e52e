package agent

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/agentloop/agentloop/internal/harness/heapwatch"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// TestSoak runs many agents at once, each for many turns, with parallel
// tools that sleep a little at random. Every transcript must be well formed
// and no goroutine may be left (TestMain checks). By default it runs
// soakAgents agents (100 × 20 turns); the full size, 1,000 agents × 50
// turns, runs with the soak build tag:
//
//	go test -tags soak -race -run TestSoak ./agent/
func TestSoak(t *testing.T) {
	const agents, turns, calls = soakAgents, soakTurns, 3
	tool := tools.Must(tools.New(tools.Config{Name: "work"}, func(ctx context.Context, a labelArgs) (tools.Result, error) {
		id := tools.CallID(ctx)
		up := func(p tools.Result) { tools.ReportProgress(ctx, p) }
		up(tools.TextResult("started " + id))
		select {
		case <-ctx.Done():
			return tools.Result{}, ctx.Err()
		case <-time.After(time.Duration(rand.IntN(2000)) * time.Microsecond):
		}
		return tools.TextResult("done " + a.Label), nil
	}))
	start := time.Now()
	errs := make(chan error, agents)
	peak, _ := heapwatch.Peak(20*time.Millisecond, func() {
		var wg sync.WaitGroup
		defer wg.Wait()
		for i := range agents {
			wg.Add(1)
			go func() {
				defer wg.Done()
				p := &faux.Provider{}
				turn := 0
				p.Default = func(context.Context, *providers.Request) (providers.AssistantMessage, error) {
					turn++
					if turn > turns {
						return faux.Reply(faux.Text("finished")), nil
					}
					var blocks []providers.Content
					for k := range calls {
						blocks = append(blocks, faux.Call(fmt.Sprintf("a%d_t%d_c%d", i, turn, k), "work", map[string]any{"label": fmt.Sprint(k)}))
					}
					return faux.Reply(blocks...), nil
				}
				a := newAgent(p, tool)
				if err := a.Prompt(context.Background(), providers.NewUserText("go")); err != nil {
					errs <- err
					return
				}
				if err := wellFormed(a.State().Messages, turns*calls); err != nil {
					errs <- fmt.Errorf("agent %d: %w", i, err)
				}
			}()
		}
	})
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d agents × %d turns × %d calls in %v; peak heap %.1f MiB", agents, turns, calls, time.Since(start).Round(time.Millisecond), float64(peak)/(1<<20))
	fmt.Printf("soak: %d agents x %d turns in %v, peak heap %.1f MiB\n", agents, turns, time.Since(start).Round(time.Millisecond), float64(peak)/(1<<20))
}

// wellFormed checks that every tool call is answered exactly once, right
// after its message and in call order.
func wellFormed(msgs []providers.Message, wantCalls int) error {
	answered := 0
	for i := 0; i < len(msgs); i++ {
		a, ok := msgs[i].(providers.AssistantMessage)
		if !ok {
			continue
		}
		for _, c := range a.ToolCalls() {
			i++
			tr, ok := msgs[i].(providers.ToolResultMessage)
			if !ok || tr.ToolCallID != c.ID || tr.IsError || tr.Text() != "done "+fmt.Sprint(c.Arguments["label"]) {
				return fmt.Errorf("message %d does not answer %s", i, c.ID)
			}
			answered++
		}
	}
	if answered != wantCalls {
		return fmt.Errorf("%d calls answered, want %d", answered, wantCalls)
	}
	return nil
}
