// Package mcp turns the tools of Model Context Protocol servers into tools
// an agent runs through the same preflight as Go tools, on the official SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// A [Toolset] connects to one or more servers, over stdio (a command it
// starts and stops), streamable HTTP, or any SDK transport, and is a
// tools.Source: give it to the loop (loop.Config.ToolSources) and the
// model is offered the servers' current tools before every model call.
//
//	ts, err := mcp.Connect(ctx, mcp.Options{},
//		mcp.Server{Name: "files", Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", dir}},
//		mcp.Server{Name: "issues", URL: "https://mcp.example.com/mcp", Header: http.Header{"Authorization": {"Bearer " + token}}})
//	if err != nil { ... }
//	defer ts.Close() // stops the servers it started
//	a, err := agent.New(agent.Options{Config: loop.Config{Provider: p, Model: m, ToolSources: []tools.Source{ts}}})
//
// go run ./examples/mcp shows it on the scripted model. The tests run
// in-memory servers for every failure below, and the real
// @modelcontextprotocol/server-everything (stdio and streamable HTTP) and
// server-filesystem, pinned in testdata/npm (npm ci there).
//
// # Checked like Go tools
//
// Each tool's input schema (draft-07, which servers commonly send, or
// 2020-12) is checked by the tools package: arguments are coerced and
// validated, and a call that does not fit gets the full violation listing
// without reaching the server (the SDK's client validates nothing). A schema the tools package cannot use (one google/jsonschema-go
// does not resolve, one that refers to a remote schema (nothing is
// fetched), one whose references loop without descending into the value
// ($ref by pointer, $id, $anchor, $dynamicRef) or go past the bounds of a
// check, or whose root is not
// an object) leaves its tool out, with the reason in Refused and the log; keywords that neither validator
// knows (vendor extensions) are ignored, as JSON Schema prescribes, and
// the server's own validation decides on them.
//
// With more than one server, tool names are prefixed with the server's
// name (files__read_file); names the providers would refuse are made
// valid, and names that collide get a suffix (_2, _3, …) in the server's
// order; calls go back under the server's own names. A tool named like
// one of the conversation's Go tools is hidden by it, and the loop names
// it in events.ToolsChanged (Hidden).
//
// # Bounds
//
// Options.Limits bound what a server can make the Toolset hold; each has
// a default, none is unlimited:
//
//   - Limits.MaxPages (100) tools/list pages per listing, Limits.MaxTools
//     (128) tools per server, Limits.MaxToolBytes (128 KiB) per tool's
//     name, schema, description and title. Past one the Toolset keeps what came
//     first in the server's order and says in Refused what it left out.
//   - Limits.MaxMessageBytes (16 MiB) per message, over stdio and
//     streamable HTTP alike (a Dial transport bounds its own). A larger
//     result is read through without being kept, and the model reads
//     TooLargeText: the call ran, its result was dropped. A larger page
//     of tools is read the same way and reduced to the bound: its tools
//     in order while they fit (a tool past MaxToolBytes as its name only,
//     refused), the rest, and the pages after, left out.
//   - Limits.ListTimeout (1 minute) to connect and list a server's tools.
//   - Limits.MaxStderrBytes (64 KiB) of a stdio server's standard error.
//
// A stdio server that dies while connecting is reported with its exit
// status and the end of its standard error.
//
// # Results
//
// Text and images become the result's content; an embedded resource its
// text (or a line naming it when it is binary), a resource link a line
// naming it, audio a line saying so; structuredContent goes to the
// result's Details (and is the text when the server sent no content). A
// result flagged isError is an error result with that content. Results
// obey the loop's MaxResultBytes like any tool's.
//
// # Correct over time
//
//   - notifications/tools/list_changed makes the Toolset list the server's
//     tools again (one listing at a time; any number of notifications
//     meanwhile make one more); the loop takes the new set before its next
//     model call, never in the middle of a batch, and publishes
//     events.ToolsChanged.
//   - A connection that drops is made again for the next call. A call that
//     may have reached the server is never sent twice: if the connection
//     drops while it runs, its result is an error the model can read
//     (LostText).
//   - Cancelling the run, or a tool's timeout (Server.ToolTimeout, or the
//     run's loop.Limits.ToolTimeout), cancels calls in flight; the SDK
//     sends notifications/cancelled.
//   - Progress notifications become tool_execution_update events.
//   - Close stops the stdio servers the Toolset started, leaving no process
//     or goroutine, and closes the idle connections of the Toolset's HTTP
//     transport (one per Toolset; a Server's own HTTPClient is left alone).
package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentloop/agentloop/tools"
)

