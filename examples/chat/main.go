// Command chat is an interactive terminal chat with an agent.
//
// Type a message and press Enter; the answer streams as it arrives, with a
// line for each tool call. Lines typed while the agent works are queued as
// steering messages. Ctrl-C stops the current run (not the program).
// Commands: /reset, /save FILE, /load FILE (JSONL sessions), /quit. Ctrl-D
// (end of input) exits.
//
// With OPENAI_API_KEY set it talks to OpenAI, or to the Chat Completions
// server OPENAI_BASE_URL names (OPENAI_MODEL picks the model; -provider
// openai-responses uses the Responses API); otherwise a scripted model
// answers (and calls the clock tool when you ask for the time).
//
//	go run ./examples/chat [-window 600]
//
// Built with the tag allproviders it takes Anthropic and Gemini too
// (providers/auto): ANTHROPIC_API_KEY, GEMINI_API_KEY or OPENAI_API_KEY,
// the first one set, or the one -provider names. That build links every
// provider's SDK, so its first build (cold cache) compiles Anthropic's,
// Google's (gRPC, protobuf) and OpenTelemetry's modules too: minutes and
// a few GB of memory, where the default build needs only OpenAI's.
//
//	go run -tags allproviders ./examples/chat -provider gemini
//
// With -window, the conversation is kept within that many tokens: older
// turns are summarised (the summary is kept in the session) and a line
// says so.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/agentloop/agentloop/agent"
	"github.com/agentloop/agentloop/events/term"
	"github.com/agentloop/agentloop/loop"
	"github.com/agentloop/agentloop/loop/compact"
	"github.com/agentloop/agentloop/providers"
	"github.com/agentloop/agentloop/providers/faux"
	"github.com/agentloop/agentloop/tools"
)

type clockArgs struct {
	Zone string `json:"zone,omitempty" jsonschema:"description=IANA time zone; empty for UTC"`
}

func main() {
	// Typed ahead at a terminal, a line steers the running turn; piped
	// input is taken one line per turn.
	st, _ := os.Stdin.Stat()
	interactive := st != nil && st.Mode()&os.ModeCharDevice != 0
	name := flag.String("provider", "", "the provider: "+strings.Join(providerNames(), ", ")+" (default: the first whose key is set)")
	window := flag.Int("window", 0, "a context window in tokens: older turns are summarised to stay within it (0: the model's, uncompacted)")
	flag.Parse()
	if err := chat(os.Stdin, os.Stdout, interactive, *name, *window); err != nil {
		fmt.Fprintln(os.Stderr, "chat:", err)
		os.Exit(1)
	}
}

func chat(in io.Reader, out io.Writer, interactive bool, name string, window int) error {
	clock, err := tools.New(tools.Config{Name: "clock", Description: "The current time"},
		func(_ context.Context, a clockArgs) (string, error) {
			loc := time.UTC
			if a.Zone != "" {
				var err error
				if loc, err = time.LoadLocation(a.Zone); err != nil {
					return "", fmt.Errorf("unknown time zone %q", a.Zone)
				}
			}
			return time.Now().In(loc).Format(time.RFC1123), nil
		})
	if err != nil {
		return err
	}
	var provider providers.Provider = &faux.Provider{Delay: 10 * time.Millisecond, Default: echo}
	model := providers.Model{ID: "scripted", Provider: "faux"}
	live, m, ok, err := fromEnv(name)
	switch {
	case err != nil:
		return err
	case ok:
		provider, model = live, m
		fmt.Fprintln(out, "chat: talking to", describe(model))
	default:
		fmt.Fprintln(out, "chat: no API key is set; a scripted model answers. Ask it for the time.")
	}
	cfg := loop.Config{Provider: provider, Model: model}
	if window > 0 {
		// A small window shows compaction at work: a line per compaction.
		cfg.Model.ContextWindow = window
		cfg.Compactor = compact.Chain(compact.Summarize{}, compact.ShortenResults{})
	}
	a, err := agent.New(agent.Options{Config: cfg,
		SystemPrompt: "You are a helpful assistant.", Tools: []*tools.Tool{clock}})
	if err != nil {
		return err
	}
	a.Subscribe(term.New(out).Handle)

	// Ctrl-C aborts the run in progress.
	interrupts := make(chan os.Signal, 1)
	signal.Notify(interrupts, os.Interrupt)
	defer signal.Stop(interrupts)

	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	var running chan error // non-nil while a prompt runs
	fmt.Fprint(out, "> ")
	for {
		input := lines
		if running != nil && !interactive {
			input = nil // piped input waits for the turn to end
		}
		select {
		case <-interrupts:
			if running != nil {
				a.Abort()
				fmt.Fprintln(out, "\n(stopped)")
			} else {
				fmt.Fprintln(out, "\n(nothing to stop; Ctrl-D or /quit exits)")
			}
		case err := <-running:
			running = nil
			if err != nil && !errors.Is(err, context.Canceled) { // an abort was said already
				fmt.Fprintln(out, "error:", err)
			}
			fmt.Fprint(out, "> ")
		case line, ok := <-input:
			if !ok || strings.TrimSpace(line) == "/quit" {
				// End of input lets the running turn finish; /quit stops it.
				if ok {
					a.Abort()
				}
				if running != nil {
					if err := <-running; err != nil {
						fmt.Fprintln(out, "error:", err)
					}
				}
				fmt.Fprintln(out)
				return nil
			}
			if handled, err := command(a, line, out); handled {
				if err != nil {
					fmt.Fprintln(out, "error:", err)
				}
				if running == nil {
					fmt.Fprint(out, "> ")
				}
				continue
			}
			if running != nil {
				if strings.TrimSpace(line) != "" {
					a.Steering().Push(providers.NewUserText(line))
					fmt.Fprintln(out, "(queued for the running turn)")
				}
				continue
			}
			if strings.TrimSpace(line) == "" {
				fmt.Fprint(out, "> ")
				continue
			}
			running = make(chan error, 1)
			go func(done chan<- error) { done <- a.Prompt(context.Background(), providers.NewUserText(line)) }(running)
		}
	}
}

