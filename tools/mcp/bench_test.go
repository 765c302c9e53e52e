package mcp

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"testing"
	"time"

	"github.com/agentloop/agentloop/internal/harness/heapwatch"
)

// The hostile servers' full-size figures: peak heap while listing
// 100,000 tools, while accepting a 20 MB schema, while calling a tool
// whose result is 200 MB. (go test -run XXX -bench Hostile -benchtime 1x ./tools/mcp)

func BenchmarkHostileManyTools(b *testing.B) {
	const pages, perPage = 100, 1000
	h := newHostile(b, &hostile{page: func(w io.Writer, cursor string) {
		p, _ := strconv.Atoi(cursor)
		next := ""
		if p+1 < pages {
			next = strconv.Itoa(p + 1)
		}
		writeTools(w, "t", p*perPage, perPage, next)
	}})
	for b.Loop() {
		var n int
		peak, base := heapwatch.Peak(5*time.Millisecond, func() {
			ts, err := Connect(context.Background(), Options{Logger: slog.New(slog.DiscardHandler)}, Server{Name: "h", URL: h.url()})
			if err != nil {
				b.Fatal(err)
			}
			set, _ := ts.Tools()
			n = len(set)
			ts.Close()
		})
		b.ReportMetric(float64(peak-min(base, peak))/(1<<20), "peak-MB")
		b.ReportMetric(float64(n), "tools")
	}
}

func BenchmarkHostileHugeSchema(b *testing.B) {
	h := newHostile(b, &hostile{page: func(w io.Writer, _ string) { writeBigSchema(w, 20<<20) }})
	for b.Loop() {
		var n int
		peak, base := heapwatch.Peak(5*time.Millisecond, func() {
			ts, err := Connect(context.Background(), Options{Logger: slog.New(slog.DiscardHandler)}, Server{Name: "h", URL: h.url()})
			if err != nil {
				b.Log(err)
				return
			}
			set, _ := ts.Tools()
			n = len(set)
			ts.Close()
		})
		b.ReportMetric(float64(peak-min(base, peak))/(1<<20), "peak-MB")
		b.ReportMetric(float64(n), "tools")
	}
}

func BenchmarkHostileHugeResult(b *testing.B) {
	h := newHostile(b, &hostile{
		page: func(w io.Writer, _ string) { writeTools(w, "t", 0, 1, "") },
		call: func(w io.Writer, _ string) { writeBigText(w, 200<<20) },
	})
	ts, err := Connect(context.Background(), Options{Logger: slog.New(slog.DiscardHandler)}, Server{Name: "h", URL: h.url()})
	if err != nil {
		b.Fatal(err)
	}
	defer ts.Close()
	set, _ := ts.Tools()
	for b.Loop() {
		var text string
		peak, base := heapwatch.Peak(5*time.Millisecond, func() {
			inv, err := set[0].Check(map[string]any{})
			if err != nil {
				b.Fatal(err)
			}
			res, err := inv.Run(context.Background())
			if err != nil {
				text = err.Error()
			} else if len(res.Content) > 0 {
				text = "a result of " + strconv.Itoa(len(res.Content)) + " parts"
			}
		})
		b.ReportMetric(float64(peak-min(base, peak))/(1<<20), "peak-MB")
		if len(text) > 200 {
			text = text[:200]
		}
		b.Log(text)
	}
}

// BenchmarkHostileOnePage: 100,000 tools in one page (within the message
// bound): what the SDK's decoding of the page costs.
func BenchmarkHostileOnePage(b *testing.B) {
	h := newHostile(b, &hostile{page: func(w io.Writer, _ string) { writeTools(w, "t", 0, 100_000, "") }})
	for b.Loop() {
		var n int
		peak, base := heapwatch.Peak(5*time.Millisecond, func() {
			ts, err := Connect(context.Background(), Options{Logger: slog.New(slog.DiscardHandler)}, Server{Name: "h", URL: h.url()})
			if err != nil {
				b.Fatal(err)
			}
			set, _ := ts.Tools()
			n = len(set)
			ts.Close()
		})
		b.ReportMetric(float64(peak-min(base, peak))/(1<<20), "peak-MB")
		b.ReportMetric(float64(n), "tools")
	}
}
