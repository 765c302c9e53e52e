package loop

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// patience bounds every wait in these tests. What they wait for takes
// microseconds; the bound only turns a hang into a failure.
const patience = 30 * time.Second

// callsTo returns a reply of n calls to tool, with ids c00, c01, ...
func callsTo(tool string, n int) providers.AssistantMessage {
	var calls []providers.Content
	for i := range n {
		calls = append(calls, faux.Call(fmt.Sprintf("c%02d", i), tool, map[string]any{"label": fmt.Sprint(i)}))
	}
	return faux.Reply(calls...)
}

// runAsync runs the loop on its own goroutine; the returned channel
// yields its messages once it ends.
func runAsync(t *testing.T, ctx context.Context, p providers.Provider, ts []*tools.Tool, cfg Config) <-chan []providers.Message {
	t.Helper()
	cfg.Provider = p
	cfg.Model = cfgFor(p).Model
	done := make(chan []providers.Message, 1)
	go func() {
		msgs, err := Run(ctx, []providers.Message{providers.NewUserText("go")}, Conversation{Tools: ts}, cfg, nil)
		if err != nil {
			t.Errorf("Run: %v", err)
		}
		done <- msgs
	}()
	return done
}

// TestBodiesStartTogether: n bodies that each wait at one barrier until all
// n have arrived. They can only get past it if every body starts before
// any returns, so the test hangs (and fails after patience) unless the
// bodies truly run together.
func TestBodiesStartTogether(t *testing.T) {
	for _, tc := range []struct {
		n, limit int
	}{{2, 0}, {32, 0}, {32, 32}, {32, 100}} {
		t.Run(fmt.Sprintf("n=%d,limit=%d", tc.n, tc.limit), func(t *testing.T) {
			var arrived sync.WaitGroup
			arrived.Add(tc.n)
			all := make(chan struct{})
			go func() { arrived.Wait(); close(all) }()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			body := func(ctx context.Context, a labelArgs) (tools.Result, error) {
				arrived.Done()
				select {
				case <-all:
					return tools.TextResult("passed " + a.Label), nil
				case <-ctx.Done():
					return tools.Result{}, ctx.Err()
				}
			}
			p := faux.New(callsTo("w", tc.n), faux.Reply())
			done := runAsync(t, ctx, p, []*tools.Tool{echoTool(t, "w", body)}, Config{Limits: Limits{MaxParallelTools: tc.limit}})
			select {
			case <-all:
			case <-time.After(patience):
				cancel()
				<-done
				t.Fatalf("not every body started before the others returned")
			}
			msgs := <-done
			for i := range tc.n {
				if tr := msgs[2+i].(providers.ToolResultMessage); tr.IsError || tr.Text() != fmt.Sprint("passed ", i) {
					t.Fatalf("result %d: %q", i, tr.Text())
				}
			}
		})
	}
}

// TestMaxParallelTools: with a limit of k, exactly k bodies run at once:
// the first k all start while none has returned (a limit below k would
// hang), and a (k+1)-th starts only after one of them returns.
func TestMaxParallelTools(t *testing.T) {
	const n = 12
	for _, k := range []int{1, 2, 3, 5} {
		t.Run(fmt.Sprint("k=", k), func(t *testing.T) {
			var cur, peak atomic.Int32
			arrive := make(chan struct{})
			release := make(chan struct{})
			body := func(context.Context, labelArgs) (tools.Result, error) {
				c := cur.Add(1)
				for p := peak.Load(); c > p && !peak.CompareAndSwap(p, c); p = peak.Load() {
				}
				arrive <- struct{}{}
				<-release
				cur.Add(-1)
				return tools.TextResult("ok"), nil
			}
			p := faux.New(callsTo("w", n), faux.Reply())
			done := runAsync(t, context.Background(), p, []*tools.Tool{echoTool(t, "w", body)}, Config{Limits: Limits{MaxParallelTools: k}})
			timeout := time.After(patience)
			for i := range n {
				select {
				case <-arrive:
				case <-timeout:
					t.Fatalf("only %d bodies started (limit %d)", i, k)
				}
				if i == k-1 {
					if got := cur.Load(); got != int32(k) {
						t.Fatalf("%d bodies running once the first %d started", got, k)
					}
				}
				if i >= k-1 {
					release <- struct{}{} // one returns; the next may start
				}
			}
			for range k - 1 {
				release <- struct{}{}
			}
			<-done
			if got := peak.Load(); got != int32(k) {
				t.Fatalf("peak concurrency %d, want exactly %d", got, k)
			}
		})
	}
}