// command runs a /command; it reports whether line was one.
func command(a *agent.Agent, line string, out io.Writer) (bool, error) {
	name, arg, _ := strings.Cut(strings.TrimSpace(line), " ")
	arg = strings.TrimSpace(arg)
	switch name {
	case "/reset":
		fmt.Fprintln(out, "(conversation cleared)")
		return true, a.Reset()
	case "/save", "/load":
		if arg == "" {
			return true, fmt.Errorf("usage: %s FILE", name)
		}
		if name == "/save" {
			f, err := os.Create(arg)
			if err != nil {
				return true, err
			}
			if err := a.SaveSession(f); err != nil {
				f.Close()
				return true, err
			}
			fmt.Fprintf(out, "(saved %s to %s)\n", count(len(a.State().Messages), "message"), arg)
			return true, f.Close()
		}
		f, err := os.Open(arg)
		if err != nil {
			return true, err
		}
		defer f.Close()
		if err := a.LoadSession(f); err != nil {
			return true, fmt.Errorf("%s not loaded, the conversation is unchanged: %w", arg, err)
		}
		fmt.Fprintf(out, "(loaded %s from %s)\n", count(len(a.State().Messages), "message"), arg)
		return true, nil
	}
	return strings.HasPrefix(name, "/"), unknown(name)
}

func unknown(name string) error {
	if strings.HasPrefix(name, "/") {
		return fmt.Errorf("unknown command %s (try /reset, /save FILE, /load FILE, /quit)", name)
	}
	return nil
}

// echo is the scripted model: it calls the clock when asked for the time,
// and otherwise answers from the last user message.
func echo(_ context.Context, req *providers.Request) (providers.AssistantMessage, error) {
	if req.SystemPrompt == compact.DefaultSummaryPrompt {
		return faux.Reply(faux.Text(fmt.Sprintf("The user and the assistant exchanged %s of small talk.", count(strings.Count(req.Messages[0].(providers.UserMessage).Text(), "\nUser: ")+1, "line")))), nil
	}
	last := req.Messages[len(req.Messages)-1]
	switch m := last.(type) {
	case providers.ToolResultMessage:
		return faux.Reply(faux.Text("The clock says " + m.Text() + ".")), nil
	case providers.UserMessage:
		text := m.Text()
		if strings.Contains(strings.ToLower(text), "time") {
			return faux.Reply(faux.Text("Let me check. "), faux.Call(fmt.Sprint("call_", len(req.Messages)), "clock", nil)), nil
		}
		return faux.Reply(faux.Text(fmt.Sprintf("You said %q. (This is the scripted model; %s so far.)", text, count(len(req.Messages), "message")))), nil
	}
	return faux.Reply(faux.Text("…")), nil
}

// count is n and the noun, plural unless n is 1: "1 message", "3 messages".
func count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
