package loop

import (
	"context"
	"fmt"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/agentloop/agentloop/internal/harness/needs"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

// TestCPUBoundBodiesRunOnSeveralThreads: two bodies that never block spin
// until each has seen the other running on another OS thread at the same
// time, which only bodies running in parallel on two threads can see.
// Bodies run one after another would never let the second start; bodies
// time-sliced on one thread would only ever see their own thread.
func TestCPUBoundBodiesRunOnSeveralThreads(t *testing.T) {
	needs.CPUs(t, 2)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	var threads [2]atomic.Int64 // the thread each body last ran on
	var next atomic.Int32
	var proved atomic.Bool
	deadline := time.Now().Add(patience)
	body := func(context.Context, labelArgs) (tools.Result, error) {
		me := next.Add(1) - 1
		for !proved.Load() { // spin: no blocking, no yielding
			tid := int64(syscall.Gettid())
			threads[me].Store(tid)
			if other := threads[1-me].Load(); other != 0 && other != tid {
				proved.Store(true)
			}
			if time.Now().After(deadline) {
				return tools.Result{}, fmt.Errorf("body %d never saw the other on another thread", me)
			}
		}
		return tools.TextResult("ok"), nil
	}
	p := faux.New(callsTo("spin", 2), faux.Reply())
	msgs, _ := runLoop(t, context.Background(), p, []*tools.Tool{echoTool(t, "spin", body)}, Config{})
	for i := range 2 {
		if tr := msgs[2+i].(providers.ToolResultMessage); tr.IsError {
			t.Fatalf("result %d: %s", i, tr.Text())
		}
	}
}