// Server is one MCP server to attach. Set Command (stdio), URL (streamable
// HTTP) or Dial.
type Server struct {
	// Name names the server in its tools' names (when a Toolset has more
	// than one server) and in messages. Required.
	Name string

	// Command and Args start a stdio server, with Env (nil: this process's
	// environment) in Dir. The Toolset starts it (again after it dies) and
	// stops it on Close (closing its standard input; SIGTERM, then SIGKILL,
	// two seconds apart, if it stays); its standard error is kept
	// (Toolset.Stderr), and ends the error when it dies at start-up.
	Command string
	Args    []string
	Env     []string
	Dir     string

	// URL is a streamable HTTP server's endpoint; Header is added to every
	// request (authorization, say); HTTPClient sends them (nil: the
	// Toolset's own transport, with timeouts to connect and for response
	// headers, whose idle connections Close closes). Either way every
	// response is read within Limits.MaxMessageBytes per message.
	URL        string
	Header     http.Header
	HTTPClient *http.Client

	// Dial returns a fresh transport for each connection, for any other
	// (an in-memory pair in tests: sdk.NewInMemoryTransports). Such a
	// transport hands over decoded messages, so it bounds their bytes
	// itself.
	Dial func(ctx context.Context) (sdk.Transport, error)

	// ToolTimeout is the Timeout (tools.Config.Timeout) of each of this
	// server's tools, and like a Go tool's it bounds one call: 0 leaves
	// them to the run's loop.Limits.ToolTimeout, negative means no limit.
	// It is the per-tool level of the one rule for tool timeouts, set per
	// server because a Toolset builds these tools: a slow server's tools
	// can wait longer than the rest of the run's.
	ToolTimeout time.Duration
}

// Options configure a Toolset. The zero value is ready to use.
type Options struct {
	// Logger receives what the Toolset has to say (tools left out, lost
	// connections); nil means slog.Default().
	Logger *slog.Logger
	// Limits bound what the Toolset takes from its servers: pages, tools
	// and bytes. The zero value means the documented defaults.
	Limits Limits
	// OnChange, when set, is called after the tool set changed (a server
	// said its list changed, or a connection was made again), on a
	// goroutine of the Toolset: to update an agent between runs, say
	// (agent.Configure). A run in progress takes the change by itself.
	OnChange func()
}

// Toolset is the tools of one or more MCP servers, kept current. It is a
// tools.Source and safe for concurrent use.
type Toolset struct {
	opts       Options
	servers    []*server
	http       *http.Transport // for the servers without an HTTPClient
	ctx        context.Context // ends on Close
	cancel     context.CancelFunc
	relists    sync.WaitGroup
	rebuilding sync.Mutex // one rebuild at a time: the newest listing wins

	mu      sync.Mutex
	set     []*tools.Tool
	refused map[string]error
	version atomic.Uint64
	ready   atomic.Bool // Connect has returned: changes are news
}

