// Command mcp runs an agent whose tools come from an MCP server: the
// reference filesystem server, started over stdio on a folder of notes.
// The tools are checked like Go tools (a call with wrong argument types
// gets the validation listing and never reaches the server), and a change
// in the server's tool list reaches the agent between turns.
//
//	go run ./examples/mcp [-server "npx -y @modelcontextprotocol/server-filesystem@2026.8.31"] [-offline]
//
// The server command gets the notes folder as its last argument. With
// OPENAI_API_KEY set the model is OpenAI's, or that of the Chat
// Completions server OPENAI_BASE_URL names (OPENAI_MODEL picks it).
// Without a key (or with -offline) a scripted model lists the folder,
// tries a read with the wrong argument name, corrects it, and answers.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/events/term"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/providers/openai"
	"github.com/agentloop/agentloop/tools"
	"github.com/agentloop/agentloop/tools/mcp"
)

// defaultServer starts the filesystem server with npx (Node.js needed).
const defaultServer = "npx -y @modelcontextprotocol/server-filesystem@2026.8.31"

func main() {
	server := flag.String("server", defaultServer, "the command that starts the filesystem MCP server (the folder is appended)")
	offline := flag.Bool("offline", false, "use the scripted model even when OPENAI_API_KEY is set")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if _, err := run(ctx, os.Stdout, strings.Fields(*server), *offline); err != nil {
		fmt.Fprintln(os.Stderr, err) // it names its package already ("mcp: server ...")
		os.Exit(1)
	}
}

// run writes a folder of notes, attaches the filesystem server to it,
// and lets the agent answer a question from the notes. It returns the
// transcript. offline uses the scripted model even when a key is set.
func run(ctx context.Context, out io.Writer, server []string, offline bool) ([]providers.Message, error) {
	dir, err := os.MkdirTemp("", "agentloop-mcp-notes-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	dir, _ = filepath.EvalSymlinks(dir)
	notes := map[string]string{"monday.txt": "Standup moved to 10:30.", "tuesday.txt": "Lunch with Ada at noon; bring the design doc."}
	for file, text := range notes {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			return nil, err
		}
	}

	files, err := mcp.Connect(ctx, mcp.Options{},
		mcp.Server{Name: "files", Command: server[0], Args: append(server[1:len(server):len(server)], dir), ToolTimeout: 30 * time.Second})
	if err != nil {
		return nil, err
	}
	defer files.Close()
	set, _ := files.Tools()
	fmt.Fprintf(out, "mcp: the filesystem server offers %s on %s\n", count(len(set), "tool"), dir)

	var provider providers.Provider = faux.New(script(dir)...)
	model := providers.Model{ID: "scripted", Provider: "faux"}
	if live, m, ok := openai.FromEnv(); ok && !offline {
		provider, model = live, m
		fmt.Fprintf(out, "mcp: using %s at %s\n", model.ID, endpoint())
	} else {
		fmt.Fprintln(out, "mcp: OPENAI_API_KEY is not set (or -offline), so a scripted model plays the assistant.")
	}
	a, err := agent.New(agent.Options{
		Config:       loop.Config{Provider: provider, Model: model, ToolSources: []tools.Source{files}},
		SystemPrompt: "You answer from the notes in " + dir + ". Use the file tools.",
	})
	if err != nil {
		return nil, err
	}
	a.Subscribe(term.New(out).Handle)
	prompt := "What is on Tuesday?"
	fmt.Fprintln(out, "user:", prompt)
	if err := a.Prompt(ctx, providers.NewUserText(prompt)); err != nil {
		return nil, err
	}
	return a.State().Messages, nil
}

// script is the scripted model's side: list the folder, read with the
// wrong argument name, read correctly, answer.
func script(dir string) []providers.AssistantMessage {
	return []providers.AssistantMessage{
		faux.Reply(faux.Text("Let me look at the notes."), faux.Call("call_1", "list_directory", map[string]any{"path": dir})),
		faux.Reply(faux.Call("call_2", "read_text_file", map[string]any{"file": "tuesday.txt"})),
		faux.Reply(faux.Text("The argument is called path, and it wants the full path; retrying."), faux.Call("call_3", "read_text_file", map[string]any{"path": filepath.Join(dir, "tuesday.txt")})),
		faux.Reply(faux.Text("On Tuesday you have lunch with Ada at noon; bring the design doc.")),
	}
}

// endpoint is where the OpenAI provider sends its requests, without the key.
func endpoint() string {
	if base := os.Getenv("OPENAI_BASE_URL"); base != "" {
		return base
	}
	return "OpenAI's API"
}

// count is n and the noun, plural unless n is 1: "1 message", "3 messages".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
