// Package mcp turns the tools of Model Context Protocol servers into tools
// an agent runs through the same preflight as Go tools, on the official SDK
// (github.com/modelcontextprotocol/go-sdk).
//
// A [Toolset] connects to one or more servers, over stdio (a command it
// starts and stops), streamable HTTP, or any SDK transport, and is a
// tools.Source: give it to the loop (loop.Config.ToolSources) and the
// model is offered the servers' current tools before every model call.
//
//	ts, err := mcp.Connect(ctx, mcp.Options{}, mcp.Server{Name: "files",
//		Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", dir}})
//	if err != nil { ... }
//	defer ts.Close()
//	a, err := agent.New(agent.Options{Config: loop.Config{Provider: p, Model: m, ToolSources: []tools.Source{ts}}})
//
// # Checked like Go tools
//
// Each tool's input schema (servers commonly send draft-07) is checked by
// the tools package: arguments are coerced and validated, and a call that
// does not fit gets the full violation listing without reaching the
// server. A schema the tools package cannot use (one google/jsonschema-go
// does not resolve, one that refers to a remote schema, one whose
// references loop or go past the bounds of a check, or whose root is not
// an object) leaves its tool out, with the reason in Refused and the log; keywords that neither validator
// knows (vendor extensions) are ignored, as JSON Schema prescribes, and
// the server's own validation decides on them.
//
// With more than one server, tool names are prefixed with the server's
// name (files__read_file); names the providers would refuse are made
// valid; calls go back under the server's own names.
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
//     tools again; the loop takes the new set before its next model call,
//     never in the middle of a batch, and publishes events.ToolsChanged.
//   - A connection that drops is made again for the next call. A call that
//     may have reached the server is never sent twice: if the connection
//     drops while it runs, its result is an error the model can read ("the
//     connection to SERVER was lost while the call was running; it may or
//     may not have run").
//   - Cancelling the run, or a tool timeout (Options.ToolTimeout, or the
//     loop's ToolTimeout), cancels calls in flight; the SDK sends
//     notifications/cancelled.
//   - Progress notifications become tool_execution_update events.
//   - Close stops the stdio servers the Toolset started, leaving no process
//     or goroutine.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"os/exec"
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
	// stops it on Close; its standard error is kept (Toolset.Stderr).
	Command string
	Args    []string
	Env     []string
	Dir     string

	// URL is a streamable HTTP server's endpoint; Header is added to every
	// request (authorization, say); HTTPClient sends them (nil: one with
	// timeouts to connect and for response headers).
	URL        string
	Header     http.Header
	HTTPClient *http.Client

	// Dial returns a fresh transport for each connection, for any other
	// (an in-memory pair in tests: sdk.NewInMemoryTransports).
	Dial func(ctx context.Context) (sdk.Transport, error)
}

// Options configure a Toolset. The zero value is ready to use.
type Options struct {
	// ToolTimeout bounds each call of these tools (the tools' own
	// Timeout); 0 leaves it to the loop's ToolTimeout.
	ToolTimeout time.Duration
	// Logger receives what the Toolset has to say (tools left out, lost
	// connections); nil means slog.Default().
	Logger *slog.Logger
	// MaxStderrBytes bounds the standard error kept per stdio server; 0
	// means 64 KiB (the newest bytes are kept).
	MaxStderrBytes int
	// OnChange, when set, is called after the tool set changed (a server
	// said its list changed, or a connection was made again), on a
	// goroutine of the Toolset: to update an agent between runs, say
	// (agent.SetTools). A run in progress takes the change by itself.
	OnChange func()
}

// Toolset is the tools of one or more MCP servers, kept current. It is a
// tools.Source and safe for concurrent use.
type Toolset struct {
	opts       Options
	servers    []*server
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
	if opts.MaxStderrBytes <= 0 {
		opts.MaxStderrBytes = 64 << 10
	}
	ts := &Toolset{opts: opts, refused: map[string]error{}}
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
		srv := &server{ts: ts, spec: s, stderr: newTail(opts.MaxStderrBytes)}
		ts.servers = append(ts.servers, srv)
		if err := srv.list(ctx); err != nil { // connects first
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
// name ("server/tool"), with the reason.
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
		errs = append(errs, s.close())
	}
	ts.relists.Wait()
	return errors.Join(errs...)
}

// rebuild makes the tool set from every server's listed tools, and bumps
// the version.
func (ts *Toolset) rebuild() {
	ts.rebuilding.Lock()
	defer ts.rebuilding.Unlock()
	prefix := len(ts.servers) > 1
	var set []*tools.Tool
	refused := map[string]error{}
	taken := map[string]bool{}
	for _, s := range ts.servers {
		for _, t := range s.listed() {
			tool, err := s.tool(t, exposedName(s.spec.Name, t.Name, prefix, taken))
			if err != nil {
				refused[s.spec.Name+"/"+t.Name] = err
				ts.opts.Logger.Warn("mcp: tool left out", "server", s.spec.Name, "tool", t.Name, "err", err)
				continue
			}
			set = append(set, tool)
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

// commandTransport starts a stdio server.
func (s *server) commandTransport() sdk.Transport {
	cmd := exec.Command(s.spec.Command, s.spec.Args...)
	cmd.Env, cmd.Dir, cmd.Stderr = s.spec.Env, s.spec.Dir, s.stderr
	s.mu.Lock()
	s.cmd = cmd
	s.mu.Unlock()
	return &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}
}