// Connect connects to every server and lists its tools. It fails when a
// server cannot be reached or listed; the servers connected so far are
// closed then.
func Connect(ctx context.Context, opts Options, servers ...Server) (*Toolset, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	opts.Limits = opts.Limits.withDefaults()
	ts := &Toolset{opts: opts, refused: map[string]error{}}
	for _, s := range servers {
		if s.URL != "" && s.HTTPClient == nil && ts.http == nil {
			ts.http = newHTTPTransport()
		}
	}
	ts.ctx, ts.cancel = context.WithCancel(context.Background())
	names := map[string]bool{}
	for _, s := range servers {
		if err := s.check(); err != nil {
			ts.Close()
			return nil, err
		}
		if names[s.Name] {
			ts.Close()
			return nil, fmt.Errorf("mcp: two servers are named %q", s.Name)
		}
		names[s.Name] = true
		srv := &server{ts: ts, spec: s, stderr: newTail(opts.Limits.MaxStderrBytes)}
		ts.servers = append(ts.servers, srv)
		lctx, cancel := context.WithTimeout(ctx, opts.Limits.ListTimeout)
		err := srv.list(lctx) // connects first
		cancel()
		if err != nil {
			ts.Close()
			return nil, err
		}
	}
	ts.rebuild()
	ts.ready.Store(true)
	return ts, nil
}

func (s Server) check() error {
	ways := 0
	for _, set := range []bool{s.Command != "", s.URL != "", s.Dial != nil} {
		if set {
			ways++
		}
	}
	switch {
	case s.Name == "":
		return errors.New("mcp: a server needs a Name")
	case ways != 1:
		return fmt.Errorf("mcp: server %q: set one of Command, URL and Dial", s.Name)
	}
	return nil
}

// Tools returns the current tools and the set's version; it implements
// tools.Source.
func (ts *Toolset) Tools() ([]*tools.Tool, uint64) {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return ts.set, ts.version.Load()
}

// Refused reports the tools left out, by their server's name and tool
// name ("server/tool"), with the reason. Tools left out by a bound on the
// listing (Limits), whose names were not all read, are reported together
// under "server/*".
func (ts *Toolset) Refused() map[string]error {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return maps.Clone(ts.refused)
}

// Stderr returns the newest standard error output of a stdio server, for
// diagnostics.
func (ts *Toolset) Stderr(server string) string {
	for _, s := range ts.servers {
		if s.spec.Name == server {
			return s.stderr.String()
		}
	}
	return ""
}

// Close disconnects from every server, stopping the stdio servers the
// Toolset started, and waits for its own goroutines.
func (ts *Toolset) Close() error {
	ts.cancel()
	var errs []error
	for _, s := range ts.servers {
		// s.close waits for a connection being made, and taking s.mu
		// waits for a relist deciding to start: neither starts another
		// goroutine after this, so Wait below cannot race with an Add.
		errs = append(errs, s.close())
		s.mu.Lock()
		//lint:ignore SA2001 an empty critical section is the barrier
		s.mu.Unlock()
	}
	ts.relists.Wait()
	if ts.http != nil {
		ts.http.CloseIdleConnections()
	}
	return errors.Join(errs...)
}

// rebuild makes the tool set from every server's listed tools, and bumps
// the version.
func (ts *Toolset) rebuild() {
	ts.rebuilding.Lock()
	defer ts.rebuilding.Unlock()
	names := newNamer(len(ts.servers) > 1)
	var set []*tools.Tool
	refused := map[string]error{}
	for _, s := range ts.servers {
		listed, cut := s.listed()
		if cut != nil {
			refused[s.spec.Name+"/*"] = cut
			ts.opts.Logger.Warn("mcp: tools left out", "server", s.spec.Name, "err", cut)
		}
		for _, t := range listed {
			err := t.err
			if err == nil {
				var tool *tools.Tool
				if tool, err = s.tool(t, names.name(s.spec.Name, t.name)); err == nil {
					set = append(set, tool)
					continue
				}
			}
			refused[s.spec.Name+"/"+t.name] = err
			ts.opts.Logger.Warn("mcp: tool left out", "server", s.spec.Name, "tool", t.name, "err", err)
		}
	}
	ts.mu.Lock()
	ts.set, ts.refused = slices.Clip(set), refused
	ts.version.Add(1)
	ts.mu.Unlock()
	if ts.ready.Load() && ts.opts.OnChange != nil {
		ts.opts.OnChange()
	}
}

// newHTTPTransport makes the Toolset's HTTP transport: the default one's
// settings (proxies from the environment, idle connections kept), with
// bounds on connecting and on waiting for a response's headers.
func newHTTPTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	t.ResponseHeaderTimeout = 2 * time.Minute
	return t
}
