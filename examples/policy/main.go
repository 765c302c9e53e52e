// Command policy shows beforeToolCall as a policy gate: file tools may only
// touch paths inside a root folder, and risky calls (writes and deletes)
// need a yes typed on standard input. A refusal is an error result the
// model reads; the run goes on.
//
//	go run ./examples/policy [-root DIR]
//
// With OPENAI_API_KEY set it talks to that endpoint; otherwise a scripted
// model tries a read inside the root, a write outside it, and a delete
// inside it (which asks for approval; end of input means no).
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/examples/internal/console"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

type pathArgs struct {
	Path string `json:"path" jsonschema:"description=File path, relative to the workspace"`
}

type writeArgs struct {
	Path string `json:"path"`
	Text string `json:"text"`
}

// Policy decides which tool calls may run.
type Policy struct {
	Root  string          // absolute; paths must stay inside it
	Risky map[string]bool // tools that need approval
	In    *bufio.Reader   // where approvals are read
	Out   io.Writer
	mu    sync.Mutex
}

// Check is a loop.Config.BeforeToolCall.
func (p *Policy) Check(_ context.Context, c loop.BeforeToolCall) (loop.BeforeResult, error) {
	args, _ := c.Args.(map[string]any)
	path, _ := args["path"].(string)
	if _, err := p.inside(path); err != nil {
		return loop.BeforeResult{Block: true, Reason: err.Error()}, nil
	}
	if p.Risky[c.Call.Name] && !p.approve(fmt.Sprintf("allow %s %s?", c.Call.Name, path)) {
		return loop.BeforeResult{Block: true, Reason: "the user did not approve " + c.Call.Name + " " + path}, nil
	}
	return loop.BeforeResult{}, nil
}

// inside resolves path against the root and refuses anything outside it.
func (p *Policy) inside(path string) (string, error) {
	if path == "" {
		return "", errors.New("empty path")
	}
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(p.Root, path)
	}
	abs = filepath.Clean(abs)
	rel, err := filepath.Rel(p.Root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is outside the workspace %s", path, p.Root)
	}
	return abs, nil
}

func (p *Policy) approve(question string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.Out, "  ? %s [y/N] ", question)
	line, err := p.In.ReadString('\n')
	answer := strings.ToLower(strings.TrimSpace(line))
	if err != nil && answer == "" {
		fmt.Fprintln(p.Out, "(no answer: no)")
		return false
	}
	return answer == "y" || answer == "yes"
}

func main() {
	root := flag.String("root", ".", "the workspace the tools may touch")
	flag.Parse()
	if err := run(*root, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "policy:", err)
		os.Exit(1)
	}
}

func run(root string, in io.Reader, out io.Writer) error {
	abs, err := filepath.Abs(root)
	if err != nil {
		return err
	}
	pol := &Policy{Root: abs, Risky: map[string]bool{"write_file": true, "delete_file": true}, In: bufio.NewReader(in), Out: out}
	read := tools.Must(tools.New("read_file", "Read a file",
		func(_ context.Context, _ string, a pathArgs, _ tools.UpdateFunc) (tools.Result, error) {
			p, err := pol.inside(a.Path)
			if err != nil {
				return tools.Result{}, err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return tools.Result{}, err
			}
			return tools.TextResult(fmt.Sprintf("%d bytes, starting %q", len(b), head(string(b)))), nil
		}))
	write := tools.Must(tools.New("write_file", "Write a file (dry run in this example)",
		func(_ context.Context, _ string, a writeArgs, _ tools.UpdateFunc) (tools.Result, error) {
			return tools.TextResult(fmt.Sprintf("would write %d bytes to %s", len(a.Text), a.Path)), nil
		}))
	del := tools.Must(tools.New("delete_file", "Delete a file (dry run in this example)",
		func(_ context.Context, _ string, a pathArgs, _ tools.UpdateFunc) (tools.Result, error) {
			return tools.TextResult("would delete " + a.Path), nil
		}))
	for _, t := range []*tools.Tool{write, del} {
		t.Mode = tools.Sequential // approvals are asked one at a time, in order
	}

	scripted := faux.New(
		faux.Reply(faux.Text("Reading go.mod, then tidying up."),
			faux.Call("c1", "read_file", map[string]any{"path": "go.mod"}),
			faux.Call("c2", "write_file", map[string]any{"path": "../outside.txt", "text": "hello"}),
			faux.Call("c3", "delete_file", map[string]any{"path": "scratch.tmp"})),
		faux.Reply(faux.Text("Done: I read go.mod; the write outside the workspace and the unapproved delete were refused.")),
	)
	provider, model, online := console.Backend(scripted)
	if !online {
		fmt.Fprintln(out, "policy: OPENAI_API_KEY is not set; a scripted model plays the assistant. Workspace:", abs)
	}
	a := agent.New(agent.Options{Provider: provider, Model: model, Tools: []*tools.Tool{read, write, del}, BeforeToolCall: pol.Check,
		SystemPrompt: "You manage files in the user's workspace."})
	a.Subscribe(console.New(out).Handle)
	return a.Prompt(context.Background(), "Look at go.mod, write a note next to the workspace, and delete scratch.tmp.")
}

func head(s string) string {
	if len(s) > 40 {
		return s[:40]
	}
	return s
}
