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
	"github.com/agentloop/agentloop/events/term"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/providers/openai"
	"github.com/agentloop/agentloop/tools"
)

type pathArgs struct {
	Path string `json:"path" jsonschema:"description=File path, relative to the workspace"`
}

type writeArgs struct {
	Path string `json:"path"`
	Text string `json:"text"`
}

// Refusal begins the text of every call the policy stops, so the model
// (and a person reading the transcript) can tell a refusal from a tool that
// ran and failed.
const Refusal = "refused by the workspace policy: "

// Policy decides which tool calls may run.
type Policy struct {
	Root  string          // absolute; paths must stay inside it
	Risky map[string]bool // tools that need approval
	In    *bufio.Reader   // where approvals are read
	Out   io.Writer
	mu    sync.Mutex
}

// Check is a loop.Hooks.BeforeToolCall. Every file tool's arguments
// have a path, which it reads as a pathArgs.
func (p *Policy) Check(_ context.Context, c loop.BeforeCall) (loop.BeforeResult, error) {
	args, err := tools.Decode[pathArgs](c.Args)
	if err != nil {
		return loop.BeforeResult{Block: true, Reason: Refusal + err.Error()}, nil
	}
	path := args.Path
	if _, err := p.inside(path); err != nil {
		return loop.BeforeResult{Block: true, Reason: Refusal + err.Error()}, nil
	}
	if p.Risky[c.Call.Name] && !p.approve(fmt.Sprintf("allow %s %s?", c.Call.Name, path)) {
		return loop.BeforeResult{Block: true, Reason: Refusal + "the user did not approve " + c.Call.Name + " " + path}, nil
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
	read, err := tools.New(tools.Config{Name: "read_file", Description: "Read a file"},
		func(_ context.Context, a pathArgs) (string, error) {
			p, err := pol.inside(a.Path)
			if err != nil {
				return "", err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return "", err
			}
			return fmt.Sprintf("%s, starting %q", count(len(b), "byte"), head(string(b))), nil
		})
	if err != nil {
		return err
	}
	// Approvals are asked one at a time, in call order: a batch with a
	// write or a delete in it runs sequentially.
	write, err := tools.New(tools.Config{Name: "write_file", Description: "Write a file (dry run in this example)", Mode: tools.Sequential},
		func(_ context.Context, a writeArgs) (string, error) {
			return fmt.Sprintf("would write %s to %s", count(len(a.Text), "byte"), a.Path), nil
		})
	if err != nil {
		return err
	}
	del, err := tools.New(tools.Config{Name: "delete_file", Description: "Delete a file (dry run in this example)", Mode: tools.Sequential},
		func(_ context.Context, a pathArgs) (string, error) {
			return "would delete " + a.Path, nil
		})
	if err != nil {
		return err
	}

	script := scripted()
	var provider providers.Provider = script
	model := script.Model("scripted")
	if live, m, ok := openai.FromEnv(); ok {
		provider, model = live, m
	} else {
		fmt.Fprintln(out, "policy: OPENAI_API_KEY is not set; a scripted model plays the assistant. Workspace:", abs)
	}
	a, err := agent.New(agent.Options{
		Config:       loop.Config{Provider: provider, Model: model, Hooks: []loop.Hooks{{BeforeToolCall: pol.Check}}},
		Tools:        []*tools.Tool{read, write, del},
		SystemPrompt: "You manage files in the user's workspace.",
	})
	if err != nil {
		return err
	}
	a.Subscribe(term.New(out).Handle)
	return a.Prompt(context.Background(), providers.NewUserText("Look at go.mod, write a note next to the workspace, and delete scratch.tmp."))
}

// scripted tries a read inside the workspace, a write outside it and a
// delete inside it, then reports what happened to each call, from the
// results it was sent: done, refused (by the policy) or failed (the tool
// ran and returned an error, such as a file that is not there).
func scripted() *faux.Provider {
	p := faux.New(faux.Reply(faux.Text("Reading go.mod, then tidying up."),
		faux.Call("c1", "read_file", map[string]any{"path": "go.mod"}),
		faux.Call("c2", "write_file", map[string]any{"path": "../outside.txt", "text": "hello"}),
		faux.Call("c3", "delete_file", map[string]any{"path": "scratch.tmp"})))
	p.PushFunc(func(_ context.Context, req *providers.Request) (providers.AssistantMessage, error) {
		var report []string
		for _, m := range req.Messages {
			if r, ok := m.(providers.ToolResultMessage); ok {
				verdict := "done"
				if reason, ok := strings.CutPrefix(r.Text(), Refusal); ok && r.IsError {
					verdict = "refused (" + reason + ")"
				} else if r.IsError {
					verdict = "failed (" + r.Text() + ")"
				}
				report = append(report, r.ToolName+": "+verdict)
			}
		}
		return faux.Reply(faux.Text("Here is what happened: " + strings.Join(report, "; ") + ".")), nil
	})
	return p
}

func head(s string) string {
	if len(s) > 40 {
		return s[:40]
	}
	return s
}

// count is n and the noun, plural unless n is 1: "1 message", "3 messages".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
