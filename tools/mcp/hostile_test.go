package mcp

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hostile is a streamable HTTP MCP server written by hand, to play the
// servers the SDK would never be: endless pagination, huge schemas, huge
// results. Each answer is application/json, its result written by a
// function straight to the connection (so the server itself holds
// nothing of what it sends).
type hostile struct {
	// page writes the result of tools/list for a cursor ("" first).
	page func(w io.Writer, cursor string)
	// call writes the result of tools/call for a tool.
	call func(w io.Writer, name string)
	// events makes every answer an event stream of one event.
	events bool
	// refuse, when set, answers tools/call with a JSON-RPC error of this
	// message.
	refuse string

	lists atomic.Int64 // tools/list requests seen
	srv   *httptest.Server

	mu    sync.Mutex
	open  int           // connections open
	zero  chan struct{} // closed when open drops to 0 (made again when it rises)
	moved chan struct{} // closed (and made again) whenever open changes
	conns int           // connections ever made
}

func newHostile(t testing.TB, h *hostile) *hostile {
	h.zero = make(chan struct{})
	close(h.zero)
	h.moved = make(chan struct{})
	h.srv = httptest.NewUnstartedServer(http.HandlerFunc(h.serve))
	h.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if s == http.StateNew || s == http.StateClosed || s == http.StateHijacked {
			close(h.moved)
			h.moved = make(chan struct{})
		}
		switch s {
		case http.StateNew:
			if h.open == 0 {
				h.zero = make(chan struct{})
			}
			h.open++
			h.conns++
		case http.StateClosed, http.StateHijacked:
			h.open--
			if h.open == 0 {
				close(h.zero)
			}
		}
	}
	h.srv.Start()
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hostile) url() string { return h.srv.URL + "/mcp" }

// idle returns a channel closed once no connection is open.
func (h *hostile) idle() <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.zero
}

// settlesAtMost waits until at most n connections are open, and reports
// whether that happened within d. A connection the client has let go of
// may take a moment to be seen closed; one that leaked never is.
func (h *hostile) settlesAtMost(n int, d time.Duration) bool {
	deadline := time.After(d)
	for {
		h.mu.Lock()
		open, moved := h.open, h.moved
		h.mu.Unlock()
		if open <= n {
			return true
		}
		select {
		case <-moved:
		case <-deadline:
			return false
		}
	}
}

func (h *hostile) openConns() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.open
}

func (h *hostile) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		http.Error(w, "no", http.StatusMethodNotAllowed)
		return
	}
	var req struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Cursor string `json:"cursor"`
			Name   string `json:"name"`
		} `json:"params"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if req.ID == nil { // a notification
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if h.events {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, "event: message\ndata: ")
		defer io.WriteString(w, "\n\n")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	if req.Method == "tools/call" && h.refuse != "" {
		msg, _ := json.Marshal(h.refuse)
		fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32602,"message":%s}}`, req.ID, msg)
		return
	}
	fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"result":`, req.ID)
	switch req.Method {
	case "initialize":
		io.WriteString(w, `{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"hostile","version":"1"}}`)
	case "tools/list":
		h.lists.Add(1)
		h.page(w, req.Params.Cursor)
	case "tools/call":
		h.call(w, req.Params.Name)
	default:
		io.WriteString(w, `{}`)
	}
	io.WriteString(w, `}`)
}

// writeTools writes a tools/list result of n tools named prefix0,
// prefix1, …, with next as its nextCursor ("" for none).
func writeTools(w io.Writer, prefix string, from, n int, next string) {
	io.WriteString(w, `{"tools":[`)
	for i := range n {
		if i > 0 {
			io.WriteString(w, ",")
		}
		fmt.Fprintf(w, `{"name":"%s%d","inputSchema":{"type":"object","properties":{"a":{"type":"string"}}}}`, prefix, from+i)
	}
	io.WriteString(w, "]")
	if next != "" {
		fmt.Fprintf(w, `,"nextCursor":%q`, next)
	}
	io.WriteString(w, "}")
}

// writeBigSchema writes a tools/list result with one tool, "big", whose
// schema is about size bytes, then "small".
func writeBigSchema(w io.Writer, size int) {
	io.WriteString(w, `{"tools":[{"name":"big","inputSchema":{"type":"object","description":"`)
	writeRepeat(w, 'x', size)
	io.WriteString(w, `"}},{"name":"small","inputSchema":{"type":"object"}}]}`)
}

// writeBigText writes a tools/call result of one text of size bytes.
func writeBigText(w io.Writer, size int) {
	io.WriteString(w, `{"content":[{"type":"text","text":"`)
	writeRepeat(w, 'y', size)
	io.WriteString(w, `"}]}`)
}

func writeRepeat(w io.Writer, c byte, n int) {
	chunk := []byte(strings.Repeat(string(c), 64<<10))
	for n > 0 {
		k := min(n, len(chunk))
		if _, err := w.Write(chunk[:k]); err != nil {
			return
		}
		n -= k
	}
}
